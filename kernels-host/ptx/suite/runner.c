/*
 * simtwin PTX instruction suite runner: loads suite.ptx through the CUDA driver API
 * (whichever libcuda.so.1 the loader finds: a real driver, or simtwin's), runs every case
 * of cases.txt over inputs generated here, and writes every output.
 *
 *   runner SUITE.ptx CASES.txt OUT.bin [--inputs IN.bin] [--only NAME] [--opt LEVEL]
 *
 * --opt loads the module with cuModuleLoadDataEx and CU_JIT_OPTIMIZATION_LEVEL = LEVEL
 * (0..4; without it, cuModuleLoadData: the JIT's default, 4).
 *
 * Inputs are deterministic (a fixed PRNG seeded by the case's name): per operand class,
 * its edge values first (every combination of edges for two operands when there is
 * room, random combinations of edges for three or more), then random values. Each
 * thread gets 4 input slots of 8 bytes; each writes 2 output slots of 8 bytes (zeroed
 * before the launch).
 *
 * OUT.bin: for each case in order, a record
 *   u32 name_len, name bytes, u32 threads, i32 status (CUresult of the launch and
 *   synchronisation; outputs are zero when it is not 0), threads * 16 bytes of outputs.
 * Exit: 0 when every case ran (a case's own failure is recorded, not fatal, unless the
 * context is lost), 1 on setup errors, 2 on usage errors.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream;
typedef unsigned long long CUdeviceptr;

static CUresult (*p_cuInit)(unsigned);
static CUresult (*p_cuDeviceGet)(CUdevice *, int);
static CUresult (*p_cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*p_cuCtxSetCurrent)(CUcontext);
static CUresult (*p_cuModuleLoadData)(CUmodule *, const void *);
static CUresult (*p_cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
static CUresult (*p_cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*p_cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*p_cuMemFree)(CUdeviceptr);
static CUresult (*p_cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
static CUresult (*p_cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
static CUresult (*p_cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
static CUresult (*p_cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    CUstream, void **, void **);
static CUresult (*p_cuCtxSynchronize)(void);
static CUresult (*p_cuGetErrorName)(CUresult, const char **);

static void *sym(void *lib, const char *name) {
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "runner: libcuda.so.1 has no %s\n", name);
        exit(1);
    }
    return p;
}

static const char *ename(CUresult r) {
    const char *s = "?";
    if (p_cuGetErrorName) p_cuGetErrorName(r, &s);
    return s;
}

#define CK(call)                                                                                        \
    do {                                                                                                \
        CUresult r_ = (call);                                                                           \
        if (r_ != 0) {                                                                                  \
            fprintf(stderr, "runner: %s failed: %s (%d)\n", #call, ename(r_), r_);                     \
            exit(1);                                                                                    \
        }                                                                                               \
    } while (0)

/* ---- inputs ------------------------------------------------------------------------- */

