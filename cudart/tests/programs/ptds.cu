// Built with --default-stream per-thread: stream 0 is each host thread's own stream, and
// the runtime is called through its _ptsz/_ptds entry points.
#include "check.h"
#include <thread>
#include <vector>

__global__ void fill(int *p, int v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = v + i;
}

static int worker(int t) {
    const int N = 4096;
    int *d;
    if (cudaMalloc(&d, N * sizeof(int)) != cudaSuccess) return 1;
    fill<<<N / 128, 128>>>(d, t * 100000, N);
    if (cudaGetLastError() != cudaSuccess) return 2;
    std::vector<int> h(N);
    cudaMemcpyAsync(h.data(), d, N * sizeof(int), cudaMemcpyDeviceToHost, 0);
    if (cudaStreamSynchronize(0) != cudaSuccess) return 3;
    for (int i = 0; i < N; i++) if (h[i] != t * 100000 + i) return 4;
    if (cudaMemset(d, 0, N * sizeof(int)) != cudaSuccess) return 5;
    if (cudaMemcpy(h.data(), d, N * sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess) return 6;
    for (int i = 0; i < N; i++) if (h[i] != 0) return 7;
    cudaFree(d);
    return 0;
}

int main() {
    std::vector<std::thread> ts;
    int results[4] = {-1, -1, -1, -1};
    for (int t = 0; t < 4; t++) ts.emplace_back([t, &results] { results[t] = worker(t); });
    for (auto &t : ts) t.join();
    printf("threads: %d %d %d %d\n", results[0], results[1], results[2], results[3]);
    SHOW("per-thread stream query", cudaStreamQuery(cudaStreamPerThread));
    CK(cudaDeviceSynchronize());
    printf("ptds: done\n");
    return 0;
}
