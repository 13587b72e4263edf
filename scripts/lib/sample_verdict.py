"""The verdict of one cuda-samples program run: DIR|- EXIT_STATUS NAME [OUTPUT REFERENCE]
-> `ok ...` or `FAIL ...` (scripts/cuda-samples-check). DIR holds the emulated driver's
counters files, counts.PID.json, one per process (memMapIPCDrv's children launch its
kernels); - on the real driver: none. OUTPUT and REFERENCE are an image the program
wrote and the one NVIDIA ships with the sample, compared byte for byte."""
import glob, json, os, sys

counts, rc, name = sys.argv[1], sys.argv[2], sys.argv[3]
notes = []
if len(sys.argv) == 6:
    try:
        out, ref = open(sys.argv[4], "rb").read(), open(sys.argv[5], "rb").read()
    except OSError as e:
        print(f"FAIL output image not compared ({e})"); sys.exit()
    if out != ref:
        same = len(out) == len(ref)
        diff = sum(a != b for a, b in zip(out, ref)) if same else None
        print(f"FAIL output image differs from NVIDIA's reference ({diff} bytes)" if same else "FAIL output image size differs from the reference")
        sys.exit()
    notes.append("output image identical to the reference")
if rc != "0":
    print(f"FAIL exit status {rc}"); sys.exit()
if counts != "-":
    files = sorted(glob.glob(os.path.join(counts, "counts.*.json")))
    if not files:
        print(f"FAIL no counters in {counts}"); sys.exit()
    u, fl, n = {}, {}, 0
    for f in files:
        try:
            c = json.load(open(f))
        except Exception as e:
            print(f"FAIL unreadable counters {f} ({e})"); sys.exit()
        for k, v in (c.get("unsupported") or {}).items():
            u[k] = u.get(k, 0) + (v if isinstance(v, int) else v.get("count", 1))
        for k, v in (c.get("failed_launches") or {}).items():
            fl[k] = fl.get(k, 0) + (v if isinstance(v, int) else v.get("count", 1))
        n += sum(v.get("count", 0) for v in (c.get("launches") or {}).values())
    if u:
        print("FAIL unsupported entry points called: " + ", ".join(f"{k} x{v}" for k, v in u.items())); sys.exit()
    if fl:
        print("FAIL failed launches: " + ", ".join(f"{k} x{v}" for k, v in fl.items())); sys.exit()
    if n == 0 and name != "deviceQueryDrv":
        print("FAIL no kernel launched"); sys.exit()
    notes.insert(0, f"{n} launches" + (f" in {len(files)} processes" if len(files) > 1 else ""))
print("ok" + (" " + ", ".join(notes) if notes else ""))
