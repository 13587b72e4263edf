#!/usr/bin/env bash
# Every CUDA extractor of a VMAF build, one by one: the CPU extractor, the CUDA extractor on
# simtwin's emulated driver and, where a real driver is given, the CUDA extractor on the
# real device, on the same clip pair; then one table (compare-extractors.py): did each run,
# its launches and hazards (emulated), frames identical emulated vs real, and the largest
# relative difference from the CPU of each side.
#
# For VMAF trees whose CUDA extractors are many (a fork with 17: psnr_cuda, cambi_cuda,
# ssimulacra2_cuda, ...); scripts/real-program-check does upstream's three through parity.
#
# Usage: scripts/real-program/vmaf-extractors.sh --vmaf BIN --twins DIR --clips DIR
#          --size WxH --frames N --out DIR [--emulated-lib DIR] [--real LIBCUDA]
#          [--mode twin|ptx] [--ptx-cache DIR] [--h200 RECORD]
#          [--cuda-flags F] [--cpu-flags F] EXTRACTOR_cuda...
#   --clips DIR       holds textured-WxH.yuv and textured-WxH-dis.yuv (8-bit 4:2:0)
#   --emulated-lib    the directory of simtwin's libcuda.so.1 (default target/simtwin/lib)
#   --real LIBCUDA    also run on the real driver (the loader's default libcuda.so.1 is used;
#                     the path is recorded); without it, emulated against CPU only
#   --mode ptx        the emulated side runs the images' own PTX (EMU_CUDA_EXEC=ptx,
#                     EMU_CUDA_KERNELS unset; no --twins needed), translated and compiled at
#                     load into --ptx-cache (SIMTWIN_CACHE_DIR; default OUT/ptx-cache, the
#                     generated .cpp beside each library); the table then lists each
#                     extractor's modules and whether they are device-exact
#   --h200 RECORD     the real side from a record of h200-extractors.sh run instead of a
#                     run here (its extractors.tar.gz, or a directory holding results/real/):
#                     its outputs, made on the device from the same clips, are compared
#                     with the emulated ones frame by frame, bit for bit
#   --cuda-flags/--cpu-flags  how the CLI selects the backend (default, a fork with
#                     --backend: "--backend cuda --precision max" / "--backend cpu --precision max";
#                     upstream: --gpumask 0 / --gpumask -1)
# The CPU extractor of X_cuda is X. Each run has a 900 s limit.
# Exit: 0 every side of every extractor ran (differences are findings); 1 some run failed;
# 2 setup error.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
die() { echo "vmaf-extractors: $*" >&2; exit 2; }

VMAF="" TWINS="" CLIPS="" SIZE="" FRAMES="" OUT="" EMU=$ROOT/target/simtwin/lib REAL="" MODE=twin PTX_CACHE="" H200=""
CUDA_FLAGS="--backend cuda --precision max" CPU_FLAGS="--backend cpu --precision max" EXTS=()
while [ $# -gt 0 ]; do
    case $1 in
        --vmaf) VMAF=${2:?}; shift ;;
        --twins) TWINS=${2:?}; shift ;;
        --clips) CLIPS=${2:?}; shift ;;
        --size) SIZE=${2:?}; shift ;;
        --frames) FRAMES=${2:?}; shift ;;
        --out) OUT=${2:?}; shift ;;
        --emulated-lib) EMU=${2:?}; shift ;;
        --real) REAL=${2:?}; shift ;;
        --mode) MODE=${2:?}; shift ;;
        --ptx-cache) PTX_CACHE=${2:?}; shift ;;
        --h200) H200=${2:?}; shift ;;
        --cuda-flags) CUDA_FLAGS=${2?}; shift ;;
        --cpu-flags) CPU_FLAGS=${2?}; shift ;;
        --*) die "unknown option $1" ;;
        *) EXTS+=("$1") ;;
    esac
    shift
done
[ -x "$VMAF" ] || die "--vmaf: $VMAF is not an executable"
case $MODE in
    twin) [ -d "$TWINS" ] || die "--twins: $TWINS is not a directory" ;;
    ptx) [ -z "$TWINS" ] || die "--twins makes no sense with --mode ptx (no twin is used)" ;;
    *) die "--mode: '$MODE' is neither twin nor ptx" ;;
