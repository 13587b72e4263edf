#!/usr/bin/env bash
# Fit 21 on the device machine (its nvcc, driver API): builds both probes, runs them, and
# writes device.txt, device2.txt, the PTX it built and the card's identity to $1 (the
# device tool's $OUT). From the repository root:
#   reports/reference/h200/textures-fit/fit21/run-device.sh "$OUT"
set -u
out=${1:?usage: run-device.sh OUTDIR}
cd "$(dirname "${BASH_SOURCE[0]}")"
{
    nvidia-smi --query-gpu=name,driver_version,compute_cap,pci.device_id --format=csv
    nvidia-smi -q | head -40
    nvcc --version
} > "$out/smi.txt" 2>&1
bin=$(dirname "$(which nvcc)")
inc=$bin/../include
stubs=$bin/../lib64/stubs
nvcc -ptx -arch=compute_90 -o "$out/kern-dev.ptx" kern.cu || exit 1
nvcc -ptx -arch=compute_90 -o "$out/kern2-dev.ptx" kern2.cu || exit 1
g++ -O1 -I "$inc" probe.cpp -o /tmp/probe-dev -L"$stubs" -lcuda || exit 1
g++ -O1 -I "$inc" probe2.cpp -o /tmp/probe2-dev -L"$stubs" -lcuda || exit 1
/tmp/probe-dev "$out/kern-dev.ptx" > "$out/device.txt"; echo "probe rc $?"
/tmp/probe2-dev "$out/kern2-dev.ptx" > "$out/device2.txt"; echo "probe2 rc $?"
head -1 "$out/smi.txt"; sed -n 2p "$out/smi.txt"
cat "$out/device.txt"
grep -E '^(create|module|getfunction)|arraycreate|memcpy2d' "$out/device2.txt" | grep -v ' 0$' || echo "probe2: every cuTexObjectCreate 0"
grep -c . "$out/device2.txt"
