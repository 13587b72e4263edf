// Streams, events, host callbacks and host functions.
#include "check.h"
#include <atomic>
#include <cmath>

__global__ void scale(float *p, float f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] *= f;
}

static std::atomic<int> callbacks{0};
static std::atomic<int> host_funcs{0};
static cudaError_t callback_status = cudaErrorUnknown;

static void CUDART_CB on_done(cudaStream_t, cudaError_t status, void *user) {
    callback_status = status;
    callbacks += *(int *)user;
}
static void CUDART_CB host_fn(void *user) { host_funcs += *(int *)user; }

int main() {
    const int N = 1 << 16, S = 4;
    float *h;
    CK(cudaMallocHost(&h, N * S * sizeof(float)));
    for (int i = 0; i < N * S; i++) h[i] = (float)i;
    float *d;
    CK(cudaMalloc(&d, N * S * sizeof(float)));
    cudaStream_t st[S];
    int least = 0, greatest = 0;
    CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CK(cudaStreamCreate(&st[0]));
    CK(cudaStreamCreateWithFlags(&st[1], cudaStreamNonBlocking));
    CK(cudaStreamCreateWithPriority(&st[2], cudaStreamDefault, greatest));
    CK(cudaStreamCreateWithPriority(&st[3], cudaStreamNonBlocking, least));
    unsigned flags = 9;
    CK(cudaStreamGetFlags(st[1], &flags));
    printf("flags of a non-blocking stream: %u\n", flags);
    int prio = 1;
    CK(cudaStreamGetPriority(st[2], &prio));
    EXPECT(prio == greatest);
    cudaEvent_t start, stop, mid, notiming;
    CK(cudaEventCreate(&start));
    CK(cudaEventCreate(&stop));
    CK(cudaEventCreateWithFlags(&mid, cudaEventBlockingSync));
    CK(cudaEventCreateWithFlags(&notiming, cudaEventDisableTiming));
    CK(cudaEventRecord(start, 0));
    int one = 1, ten = 10;
    for (int k = 0; k < S; k++) {
        float *dk = d + k * N, *hk = h + k * N;
        CK(cudaMemcpyAsync(dk, hk, N * sizeof(float), cudaMemcpyHostToDevice, st[k]));
        scale<<<N / 256, 256, 0, st[k]>>>(dk, 2.0f + k, N);
        CK(cudaMemcpyAsync(hk, dk, N * sizeof(float), cudaMemcpyDeviceToHost, st[k]));
        CK(cudaStreamAddCallback(st[k], on_done, &one, 0));
        CK(cudaLaunchHostFunc(st[k], host_fn, &ten));
    }
    CK(cudaEventRecord(mid, st[1]));
    CK(cudaStreamWaitEvent(st[0], mid, 0));
    CK(cudaEventRecord(notiming, st[0]));
    CK(cudaEventRecord(stop, 0));
    CK(cudaEventSynchronize(stop));
    for (int k = 0; k < S; k++) CK(cudaStreamSynchronize(st[k]));
    CK(cudaEventSynchronize(mid));
    SHOW("query of a finished stream", cudaStreamQuery(st[0]));
    SHOW("query of a recorded event", cudaEventQuery(stop));
    float ms = -1;
    CK(cudaEventElapsedTime(&ms, start, stop));
    printf("elapsed time is a number >= 0: %d\n", ms >= 0 && std::isfinite(ms));
    SHOW("elapsed time from an event without timing", cudaEventElapsedTime(&ms, start, notiming));
    cudaGetLastError();
    int bad = 0;
    for (int k = 0; k < S; k++)
        for (int i = 0; i < N; i++)
            if (h[k * N + i] != (float)(k * N + i) * (2.0f + k)) bad++;
    printf("stream results mismatches: %d\n", bad);
    printf("callbacks: %d with status %s, host functions: %d\n", callbacks.load(), cudaGetErrorName(callback_status), host_funcs.load());
    SHOW("destroy of the legacy stream", cudaStreamDestroy(0));
    cudaGetLastError();
    for (int k = 0; k < S; k++) CK(cudaStreamDestroy(st[k]));
    CK(cudaEventDestroy(start));
    CK(cudaEventDestroy(stop));
    CK(cudaEventDestroy(mid));
    CK(cudaEventDestroy(notiming));
    CK(cudaFree(d));
    CK(cudaFreeHost(h));
    printf("streams: done\n");
    return 0;
}
