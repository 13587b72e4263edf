#!/usr/bin/env bash
# Builds the device bundle of the libdevice comparison (scripts/device-math/libdevice_verify.cu)
# into DIR: one binary per (nvcc release, flag set), its device code compiled by that
# release's nvcc with those flags, its host side kernels-host's translated libdevice of the
# same release and set (a twin build of a one-line kernel with those flags fills
# kernels-host's libdevice cache first). On the device: DIR/verify-RELEASE-SET [NAME...].
#   NVCC: the 13.5 nvcc (default scripts/nvcc-path); NVCC130: a 13.0 nvcc (optional: without
#   it the 13.0 binary is not built). The link always uses NVCC's cudart (13.x runs on the
#   H200's driver 580).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${1:?usage: libdevice-bundle.sh DIR}
NVCC=${NVCC:-$("$ROOT/scripts/nvcc-path")}
KH=${KERNELS_HOST:-$ROOT/target/release/kernels-host}
CACHE=${SIMTWIN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/simtwin}
mkdir -p "$DIR"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf '__global__ void k(float *y) { y[0] = expf(y[0]); }\n' > "$tmp/k.cu"
one() {
    local rel=$1 set_name=$2 flags=$3 tool=$4
    # shellcheck disable=SC2086
    "$KH" build --no-nvcc-check --nvcc "$tool" -o "$tmp/out-$rel-$set_name" "$tmp/k.cu" -- $flags >/dev/null
    local lib; lib=$(ls -d "$CACHE/libdevice/$rel-$set_name"-* | head -1)
    # shellcheck disable=SC2086
    "$tool" -c -O3 -gencode arch=compute_90,code=sm_90 $flags -o "$tmp/verify-$rel-$set_name.o" "$ROOT/scripts/device-math/libdevice_verify.cu"
    "$NVCC" -gencode arch=compute_90,code=sm_90 -o "$DIR/verify-$rel-$set_name" "$tmp/verify-$rel-$set_name.o" \
        "$lib"/unit*.o "$lib"/entry.o "$lib"/sfu.o "$lib"/runtime.o -Xcompiler -pthread
    echo "$DIR/verify-$rel-$set_name ($tool $flags; $lib)"
}
pids=()
one 13.5 ftz0-div1-sqrt1-fmad1 "" "$NVCC" & pids+=($!)
one 13.5 ftz0-div1-sqrt1-fmad0 "--fmad=false" "$NVCC" & pids+=($!)
one 13.5 fast "--use_fast_math" "$NVCC" & pids+=($!)
if [ -n "${NVCC130:-}" ]; then one 13.0 ftz0-div1-sqrt1-fmad0 "--fmad=false" "$NVCC130" & pids+=($!); fi
for p in "${pids[@]}"; do wait "$p"; done
ls -la "$DIR"
