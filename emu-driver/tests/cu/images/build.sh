#!/usr/bin/env bash
# Rebuilds the sample module images in emu-driver/tests/corpus/image/ from the sources
# here, with the nvcc scripts/nvcc-path finds (the PyPI nvidia-cuda-nvcc scripts/setup
# installs). The checked-in images were made with nvcc 13.5.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../../corpus/image"
mkdir -p "$out"
nvcc=$("$here/../../../../scripts/nvcc-path")
bin=$(dirname "$nvcc")
export PATH="$bin:$PATH"
"$nvcc" --version | tail -2
cd "$out"

# VMAF's shape: 7 uncompressed cubins + zstd PTX for compute_80 and compute_120.
vmaf="-gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=[sm_80,compute_80]
      -gencode arch=compute_86,code=sm_86 -gencode arch=compute_89,code=sm_89
      -gencode arch=compute_90,code=sm_90 -gencode arch=compute_100,code=sm_100
      -gencode arch=compute_120,code=[sm_120,compute_120]"
"$nvcc" -fatbin $vmaf "$here/vmaf_like.cu" -o vmaf9.fatbin

# The richer sample as plain PTX, a bare sm_90 cubin (ptxas -v output kept beside it),
# and fatbins with every entry compressed: zstd (default mode) and the older LZ4 scheme
# (--compress-mode=speed).
"$nvcc" -ptx -arch=compute_80 "$here/features.cu" -o features_compute80.ptx
"$nvcc" -cubin -arch=sm_90 -Xptxas -v "$here/features.cu" -o features_sm90.cubin 2> features_sm90.ptxas.txt
"$nvcc" -fatbin -gencode arch=compute_90,code=[sm_90,compute_90] -Xfatbin -compress-all \
    "$here/features.cu" -o features_zstd.fatbin
"$nvcc" -fatbin -gencode arch=compute_90,code=[sm_90,compute_90] -Xfatbin -compress-all \
    --compress-mode=speed "$here/features.cu" -o features_lz4.fatbin
# compute_90 PTX only, LZ4: the JIT path through the older compression scheme.
"$nvcc" -fatbin -gencode arch=compute_90,code=compute_90 --compress-mode=speed \
    "$here/features.cu" -o features_ptx_lz4.fatbin

# Selection: nothing for sm_90 (sm_80 + sm_120 cubins, compute_120 PTX), and PTX-only
# compute_80 (runs by JIT), and an arch-specific sm_90a cubin.
"$nvcc" -fatbin -gencode arch=compute_80,code=sm_80 -gencode arch=compute_120,code=[sm_120,compute_120] \
    "$here/vmaf_like.cu" -o no_sm90.fatbin
"$nvcc" -fatbin -gencode arch=compute_80,code=compute_80 "$here/vmaf_like.cu" -o ptx80_only.fatbin
"$nvcc" -fatbin -gencode arch=compute_90a,code=sm_90a "$here/vmaf_like.cu" -o vmaf_sm90a.fatbin

# .reqntid has no CUDA C++ spelling: hand-written PTX, assembled by ptxas.
cp "$here/reqntid.ptx" reqntid.ptx
"$bin/ptxas" -arch=sm_90 -v reqntid.ptx -o reqntid_sm90.cubin 2> reqntid_sm90.ptxas.txt
ls -l "$out"
