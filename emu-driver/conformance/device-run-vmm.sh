#!/usr/bin/env bash
# device-run-vmm.sh DIR OUT_DIR: records the real driver's answers to the virtual-memory
# cases (vmm_*, device_get_properties, entries_13_0*) and runs the VM-API C client
# (emu-driver/tests/clients/vmm_client.c) on a GPU machine.
#
#   DIR      what was carried there: driver-conformance and conformance.fatbin (build.sh),
#            vmm_client (cc -I TOOLKIT/include vmm_client.c -lcuda) and kernels.fatbin
#            (nvcc -fatbin of emu-driver/tests/clients/kernels.cu)
#   OUT_DIR  h200-vmm.txt (the table lines, for emu-driver/tests/data/h200-conformance.txt)
#            and vmm_client.txt (the client's output)
#
# vmm_other_calls runs alone first: it reads cuMemGetInfo, which other processes'
# contexts would move. The real libcuda.so.1 is the machine's (real_libcuda of
# scripts/lib/gpu.sh; CUDA_LIB=path overrides, and then no GPU is asked for).
# Exit: 0 done; 2 setup error; 77 no GPU.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$ROOT/scripts/lib/gpu.sh"; GPU_SCRIPT=device-run-vmm.sh
[ $# -eq 2 ] || die "usage: $0 DIR OUT_DIR"
dir=$(cd "$1" 2>/dev/null && pwd) || die "no directory $1"
out=$2
mkdir -p "$out" || die "cannot create $out"
for f in driver-conformance conformance.fatbin vmm_client kernels.fatbin; do
    [ -f "$dir/$f" ] || die "$dir/$f is missing"
done
chmod +x "$dir/driver-conformance" "$dir/vmm_client"
lib=$(driver_under_test) || exit $?
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
start=$(date +%s)
run() { "$dir/driver-conformance" --lib "$lib" --fatbin "$dir/conformance.fatbin" --timeout 20 "$@" 2>>"$out/conf-stderr.txt"; }
run --only vmm_other_calls --jobs 1 --out "$out/a.txt"
rest=$("$dir/driver-conformance" --list | grep -E '^(vmm_|device_get_properties$|entries_13_0)' | grep -v '^vmm_other_calls$' | paste -sd,)
run --only "$rest" --jobs 4 --out "$out/b.txt"
secs=$(( $(date +%s) - start ))
{ grep -v '^#' "$out/b.txt"; grep -v '^#' "$out/a.txt"
  echo "# device: ${gpu:-unknown}; lib=$lib; run took ${secs} s (timeout 20 s; vmm_other_calls alone, the rest jobs 4)"; } > "$out/h200-vmm.txt"
cat "$out/h200-vmm.txt"
(cd "$dir" && ./vmm_client kernels.fatbin) > "$out/vmm_client.txt" 2>&1
echo "exit=$?" >> "$out/vmm_client.txt"
cat "$out/vmm_client.txt"
