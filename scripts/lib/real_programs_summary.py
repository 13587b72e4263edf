"""scripts/h200-real-programs.sh run: summary.md (argv[2]) of the results directory (argv[1]) for
the sizes (argv[3]) and extractors (argv[4]), comma-separated."""
import json, os, sys
res, out, sizes, exts = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4].split(",")
def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return None
prov = load(os.path.join(res, "provenance.json")) or {}
timing = {(t["size"], t["extractor"], t["side"]): t["ms_per_frame"] for t in (load(os.path.join(res, "timing.json")) or [])}
L = ["# Upstream VMAF CUDA extractors on the real device", "",
     f"GPU: {prov.get('nvidia_smi')}; nvcc: {' '.join(prov.get('nvcc') or [])}; meson options: {' '.join(prov.get('meson_options') or [])}; host CPU: {prov.get('cpu')} ({prov.get('cores')} cores)", "",
     "| size | extractor | cpu vs cuda-real (identical frames, max abs) | cuda-real vs pass-through | cuda-real vs emulated | motion-cuda-ref vs cuda-real | ms/frame CPU | ms/frame real |",
     "|---|---|---|---|---|---|---|---|"]
def first_err(d, side):
    try:
        lines = [l.strip() for l in open(os.path.join(d, f"cuda-{side}.stderr.log")) if l.strip() and "h200-real-programs.sh" not in l]
        key = [l for l in lines if l.startswith("simtwin:") or "Assertion" in l or "problem" in l]
        return (key or lines or ["failed, no message"])[0][:160]
    except OSError:
        return "not run"
def cell(p, need=()):
    d = load(os.path.join(p, "summary.json"))
    if d is None:
        base = os.path.dirname(p)
        for side in need:
            if not os.path.exists(os.path.join(base, f"cuda-{side}.json")):
                return f"cuda-{side}: {first_err(base, side)}"
        return "-"
    if d.get("error"):
        return "error: " + d["error"].splitlines()[0][:80]
    mx = max([m.get("max_abs") or 0 for m in d.get("metrics", {}).values()] or [0])
    return f"{d.get('identical_frames')}/{d.get('frames')}, max abs {mx:.3g}, {d.get('verdict', '')}"
for s in sizes:
    for e in exts:
        d = os.path.join(res, s, e)
        f = lambda x: "-" if x is None else f"{x:.3f}"
        L.append(f"| {s} | {e} | {cell(os.path.join(d, 'cpu-vs-real'), ('real',))} | {cell(os.path.join(d, 'real-vs-passthrough'), ('real', 'passthrough'))} | {cell(os.path.join(d, 'real-vs-emulated'), ('real', 'emulated'))} | {cell(os.path.join(d, 'ref-vs-real'), ('real',)) if e in ('motion', 'model') else '-'} | {f(timing.get((s, e, 'cpu')))} | {f(timing.get((s, e, 'cuda-real')))} |")
L += ["", "Every output JSON, counters file (pass-through, emulated), diff summary and log: real-programs.tar.gz (results/SIZE/EXTRACTOR/)."]
open(out, "w").write("\n".join(L) + "\n")
print("\n".join(L))
