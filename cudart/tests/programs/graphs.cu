// Stream capture into a graph, launched three times; the stream-ordered allocator; the
// driver's entry points through cudaGetDriverEntryPoint.
#include "check.h"
#include <cuda.h>

__global__ void step(int *p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = p[i] * 2 + 1;
}

static int host_calls = 0;
static void CUDART_CB count(void *) { host_calls++; }

int main() {
    const int N = 4096;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int *d, h[N];
    CK(cudaMallocAsync(&d, N * sizeof(int), s));
    CK(cudaMemsetAsync(d, 0, N * sizeof(int), s));
    CK(cudaStreamSynchronize(s));

    cudaStreamCaptureStatus st;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CK(cudaStreamIsCapturing(s, &st));
    printf("capturing: %d\n", (int)st);
    step<<<N / 256, 256, 0, s>>>(d, N);
    step<<<N / 256, 256, 0, s>>>(d, N);
    CK(cudaLaunchHostFunc(s, count, nullptr));
    cudaGraph_t g;
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaStreamIsCapturing(s, &st));
    printf("capturing after the end: %d\n", (int)st);
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    printf("captured work did not run: %d\n", h[0] == 0 && host_calls == 0);
    cudaGraphExec_t e;
    CK(cudaGraphInstantiate(&e, g, 0));
    for (int k = 0; k < 3; k++) CK(cudaGraphLaunch(e, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += h[i] != 63;  // six steps of x*2+1 from 0
    printf("graph launched three times: mismatches %d, host calls %d\n", bad, host_calls);
    CK(cudaGraphExecDestroy(e));
    CK(cudaGraphDestroy(g));
    CK(cudaFreeAsync(d, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaStreamDestroy(s));

    void *fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    CK(cudaGetDriverEntryPointByVersion("cuDeviceGetCount", &fn, 12000, cudaEnableDefault, &q));
    int count_from_driver = -1;
    CK((cudaError_t)((CUresult(*)(int *))fn)(&count_from_driver));
    int n = 0;
    CK(cudaGetDeviceCount(&n));
    printf("driver entry point: status %d, device counts agree: %d\n", (int)q, count_from_driver == n);
    CK(cudaGetDriverEntryPointByVersion("cuNoSuchFunction", &fn, 12000, cudaEnableDefault, &q));
    printf("unknown entry point: status %d, null: %d\n", (int)q, fn == nullptr);
    printf("graphs: done\n");
    return 0;
}
