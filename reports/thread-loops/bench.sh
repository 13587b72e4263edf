#!/bin/bash
# PTX mode, bench-kernels' host program, EMU_CUDA_THREAD_LOOPS off and auto alternating.
cd /work/wt/loops
B=target/bench-kernels
for round in 1 2 3; do for m in off auto; do
  uptime > /tmp/tl/r-$m-$round.load
  EMU_CUDA_THREAD_LOOPS=$m EMU_CUDA_EXEC=ptx EMU_CUDA_WORKERS=1 EMU_CUDA_LOG=info LD_LIBRARY_PATH=target/simtwin/lib \
    taskset -c 0 $B/host --fatbin-dir $B/fatbin --out /tmp/tl/r-$m-$round --reps 3 --label "ptx $m" --only a,b,c,d,e > /tmp/tl/r-$m-$round.log 2>&1
  uptime >> /tmp/tl/r-$m-$round.load
done; done
