#!/bin/bash
# parity replay on a real GPU (H200, sm_90), for a machine without cargo or nvcc.
#
# Here (build machine, nvcc available through SIMTWIN_NVCC / PATH / the nvidia-cuda-nvcc
# Python package):
#     parity/src/replay/device-run.sh build [BUNDLE]     (default BUNDLE: target/replay-device)
#   builds the release binary and one sm_90 cubin per function into BUNDLE.
# There (device machine, from the repository root, BUNDLE carried along):
#     parity/src/replay/device-run.sh run [BUNDLE]
#   replays every function over its range on the GPU, checks on the host against the
#   binary64/MPFR reference, and writes one report directory per function under $OUT
#   (default reports/replay-device), plus $OUT/device-summary.csv. Exit 77: no device.
set -u
MODE=${1:-run}
BUNDLE=${2:-target/replay-device}
OUT=${OUT:-reports/replay-device}
SRC=fixtures/cuda/crlog2_device.cu

# name | image source args | reference | ranges (from:to, space separated)
POS="0x00000001:0x7f800000"
ALL="0x00000000:0x7f800000 0x80000000:0xff800000"
JOBS=(
  "crlog2|--source $SRC --function crlog2_device|log2|$POS"
  "crlog2_no_table|--source $SRC --function crlog2_device -D SIMTWIN_CRLOG2_NO_TABLE|log2|$POS"
  "log2f|--builtin log2f|log2|$POS"
  "__log2f|--builtin __log2f|log2|$POS"
  "expf|--builtin expf|exp|$ALL"
  "__expf|--builtin __expf|exp|$ALL"
  "sinf|--builtin sinf|sin|$ALL"
  "__sinf|--builtin __sinf|sin|$ALL"
)

if [ "$MODE" = build ]; then
  set -e
  mkdir -p "$BUNDLE/images"
  export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target/h-replay}
  cargo build --release -p parity --example replay_cli
  cp "$CARGO_TARGET_DIR/release/examples/replay_cli" "$BUNDLE/parity-replay"
  strip "$BUNDLE/parity-replay" || true
  for job in "${JOBS[@]}"; do
    IFS='|' read -r name args ref ranges <<<"$job"
    # shellcheck disable=SC2086
    "$BUNDLE/parity-replay" replay --device real $args --reference "$ref" --emit-image "$BUNDLE/images/$name.cubin"
  done
  echo "bundle ready: $BUNDLE (carry it; then: parity/src/replay/device-run.sh run $BUNDLE)"
  exit 0
fi

BIN="$BUNDLE/parity-replay"
[ -x "$BIN" ] || { echo "no $BIN: run '$0 build' on the build machine first" >&2; exit 2; }
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/nvidia-smi.csv" 2>&1 || true
echo "name,from,to,inputs,misrounded,mpfr_decided,max_ulp_error,seconds,kernel_seconds,copy_seconds,check_seconds,rc" > "$OUT/device-summary.csv"
status=0
for job in "${JOBS[@]}"; do
  IFS='|' read -r name args ref ranges <<<"$job"
  fn=$(echo "$args" | sed -n 's/.*--function \([^ ]*\).*/\1/p'); [ -n "$fn" ] || fn=$(echo "$args" | sed -n 's/.*--builtin \([^ ]*\).*/\1/p')
  for r in $ranges; do
    from=${r%%:*}; to=${r##*:}
    dir="$OUT/$name-$from"
    "$BIN" replay --device real --image "$BUNDLE/images/$name.cubin" --function "$fn" --reference "$ref" \
      --from "$from" --to "$to" --out "$dir" --quiet --max-list 100000
    rc=$?
    [ $rc -eq 77 ] && { echo "no CUDA device: exit 77"; exit 77; }
    [ $rc -ne 0 ] && status=1
    if [ -f "$dir/summary.json" ]; then
      python3 - "$dir/summary.json" "$name" "$rc" >> "$OUT/device-summary.csv" <<'PY' || true
import json, sys
s = json.load(open(sys.argv[1]))
print(",".join(str(x) for x in [sys.argv[2], s["from"], s["to"], s["inputs"], s["misrounded"], s["mpfr_decided"], s["max_ulp_error"], round(s["seconds"], 2), round(s.get("kernel_seconds", 0), 2), round(s.get("copy_seconds", 0), 2), round(s.get("check_seconds", 0), 2), sys.argv[3]]))
PY
    fi
  done
done
cat "$OUT/device-summary.csv"
exit $status
