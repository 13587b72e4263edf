#!/usr/bin/env python3
"""Where an emulated launch spends its time: scripts/bench-kernels --profile.

Reads `perf script -F ip,sym,dso --inline` output of one bench case recorded with DWARF
call chains, keeps the samples taken inside the emulated launch (a frame in the driver,
libcuda.so.1, or in a kernels-host twin library), and charges each to the innermost
frame that names a part of the executor (inlined frames included, so the charge lands
on e.g. the stack prefetch inside the scheduler, not on the runtime entry it was inlined
into). Shares are turned into the bench's own unit with the simtwin figure of the timing
run (table.json), so the table says how many ns of a barrier, or how many "x plain" of a
kernel, each part costs.

Usage: profile.py --case LETTER --table TABLE_JSON --twins DIR [--top N] < perf-script.txt
       profile.py --title TEXT [--figure F --unit UNIT] --twins DIR < perf-script.txt
(the second form profiles any program on the emulated driver, e.g. a VMAF extractor; F is
its measured cost in UNIT, e.g. ms per frame, that the shares are given in)
Prints a markdown section; exit 2 on bad input (no samples in the launch, no such case).
"""
import argparse
import json
import os
import re
import sys

DRIVER = "libcuda.so.1"

# (category, pattern over a frame's symbol), tried in this order on each frame from the
# leaf up; the first frame that matches any decides the sample. Frames that match none
# (core::, alloc::, libc's mem*, closures) are looked through.
PARTS = [
    ("next fiber's stack prefetch (memory traffic to fiber stacks)", r"fibers::prefetch_stack"),
    ("fiber switch", r"fibers::(switch|switch_from|switch_to|fiber_start|Home::)|^simtwin_fiber_switch"),
    ("barrier bookkeeping (exec::block)", r"exec::block::"),
    ("warp collectives (exec::warp)", r"exec::(warp|warp_ops|device_defined)::"),
    ("run queue (exec::threads)", r"exec::threads::"),
    ("shared-memory checks", r"exec::(race|smem|hazard)::"),
    ("scheduler (next fiber, ranges)", r"exec::scheduler::|fibers::fiber_main"),
    ("runtime entry (prologue, epilogue)", r"exec::(runtime|current)::"),
    ("TLS lookups", r"__tls_get_addr"),
]
KERNEL = "kernel code (.cu body and runner, twin library)"
KERNEL_OS = "operating system (page faults, syscalls)"
OTHER = "driver, other"
OUTSIDE = "outside the launches (the program's host code, copies, module loading)"


def samples(stream):
    """Yields each sample as a list of (symbol, dso) from leaf to root; an inlined
    frame takes the dso of the real frame it was inlined into."""
    frames = []
    for line in stream:
        line = line.strip()
        if not line:
            if frames:
                yield frames
            frames = []
            continue
        m = re.match(r"^[0-9a-f]+\s+(.*)\s+\(([^()]*)\)$", line)
        if not m:
            continue
        frames.append([m.group(1), None if m.group(2) == "inlined" else os.path.basename(m.group(2))])
    if frames:
        yield frames


def resolve_dsos(frames):
    """Inlined frames are printed leafward of the real frame that holds them: each takes
    that frame's dso (the root's, if a chain ends in inlined frames)."""
    dso = None
    pending = []
    for f in frames:
        if f[1] is None:
            pending.append(f)
        else:
            for p in pending:
                p[1] = f[1]
            pending = []
            dso = f[1]
    for p in pending:
        p[1] = dso
    return frames


def classify(frames, twins):
    # The launch: the executor (cuda::exec::) or kernel code on the chain; module loading,
    # context creation and the host program's own work are left out.
    in_launch = any(d in twins or (d == DRIVER and "exec::" in s) for s, d in frames)
    if not in_launch:
        return None
    for sym, dso in frames:
        if dso == "[kernel.kallsyms]":
            return KERNEL_OS
        for name, pat in PARTS:
            if re.search(pat, sym):
                return name
        if dso in twins:
            return KERNEL
    return OTHER


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case")
    ap.add_argument("--table")
    ap.add_argument("--title")
    ap.add_argument("--figure", type=float)
    ap.add_argument("--unit", default="")
    ap.add_argument("--twins", required=True, help="directory of the kernels-host twin libraries")
    ap.add_argument("--top", type=int, default=6)
    a = ap.parse_args()
    case = None
    if a.table or a.case:
        try:
            with open(a.table) as f:
                table = json.load(f)
            case = next(k for k in table["kernels"] if k["id"] == a.case)
        except (OSError, TypeError, ValueError, KeyError, StopIteration) as e:
            print(f"profile.py: no case {a.case!r} in {a.table}: {e}", file=sys.stderr)
            return 2
    elif not a.title:
        print("profile.py: give --case and --table, or --title", file=sys.stderr)
        return 2
    twins = {n for n in os.listdir(a.twins) if n.endswith(".so")} if os.path.isdir(a.twins) else set()

    counts, leaves, total, outside = {}, {}, 0, 0
    for frames in samples(sys.stdin):
        frames = resolve_dsos(frames)
        part = classify(frames, twins)
        if part is None:
            outside += 1
            continue
        total += 1
        counts[part] = counts.get(part, 0) + 1
        leaf = frames[0][0]
        leaves[leaf] = leaves.get(leaf, 0) + 1
    if case is None and outside:
        # A whole program: its own host work is part of the per-frame cost too.
        counts[OUTSIDE] = outside
        total += outside
    if total == 0:
        print(f"profile.py: case {a.case}: no sample inside the emulated launch (was perf recording the bench host?)", file=sys.stderr)
        return 2

    if case is not None:
        st = case["columns"].get("simtwin", {})
        if case.get("units_per_launch"):
            figure, unit = st.get("ns_per_unit"), "ns per " + case["unit"].removeprefix("ns per ")
        else:
            figure, unit = st.get("x_plain"), "x plain"
        title = f"({a.case}) {case['kernel']}"
    else:
        figure, unit, title = a.figure, a.unit or "share", a.title
    what = "host program, plain loop, set-up"
    if case is not None:
        out = [f"### {title}: {total} samples in the emulated launch ({outside} outside it: {what})", ""]
    else:
        out = [f"### {title}: {total} samples, {total - outside} of them in emulated launches", ""]
    if figure is not None:
        out.append(f"simtwin measured {figure:.4g} {unit}; each part's share of it:")
        out.append("")
    out.append(f"| part | share | {unit} |")
    out.append("|---|---|---|")
    for part, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        share = n / total
        cost = f"{share * figure:.3g}" if figure is not None else "-"
        out.append(f"| {part} | {100 * share:.1f}% | {cost} |")
    out.append("")
    out.append(f"Innermost functions (inlined included), top {a.top}: " + "; ".join(
        f"`{sym}` {100 * n / total:.1f}%" for sym, n in sorted(leaves.items(), key=lambda kv: -kv[1])[: a.top]))
    out.append("")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
