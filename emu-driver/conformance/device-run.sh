#!/usr/bin/env bash
# device-run.sh DIR OUT_FILE: records the real driver's answers on a GPU machine.
#
#   DIR       what build.sh made here and was carried there: driver-conformance,
#             conformance.fatbin, nosm90.fatbin (nothing else is needed: the runner needs
#             only libc at run time, and the real driver never reads the host kernels)
#   OUT_FILE  where the table goes (check it in as emu-driver/tests/data/h200-conformance.txt)
#
# The real libcuda.so.1 is the one `ldconfig -p` lists (CUDA_LIB=path overrides). The table
# is printed as well. Environment: TIMEOUT (per-case seconds, default 15: module_truncated
# hangs the real driver until then), JOBS (case processes at once, default 4).
#
# Through the device tool, from the repository root:
#   bash emu-driver/conformance/device-run.sh target/conformance $OUT/h200-conformance.txt
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 DIR OUT_FILE   (DIR: build.sh's output, carried to the GPU machine)" >&2
    exit 2
fi
dir=$1
out=$2
for f in driver-conformance conformance.fatbin nosm90.fatbin newer.ptx ptx90_only.fatbin; do
    [ -f "$dir/$f" ] || { echo "device-run.sh: $dir/$f is missing (run build.sh $dir here and carry $dir)" >&2; exit 1; }
done
[ -x "$dir/driver-conformance" ] || chmod +x "$dir/driver-conformance"
lib=${CUDA_LIB:-$(ldconfig -p | awk '/libcuda\.so\.1 /{print $NF; exit}')}
[ -n "$lib" ] && [ -e "$lib" ] || { echo "device-run.sh: no libcuda.so.1 found by ldconfig -p (set CUDA_LIB)" >&2; exit 1; }
mkdir -p "$(dirname "$out")"

gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || true)
start=$(date +%s)
"$dir/driver-conformance" --lib "$lib" \
    --fatbin "$dir/conformance.fatbin" --fatbin-nosm90 "$dir/nosm90.fatbin" \
    --timeout "${TIMEOUT:-15}" --jobs "${JOBS:-4}" --out "$out"
secs=$(( $(date +%s) - start ))
echo "# device: ${gpu:-unknown}; run took ${secs} s (timeout ${TIMEOUT:-15} s, jobs ${JOBS:-4})" >>"$out"
cat "$out"
echo "device-run.sh: $(grep -vc '^#' "$out") result lines in ${secs} s -> $out" >&2
