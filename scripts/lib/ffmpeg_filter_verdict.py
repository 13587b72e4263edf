"""The verdict of one FFmpeg filter run on the emulated driver: COUNTS_JSON EXIT_STATUS NAME ->
`ok ...` or `FAIL ...` (unsupported entry points, a kernel fault, no kernel launched).
scripts/ffmpeg-filters."""
import json, sys
if sys.argv[2] != "0":
    print(f"FAIL exit status {sys.argv[2]}"); sys.exit()
try:
    c = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"FAIL no counters ({e})"); sys.exit()
u = c.get("unsupported") or {}
n = sum(v.get("count", 0) for v in (c.get("launches") or {}).values())
fl = c.get("failed_launches") or {}
if u:
    print("FAIL unsupported entry points called: " + ", ".join(f"{k} x{v}" for k, v in u.items()))
elif fl:
    # FFmpeg 5.1 logs a kernel fault and still exits 0 (with no frames).
    print("FAIL kernel faulted: " + ", ".join(f"{k} x{v}" for k, v in fl.items()) + " (exit status 0)")
elif n == 0 and sys.argv[3].endswith("_interlaced_only"):
    # deint=interlaced passes progressive frames through: no kernel to run.
    print("ok no kernels (progressive frames pass through)")
elif n == 0 and sys.argv[3].startswith("hwupload_"):
    # hwupload_cuda copies and launches nothing: its copies must have happened.
    m = (c.get("calls") or {})
    k = sum(v for f, v in m.items() if f.startswith("cuMemcpy"))
    print(f"ok no kernels, {k} copies" if k else "FAIL no copy to or from the device")
elif n == 0:
    print("FAIL no kernel launched")
else:
    print(f"ok {n} launches")
