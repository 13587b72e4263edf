#!/usr/bin/env bash
# The GPU-machine half of bisecting VMAF CUDA extractors, emulated against the real
# device, with the emulated traces made beforehand on the CPU machine (so the device
# does no emulation and no build):
#
# Here: build VMAF (meson -Denable_cuda=true -Denable_nvcc=true, the PyPI nvcc; sm_90
# SASS is what the H200 runs) and its twins (scripts/real-program/build-twins.py), then
# lay out DIR = .dev/NAME as
#   DIR/bin/{parity,fixtures}  DIR/lib/libcuda.so.1 (simtwin's)
#   DIR/fork/vmaf  DIR/fork/lib/libvmaf.so*
#   DIR/fork/emu/X.trace: EMU_CUDA_TRACE of `vmaf ... --feature X --backend cuda` on the
#   emulated driver with the twins, on the clips made below (textured 576x324, FRAMES
#   frames, noise:42:4), for each extractor X.
# On the GPU machine (device tool, from the repository root, carry DIR):
#   scripts/real-program/h200-bisect-passthrough.sh DIR OUT X...
# runs each X through the pass-through with EMU_CUDA_TRACE (and once plain, for the
# cost), bisects it against emu/X.trace, and runs it again dumping the first divergent
# launch (EMU_CUDA_TRACE_DUMP); OUT/fork.tar.gz holds every trace, dump and report.
# Back here: run the emulated side again with EMU_CUDA_TRACE_DUMP set to the divergent
# launch of A, then `parity bisect A.dump.trace B.dump.trace --types SIG` gives the element
# (reports/reference/h200/bisect-vmaf-fork/README.md).
# Environment: FRAMES (default 2), REAL_DRIVER (default: the machine's real libcuda.so.1,
# see real_libcuda in scripts/lib/gpu.sh; a stand-in from scripts/h200/make-standin tests
# this script without a GPU).
# Exit: 0 done (divergences are findings); 2 setup error; 77 no GPU.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$ROOT/scripts/lib/gpu.sh"; GPU_SCRIPT=h200-bisect-passthrough
[ $# -ge 3 ] || die "usage: h200-bisect-passthrough.sh DIR OUT EXTRACTOR..."
B=$(cd "$1" 2>/dev/null && pwd) || die "no bundle at $1"
F=$B/fork
OUT=$2; shift 2
for p in bin/parity bin/fixtures lib/libcuda.so.1 fork/vmaf; do
    [ -e "$B/$p" ] || die "$B/$p missing (lay DIR out as this script's header says)"
done
for x in "$@"; do
    [ -f "$F/emu/$x.trace" ] || die "$F/emu/$x.trace missing (the emulated trace of $x, made here first)"
done
if [ -n "${REAL_DRIVER:-}" ]; then
    REAL=$REAL_DRIVER
else
    require_gpu
    REAL=$(real_libcuda) || exit 2
fi
mkdir -p "$OUT/r" && OUT=$(cd "$OUT" && pwd) || die "cannot create $OUT"
W=576 H=324 N=${FRAMES:-2}
T=$(mktemp -d)
"$B/bin/fixtures" clip --kind textured --width $W --height $H --frames "$N" -o "$T/ref.yuv" >/dev/null \
    && "$B/bin/fixtures" clip --kind textured --width $W --height $H --frames "$N" --distort noise:42:4 -o "$T/dis.yuv" >/dev/null \
    || die "making the clips failed"
vmaf() { # extractor output [env...]
    local x=$1 out=$2; shift 2
    env LD_LIBRARY_PATH="$B/lib:$F/lib" EMU_CUDA_REAL="$REAL" "$@" \
        "$F/vmaf" --reference "$T/ref.yuv" --distorted "$T/dis.yuv" --width $W --height $H --pixel_format 420 --bitdepth 8 \
        --frame_cnt "$N" --no_prediction --feature "$x" --backend cuda --precision max --json --output "$out"
}
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
for x in "$@"; do
    t0=$(date +%s%N)
    vmaf "$x" "$OUT/r/$x.json" EMU_CUDA_TRACE="$OUT/r/$x.trace" > "$OUT/r/$x.log" 2>&1
    rc=$?
    echo "$x traced run: $(ms_since "$t0") ms, exit $rc" >> "$OUT/r/times.txt"
    t0=$(date +%s%N)
    vmaf "$x" "$T/plain.json" > /dev/null 2>&1
    echo "$x plain run: $(ms_since "$t0") ms" >> "$OUT/r/times.txt"
    "$B/bin/parity" bisect "$F/emu/$x.trace" "$OUT/r/$x.trace" --label-a emulated --label-b h200 --out "$OUT/r/bisect-$x" \
        > "$OUT/r/bisect-$x.txt" 2>&1
    nb=$(python3 "$ROOT/scripts/lib/bisect_first_b.py" "$OUT/r/bisect-$x/summary.json")
    [ -n "$nb" ] && vmaf "$x" "$OUT/r/$x.json" EMU_CUDA_TRACE="$OUT/r/$x.dump.trace" EMU_CUDA_TRACE_DUMP="$nb" > "$OUT/r/$x.log" 2>&1
    echo "$x: first divergent B event: ${nb:-none}" >> "$OUT/r/times.txt"
done
rm -rf "$T"
cat "$OUT/r/times.txt"
for x in "$@"; do echo "== $x"; cat "$OUT/r/bisect-$x.txt"; done
tar czf "$OUT/fork.tar.gz" -C "$OUT" r && rm -rf "$OUT/r"
