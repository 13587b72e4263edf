#!/usr/bin/env python3
"""Fake CUDA program for the `simtwin` front door's tests: plays the emulated driver by
writing a counters file (schema simtwin-counts/2) to EMU_CUDA_COUNTS (%p = its pid), as
each process of a real program would.

  --launches N        N launches of kernel `k` (default 1)
  --counters JSON     fields merged into the counters document (unsupported, hazards,
                      leaks, never_ran, injected, modules, ...)
  --children N        also start N child processes that do the same (one file each)
  --no-counters       write no counters file (a process that never loaded the driver)
  --print-env NAME    print NAME=value of these variables (repeatable)
  --sleep S           sleep S seconds before writing (for signal tests)
  --exit K            exit status
"""
import json, os, subprocess, sys, time

args = sys.argv[1:]

def opt(name, default=None):
    return args[args.index(name) + 1] if name in args else default

for i, a in enumerate(args):
    if a == "--print-env":
        n = args[i + 1]
        print(f"{n}={os.environ.get(n, '')}", flush=True)

children = []
for _ in range(int(opt("--children", "0"))):
    child_args = [a for a in args]
    j = child_args.index("--children")
    del child_args[j:j + 2]
    children.append(subprocess.Popen([sys.executable, __file__] + child_args))
for c in children:
    c.wait()

if opt("--sleep"):
    time.sleep(float(opt("--sleep")))

pattern = os.environ.get("EMU_CUDA_COUNTS")
if pattern and "--no-counters" not in args:
    n = int(opt("--launches", "1"))
    doc = {"schema": "simtwin-counts/2", "pid": os.getpid(), "driver": "emulated", "state": "exit",
           "calls": {"cuInit": 1, "cuLaunchKernel": n}, "launches": {"k": {"count": n, "threads": 32 * n, "blocks": n}} if n else {},
           "copies": {"HtoD": {"count": 1, "bytes": 1024}, "DtoH": {"count": 0, "bytes": 0}, "DtoD": {"count": 0, "bytes": 0},
                      "HtoH": {"count": 0, "bytes": 0}}, "synchronizations": 1}
    doc.update(json.loads(opt("--counters", "{}")))
    path = pattern.replace("%p", str(os.getpid()))
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f)
    os.rename(path + ".tmp", path)
sys.exit(int(opt("--exit", "0")))
