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
  unsupported counts file with 2 calls of cuTexObjectCreate the driver did not implement
             (the program ignored the error and exited 0)
  htod       one extra cuMemcpyHtoD_v2 per frame
  order      m_a of frame 2 one ULP larger under EMU_CUDA_BLOCK_ORDER reverse/shuffle:*
  deferred   m_a of frame 2 one ULP larger under EMU_CUDA_ASYNC=deferred
  race       counts file with a shared-memory race report under EMU_CUDA_CHECKS=race
             (nothing at all without it: the hardware hides the bug)
Names of the real planted defects are mapped onto these (for the demo test).

On the CUDA side under EMU_CUDA_COUNTS it checks the emulated-driver environment and
plays the emulated driver too: every driver call of a small CUDA program (setup, per
frame two uploads, a memset, a launch, a download and a synchronisation, teardown) is
counted by name; EMU_CUDA_FAIL=NAME:K[,NAME:K] makes the K-th call of NAME fail; the
counters file (schema simtwin-counts/2) is written at exit, on SIGTERM and SIGABRT
(state signal) and at every synchronisation (state checkpoint), with the leaks left.
How the program reacts to a failed call (FAKE_ROBUST=1: always a clean exit 1):
  cuInit, cuStreamCreate, cuModuleLoadData, cuMemAlloc_v2  exit 1 without cleaning up (leaks)
  cuMemcpyHtoDAsync_v2, cuMemsetD8Async_v2, cuMemcpyHtoD_v2 clean up, exit 1
  cuLaunchKernel        crash (SIGSEGV; only a checkpoint survives)
  cuMemcpyDtoHAsync_v2  abort (SIGABRT)
  cuStreamSynchronize   hang (until killed)
  teardown calls        go on, exit 1 at the end
