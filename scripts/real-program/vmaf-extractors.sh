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
#          [--cuda-flags F] [--cpu-flags F] EXTRACTOR_cuda...
#   --clips DIR       holds textured-WxH.yuv and textured-WxH-dis.yuv (8-bit 4:2:0)
#   --emulated-lib    the directory of simtwin's libcuda.so.1 (default target/simtwin/lib)
#   --real LIBCUDA    also run on the real driver (the loader's default libcuda.so.1 is used;
#                     the path is recorded); without it, emulated against CPU only
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

VMAF="" TWINS="" CLIPS="" SIZE="" FRAMES="" OUT="" EMU=$ROOT/target/simtwin/lib REAL=""
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
        --cuda-flags) CUDA_FLAGS=${2?}; shift ;;
        --cpu-flags) CPU_FLAGS=${2?}; shift ;;
        --*) die "unknown option $1" ;;
        *) EXTS+=("$1") ;;
    esac
    shift
done
[ -x "$VMAF" ] || die "--vmaf: $VMAF is not an executable"
[ -d "$TWINS" ] || die "--twins: $TWINS is not a directory"
[[ $SIZE =~ ^([0-9]+)x([0-9]+)$ ]] || die "--size takes WxH"
W=${BASH_REMATCH[1]} H=${BASH_REMATCH[2]}
[[ $FRAMES =~ ^[0-9]+$ ]] && [ "$FRAMES" -ge 1 ] || die "--frames takes a count"
REF=$CLIPS/textured-$SIZE.yuv DIS=$CLIPS/textured-$SIZE-dis.yuv
[ -f "$REF" ] && [ -f "$DIS" ] || die "no $REF / $DIS"
[ -e "$EMU/libcuda.so.1" ] || die "no emulated libcuda.so.1 in $EMU"
[ -z "$REAL" ] || [ -e "$REAL" ] || die "--real: $REAL not found"
[ ${#EXTS[@]} -gt 0 ] || die "name at least one CUDA extractor (e.g. psnr_cuda)"
mkdir -p "$OUT" || die "cannot create $OUT"
TWINS=$(cd "$TWINS" && pwd) EMU=$(cd "$EMU" && pwd)

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
    echo "$rc $(python3 -c "print(round($t1 - $t0, 3))")" > "$OUT/$side/$e.status"
    echo "vmaf-extractors: $side $e: exit $rc" >&2
}
mkdir -p "$OUT"/{cpu,emulated,real}
for e in "${EXTS[@]}"; do
    run cpu "${e%_cuda}" "$CPU_FLAGS"
    run emulated "$e" "$CUDA_FLAGS" LD_LIBRARY_PATH="$EMU${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        EMU_CUDA_KERNELS="$TWINS" EMU_CUDA_COUNTS="$OUT/emulated/$e.counts.json"
    [ -n "$REAL" ] && run real "$e" "$CUDA_FLAGS"
done
{
    echo "vmaf: $VMAF ($("$VMAF" --version 2>&1 | tail -1))"
    echo "clips: $REF $DIS ($SIZE, $FRAMES frames)"
    echo "emulated: $EMU/libcuda.so.1, twins $TWINS"
    echo "real: ${REAL:-none}"
    echo "flags: cuda '$CUDA_FLAGS', cpu '$CPU_FLAGS'"
} > "$OUT/provenance.txt"
python3 "$HERE/compare-extractors.py" --out "$OUT" ${REAL:+--real} "${EXTS[@]}"
