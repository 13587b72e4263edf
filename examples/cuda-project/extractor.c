/* The example project's feature extractor, with a CPU and a CUDA backend that must
 * agree frame by frame: what simtwin's users write, and what `parity frames` checks.
 * It speaks parity's `twin` preset:
 *   extractor --backend cpu|cuda --reference R.yuv --distorted D.yuv --width W
 *             --height H [--bitdepth 8] --frames N [--features sse,sad] --output OUT.json
 * Features (luma of 8-bit 4:2:0 clips): sse (sse_y, psnr_y) and sad (sad_y, the mean
 * absolute difference). The CUDA backend loads features.fatbin from the extractor's
 * own directory through the driver API. Exit 0, or 2 with a message on any error. */
#include <cuda.h>
#include <libgen.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what) {
    fprintf(stderr, "extractor: %s\n", what);
    exit(2);
}

static void check(CUresult r, const char *call) {
    if (r != CUDA_SUCCESS) {
        const char *name = "?";
        cuGetErrorName(r, &name);
        fprintf(stderr, "extractor: %s failed: %s (%d)\n", call, name, (int)r);
        exit(2);
    }
}

struct cuda {
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CUdeviceptr a, b, acc;
};

static void cuda_open(struct cuda *c, const char *self, size_t n) {
    char path[4096], tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", self);
    snprintf(path, sizeof path, "%s/features.fatbin", dirname(tmp));
    check(cuInit(0), "cuInit");
    check(cuDeviceGet(&c->dev, 0), "cuDeviceGet");
    check(cuDevicePrimaryCtxRetain(&c->ctx, c->dev), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent");
    check(cuModuleLoad(&c->mod, path), "cuModuleLoad");
    check(cuModuleGetFunction(&c->fn, c->mod, "plane_diff"), "cuModuleGetFunction");
    check(cuMemAlloc(&c->a, n), "cuMemAlloc");
    check(cuMemAlloc(&c->b, n), "cuMemAlloc");
    check(cuMemAlloc(&c->acc, 2 * sizeof(unsigned long long)), "cuMemAlloc");
}

static void cuda_diff(struct cuda *c, const uint8_t *a, const uint8_t *b, int n, uint64_t out[2]) {
    check(cuMemcpyHtoD(c->a, a, (size_t)n), "cuMemcpyHtoD");
    check(cuMemcpyHtoD(c->b, b, (size_t)n), "cuMemcpyHtoD");
    check(cuMemsetD8(c->acc, 0, 2 * sizeof(unsigned long long)), "cuMemsetD8");
    CUdeviceptr sse = c->acc, sad = c->acc + sizeof(unsigned long long);
    void *args[] = {&c->a, &c->b, &n, &sse, &sad};
    unsigned blocks = (unsigned)((n + 255) / 256);
    if (blocks > 64) blocks = 64;
    check(cuLaunchKernel(c->fn, blocks, 1, 1, 256, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel");
    unsigned long long r[2];
    check(cuMemcpyDtoH(r, c->acc, sizeof r), "cuMemcpyDtoH");
    out[0] = r[0];
    out[1] = r[1];
}

static void cuda_close(struct cuda *c) {
    check(cuMemFree(c->a), "cuMemFree");
    check(cuMemFree(c->b), "cuMemFree");
    check(cuMemFree(c->acc), "cuMemFree");
    check(cuModuleUnload(c->mod), "cuModuleUnload");
    check(cuDevicePrimaryCtxRelease(c->dev), "cuDevicePrimaryCtxRelease");
}

static void cpu_diff(const uint8_t *a, const uint8_t *b, int n, uint64_t out[2]) {
    out[0] = out[1] = 0;
    for (int i = 0; i < n; i++) {
        int d = (int)a[i] - (int)b[i];
        out[0] += (uint64_t)(d * d);
        out[1] += (uint64_t)(d < 0 ? -d : d);
    }
}

int main(int argc, char **argv) {
    const char *backend = NULL, *ref = NULL, *dis = NULL, *output = NULL, *features = "sse,sad";
    int w = 0, h = 0, bitdepth = 8, frames = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) die("every option takes a value");
        if (!strcmp(a, "--backend")) backend = v;
        else if (!strcmp(a, "--reference")) ref = v;
        else if (!strcmp(a, "--distorted")) dis = v;
        else if (!strcmp(a, "--width")) w = atoi(v);
        else if (!strcmp(a, "--height")) h = atoi(v);
        else if (!strcmp(a, "--bitdepth")) bitdepth = atoi(v);
        else if (!strcmp(a, "--frames")) frames = atoi(v);
        else if (!strcmp(a, "--features")) features = v;
        else if (!strcmp(a, "--output")) output = v;
        else die("unknown option (see the comment at the top of extractor.c)");
        i++;
    }
    if (!backend || !ref || !dis || !output || w <= 0 || h <= 0 || frames <= 0) die("--backend, --reference, --distorted, --width, --height, --frames and --output are needed");
    if (bitdepth != 8) die("only 8-bit clips");
    int want_sse = strstr(features, "sse") != NULL, want_sad = strstr(features, "sad") != NULL;
    if (!want_sse && !want_sad) die("--features: sse and/or sad");
    int cuda = !strcmp(backend, "cuda");
    if (!cuda && strcmp(backend, "cpu")) die("--backend cpu or cuda");
    size_t y = (size_t)w * h, frame = y + 2 * (size_t)((w + 1) / 2) * ((h + 1) / 2);
    uint8_t *a = malloc(frame), *b = malloc(frame);
    FILE *fa = fopen(ref, "rb"), *fb = fopen(dis, "rb"), *fo = fopen(output, "w");
    if (!a || !b || !fa || !fb || !fo) die("cannot open the clips or the output");
    struct cuda c;
    if (cuda) cuda_open(&c, argv[0], y);
    fprintf(fo, "{\n  \"version\": \"example-1\",\n  \"frames\": [");
    for (int f = 0; f < frames; f++) {
        if (fread(a, 1, frame, fa) != frame || fread(b, 1, frame, fb) != frame) die("the clips hold fewer frames than --frames");
        uint64_t r[2];
        if (cuda) cuda_diff(&c, a, b, (int)y, r);
        else cpu_diff(a, b, (int)y, r);
        fprintf(fo, "%s\n    {\"frameNum\": %d, \"metrics\": {", f ? "," : "", f);
        if (want_sse) {
            double psnr = r[0] ? 10.0 * log10(255.0 * 255.0 * (double)y / (double)r[0]) : 60.0;
            fprintf(fo, "\"sse_y\": %.17g, \"psnr_y\": %.17g%s", (double)r[0], psnr, want_sad ? ", " : "");
        }
        if (want_sad) fprintf(fo, "\"sad_y\": %.17g", (double)r[1] / (double)y);
        fputs("}}", fo);
    }
    fputs("\n  ]\n}\n", fo);
    if (cuda) cuda_close(&c);
    if (fclose(fo)) die("cannot write the output");
    return 0;
}
