#!/bin/bash
# A/B of two emulated drivers (lib-old, lib-new) on VMAF's CUDA extractors, PTX mode, one
# core, one worker: per extractor a warm-up (JIT compile) then alternating rounds, each
# the 14-frame run minus the 2-frame run over 12 frames.
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/about}; mkdir -p "$OUT"
echo "g++: $(g++ --version | head -1)"; echo "cores: $(nproc)"; grep -m1 'model name' /proc/cpuinfo
PIN=""; taskset -c 3 true 2>/dev/null && PIN="taskset -c 3"; echo "pin: ${PIN:-none}"
T() { # lib binary feature frames
  local t0=$(date +%s%N)
  env LD_LIBRARY_PATH=$PWD/lib-$1:$PWD/forklib EMU_CUDA_KERNELS= EMU_CUDA_EXEC=ptx EMU_CUDA_WORKERS=1 SIMTWIN_CACHE_DIR=$PWD/cache-$1 $PIN ./$2 \
    --reference clips/ref.yuv --distorted clips/dis.yuv --width 576 --height 324 --pixel_format 420 --bitdepth 8 \
    --frame_cnt $4 --no_prediction --feature $3 $EXTRA --json --output $OUT/$1-$3-$4.json > $OUT/$1-$3-$4.log 2>&1 || echo "FAIL $1 $3 $4: $(tail -2 $OUT/$1-$3-$4.log)" >&2
  echo $(( ($(date +%s%N)-t0)/1000000 ))
}
ab() { # binary feature rounds
  for l in old new; do T $l $1 $2 2 >/dev/null; done
  for r in $(seq 1 $3); do
    for l in old new; do a=$(T $l $1 $2 2); b=$(T $l $1 $2 14); echo "$2 $l $(( (b - a) * 100 / 12 ))e-2 ms/frame"; done
  done
  python3 -c "import json,sys; m=lambda p: [f['metrics'] for f in json.load(open(p))['frames']]; a,b=m(sys.argv[1]),m(sys.argv[2]); print(sys.argv[3], len(a), 'frames, metrics identical' if a==b else 'METRICS DIFFER')" $OUT/old-$2-14.json $OUT/new-$2-14.json $2
}
EXTRA="--gpumask 0"
for f in vif_cuda adm_cuda motion_cuda; do ab vmaf $f ${ROUNDS:-3}; done
EXTRA="--backend cuda --precision max"
ab vmaf-fork vif_cuda ${ROUNDS:-3}
