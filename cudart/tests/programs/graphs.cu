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

    // The same work built node by node: memset -> kernel -> kernel -> copy to the host ->
    // host function, then the kernel nodes' parameters changed in the instantiated graph.
    int *d2, *h2;
    CK(cudaMalloc(&d2, N * sizeof(int)));
    CK(cudaMallocHost(&h2, N * sizeof(int)));
    cudaGraph_t g2;
    CK(cudaGraphCreate(&g2, 0));
    cudaGraphNode_t ms, k1, k2, cp, hn;
    cudaMemsetParams msp = {};
    msp.dst = d2;
    msp.value = 0;
    msp.elementSize = 4;
    msp.width = N;
    msp.height = 1;
    CK(cudaGraphAddMemsetNode(&ms, g2, nullptr, 0, &msp));
    int n_arg = N;
    void *kargs[] = {&d2, &n_arg};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)step;
    kp.gridDim = dim3(N / 256);
    kp.blockDim = dim3(256);
    kp.kernelParams = kargs;
    CK(cudaGraphAddKernelNode(&k1, g2, &ms, 1, &kp));
    CK(cudaGraphAddKernelNode(&k2, g2, &k1, 1, &kp));
    cudaMemcpy3DParms cpp = {};
    cpp.srcPtr = make_cudaPitchedPtr(d2, N * sizeof(int), N, 1);
    cpp.dstPtr = make_cudaPitchedPtr(h2, N * sizeof(int), N, 1);
    cpp.extent = make_cudaExtent(N * sizeof(int), 1, 1);
    cpp.kind = cudaMemcpyDeviceToHost;
    CK(cudaGraphAddMemcpyNode(&cp, g2, &k2, 1, &cpp));
    cudaHostNodeParams hp = {count, nullptr};
    CK(cudaGraphAddHostNode(&hn, g2, &cp, 1, &hp));
    size_t nodes = 0;
    CK(cudaGraphGetNodes(g2, nullptr, &nodes));
    cudaGraph_t g3;
    CK(cudaGraphClone(&g3, g2));
    cudaGraphExec_t e2;
    CK(cudaGraphInstantiate(&e2, g3, 0));
    host_calls = 0;
    CK(cudaGraphLaunch(e2, 0));
    CK(cudaDeviceSynchronize());
    bad = 0;
    for (int i = 0; i < N; i++) bad += h2[i] != 3;
    printf("graph of %zu nodes built by hand: mismatches %d, host calls %d\n", nodes, bad, host_calls);
    SHOW("kernel node of a host function", cudaGraphAddKernelNode(&k1, g2, nullptr, 0, (kp.func = (void *)&main, &kp)));
    cudaGetLastError();
    CK(cudaGraphExecDestroy(e2));
    CK(cudaGraphDestroy(g2));
    CK(cudaGraphDestroy(g3));
    CK(cudaFree(d2));
    CK(cudaFreeHost(h2));

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
