/* The cost of simtwin's pass-through per driver call (issue 12, item 1).
 *
 *   passthrough-overhead [--calls N] [--reps R] [--json FILE] REAL_LIBCUDA SIMTWIN_LIB_DIR
 *
 * times N calls of three cheap entry points (cuCtxGetDevice, cuPointerGetAttribute of a
 * device allocation's memory type, cuStreamQuery of an idle stream), R times each, in two
 * child processes: one calling REAL_LIBCUDA directly, one calling SIMTWIN_LIB_DIR/
 * libcuda.so.1 with EMU_CUDA_REAL=REAL_LIBCUDA (every call forwarded and counted). Prints
 * the median ns per call of each and their difference (the pass-through's overhead);
 * --json FILE writes the same figures (schema simtwin-passthrough-overhead/1).
 *
 * Every timed call must answer CUDA_SUCCESS: a driver that cannot do the setup or the
 * calls is an error (exit 1, naming the call and its code); bad arguments exit 2.
 * REAL_LIBCUDA may not be simtwin's emulated driver (it exports simtwin_emulated_driver).
 * Build: cc -O2 -o passthrough-overhead passthrough-overhead.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;
#define CU_POINTER_ATTRIBUTE_MEMORY_TYPE 2
#define CU_MEMORYTYPE_DEVICE 2

enum { ENTRIES = 3, MAX_REPS = 64 };
static const char *const ENTRY_NAMES[ENTRIES] = {"cuCtxGetDevice", "cuPointerGetAttribute", "cuStreamQuery"};

/* What a child sends back: status 0 and ns per call per entry and repetition, or an error. */
struct result {
    int status;
    char error[256];
    double ns[ENTRIES][MAX_REPS];
};

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n) {
    double s[MAX_REPS];
    memcpy(s, v, sizeof(double) * (size_t)n);
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

#define FAIL(r, ...)                                               \
    do {                                                           \
        snprintf((r)->error, sizeof((r)->error), __VA_ARGS__);     \
        (r)->status = 1;                                           \
        return;                                                    \
    } while (0)

/* Resolves `name` from `h` into `fp` or fails. */
#define SYM(r, h, fp, name)                                                          \
    do {                                                                             \
        *(void **)(&fp) = dlsym(h, name);                                            \
        if (!fp) FAIL(r, "%s has no %s", lib, name);                                 \
    } while (0)

#define CHECK(r, call, name)                                                         \
    do {                                                                             \
        CUresult rc_ = (call);                                                       \
        if (rc_ != 0) FAIL(r, "%s answered %d (through %s)", name, rc_, lib);        \
    } while (0)

/* In the child: loads `lib`, sets up a context, an allocation and a stream, times the
 * calls. `direct`: `lib` is the real driver, which may not be simtwin's. */
static void measure(const char *lib, int direct, long calls, int reps, struct result *r) {
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) FAIL(r, "cannot load %s: %s", lib, dlerror());
    if (direct && dlsym(h, "simtwin_emulated_driver")) FAIL(r, "%s is simtwin's emulated driver, not a real one", lib);
    CUresult (*init)(unsigned), (*dev_get)(CUdevice *, int), (*retain)(CUcontext *, CUdevice), (*set_current)(CUcontext);
    CUresult (*alloc)(CUdeviceptr *, size_t), (*free_)(CUdeviceptr), (*stream_create)(CUstream *, unsigned), (*stream_destroy)(CUstream);
    CUresult (*release)(CUdevice), (*ctx_get_device)(CUdevice *), (*ptr_attr)(void *, int, CUdeviceptr), (*stream_query)(CUstream);
    SYM(r, h, init, "cuInit");
    SYM(r, h, dev_get, "cuDeviceGet");
    SYM(r, h, retain, "cuDevicePrimaryCtxRetain");
    SYM(r, h, set_current, "cuCtxSetCurrent");
    SYM(r, h, alloc, "cuMemAlloc_v2");
    SYM(r, h, free_, "cuMemFree_v2");
    SYM(r, h, stream_create, "cuStreamCreate");
    SYM(r, h, stream_destroy, "cuStreamDestroy_v2");
    SYM(r, h, release, "cuDevicePrimaryCtxRelease_v2");
    SYM(r, h, ctx_get_device, "cuCtxGetDevice");
    SYM(r, h, ptr_attr, "cuPointerGetAttribute");
    SYM(r, h, stream_query, "cuStreamQuery");
    CUdevice d;
    CUcontext ctx;
    CUdeviceptr p;
    CUstream s;
    CHECK(r, init(0), "cuInit");
    CHECK(r, dev_get(&d, 0), "cuDeviceGet");
    CHECK(r, retain(&ctx, d), "cuDevicePrimaryCtxRetain");
    CHECK(r, set_current(ctx), "cuCtxSetCurrent");
    CHECK(r, alloc(&p, 1 << 20), "cuMemAlloc_v2");
    CHECK(r, stream_create(&s, 0), "cuStreamCreate");
    unsigned type = 0;
    CHECK(r, ptr_attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p), "cuPointerGetAttribute");
    if (type != CU_MEMORYTYPE_DEVICE) FAIL(r, "cuPointerGetAttribute: memory type %u, expected device (%d)", type, CU_MEMORYTYPE_DEVICE);
    for (int e = 0; e < ENTRIES; e++) {
        for (int k = -1; k < reps; k++) { /* k = -1: warm-up */
            long n = k < 0 ? calls / 10 + 1 : calls;
            CUresult bad = 0;
            double t0 = now_ns();
            for (long i = 0; i < n; i++) {
                CUresult rc;
                switch (e) {
                case 0: rc = ctx_get_device(&d); break;
                case 1: rc = ptr_attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p); break;
                default: rc = stream_query(s); break;
                }
                bad |= rc;
            }
            double t1 = now_ns();
            if (bad) FAIL(r, "%s failed while timed (through %s)", ENTRY_NAMES[e], lib);
            if (k >= 0) r->ns[e][k] = (t1 - t0) / (double)n;
        }
    }
    CHECK(r, stream_destroy(s), "cuStreamDestroy_v2");
    CHECK(r, free_(p), "cuMemFree_v2");
    CHECK(r, release(d), "cuDevicePrimaryCtxRelease_v2");
    r->status = 0;
}

