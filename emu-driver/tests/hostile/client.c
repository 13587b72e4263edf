/* A careless program's driver calls, for tests/hostile.rs. argv[1] picks the scene:
 *   fork       context, allocation and copies; fork; the child calls the driver (every
 *              call but cuDriverGetVersion answers 3) and exits; the parent goes on.
 *   forkexit   fork; the child makes failing calls and leaves with exit() (the driver
 *              writes its counters file).
 *   syncs N    N synchronous copies (no stream or context synchronisation), then prints
 *              "ready" and sleeps (to be killed); `syncs N exit` exits instead.
 *   copies     copies in a loop for ever (to be killed at any moment).
 *   hostmem    cuMemcpyHtoD from a page mapped PROT_NONE (the H200's driver dies of
 *              SIGSEGV there; so does this one, with a report).
 * Prints key=value lines. */
#include "../client_support/client.h"
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void *, size_t);
static CUresult (*cuDriverGetVersion)(int *);

static int setup(CUdeviceptr *d) {
    void *ctx = 0;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx) || cuMemAlloc_v2(d, 4096)) {
        printf("setup=failed\n");
        return 2;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (open_driver()) return 2;
    LOOKUP(cuMemcpyHtoD_v2);
    LOOKUP(cuDriverGetVersion);
    const char *scene = argc > 1 ? argv[1] : "";
    CUdeviceptr d = 0;
    static char buf[4096];
    if (setup(&d)) return 2;
    if (!strcmp(scene, "fork")) {
        for (int i = 0; i < 3; ++i) cuMemcpyHtoD_v2(d, buf, 64);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            CUdeviceptr e = 0;
            int v = 0;
            printf("child_alloc=%d\n", cuMemAlloc_v2(&e, 256));
            printf("child_copy=%d\n", cuMemcpyHtoD_v2(d, buf, 16));
            printf("child_init=%d\n", cuInit(0));
            printf("child_version=%d\n", cuDriverGetVersion(&v));
            fflush(stdout);
            _exit(0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        printf("child_status=%d\n", st);
        CUdeviceptr e = 0;
        printf("parent_alloc=%d\n", cuMemAlloc_v2(&e, 256));
        printf("parent_copy=%d\n", cuMemcpyHtoD_v2(d, buf, 16));
        return 0;
    }
    if (!strcmp(scene, "forkexit")) {
        /* As fork, but the child leaves with exit(): the driver's destructor writes its file. */
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            CUdeviceptr e = 0;
            for (int i = 0; i < 4; ++i) cuMemAlloc_v2(&e, 256);
            int v = 0;
            cuDriverGetVersion(&v);
            exit(0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        printf("child_pid=%d\nchild_status=%d\n", (int)pid, st);
        CUdeviceptr e = 0;
        cuMemAlloc_v2(&e, 256);
        cuMemcpyHtoD_v2(d, buf, 16);
        return 0;
    }
    if (!strcmp(scene, "syncs")) {
        int n = argc > 2 ? atoi(argv[2]) : 1;
        for (int i = 0; i < n; ++i) cuMemcpyHtoD_v2(d, buf, 128);
        printf("ready\n");
        fflush(stdout);
        if (argc > 3) return 0;
        sleep(60);
        return 0;
    }
    if (!strcmp(scene, "copies")) {
        printf("ready\n");
        fflush(stdout);
        for (;;) cuMemcpyHtoD_v2(d, buf, 128);
    }
    if (!strcmp(scene, "hostmem")) {
        void *p = mmap(0, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        printf("copying\n");
        fflush(stdout);
        printf("copy=%d\n", cuMemcpyHtoD_v2(d, p, 4096));
        return 0;
    }
    printf("scene=unknown\n");
    return 2;
}
