#!/usr/bin/env bash
# Every CUDA extractor of a VMAF tree on a real GPU, beside the CPU and simtwin's emulated
# driver (scripts/real-program/vmaf-extractors.sh run there, with --real). Two steps:
#
# Here, after building that VMAF tree and its twins (meson compile commands ->
# scripts/real-program/build-twins.py):
#   h200-extractors.sh prepare --vmaf-src DIR --twins DIR [--bundle DIR]
#     DIR/libvmaf without its build, the model JSON files, the patched nv-codec-headers
#     (target/real-program/nv-codec-headers, made by scripts/real-program-check), stripped
#     twins, fixtures and emulated libcuda.so.1. Default bundle: target/extractors-device.
#
# On the GPU machine (device tool: carry the bundle):
#   h200-extractors.sh run --bundle DIR --out DIR [--size WxH] [--frames N]
#       [--cuda-flags F] [--cpu-flags F] EXTRACTOR_cuda...
#     makes the textured clip pair (scripts/real-program-check's recipe), builds VMAF with
#     -Denable_cuda=true -Denable_nvcc=true and the machine's nvcc, then runs
#     vmaf-extractors.sh --real on the loader's libcuda.so.1; OUT gets summary.md,
#     summary.json and extractors.tar.gz (every output, counters file and log).
#     EXTRACTORS_WORK: the build and results directory (default target/extractors-run);
#     NVCC_APPEND_FLAGS (nvcc's own variable) reaches the VMAF build, e.g. --fmad=false.
# Exit: 0 done (differences are findings); 1 some run failed; 2 setup error; 77 no GPU.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$ROOT/scripts/lib/gpu.sh"; GPU_SCRIPT=h200-extractors
MODE=${1:-}; shift || true

if [ "$MODE" = prepare ]; then
    SRC="" TW="" BUNDLE=$ROOT/target/extractors-device
    while [ $# -gt 0 ]; do
        case $1 in
            --vmaf-src) SRC=${2:?}; shift ;;
            --twins) TW=${2:?}; shift ;;
            --bundle) BUNDLE=${2:?}; shift ;;
            *) die "prepare: unknown argument $1" ;;
        esac
        shift
    done
    NVH=$ROOT/target/real-program/nv-codec-headers
    for p in "$SRC/libvmaf/meson.build" "$TW" "$NVH/include/ffnvcodec/dynlink_loader.h" \
             "$ROOT/target/simtwin/bin/fixtures" "$ROOT/target/simtwin/lib/libcuda.so.1"; do
        [ -e "$p" ] || die "prepare: $p missing (scripts/build; scripts/real-program-check for nv-codec-headers)"
    done
    rm -rf "$BUNDLE" && mkdir -p "$BUNDLE"/{vmaf,bin,lib,twins} || die "prepare: cannot create $BUNDLE"
    (cd "$SRC" && tar cf - --exclude=libvmaf/build libvmaf) | (cd "$BUNDLE/vmaf" && tar xf -) || die "prepare: copying libvmaf failed"
    (cd "$SRC" && find model -name '*.json' -print0 | tar cf - --null -T -) | (cd "$BUNDLE/vmaf" && tar xf -) || die "prepare: copying the models failed"
    cp -r "$NVH" "$BUNDLE/nv-codec-headers"
    for f in "$TW"/*; do
        case $f in
            *.so|*.so.*) strip -o "$BUNDLE/twins/$(basename "$f")" "$f" ;;
            *) cp "$f" "$BUNDLE/twins/" ;;
        esac
    done
    strip -o "$BUNDLE/bin/fixtures" "$ROOT/target/simtwin/bin/fixtures"
    bundle_driver "$BUNDLE"
    (cd "$ROOT" && git rev-parse HEAD) > "$BUNDLE/simtwin-commit" 2>/dev/null
    note "bundle: $BUNDLE ($(du -sh "$BUNDLE" | cut -f1))"
    exit 0
fi
[ "$MODE" = run ] || die "usage: h200-extractors.sh prepare|run ... (see the header)"

BUNDLE="" OUT="" SIZE=576x324 FRAMES=8 FLAGS=()
EXTS=()
while [ $# -gt 0 ]; do
    case $1 in
        --bundle) BUNDLE=${2:?}; shift ;;
        --out) OUT=${2:?}; shift ;;
        --size) SIZE=${2:?}; shift ;;
        --frames) FRAMES=${2:?}; shift ;;
        --cuda-flags|--cpu-flags) FLAGS+=("$1" "${2?}"); shift ;;
        --*) die "run: unknown option $1" ;;
        *) EXTS+=("$1") ;;
    esac
    shift
done
[ -n "$BUNDLE" ] && [ -n "$OUT" ] || die "run: --bundle and --out are required"
BUNDLE=$(cd "$BUNDLE" 2>/dev/null && pwd) || die "run: no bundle at $BUNDLE"
[ -x "$BUNDLE/bin/fixtures" ] || die "run: $BUNDLE is not a bundle made by 'prepare'"
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || die "run: cannot create $OUT"
require_gpu
NVCC=$("$ROOT/scripts/nvcc-path") || die "nvcc not found"
export PATH=$(dirname "$NVCC"):$PATH
command -v meson >/dev/null && command -v ninja >/dev/null || die "meson and ninja are needed"
REAL=$(real_libcuda) || exit 2
WORK=${EXTRACTORS_WORK:-$ROOT/target/extractors-run}
mkdir -p "$WORK/clips"
W=${SIZE%x*} H=${SIZE#*x}
"$BUNDLE/bin/fixtures" clip --kind textured --width "$W" --height "$H" --frames "$FRAMES" -o "$WORK/clips/textured-$SIZE.yuv" >/dev/null \
    && "$BUNDLE/bin/fixtures" clip --kind textured --width "$W" --height "$H" --frames "$FRAMES" --distort noise:42:4 \
        -o "$WORK/clips/textured-$SIZE-dis.yuv" >/dev/null || die "making the clips failed"
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
note "VMAF built in $(( $(date +%s) - t0 )) s; nvcc $("$NVCC" --version | tail -1); real driver $REAL"
bash "$HERE/vmaf-extractors.sh" --vmaf "$SRC/libvmaf/build/tools/vmaf" --twins "$BUNDLE/twins" --clips "$WORK/clips" \
    --size "$SIZE" --frames "$FRAMES" --out "$WORK/results" --emulated-lib "$BUNDLE/lib" --real "$REAL" "${FLAGS[@]}" "${EXTS[@]}"
rc=$?
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$WORK/results/gpu.txt" 2>&1
cp "$WORK/results/summary.md" "$WORK/results/summary.json" "$OUT/" 2>/dev/null
tar czf "$OUT/extractors.tar.gz" -C "$WORK" results
exit $rc
