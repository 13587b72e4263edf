"""Parallel blocks (scripts/bench-kernels --workers N): ONE_WORKER_TABLE_JSON
N_WORKERS_TABLE_JSON N -> workers.md on stdout, the speedup of N workers per case."""
import json, sys
one, many, n = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
by_id = {k["id"]: k for k in many["kernels"]}
print(f"## Parallel blocks: EMU_CUDA_WORKERS={n} on {n} cores against 1 worker on 1 core (simtwin medians)")
print()
print("| kernel | 1 worker | %d workers | speedup |" % n)
print("|---|---|---|---|")
for k in one["kernels"]:
    m = by_id.get(k["id"])
    a, b = k["columns"]["simtwin"].get("median_ms"), m and m["columns"]["simtwin"].get("median_ms")
    if a and b:
        print(f"| ({k['id']}) {k['kernel']} | {a:.2f} ms | {b:.2f} ms | {a / b:.2f}x |")
print()
print(f"Load average before/after the {n}-worker run: {many['loadavg_before']} / {many['loadavg_after']}.")
