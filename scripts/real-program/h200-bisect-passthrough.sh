#!/usr/bin/env bash
# The GPU-machine half of bisecting VMAF CUDA extractors, emulated against the real
# device, with the emulated traces made beforehand on the CPU machine (so the device
# does no emulation and no build):
#
# Here: build VMAF (meson -Denable_cuda=true -Denable_nvcc=true, the PyPI nvcc; sm_90
# SASS is what the H200 runs) and its twins (scripts/real-program/build-twins.py), then
# lay out DIR = .dev/NAME as
#   DIR/bin/{parity,fixtures}  DIR/lib/libcuda.so.1 (simtwin's)
#   DIR/fork/vmaf  DIR/fork/lib/libvmaf.so*  DIR/fork/device.sh (this script)
#   DIR/fork/emu/X.trace: EMU_CUDA_TRACE of `vmaf ... --feature X --backend cuda` on the
#   emulated driver with the twins, on the clips made below (textured 576x324, FRAMES
#   frames, noise:42:4), for each extractor X.
# On the GPU machine (device tool, carry DIR): DIR/fork/device.sh OUT X...
#   runs each X through the pass-through with EMU_CUDA_TRACE (and once plain, for the
#   cost), bisects it against emu/X.trace, and runs it again dumping the first divergent
#   launch (EMU_CUDA_TRACE_DUMP); OUT/fork.tar.gz holds every trace, dump and report.
# Back here: run the emulated side again with EMU_CUDA_TRACE_DUMP set to the divergent
# launch of A, then `parity bisect A.dump.trace B.dump.trace --types SIG` gives the element
# (reports/reference/h200/bisect-vmaf-fork/README.md).
# Environment: FRAMES (default 2), REAL_DRIVER (default: the loader's libcuda.so.1; a
# stand-in from scripts/h200/make-standin tests this script without a GPU).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); B=$HERE/..
OUT=$1; shift
mkdir -p "$OUT/r"
REAL=${REAL_DRIVER:-}; [ -n "$REAL" ] || REAL=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 .*x86-64/ {print $NF; exit}')
W=576 H=324 N=${FRAMES:-2}
T=$(mktemp -d)
$B/bin/fixtures clip --kind textured --width $W --height $H --frames $N -o $T/ref.yuv >/dev/null
$B/bin/fixtures clip --kind textured --width $W --height $H --frames $N --distort noise:42:4 -o $T/dis.yuv >/dev/null
run() { # extractor trace [dump]
    env LD_LIBRARY_PATH=$B/lib:$HERE/lib EMU_CUDA_REAL=$REAL EMU_CUDA_TRACE=$2 ${3:+EMU_CUDA_TRACE_DUMP=$3} \
        $HERE/vmaf --reference $T/ref.yuv --distorted $T/dis.yuv --width $W --height $H --pixel_format 420 --bitdepth 8 \
        --frame_cnt $N --no_prediction --feature $1 --backend cuda --precision max --json --output $OUT/r/$1.json > $OUT/r/$1.log 2>&1
}
for x in "$@"; do
    t0=$(date +%s%N); run $x $OUT/r/$x.trace; rc=$?; echo "$x traced run: $(( ($(date +%s%N) - t0) / 1000000 )) ms, exit $rc" >> $OUT/r/times.txt
    t0=$(date +%s%N)
    env LD_LIBRARY_PATH=$B/lib:$HERE/lib EMU_CUDA_REAL=$REAL $HERE/vmaf --reference $T/ref.yuv --distorted $T/dis.yuv --width $W --height $H --pixel_format 420 --bitdepth 8 \
        --frame_cnt $N --no_prediction --feature $x --backend cuda --precision max --json --output $T/plain.json > /dev/null 2>&1
    echo "$x plain run: $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> $OUT/r/times.txt
    $B/bin/parity bisect $HERE/emu/$x.trace $OUT/r/$x.trace --label-a emulated --label-b h200 --out $OUT/r/bisect-$x > $OUT/r/bisect-$x.txt 2>&1
    nb=$(python3 -c "import json,sys; s=json.load(open('$OUT/r/bisect-$x/summary.json')); f=s.get('first_divergence') or {}; b=f.get('b') or {}; print(b['launch'] if 'launch' in b else ('c%d' % b['copy'] if 'copy' in b else ''))" 2>/dev/null)
    [ -n "$nb" ] && run $x $OUT/r/$x.dump.trace $nb
    echo "$x: first divergent B event: ${nb:-none}" >> $OUT/r/times.txt
done
cat $OUT/r/times.txt
for x in "$@"; do echo "== $x"; cat $OUT/r/bisect-$x.txt; done
tar czf $OUT/fork.tar.gz -C $OUT r && rm -rf $OUT/r
