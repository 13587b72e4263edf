// Memory, launches, results bit for bit, and the error codes of careless calls.
#include "check.h"
#include <cstring>
#include <cstdint>

__global__ void axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void iota(unsigned *p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = i * 2654435761u;
}

__global__ void rows(unsigned char *p, size_t pitch, int w, int h) {
    int x = threadIdx.x, y = blockIdx.x;
    if (x < w && y < h) p[y * pitch + x] = (unsigned char)(x + 3 * y);
}

int main() {
    int n = 0;
    CK(cudaGetDeviceCount(&n));
    EXPECT(n >= 1);
    int v = 0;
    CK(cudaRuntimeGetVersion(&v));
    printf("runtime version: %d\n", v);
    CK(cudaDriverGetVersion(&v));
    EXPECT(v >= 13000);
    CK(cudaSetDevice(0));
    int dev = -1;
    CK(cudaGetDevice(&dev));
    EXPECT(dev == 0);

    // axpy, compared bit for bit with the host's fmaf-free float arithmetic.
    const int N = 1000;
    float hx[N], hy[N], out[N];
    for (int i = 0; i < N; i++) { hx[i] = i * 0.37f - 11.0f; hy[i] = 1.0f / (i + 1); }
    float *dx, *dy;
    CK(cudaMalloc(&dx, N * sizeof(float)));
    CK(cudaMalloc(&dy, N * sizeof(float)));
    CK(cudaMemcpy(dx, hx, sizeof hx, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dy, hy, sizeof hy, cudaMemcpyDefault));
    axpy<<<(N + 255) / 256, 256>>>(2.5f, dx, dy, N);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(out, dy, sizeof out, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < N; i++) {
        float want = __builtin_fmaf(2.5f, hx[i], hy[i]);  // ptxas contracts a*x+y to an FMA
        if (memcmp(&want, &out[i], 4) != 0) bad++;
    }
    printf("axpy mismatches: %d\n", bad);

    // Memset, device-to-device copy, async copies on the default stream.
    unsigned *du, *du2, hu[N];
    CK(cudaMalloc(&du, N * 4));
    CK(cudaMalloc(&du2, N * 4));
    CK(cudaMemset(du, 0xab, N * 4));
    CK(cudaMemcpy(hu, du, N * 4, cudaMemcpyDeviceToHost));
    EXPECT(hu[0] == 0xabababab && hu[N - 1] == 0xabababab);
    iota<<<4, 256>>>(du, N);
    CK(cudaMemcpyAsync(du2, du, N * 4, cudaMemcpyDeviceToDevice, 0));
    CK(cudaMemsetAsync(du, 0, 16, 0));
    CK(cudaMemcpyAsync(hu, du2, N * 4, cudaMemcpyDeviceToHost, 0));
    CK(cudaStreamSynchronize(0));
    bad = 0;
    for (int i = 0; i < N; i++) if (hu[i] != i * 2654435761u) bad++;
    printf("iota mismatches: %d\n", bad);

    // Pinned and mapped host memory.
    unsigned *pin, *mapped;
    CK(cudaMallocHost(&pin, N * 4));
    CK(cudaHostAlloc(&mapped, N * 4, cudaHostAllocMapped));
    CK(cudaMemcpy(pin, du2, N * 4, cudaMemcpyDeviceToHost));
    EXPECT(pin[7] == 7 * 2654435761u);
    unsigned *mapped_dev = nullptr;
    CK(cudaHostGetDevicePointer(&mapped_dev, mapped, 0));
    iota<<<4, 256>>>(mapped_dev, N);
    CK(cudaDeviceSynchronize());
    EXPECT(mapped[999] == 999 * 2654435761u);
    cudaPointerAttributes pa;
    CK(cudaPointerGetAttributes(&pa, du));
    printf("attributes of device memory: type %d device %d\n", (int)pa.type, pa.device);
    EXPECT(pa.devicePointer == du);
    CK(cudaPointerGetAttributes(&pa, pin));
    printf("attributes of pinned memory: type %d\n", (int)pa.type);
    int stack_var = 0;
    CK(cudaPointerGetAttributes(&pa, &stack_var));
    printf("attributes of unregistered memory: type %d\n", (int)pa.type);
    CK(cudaFreeHost(pin));
    CK(cudaFreeHost(mapped));

    // Pitched memory and 2D copies.
    unsigned char *pitched;
    size_t pitch = 0;
    const int W = 37, H = 5;
    CK(cudaMallocPitch(&pitched, &pitch, W, H));
    EXPECT(pitch >= W);
    rows<<<H, 64>>>(pitched, pitch, W, H);
    unsigned char host2d[H][W];
    CK(cudaMemcpy2D(host2d, W, pitched, pitch, W, H, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int y = 0; y < H; y++) for (int x = 0; x < W; x++) if (host2d[y][x] != (unsigned char)(x + 3 * y)) bad++;
    printf("2D mismatches: %d\n", bad);
    CK(cudaMemset2D(pitched, pitch, 7, W, H));
    CK(cudaMemcpy2D(host2d, W, pitched, pitch, W, H, cudaMemcpyDeviceToHost));
    EXPECT(host2d[4][36] == 7);
    SHOW("memcpy2D with a pitch narrower than a row", cudaMemcpy2D(host2d, 3, pitched, pitch, W, H, cudaMemcpyDeviceToHost));
    CK(cudaFree(pitched));

    // Managed memory: written by the host, a kernel, then read by the host.
    unsigned *man;
    CK(cudaMallocManaged(&man, N * 4));
    man[0] = 5;
    iota<<<4, 256>>>(man, N);
    CK(cudaDeviceSynchronize());
    EXPECT(man[1] == 2654435761u && man[0] == 0);
    CK(cudaPointerGetAttributes(&pa, man));
    printf("attributes of managed memory: type %d\n", (int)pa.type);
    CK(cudaFree(man));

    size_t freeb = 0, total = 0;
    CK(cudaMemGetInfo(&freeb, &total));
    EXPECT(total > 0 && freeb <= total);

    // Errors: each is the call's answer, and the last error until read.
    SHOW("last error of the pitch error", cudaGetLastError());
    CK(cudaMemset(dx, 0, 16));
    SHOW("last error after success", cudaGetLastError());
    SHOW("memcpy to a bad device pointer", cudaMemcpy((void *)0x10, hx, 64, cudaMemcpyHostToDevice));
    SHOW("last error after it", cudaGetLastError());
    SHOW("last error read again", cudaGetLastError());
    SHOW("host-to-host memcpy", cudaMemcpy(out, hx, sizeof out, cudaMemcpyHostToHost));
    EXPECT(out[5] == hx[5]);
    SHOW("memcpy host to device named DeviceToHost", cudaMemcpy(dx, hx, 64, cudaMemcpyDeviceToHost));
    cudaGetLastError();
    SHOW("memcpy from NULL", cudaMemcpy(out, nullptr, 64, cudaMemcpyHostToHost));
    SHOW("memcpy to NULL", cudaMemcpy(nullptr, dx, 64, cudaMemcpyDeviceToHost));
    cudaGetLastError();
    SHOW("memcpy with kind 9", cudaMemcpy(dx, hx, 64, (cudaMemcpyKind)9));
    SHOW("free of a pointer never allocated", cudaFree((void *)0x1234));
    SHOW("set device 99", cudaSetDevice(99));
    SHOW("malloc into NULL", cudaMalloc(nullptr, 16));
    axpy<<<1, 2048>>>(1.0f, dx, dy, N);
    SHOW("peek after a launch of 2048 threads", cudaPeekAtLastError());
    SHOW("last error after it", cudaGetLastError());
    SHOW("then", cudaGetLastError());
    void *args[] = {nullptr};
    SHOW("launch of a host function", cudaLaunchKernel((const void *)&main, dim3(1), dim3(1), args, 0, 0));
    SHOW("synchronize after the errors", cudaDeviceSynchronize());
    printf("error string: %s\n", cudaGetErrorString(cudaErrorInvalidValue));
    printf("error string of 12345: %s\n", cudaGetErrorString((cudaError_t)12345));
    CK(cudaFree(dx));
    CK(cudaFree(dy));
    CK(cudaFree(du));
    CK(cudaFree(du2));
    CK(cudaFree(nullptr));
    printf("basics: done\n");
    return 0;
}
