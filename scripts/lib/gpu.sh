# shellcheck shell=bash
# Helpers of the scripts that prepare a bundle here and run it on a GPU machine
# (scripts/h200-*, scripts/real-program/h200-*.sh, scripts/h200/*.sh, scripts/device-math/*-device-run.sh,
# emu-driver/conformance/device-run*.sh). The device runs them from the repository tree,
# so they source this file from there:
#   . "$ROOT/scripts/lib/gpu.sh"; GPU_SCRIPT=name
# Python they need is in scripts/lib/*.py, not in heredocs.

# Messages and the setup-error exit (2), prefixed with the script's name.
die() { echo "${GPU_SCRIPT:-gpu}: $*" >&2; exit 2; }
note() { echo "${GPU_SCRIPT:-gpu}: $*" >&2; }

# Exits 77 (a skip, not a failure) when nvidia-smi lists no GPU; with FILE, its listing
# is kept there.
require_gpu() {
    local out
    out=$(nvidia-smi -L 2>&1) || true
    [ -n "${1:-}" ] && printf '%s\n' "$out" > "$1"
    grep -q GPU <<< "$out" && return 0
    printf '%s\n' "$out" >&2
    echo "${GPU_SCRIPT:-gpu}: no GPU (nvidia-smi -L)" >&2
    exit 77
}

# Prints the machine's real libcuda.so.1 (not simtwin's): $REAL_LIBCUDA, else the one the
# loader picks (ldconfig -p), else the usual places. Fails (status 2) when there is none.
real_libcuda() {
    local p=${REAL_LIBCUDA:-}
    [ -n "$p" ] || p=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 .*x86-64/ {print $NF; exit}')
    [ -n "$p" ] || p=$(ls /usr/local/nvidia/lib64/libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcuda.so.1 2>/dev/null | head -1)
    [ -n "$p" ] || { echo "${GPU_SCRIPT:-gpu}: the real libcuda.so.1 was not found (ldconfig -p; set REAL_LIBCUDA)" >&2; return 2; }
    echo "$p"
}

# The libcuda.so.1 a device run tests: $CUDA_LIB when set (no GPU needed), else the GPU
# machine's real one (require_gpu, real_libcuda). Exits 2 when it does not exist.
driver_under_test() {
    local lib
    if [ -n "${CUDA_LIB:-}" ]; then
        lib=$CUDA_LIB
    else
        require_gpu
        lib=$(real_libcuda) || exit 2
    fi
    [ -e "$lib" ] || die "$lib does not exist"
    echo "$lib"
}

# Copies simtwin's emulated driver (FROM, default target/simtwin/lib/libcuda.so.1),
# stripped, into BUNDLE/lib with the libcuda.so link loaders that try it first need.
bundle_driver() {
    local bundle=$1 from=${2:-$ROOT/target/simtwin/lib/libcuda.so.1}
    mkdir -p "$bundle/lib" && strip -o "$bundle/lib/libcuda.so.1" "$from" && ln -sf libcuda.so.1 "$bundle/lib/libcuda.so" \
        || die "cannot copy the emulated driver $from into $bundle/lib"
}

# The names of twin.h's TWIN_FEATURES or TWIN_DEFECTS list (LIST: FEATURES or DEFECTS), one
# a line: the fixture twin's one list, which the C code compiles and fixtures::twin reads.
twin_list() {
    sed -n "/^#define TWIN_$1(X)/,/[^\\]\$/p" "$ROOT/fixtures/twin/twin.h" | sed -n 's/^ *X([A-Z_0-9]*, "\([^"]*\)".*/\1/p'
}
