#!/usr/bin/env bash
# A parity matrix on a Slurm cluster: one array task per shard, then a merge job that
# waits for all of them. Submit from a directory the cluster's nodes share, with simtwin
# unpacked there (scripts/package's tarball) and the project built once:
#
#   mkdir -p logs
#   SIMTWIN=/shared/simtwin sbatch --array=1-8 examples/ci/slurm-array.sh   # "Submitted batch job 4242"
#   sbatch --dependency=afterany:4242 --wrap "/shared/simtwin/bin/parity merge shards/* --out frames-report"
#
# Each task reads its shard from Slurm (--shard auto: SLURM_ARRAY_TASK_ID, _MIN, _STEP
# and _COUNT, so --array=0-7 or --array=1-15:2 work the same) and writes shards/TASK/;
# the emulated driver's counters of its processes go to simtwin-reports/TASK/.
#SBATCH --job-name=parity-shard
#SBATCH --cpus-per-task=2
#SBATCH --time=02:00:00
#SBATCH --output=logs/slurm-%A_%a.out
set -euo pipefail
: "${SIMTWIN:?set SIMTWIN to the unpacked simtwin directory}"
BUILD=${BUILD:-build}
eval "$("$SIMTWIN/bin/simtwin" env --kernels "$BUILD/simtwin-kernels" --report "simtwin-reports/$SLURM_ARRAY_TASK_ID")"
exec parity frames --clips "$BUILD/clips/clips.csv" --twin "$BUILD/extractor" \
    --features sse,sad --per-feature --block-orders forward,reverse \
    --shard auto --out "shards/$SLURM_ARRAY_TASK_ID"