Env: FAKE_DIGITS=6 prints %.6f; FAKE_LOG=FILE appends "<tag> <frames>"; FAKE_TAG;
FAKE_SLEEP_MS per frame; FAKE_IGNORE_DEFECTS=1 ignores --defect; FAKE_HANG=PIDFILE starts
a child that sleeps (its pid in PIDFILE, after the extractor's) and hangs (FAKE_HANG_SETSID=1:
the child in a session of its own); FAKE_IGNORE_TERM=1 ignores SIGTERM;
FAKE_FAIL_FRAMES=N exits 3 when asked for N frames; FAKE_OUTPUT_KIND=fifo|devzero|sparse|
dir|whitespace leaves that instead of the output; FAKE_WRITE_BEFORE_FAIL=1 writes the
output before --defect fail exits; FAKE_DRIVER_REFUSES=1 refuses EMU_CUDA_BLOCK_ORDER
(other than forward) and EMU_CUDA_FAIL at cuInit, as a driver without them does;
FAKE_IGNORE_FAIL=1 counts but never injects; FAKE_SHORT=BACKEND writes a frame fewer
than asked on that backend; FAKE_COUNTS_SCHEMA, FAKE_COUNTS_GARBAGE=1
and FAKE_COUNTS_STATE (JSON, e.g. '"checkpoint"') change the counters file at exit.
The real device through simtwin's pass-through (EMU_CUDA_REAL set): the counters say
"pass-through PATH"; FAKE_REAL_DEFECT=NAME applies defect NAME on that side only (a
difference between the emulated driver and the device).
A CUDA run on a device (EMU_CUDA_REAL, or without simtwin's counters) prints "FAKE CUDA
ACTIVE" on stderr.
"""
import atexit, json, math, os, resource, signal, struct, subprocess, sys, time

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
if backend == "cuda" and os.environ.get("EMU_CUDA_REAL") and os.environ.get("FAKE_REAL_DEFECT"):
    defect = os.environ["FAKE_REAL_DEFECT"]
mapping = {"clamp-borders": "ulp", "filter-border-rows": "ulp", "missing-sync": "race",
           "divergent-barrier": "hazard", "big-block": "fail", "host-roundtrip": "htod",
           "atomic-order": "order", "early-read": "deferred"}
defect = mapping.get(defect, defect)
order = os.environ.get("EMU_CUDA_BLOCK_ORDER", "forward")
if defect == "order":
    defect = "ulp" if order == "reverse" or order.startswith("shuffle:") else ""
if defect == "deferred":
    defect = "ulp" if os.environ.get("EMU_CUDA_ASYNC") == "deferred" else ""
if defect == "race":
    defect = "racehazard" if "race" in os.environ.get("EMU_CUDA_CHECKS", "").split(",") else ""

if os.environ.get("FAKE_LOG"):
    with open(os.environ["FAKE_LOG"], "a") as f:
        f.write("%s %d\n" % (os.environ.get("FAKE_TAG", backend), frames))
if os.environ.get("FAKE_IGNORE_TERM"):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if os.environ.get("FAKE_HANG"):
    # FAKE_HANG_SETSID=1: the child leaves the process group (a daemon's setsid).
    child = subprocess.Popen(["sleep", "300"], start_new_session=bool(os.environ.get("FAKE_HANG_SETSID")))
    with open(os.environ["FAKE_HANG"], "w") as f:
        f.write("%d %d\n" % (os.getpid(), child.pid))
    while True:
        time.sleep(1)
if os.environ.get("FAKE_FAIL_FRAMES") and int(os.environ["FAKE_FAIL_FRAMES"]) == frames:
    die("asked to fail at %d frames" % frames, 3)
if os.environ.get("FAKE_SLEEP_MS"):
    time.sleep(frames * float(os.environ["FAKE_SLEEP_MS"]) / 1000.0)


class Driver:
    """The emulated driver's side: counters by entry point, injected failures."""
    CODES = {"cuMemAlloc_v2": 2, "cuModuleLoadData": 218, "cuLaunchKernel": 719}

    def __init__(self, path):
        self.path = path.replace("%p", str(os.getpid()))
        self.fail = {}
        spec = "" if os.environ.get("FAKE_IGNORE_FAIL") else os.environ.get("EMU_CUDA_FAIL", "")
        for item in filter(None, spec.split(",")):
            name, k = item.rsplit(":", 1)
            self.fail[(name, int(k))] = True
        self.calls, self.failures, self.injected = {}, {}, []
        self.copies = {d: {"count": 0, "bytes": 0} for d in ("HtoD", "DtoH", "DtoD", "HtoH")}
        self.memsets = {"count": 0, "bytes": 0}
        self.allocs = {"count": 0, "bytes": 0, "frees": 0}
        self.launches, self.syncs, self.hazards, self.unsupported = {}, 0, [], {}
        self.live = {"allocations": 0, "modules": 0, "streams": 0}
        self.written = False

    def call(self, name):
        n = self.calls.get(name, 0) + 1
        self.calls[name] = n
        if (name, n) in self.fail:
            code = self.CODES.get(name, 1)
            self.failures[name] = self.failures.get(name, 0) + 1
            self.injected.append({"name": name, "call": n, "code": code})
            return code
        return 0

    def doc(self, state):
        driver = "pass-through " + os.environ["EMU_CUDA_REAL"] if os.environ.get("EMU_CUDA_REAL") else "fake emulated"
        return {"schema": os.environ.get("FAKE_COUNTS_SCHEMA", "simtwin-counts/2"), "pid": os.getpid(), "driver": driver, "state": state,
                "calls": self.calls, "failures": self.failures, "copies": self.copies, "memsets": self.memsets,
                "allocations": self.allocs, "launches": self.launches, "failed_launches": {}, "zero_copy": {},
                "synchronizations": self.syncs, "hazards": self.hazards,
                "leaks": {"allocations": self.live["allocations"], "allocation_bytes": self.live["allocations"] * w * h,
                          "pinned": 0, "modules": self.live["modules"], "streams": self.live["streams"], "events": 0,
                          "details": ["%s x%d" % (k, v) for k, v in self.live.items() if v]},
                "unsupported": self.unsupported, "injected": self.injected,
                "modules": [] if os.environ.get("EMU_CUDA_REAL") else
                [{"image": "fake.fatbin", "mode": "ptx", "library": "fake.so", "kernels": 1, "device_exact": True,
                  "notes": ["threads of sse_kernel: loops over threads: 5 warp collectives reached by every thread together"]}]}

    def write(self, state):
        tmp = self.path + ".tmp%d" % os.getpid()
        with open(tmp, "w") as f:
            if os.environ.get("FAKE_COUNTS_GARBAGE"):
                f.write('{"schema": "simtwin-counts/2", "calls": ')
            else:
                json.dump(self.doc(state), f)
        os.rename(tmp, self.path)

    def at_exit(self):
        if not self.written:
            self.written = True
            self.write(json.loads(os.environ.get("FAKE_COUNTS_STATE", '"exit"')))

    def on_signal(self, sig):
        self.written = True
        self.write({"signal": signal.Signals(sig).name})


def cuda_program(drv, n):
    """The program under test: returns normally, exits 1, crashes, aborts or hangs."""
    robust = bool(os.environ.get("FAKE_ROBUST"))

    def cleanup():
        if drv.live["allocations"]:
            for _ in range(drv.live["allocations"]):
                if drv.call("cuMemFree_v2") == 0:
                    drv.allocs["frees"] += 1
            drv.live["allocations"] = 0
        if drv.live["modules"] and drv.call("cuModuleUnload") == 0:
            drv.live["modules"] = 0
        if drv.live["streams"] and drv.call("cuStreamDestroy_v2") == 0:
            drv.live["streams"] = 0

    def failed(name, code, how):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        sys.stderr.write("fake: %s failed: CUDA error %d\n" % (name, code))
        if robust or how == "clean":
            cleanup()
            sys.exit(1)
        if how == "leak":
            sys.exit(1)
        if how == "crash":
            sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGSEGV)
        if how == "abort":
            drv.on_signal(signal.SIGABRT)
            sys.stderr.flush()
            os.abort()
        if how == "hang":
            while True:
                time.sleep(1)

    def call(name, how):
        rc = drv.call(name)
        if rc:
            failed(name, rc, how)
        return rc == 0

    call("cuInit", "leak")
    if call("cuStreamCreate", "leak"):
        drv.live["streams"] = 1
    if call("cuModuleLoadData", "leak"):
        drv.live["modules"] = 1
    for _ in range(3):
        call("cuMemAlloc_v2", "leak")
        drv.allocs["count"] += 1
        drv.allocs["bytes"] += w * h
        drv.live["allocations"] += 1
    for _ in range(2):
        call("cuMemcpyHtoDAsync_v2", "clean")
        drv.copies["HtoD"]["count"] += 1
        drv.copies["HtoD"]["bytes"] += w * h
    for fi in range(n):
        for _ in range(2):
            call("cuMemcpyHtoDAsync_v2", "clean")
            drv.copies["HtoD"]["count"] += 1
            drv.copies["HtoD"]["bytes"] += w * h
        if defect == "htod":
            call("cuMemcpyHtoD_v2", "clean")
            drv.copies["HtoD"]["count"] += 1
            drv.copies["HtoD"]["bytes"] += w * h
        call("cuMemsetD8Async_v2", "clean")
        drv.memsets["count"] += 1
        drv.memsets["bytes"] += 8
        if defect != "nolaunch":
            call("cuLaunchKernel", "crash")
            l = drv.launches.setdefault("sse_kernel", {"count": 0, "threads": 0, "blocks": 0})
            l["count"] += 1; l["threads"] += 256; l["blocks"] += 1
            if not os.environ.get("EMU_CUDA_REAL"):
                # the emulated driver times each launch (run_ns): 1.5 ms a frame
                l["run_ns"] = l.get("run_ns", 0) + 1500000
        call("cuMemcpyDtoHAsync_v2", "abort")
        drv.copies["DtoH"]["count"] += 1
        drv.copies["DtoH"]["bytes"] += 8
        call("cuStreamSynchronize", "hang")
        drv.syncs += 1
        drv.write("checkpoint")
    if defect == "unsupported":
        drv.unsupported["cuTexObjectCreate"] = 2
    if defect == "hazard":
        drv.hazards.append({"kind": "barrier-divergence", "kernel": "temporal_sad_div_u8", "block": [0, 0, 0], "threads": [3],
                            "operation": "__syncthreads at temporal.cu:40", "message": "barrier in a divergent branch", "occurrences": 1})
    if defect == "racehazard":
        drv.hazards.append({"kind": "shared-race-war", "kernel": "band_mode_nosync_u8", "block": [0, 0, 0], "threads": [0, 1],
                            "operation": "shared-memory write at band_mask.cu:103 after read at band_mask.cu:103",
                            "message": "write-after-read race on dynamic shared memory (extern __shared__) + 8", "occurrences": 1})
    ok = True
    for _ in range(drv.live["allocations"]):
        if call("cuMemFree_v2", "go-on"):
            drv.allocs["frees"] += 1
            drv.live["allocations"] -= 1
        else:
            ok = False
    if call("cuModuleUnload", "go-on"):
        drv.live["modules"] = 0
    else:
        ok = False
    if call("cuStreamDestroy_v2", "go-on"):
        drv.live["streams"] = 0
    else:
        ok = False
    if not ok:
        sys.exit(1)


