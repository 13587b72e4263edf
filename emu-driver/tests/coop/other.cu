// A kernel that needs a device-runtime function simtwin does not stand in for: linked
// with libcudadevrt.a, the link must fail naming it (tests/coop.rs). The CUDA headers
// declare it for device code.

extern "C" __global__ void asks_device(int *out) {
    cudaGetDevice(out);
}
