#!/usr/bin/env python3
"""Random straight-line and branchy mul/add programs, assembled by ptxas and compared with
predict.py's rule (check.py's comparison). Needs ptxas and nvdisasm.

    scripts/ptxas-contraction/fuzz.py [--seed S] [--count N] [--type f32|f64|f16|mixed]
"""
import argparse, os, random, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check, observe, predict, ptxgen, ptxparse, toolchain

TYPES = {
    "f32": (".f32", "%f", "st.global.f32", ["0f40400000", "0f3F000000", "0fBFC00000"]),
    "f64": (".f64", "%fd", "st.global.f64", ["0d4008000000000000"[:18], "0d3FE0000000000000"[:18]]),
    "f16": (".f16", "%h", "st.global.b16", []),  # f16 arithmetic takes no immediates
}


def gen(seed, ty, membar=True):
    R = random.Random(seed)
    t, rp, st, consts = TYPES[ty]
    ninp = {"f32": 16, "f64": 8, "f16": 8}[ty]
    has_ftz = ty in ("f32", "f16")
    has_sat = ty in ("f32", "f16")
    nxt = [20]

    def reg():
        nxt[0] += 1
        return f"{rp}{nxt[0]}"

    def inp():
        return f"{rp}{R.randint(1, ninp)}"

    def mods(kind):
        m = []
        r = R.random()
        if r < 0.08:
            m.append(".rn")
        elif r < 0.1 and ty != "f16":
            m.append(".rz")
        if has_ftz and R.random() < (0.25 if ty == "f32" else 0.1):
            m.append(".ftz")
        if has_sat and R.random() < (0.05 if kind == "mul" else 0.1):
            m.append(".sat")
        return "".join(m)

    body = []
    muls, vals = [], []
    nm, na = R.randint(2, 5), R.randint(2, 7)
    ops = ["mul"] * nm + ["add"] * na
    R.shuffle(ops)
    if ops[0] != "mul":
        ops.remove("mul")
        ops.insert(0, "mul")
    stores = []
    for op in ops:
        if op == "mul":
            d = reg()
            a = inp()
            b = inp() if R.random() < 0.9 or not consts else R.choice(consts)
            body.append(f"mul{mods('mul')}{t} {d}, {a}, {b};")
            muls.append(d)
            vals.append(d)
        else:
            def operand():
                r = R.random()
                if r < 0.6 and muls:
                    return R.choice(muls)
                if r < 0.85 and vals:
                    return R.choice(vals)
                if r < 0.95 or not consts:
                    return inp()
                return R.choice(consts)
            a, b = operand(), operand()
            if R.random() < 0.1 and a in muls:  # through a copy or a negation
                c = reg()
                mv = "mov.b16" if ty == "f16" else "mov" + t
                body.append(f"{R.choice([mv, 'neg' + t])} {c}, {a};")
                a = c
            name = "sub" if R.random() < 0.3 else "add"
            d = reg()
            body.append(f"{name}{mods('add')}{t} {d}, {a}, {b};")
            vals.append(d)
            stores.append(d)
        r = R.random()
        if r < 0.04 and membar:
            body.append("membar.cta;")
        elif r < 0.08:
            lab = f"L{len(body)}"
            body.append(f"setp.ne.s32 %p1, %r1, {len(body)};")
            body.append(f"@%p1 bra {lab};")
            body.append(f"{st} [%rd2+200], {R.choice(vals)};")
            body.append(f"{lab}:")
    for m in muls:
        if R.random() < 0.15:
            stores.append(m)
    size = {"f32": 4, "f64": 8, "f16": 2}[ty]
    for k, s in enumerate(stores):
        body.append(f"{st} [%rd2+{size * k}], {s};")
    return "\n".join(body) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--type", default="mixed", choices=["f32", "f64", "f16", "mixed"])
    ap.add_argument("--opt", default="3")
    ap.add_argument("--ptxas", default="13.5", choices=["13.5", "13.0"])
    ap.add_argument("--show", type=int, default=3, help="print this many failing programs")
    ap.add_argument("--no-membar", action="store_true", help="no membar.cta between the operations")
    a = ap.parse_args()
    srcs = {}
    for s in range(a.seed, a.seed + a.count):
        ty = a.type if a.type != "mixed" else ["f32", "f32", "f64", "f16"][s % 4]
        name = f"fz{s}_{ty}"
        srcs[name] = ptxgen.ptx_file(name, f"fuzz seed {s} ({ty})", gen(s, ty, not a.no_membar))
    ks = toolchain.assemble_many(srcs, a.ptxas, a.opt)
    bad = unrolled = 0
    for n, src in srcs.items():
        fs = ptxparse.parse(src)
        ins = [i for i in ks[n] if i.file == n + ".ptx"]
        obs = observe.observe(fs[n], ins)
        obs = {"lines": {str(k): v for k, v in obs["lines"].items()}, "fused": obs["fusions"]}
        res = check.check_kernel(predict.functions(src)[n], obs, int(a.opt))
        errs = [m for s, m in res if s == "error"]
        if errs:
            bad += 1
            if bad <= a.show:
                print(f"== {n}: " + "; ".join(errs))
                for k, l in enumerate(src.split("\n"), 1):
                    if k > 25 and "ld.volatile" not in l and l.strip():
                        print(f"{k:4d} {l}")
        elif res:
            unrolled += 1
    print(f"fuzz: {a.count} programs, {a.count - bad} agree with the rule, {bad} disagree")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
