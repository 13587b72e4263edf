#!/usr/bin/env python3
"""Fake extractor for parity's CLI tests.

Speaks the fixture twin's interface (--backend cpu|cuda ... --output OUT) and the VMAF
CLI's (--frame_cnt, --feature, --backend/--precision of a fork, --gpumask of upstream).
Writes VMAF JSON (or XML/CSV with --format) with chosen differences selected by
--defect (CUDA side only, like the twin):
  ulp        m_a of frame 2 is one ULP larger
  nan        m_b of frame 1 is NaN
  negzero    m_z of frame 0 is -0
  short      one frame less than asked
  malformed  truncated JSON
  fail       exit status 3 after writing a message
  nolaunch   counts file without kernel launches
  nocounts   no counts file (as if the emulated driver was not loaded)
  hazard     counts file with a hazard report
  htod       one extra cuMemcpyHtoD_v2 per frame
Names of the real planted defects are mapped onto these (for the demo test).
On the CUDA side under EMU_CUDA_COUNTS it checks the emulated-driver environment and
writes a simtwin-counts/1 file that scales with the frame count.
Env: FAKE_DIGITS=6 prints %.6f; FAKE_LOG=FILE appends "<tag> <frames>"; FAKE_TAG;
FAKE_SLEEP_MS per frame; FAKE_IGNORE_DEFECTS=1 ignores --defect.
"""
import json, math, os, struct, sys, time

def die(msg, code=4):
    sys.stderr.write("fake: " + msg + "\n")
    sys.exit(code)

args = sys.argv[1:]
opt = {}
features = []
flags = set()
i = 0
while i < len(args):
    a = args[i]
    if a in ("--json", "--xml", "--csv", "--no_prediction"):
        flags.add(a); i += 1; continue
    if not a.startswith("--") or i + 1 >= len(args):
        die("bad argument " + a, 2)
    if a == "--feature":
        features.append(args[i + 1])
    else:
        opt[a[2:]] = args[i + 1]
    i += 2

vmaf = "frame_cnt" in opt
if vmaf:
    if "gpumask" in opt:
        backend = "cuda" if opt["gpumask"] == "0" else "cpu"
    else:
        backend = opt.get("backend", "cpu")
    frames = int(opt["frame_cnt"])
    fmt = "json" if "--json" in flags else ("csv" if "--csv" in flags else "xml")
    digits = 17 if opt.get("precision") == "max" else 6
else:
    backend = opt.get("backend") or die("no --backend", 2)
    frames = int(opt.get("frames", "0"))
    fmt = opt.get("format", "json")
    digits = 17
    features = [f for f in opt.get("features", "").split(",") if f]
if os.environ.get("FAKE_DIGITS"):
    digits = int(os.environ["FAKE_DIGITS"])
for k in ("reference", "distorted", "width", "height", "bitdepth", "output"):
    if k not in opt:
        die("missing --" + k, 2)
w, h = int(opt["width"]), int(opt["height"])
for p in (opt["reference"], opt["distorted"]):
    if not os.path.exists(p):
        die("no such clip " + p, 2)

defect = opt.get("defect", "")
if defect and backend != "cuda":
    die("--defect applies to --backend cuda only", 2)
if os.environ.get("FAKE_IGNORE_DEFECTS"):
    defect = ""
mapping = {"clamp-borders": "ulp", "filter-border-rows": "ulp", "missing-sync": "nan",
           "divergent-barrier": "hazard", "big-block": "fail", "host-roundtrip": "htod"}
if defect == "atomic-order":
    defect = "ulp" if os.environ.get("EMU_CUDA_BLOCK_ORDER") == "reverse" else ""
defect = mapping.get(defect, defect)

if os.environ.get("FAKE_LOG"):
    with open(os.environ["FAKE_LOG"], "a") as f:
        f.write("%s %d\n" % (os.environ.get("FAKE_TAG", backend), frames))
if os.environ.get("FAKE_SLEEP_MS"):
    time.sleep(frames * float(os.environ["FAKE_SLEEP_MS"]) / 1000.0)