static uint64_t rng_state;
static uint64_t next64(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static const uint64_t E_F32[] = {
    0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x3f000000, 0x3fc00000, 0x40000000, 0xc0200000, 0x40400000,
    0x00000001, 0x007fffff, 0x80000001, 0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000,
    0x7fc00000, 0xffc00000, 0x7fc12345, 0x7f800001, 0xffa00001, 0x3f800001, 0x3f7fffff, 0x4b800001, 0x4f000000,
    0xcf000000, 0x4f800000, 0x5f000000, 0xdf000000, 0x5f800000, 0x477fe000, 0x477ff000, 0x33800000, 0x3eaaaaab};
static const uint64_t E_F64[] = {
    0x0000000000000000ull, 0x8000000000000000ull, 0x3ff0000000000000ull, 0xbff0000000000000ull,
    0x3fe0000000000000ull, 0x3ff8000000000000ull, 0x4000000000000000ull, 0xc004000000000000ull,
    0x0000000000000001ull, 0x000fffffffffffffull, 0x8000000000000001ull, 0x0010000000000000ull,
    0x7fefffffffffffffull, 0xffefffffffffffffull, 0x7ff0000000000000ull, 0xfff0000000000000ull,
    0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff8000012345678ull, 0x7ff0000000000001ull,
    0x3ff0000000000001ull, 0x3fefffffffffffffull, 0x41e0000000000000ull, 0xc1e0000000000000ull,
    0x41f0000000000000ull, 0x43e0000000000000ull, 0xc3e0000000000000ull, 0x43f0000000000000ull,
    0x47efffffe0000000ull, 0x47efffff00000000ull, 0x380fffffe0000000ull, 0x36a0000000000000ull,
    0x3fd5555555555555ull, 0x3e70000000000000ull};
static const uint64_t E_F16[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x3800, 0x3e00, 0x4000, 0x0001, 0x03ff, 0x8001,
                                 0x0400, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7e12, 0x7c01, 0x3c01,
                                 0x3bff, 0x3555, 0x5640, 0x1400};
static const uint64_t E_BF16[] = {0x0000, 0x8000, 0x3f80, 0xbf80, 0x3f00, 0x3fc0, 0x4000, 0x0001, 0x007f, 0x8001,
                                  0x0080, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7fc1, 0x7f81, 0x3f81,
                                  0x3f7f, 0x3eab, 0x4b80, 0x3380};
static const uint64_t E_INT[] = {0, 1, 2, 3, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000,
                                 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull, 0x7fffffffffffffffull,
                                 0x8000000000000000ull, 0xffffffffffffffffull, 0xfffffffffffffffeull,
                                 0xffffffff80000000ull, 0xffffffff7fffffffull, 0xffffffffffff8000ull,
                                 0xffffffffffffff80ull, 0xfffffffffffffff9ull, 7, 10, 0x12345678, 0xdeadbeefcafef00dull};
static const uint64_t E_SH[] = {0, 1, 2, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 0x7fffffff, 0xffffffff};
static const uint64_t E_LANE[] = {0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 0xffffffff};
static const uint64_t E_PRED[] = {0, 1};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

struct cls {
    const char *name;
    const uint64_t *edges;
    size_t n;
    int bits; /* width of the value */
};
static const struct cls CLASSES[] = {
    {"f32", E_F32, N_OF(E_F32), 32},   {"f64", E_F64, N_OF(E_F64), 64},     {"f16", E_F16, N_OF(E_F16), 16},
    {"bf16", E_BF16, N_OF(E_BF16), 16}, {"f16x2", E_F16, N_OF(E_F16), 32},  {"bf16x2", E_BF16, N_OF(E_BF16), 32},
    {"u8", E_INT, N_OF(E_INT), 8},     {"s8", E_INT, N_OF(E_INT), 8},       {"u16", E_INT, N_OF(E_INT), 16},
    {"s16", E_INT, N_OF(E_INT), 16},   {"u32", E_INT, N_OF(E_INT), 32},     {"s32", E_INT, N_OF(E_INT), 32},
    {"u64", E_INT, N_OF(E_INT), 64},   {"s64", E_INT, N_OF(E_INT), 64},     {"b16", E_INT, N_OF(E_INT), 16},
    {"b32", E_INT, N_OF(E_INT), 32},   {"b64", E_INT, N_OF(E_INT), 64},     {"sh", E_SH, N_OF(E_SH), 32},
    {"lane", E_LANE, N_OF(E_LANE), 32}, {"lut", E_INT, 8, 8},               {"pred", E_PRED, 2, 1},
    {"small", E_INT, 4, 6},            {"lut64", E_INT, 4, 64},
};

static const struct cls *find_class(const char *name) {
    for (size_t i = 0; i < N_OF(CLASSES); ++i)
        if (!strcmp(CLASSES[i].name, name)) return &CLASSES[i];
    fprintf(stderr, "runner: unknown input class %s\n", name);
    exit(2);
}

static uint64_t mask_bits(uint64_t v, int bits) { return bits >= 64 ? v : (v & ((1ull << bits) - 1)); }

/* A random value of a class: random bits, or (floats) a value near 1 with a random
   exponent, which exercises rounding more than random bits do. */
static uint64_t random_of(const struct cls *c) {
    uint64_t r = next64();
    if (!strcmp(c->name, "f32")) {
        if (r & 1) return (uint32_t)(r >> 32);
        uint32_t e = 127 + (int)((r >> 8) % 41) - 20;
        return ((uint64_t)((r >> 7) & 1) << 31) | ((uint64_t)e << 23) | ((r >> 32) & 0x7fffff);
    }
    if (!strcmp(c->name, "f64")) {
        if (r & 1) return next64();
        uint64_t e = 1023 + (int)((r >> 8) % 81) - 40;
        return ((r >> 7) & 1) << 63 | e << 52 | (next64() & 0xfffffffffffffull);
    }
    if (!strcmp(c->name, "f16") || !strcmp(c->name, "bf16")) {
        if (r & 1) return (r >> 16) & 0xffff;
        int bf = c->name[0] == 'b';
        uint64_t e = bf ? 127 + (int)((r >> 8) % 21) - 10 : 15 + (int)((r >> 8) % 21) - 10;
        return bf ? (((r >> 7) & 1) << 15 | e << 7 | ((r >> 32) & 0x7f)) : (((r >> 7) & 1) << 15 | e << 10 | ((r >> 32) & 0x3ff));
    }
    if (!strcmp(c->name, "f16x2") || !strcmp(c->name, "bf16x2")) {
        struct cls h = *c;
        h.name = c->name[0] == 'b' ? "bf16" : "f16";
        return random_of(&h) | random_of(&h) << 16;
    }
    if (!strcmp(c->name, "sh")) return (r & 3) == 0 ? (r >> 8) : (r >> 8) % 70;
    if (!strcmp(c->name, "lane")) return (r & 3) == 0 ? (r >> 8) & 0xffffffff : (r >> 8) % 40;
    if (!strcmp(c->name, "lut")) return (r >> 8) & 0xff;
    if (!strcmp(c->name, "pred")) return (r >> 9) & 1;
    if (!strcmp(c->name, "small")) return (r >> 8) % 41;
    if (!strcmp(c->name, "lut64")) return ((r >> 8) & 3) | ((r & 0x10) ? 0x100000000ull : 0);
    if ((r & 7) == 0) return mask_bits((r >> 20) % 300 - 150, c->bits); /* small values */
    return mask_bits(next64(), c->bits);
}

static uint64_t edge_of(const struct cls *c, size_t k) {
    uint64_t v = c->edges[k % c->n];
    if (!strcmp(c->name, "f16x2") || !strcmp(c->name, "bf16x2")) {
        /* both halves: the edge in the low half, the next edge up in the high half */
        return v | c->edges[(k + 1) % c->n] << 16;
    }
    return mask_bits(v, c->bits);
}

static void gen_inputs(const char *name, uint32_t threads, const struct cls **cl, int nin, uint64_t *in) {
    uint64_t h = 1469598103934665603ull;
    for (const char *p = name; *p; ++p) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    rng_state = h;
    memset(in, 0, (size_t)threads * 32);
    for (uint32_t t = 0; t < threads; ++t) {
        uint64_t *s = in + 4 * (size_t)t;
        if (nin == 1) {
            s[0] = t < cl[0]->n ? edge_of(cl[0], t) : random_of(cl[0]);
        } else if (nin == 2) {
            size_t n0 = cl[0]->n, n1 = cl[1]->n;
            if (t < n0 * n1 && n0 * n1 <= threads * 7 / 8) {
                s[0] = edge_of(cl[0], t / n1);
                s[1] = edge_of(cl[1], t % n1);
            } else {
                s[0] = random_of(cl[0]);
                s[1] = random_of(cl[1]);
            }
        } else {
            for (int k = 0; k < nin; ++k) {
                uint64_t r = next64();
                s[k] = (t < threads / 2) ? edge_of(cl[k], (size_t)(r % cl[k]->n)) : random_of(cl[k]);
            }
        }
    }
}

/* ---- main ------------------------------------------------------------------------ */

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "runner: cannot read %s\n", path);
        exit(1);
    }
    b[n] = 0;
    fclose(f);
    if (len) *len = (size_t)n;
    return b;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: runner SUITE.ptx CASES.txt OUT.bin [--inputs IN.bin] [--only NAME] [--opt LEVEL]\n");
        return 2;
    }
    const char *inputs_path = NULL, *only = NULL;
    long opt_level = -1;
    for (int i = 4; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--inputs")) inputs_path = argv[i + 1];
        else if (!strcmp(argv[i], "--only")) only = argv[i + 1];
        else if (!strcmp(argv[i], "--opt")) {
            char *end;
            opt_level = strtol(argv[i + 1], &end, 10);
            if (*end || opt_level < 0 || opt_level > 4) {
                fprintf(stderr, "runner: --opt takes 0..4, not %s\n", argv[i + 1]);
                return 2;
            }
        }
        else {
            fprintf(stderr, "runner: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "runner: %s\n", dlerror());
        return 1;
    }
    p_cuInit = sym(lib, "cuInit");
    p_cuDeviceGet = sym(lib, "cuDeviceGet");
    p_cuDevicePrimaryCtxRetain = sym(lib, "cuDevicePrimaryCtxRetain");
    p_cuCtxSetCurrent = sym(lib, "cuCtxSetCurrent");
    p_cuModuleLoadData = sym(lib, "cuModuleLoadData");
    p_cuModuleLoadDataEx = sym(lib, "cuModuleLoadDataEx");
    p_cuModuleGetFunction = sym(lib, "cuModuleGetFunction");
    p_cuMemAlloc = sym(lib, "cuMemAlloc_v2");
    p_cuMemFree = sym(lib, "cuMemFree_v2");
    p_cuMemcpyHtoD = sym(lib, "cuMemcpyHtoD_v2");
    p_cuMemcpyDtoH = sym(lib, "cuMemcpyDtoH_v2");
    p_cuMemsetD8 = sym(lib, "cuMemsetD8_v2");
    p_cuLaunchKernel = sym(lib, "cuLaunchKernel");
    p_cuCtxSynchronize = sym(lib, "cuCtxSynchronize");
    p_cuGetErrorName = sym(lib, "cuGetErrorName");

    char *ptx = read_file(argv[1], NULL);
    char *cases = read_file(argv[2], NULL);
    FILE *out = fopen(argv[3], "wb");
    FILE *inf = inputs_path ? fopen(inputs_path, "wb") : NULL;
    if (!out || (inputs_path && !inf)) {
        perror("runner: output");
        return 1;
    }
    CUdevice dev;
    CUcontext ctx;
    CK(p_cuInit(0));
    CK(p_cuDeviceGet(&dev, 0));
    CK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(p_cuCtxSetCurrent(ctx));
    CUmodule mod;
    if (opt_level >= 0) {
        int jit_opt[1] = {7}; /* CU_JIT_OPTIMIZATION_LEVEL */
        void *jit_val[1] = {(void *)(uintptr_t)opt_level};
        CK(p_cuModuleLoadDataEx(&mod, ptx, 1, jit_opt, jit_val));
    } else {
        CK(p_cuModuleLoadData(&mod, ptx));
    }
    const uint32_t max_threads = 4096;
    CUdeviceptr d_in, d_out;
    CK(p_cuMemAlloc(&d_in, (size_t)max_threads * 32));
    CK(p_cuMemAlloc(&d_out, (size_t)max_threads * 16));
    uint64_t *in = malloc((size_t)max_threads * 32), *res = malloc((size_t)max_threads * 16);
    int ran = 0, failed = 0;
    for (char *line = strtok(cases, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#' || !line[0]) continue;
        char name[128], ins[256], outs[128], bs[32];
        unsigned threads, block, bx, by = 1;
        /* The block: threads, or BXxBY for a 2-D block (its threads in CUDA's x-fastest order). */
        if (sscanf(line, "%127s %u %31s %255s %127s", name, &threads, bs, ins, outs) < 5 || sscanf(bs, "%ux%u", &bx, &by) < 1 ||
            (block = bx * by) == 0 || threads > max_threads || threads % block) {
            fprintf(stderr, "runner: bad case line: %s\n", line);
            return 2;
        }
        if (only && strcmp(only, name)) continue;
        const struct cls *cl[4];
        int nin = 0;
        if (strcmp(ins, "-")) {
            char *p = ins;
            while (p && *p && nin < 4) {
                char *comma = strchr(p, ',');
                if (comma) *comma = 0;
                cl[nin++] = find_class(p);
                p = comma ? comma + 1 : NULL;
            }
        }
        gen_inputs(name, threads, cl, nin, in);
        CUfunction f;
        CUresult st = p_cuModuleGetFunction(&f, mod, name);
        if (st == 0) st = p_cuMemcpyHtoD(d_in, in, (size_t)threads * 32);
        if (st == 0) st = p_cuMemsetD8(d_out, 0, (size_t)threads * 16);
        if (st == 0) {
            void *params[] = {&d_in, &d_out, &threads};
            st = p_cuLaunchKernel(f, threads / block, 1, 1, bx, by, 1, 0, NULL, params, NULL);
        }
        if (st == 0) st = p_cuCtxSynchronize();
        memset(res, 0, (size_t)threads * 16);
        if (st == 0) st = p_cuMemcpyDtoH(res, d_out, (size_t)threads * 16);
        if (st != 0) {
            fprintf(stderr, "runner: case %s: %s (%d)\n", name, ename(st), st);
            ++failed;
            memset(res, 0, (size_t)threads * 16);
        }
        uint32_t nl = (uint32_t)strlen(name);
        int32_t status = st;
        fwrite(&nl, 4, 1, out);
        fwrite(name, 1, nl, out);
        fwrite(&threads, 4, 1, out);
        fwrite(&status, 4, 1, out);
        fwrite(res, 16, threads, out);
        if (inf) {
            fwrite(&nl, 4, 1, inf);
            fwrite(name, 1, nl, inf);
            fwrite(&threads, 4, 1, inf);
            fwrite(in, 32, threads, inf);
        }
        ++ran;
        if (st == 700 || st == 719 || st == 710 || st == 702) {
            fprintf(stderr, "runner: the context is lost after %s\n", name);
            break;
        }
    }
    fclose(out);
    if (inf) fclose(inf);
    fprintf(stderr, "runner: %d cases ran, %d failed\n", ran, failed);
    p_cuMemFree(d_in);
    p_cuMemFree(d_out);
    return 0;
}
