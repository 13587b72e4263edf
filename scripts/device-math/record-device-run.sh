#!/usr/bin/env bash
# On the device machine (device tool, from the repository root, the record binaries
# carried): the H200's record for `parity replay --device-math`, one tar per flag set
# under $OUT (each: manifest.txt, NAME.blocks, NAME.window; see record.cu).
#   scripts/device-math/record-device-run.sh BINDIR
# BINDIR holds record-RELEASE-SET, built here by:
#   nvcc -O3 -gencode arch=compute_90,code=sm_90 [FLAGS] -o BINDIR/record-RELEASE-SET scripts/device-math/record.cu
# (13.5 default flags: the fine record of the replay's ten functions, windows of 4096
# results each; 13.5 --use_fast_math and 13.0 --fmad=false: coarse blocks of 2^22.)
# Exit: 0 done (each record's own exit is in record.txt); 2 setup error; 77 no GPU.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$ROOT/scripts/lib/gpu.sh"; GPU_SCRIPT=record-device-run
[ $# -eq 1 ] || die "usage: record-device-run.sh BINDIR"
B=$1
[ -d "$B" ] || die "no directory $B (the record binaries, built as this script's header says)"
require_gpu
O=${OUT:-reports/device-math/record-run}
mkdir -p "$O" || die "cannot create $O"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$O/machine.txt" 2>&1
FINE="expf exp2f powf log2f sinf rsqrtf __expf __log2f __sinf __fdividef"
WIN="expf=0x42b17000 exp2f=0xc3000000 powf=0x3fb54000 log2f=0x3f7ff000 sinf=0x3fc90000 rsqrtf=0x00000000
     __expf=0x42b17000 __log2f=0x3f7ff000 __sinf=0x40490000 __fdividef=0x40497000"
one() {  # set, args...
    local set=$1; shift
    local d; d=$(mktemp -d)/$set; mkdir -p "$d"
    echo "== record-$set $*" | tee -a "$O/record.txt"
    timeout 120 "$B/record-$set" "$d" "$@" 2>&1 | tee -a "$O/record.txt"
    echo "== rc ${PIPESTATUS[0]}" | tee -a "$O/record.txt"
    tar -C "$(dirname "$d")" -cf "$O/$set.tar" "$set"
}
# shellcheck disable=SC2086
one 13.5-ftz0-div1-sqrt1-fmad1 --fine $FINE --window $WIN
one 13.5-fast --coarse-shift 22
one 13.0-ftz0-div1-sqrt1-fmad0 --coarse-shift 22
ls -la "$O"
