// The checking variant's instrumentation (tests/checking.rs): every kind of access a
// kernel makes to shared memory must reach the runtime's `access` hook.
extern "C" __global__ void touch(int *out, unsigned long long *count, int i) {
    __shared__ int s[8];
    __shared__ int scalar;
    scalar = 7;          // a scalar __shared__ (a constant offset into thread-local storage)
    s[i] = 5;            // an indexed element
    s[3] = 9;            // a constant index
    out[0] = s[i ^ 1] + scalar;
    atomicAdd(count, 2ull);
    atomicAdd(&s[2], 1);
}
