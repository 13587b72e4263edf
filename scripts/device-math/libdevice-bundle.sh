#!/usr/bin/env bash
# Builds the device bundle of the libdevice comparison (scripts/device-math/libdevice_verify.cu)
# into DIR: one binary per flag set, each linked with kernels-host's translated libdevice of
# that set (built by a twin build of kernels-host/tests/cu/libdevice_calls.cu with those
# flags, which fills the libdevice cache). On the device: DIR/verify-SET [NAME...].
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${1:?usage: libdevice-bundle.sh DIR}
NVCC=$("$ROOT/scripts/nvcc-path")
KH=${KERNELS_HOST:-$ROOT/target/release/kernels-host}
CACHE=${SIMTWIN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/simtwin}
mkdir -p "$DIR"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf '__global__ void k(float *y) { y[0] = expf(y[0]); }\n' > "$tmp/k.cu"
for spec in "ftz0-div1-sqrt1-fmad1:" "ftz0-div1-sqrt1-fmad0:--fmad=false" "fast:--use_fast_math"; do
    set_name=${spec%%:*}; flags=${spec#*:}
    # shellcheck disable=SC2086
    "$KH" build --no-nvcc-check -o "$tmp/out-$set_name" "$tmp/k.cu" -- $flags >/dev/null
    lib=$(ls -d "$CACHE/libdevice/$set_name"-* | head -1)
    # shellcheck disable=SC2086
    "$NVCC" -O3 -gencode arch=compute_90,code=sm_90 $flags -o "$DIR/verify-$set_name" \
        "$ROOT/scripts/device-math/libdevice_verify.cu" "$lib"/unit*.o "$lib"/entry.o "$lib"/sfu.o -Xcompiler -pthread
    echo "$DIR/verify-$set_name ($flags; $lib)"
done
