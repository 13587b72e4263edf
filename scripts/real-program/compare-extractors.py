#!/usr/bin/env python3
"""The table of scripts/real-program/vmaf-extractors.sh: per CUDA extractor, whether the CPU,
emulated and (optionally) real-device runs ran, the emulated driver's launches and hazards,
frames identical between emulated and real, and each side's largest relative difference
from the CPU extractor over the metrics both print; per metric where emulated and real
differ, frames identical, largest absolute difference and distance in units in the last
place (outputs printed with 17 significant digits are doubles, compared bit for bit); in
PTX mode the modules the emulated run loaded and whether each is device-exact. Writes
OUT/summary.md and
OUT/summary.json; exit 0 when every run ran and printed every frame, 1 otherwise."""
import argparse
import json
import os
import struct
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


def ulps(x, y):
    """Distance of two doubles in units in the last place (0: the same bits)."""
    def key(v):
        i = struct.unpack("<q", struct.pack("<d", v))[0]
        return i if i >= 0 else -(i & 0x7FFFFFFFFFFFFFFF)
    return abs(key(x) - key(y))


def per_metric(a, b):
    """Per metric of both: frames identical, max |a-b|, max ULPs, first differing frame."""
    out = {}
    for k, (fa, fb) in enumerate(zip(a, b)):
        for m in sorted(fa.keys() & fb.keys()):
            r = out.setdefault(m, {"frames": 0, "identical": 0, "max_abs": 0.0, "max_ulp": 0, "first_diff_frame": None})
            r["frames"] += 1
            if fa[m] == fb[m]:
                r["identical"] += 1
                continue
            r["first_diff_frame"] = k if r["first_diff_frame"] is None else r["first_diff_frame"]
            r["max_abs"] = max(r["max_abs"], abs(fa[m] - fb[m]))
            r["max_ulp"] = max(r["max_ulp"], ulps(fa[m], fb[m]))
    return out


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
        r["modules"] = [{k: m.get(k) for k in ("image", "mode", "kernels", "device_exact", "notes")} for m in counts.get("modules") or []]
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
            r["emulated_vs_real_metrics"] = per_metric(data["emulated"], data["real"])
        rows.append(r)

    def ran(s):
        if s["exit"] == 0 and s["frames"]:
            return f"{s['frames']} frames"
        return f"**failed** (exit {s['exit']}): {s['error'] or 'no frames'}"

    def diff(d):
        return "0" if d[0] == 0 else f"{d[0]:.3g} ({d[1]})"

    show_modules = any(r["modules"] for r in rows)

    def modules(r):
        ms = r["modules"]
        if not ms:
            return "-"
        modes = sorted({m.get("mode") or "?" for m in ms})
        inexact = [m for m in ms if not m.get("device_exact")]
        return f"{len(ms)} ({'/'.join(modes)}), " + (f"**{len(inexact)} not device-exact**" if inexact else "all device-exact")

    head = ["CUDA extractor", "CPU", "emulated", "launches", "hazards (emulated)", "emulated vs CPU: max rel. diff"]
    if show_modules:
        head.insert(4, "modules (mode, device-exact)")
    if a.real:
        head += ["real device", "emulated = real (frames)", "emulated vs real", "real vs CPU: max rel. diff"]
    md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        hz = ", ".join(f"{k} x{v}" for k, v in sorted(r["hazards"].items())) or "none"
        cells = [r["extractor"], ran(r["cpu"]), ran(r["emulated"]), str(r["launches"]), hz, diff(r["emulated_vs_cpu"])]
        if show_modules:
            cells.insert(4, modules(r))
        if a.real:
            n = min(r["emulated"]["frames"], r["real"]["frames"])
            cells += [ran(r["real"]), f"{r['emulated_eq_real']}/{n}", diff(r["emulated_vs_real"]), diff(r["real_vs_cpu"])]
        md.append("| " + " | ".join(cells) + " |")
    ran_all = sum(1 for r in rows if r["emulated"]["exit"] == 0 and r["emulated"]["frames"])
    md += ["", f"{ran_all} of {len(rows)} CUDA extractors ran every frame on the emulated driver."]
    if a.real:
        same = sum(1 for r in rows if r["real"]["frames"] and r["emulated_eq_real"] == r["real"]["frames"] == r["emulated"]["frames"])
        md.append(f"{same} of {len(rows)} gave the real device's scores bit for bit on every frame.")
        diffs = [(r, m, v) for r in rows for m, v in (r.get("emulated_vs_real_metrics") or {}).items() if v["identical"] != v["frames"]]
        if diffs:
            md += ["", "Metrics where emulated and real differ:", "",
                   "| CUDA extractor | metric | frames identical | max abs diff | max ULPs | first differing frame |", "|---|---|---|---|---|---|"]
            for r, m, v in diffs:
                md.append(f"| {r['extractor']} | {m} | {v['identical']}/{v['frames']} | {v['max_abs']:.3g} | {v['max_ulp']} | {v['first_diff_frame']} |")
    inexact = [(r, m) for r in rows for m in r["modules"] if not m.get("device_exact")]
    if inexact:
        md += ["", "Modules not device-exact (as the emulated driver's counters say):", ""]
        for r, m in inexact:
            md.append(f"- {r['extractor']}: `{m.get('image')}` ({m.get('mode')}): {'; '.join(m.get('notes') or []) or 'no note'}")
    text = "\n".join(md) + "\n"
    open(os.path.join(a.out, "summary.md"), "w").write(text)
    json.dump(rows, open(os.path.join(a.out, "summary.json"), "w"), indent=1)
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
