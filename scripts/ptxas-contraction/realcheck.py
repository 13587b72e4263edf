#!/usr/bin/env python3
"""The contraction rule against real kernels: builds .cu files with nvcc (default flags,
-arch=sm_90) to PTX and to a cubin, and for every kernel compares predict.py's decisions
with ptxas's, line by line, plus the SASS float-op counts of the cubin.

    scripts/ptxas-contraction/realcheck.py [--vmaf VMAF_SRC] [--out report.json] [file.cu ...]

Default inputs: fixtures/cuda/*.cu. --vmaf takes an upstream VMAF checkout (or `git
archive` of one) and adds libvmaf/src/feature/cuda/**/*.cu with VMAF's own include flags
(a stub config.h with HAVE_CUDA stands in for meson's). Needs the PyPI nvcc 13.5 with
ptxas, nvdisasm and cuobjdump beside it.
"""
import argparse, glob, json, os, re, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check, observe, predict, ptxparse, sasslib, toolchain


def nvcc(args):
    r = subprocess.run([os.path.join(toolchain.bin_dir_135(), "nvcc")] + args, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"nvcc {' '.join(args)} failed:\n{r.stderr[-2000:]}")


def strip_debug(ptx):
    """nvcc's own .loc/.file lines (there are some even without -lineinfo) become blank
    comments, so line numbers stay those of the file and add_loc can insert its own."""
    return "\n".join("//" if re.match(r"^\s*\.(loc|file)\b", l) else l for l in ptx.split("\n"))


def sass_text(cubin):
    return subprocess.run([toolchain.tool("cuobjdump"), "-sass", cubin], capture_output=True, text=True, check=True).stdout


FLOAT_CLASSES = ("FFMA", "FMUL", "FADD", "DFMA", "DMUL", "DADD", "HFMA2", "HMUL2", "HADD2")


def predicted_counts(f, pred):
    """SASS counts of FFMA/FMUL/FADD (and the f64 ones) the rule predicts for a function
    whose float work is only mul/add/sub/fma: one op per live, unmerged instruction; a
    fused add is one FMA, its mul none. Instructions that ptxas expands into sequences
    (div/rcp/sqrt/ex2/lg2/cvt...) make the counts incomparable: listed in 'expanding'."""
    cnt = {k: 0 for k in FLOAT_CLASSES}
    expanding = set()
    gone = pred.dead | set(pred.merged)
    pre = {"f32": "F", "f64": "D"}
    for i in f.ins:
        p = i.p
        t = p.type
        if p.line in gone:
            continue
        mods = set(p.mods)
        if p.op in ("div", "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh") and t in ("f32", "f64"):
            single_mufu = t == "f32" and "approx" in mods and ("ftz" in mods or p.op == "tanh") and p.op != "div"
            if not single_mufu:  # scaling FMULs/FADDs, Newton steps, slow paths
                expanding.add(f"{p.op}.{'.'.join(p.mods)}")
            continue
        if p.op == "cvt" and len(p.mods) >= 2 and p.mods[-1] in pre and p.mods[-2] == p.mods[-1]:
            expanding.add(f"cvt.{'.'.join(p.mods)} (may be FADD/FRND)")
            continue
        if t not in pre:
            if t in ("f16", "bf16", "f16x2", "bf16x2") and p.op in ("mul", "add", "sub", "fma"):
                expanding.add(f"{p.op}.{t} (half precision: packing)")
            continue
        c = pre[t]
        if p.op in ("fma", "mad"):
            cnt[c + "FMA"] += 1
        elif p.op == "mul":
            if predict.copy_source(f, i) is not None:
                if "ftz" in mods:
                    expanding.add("mul.ftz by +-1 (FADD.FTZ x, -0 unless absorbed)")
                continue
            if p.line in pred.materialized and not pred.materialized[p.line]:
                continue  # absorbed (or folded into an FMUL.M2..D8)
            if any(o == p.line for o, _ in pred.scaled.values()):
                continue  # the outer multiply of an FMUL.Mk pair
            cnt[c + "MUL"] += 1
        elif p.op in ("add", "sub"):
            cnt[c + ("FMA" if p.line in pred.fused else "ADD")] += 1
    return {k: v for k, v in cnt.items() if v}, sorted(expanding)


def sass_class_counts(ins):
    """FFMA/FMUL/FADD/DFMA/DMUL/DADD counts by what the instruction computes (an FFMA with
    a -RZ addend counts as FMUL; constant moves and conversions not at all)."""
    cnt = {}
    for i in ins:
        c = sasslib.float_class(i)
        if c is None or i.opcode[0] not in "FD":
            continue
        k = i.opcode[0] + {"fma": "FMA", "mul": "MUL", "add": "ADD"}[c]
        cnt[k] = cnt.get(k, 0) + 1
    return cnt


