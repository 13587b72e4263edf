"""The verdict of one program run on a driver: `ok ...` or `FAIL ...`
(scripts/cuda-samples-check, scripts/gstreamer-cuda-check).

    run_verdict.py DIR|- EXIT_STATUS [--no-launch-ok] [--allow ENTRY] [--image OUTPUT REFERENCE]

DIR holds the emulated driver's counters files, counts.PID.json, one per process (a
program's children count too); - on the real driver: none. A run fails on a non-zero
exit, an entry point the emulated driver does not implement (`--allow ENTRY`: one that
the program is known to go on without, noted instead), a failed launch, or no launch
(unless --no-launch-ok); --image compares an image the program wrote with a reference,
byte for byte."""
import argparse, glob, json, os

ap = argparse.ArgumentParser()
ap.add_argument("counts")
ap.add_argument("rc")
ap.add_argument("--no-launch-ok", action="store_true")
ap.add_argument("--allow", action="append", default=[])
ap.add_argument("--image", nargs=2)
a = ap.parse_args()


def verdict():
    notes = []
    if a.image:
        try:
            out, ref = open(a.image[0], "rb").read(), open(a.image[1], "rb").read()
        except OSError as e:
            return f"FAIL output image not compared ({e})"
        if len(out) != len(ref):
            return "FAIL output image size differs from the reference"
        if out != ref:
            return f"FAIL output image differs from the reference ({sum(x != y for x, y in zip(out, ref))} bytes)"
        notes.append("output image identical to the reference")
    if a.rc != "0":
        return f"FAIL exit status {a.rc}"
    if a.counts == "-":
        return "ok" + (" " + ", ".join(notes) if notes else "")
    files = sorted(glob.glob(os.path.join(a.counts, "counts.*.json")))
    if not files:
        return f"FAIL no counters in {a.counts}"
    unsupported, failed, launches = {}, {}, 0
    for f in files:
        try:
            c = json.load(open(f))
        except Exception as e:
            return f"FAIL unreadable counters {f} ({e})"
        for key, into in (("unsupported", unsupported), ("failed_launches", failed)):
            for k, v in (c.get(key) or {}).items():
                into[k] = into.get(k, 0) + (v if isinstance(v, int) else v.get("count", 1))
        launches += sum(v.get("count", 0) for v in (c.get("launches") or {}).values())
    refused = {k: v for k, v in unsupported.items() if k not in a.allow}
    if refused:
        return "FAIL unsupported entry points called: " + ", ".join(f"{k} x{v}" for k, v in refused.items())
    if failed:
        return "FAIL failed launches: " + ", ".join(f"{k} x{v}" for k, v in failed.items())
    if launches == 0 and not a.no_launch_ok:
        return "FAIL no kernel launched"
    notes.insert(0, f"{launches} launches" + (f" in {len(files)} processes" if len(files) > 1 else ""))
    notes += [f"{k} x{v} refused (allowed)" for k, v in unsupported.items() if k in a.allow]
    return "ok " + ", ".join(notes)


print(verdict())