counts_path = os.environ.get("EMU_CUDA_COUNTS")
if backend == "cuda" and (os.environ.get("EMU_CUDA_REAL") or not counts_path):
    sys.stderr.write("FAKE CUDA ACTIVE\n")
if backend == "cuda" and counts_path:
    lib = os.environ.get("LD_LIBRARY_PATH", "").split(":")[0]
    if not os.path.exists(os.path.join(lib, "libcuda.so.1")):
        die("LD_LIBRARY_PATH does not start with the emulated driver's directory: " + lib)
    if not os.path.isdir(os.environ.get("EMU_CUDA_KERNELS", "/nonexistent")):
        die("EMU_CUDA_KERNELS is not set to a directory")
    if os.environ.get("FAKE_DRIVER_REFUSES") and (order != "forward" or os.environ.get("EMU_CUDA_FAIL")):
        die("cuInit failed: CUDA_ERROR_NOT_SUPPORTED (801)", 1)
    if defect != "nocounts":
        drv = Driver(counts_path)
        atexit.register(drv.at_exit)
        def on_term(sig, frame):
            drv.on_signal(sig)
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        if not os.environ.get("FAKE_IGNORE_TERM"):
            signal.signal(signal.SIGTERM, on_term)
        cuda_program(drv, frames)
elif backend == "cpu" and os.environ.get("EMU_CUDA_COUNTS"):
    die("the CPU side got EMU_CUDA_COUNTS")

n_out = frames - 1 if defect == "short" or os.environ.get("FAKE_SHORT") == backend else frames
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
if defect == "fail":
    if os.environ.get("FAKE_WRITE_BEFORE_FAIL"):
        with open(opt["output"], "w") as f:
            f.write(text)
    die("CUDA_ERROR_INVALID_VALUE (1) from cuLaunchKernel", 3)
# FAKE_OUTPUT_KIND (hostile outputs, for parity's reading limits): fifo (a named pipe
# nobody writes), devzero (a symlink to /dev/zero), sparse (a 40 GiB sparse file), dir (a
# directory), whitespace (only blanks).
kind = os.environ.get("FAKE_OUTPUT_KIND")
if kind:
    out = opt["output"]
    if os.path.lexists(out):
        os.remove(out)
    if kind == "fifo":
        os.mkfifo(out)
    elif kind == "devzero":
        os.symlink("/dev/zero", out)
    elif kind == "sparse":
        with open(out, "w") as f:
            f.truncate(40 << 30)
    elif kind == "dir":
        os.mkdir(out)
    elif kind == "whitespace":
        with open(out, "w") as f:
            f.write("  \n\t \n")
    sys.exit(0)
with open(opt["output"], "w") as f:
    f.write(text)
