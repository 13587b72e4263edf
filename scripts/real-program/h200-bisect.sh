#!/usr/bin/env bash
# Stage bisect of VMAF CUDA extractors, emulated driver against the real GPU
# (pass-through), on the GPU machine: for each extractor, `parity bisect --run` with
#   A: VMAF on simtwin's emulated libcuda.so.1 (twins of the bundle; --exec ptx: PTX mode)
#   B: VMAF through simtwin's pass-through to the machine's real libcuda.so.1
# names the first launch whose written buffers differ, the buffer and the element.
#
# Needs the bundle of `h200-extractors.sh prepare` with parity added:
#   install -m 755 target/simtwin/bin/parity BUNDLE/bin/parity
#   cp fixtures/kernels.sig BUNDLE/   (not needed for VMAF: its kernels are C++,
#                                           parity reads their types from the symbols)
# On the GPU machine (device tool, carry the bundle):
#   h200-bisect.sh --bundle DIR --out DIR [--size WxH] [--frames N] [--exec twin|ptx]
#                  EXTRACTOR_cuda...
# builds VMAF as h200-extractors.sh does (EXTRACTORS_WORK, NVCC_APPEND_FLAGS apply) and
# writes OUT/EXTRACTOR/{summary.md,summary.json,launches.csv} and OUT/bisect.md.
# Exit: 0 done (divergences are findings); 2 setup error; 77 no GPU.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$ROOT/scripts/lib/gpu.sh"; GPU_SCRIPT=h200-bisect
BUNDLE="" OUT="" SIZE=576x324 FRAMES=2 EXEC=twin EXTS=()
while [ $# -gt 0 ]; do
    case $1 in
        --bundle) BUNDLE=${2:?}; shift ;;
        --out) OUT=${2:?}; shift ;;
        --size) SIZE=${2:?}; shift ;;
        --frames) FRAMES=${2:?}; shift ;;
        --exec) EXEC=${2:?}; shift ;;
        --*) die "unknown option $1" ;;
        *) EXTS+=("$1") ;;
    esac
    shift
done
[ -n "$BUNDLE" ] && [ -n "$OUT" ] && [ ${#EXTS[@]} -gt 0 ] || die "usage: h200-bisect.sh --bundle DIR --out DIR EXTRACTOR_cuda..."
BUNDLE=$(cd "$BUNDLE" 2>/dev/null && pwd) || die "no bundle at $BUNDLE"
for p in bin/fixtures bin/parity lib/libcuda.so.1 twins vmaf/libvmaf; do
    [ -e "$BUNDLE/$p" ] || die "$BUNDLE/$p missing (h200-extractors.sh prepare, then add bin/parity)"
done
case $EXEC in twin|ptx) ;; *) die "--exec twin or ptx" ;; esac
require_gpu
NVCC=$("$ROOT/scripts/nvcc-path") || die "nvcc not found"
export PATH=$(dirname "$NVCC"):$PATH
command -v meson >/dev/null && command -v ninja >/dev/null || die "meson and ninja are needed"
REAL=$(real_libcuda) || exit 2
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || die "cannot create $OUT"
WORK=${EXTRACTORS_WORK:-$ROOT/target/extractors-run}
mkdir -p "$WORK/clips"
W=${SIZE%x*} H=${SIZE#*x}
REF=$WORK/clips/textured-$SIZE.yuv DIS=$WORK/clips/textured-$SIZE-dis.yuv
"$BUNDLE/bin/fixtures" clip --kind textured --width "$W" --height "$H" --frames "$FRAMES" -o "$REF" >/dev/null \
    && "$BUNDLE/bin/fixtures" clip --kind textured --width "$W" --height "$H" --frames "$FRAMES" --distort noise:42:4 -o "$DIS" >/dev/null \
    || die "making the clips failed"
SRC=$WORK/vmaf
[ -d "$SRC/libvmaf" ] || cp -r "$BUNDLE/vmaf" "$SRC" || die "copying VMAF failed"
export CPATH=$BUNDLE/nv-codec-headers/include${CPATH:+:$CPATH}
OPTS=(-Denable_cuda=true -Denable_nvcc=true -Dbuildtype=release -Denable_tests=false -Denable_docs=false -Denable_float=true -Db_lto=false)
command -v nasm >/dev/null || OPTS+=(-Denable_asm=false)
command -v xxd >/dev/null || OPTS+=(-Dbuilt_in_models=false)
t0=$(date +%s)
if [ ! -f "$SRC/libvmaf/build/build.ninja" ]; then
    (cd "$SRC/libvmaf" && meson setup build "${OPTS[@]}") > "$OUT/meson-setup.log" 2>&1 || { tail -20 "$OUT/meson-setup.log"; die "meson setup failed"; }
fi
ninja -C "$SRC/libvmaf/build" tools/vmaf > "$OUT/ninja.log" 2>&1 || { tail -30 "$OUT/ninja.log"; die "VMAF build failed"; }
echo "h200-bisect: VMAF built in $(( $(date +%s) - t0 )) s; real driver $REAL" >&2
VMAF=$SRC/libvmaf/build/tools/vmaf
{
    echo "# Stage bisect: emulated ($EXEC mode) vs H200 (pass-through), $SIZE, $FRAMES frames"
    echo
    echo "| extractor | verdict | first divergent launch (emulated / H200) | buffer | first element | last agreeing |"
    echo "|---|---|---|---|---|---|"
} > "$OUT/bisect.md"
for x in "${EXTS[@]}"; do
    cmd="--reference $REF --distorted $DIS --width $W --height $H --pixel_format 420 --bitdepth 8 --frame_cnt $FRAMES --no_prediction --feature $x --backend cuda --precision max --output $WORK/$x.json --json"
    A="LD_LIBRARY_PATH=$BUNDLE/lib EMU_CUDA_EXEC=$EXEC EMU_CUDA_KERNELS=$BUNDLE/twins $VMAF $cmd"
    B="LD_LIBRARY_PATH=$BUNDLE/lib EMU_CUDA_REAL=$REAL $VMAF $cmd"
    "$BUNDLE/bin/parity" bisect --run "$A" "$B" --label-a emulated --label-b h200 --per-frame --width "$W" --out "$OUT/$x" --timeout 300 > "$OUT/$x.stdout" 2>&1
    rc=$?
    python3 "$ROOT/scripts/lib/bisect_row.py" "$OUT/$x/summary.json" "$x" "$rc" >> "$OUT/bisect.md"
done
cat "$OUT/bisect.md"
exit 0
