"""scripts/h200-real-programs.sh prepare: the sizes, extractors, frame count and CPU bench size
of scripts/real-program-check's summary (argv[1]) as the bundle's config file (argv[2])."""
import json, sys
d = json.load(open(sys.argv[1]))
sizes = sorted({r["size"] for r in d["results"]}, key=lambda s: int(s.split("x")[0]))
exts = [e for e in ("adm", "vif", "motion", "model") if any(r["extractor"] == e for r in d["results"])]
cpu_n = 48
if d.get("bench") and "cpu=" in d["bench"]:
    cpu_n = int(d["bench"].split("cpu=")[1])
with open(sys.argv[2], "w") as f:
    f.write(f"SIZES={','.join(sizes)}\nONLY={','.join(exts)}\nFRAMES={d['frames']}\nBENCH_N={cpu_n}\n")
