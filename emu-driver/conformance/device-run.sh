#!/usr/bin/env bash
# device-run.sh DIR OUT_FILE: records the real driver's answers on a GPU machine.
#
#   DIR       what build.sh made here and was carried there: driver-conformance,
#             conformance.fatbin, nosm90.fatbin (nothing else is needed: the runner needs
#             only libc at run time, and the real driver never reads the host kernels)
#   OUT_FILE  where the table goes (check it in as emu-driver/tests/data/h200-conformance.txt)
#
# The real libcuda.so.1 is the machine's (real_libcuda of scripts/lib/gpu.sh; CUDA_LIB=path
# overrides, and then no GPU is asked for). The table
# is printed as well. Environment: TIMEOUT (per-case seconds, default 15: module_truncated
# hangs the real driver until then), JOBS (case processes at once, default 4).
#
# Through the device tool, from the repository root:
#   bash emu-driver/conformance/device-run.sh target/conformance $OUT/h200-conformance.txt
# Exit: 0 done; 2 setup error; 77 no GPU.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$ROOT/scripts/lib/gpu.sh"; GPU_SCRIPT=device-run.sh
[ $# -eq 2 ] || die "usage: $0 DIR OUT_FILE   (DIR: build.sh's output, carried to the GPU machine)"
dir=$1
out=$2
for f in driver-conformance conformance.fatbin nosm90.fatbin newer.ptx ptx90_only.fatbin; do
    [ -f "$dir/$f" ] || die "$dir/$f is missing (run build.sh $dir here and carry $dir)"
done
[ -x "$dir/driver-conformance" ] || chmod +x "$dir/driver-conformance"
lib=$(driver_under_test) || exit $?
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
