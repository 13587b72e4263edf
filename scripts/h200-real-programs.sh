#!/usr/bin/env bash
# Upstream VMAF's CUDA extractors on a real GPU, beside its CPU extractors, on the same
# clips as scripts/real-program-check, so that CPU / emulated / real-device scores can be
# compared frame by frame. Two steps:
#
# Here (after a scripts/real-program-check run):
#   scripts/h200-real-programs.sh prepare [--work target/real-program] [--bundle DIR]
#     assembles DIR (default target/real-program/device, about 20 MB): the VMAF sources the
#     check built (libvmaf/ without its build, the model JSON files), the patched
#     nv-codec-headers, stripped copies of fixtures, parity and the emulated libcuda.so.1,
#     the host twins, the clip recipe with SHA-256s, and the check's frame counts.
#
# On the GPU machine (nvcc, meson, ninja, python3; no network, no cargo), with the bundle
# carried (device tool: carry ["target/real-program/device"]):
#   scripts/h200-real-programs.sh run --bundle target/real-program/device --out "$OUT"
#     [--work DIR] [--emulated] [--no-bench] [--no-passthrough]
#   1. makes the clips with the bundle's fixtures and checks their SHA-256;
#   2. builds VMAF with -Denable_cuda=true -Denable_nvcc=true using the machine's own nvcc
#      (VMAF's gencode list includes sm_90) and the bundle's nv-codec-headers;
#   3. per size and extractor (adm, vif, motion, the default model): the CPU
#      (--gpumask -1) and the real device (--gpumask 0), full clips as in the check;
#      unless --no-passthrough, the CUDA run again through simtwin's pass-through
#      (LD_LIBRARY_PATH=bundle/lib, EMU_CUDA_REAL=the real libcuda.so.1) for call,
#      transfer and launch counters; with --emulated, also on the emulated driver (slow);
#   4. parity diff tables: cpu vs cuda-real (the check's tolerance table), cuda-real vs
#      cuda-passthrough and cuda-real vs cuda-emulated (exact; without --emulated, the
#      emulated outputs the check made, carried in the bundle), and motion_cuda against
#      scripts/real-program/motion-cuda-ref.c;
#   5. unless --no-bench: ms per frame, CPU and real device, (t(N) - t(2)) / (N - 2),
#      median of 3, N = the check's CPU bench N;
#   6. writes to --out: summary.md (the tables), real-programs.tar.gz (every output JSON,
#      counters, diff summaries, logs, provenance) and run.log: three files, as the
#      device tool brings back at most 8.
#
# Exit: 0 done (differences are reported, not failures); 2 setup error (tool missing,
# build failed, clip checksum mismatch); 77 no GPU.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/scripts/lib/gpu.sh"; GPU_SCRIPT=h200-real-programs

MODE=${1:-}; shift || true
case "$MODE" in
    prepare|run) ;;
    -h|--help|"") sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; [ -n "$MODE" ]; exit $? ;;
    *) die "unknown mode '$MODE' (prepare or run; see --help)" ;;
esac

