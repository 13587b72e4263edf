"""scripts/h200-replay: one row of device-summary.csv from a `parity-replay` summary
(argv[1]) of function argv[2] whose run exited with argv[3]."""
import json, sys
s = json.load(open(sys.argv[1]))
print(",".join(str(x) for x in [sys.argv[2], s["from"], s["to"], s["inputs"], s["misrounded"], s["mpfr_decided"], s["max_ulp_error"], round(s["seconds"], 2), round(s.get("kernel_seconds", 0), 2), round(s.get("copy_seconds", 0), 2), round(s.get("check_seconds", 0), 2), sys.argv[3]]))
