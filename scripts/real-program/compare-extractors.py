#!/usr/bin/env python3
"""The table of scripts/real-program/vmaf-extractors.sh: per CUDA extractor, whether the CPU,
emulated and (optionally) real-device runs ran, the emulated driver's launches and hazards,
frames identical between emulated and real, and each side's largest relative difference
from the CPU extractor over the metrics both print. Writes OUT/summary.md and
OUT/summary.json; exit 0 when every run ran and printed every frame, 1 otherwise."""
import argparse
import json
import os
import sys

from summarise import load  # the JSON reader of scripts/real-program-check's summary


def status(out, side, name):
    try:
        rc, secs = open(os.path.join(out, side, name + ".status")).read().split()
        return int(rc), float(secs)
    except (OSError, ValueError):
        return None, None


def first_error(out, side, name):
    try:
        for line in open(os.path.join(out, side, name + ".log"), errors="replace"):
            if "error" in line.lower() or "problem" in line.lower():
                return line.strip()[:200]
    except OSError:
        pass
    return ""


def frames(doc):
    return [f.get("metrics", {}) for f in (doc or {}).get("frames", [])] if doc else []


def rel_diff(a, b):
    """Largest |a-b|/max(|b|, 1e-12) over common metrics and frames, and the metric."""
    worst, which = 0.0, None
    for fa, fb in zip(a, b):
        for m in fa.keys() & fb.keys():
            d = abs(fa[m] - fb[m]) / max(abs(fb[m]), 1e-12)
            if d > worst:
                worst, which = d, m
    return worst, which


def identical(a, b):
    return sum(1 for fa, fb in zip(a, b) if fa.keys() & fb.keys() and all(fa[m] == fb[m] for m in fa.keys() & fb.keys()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--real", action="store_true")
    ap.add_argument("extractors", nargs="+")
    a = ap.parse_args()
    rows, ok = [], True
    for e in a.extractors:
        cpu_name = e[:-5] if e.endswith("_cuda") else e
        r = {"extractor": e, "cpu_extractor": cpu_name}
        sides = [("cpu", cpu_name), ("emulated", e)] + ([("real", e)] if a.real else [])
        data = {}
        for side, name in sides:
            rc, secs = status(a.out, side, name)
            doc = load(os.path.join(a.out, side, name + ".json"))
            fr = frames(doc)
            data[side] = fr
            r[side] = {"exit": rc, "seconds": secs, "frames": len(fr),
                       "error": first_error(a.out, side, name) if rc != 0 or not fr else ""}
            if rc != 0 or not fr:
                ok = False
        counts = load(os.path.join(a.out, "emulated", e + ".counts.json")) or {}
        hz = counts.get("hazards") or []
        r["launches"] = sum(v.get("count", 0) for v in (counts.get("launches") or {}).values())
        r["failed_launches"] = counts.get("failed_launches") or {}
        r["hazards"] = {}
        for h in hz:
            r["hazards"][h["kind"]] = r["hazards"].get(h["kind"], 0) + h.get("occurrences", 1)
        common = sorted(set(data["cpu"][0]) & set(data["emulated"][0])) if data["cpu"] and data["emulated"] else []
        r["metrics"] = common
        r["emulated_vs_cpu"] = rel_diff(data["emulated"], data["cpu"])
        if a.real:
            r["real_vs_cpu"] = rel_diff(data["real"], data["cpu"])
            r["emulated_eq_real"] = identical(data["emulated"], data["real"])
            r["emulated_vs_real"] = rel_diff(data["emulated"], data["real"])
        rows.append(r)

    def ran(s):
        if s["exit"] == 0 and s["frames"]:
            return f"{s['frames']} frames"
        return f"**failed** (exit {s['exit']}): {s['error'] or 'no frames'}"

    def diff(d):
        return "0" if d[0] == 0 else f"{d[0]:.3g} ({d[1]})"

    head = ["CUDA extractor", "CPU", "emulated", "launches", "hazards (emulated)", "emulated vs CPU: max rel. diff"]
    if a.real:
        head += ["real device", "emulated = real (frames)", "emulated vs real", "real vs CPU: max rel. diff"]
    md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        hz = ", ".join(f"{k} x{v}" for k, v in sorted(r["hazards"].items())) or "none"
        cells = [r["extractor"], ran(r["cpu"]), ran(r["emulated"]), str(r["launches"]), hz, diff(r["emulated_vs_cpu"])]
        if a.real:
            n = min(r["emulated"]["frames"], r["real"]["frames"])
            cells += [ran(r["real"]), f"{r['emulated_eq_real']}/{n}", diff(r["emulated_vs_real"]), diff(r["real_vs_cpu"])]
        md.append("| " + " | ".join(cells) + " |")
    ran_all = sum(1 for r in rows if r["emulated"]["exit"] == 0 and r["emulated"]["frames"])
    md += ["", f"{ran_all} of {len(rows)} CUDA extractors ran every frame on the emulated driver."]
    if a.real:
        same = sum(1 for r in rows if r["real"]["frames"] and r["emulated_eq_real"] == r["real"]["frames"] == r["emulated"]["frames"])
        md.append(f"{same} of {len(rows)} gave the real device's scores bit for bit on every frame.")
    text = "\n".join(md) + "\n"
    open(os.path.join(a.out, "summary.md"), "w").write(text)
    json.dump(rows, open(os.path.join(a.out, "summary.json"), "w"), indent=1)
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
