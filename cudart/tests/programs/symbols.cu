// __device__, __constant__ and __managed__ variables through the symbol API.
#include "check.h"

__device__ int counters[8];
__constant__ float coeffs[4];
__device__ double unused_var;
__managed__ int managed_total;

__global__ void apply(float *out, int n) {
    int i = threadIdx.x;
    if (i < n) {
        out[i] = coeffs[0] + coeffs[1] * i + coeffs[2] * i * i + coeffs[3];
        atomicAdd(&counters[i % 8], 1);
        atomicAdd(&managed_total, i);
    }
}

int main() {
    float c[4] = {1.0f, 0.5f, 0.25f, -2.0f};
    CK(cudaMemcpyToSymbol(coeffs, c, sizeof c));
    int zeros[8] = {0};
    CK(cudaMemcpyToSymbol(counters, zeros, sizeof zeros));
    size_t size = 0;
    CK(cudaGetSymbolSize(&size, coeffs));
    printf("size of coeffs: %zu\n", size);
    CK(cudaGetSymbolSize(&size, unused_var));
    printf("size of unused_var: %zu\n", size);
    int *dcounters = nullptr;
    CK(cudaGetSymbolAddress((void **)&dcounters, counters));
    EXPECT(dcounters != nullptr);

    managed_total = 0;
    float *out;
    CK(cudaMalloc(&out, 64 * sizeof(float)));
    apply<<<1, 64>>>(out, 64);
    CK(cudaDeviceSynchronize());
    float h[64];
    CK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < 64; i++) {
        float want = c[0] + c[1] * i + c[2] * i * i + c[3];
        if (h[i] != want) bad++;
    }
    printf("polynomial mismatches: %d\n", bad);
    int got[8];
    CK(cudaMemcpyFromSymbol(got, counters, sizeof got));
    printf("counters: %d %d %d %d %d %d %d %d\n", got[0], got[1], got[2], got[3], got[4], got[5], got[6], got[7]);
    // Through the device address, too.
    CK(cudaMemcpy(got, dcounters, sizeof got, cudaMemcpyDeviceToHost));
    EXPECT(got[7] == 8);
    printf("managed total: %d\n", managed_total);
    // An offset copy and its bounds.
    int one = 41;
    CK(cudaMemcpyToSymbol(counters, &one, sizeof one, 7 * sizeof(int)));
    CK(cudaMemcpyFromSymbol(&one, counters, sizeof one, 7 * sizeof(int), cudaMemcpyDeviceToHost));
    printf("counters[7] after an offset copy: %d\n", one);
    SHOW("copy past the end of counters", cudaMemcpyToSymbol(counters, zeros, sizeof zeros, 4));
    cudaGetLastError();
    SHOW("copy to a symbol never registered", cudaMemcpyToSymbol(&one, zeros, 4));
    cudaGetLastError();
    SHOW("copy to a symbol with kind DeviceToHost", cudaMemcpyToSymbol(counters, zeros, 4, 0, cudaMemcpyDeviceToHost));
    cudaGetLastError();
    // Asynchronous symbol copies on a stream.
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    float c2[4] = {0, 0, 0, 3.0f};
    CK(cudaMemcpyToSymbolAsync(coeffs, c2, sizeof c2, 0, cudaMemcpyHostToDevice, s));
    float back[4];
    CK(cudaMemcpyFromSymbolAsync(back, coeffs, sizeof back, 0, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    printf("coeffs[3] after async copies: %g\n", back[3]);
    CK(cudaStreamDestroy(s));
    CK(cudaFree(out));
    printf("symbols: done\n");
    return 0;
}