counts_path = os.environ.get("EMU_CUDA_COUNTS")
if backend == "cuda" and counts_path:
    lib = os.environ.get("LD_LIBRARY_PATH", "").split(":")[0]
    if not os.path.exists(os.path.join(lib, "libcuda.so.1")):
        die("LD_LIBRARY_PATH does not start with the emulated driver's directory: " + lib)
    if not os.path.isdir(os.environ.get("EMU_CUDA_KERNELS", "/nonexistent")):
        die("EMU_CUDA_KERNELS is not set to a directory")
    if defect != "nocounts":
        n = frames
        htod_calls = 2 + 2 * n + (n if defect == "htod" else 0)
        calls = {"cuInit": 1, "cuMemAlloc_v2": 3, "cuMemcpyHtoDAsync_v2": 2 + 2 * n,
                 "cuMemcpyDtoHAsync_v2": n, "cuLaunchKernel": 0 if defect == "nolaunch" else n,
                 "cuStreamSynchronize": n}
        if defect == "htod":
            calls["cuMemcpyHtoD_v2"] = n
        launches = {} if defect == "nolaunch" else {"sse_kernel": {"count": n, "threads": n * 256, "blocks": n}}
        doc = {"schema": "simtwin-counts/1", "pid": os.getpid(), "calls": calls,
               "copies": {"HtoD": {"count": htod_calls, "bytes": htod_calls * w * h},
                          "DtoH": {"count": n, "bytes": 8 * n},
                          "DtoD": {"count": 0, "bytes": 0}, "HtoH": {"count": 0, "bytes": 0}},
               "memsets": {"count": n, "bytes": 8 * n},
               "allocations": {"count": 3, "bytes": 3 * w * h},
               "launches": launches, "synchronizations": n,
               "hazards": [{"kind": "divergent-barrier", "kernel": "temporal_sad_div_u8", "block": [0, 0, 0], "threads": [3]}] if defect == "hazard" else [],
               "unsupported": {}}
        with open(counts_path.replace("%p", str(os.getpid())), "w") as f:
            json.dump(doc, f)
elif backend == "cuda":
    sys.stderr.write("FAKE CUDA ACTIVE\n")
elif backend == "cpu" and os.environ.get("EMU_CUDA_COUNTS"):
    die("the CPU side got EMU_CUDA_COUNTS")

if defect == "fail":
    die("CUDA_ERROR_INVALID_VALUE (1) from cuLaunchKernel", 3)

n_out = frames - 1 if defect == "short" else frames
rows = []
for fi in range(n_out):
    m = {"m_a": 1.0 / (fi + 3), "m_b": math.sqrt(fi + 2), "m_z": 0.0, "m_int": float(fi * 100)}
    if defect == "ulp" and fi == 2:
        m["m_a"] = struct.unpack("<d", struct.pack("<q", struct.unpack("<q", struct.pack("<d", m["m_a"]))[0] + 1))[0]
    if defect == "nan" and fi == 1:
        m["m_b"] = float("nan")
    if defect == "negzero" and fi == 0:
        m["m_z"] = -0.0
    rows.append((fi, m))

def num(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if digits == 17:
        return "%.17g" % v
    return "%.*f" % (digits, v)

out = []
if fmt == "json":
    out.append('{\n  "version": "fake-1",\n  "frames": [\n')
    out.append(",\n".join('    {"frameNum": %d, "metrics": {%s}}' % (fi, ", ".join('"%s": %s' % (k, num(v)) for k, v in m.items())) for fi, m in rows))
    out.append('\n  ],\n  "pooled_metrics": {"m_a": {"mean": %s}}\n}\n' % num(float("nan")))
    text = "".join(out)
    if defect == "malformed":
        text = text[: len(text) // 2]
elif fmt == "xml":
    text = '<?xml version="1.0" encoding="UTF-8"?>\n<VMAF version="fake">\n  <frames>\n'
    for fi, m in rows:
        text += '    <frame frameNum="%d" %s />\n' % (fi, " ".join('%s="%s"' % (k, num(v)) for k, v in m.items()))
    text += "  </frames>\n</VMAF>\n"
else:
    keys = list(rows[0][1].keys()) if rows else []
    text = "Frame," + ",".join(keys) + ",\n"
    for fi, m in rows:
        text += "%d," % fi + ",".join(num(m[k]) for k in keys) + ",\n"
with open(opt["output"], "w") as f:
    f.write(text)
