/* A client of the CUDA virtual-memory API, compiled against the toolkit's own cuda.h and
 * linked directly against libcuda.so.1 (no dlopen: cuMemCreate, cuMemMap, ... resolve at
 * load time). One physical allocation is mapped three times: twice side by side in one
 * reservation and once in a second reservation. Input written with cuMemcpyHtoD through
 * the first view feeds the fixture kernel warp_scan (kernels.cu, argv[1]), which writes
 * through the first view too; the result is read back through the other two and checked
 * against a CPU scan. The allocation is then exported as a POSIX file descriptor and
 * handed (SCM_RIGHTS) to a child process, which imports it, maps it, checks the scan and
 * writes a marker that the parent reads through its own mapping. Finally the handle is
 * released while still mapped: the memory stays usable until the last unmap.
 * Exit 0 only if every check holds; each check prints one line. */
#include <cuda.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 4096u
#define BLOCK 256u
#define MARKER 0x5eedf00du

static int failures;
static const char *who = "vmm_client";

#define CK(call) do { CUresult r_ = (call); if (r_ != CUDA_SUCCESS) { \
    const char *n_ = "?"; cuGetErrorName(r_, &n_); \
    fprintf(stderr, "%s: %s failed: %d %s (line %d)\n", who, #call, (int)r_, n_, __LINE__); \
    exit(2); } } while (0)

static void check(const char *what, int ok)
{
    printf("%s: %s: %s\n", who, what, ok ? "ok" : "MISMATCH");
    if (!ok)
        failures++;
}

static int fcntl_ok(int fd)
{
    return fcntl(fd, F_GETFD) >= 0;
}

static CUmemAllocationProp device_prop(CUmemAllocationHandleType types)
{
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    p.requestedHandleTypes = types;
    return p;
}

static void set_rw(CUdeviceptr va, size_t size)
{
    CUmemAccessDesc d;
    memset(&d, 0, sizeof d);
    d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    d.location.id = 0;
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CK(cuMemSetAccess(va, size, &d, 1));
}

static unsigned input(unsigned i)
{
    return i * 2654435761u ^ (i >> 3);
}

/* The warp-wise inclusive scan warp_scan computes. */
static int scan_ok(const unsigned *out)
{
    for (unsigned w = 0; w < N; w += 32) {
        unsigned acc = 0;
        for (unsigned l = 0; l < 32; l++) {
            acc += input(w + l);
            if (out[w + l] != acc)
                return 0;
        }
    }
    return 1;
}

static void context(void)
{
    CUdevice dev;
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
}

