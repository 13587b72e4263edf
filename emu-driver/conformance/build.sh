#!/usr/bin/env bash
# build.sh OUT_DIR: builds everything driver-conformance needs into OUT_DIR:
#   conformance.fatbin   nvcc: sm_90 cubin + compute_80 PTX (the good image)
#   nosm90.fatbin        nvcc: sm_80 cubin + compute_120 PTX (no entry an sm_90 device runs
#                        without JIT from a newer PTX ISA -> the driver's answer is recorded)
#   newer.ptx,           compute_90 PTX of the nvcc's ISA, as text and as a fatbin's only
#   ptx90_only.fatbin    entry (a driver older than the nvcc refuses it)
#   kernels/             host kernel library (kernels-host build), for EMU_CUDA_KERNELS
#   driver-conformance   the release runner (needs only libc at run time)
# Environment: NVCC (default: scripts/nvcc-path), KERNELS_HOST (default:
# target/simtwin/bin/kernels-host), CARGO_TARGET_DIR (default OUT_DIR/cargo-target).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 OUT_DIR" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
src="$here/kernels/conformance.cu"
nvcc=$("$root/scripts/nvcc-path")
kh=${KERNELS_HOST:-$root/target/simtwin/bin/kernels-host}
[ -x "$kh" ] || { echo "build.sh: $kh missing (run scripts/build)" >&2; exit 1; }

"$nvcc" -fatbin -o "$out/conformance.fatbin.tmp" \
    -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=compute_80 "$src"
mv "$out/conformance.fatbin.tmp" "$out/conformance.fatbin"
"$nvcc" -fatbin -o "$out/nosm90.fatbin.tmp" \
    -gencode arch=compute_80,code=sm_80 -gencode arch=compute_120,code=compute_120 "$src"
mv "$out/nosm90.fatbin.tmp" "$out/nosm90.fatbin"

# PTX of the nvcc's own ISA (newer than an older driver's), as text and as a fatbin's only entry.
"$nvcc" -ptx -arch=compute_90 -o "$out/newer.ptx" "$src"
"$nvcc" -fatbin -gencode arch=compute_90,code=compute_90 -o "$out/ptx90_only.fatbin" "$src"

rm -rf "$out/kernels"
"$kh" build -o "$out/kernels" "$src" >&2

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$out/cargo-target}
(cd "$here" && cargo build --release --quiet --locked --offline 2>/dev/null \
    || cargo build --release --quiet --locked)
cp "$CARGO_TARGET_DIR/release/driver-conformance" "$out/driver-conformance.tmp"
mv "$out/driver-conformance.tmp" "$out/driver-conformance"
echo "$out"
