"""scripts/real-program/h200-bisect-passthrough.sh: the first divergent event of side B in
a `parity bisect` summary (argv[1]), as EMU_CUDA_TRACE_DUMP names it: the launch index,
or cN for copy N; nothing when the sides agree or the summary is unreadable."""
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except Exception:
    sys.exit()
b = (s.get("first_divergence") or {}).get("b") or {}
if "launch" in b:
    print(b["launch"])
elif "copy" in b:
    print(f"c{b['copy']}")