static size_t granularity(void)
{
    size_t g = 0;
    CUmemAllocationProp p = device_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    CK(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    return g;
}

/* The child: receives the descriptor, imports it, reads the scan, writes the marker. */
static int child(int sock)
{
    who = "vmm_client(child)";
    char c;
    char ctl[CMSG_SPACE(sizeof(int))];
    struct iovec iov = { &c, 1 };
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl;
    m.msg_controllen = sizeof ctl;
    if (recvmsg(sock, &m, 0) != 1 || !CMSG_FIRSTHDR(&m)) {
        fprintf(stderr, "%s: no descriptor received\n", who);
        return 2;
    }
    int fd;
    memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
    context();
    size_t g = granularity();
    CUmemGenericAllocationHandle h;
    CK(cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd);
    CUmemAllocationProp p;
    CK(cuMemGetAllocationPropertiesFromHandle(&p, h));
    check("imported handle is a device allocation", p.type == CU_MEM_ALLOCATION_TYPE_PINNED &&
          p.location.type == CU_MEM_LOCATION_TYPE_DEVICE && p.location.id == 0);
    CUdeviceptr va;
    CK(cuMemAddressReserve(&va, g, 0, 0, 0));
    CK(cuMemMap(va, g, 0, h, 0));
    set_rw(va, g);
    unsigned *out = malloc(N * 4);
    CK(cuMemcpyDtoH(out, va + N * 4, N * 4));
    check("child reads the parent's scan", scan_ok(out));
    CK(cuMemsetD32(va + 2 * N * 4, MARKER, 16));
    CK(cuCtxSynchronize());
    CK(cuMemUnmap(va, g));
    CK(cuMemRelease(h));
    CK(cuMemAddressFree(va, g));
    free(out);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--child") == 0)
        return child(atoi(argv[2]));
    if (argc != 2) {
        fprintf(stderr, "usage: vmm_client KERNELS.fatbin\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 2; }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *image = calloc(1, (size_t)len + 16);
    if (fread(image, 1, (size_t)len, f) != (size_t)len) { perror("read"); return 2; }
    fclose(f);

    context();
    size_t g = granularity();
    check("granularity is a power of two of at least a page", g >= 4096 && (g & (g - 1)) == 0);
    if (2 * N * 4 + 64 > g) {
        fprintf(stderr, "%s: granularity %zu too small for the test\n", who, g);
        return 2;
    }

    /* One physical allocation, three views. */
    CUmemAllocationProp prop = device_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    CUmemGenericAllocationHandle h;
    CK(cuMemCreate(&h, g, &prop, 0));
    CUdeviceptr a, b;
    CK(cuMemAddressReserve(&a, 2 * g, 0, 0, 0));
    CK(cuMemAddressReserve(&b, g, 0, 0, 0));
    CK(cuMemMap(a, g, 0, h, 0));
    CK(cuMemMap(a + g, g, 0, h, 0));
    CK(cuMemMap(b, g, 0, h, 0));
    set_rw(a, 2 * g); /* one call over both views of the first reservation */
    set_rw(b, g);

    unsigned *in = malloc(N * 4), *out = malloc(N * 4);
    for (unsigned i = 0; i < N; i++)
        in[i] = input(i);
    CK(cuMemcpyHtoD(a, in, N * 4));

    CUmodule mod;
    CUfunction scan;
    CK(cuModuleLoadData(&mod, image));
    CK(cuModuleGetFunction(&scan, mod, "warp_scan"));
    CUdeviceptr k_in = a, k_out = a + N * 4;
    unsigned n = N;
    void *params[] = { &k_in, &k_out, &n };
    CK(cuLaunchKernel(scan, N / BLOCK, 1, 1, BLOCK, 1, 1, 0, NULL, params, NULL));
    CK(cuCtxSynchronize());

    CK(cuMemcpyDtoH(out, b + N * 4, N * 4));
    check("scan written through view 1, read through view 3", scan_ok(out));
    memset(out, 0, N * 4);
    CK(cuMemcpyDtoH(out, a + g + N * 4, N * 4));
    check("scan written through view 1, read through view 2", scan_ok(out));
    CK(cuMemcpyDtoH(out, b, N * 4));
    check("input written through view 1, read through view 3", memcmp(out, in, N * 4) == 0);

    /* A copy across the seam of views 1 and 2 reads the end and the start of the
     * allocation. */
    unsigned seam[2] = { 0, 0 }, tail = 0xabcdef01u;
    CK(cuMemcpyHtoD(b + g - 4, &tail, 4));
    CK(cuMemcpyDtoH(seam, a + g - 4, 8));
    check("copy across the seam of two views", seam[0] == tail && seam[1] == in[0]);

    /* The allocation, exported as a file descriptor, imported by another process. */
    int fd = -1;
    CK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    check("exported descriptor is open", fd >= 0 && fcntl_ok(fd));
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) { perror("socketpair"); return 2; }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 2; }
    if (pid == 0) {
        close(sv[0]);
        char arg[16];
        snprintf(arg, sizeof arg, "%d", sv[1]);
        execl("/proc/self/exe", argv[0], "--child", arg, (char *)NULL);
        perror("exec");
        _exit(2);
    }
    close(sv[1]);
    char c = 'x';
    char ctl[CMSG_SPACE(sizeof(int))];
    memset(ctl, 0, sizeof ctl);
    struct iovec iov = { &c, 1 };
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl;
    m.msg_controllen = sizeof ctl;
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof fd);
    if (sendmsg(sv[0], &m, 0) != 1) { perror("sendmsg"); return 2; }
    close(fd);
    int status = 0;
    waitpid(pid, &status, 0);
    check("child process imported, mapped and checked the allocation", WIFEXITED(status) && WEXITSTATUS(status) == 0);
    unsigned marker[16];
    CK(cuMemcpyDtoH(marker, a + g + 2 * N * 4, sizeof marker));
    int all = 1;
    for (int i = 0; i < 16; i++)
        all &= marker[i] == MARKER;
    check("child's write seen through this process's view 2", all);

    /* Released while mapped: the memory lives until the last unmap. */
    CK(cuMemRelease(h));
    CK(cuMemsetD32(b, 0x01020304u, N));
    CK(cuMemcpyDtoH(out, a, N * 4));
    all = 1;
    for (unsigned i = 0; i < N; i++)
        all &= out[i] == 0x01020304u;
    check("handle released while mapped: memory still shared by the views", all);
    CUmemGenericAllocationHandle again;
    CK(cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)(b + 100)));
    check("retained handle is the mapped one", again == h);
    CK(cuMemRelease(again));

    CK(cuMemUnmap(a, 2 * g));
    CK(cuMemUnmap(b, g));
    CK(cuMemAddressFree(a, 2 * g));
    CK(cuMemAddressFree(b, g));
    CK(cuModuleUnload(mod));
    free(in);
    free(out);
    free(image);
    if (failures) {
        printf("%s: %d checks failed\n", who, failures);
        return 1;
    }
    printf("%s: all checks hold\n", who);
    return 0;
}
