// Arrays, texture and surface objects: 2D copies into and out of arrays, point and linear
// sampling at texel centres (exact), a surface written by a kernel, pitched linear memory
// as a texture, a layered array filled with cudaMemcpy3D.
#include "check.h"

__global__ void sample(cudaTextureObject_t t, float *out, int w, int h, float dx) {
    int x = threadIdx.x, y = blockIdx.x;
    if (x < w && y < h) out[y * w + x] = tex2D<float>(t, x + 0.5f + dx, y + 0.5f);
}

__global__ void write_surface(cudaSurfaceObject_t s, int w, int h) {
    int x = threadIdx.x, y = blockIdx.x;
    if (x < w && y < h) surf2Dwrite<uchar4>(make_uchar4(x, y, x ^ y, 255), s, x * sizeof(uchar4), y);
}

__global__ void sample_layer(cudaTextureObject_t t, float *out, int w, int layer) {
    int x = threadIdx.x;
    out[x] = tex1DLayered<float>(t, x + 0.5f, layer);
}

int main() {
    const int W = 16, H = 8;
    float img[H][W];
    for (int y = 0; y < H; y++) for (int x = 0; x < W; x++) img[y][x] = y * 100.0f + x * 1.25f;
    cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();
    printf("channel desc of float: %d %d %d %d kind %d\n", fd.x, fd.y, fd.z, fd.w, (int)fd.f);
    cudaArray_t arr;
    CK(cudaMallocArray(&arr, &fd, W, H));
    CK(cudaMemcpy2DToArray(arr, 0, 0, img, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
    float back[H][W] = {};
    CK(cudaMemcpy2DFromArray(back, W * sizeof(float), arr, 0, 0, W * sizeof(float), H, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int y = 0; y < H; y++) for (int x = 0; x < W; x++) bad += back[y][x] != img[y][x];
    printf("array round trip mismatches: %d\n", bad);
    // The deprecated 1D form: a whole image, then one row from an offset.
    CK(cudaMemcpyToArray(arr, 0, 0, img, sizeof img, cudaMemcpyHostToDevice));
    float row[W];
    CK(cudaMemcpyFromArray(row, arr, 4 * sizeof(float), 2, (W - 4) * sizeof(float), cudaMemcpyDeviceToHost));
    printf("row from offset matches: %d\n", row[0] == img[2][4] && row[W - 5] == img[2][W - 1]);

    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = arr;
    cudaTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModeLinear;
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex;
    CK(cudaCreateTextureObject(&tex, &rd, &td, nullptr));
    float *d;
    CK(cudaMalloc(&d, sizeof img));
    sample<<<H, W>>>(tex, d, W, H, 0.0f);
    CK(cudaMemcpy(back, d, sizeof img, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int y = 0; y < H; y++) for (int x = 0; x < W; x++) bad += back[y][x] != img[y][x];
    printf("linear sampling at texel centres mismatches: %d\n", bad);
    // Halfway between two texels: the mean, within the 8-bit weight precision.
    sample<<<H, W>>>(tex, d, W, H, 0.5f);
    CK(cudaMemcpy(back, d, sizeof img, cudaMemcpyDeviceToHost));
    printf("halfway sample: %.4f (texels %.4f and %.4f)\n", back[3][5], img[3][5], img[3][6]);
    // Texels of different exponents (0 and 1.25): a float texture filters the values, not
    // their bits (cudaReadModeElementType is not the driver's READ_AS_INTEGER for floats).
    printf("halfway between %.4f and %.4f: %.4f\n", img[0][0], img[0][1], back[0][0]);
    CK(cudaDestroyTextureObject(tex));

    // A surface written by a kernel, read back through a 2D copy.
    cudaChannelFormatDesc u4 = cudaCreateChannelDesc<uchar4>();
    cudaArray_t sarr;
    CK(cudaMallocArray(&sarr, &u4, W, H, cudaArraySurfaceLoadStore));
    rd.res.array.array = sarr;
    cudaSurfaceObject_t surf;
    CK(cudaCreateSurfaceObject(&surf, &rd));
    write_surface<<<H, W>>>(surf, W, H);
    uchar4 px[H][W];
    CK(cudaMemcpy2DFromArray(px, W * sizeof(uchar4), sarr, 0, 0, W * sizeof(uchar4), H, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int y = 0; y < H; y++) for (int x = 0; x < W; x++) bad += px[y][x].x != x || px[y][x].y != y || px[y][x].z != (x ^ y) || px[y][x].w != 255;
    printf("surface write mismatches: %d\n", bad);
    CK(cudaDestroySurfaceObject(surf));
    SHOW("surface on an array without cudaArraySurfaceLoadStore", cudaCreateSurfaceObject(&surf, (rd.res.array.array = arr, &rd)));
    cudaGetLastError();

    // Pitched linear memory as a texture, point sampled.
    float *pitched;
    size_t pitch;
    CK(cudaMallocPitch(&pitched, &pitch, W * sizeof(float), H));
    CK(cudaMemcpy2D(pitched, pitch, img, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
    cudaResourceDesc pd = {};
    pd.resType = cudaResourceTypePitch2D;
    pd.res.pitch2D.devPtr = pitched;
    pd.res.pitch2D.desc = fd;
    pd.res.pitch2D.width = W;
    pd.res.pitch2D.height = H;
    pd.res.pitch2D.pitchInBytes = pitch;
    td.filterMode = cudaFilterModePoint;
    CK(cudaCreateTextureObject(&tex, &pd, &td, nullptr));
    sample<<<H, W>>>(tex, d, W, H, 0.0f);
    CK(cudaMemcpy(back, d, sizeof img, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int y = 0; y < H; y++) for (int x = 0; x < W; x++) bad += back[y][x] != img[y][x];
    printf("pitched texture mismatches: %d\n", bad);
    CK(cudaDestroyTextureObject(tex));

    // A layered 1D array filled by cudaMemcpy3D, one layer sampled.
    const int L = 3;
    float layers[L][W];
    for (int l = 0; l < L; l++) for (int x = 0; x < W; x++) layers[l][x] = l * 1000.0f + x;
    cudaArray_t larr;
    CK(cudaMalloc3DArray(&larr, &fd, make_cudaExtent(W, 0, L), cudaArrayLayered));
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(layers, W * sizeof(float), W, 1);
    p.dstArray = larr;
    p.extent = make_cudaExtent(W, 1, L);
    p.kind = cudaMemcpyHostToDevice;
    CK(cudaMemcpy3D(&p));
    rd.res.array.array = larr;
    CK(cudaCreateTextureObject(&tex, &rd, &td, nullptr));
    sample_layer<<<1, W>>>(tex, d, W, 2);
    CK(cudaMemcpy(row, d, sizeof row, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int x = 0; x < W; x++) bad += row[x] != layers[2][x];
    printf("layered sampling mismatches: %d\n", bad);
    CK(cudaDestroyTextureObject(tex));
    cudaChannelFormatDesc got;
    cudaExtent ext;
    unsigned flags;
    CK(cudaArrayGetInfo(&got, &ext, &flags, larr));
    printf("layered array info: %zux%zux%zu flags %u, %d-bit kind %d\n", ext.width, ext.height, ext.depth, flags, got.x, (int)got.f);
    CK(cudaFreeArray(sarr));
    SHOW("array of 3 channels", cudaMallocArray(&sarr, &(fd = cudaCreateChannelDesc(8, 8, 8, 0, cudaChannelFormatKindUnsigned)), W, H));
    cudaGetLastError();
    CK(cudaFreeArray(arr));
    CK(cudaFreeArray(larr));
    CK(cudaFree(pitched));
    CK(cudaFree(d));
    printf("textures: done\n");
    return 0;
}
