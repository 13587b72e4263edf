"""One line from a `parity frames --video` summary (argv[1]): identical frames, then per
component max |difference| / PSNR (with a second argument, the first differing sample).
scripts/ffmpeg-filters prints it per filter."""
import json, sys
s = json.load(open(sys.argv[1]))
if "error" in s:
    print("ERROR " + s["error"].splitlines()[0]); sys.exit()
parts = []
for k, v in s["components"].items():
    t = "%s %s/%s" % (k, v["max_abs_diff"], v["psnr_db"])
    f = v["first_difference"]
    if len(sys.argv) > 2 and f:
        t += " (first %s:%s,%s)" % (f["frame"], f["x"], f["y"])
    parts.append(t)
print("%s/%s identical; %s" % (s["identical_frames"], s["frames"], "; ".join(parts)))