/* Runs `measure` in a child (its driver stays out of this process) with EMU_CUDA_REAL
 * set to `real` when not NULL. */
static int run_child(const char *lib, const char *real, long calls, int reps, struct result *out) {
    int fd[2];
    if (pipe(fd) != 0) {
        perror("pipe");
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        static struct result r;
        memset(&r, 0, sizeof r);
        unsetenv("EMU_CUDA_COUNTS");
        if (real) setenv("EMU_CUDA_REAL", real, 1); else unsetenv("EMU_CUDA_REAL");
        measure(lib, real == NULL, calls, reps, &r);
        const char *b = (const char *)&r;
        size_t left = sizeof r;
        while (left > 0) {
            ssize_t w = write(fd[1], b, left);
            if (w <= 0) _exit(3);
            b += w;
            left -= (size_t)w;
        }
        _exit(0);
    }
    close(fd[1]);
    char *b = (char *)out;
    size_t got = 0;
    while (got < sizeof *out) {
        ssize_t n = read(fd[0], b + got, sizeof *out - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    if (got != sizeof *out) {
        snprintf(out->error, sizeof out->error, "the child measuring %s ended without a result (%s %d)", lib,
                 WIFSIGNALED(st) ? "signal" : "exit status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        out->status = 1;
    }
    return 0;
}

static int usage(void) {
    fprintf(stderr, "usage: passthrough-overhead [--calls N] [--reps R] [--json FILE] REAL_LIBCUDA SIMTWIN_LIB_DIR\n");
    return 2;
}

int main(int argc, char **argv) {
    long calls = 1000000;
    int reps = 5;
    const char *json = NULL;
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (i + 1 >= argc) return usage();
        char *end;
        if (!strcmp(argv[i], "--calls")) {
            calls = strtol(argv[i + 1], &end, 10);
            if (*end || calls < 1 || calls > 1000000000L) return usage();
        } else if (!strcmp(argv[i], "--reps")) {
            reps = (int)strtol(argv[i + 1], &end, 10);
            if (*end || reps < 1 || reps > MAX_REPS) return usage();
        } else if (!strcmp(argv[i], "--json")) {
            json = argv[i + 1];
        } else {
            return usage();
        }
    }
    if (argc - i != 2) return usage();
    const char *real = argv[i];
    char simtwin[4096];
    if (snprintf(simtwin, sizeof simtwin, "%s/libcuda.so.1", argv[i + 1]) >= (int)sizeof simtwin) return usage();
    char real_abs[4096], simtwin_abs[4096];
    if (!realpath(real, real_abs) || !realpath(simtwin, simtwin_abs)) {
        fprintf(stderr, "passthrough-overhead: %s or %s does not exist\n", real, simtwin);
        return 2;
    }
    if (!strcmp(real_abs, simtwin_abs)) {
        fprintf(stderr, "passthrough-overhead: %s is simtwin's driver itself, not a real one\n", real);
        return 2;
    }
    static struct result direct, through;
    if (run_child(real_abs, NULL, calls, reps, &direct) || run_child(simtwin_abs, real_abs, calls, reps, &through)) return 1;
    for (const struct result *r = &direct; r; r = r == &direct ? &through : NULL) {
        if (r->status) {
            fprintf(stderr, "passthrough-overhead: %s: %s\n", r == &direct ? "direct" : "through simtwin", r->error);
            return 1;
        }
    }
    FILE *j = NULL;
    if (json && !(j = fopen(json, "w"))) {
        fprintf(stderr, "passthrough-overhead: cannot write %s: %s\n", json, strerror(errno));
        return 2;
    }
    printf("ns per call, median of %d x %ld calls\n", reps, calls);
    printf("real driver: %s\nthrough:     %s (EMU_CUDA_REAL)\n\n", real_abs, simtwin_abs);
    printf("%-24s %12s %16s %12s %8s\n", "entry point", "real", "pass-through", "overhead", "ratio");
    if (j) fprintf(j, "{\"schema\": \"simtwin-passthrough-overhead/1\", \"real\": \"%s\", \"simtwin\": \"%s\", \"calls\": %ld, \"reps\": %d, \"entries\": {", real_abs, simtwin_abs, calls, reps);
    for (int e = 0; e < ENTRIES; e++) {
        double a = median(direct.ns[e], reps), b = median(through.ns[e], reps);
        printf("%-24s %12.1f %16.1f %12.1f %8.2f\n", ENTRY_NAMES[e], a, b, b - a, b / a);
        if (j) {
            fprintf(j, "%s\"%s\": {\"real_ns\": %.3f, \"passthrough_ns\": %.3f, \"overhead_ns\": %.3f, \"real_ns_reps\": [", e ? ", " : "", ENTRY_NAMES[e], a, b, b - a);
            for (int k = 0; k < reps; k++) fprintf(j, "%s%.3f", k ? ", " : "", direct.ns[e][k]);
            fprintf(j, "], \"passthrough_ns_reps\": [");
            for (int k = 0; k < reps; k++) fprintf(j, "%s%.3f", k ? ", " : "", through.ns[e][k]);
            fprintf(j, "]}");
        }
    }
    if (j) {
        fprintf(j, "}}\n");
        if (fclose(j) != 0) {
            fprintf(stderr, "passthrough-overhead: cannot write %s\n", json);
            return 2;
        }
    }
    return 0;
}
