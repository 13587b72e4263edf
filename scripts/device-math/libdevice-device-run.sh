#!/usr/bin/env bash
# On the device machine (device tool, from the repository root, the bundle of
# libdevice-bundle.sh carried): every binary of the bundle, each comparing the device's
# libdevice with kernels-host's translated one over every input; results under $OUT.
#   scripts/device-math/libdevice-device-run.sh BUNDLE
# Exit: 0 done (the comparisons' own results are in verify.txt); 2 setup error; 77 no GPU.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$ROOT/scripts/lib/gpu.sh"; GPU_SCRIPT=libdevice-device-run
[ $# -eq 1 ] || die "usage: libdevice-device-run.sh BUNDLE"
B=$1
[ -d "$B" ] || die "no bundle at $B (libdevice-bundle.sh makes it)"
require_gpu
O=${OUT:-reports/device-math/run}
mkdir -p "$O"
{
    date -u
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    nproc
    command -v nvcc && nvcc --version | tail -2
    for f in $(find / -name libdevice.10.bc -not -path '/proc/*' 2>/dev/null | head -5); do md5sum "$f"; done
} > "$O/machine.txt" 2>&1
cat "$O/machine.txt"
run() {  # binary, time limit, functions...
    local bin=$1 lim=$2; shift 2
    echo "== $bin $*" | tee -a "$O/verify.txt"
    timeout "$lim" "$B/$bin" --samples "$O/samples-${bin#verify-}.txt" "$@" 2>&1 | tee -a "$O/verify.txt"
    echo "== rc ${PIPESTATUS[0]}" | tee -a "$O/verify.txt"
}
run verify-13.5-ftz0-div1-sqrt1-fmad1 170
run verify-13.5-ftz0-div1-sqrt1-fmad0 55 powf logf expf sqrtf atan2f sinf cosf cbrtf log10f
run verify-13.0-ftz0-div1-sqrt1-fmad0 55 powf logf expf sqrtf atan2f sinf cosf cbrtf log10f
run verify-13.5-fast 45 expf logf sinf powf __fdividef rsqrtf sqrtf tanhf log2f
