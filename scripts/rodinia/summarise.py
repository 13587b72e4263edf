"""scripts/rodinia-check's verdict: OUT/results.md and OUT/digests.txt from the runs.

    summarise.py OUT GPU_DIGESTS

OUT/runs-{auto,off,reverse}.txt hold, per program, a `NAME status RC MS EXPECTED|VERDICT`
line and `NAME WHAT DIGEST` lines (its filtered standard output, each file it wrote).
A program passes when both paths exit alike with the verdict expected (`ok`: no failed
launch, no entry point the driver lacks; else what the driver must report) and give
the same digests. The run with blocks in reverse order shows whether a result depends
on the order blocks run in. Where a GPU's digests of the same binaries are known
(GPU_DIGESTS, `rodinia-check --real-driver`; a `#` line names the card), the last column
says whether the emulated ones equal them, in either block order. Exit 0 when every
program passes."""
import os, sys

out, gpu_path = sys.argv[1], sys.argv[2]


def load(path):
    status, digests, order = {}, {}, []
    for line in open(path):
        name, what, rest = line.rstrip("\n").split(" ", 2)
        if name not in order:
            order.append(name)
        if what == "status":
            status[name] = rest
        else:
            digests.setdefault(name, {})[what] = rest
    return order, status, digests


order, st_auto, dg_auto = load(os.path.join(out, "runs-auto.txt"))
_, st_off, dg_off = load(os.path.join(out, "runs-off.txt"))
_, st_rev, dg_rev = load(os.path.join(out, "runs-reverse.txt"))
gpu, card = {}, "a GPU"
if os.path.isfile(gpu_path):
    for line in open(gpu_path):
        if line.startswith("#"):
            card = line.lstrip("# ").strip() or card
            continue
        name, what, digest = line.split()
        gpu.setdefault(name, {})[what] = digest


def verdict(status):
    """(exit status, ms, expected verdict, verdict) of a status line's rest."""
    rc, ms, rest = (status.split(" ", 2) + ["", ""])[:3]
    expected, _, got = rest.partition("|")
    return rc, ms, expected, got


def as_expected(expected, got):
    return got.startswith("ok") if expected == "ok" else expected in got

rows, fails = [], 0
with open(os.path.join(out, "digests.txt"), "w") as f:
    for name in order:
        for what, d in dg_auto.get(name, {}).items():
            f.write(f"{name} {what} {d}\n")
for name in order:
    ra, ma, ea, va = verdict(st_auto.get(name, "not-run"))
    ro, mo, eo, vo = verdict(st_off.get(name, "not-run"))
    problems, notes = [], []
    if not as_expected(ea, va):
        problems.append(f"loops: {va or ra}")
    if not as_expected(eo, vo):
        problems.append(f"fibers: {vo or ro}")
    if ra != ro:
        problems.append(f"exit status {ra} with loops, {ro} on fibers")
    if ea != "ok" and not problems:
        notes.append(f"as expected: {va}")
    da, do, dr = dg_auto.get(name, {}), dg_off.get(name, {}), dg_rev.get(name, {})
    if da != do:
        problems.append("paths differ in " + ", ".join(sorted(k for k in set(da) | set(do) if da.get(k) != do.get(k))))
    if dr and dr != da:
        notes.append("depends on the block order: " + ", ".join(sorted(k for k in set(da) | set(dr) if da.get(k) != dr.get(k))) + " differ in reverse order")
    if name in gpu:
        hd = gpu[name]
        diff = sorted(k for k in set(hd) | set(da) if hd.get(k) != da.get(k))
        if not diff:
            dev = "identical"
        elif hd == dr:
            dev = "identical to the reverse block order's"
        else:
            dev = "differs: " + ", ".join(diff)
    else:
        dev = "not recorded"
    fails += bool(problems)
    outputs = ", ".join(sorted(da)) or "-"
    verdict_text = "PASS" if not problems else "FAIL " + "; ".join(problems)
    if notes:
        verdict_text += " (" + "; ".join(notes) + ")"
    rows.append(f"| {name} | {verdict_text} | {ma} / {mo} | {outputs} | {dev} |")

with open(os.path.join(out, "results.md"), "w") as f:
    f.write("# Rodinia's CUDA programs on simtwin (PTX mode, `-cudart shared` on simtwin's runtime)\n\n")
    f.write("`scripts/rodinia-check`: each program run with loops over threads and on fibers; outputs are its standard output\n")
    f.write("without the lines that report times, and the files it wrote, compared by digest (OUT/digests.txt).\n\n")
    f.write(f"| program | verdict | ms loops / fibers | outputs | vs {card} |\n|---|---|---|---|---|\n")
    f.write("\n".join(rows) + "\n")
    f.write(f"\n{len(order) - fails} of {len(order)} pass.\n")
print("\n".join(rows))
print(f"rodinia-check: {len(order) - fails} of {len(order)} pass; {os.path.join(out, 'results.md')}")
sys.exit(1 if fails else 0)