if [ "$MODE" = prepare ]; then
    WORK=$ROOT/target/real-program
    BUNDLE=""
    while [ $# -gt 0 ]; do
        case "$1" in
            --work) WORK=${2:?}; shift 2 ;;
            --bundle) BUNDLE=${2:?}; shift 2 ;;
            *) die "prepare: unknown argument $1" ;;
        esac
    done
    BUNDLE=${BUNDLE:-$WORK/device}
    REPORT=$ROOT/reports/real-programs
    for p in "$WORK/vmaf/libvmaf/meson.build" "$WORK/nv-codec-headers/include/ffnvcodec/dynlink_loader.h" "$WORK/twins" \
             "$ROOT/target/simtwin/bin/fixtures" "$ROOT/target/simtwin/bin/parity" "$ROOT/target/simtwin/lib/libcuda.so.1"; do
        [ -e "$p" ] || die "prepare: $p missing: run scripts/build and scripts/real-program-check first"
    done
    [ -f "$REPORT/build/clips.txt" ] && [ -f "$REPORT/summary.json" ] || die "prepare: no check results in $REPORT (run scripts/real-program-check first, with the default --out)"
    rm -rf "$BUNDLE" && mkdir -p "$BUNDLE"/{vmaf,bin,lib} || die "prepare: cannot create $BUNDLE"
    (cd "$WORK/vmaf" && tar cf - --exclude=libvmaf/build libvmaf) | (cd "$BUNDLE/vmaf" && tar xf -) || die "prepare: copying libvmaf failed"
    (cd "$WORK/vmaf" && find model -name '*.json' -print0 | tar cf - --null -T -) | (cd "$BUNDLE/vmaf" && tar xf -) || die "prepare: copying the models failed"
    cp -r "$WORK/nv-codec-headers" "$BUNDLE/nv-codec-headers"
    cp -r "$WORK/twins" "$BUNDLE/twins"
    strip -o "$BUNDLE/bin/fixtures" "$ROOT/target/simtwin/bin/fixtures"
    strip -o "$BUNDLE/bin/parity" "$ROOT/target/simtwin/bin/parity"
    bundle_driver "$BUNDLE"
    cp "$REPORT/build/clips.txt" "$BUNDLE/clips.txt"
    # The check's emulated outputs, so the device run can put real and emulated side by side.
    for f in "$REPORT"/frames/*/*/cuda-emulated.json; do
        [ -f "$f" ] || continue
        e=$(basename "$(dirname "$f")"); s=$(basename "$(dirname "$(dirname "$f")")")
        mkdir -p "$BUNDLE/emulated-here/$s" && cp "$f" "$BUNDLE/emulated-here/$s/$e.json"
    done
    python3 "$ROOT/scripts/lib/real_programs_config.py" "$REPORT/summary.json" "$BUNDLE/config" || die "prepare: reading the check's summary failed"
    (cd "$ROOT" && git rev-parse HEAD) > "$BUNDLE/simtwin-commit" 2>/dev/null
    note "bundle: $BUNDLE ($(du -sh "$BUNDLE" | cut -f1)); on the device: scripts/h200-real-programs.sh run --bundle ${BUNDLE#"$ROOT"/} --out \"\$OUT\" (carry [\"${BUNDLE#"$ROOT"/}\"])"
    exit 0
fi

# ---- run (on the GPU machine) --------------------------------------------------------------
BUNDLE=""; OUTDIR=""; WORK=""; EMULATED=0; BENCH=1; PASSTHROUGH=1
while [ $# -gt 0 ]; do
    case "$1" in
        --bundle) BUNDLE=${2:?}; shift 2 ;;
        --out) OUTDIR=${2:?}; shift 2 ;;
        --work) WORK=${2:?}; shift 2 ;;
        --emulated) EMULATED=1; shift ;;
        --no-bench) BENCH=0; shift ;;
        --no-passthrough) PASSTHROUGH=0; shift ;;
        *) die "run: unknown argument $1" ;;
    esac