def run_one(cu, flags, tmp):
    base = os.path.splitext(os.path.basename(cu))[0]
    ptx_p, cub_p = os.path.join(tmp, base + ".ptx"), os.path.join(tmp, base + ".cubin")
    nvcc(["-arch=sm_90", "-ptx", cu, "-o", ptx_p] + flags)
    nvcc(["-arch=sm_90", "-cubin", cu, "-o", cub_p] + flags)
    ptx = strip_debug(open(ptx_p).read())
    cub = sasslib.parse(sass_text(cub_p))
    mine = sasslib.parse(toolchain.cuobjdump_of(ptx))
    lined = toolchain.assemble_lines(ptx, base + ".ptx")
    funcs = ptxparse.parse(ptx)
    out = {}
    for k, ins in cub.items():
        if k not in funcs:
            continue
        same = [i.text() for i in ins] == [i.text() for i in mine.get(k, [])]
        f = predict.functions(ptx)[k]
        obs = observe.observe(funcs[k], lined[k])
        obs = {"lines": {str(a): b for a, b in obs["lines"].items()}, "fused": obs["fusions"]}
        res = check.check_kernel(f, obs)
        pred = predict.predict(f)
        pc, expanding = predicted_counts(f, pred)
        sc = sass_class_counts(ins)
        adds = [i for i in f.ins if predict.contractable_add(i.p)]
        out[k] = {
            "cubin_sass_equals_ptxas_of_ptx": same,
            "contractable_adds": len(adds),
            "predicted_fused": len(pred.fused),
            "line_check": "agree" if not [m for s, m in res if s == "error"] else "DISAGREE",
            "disagreements": [m for s, m in res if s == "error"],
            "unrolled_lines": [m for s, m in res if s == "unrolled"],
            "notes": pred.notes,
            "sass_counts": sc,
            "predicted_counts": pc,
            "counts_comparable": not expanding,
            "counts_equal": pc == sc,
            "expanding_instructions": expanding,
        }
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--vmaf", help="upstream VMAF source tree")
    ap.add_argument("--out", help="write the per-kernel report (JSON) here")
    a = ap.parse_args()
    jobs = []
    fix = os.path.join(toolchain.ROOT, "fixtures", "cuda")
    for cu in a.files or sorted(glob.glob(os.path.join(fix, "*.cu"))):
        jobs.append((os.path.relpath(cu, toolchain.ROOT), cu,
                     ["-I", os.path.dirname(cu), "-I", os.path.join(toolchain.ROOT, "fixtures", "twin", "include")]))
    with tempfile.TemporaryDirectory() as tmp:
        if a.vmaf:
            src = os.path.join(a.vmaf, "libvmaf", "src")
            cfg = os.path.join(tmp, "cfg")
            os.makedirs(cfg)
            with open(os.path.join(cfg, "config.h"), "w") as fh:
                fh.write("#define HAVE_CUDA 1\n")
            vflags = ["-I", src, "-I", os.path.join(a.vmaf, "libvmaf", "include"), "-I", os.path.join(src, "feature"),
                      "-I", os.path.join(src, "cuda"), "-I", cfg, "-DDEVICE_CODE"]
            nvch = os.environ.get("NV_CODEC_HEADERS")
            if nvch:
                vflags += ["-I", nvch]
            for cu in sorted(glob.glob(os.path.join(src, "feature", "cuda", "**", "*.cu"), recursive=True)):
                jobs.append(("vmaf:" + os.path.relpath(cu, src), cu, vflags))
        report = {}
        for name, cu, flags in jobs:
            try:
                report[name] = run_one(cu, flags, tmp)
            except Exception as e:  # a build failure is reported, not hidden
                report[name] = {"error": str(e)}
    total = agree = comparable = equal = same = 0
    for name, ks in report.items():
        if "error" in ks:
            print(f"{name}: ERROR {ks['error'][:300]}")
            continue
        for k, r in ks.items():
            total += 1
            agree += r["line_check"] == "agree"
            same += r["cubin_sass_equals_ptxas_of_ptx"]
            comparable += r["counts_comparable"]
            equal += r["counts_comparable"] and r["counts_equal"]
            flag = "" if r["line_check"] == "agree" else "  <-- " + "; ".join(r["disagreements"][:3])
            cnt = (("counts equal" if r["counts_equal"] else f"counts differ: SASS {r['sass_counts']} predicted {r['predicted_counts']}")
                   if r["counts_comparable"] else f"counts not comparable ({', '.join(r['expanding_instructions'][:4])})")
            print(f"{name} {k}: {r['contractable_adds']} contractable adds, {r['predicted_fused']} fused; "
                  f"lines {r['line_check']}; {cnt}{flag}")
    print(f"\n{total} kernels: {agree} agree line by line with ptxas; cubin == ptxas(PTX) for {same}; "
          f"counts comparable for {comparable}, equal for {equal}")
    if a.out:
        with open(a.out, "w") as fh:
            json.dump(report, fh, indent=1, sort_keys=True)
            fh.write("\n")


if __name__ == "__main__":
    main()
