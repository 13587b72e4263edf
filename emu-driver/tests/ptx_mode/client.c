/* PTX mode's own client (emu-driver/tests/ptx_mode.rs): loads the image named on the
 * command line, runs every kernel of features.cu and prints `NAME=ok` or
 * `NAME=bad DETAIL` against results computed here; `load=CODE` when the image does not
 * load (and nothing else). Exit 0 when it ran, 2 when it could not. */
#include "../client_support/client.h"
#include <math.h>
#include <stdint.h>
#include <string.h>

static CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void *, size_t);
static CUresult (*cuMemsetD8_v2)(CUdeviceptr, unsigned char, size_t);
static CUresult (*cuModuleGetGlobal_v2)(CUdeviceptr *, size_t *, void *, const char *);

#define N 256
static void *mod;

static CUresult launch(const char *name, unsigned grid, unsigned block, unsigned smem, void **args) {
    void *f;
    CUresult r = cuModuleGetFunction(&f, mod, name);
    if (r) return r;
    r = cuLaunchKernel(f, grid, 1, 1, block, 1, 1, smem, 0, args, 0);
    if (r) return r;
    return cuCtxSynchronize();
}

static CUdeviceptr dev(const void *host, size_t bytes) {
    CUdeviceptr d = 0;
    cuMemAlloc_v2(&d, bytes);
    if (host) cuMemcpyHtoD_v2(d, host, bytes);
    else cuMemsetD8_v2(d, 0, bytes);
    return d;
}