esac
[ -z "$PTX_CACHE" ] || [ "$MODE" = ptx ] || die "--ptx-cache only makes sense with --mode ptx"
[ -z "$H200" ] || [ -z "$REAL" ] || die "--h200 and --real both name the real side: give one"
[ -z "$H200" ] || [ -e "$H200" ] || die "--h200: $H200 not found"
[[ $SIZE =~ ^([0-9]+)x([0-9]+)$ ]] || die "--size takes WxH"
W=${BASH_REMATCH[1]} H=${BASH_REMATCH[2]}
[[ $FRAMES =~ ^[0-9]+$ ]] && [ "$FRAMES" -ge 1 ] || die "--frames takes a count"
REF=$CLIPS/textured-$SIZE.yuv DIS=$CLIPS/textured-$SIZE-dis.yuv
[ -f "$REF" ] && [ -f "$DIS" ] || die "no $REF / $DIS"
[ -e "$EMU/libcuda.so.1" ] || die "no emulated libcuda.so.1 in $EMU"
[ -z "$REAL" ] || [ -e "$REAL" ] || die "--real: $REAL not found"
[ ${#EXTS[@]} -gt 0 ] || die "name at least one CUDA extractor (e.g. psnr_cuda)"
mkdir -p "$OUT" || die "cannot create $OUT"
EMU=$(cd "$EMU" && pwd)
EMU_ENV=(LD_LIBRARY_PATH="$EMU${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
if [ "$MODE" = ptx ]; then
    PTX_CACHE=${PTX_CACHE:-$OUT/ptx-cache}
    mkdir -p "$PTX_CACHE" && PTX_CACHE=$(cd "$PTX_CACHE" && pwd) || die "cannot create $PTX_CACHE"
    # env's -u must come before its assignments.
    EMU_ENV=(-u EMU_CUDA_KERNELS "${EMU_ENV[@]}" EMU_CUDA_EXEC=ptx SIMTWIN_CACHE_DIR="$PTX_CACHE")
else
    TWINS=$(cd "$TWINS" && pwd)
    EMU_ENV+=(EMU_CUDA_KERNELS="$TWINS")
fi
H200_DIR=""
if [ -n "$H200" ]; then
    if [ -d "$H200" ]; then H200_DIR=$(cd "$H200" && pwd); else
        H200_DIR=$OUT/h200-record && rm -rf "$H200_DIR" && mkdir -p "$H200_DIR" && tar xzf "$H200" -C "$H200_DIR" || die "--h200: cannot unpack $H200"
    fi
    [ -d "$H200_DIR/results/real" ] || die "--h200: $H200 holds no results/real/ (a record of h200-extractors.sh run)"
fi

run() { # run SIDE EXTRACTOR FLAGS [ENV...]: one CLI run, its exit status and seconds in SIDE.status
    local side=$1 e=$2 flags=$3; shift 3
    local t0 t1 rc
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    env "$@" timeout 900 "$VMAF" --reference "$REF" --distorted "$DIS" --width "$W" --height "$H" \
        --pixel_format 420 --bitdepth 8 --frame_cnt "$FRAMES" --no_prediction --feature "$e" $flags \
        --json --output "$OUT/$side/$e.json" > "$OUT/$side/$e.log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    echo "$rc $(python3 "$ROOT/scripts/lib/script_tools.py" seconds "$t0" "$t1")" > "$OUT/$side/$e.status"
    echo "vmaf-extractors: $side $e: exit $rc" >&2
}
mkdir -p "$OUT"/{cpu,emulated,real}
for e in "${EXTS[@]}"; do
    run cpu "${e%_cuda}" "$CPU_FLAGS"
    run emulated "$e" "$CUDA_FLAGS" "${EMU_ENV[@]}" EMU_CUDA_COUNTS="$OUT/emulated/$e.counts.json"
    if [ -n "$REAL" ]; then
        run real "$e" "$CUDA_FLAGS"
    elif [ -n "$H200_DIR" ]; then
        for x in json status log; do
            [ -f "$H200_DIR/results/real/$e.$x" ] && cp "$H200_DIR/results/real/$e.$x" "$OUT/real/"
        done
        [ -f "$OUT/real/$e.status" ] || echo "vmaf-extractors: the H200 record has no real/$e.status" >&2
    fi
done
{
    echo "vmaf: $VMAF ($("$VMAF" --version 2>&1 | tail -1))"
    echo "clips: $REF $DIS ($SIZE, $FRAMES frames)"
    if [ "$MODE" = ptx ]; then echo "emulated: $EMU/libcuda.so.1, PTX mode (no twins), cache $PTX_CACHE"; else echo "emulated: $EMU/libcuda.so.1, twins $TWINS"; fi
    if [ -n "$H200_DIR" ]; then echo "real: the record $H200 ($(cat "$H200_DIR/results/gpu.txt" 2>/dev/null); $(head -1 "$H200_DIR/results/provenance.txt" 2>/dev/null))"; else echo "real: ${REAL:-none}"; fi
    echo "flags: cuda '$CUDA_FLAGS', cpu '$CPU_FLAGS'"
} > "$OUT/provenance.txt"
real_flag=(); { [ -n "$REAL" ] || [ -n "$H200_DIR" ]; } && real_flag=(--real)
python3 "$HERE/compare-extractors.py" --out "$OUT" "${real_flag[@]}" "${EXTS[@]}"
