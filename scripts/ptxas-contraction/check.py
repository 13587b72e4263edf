#!/usr/bin/env python3
"""Checks predict.py's rule against the corpus expectations (no ptxas needed).

    scripts/ptxas-contraction/check.py [--verbose]

For every case kernel: each contractable add/sub line is fused (FFMA/DFMA/HFMA2 at its line)
exactly when the prediction says so, with the predicted mul where the observation traced
it; each contractable mul keeps its own multiply exactly when predicted; adds predicted to
be merged (CSE) have no SASS of their own. Lines whose SASS copies disagree among
themselves (a loop unrolled by ptxas) are reported separately."""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import predict, toolchain

CORPUS = os.path.join(toolchain.ROOT, "kernels-host", "ptx-corpus", "contraction")
FMA = ("FFMA", "DFMA", "HFMA2")
MUL = ("FMUL", "DMUL", "HMUL2")
ADD = ("FADD", "DADD", "HADD2")


def kind(ops):
    """'fma' / 'mul' / 'add' / 'none' / 'mixed' for the SASS ops of one PTX line (an
    HFMA2 with a -RZ addend is f16x2 mul.rn's multiply)."""
    ks = set()
    for o in ops:
        if "=" in o:  # classified by the observation (HFMA2 a, 1, 1, c = add; FMA + -RZ = mul)
            ks.add(o.split("=")[1])
            continue
        b = o.lstrip("@").split(".")[0]
        if b in FMA:
            ks.add("fma")
        elif b in MUL:
            ks.add("mul")
        elif b in ADD:
            ks.add("add")
    if not ks:
        return "none"
    return ks.pop() if len(ks) == 1 else "mixed"


def merged_groups(pred):
    """{representative line: set of lines merged into it} (CSE chains followed)."""
    def rep(l):
        seen = set()
        while l in pred.merged and l not in seen:
            seen.add(l)
            l = pred.merged[l]
        return l
    groups = {}
    for l in pred.merged:
        groups.setdefault(rep(l), {rep(l)}).add(l)
    return groups


def check_kernel(f, obs, opt=3):
    """List of (severity, message) for one kernel."""
    pred = predict.predict(f, opt)
    out = []
    groups = merged_groups(pred)
    in_group = {l: r for r, g in groups.items() for l in g}
    lines = {int(l): v for l, v in obs["lines"].items()}
    traced = {}
    for fu in obs["fused"]:
        traced.setdefault(fu["add"], set()).add(fu["mul"])
    for i in f.ins:
        p = i.p
        ln = p.line
        if ln not in lines:
            continue
        k = kind(lines[ln])
        if k == "none" and p.type in ("f16", "bf16"):
            continue  # ptxas packs two scalar f16 ops into one HMUL2/HADD2/HFMA2 (lanes H0/H1), which line info names after only one of them (or neither)
        if ln in pred.dead:
            if k != "none":
                out.append(("error", f"line {ln}: predicted dead (removed), SASS {lines[ln]}"))
            continue
        if predict.contractable_add(p):
            if k == "mixed":
                out.append(("unrolled", f"line {ln}: copies disagree ({lines[ln]})"))
                continue
            if ln in in_group:
                r = in_group[ln]
                if ln != r:
                    continue  # checked with its group
                g = sorted(groups[r])  # CSE keeps one of them; line info may name any
                ks = [kind(lines.get(x, [])) for x in g]
                if len(ks) - ks.count("none") != 1 or (set(ks) - {"none"}) != ({"fma"} if r in pred.fused else {"add"}):
                    out.append(("error", f"lines {g}: predicted merged into one {'fma' if r in pred.fused else 'add'}, SASS has {[lines.get(x) for x in g]}"))
                continue
            want = ln in pred.fused
            got = k in ("fma", "mul")  # an FMA with a -0 addend is p + -0 fused (= p)
            if want != got:
                out.append(("error", f"line {ln} ({p.op}.{'.'.join(p.mods)}): predicted {'fused with line %d' % pred.fused[ln] if want else 'not fused'}, SASS {lines[ln]}"))
            elif want and ln in traced and None not in traced[ln] and traced[ln] != {pred.fused[ln]}:
                out.append(("error", f"line {ln}: predicted mul line {pred.fused[ln]}, SASS took line(s) {sorted(traced[ln])}"))
        elif ln in pred.materialized:
            if p.op == "div":  # div.approx/full: the scaling FMULs are guarded, the multiply is not
                k = kind([o for o in lines[ln] if not o.startswith("@")])
            if k == "mixed":
                continue
            if ln in in_group:
                r = in_group[ln]
                if ln != r:
                    continue
                g = sorted(groups[r])
                ks = [kind(lines.get(x, [])) for x in g]
                if len(ks) - ks.count("none") != 1:
                    out.append(("error", f"mul lines {g}: predicted merged into one, SASS has {[lines.get(x) for x in g]}"))
                continue
            if ln in pred.scaled:  # one FMUL.M2..D8 (line info names the inner multiply)
                o, sc = pred.scaled[ln]
                if [kind(lines[ln]), kind(lines.get(o, []))].count("none") != 1 or not any(sc in x for x in lines[ln] + lines.get(o, [])):
                    out.append(("error", f"mul line {ln}: predicted folded with line {o} into FMUL.{sc}, SASS {lines[ln]} / {lines.get(o)}"))
                continue
            if any(o == ln for o, _ in pred.scaled.values()):
                continue  # checked with its inner multiply
            want = pred.materialized[ln]
            got = k in ("mul", "fma") and k != "none"
            if want != got:
                out.append(("error", f"mul line {ln}: predicted {'own multiply' if want else 'absorbed'}, SASS {lines[ln]}"))
    return out


def main():
    verbose = "--verbose" in sys.argv
    exp = json.load(open(os.path.join(CORPUS, "expectations.json")))
    configs = [("13.5 -O3", 3)] + [(cfg, int(cfg.split("-O")[1])) for cfg in exp["other_configs"]]
    failed = False
    for cfg, opt in configs:
        n_ok = n_bad = n_unrolled = n_unexplained = 0
        for name, c in exp["cases"].items():
            src = open(os.path.join(CORPUS, c["file"])).read()
            fs = predict.functions(src)
            kernels = c["differs_in"].get(cfg, c["kernels"]) if cfg != "13.5 -O3" else c["kernels"]
            for k, obs in kernels.items():
                res = check_kernel(fs[k], obs, opt)
                errs = [m for s, m in res if s == "error"]
                if name.startswith("unexplained_"):
                    n_unexplained += 1
                    if cfg == "13.5 -O3":
                        print(f"unexplained {name}/{k}: " + ("; ".join(errs) if errs else "now agrees (rename the case)"))
                    continue
                if errs:
                    n_bad += 1
                    print(f"MISMATCH [{cfg}] {name}/{k}: " + "; ".join(errs))
                elif res:
                    n_unrolled += 1
                    if verbose:
                        print(f"unrolled [{cfg}] {name}/{k}: " + "; ".join(m for _, m in res))
                else:
                    n_ok += 1
        failed |= n_bad > 0
        print(f"ptxas {cfg}: {n_ok} kernels agree, {n_bad} disagree, {n_unrolled} with lines ptxas unrolled "
              f"into disagreeing copies, {n_unexplained} known unexplained")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
