#!/usr/bin/env bash
# parity bisect on a real GPU, on the fixtures' CUDA twin: the emulated driver against
# the pass-through to the machine's libcuda.so.1 (EMU_CUDA_REAL), planted defects on
# the device, and what tracing costs in pass-through.
#
#   scripts/h200/bisect-fixtures.sh DIR OUT
#
# DIR holds bin/{parity,fixtures,simtwin-twin}, lib/libcuda.so.1 (simtwin's), kernels/
# (the twins' host libraries) and kernels.sig, as built by scripts/build (device tool:
# copy them under .dev/NAME and carry it). OUT gets summary.md (every case's verdict,
# the cost figures) and reports.tar.gz (each case's report directory and traces).
# Exit: 0 done (divergences are findings), 2 setup error, 77 no GPU.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$ROOT/scripts/lib/gpu.sh"; GPU_SCRIPT=bisect-fixtures
[ $# -eq 2 ] || die "usage: bisect-fixtures.sh DIR OUT"
DIR=$(cd "$1" 2>/dev/null && pwd) || die "no directory $1"
OUT=$2
for p in bin/parity bin/fixtures bin/simtwin-twin lib/libcuda.so.1 kernels kernels.sig; do
    [ -e "$DIR/$p" ] || die "$DIR/$p missing (copy what scripts/build made, as this script's header says)"
done
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || die "cannot create $OUT"
# BISECT_REAL: a stand-in driver (scripts/h200/make-standin) to test this script without a GPU.
if [ -n "${BISECT_REAL:-}" ]; then
    REAL=$BISECT_REAL
else
    require_gpu
    REAL=$(real_libcuda) || exit 2
fi
R=$(mktemp -d) && W=$R/work && mkdir -p "$W"
F=$DIR/bin/fixtures
$F clip --kind textured --width 576 --height 324 --bitdepth 8 --frames 3 -o "$W/ref.yuv" >/dev/null &&
$F clip --kind textured --width 576 --height 324 --bitdepth 8 --frames 3 --distort noise:13:5 -o "$W/dis.yuv" >/dev/null &&
$F clip --kind textured --width 256 --height 256 --bitdepth 8 --frames 3 -o "$W/aref.yuv" >/dev/null &&
$F clip --kind textured --width 256 --height 256 --bitdepth 8 --frames 3 --distort noise:5:40 -o "$W/adis.yuv" >/dev/null \
    || die "making the clips failed"
twin() { # size ref dis extra...
    local s=$1 r=$2 d=$3; shift 3
    echo "$DIR/bin/simtwin-twin --backend cuda --reference $W/$r --distorted $W/$d --width ${s%x*} --height ${s#*x} --bitdepth 8 --output $W/out-$RANDOM.json $*"
}
EMU="LD_LIBRARY_PATH=$DIR/lib EMU_CUDA_KERNELS=$DIR/kernels"
GPU="LD_LIBRARY_PATH=$DIR/lib EMU_CUDA_REAL=$REAL"
P=$DIR/bin/parity
bis() { # name A B [extra parity args]
    local name=$1 a=$2 b=$3; shift 3
    "$P" bisect --run "$a" "$b" --types "$DIR/kernels.sig" --timeout 120 --out "$R/$name" "$@" > "$R/$name.stdout" 2>&1
    echo "$name: exit $?" >> "$R/exits.txt"
}
: > "$R/exits.txt"
bis clean-emulated-vs-h200 "$EMU $(twin 576x324 ref.yuv dis.yuv)" "$GPU $(twin 576x324 ref.yuv dis.yuv)" --label-a emulated --label-b h200 --per-frame &
bis clamp-on-h200 "$GPU $(twin 576x324 ref.yuv dis.yuv)" "$GPU $(twin 576x324 ref.yuv dis.yuv --defect clamp-borders)" --label-a h200 --label-b h200-clamp --width 576 &
bis rows-emulated-vs-h200 "$EMU $(twin 576x324 ref.yuv dis.yuv)" "$GPU $(twin 576x324 ref.yuv dis.yuv --defect filter-border-rows)" --label-a emulated --label-b h200-rows &
bis atomic-emulated-vs-h200 "$EMU $(twin 256x256 aref.yuv adis.yuv --features topk --defect atomic-order)" "$GPU $(twin 256x256 aref.yuv adis.yuv --features topk --defect atomic-order)" --label-a emulated --label-b h200 &
wait
# Cost of the trace in pass-through: the same run plain and traced, 3 times interleaved.
{
    echo "pass-through run of the twin (every feature, 576x324, 3 frames):"
    for i in 1 2 3; do
        for mode in plain traced; do
            t0=$(date +%s%N)
            if [ $mode = traced ]; then
                env LD_LIBRARY_PATH="$DIR/lib" EMU_CUDA_REAL="$REAL" EMU_CUDA_TRACE="$W/cost.trace" $(twin 576x324 ref.yuv dis.yuv) > /dev/null 2>&1
            else
                env LD_LIBRARY_PATH="$DIR/lib" EMU_CUDA_REAL="$REAL" $(twin 576x324 ref.yuv dis.yuv) > /dev/null 2>&1
            fi
            echo "$mode $i $(( ($(date +%s%N) - t0) / 1000000 )) ms"
        done
    done
    echo "end record of the last traced run:"
    tail -1 "$W/cost.trace"
} > "$R/cost.txt" 2>&1
{
    echo "# parity bisect on the GPU machine (fixtures' twin)"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    echo
    cat "$R/exits.txt"
    for d in clean-emulated-vs-h200 clamp-on-h200 rows-emulated-vs-h200 atomic-emulated-vs-h200; do
        echo; echo "## $d"; echo; cat "$R/$d.stdout"
    done
    echo; echo "## cost"; echo; cat "$R/cost.txt"
} > "$OUT/summary.md"
rm -rf "$W"
tar czf "$OUT/reports.tar.gz" -C "$R" .
cat "$OUT/summary.md"
