#!/usr/bin/env python3
"""Regenerates the ptxas contraction corpus and its expectations.

    scripts/ptxas-contraction/gen.py            # write PTX files + expectations.json
    scripts/ptxas-contraction/gen.py --check    # fail if the checked-in files differ

Writes kernels-host/ptx-corpus/contraction/<case>.ptx (one kernel per file, from
cases.py) and expectations.json: for every case and kernel, what ptxas 13.5 -O3 -arch=sm_90
made of it (SASS float-op counts, the SASS opcodes of each float PTX line, and which PTX mul
each fused add/sub absorbed), plus the differences other configurations (-O0..-O2, ptxas
13.0) show against it. Needs ptxas (scripts/nvcc-path's toolkit) and nvdisasm; ptxas 13.0 is
used when installed (see toolchain.py), else that configuration is recorded as skipped.
"""
import argparse, json, os, sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases, observe, ptxgen, ptxparse, sasslib, toolchain

CORPUS = os.path.join(toolchain.ROOT, "kernels-host", "ptx-corpus", "contraction")
PRIMARY = ("13.5", "3")
OTHERS = [("13.5", "0"), ("13.5", "1"), ("13.5", "2"), ("13.0", "3"), ("13.0", "0")]


def case_src(c):
    return ptxgen.ptx_file(c["name"], c["doc"], c.get("body"), version=c.get("version", "8.0"),
                           raw=c.get("raw"), extra=c.get("extra", ""))


def results(srcs, ver, opt):
    """{case: {kernel: observation}} for one configuration (one ptxas run for all)."""
    ks = toolchain.assemble_many(srcs, ver, opt, check_lineinfo=True)
    out = {}
    for n, src in srcs.items():
        funcs = ptxparse.parse(src)
        out[n] = {}
        for k in funcs:
            if k in ks:
                out[n][k] = observation(funcs[k], [i for i in ks[k] if i.file in (None, n + ".ptx")])
    return out


def observation(pinstrs, ins):
        o = observe.observe(pinstrs, ins)
        fused = [{"add": f["add"], "mul": f["mul"]} for f in o["fusions"]]
        return {
            "sass_counts": sasslib.float_counts(ins),
            "lines": {str(l): sorted(x for x in v if x.lstrip("@").split(".")[0].split("=")[0] in sasslib.FLOAT_OPS)
                      for l, v in sorted(o["lines"].items())},
            "fused": sorted(fused, key=lambda f: (f["add"], f["mul"] or 0)),
        }


def old_cases():
    p = os.path.join(CORPUS, "expectations.json")
    return json.load(open(p))["cases"] if os.path.exists(p) else {}


def dump(exp):
    """JSON with one line per kernel observation (diff-friendly, not 10k lines)."""
    lines = ["{"]
    top = [(k, v) for k, v in exp.items() if k != "cases"]
    for k, v in top:
        lines.append(f" {json.dumps(k)}: {json.dumps(v)},")
    lines.append(' "cases": {')
    cs = list(exp["cases"].items())
    for ci, (n, c) in enumerate(cs):
        lines.append(f"  {json.dumps(n)}: {{")
        lines.append(f'   "file": {json.dumps(c["file"])}, "doc": {json.dumps(c["doc"])},')
        lines.append('   "kernels": {' + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in c["kernels"].items()) + "},")
        d = c["differs_in"]
        if not d:
            lines.append('   "differs_in": {}')
        else:
            lines.append('   "differs_in": {')
            items = list(d.items())
            for di, (cfg, ks) in enumerate(items):
                lines.append(f"    {json.dumps(cfg)}: " + "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in ks.items()) + "}" + ("," if di + 1 < len(items) else ""))
            lines.append("   }")
        lines.append("  }" + ("," if ci + 1 < len(cs) else ""))
    lines.append(" }")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == json.loads(json.dumps(exp))
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the checked-in files instead of writing")
    ap.add_argument("--only", nargs="*", help="case names (default: all)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--primary-only", action="store_true", help="skip the other configurations (quick iteration; keeps their old results)")
    a = ap.parse_args()
    sel = [c for c in cases.CASES if not a.only or c["name"] in a.only]
    names = [c["name"] for c in cases.CASES]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        sys.exit(f"duplicate case names: {sorted(dup)}")
    srcs = {c["name"]: case_src(c) for c in sel}
    have130 = toolchain.ptxas("13.0") is not None
    configs = [PRIMARY] + [o for o in OTHERS if o[0] != "13.0" or have130]
    if a.primary_only:
        configs = [PRIMARY]

    with ThreadPoolExecutor(a.jobs) as ex:
        per_cfg = dict(zip(configs, ex.map(lambda cfg: results(srcs, *cfg), configs)))
    res = {(n, *cfg): r[n] for cfg, r in per_cfg.items() for n in r}

    ptxas_v = {v: toolchain.version(v) for v in ("13.5", "13.0") if toolchain.ptxas(v)}
    exp = {
        "about": "ptxas mul/add contraction corpus; regenerate with scripts/ptxas-contraction/gen.py",
        "primary": {"ptxas": ptxas_v["13.5"], "flags": "-arch=sm_90 -O3"},
        "other_configs": {f"{v} -O{o}": ptxas_v.get(v, "not installed") for v, o in OTHERS},
        "cases": {},
    }
    for c in sel:
        n = c["name"]
        prim = res[(n, *PRIMARY)]
        diffs = {}
        for ver, opt in configs[1:]:
            r = res[(n, ver, opt)]
            if r != prim:
                diffs[f"{ver} -O{opt}"] = r
        if a.primary_only:
            diffs = old_cases().get(n, {}).get("differs_in", {})
        exp["cases"][n] = {"file": n + ".ptx", "doc": c["doc"], "kernels": prim, "differs_in": diffs}
    if not have130:
        exp["other_configs"] = {k: v for k, v in exp["other_configs"].items() if not k.startswith("13.0")}
        exp["skipped"] = "ptxas 13.0 not installed: its configurations were not run"

    out_files = {os.path.join(CORPUS, n + ".ptx"): s for n, s in srcs.items()}
    ej = os.path.join(CORPUS, "expectations.json")
    if a.only and os.path.exists(ej):  # merge into the existing expectations
        old = json.load(open(ej))
        old["cases"].update(exp["cases"])
        exp["cases"] = {k: old["cases"][k] for k in names if k in old["cases"]}
    out_files[ej] = dump(exp)
    if a.check:
        bad = [p for p, s in out_files.items() if not os.path.exists(p) or open(p).read() != s]
        if bad:
            sys.exit("differs from the checked-in corpus: " + ", ".join(os.path.relpath(p, toolchain.ROOT) for p in bad))
        print(f"corpus up to date ({len(sel)} cases)")
        return
    os.makedirs(CORPUS, exist_ok=True)
    for p, s in out_files.items():
        with open(p, "w") as f:
            f.write(s)
    print(f"wrote {len(sel)} cases to {os.path.relpath(CORPUS, toolchain.ROOT)}")


if __name__ == "__main__":
    main()
