"""The execution paths side by side (scripts/bench-kernels): MAIN_TABLE_JSON PATHS_DIR
RUN... -> paths.md on stdout: twin mode and each PTX-mode run (EMU_CUDA_THREAD_LOOPS=off,
auto) beside the plain loop and HIP-CPU, per case."""
import json, sys
main = json.load(open(sys.argv[1]))
runs = [(p, json.load(open(f"{sys.argv[2]}/{p.replace(':', '-')}/table.json"))) for p in sys.argv[3:]]
names = {"twin": "twin mode", "ptx:off": "PTX mode, fibers (THREAD_LOOPS=off)", "ptx:auto": "PTX mode, auto (THREAD_LOOPS=auto)"}
runs.insert(0, ("twin", main))

def col(k, name):
    c = k["columns"].get(name)
    return c if isinstance(c, dict) and c.get("error") is None and c.get("median_ms") else None

def figure(k, c, plain):
    # The case's unit: ns per unit where it has one, else the ratio to its own process's plain loop.
    if k["units_per_launch"] and k["unit"] != "x plain":
        return c["median_ms"] * 1e6 / k["units_per_launch"], "ns"
    return c["median_ms"] / plain["median_ms"], "x"

def text(v, u):
    return f"{v:.2f}x" if u == "x" else (f"{v:.0f} ns" if v >= 100 else f"{v:.1f} ns")

print("## simtwin's execution paths side by side (medians, one core, EMU_CUDA_WORKERS=1)")
print()
print("Each cell: the case's figure (ns per unit, or time / the plain loop of the same process) and, after the "
      "slash, simtwin / HIP-CPU (HIP-CPU's median from the main run; issue 20 asks <= 0.5 on every shape).")
print()
print("| kernel | unit | plain | HIP-CPU | " + " | ".join(names[p] for p, _ in runs) + " |")
print("|---|---|---|---|" + "---|" * len(runs))
summary = {}
for k in main["kernels"]:
    plain, hip = col(k, "plain"), col(k, "hip_cpu")
    if not plain:
        continue
    unit = k["unit"] if k["unit"] != "x plain" else "x plain"
    hs = text(*figure(k, hip, plain)) if hip else "-"
    cells = []
    for p, r in runs:
        m = next((x for x in r["kernels"] if x["id"] == k["id"]), None)
        c, pl = (col(m, "simtwin"), col(m, "plain")) if m else (None, None)
        if not c or not pl:
            err = m and m["columns"].get("simtwin") and m["columns"]["simtwin"].get("error")
            cells.append(("FAILED: " + err.split(":")[0]) if err else "-")
            continue
        v, u = figure(k, c, pl)
        h = f" / {c['median_ms'] / hip['median_ms']:.2f}" if hip else ""
        cells.append(text(v, u) + h)
        summary.setdefault(p, []).append((k["id"], c["median_ms"] / hip["median_ms"] if hip else None))
    print(f"| ({k['id']}) {k['kernel']} | {unit} | {plain['median_ms']:.2f} ms | {hs} | " + " | ".join(cells) + " |")
print()
for p, rows in summary.items():
    over = [f"({i}) {r / 0.5:.1f}x" for i, r in rows if r is not None and r > 0.5]
    print(f"- {names[p]}: at most half HIP-CPU's time on {sum(1 for _, r in rows if r is not None and r <= 0.5)} of "
          f"{sum(1 for _, r in rows if r is not None)} shapes" + (f"; over by {', '.join(over)}" if over else "") + ".")
print()
print("Load average before/after each run: main " + f"{main['loadavg_before']} / {main['loadavg_after']}; " +
      "; ".join(f"{names[p]} {r['loadavg_before']} / {r['loadavg_after']}" for p, r in runs) + ".")