static int collatz(unsigned long long n, int depth) {
    if (n <= 1 || depth > 500) return 0;
    return 1 + collatz((n & 1) ? 3 * n + 1 : n / 2, depth + 1);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    if (open_driver()) return 2;
    LOOKUP(cuMemcpyHtoD_v2);
    LOOKUP(cuMemsetD8_v2);
    LOOKUP(cuModuleGetGlobal_v2);
    void *image = read_image(argv[1]);
    if (!image) return 2;
    void *ctx;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx)) {
        printf("init=failed\n");
        return 2;
    }
    CUresult r = cuModuleLoadData(&mod, image);
    if (r) {
        printf("load=%d\n", r);
        return 0;
    }
    int in[N];
    for (int i = 0; i < N; ++i) in[i] = (i * 37 + 11) % 200 - 60;
    int n = N;

    { /* calls: recursion, struct by value, function pointers */
        CUdeviceptr din = dev(in, sizeof in), dout = dev(0, N * 8);
        void *args[] = {&din, &dout, &n};
        r = launch("calls", N / 64, 64, 0, args);
        long long out[N];
        cuMemcpyDtoH_v2(out, dout, sizeof out);
        int bad = -1;
        for (int i = 0; i < N && bad < 0; ++i) {
            double a = (double)in[i] * 3.0f + 1.0;
            int b = in[i] ^ 3;
            int f = (i & 1) ? in[i] * 7 : in[i] + 7;
            long long want = collatz((unsigned long long)in[i] + 1, 0) * 1000000LL + (long long)a + b + f;
            if (out[i] != want) bad = i;
        }
        if (r || bad >= 0) printf("calls=bad r=%d at %d\n", r, bad); else printf("calls=ok\n");
    }
    { /* local arrays */
        CUdeviceptr din = dev(in, sizeof in), dout = dev(0, sizeof in);
        void *args[] = {&din, &dout, &n};
        r = launch("local_array", N / 64, 64, 0, args);
        int out[N], bad = -1;
        cuMemcpyDtoH_v2(out, dout, sizeof out);
        for (int i = 0; i < N && bad < 0; ++i) {
            int a[32], s = 0;
            for (int k = 0; k < 32; ++k) a[k] = in[i] * k + (k ^ i);
            for (int k = 0; k < 32; ++k) s += a[(k * 7 + in[i]) & 31];
            if (out[i] != s) bad = i;
        }
        if (r || bad >= 0) printf("local_array=bad r=%d at %d\n", r, bad); else printf("local_array=ok\n");
    }
    { /* static and dynamic shared memory, shared atomics, barrier reductions */
        CUdeviceptr din = dev(in, sizeof in), dout = dev(0, sizeof in);
        void *args[] = {&din, &dout};
        r = launch("shared_mem", N / 64, 64, 64 * 4, args);
        int out[N], bad = -1;
        cuMemcpyDtoH_v2(out, dout, sizeof out);
        for (int b = 0; b < N / 64 && bad < 0; ++b) {
            int tile[64], dyn[64];
            unsigned hist[8] = {0};
            int cnt = 0, any = 0;
            for (int t = 0; t < 64; ++t) tile[t] = in[b * 64 + t];
            for (int t = 0; t < 64; ++t) dyn[t] = tile[63 - t] * 2;
            for (int t = 0; t < 64; ++t) {
                hist[dyn[t] & 7]++;
                cnt += dyn[t] > 100;
                any |= dyn[t] == 0;
            }
            for (int t = 0; t < 64; ++t) {
                int want = dyn[(t + 1) & 63] + tile[t] + (int)hist[t & 7] * 1000 + cnt * 100000 + any * 10000000;
                if (out[b * 64 + t] != want) bad = b * 64 + t;
            }
        }
        if (r || bad >= 0) printf("shared_mem=bad r=%d at %d\n", r, bad); else printf("shared_mem=ok\n");
    }
    { /* warp collectives */
        CUdeviceptr din = dev(in, sizeof in), dout = dev(0, sizeof in);
        void *args[] = {&din, &dout};
        r = launch("warp_ops", 1, 64, 0, args);
        int out[64], bad = -1;
        cuMemcpyDtoH_v2(out, dout, sizeof out);
        for (int t = 0; t < 64 && bad < 0; ++t) {
            int w = t & ~31, s = 0;
            unsigned bal = 0;
            for (int l = 0; l < 32; ++l) {
                s += in[w + l];
                if (in[w + l] & 1) bal |= 1u << l;
            }
            int lane = t & 31, seg = lane & ~7;
            int up = (lane - 3 >= seg) ? in[t - 3] : in[t];
            if (out[t] != s + __builtin_popcount(bal) * 7 + up) bad = t;
        }
        if (r || bad >= 0) printf("warp_ops=bad r=%d at %d\n", r, bad); else printf("warp_ops=ok\n");
    }
    { /* initialized __constant__ values (folded where unwritten), then written ones */
        CUdeviceptr din = dev(in, sizeof in), dplain = dev(0, N * 4), dloops = dev(0, N * 4), dc;
        size_t bytes;
        int bad = -1;
        const char *why = "";
        r = 0;
        for (int round = 0; round < 3 && !r && bad < 0; ++round) {
            /* round 1 writes other values; round 2 writes the initial ones back */
            int taps = round == 1 ? 3 : 5;
            float gain[2] = {round == 1 ? -2.0f : 1.5f, round == 1 ? 0.5f : -0.25f};
            if (round) {
                if ((r = cuModuleGetGlobal_v2(&dc, &bytes, mod, "c_taps")) || (r = cuMemcpyHtoD_v2(dc, &taps, 4))) break;
                if ((r = cuModuleGetGlobal_v2(&dc, &bytes, mod, "c_gain")) || (r = cuMemcpyHtoD_v2(dc, gain, 8))) break;
            }
            void *pa[] = {&din, &dplain, &n};
            void *la[] = {&din, &dloops};
            if ((r = launch("const_plain", N / 64, 64, 0, pa)) || (r = launch("const_loops", N / 64, 64, 0, la))) break;
            float po[N];
            int lo[N];
            cuMemcpyDtoH_v2(po, dplain, sizeof po);
            cuMemcpyDtoH_v2(lo, dloops, sizeof lo);
            for (int i = 0; i < N && bad < 0; ++i) {
                int s = 0, b = i & ~63, t = i & 63, u = 0, w = 0;
                for (int k = 0; k < taps; ++k) s += in[(i + k) % N];
                for (int k = 0; k < taps; ++k) u += in[b + ((t + k) & 63)];
                for (int k = 0; k < taps; ++k) w += in[b + ((t + 1 + k) & 63)];
                /* the shuffle reads lane+1 within the warp; the warp's last lane its own */
                int want = (t & 31) == 31 ? 2 * u : u + w;
                if (po[i] != (float)s * gain[0] + gain[1]) bad = i, why = "const_plain";
                else if (lo[i] != want) bad = i, why = "const_loops";
            }
            if (bad >= 0) printf("const_fold=bad round %d %s at %d\n", round, why, bad);
        }
        if (r) printf("const_fold=bad r=%d\n", r); else if (bad < 0) printf("const_fold=ok\n");
    }
    { /* global atomics */
        float fin[N];
        for (int i = 0; i < N; ++i) fin[i] = (float)(in[i]) / 8.0f;
        CUdeviceptr din = dev(fin, sizeof fin), dfs = dev(0, 4), dus = dev(0, 8), dmax = dev(0, 4);
        int lo = -1000000;
        cuMemcpyHtoD_v2(dmax, &lo, 4);
        void *args[] = {&din, &dfs, &dus, &dmax, &n};
        r = launch("atomics", N / 64, 64, 0, args);
        float fs;
        unsigned long long us;
        int mx;
        cuMemcpyDtoH_v2(&fs, dfs, 4);
        cuMemcpyDtoH_v2(&us, dus, 8);
        cuMemcpyDtoH_v2(&mx, dmax, 4);
        float wf = 0;
        unsigned long long wu = 0;
        int wm = lo;
        for (int i = 0; i < N; ++i) {
            wf += fin[i] > 0 ? 1.0f : 2.0f;
            /* the device's conversion saturates: a negative value gives 0 */
            wu += fin[i] * 1000.0f <= 0 ? 0 : (unsigned long long)(fin[i] * 1000.0f);
            int v = (int)(fin[i] * 100.0f);
            if (v > wm) wm = v;
        }
        if (r || fs != wf || us != wu || mx != wm) printf("atomics=bad r=%d %g/%g %llu/%llu %d/%d\n", r, fs, wf, us, wu, mx, wm);
        else printf("atomics=ok\n");
    }
    { /* 64-bit integer and double arithmetic */
        double x[N];
        for (int i = 0; i < N; ++i) x[i] = in[i] * 0.37 + 0.001 * i;
        CUdeviceptr din = dev(x, sizeof x), dout = dev(0, sizeof x), dq = dev(0, N * 8);
        void *args[] = {&din, &dout, &dq, &n};
        r = launch("math64", N / 64, 64, 0, args);
        double out[N];
        unsigned long long q[N];
        cuMemcpyDtoH_v2(out, dout, sizeof out);
        cuMemcpyDtoH_v2(q, dq, sizeof q);
        int bad = -1;
        for (int i = 0; i < N && bad < 0; ++i) {
            double w = sqrt(fabs(x[i])) * x[i] + 1.0 / (x[i] + 3.0);
            unsigned long long a = (unsigned long long)(fabs(x[i]) * 1e12) + 12345;
            unsigned long long wq = a / 7 + a % 1000003 + (unsigned long long)(((unsigned __int128)a * 0x9e3779b97f4a7c15ull) >> 64);
            if (memcmp(&out[i], &w, 8) || q[i] != wq) bad = i;
        }
        if (r || bad >= 0) printf("math64=bad r=%d at %d\n", r, bad); else printf("math64=ok\n");
    }
    { /* printf and malloc: the text goes to stdout through the driver */
        fflush(stdout);
        void *args[] = {&n};
        r = launch("say", 2, 32, 0, args);
        fflush(stdout);
        printf("say=%s\n", r ? "bad" : "ok");
    }
    { /* a failed device assert: CUDA_ERROR_ASSERT from the synchronisation, sticky */
        int three = 3;
        void *args[] = {&three};
        r = launch("checks", 1, 32, 0, args);
        printf("assert=%d\n", r);
    }
    return 0;
}