done
[ -n "$BUNDLE" ] && [ -n "$OUTDIR" ] || die "run: usage: scripts/h200-real-programs.sh run --bundle DIR --out DIR"
BUNDLE=$(cd "$BUNDLE" 2>/dev/null && pwd) || die "run: no bundle at $BUNDLE"
[ -f "$BUNDLE/config" ] || die "run: $BUNDLE is not a bundle made by 'prepare'"
. "$BUNDLE/config"
mkdir -p "$OUTDIR" || die "run: cannot create $OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
WORK=${WORK:-$ROOT/target/real-program/device-run}
mkdir -p "$WORK" && WORK=$(cd "$WORK" && pwd)
RES=$WORK/results
rm -rf "$RES" && mkdir -p "$RES"
exec > >(tee "$OUTDIR/run.log") 2>&1
spec_get() { local kv; for kv in ${1//,/ }; do [ "${kv%%=*}" = "$2" ] && { echo "${kv#*=}"; return 0; }; done; return 1; }

require_gpu "$RES/nvidia-smi.txt"
NVCC=$("$ROOT/scripts/nvcc-path") || die "nvcc not found"
export PATH=$(dirname "$NVCC"):$PATH
command -v bin2c >/dev/null || die "bin2c not found next to $NVCC"
command -v python3 >/dev/null || die "python3 not found"
# meson and ninja: on PATH, else the Python packages of the same names (pip installs them
# into a virtual environment whose bin/ may not be on PATH).
if ! command -v ninja >/dev/null; then
    nb=$(python3 "$ROOT/scripts/lib/script_tools.py" ninja-bin 2>/dev/null) \
        && [ -x "$nb/ninja" ] && export PATH=$nb:$PATH || die "ninja not found (neither on PATH nor as the Python package)"
fi
if ! command -v meson >/dev/null; then
    python3 "$ROOT/scripts/lib/script_tools.py" has-module mesonbuild 2>/dev/null || die "meson not found (neither on PATH nor as the Python package)"
    mkdir -p "$WORK/bin" && printf '#!/bin/sh\nexec python3 -m mesonbuild.mesonmain "$@"\n' > "$WORK/bin/meson" && chmod +x "$WORK/bin/meson"
    export PATH=$WORK/bin:$PATH
fi
REAL_LIBCUDA=$(real_libcuda) || exit 2
note "GPU: $(head -1 "$RES/nvidia-smi.txt"); nvcc: $("$NVCC" --version | tail -1); real driver: $REAL_LIBCUDA"

# 1. clips
CLIPS=$WORK/clips; mkdir -p "$CLIPS"
grep -E '^textured-.*: fixtures clip ' "$BUNDLE/clips.txt" | while IFS= read -r line; do
    f=${line%%:*}; args=${line#*: fixtures clip }
    # shellcheck disable=SC2086
    [ -f "$CLIPS/$f" ] || "$BUNDLE/bin/fixtures" clip $args -o "$CLIPS/$f" >/dev/null || exit 1
done || die "making the clips failed"
(cd "$CLIPS" && grep -E '^[0-9a-f]{64}  ' "$BUNDLE/clips.txt" | sha256sum -c --quiet) || die "clip checksums differ from the ones made with the check (clips.txt)"
note "clips: $(ls "$CLIPS" | wc -l) files, SHA-256 as recorded by the check"

# 2. VMAF with CUDA, the device's nvcc
SRC=$WORK/vmaf
if [ ! -x "$SRC/libvmaf/build/tools/vmaf" ]; then
    rm -rf "$SRC" && mkdir -p "$SRC" && cp -r "$BUNDLE/vmaf/." "$SRC/" || die "copying the VMAF sources failed"
fi
export CPATH=$BUNDLE/nv-codec-headers/include${CPATH:+:$CPATH}
OPTS=(-Denable_cuda=true -Denable_nvcc=true -Dbuildtype=release -Denable_tests=false -Denable_docs=false)
command -v nasm >/dev/null || { OPTS+=(-Denable_asm=false); note "no nasm: -Denable_asm=false (CPU extractors without x86 asm)"; }
MODEL_ARGS=()
if ! command -v xxd >/dev/null; then
    OPTS+=(-Dbuilt_in_models=false)
    MODEL_ARGS=(--model "path=$SRC/model/vmaf_v0.6.1.json")
    note "no xxd: -Dbuilt_in_models=false; the default-model runs name the same model by path (--model path=model/vmaf_v0.6.1.json)"
fi
if [ ! -f "$SRC/libvmaf/build/build.ninja" ]; then
    (cd "$SRC/libvmaf" && meson setup build "${OPTS[@]}") > "$RES/meson-setup.log" 2>&1 || { tail -30 "$RES/meson-setup.log"; die "meson setup failed"; }
fi
t0=$(date +%s)
ninja -C "$SRC/libvmaf/build" tools/vmaf > "$RES/ninja.log" 2>&1 || { tail -30 "$RES/ninja.log"; die "VMAF build failed"; }
VMAF=$SRC/libvmaf/build/tools/vmaf
note "VMAF built in $(( $(date +%s) - t0 )) s (${OPTS[*]})"
gcc -O2 -o "$WORK/motion-cuda-ref" "$ROOT/scripts/real-program/motion-cuda-ref.c" || die "compiling motion-cuda-ref.c failed"
python3 "$ROOT/scripts/lib/provenance.py" "$RES/provenance.json" "$NVCC" "$REAL_LIBCUDA" "${OPTS[*]}"

# 3. runs
cuda_feat() { case "$1" in model) ;; *) echo "--no_prediction --feature ${1}_cuda" ;; esac; }
cpu_feat() { case "$1" in model) ;; *) echo "--no_prediction --feature $1" ;; esac; }
vmaf_run() { # vmaf_run SIZE N OUT.json GPUMASK FEATURE-ARGS... (env from the caller)
    local s=$1 n=$2 o=$3 g=$4; shift 4
    ${RUN_PREFIX:-} "$VMAF" --reference "$CLIPS/textured-$s.yuv" --distorted "$CLIPS/textured-$s-dis.yuv" --width "${s%x*}" --height "${s#*x}" \
        --pixel_format 420 --bitdepth 8 --frame_cnt "$n" "$@" --gpumask "$g" --json --output "$o" -q
}
FAILS=0
fallback() { # VMAF falls back to the CPU when CUDA cannot start; such an output is not a CUDA result
    if grep -q "using CPU" "$1/cuda-$2.stderr.log" 2>/dev/null; then
        note "$(basename "$(dirname "$1")") $(basename "$1"): the $2 run fell back to the CPU (cuda-$2.stderr.log); its output is kept as cuda-$2.json.cpu-fallback"
        [ -f "$1/cuda-$2.json" ] && mv "$1/cuda-$2.json" "$1/cuda-$2.json.cpu-fallback"
        FAILS=$((FAILS+1))
    fi
}
for s in ${SIZES//,/ }; do
    n=$(spec_get "$FRAMES" "$s") || die "no frame count for $s in the bundle's config"
    for e in ${ONLY//,/ }; do
        d=$RES/$s/$e; mkdir -p "$d"
        m=(); [ "$e" = model ] && m=("${MODEL_ARGS[@]}")
        # shellcheck disable=SC2046
        vmaf_run "$s" "$n" "$d/cpu.json" -1 $(cpu_feat "$e") "${m[@]}" 2> "$d/cpu.stderr.log" || { note "$s $e: CPU run failed"; FAILS=$((FAILS+1)); }
        # shellcheck disable=SC2046
        vmaf_run "$s" "$n" "$d/cuda-real.json" 0 $(cuda_feat "$e") "${m[@]}" 2> "$d/cuda-real.stderr.log" || { note "$s $e: real-device run failed"; FAILS=$((FAILS+1)); }
        fallback "$d" real
        if [ $PASSTHROUGH = 1 ]; then
            mkdir -p "$d/counts-passthrough"
            # shellcheck disable=SC2046
            LD_LIBRARY_PATH=$BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} EMU_CUDA_REAL=$REAL_LIBCUDA EMU_CUDA_COUNTS=$d/counts-passthrough/counts-%p.json \
                vmaf_run "$s" "$n" "$d/cuda-passthrough.json" 0 $(cuda_feat "$e") "${m[@]}" 2> "$d/cuda-passthrough.stderr.log" \
                || note "$s $e: pass-through run failed (see cuda-passthrough.stderr.log)"
            fallback "$d" passthrough
        fi
        if [ $EMULATED = 1 ]; then
            mkdir -p "$d/counts-emulated"
            # shellcheck disable=SC2046
            LD_LIBRARY_PATH=$BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} EMU_CUDA_KERNELS=$BUNDLE/twins EMU_CUDA_COUNTS=$d/counts-emulated/counts-%p.json \
                RUN_PREFIX="timeout 300" vmaf_run "$s" "$n" "$d/cuda-emulated.json" 0 $(cuda_feat "$e") "${m[@]}" 2> "$d/cuda-emulated.stderr.log" \
                || note "$s $e: emulated run failed (see cuda-emulated.stderr.log)"
            fallback "$d" emulated
        fi
        # 4. tables
        P=$BUNDLE/bin/parity
        case "$e" in
            adm) mets=integer_adm2,integer_adm_scale0,integer_adm_scale1,integer_adm_scale2,integer_adm_scale3 ;;
            vif) mets=integer_vif_scale0,integer_vif_scale1,integer_vif_scale2,integer_vif_scale3 ;;
            motion) mets=integer_motion2 ;;
            model) mets=vmaf,integer_adm2,integer_adm_scale0,integer_adm_scale1,integer_adm_scale2,integer_adm_scale3,integer_vif_scale0,integer_vif_scale1,integer_vif_scale2,integer_vif_scale3,integer_motion2 ;;
        esac
        [ -f "$d/cpu.json" ] && [ -f "$d/cuda-real.json" ] && "$P" diff "$d/cpu.json" "$d/cuda-real.json" --metrics "$mets" \
            --tolerances "$ROOT/scripts/real-program/vmaf-tolerances.txt" --label-a cpu --label-b cuda-real -o "$d/cpu-vs-real" > "$d/cpu-vs-real.log" 2>&1
        # Without --emulated, the emulated outputs the check made (same clips, same twins).
        [ -f "$d/cuda-emulated.json" ] || { [ -f "$BUNDLE/emulated-here/$s/$e.json" ] && cp "$BUNDLE/emulated-here/$s/$e.json" "$d/cuda-emulated.json"; }
        for other in passthrough emulated; do
            [ -f "$d/cuda-real.json" ] && [ -f "$d/cuda-$other.json" ] && "$P" diff "$d/cuda-real.json" "$d/cuda-$other.json" --metrics "$mets" \
                --label-a cuda-real --label-b "cuda-$other" -o "$d/real-vs-$other" > "$d/real-vs-$other.log" 2>&1
        done
        if { [ "$e" = motion ] || [ "$e" = model ]; } && [ -f "$d/cuda-real.json" ]; then
            "$WORK/motion-cuda-ref" "$CLIPS/textured-$s.yuv" "${s%x*}" "${s#*x}" "$n" > "$d/motion-cuda-ref.json" \
                && "$P" diff "$d/motion-cuda-ref.json" "$d/cuda-real.json" --metrics integer_motion2 \
                    --label-a motion-cuda-ref --label-b cuda-real -o "$d/ref-vs-real" > "$d/ref-vs-real.log" 2>&1
        fi
        note "$s $e: done ($(ls "$d"/*.json 2>/dev/null | wc -l) outputs)"
    done
