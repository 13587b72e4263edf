#!/bin/bash
# Builds what run.sh runs on the GPU host: DIR/bin/ the runtime test programs of
# cudart/tests/programs (built as cudart/tests/runtime.rs builds them: nvcc -arch=sm_90
# -cudart shared, linked against simtwin's libcudart.so.13) and DIR/lib/libcudart.so.13
# (simtwin's, from target/simtwin/lib: run scripts/build first). Then: tar the directory,
# carry it with run.sh, and run `run.sh DIR` there.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../../.." && pwd)
DIR=${1:?usage: pack.sh DIR}
mkdir -p "$DIR/bin" "$DIR/lib" "$DIR/link"
cp "$ROOT/target/simtwin/lib/libcudart.so.13" "$DIR/lib/"
ln -sf "$ROOT/target/simtwin/lib/libcudart.so.13" "$DIR/link/libcudart.so"
NVCC=$("$ROOT/scripts/nvcc-path")
P=$ROOT/cudart/tests/programs
b() { local name=$1; shift; "$NVCC" -arch=sm_90 -cudart shared -L"$DIR/link" -o "$DIR/bin/$name" "$@"; }
b runtime_client "$ROOT/emu-driver/tests/clients/runtime_client.cu"
for p in basics symbols streams launch sticky props graphs; do b "$p" "$P/$p.cu"; done
b textures -Xcompiler -Wno-deprecated-declarations "$P/textures.cu"
b ptds --default-stream per-thread "$P/ptds.cu"
b mtu "$P/mtu_a.cu" "$P/mtu_b.cu"
b rdc -rdc=true "$P/rdc_a.cu" "$P/rdc_b.cu"
rm -rf "$DIR/link"
cp "$ROOT/reports/reference/h200/runtime/run.sh" "$DIR/"
echo "pack.sh: $DIR ($(ls "$DIR/bin" | wc -l) programs + lib/libcudart.so.13)"
