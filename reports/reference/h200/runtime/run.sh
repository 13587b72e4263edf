#!/bin/bash
# On the GPU host (NVIDIA's driver, no cargo needed): runs every program of DIR/bin twice,
# with NVIDIA's libcudart.so.13 and with simtwin's (DIR/lib) first on LD_LIBRARY_PATH,
# both on the machine's real libcuda.so.1, and prints each program's output and exit
# status per runtime, then which programs' outputs differ.
#
#   run.sh DIR [NVIDIA_CUDART_DIR]
#
# NVIDIA_CUDART_DIR holds NVIDIA's libcudart.so.13 (default: the nvidia-cuda-runtime
# wheel's nvidia/cu13/lib of the python3 on PATH). Outputs land in DIR/out/.
set -u
DIR=$(cd "${1:?usage: run.sh DIR [NVIDIA_CUDART_DIR]}" && pwd)
NV=${2:-$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "lib"))' 2>/dev/null)}
[ -f "$NV/libcudart.so.13" ] || { echo "run.sh: no NVIDIA libcudart.so.13 in '$NV' (pass its directory)" >&2; exit 2; }
[ -f "$DIR/lib/libcudart.so.13" ] || { echo "run.sh: $DIR/lib/libcudart.so.13 missing (pack.sh)" >&2; exit 2; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
echo "nvidia runtime: $NV/libcudart.so.13"
echo "simtwin runtime: $DIR/lib/libcudart.so.13"
mkdir -p "$DIR/out"
differ=""
for exe in "$DIR"/bin/*; do
    p=$(basename "$exe")
    for rt in nvidia simtwin; do
        lib=$NV; [ $rt = simtwin ] && lib=$DIR/lib
        (cd "$DIR/bin" && LD_LIBRARY_PATH=$lib timeout 300 "./$p" > "$DIR/out/$p.$rt.txt" 2> "$DIR/out/$p.$rt.err"; echo "exit $?" >> "$DIR/out/$p.$rt.txt")
        echo "=== $p ($rt runtime)"
        cat "$DIR/out/$p.$rt.txt"
        [ -s "$DIR/out/$p.$rt.err" ] && sed 's/^/stderr: /' "$DIR/out/$p.$rt.err" | head -5
    done
    # The runtime version is the library's own (ours says 13050); everything else should match.
    if ! diff <(grep -v '^runtime version' "$DIR/out/$p.nvidia.txt") <(grep -v '^runtime version' "$DIR/out/$p.simtwin.txt") > "$DIR/out/$p.diff"; then
        differ="$differ $p"
    fi
done
echo "=== summary"
if [ -z "$differ" ]; then echo "every program printed the same with both runtimes"; else
    echo "outputs differ:$differ"
    for p in $differ; do echo "--- $p (< nvidia, > simtwin)"; cat "$DIR/out/$p.diff"; done
fi