done

# 5. timing: (t(N) - t(2)) / (N - 2), median of 3, real device and CPU
if [ $BENCH = 1 ]; then
    echo '[' > "$RES/timing.json"; first=1
    for s in ${SIZES//,/ }; do
        for e in ${ONLY//,/ }; do
            m=(); [ "$e" = model ] && m=("${MODEL_ARGS[@]}")
            for side in cpu cuda-real; do
                g=-1; f=$(cpu_feat "$e"); [ $side = cuda-real ] && { g=0; f=$(cuda_feat "$e"); }
                # N: the check's CPU bench N, at most the frames the clip holds.
                nb=$(grep -E "^textured-$s.yuv: " "$BUNDLE/clips.txt" | grep -o -- '--frames [0-9]*' | awk '{print $2}')
                [ -n "$nb" ] && [ "$nb" -lt "$BENCH_N" ] || nb=$BENCH_N
                ests=()
                for r in 1 2 3; do
                    t=(); for k in 2 "$nb"; do
                        a=$(date +%s%N)
                        # shellcheck disable=SC2086
                        vmaf_run "$s" "$k" /dev/null $g $f "${m[@]}" 2>/dev/null || { t=(); break; }
                        t+=($(( $(date +%s%N) - a )))
                    done
                    [ ${#t[@]} = 2 ] && ests+=("$(python3 "$ROOT/scripts/lib/script_tools.py" ms-per-frame $(( t[1] - t[0] )) "$nb")")
                done
                med=$(printf '%s\n' "${ests[@]:-}" | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "null"}')
                [ $first = 1 ] || echo ',' >> "$RES/timing.json"; first=0
                echo "{\"size\": \"$s\", \"extractor\": \"$e\", \"side\": \"$side\", \"frames\": $nb, \"ms_per_frame\": $med, \"rounds\": [$(IFS=,; echo "${ests[*]:-}")]}" >> "$RES/timing.json"
                note "timing $s $e $side: $med ms/frame"
            done
        done
    done
    echo ']' >> "$RES/timing.json"
fi

# 6. summary and bundle of results
python3 "$ROOT/scripts/lib/real_programs_summary.py" "$RES" "$OUTDIR/summary.md" "$SIZES" "$ONLY"
tar czf "$OUTDIR/real-programs.tar.gz" -C "$WORK" results || die "packing the results failed"
note "wrote $OUTDIR/summary.md, $OUTDIR/real-programs.tar.gz, $OUTDIR/run.log ($FAILS run failure(s))"
exit 0
