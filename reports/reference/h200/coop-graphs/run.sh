#!/usr/bin/env bash
# Cooperative launches and CUDA graphs on the real driver: the same clients
# emu-driver/tests/coop.rs and tests/graphs.rs run on simtwin, each case in its own
# process (a crash or hang costs one case), output line-buffered.
#   run.sh PACK OUTDIR   PACK: coop/client, graphs/{client,graphs.fatbin}; nvcc on PATH
# Emulated: LD_LIBRARY_PATH=target/simtwin/lib EMU_CUDA_KERNELS=<the graphs test's kernels>
# PROBE_NVCC_FLAGS="-cudart shared -L DIR" (DIR: libcudart.so -> simtwin's libcudart.so.13).
set -u
P=$1 O=$2
mkdir -p "$O"
exec > "$O/device.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
one() { # label, command...
    local l=$1; shift
    echo "== $l"
    timeout 60 stdbuf -oL -eL "$@" 2>&1 | sed 's/^/  /'
    echo "  rc=${PIPESTATUS[0]}"
}
# The coop PTX from the device's nvcc (the driver there takes PTX 9.0; the pack's, from
# this repository's nvcc 13.5, is 9.5), as emu-driver/tests/coop.rs builds it.
C=$O/coop
mkdir -p "$C"
cp "$P/coop/client" "$C/"
SRC=$(cd "$(dirname "$0")/../../../.." && pwd)/emu-driver/tests/coop
nvcc -ptx -arch=compute_90 -o "$C/coop.ptx" "$SRC/coop.cu" || echo "nvcc coop.cu failed"
for n in devrt other; do nvcc -rdc=true -ptx -arch=compute_90 -o "$C/$n.ptx" "$SRC/$n.cu" || echo "nvcc $n.cu failed"; done
for a in "sync 33 2 2 32 2 2 3" "sync 132 1 1 128 1 1 4" "sync 5 3 2 16 4 1 5" "ex 12 1 3 64 1 1 2" \
         "plain 4 1 1 64 1 1 2" "after 4 1 1 64 1 1 2" limits env deserter; do
    one "coop $a" "$C/client" "$C/coop.ptx" $a
done
NVTOP=$(dirname "$(dirname "$(command -v nvcc)")")
DEVRT=$(ls /usr/local/cuda/lib64/libcudadevrt.a /usr/local/cuda/targets/x86_64-linux/lib/libcudadevrt.a \
    "$NVTOP"/lib/libcudadevrt.a "$NVTOP"/lib64/libcudadevrt.a 2>/dev/null | head -1)
echo "libcudadevrt.a: $DEVRT"
one "coop link coop.ptx" "$C/client" "$C/coop.ptx" link "$DEVRT"
one "coop link devrt.ptx run" "$C/client" "$C/devrt.ptx" link "$DEVRT" run
one "coop link other.ptx" "$C/client" "$C/other.ptx" link "$DEVRT"
printf hello > "$O/not-an-archive.a"
one "coop link not-an-archive" "$C/client" "$C/coop.ptx" link "$O/not-an-archive.a"
G=$P/graphs
for m in direct manual capture api nulls errors; do
    one "graphs $m" "$G/client" "$G/graphs.fatbin" $m
done
# The runtime-API probe of ../cooperative (occupancy, envregs, 720, a 3-D grid's hash).
if nvcc -arch=sm_90 ${PROBE_NVCC_FLAGS:-} -o "$O/coop_probe" "$(dirname "$0")/../cooperative/coop_probe.cu" 2>"$O/nvcc.txt"; then
    one "coop_probe" "$O/coop_probe"
else
    echo "coop_probe: nvcc failed"; cat "$O/nvcc.txt"
fi
