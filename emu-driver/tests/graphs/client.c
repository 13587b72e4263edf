/* Graph and stream-capture client (tests/graphs.rs): `client FATBIN MODE`.
 *
 * The work, a diamond: A copies the input to the device; B = in*3 and C = in+7 read it;
 * M fills z with a memset; D = B*C + z; E copies D back; F, a host function, hashes the
 * host result it finds when it runs. Run twice, with a new input each time.
 *   direct   the work on two streams joined by events, no graph
 *   manual   a graph built node by node (cuGraphAdd*), instantiated, launched twice
 *   capture  the same calls as `direct`, captured from two streams, launched twice
 *   api      graph queries, parameter changes, clone, exec update (key=value lines)
 *   errors   capture invalidation, destroyed execs, bad handles (code=value lines)
 *   nulls    every graph and capture entry point with null arguments (name=code lines)
 * Prints `iter=K hash=H seen=S` per run (H the result's hash after synchronising, S
 * what the host node saw), then `done`. */
#include "../client_support/client.h"
#include <string.h>

typedef void *H;
#define N 1000
#define BLOCK 128

typedef struct {
    H func;
    unsigned gx, gy, gz, bx, by, bz, shared;
    void **params;
    void **extra;
    H kern;
    H ctx;
} KernelParams;

typedef struct {
    size_t srcX, srcY, srcZ, srcLOD;
    int srcType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    void *srcArray, *r0;
    size_t srcPitch, srcHeight;
    size_t dstX, dstY, dstZ, dstLOD;
    int dstType;
    void *dstHost;
    CUdeviceptr dstDevice;
    void *dstArray, *r1;
    size_t dstPitch, dstHeight;
    size_t width, height, depth;
} Copy3D;

typedef struct {
    CUdeviceptr dst;
    size_t pitch;
    unsigned value, elementSize;
    size_t width, height;
} MemsetParams;

typedef struct {
    void (*fn)(void *);
    void *data;
} HostParams;

typedef struct {
    int result;
    H errorNode, errorFromNode;
} UpdateInfo;

static CUresult (*cuStreamCreate)(H *, unsigned);
static CUresult (*cuEventCreate)(H *, unsigned);
static CUresult (*cuEventRecord)(H, H);
static CUresult (*cuStreamWaitEvent)(H, H, unsigned);
static CUresult (*cuStreamSynchronize)(H);
static CUresult (*cuMemcpyHtoDAsync_v2)(CUdeviceptr, const void *, size_t, H);
static CUresult (*cuMemcpyDtoHAsync_v2)(void *, CUdeviceptr, size_t, H);
static CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, H);
static CUresult (*cuLaunchHostFunc)(H, void (*)(void *), void *);
static CUresult (*cuMemAllocHost_v2)(void **, size_t);
static CUresult (*cuStreamBeginCapture_v2)(H, int);
static CUresult (*cuStreamEndCapture)(H, H *);
static CUresult (*cuStreamIsCapturing)(H, int *);
static CUresult (*cuStreamGetCaptureInfo_v2)(H, int *, unsigned long long *, H *, const H **, size_t *);
static CUresult (*cuGraphCreate)(H *, unsigned);
static CUresult (*cuGraphDestroy)(H);
static CUresult (*cuGraphAddKernelNode_v2)(H *, H, const H *, size_t, const KernelParams *);
static CUresult (*cuGraphAddMemcpyNode)(H *, H, const H *, size_t, const Copy3D *, H);
static CUresult (*cuGraphAddMemsetNode)(H *, H, const H *, size_t, const MemsetParams *, H);
static CUresult (*cuGraphAddHostNode)(H *, H, const H *, size_t, const HostParams *);
static CUresult (*cuGraphInstantiateWithFlags)(H *, H, unsigned long long);
static CUresult (*cuGraphLaunch)(H, H);
static CUresult (*cuGraphExecDestroy)(H);
static CUresult (*cuGraphGetNodes)(H, H *, size_t *);
static CUresult (*cuGraphGetRootNodes)(H, H *, size_t *);
static CUresult (*cuGraphGetEdges)(H, H *, H *, size_t *);

static H ctx, fn_scale, fn_offset, fn_combine, s1, s2, e1, e2;
static CUdeviceptr d_in, d_x, d_y, d_z, d_out;
static int *h_in, *h_out;
static unsigned long long seen[8];
static int seen_n;

static unsigned long long fnv(const void *p, size_t n) {
    const unsigned char *b = p;
    unsigned long long h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

/* Host node F: what the result holds when it runs (after E in every mode). */
static void host_fn(void *data) {
    (void)data;
    if (seen_n < 8) seen[seen_n++] = fnv(h_out, N * sizeof(int));
}

static void fill_input(int iter) {
    for (int i = 0; i < N; i++) h_in[i] = (i * 37 + iter * 1001) % 977 - 400;
    memset(h_out, 0, N * sizeof(int));
}

#define CHECK(call) do { CUresult r_ = (call); if (r_) { printf("error=%s:%d\n", #call, r_); return 1; } } while (0)
#define CODE(name, call) printf("%s=%d\n", name, (int)(call))
/* In the error cases: a set-up call that fails is reported and the case goes on, so one
   difference from the device does not hide the answers after it. */
#define SOFT(call) do { CUresult r_ = (call); if (r_) printf("soft %s=%d\n", #call, r_); } while (0)

static int k3 = 3, k7 = 7, n_ = N;
static void *scale_args[] = {&d_in, &d_x, &k3, &n_};
static void *offset_args[] = {&d_in, &d_y, &k7, &n_};
static void *combine_args[] = {&d_x, &d_y, &d_z, &d_out, &n_};
#define GRID ((N + BLOCK - 1) / BLOCK)

/* The work on s1 and s2, joined by e1 (s1 -> s2) and e2 (s2 -> s1): run or captured. */
static int issue(void) {
    CHECK(cuMemcpyHtoDAsync_v2(d_in, h_in, N * sizeof(int), s1));
    CHECK(cuEventRecord(e1, s1));
    CHECK(cuStreamWaitEvent(s2, e1, 0));
    CHECK(cuLaunchKernel(fn_scale, GRID, 1, 1, BLOCK, 1, 1, 0, s1, scale_args, 0));
    CHECK(cuLaunchKernel(fn_offset, GRID, 1, 1, BLOCK, 1, 1, 0, s2, offset_args, 0));
    CHECK(cuMemsetD32Async(d_z, 0x01010101u, N, s2));
    CHECK(cuEventRecord(e2, s2));
    CHECK(cuStreamWaitEvent(s1, e2, 0));
    CHECK(cuLaunchKernel(fn_combine, GRID, 1, 1, BLOCK, 1, 1, 0, s1, combine_args, 0));
    CHECK(cuMemcpyDtoHAsync_v2(h_out, d_out, N * sizeof(int), s1));
    CHECK(cuLaunchHostFunc(s1, host_fn, 0));
    return 0;
}

static int report(int iter) {
    CHECK(cuStreamSynchronize(s1));
    printf("iter=%d hash=%016llx seen=%016llx out0=%d out999=%d\n", iter, fnv(h_out, N * sizeof(int)), seen_n ? seen[seen_n - 1] : 0ULL,
           h_out[0], h_out[N - 1]);
    seen_n = 0;
    return 0;
}

static KernelParams kparams(H f, void **args) {
    KernelParams p = {f, GRID, 1, 1, BLOCK, 1, 1, 0, args, 0, 0, 0};
    return p;
}

/* The diamond built node by node; *nodes gets A, B, C, M, D, E, F. */
static int build_manual(H *g, H *nodes) {
    CHECK(cuGraphCreate(g, 0));
    Copy3D a = {0};
    a.srcType = 1; /* host */
    a.srcHost = h_in;
    a.dstType = 2; /* device */
    a.dstDevice = d_in;
    a.width = N * sizeof(int);
    a.height = 1;
    a.depth = 1;
    CHECK(cuGraphAddMemcpyNode(&nodes[0], *g, 0, 0, &a, ctx));
    KernelParams b = kparams(fn_scale, scale_args), c = kparams(fn_offset, offset_args), d = kparams(fn_combine, combine_args);
    CHECK(cuGraphAddKernelNode_v2(&nodes[1], *g, &nodes[0], 1, &b));
    CHECK(cuGraphAddKernelNode_v2(&nodes[2], *g, &nodes[0], 1, &c));
    MemsetParams m = {d_z, 0, 0x01010101u, 4, N, 1};
    CHECK(cuGraphAddMemsetNode(&nodes[3], *g, 0, 0, &m, ctx));
    H ddeps[3] = {nodes[1], nodes[2], nodes[3]};
    CHECK(cuGraphAddKernelNode_v2(&nodes[4], *g, ddeps, 3, &d));
    Copy3D e = {0};
    e.srcType = 2;
    e.srcDevice = d_out;
    e.dstType = 1;
    e.dstHost = h_out;
    e.width = N * sizeof(int);
    e.height = 1;
    e.depth = 1;
    CHECK(cuGraphAddMemcpyNode(&nodes[5], *g, &nodes[4], 1, &e, ctx));
    HostParams f = {host_fn, 0};
    CHECK(cuGraphAddHostNode(&nodes[6], *g, &nodes[5], 1, &f));
    return 0;
}

static int shape(H g) {
    size_t n = 0, roots = 0, edges = 0;
    CHECK(cuGraphGetNodes(g, 0, &n));
    CHECK(cuGraphGetRootNodes(g, 0, &roots));
    CHECK(cuGraphGetEdges(g, 0, 0, &edges));
    printf("nodes=%zu roots=%zu edges=%zu\n", n, roots, edges);
    return 0;
}

static int run_graph(H g) {
    H exec;
    CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
    for (int iter = 0; iter < 2; iter++) {
        fill_input(iter);
        CHECK(cuGraphLaunch(exec, s1));
        if (report(iter)) return 1;
    }
    CHECK(cuGraphExecDestroy(exec));
    CHECK(cuGraphDestroy(g));
    return 0;
}

static int mode_api(void);
static int mode_errors(void);
static int mode_nulls(void);

int main(int argc, char **argv) {
    if (argc < 3) { printf("usage=client FATBIN MODE\n"); return 2; }
    if (open_driver()) return 2;
    LOOKUP(cuStreamCreate); LOOKUP(cuEventCreate); LOOKUP(cuEventRecord); LOOKUP(cuStreamWaitEvent);
    LOOKUP(cuStreamSynchronize); LOOKUP(cuMemcpyHtoDAsync_v2); LOOKUP(cuMemcpyDtoHAsync_v2); LOOKUP(cuMemsetD32Async);
    LOOKUP(cuLaunchHostFunc); LOOKUP(cuMemAllocHost_v2); LOOKUP(cuStreamBeginCapture_v2); LOOKUP(cuStreamEndCapture);
    LOOKUP(cuStreamIsCapturing); LOOKUP(cuStreamGetCaptureInfo_v2); LOOKUP(cuGraphCreate); LOOKUP(cuGraphDestroy);
    LOOKUP(cuGraphAddKernelNode_v2); LOOKUP(cuGraphAddMemcpyNode); LOOKUP(cuGraphAddMemsetNode); LOOKUP(cuGraphAddHostNode);
    LOOKUP(cuGraphInstantiateWithFlags); LOOKUP(cuGraphLaunch); LOOKUP(cuGraphExecDestroy); LOOKUP(cuGraphGetNodes);
    LOOKUP(cuGraphGetRootNodes); LOOKUP(cuGraphGetEdges);
    CHECK(cuInit(0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CHECK(cuCtxSetCurrent(ctx));
    void *image = read_image(argv[1]);
    if (!image) return 2;
    H mod;
    CHECK(cuModuleLoadData(&mod, image));
    CHECK(cuModuleGetFunction(&fn_scale, mod, "scale"));
    CHECK(cuModuleGetFunction(&fn_offset, mod, "offset"));
    CHECK(cuModuleGetFunction(&fn_combine, mod, "combine"));
    CHECK(cuStreamCreate(&s1, 0));
    CHECK(cuStreamCreate(&s2, 0));
    CHECK(cuEventCreate(&e1, 0));
    CHECK(cuEventCreate(&e2, 0));
    CHECK(cuMemAlloc_v2(&d_in, N * 4));
    CHECK(cuMemAlloc_v2(&d_x, N * 4));
    CHECK(cuMemAlloc_v2(&d_y, N * 4));
    CHECK(cuMemAlloc_v2(&d_z, N * 4));
    CHECK(cuMemAlloc_v2(&d_out, N * 4));
    CHECK(cuMemAllocHost_v2((void **)&h_in, N * 4));
    CHECK(cuMemAllocHost_v2((void **)&h_out, N * 4));
    const char *mode = argv[2];
    if (!strcmp(mode, "direct")) {
        for (int iter = 0; iter < 2; iter++) {
            fill_input(iter);
            if (issue() || report(iter)) return 1;
        }
    } else if (!strcmp(mode, "manual")) {
        H g, nodes[7];
        if (build_manual(&g, nodes) || shape(g) || run_graph(g)) return 1;
    } else if (!strcmp(mode, "capture")) {
        H g;
        int st = -1, st2 = -1;
        CHECK(cuStreamBeginCapture_v2(s1, 0));
        if (issue()) return 1;
        CHECK(cuStreamIsCapturing(s2, &st2));
        unsigned long long id = 0;
        H cg = 0;
        const H *deps = 0;
        size_t ndeps = 99;
        CHECK(cuStreamGetCaptureInfo_v2(s1, &st, &id, &cg, &deps, &ndeps));
        printf("capturing=%d joined=%d deps=%zu\n", st, st2, ndeps);
        CHECK(cuStreamEndCapture(s1, &g));
        CHECK(cuStreamIsCapturing(s1, &st));
        CHECK(cuStreamIsCapturing(s2, &st2));
        printf("after=%d,%d same_graph=%d ran_during_capture=%d\n", st, st2, cg == g, seen_n);
        if (shape(g) || run_graph(g)) return 1;
    } else if (!strcmp(mode, "api")) {
        if (mode_api()) return 1;
    } else if (!strcmp(mode, "nulls")) {
        if (mode_nulls()) return 1;
    } else if (!strcmp(mode, "errors")) {
        if (mode_errors()) return 1;
    } else {
        printf("mode=unknown\n");
        return 2;
    }
    printf("done\n");
    return 0;
}

/* Queries and changes on the hand-built graph. */
static int mode_api(void) {
    SYM(CUresult (*)(H, int *), cuGraphNodeGetType);
    SYM(CUresult (*)(H, H *, size_t *), cuGraphNodeGetDependencies);
    SYM(CUresult (*)(H, H *, size_t *), cuGraphNodeGetDependentNodes);
    SYM(CUresult (*)(H, KernelParams *), cuGraphKernelNodeGetParams_v2);
    SYM(CUresult (*)(H, const KernelParams *), cuGraphKernelNodeSetParams_v2);
    SYM(CUresult (*)(H, H, const KernelParams *), cuGraphExecKernelNodeSetParams_v2);
    SYM(CUresult (*)(H *, H), cuGraphClone);
    SYM(CUresult (*)(H *, H, H), cuGraphNodeFindInClone);
    SYM(CUresult (*)(H, H, UpdateInfo *), cuGraphExecUpdate_v2);
    SYM(CUresult (*)(H, const H *, const H *, size_t), cuGraphRemoveDependencies);
    SYM(CUresult (*)(H, const H *, const H *, size_t), cuGraphAddDependencies);
    SYM(CUresult (*)(H *, H, const H *, size_t), cuGraphAddEmptyNode);
    SYM(CUresult (*)(H *, H, const H *, size_t, H), cuGraphAddChildGraphNode);
    SYM(CUresult (*)(H), cuGraphDestroyNode);
    SYM(CUresult (*)(H, H), cuGraphUpload);
    H g, nodes[7], exec;
    if (build_manual(&g, nodes)) return 1;
    int types[7];
    for (int i = 0; i < 7; i++) CHECK(cuGraphNodeGetType(nodes[i], &types[i]));
    printf("types=%d,%d,%d,%d,%d,%d,%d\n", types[0], types[1], types[2], types[3], types[4], types[5], types[6]);
    H deps[4] = {0, 0, 0, 0};
    size_t nd = 4;
    CHECK(cuGraphNodeGetDependencies(nodes[4], deps, &nd));
    printf("d_deps=%zu in_order=%d padded=%d\n", nd, deps[0] == nodes[1] && deps[1] == nodes[2] && deps[2] == nodes[3], deps[3] == 0);
    size_t na = 0;
    CHECK(cuGraphNodeGetDependentNodes(nodes[0], 0, &na));
    printf("a_dependents=%zu\n", na);
    KernelParams kp;
    memset(&kp, 0, sizeof kp);
    CHECK(cuGraphKernelNodeGetParams_v2(nodes[1], &kp));
    printf("kparams func=%d grid=%u block=%u k=%d\n", kp.func == fn_scale, kp.gx, kp.bx, *(int *)kp.params[2]);
    /* Arguments are copied when the node is made: changing k3 now changes nothing. */
    k3 = 100;
    CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
    CHECK(cuGraphUpload(exec, s1));
    fill_input(0);
    CHECK(cuGraphLaunch(exec, s1));
    if (report(0)) return 1;
    /* The exec takes new kernel parameters (scale by 5); the graph keeps its own. */
    int k5 = 5;
    void *args5[] = {&d_in, &d_x, &k5, &n_};
    KernelParams p5 = kparams(fn_scale, args5);
    CHECK(cuGraphExecKernelNodeSetParams_v2(exec, nodes[1], &p5));
    fill_input(0);
    CHECK(cuGraphLaunch(exec, s1));
    if (report(1)) return 1;
    int expect_ok = 1;
    for (int i = 0; i < N; i++) {
        int v = h_in[i];
        if (h_out[i] != v * 5 * (v + 7) + 0x01010101) expect_ok = 0;
    }
    printf("exec_set_params_ok=%d\n", expect_ok);
    /* A clone runs like the original (scale by 3). */
    H clone, found;
    CHECK(cuGraphClone(&clone, g));
    CHECK(cuGraphNodeFindInClone(&found, nodes[4], clone));
    printf("clone_found=%d distinct=%d\n", found != 0, found != nodes[4]);
    /* Node parameters of the graph changed (scale by 5), then the exec updated from it. */
    CHECK(cuGraphKernelNodeSetParams_v2(nodes[1], &p5));
    k3 = 3;
    UpdateInfo info = {-1, 0, 0};
    CODE("update_same", cuGraphExecUpdate_v2(exec, clone, &info));
    printf("update_same_result=%d\n", info.result);
    fill_input(1);
    CHECK(cuGraphLaunch(exec, s1));
    if (report(2)) return 1;
    /* A different topology (an edge removed) cannot update the exec. */
    CHECK(cuGraphRemoveDependencies(g, &nodes[0], &nodes[2], 1));
    info.result = -1;
    CODE("update_topology", cuGraphExecUpdate_v2(exec, g, &info));
    printf("update_topology_result=%d error_node=%d\n", info.result, info.errorNode == nodes[2]);
    CHECK(cuGraphAddDependencies(g, &nodes[0], &nodes[2], 1));
    /* A child graph and an empty node; destroying a node removes its edges. */
    H outer, child_node, empty;
    CHECK(cuGraphCreate(&outer, 0));
    CHECK(cuGraphAddEmptyNode(&empty, outer, 0, 0));
    CHECK(cuGraphAddChildGraphNode(&child_node, outer, &empty, 1, clone));
    int ct = -1;
    CHECK(cuGraphNodeGetType(child_node, &ct));
    H oexec;
    CHECK(cuGraphInstantiateWithFlags(&oexec, outer, 0));
    fill_input(1);
    CHECK(cuGraphLaunch(oexec, s1));
    if (report(3)) return 1;
    CHECK(cuGraphDestroyNode(empty));
    size_t on = 0, oroots = 0;
    CHECK(cuGraphGetNodes(outer, 0, &on));
    CHECK(cuGraphGetRootNodes(outer, 0, &oroots));
    printf("child_type=%d outer_nodes=%zu outer_roots=%zu\n", ct, on, oroots);
    /* The child node's graph is its own (not a copy of it): it takes nodes, and only the
     * node can destroy it. */
    SYM(CUresult (*)(H, H *), cuGraphChildGraphNodeGetGraph);
    H cg, extra;
    size_t cn = 0;
    CHECK(cuGraphChildGraphNodeGetGraph(child_node, &cg));
    CHECK(cuGraphAddEmptyNode(&extra, cg, 0, 0));
    CHECK(cuGraphGetNodes(cg, 0, &cn));
    printf("child_graph_nodes=%zu destroy_owned=%d\n", cn, (int)cuGraphDestroy(cg));
    CHECK(cuGraphExecDestroy(oexec));
    CHECK(cuGraphExecDestroy(exec));
    CHECK(cuGraphDestroy(outer));
    CHECK(cuGraphDestroy(clone));
    CHECK(cuGraphDestroy(g));
    return 0;
}

static const char *const GRAPH_ENTRIES[] = {
    "cuStreamBeginCapture", "cuStreamBeginCapture_ptsz", "cuStreamBeginCapture_v2",
    "cuStreamBeginCapture_v2_ptsz", "cuStreamEndCapture", "cuStreamEndCapture_ptsz",
    "cuStreamGetCaptureInfo", "cuStreamGetCaptureInfo_ptsz", "cuStreamGetCaptureInfo_v2",
    "cuStreamGetCaptureInfo_v2_ptsz", "cuStreamGetCaptureInfo_v3", "cuStreamGetCaptureInfo_v3_ptsz",
    "cuThreadExchangeStreamCaptureMode", "cuGraphCreate", "cuGraphDestroy", "cuGraphClone",
    "cuGraphNodeFindInClone", "cuGraphDestroyNode", "cuGraphAddKernelNode", "cuGraphAddKernelNode_v2",
    "cuGraphKernelNodeGetParams", "cuGraphKernelNodeGetParams_v2", "cuGraphKernelNodeSetParams",
    "cuGraphKernelNodeSetParams_v2", "cuGraphAddMemcpyNode", "cuGraphMemcpyNodeGetParams",
    "cuGraphMemcpyNodeSetParams", "cuGraphAddMemsetNode", "cuGraphMemsetNodeGetParams",
    "cuGraphMemsetNodeSetParams", "cuGraphAddHostNode", "cuGraphHostNodeGetParams",
    "cuGraphHostNodeSetParams", "cuGraphAddChildGraphNode", "cuGraphChildGraphNodeGetGraph",
    "cuGraphAddEmptyNode", "cuGraphAddEventRecordNode", "cuGraphEventRecordNodeGetEvent",
    "cuGraphEventRecordNodeSetEvent", "cuGraphAddEventWaitNode", "cuGraphEventWaitNodeGetEvent",
    "cuGraphEventWaitNodeSetEvent", "cuGraphAddMemAllocNode", "cuGraphAddMemFreeNode",
    "cuGraphAddBatchMemOpNode", "cuGraphAddExternalSemaphoresSignalNode",
    "cuGraphAddExternalSemaphoresWaitNode", "cuGraphConditionalHandleCreate", "cuGraphAddNode",
    "cuGraphAddNode_v2", "cuGraphAddNode_v3", "cuGraphAddDependencies", "cuGraphAddDependencies_v2",
    "cuGraphRemoveDependencies", "cuGraphRemoveDependencies_v2", "cuGraphGetNodes", "cuGraphGetRootNodes",
    "cuGraphGetEdges", "cuGraphGetEdges_v2", "cuGraphNodeGetDependencies", "cuGraphNodeGetDependencies_v2",
    "cuGraphNodeGetDependentNodes", "cuGraphNodeGetDependentNodes_v2", "cuGraphNodeGetType",
    "cuGraphNodeGetContainingGraph", "cuGraphInstantiate", "cuGraphInstantiate_v2",
    "cuGraphInstantiateWithFlags", "cuGraphInstantiateWithParams", "cuGraphInstantiateWithParams_ptsz",
    "cuGraphExecGetFlags", "cuGraphLaunch", "cuGraphLaunch_ptsz", "cuGraphUpload", "cuGraphUpload_ptsz",
    "cuGraphExecDestroy", "cuGraphExecKernelNodeSetParams", "cuGraphExecKernelNodeSetParams_v2",
    "cuGraphExecMemcpyNodeSetParams", "cuGraphExecMemsetNodeSetParams", "cuGraphExecHostNodeSetParams",
    "cuGraphExecEventRecordNodeSetEvent", "cuGraphExecEventWaitNodeSetEvent", "cuGraphExecUpdate",
    "cuGraphExecUpdate_v2", "cuGetErrorName", "cuStreamIsCapturing", "cuStreamIsCapturing_ptsz",
};

/* Every graph and capture entry point, called with null handles and pointers (and zero
 * counts, flags and modes): each answers an error code, none crashes. Seven zero
 * arguments in registers: every parameter of these entries is a pointer or an integer. */
static int mode_nulls(void) {
    typedef CUresult (*Any)(void *, void *, void *, void *, void *, void *, void *);
    for (size_t i = 0; i < sizeof GRAPH_ENTRIES / sizeof *GRAPH_ENTRIES; i++) {
        Any f = (Any)dlsym(lib, GRAPH_ENTRIES[i]);
        if (!f) { printf("missing=%s\n", GRAPH_ENTRIES[i]); return 1; }
        printf("null %s=%d\n", GRAPH_ENTRIES[i], (int)f(0, 0, 0, 0, 0, 0, 0));
    }
    return 0;
}

static void nop(void *p) { (void)p; }

/* Error answers: each `name=code`. */
static int mode_errors(void) {
    SYM(CUresult (*)(H, int *), cuGraphNodeGetType);
    SYM(CUresult (*)(H *, H, const H *, size_t), cuGraphAddEmptyNode);
    SYM(CUresult (*)(H, const H *, const H *, size_t), cuGraphAddDependencies);
    SYM(CUresult (*)(H *, H, const H *, size_t, void *), cuGraphAddMemAllocNode);
    SYM(CUresult (*)(H *, H, const H *, size_t, void *), cuGraphAddNode);
    SYM(CUresult (*)(H), cuGraphDestroyNode);
    SYM(CUresult (*)(int *), cuThreadExchangeStreamCaptureMode);
    SYM(CUresult (*)(CUdeviceptr *, size_t, H), cuMemAllocAsync);
    SYM(CUresult (*)(H), cuEventQuery);
    SYM(CUresult (*)(CUdeviceptr, const void *, size_t), cuMemcpyHtoD_v2);
    H g, ns, nb, exec, graph;
    int st = -1;
    H nbs;
    SOFT(cuStreamCreate(&nbs, 1)); /* non-blocking */
    /* 1. A synchronous copy (legacy stream) while a blocking stream captures. */
    SOFT(cuStreamBeginCapture_v2(s1, 0));
    CODE("sync_copy_during_capture", cuMemcpyHtoD_v2(d_in, h_in, 16));
    SOFT(cuStreamIsCapturing(s1, &st));
    printf("status_after_implicit=%d\n", st);
    CODE("launch_on_invalidated", cuLaunchKernel(fn_scale, 1, 1, 1, 32, 1, 1, 0, s1, scale_args, 0));
    graph = (H)1;
    CODE("end_invalidated", cuStreamEndCapture(s1, &graph));
    printf("end_invalidated_graph_null=%d\n", graph == 0);
    SOFT(cuStreamIsCapturing(s1, &st));
    printf("status_after_end=%d\n", st);
    /* 2. Synchronising the capturing stream. */
    SOFT(cuStreamBeginCapture_v2(nbs, 0));
    CODE("stream_sync_during_capture", cuStreamSynchronize(nbs));
    CODE("end_after_stream_sync", cuStreamEndCapture(nbs, &graph));
    /* 3. cuCtxSynchronize waits for the capturing stream: refused and the capture
       invalidated in global mode and in relaxed mode alike (measured on an H100); a
       synchronous copy on the legacy stream, which does not wait for the non-blocking
       capturing stream, is refused in global mode (section 7) and allowed in relaxed. */
    SOFT(cuStreamBeginCapture_v2(nbs, 0));
    CODE("ctx_sync_global", cuCtxSynchronize());
    CODE("end_after_ctx_sync", cuStreamEndCapture(nbs, &graph));
    SOFT(cuStreamBeginCapture_v2(nbs, 0));
    int mode = 2; /* relaxed */
    SOFT(cuThreadExchangeStreamCaptureMode(&mode));
    printf("previous_mode=%d\n", mode);
    CODE("ctx_sync_relaxed", cuCtxSynchronize());
    SOFT(cuThreadExchangeStreamCaptureMode(&mode));
    graph = 0;
    CODE("end_after_relaxed", cuStreamEndCapture(nbs, &graph));
    if (graph) SOFT(cuGraphDestroy(graph));
    SOFT(cuStreamBeginCapture_v2(nbs, 0));
    mode = 2;
    SOFT(cuThreadExchangeStreamCaptureMode(&mode));
    CODE("sync_copy_relaxed", cuMemcpyHtoD_v2(d_in, h_in, 16));
    SOFT(cuThreadExchangeStreamCaptureMode(&mode));
    graph = 0;
    CODE("end_after_sync_copy_relaxed", cuStreamEndCapture(nbs, &graph));
    if (graph) SOFT(cuGraphDestroy(graph));
    /* 4. Capture state errors. */
    CODE("begin_on_null_stream", cuStreamBeginCapture_v2(0, 0));
    CODE("end_not_capturing", cuStreamEndCapture(s1, &graph));
    SOFT(cuStreamBeginCapture_v2(s1, 0));
    CODE("begin_twice", cuStreamBeginCapture_v2(s1, 0));
    SOFT(cuStreamIsCapturing(s1, &st));
    printf("status_after_begin_twice=%d\n", st);
    CODE("bad_mode", cuStreamBeginCapture_v2(s2, 7));
    SOFT(cuEventRecord(e1, s1));
    CODE("query_captured_event", cuEventQuery(e1));
    SOFT(cuStreamIsCapturing(s1, &st));
    printf("status_after_query=%d\n", st);
    CODE("wait_after_query", cuStreamWaitEvent(s2, e1, 0));
    SOFT(cuStreamIsCapturing(s1, &st));
    printf("status_after_wait=%d\n", st);
    SOFT(cuLaunchHostFunc(s2, nop, 0));
    CODE("end_unjoined", cuStreamEndCapture(s1, &graph));
    SOFT(cuStreamIsCapturing(s2, &st));
    printf("joined_status_after_end=%d\n", st);
    /* 4b. A stream joined to a capture and never waited for by its origin. */
    SOFT(cuStreamBeginCapture_v2(s1, 0));
    SOFT(cuEventRecord(e1, s1));
    SOFT(cuStreamWaitEvent(s2, e1, 0));
    SOFT(cuLaunchHostFunc(s2, nop, 0));
    CODE("end_unjoined_clean", cuStreamEndCapture(s1, &graph));
    SOFT(cuStreamIsCapturing(s2, &st));
    printf("joined_status_after_clean_end=%d\n", st);
    /* 5. Stream-ordered allocation in a capture: not emulated, the capture is lost. */
    SOFT(cuStreamBeginCapture_v2(s1, 0));
    CUdeviceptr p = 0;
    CODE("alloc_async_in_capture", cuMemAllocAsync(&p, 64, s1));
    CODE("end_after_alloc", cuStreamEndCapture(s1, &graph));
    /* 5b. 2D and 3D copies are captured as memcpy nodes and run only with the graph; a
     * synchronous 2D copy while a non-blocking stream captures (global mode) is allowed. */
    {
        SYM(CUresult (*)(const void *, H), cuMemcpy2DAsync_v2);
        SYM(CUresult (*)(const void *), cuMemcpy2D_v2);
        SYM(CUresult (*)(const Copy3D *, H), cuMemcpy3DAsync_v2);
        struct { size_t sx, sy; int st; const void *sh; CUdeviceptr sd; void *sa; size_t sp;
                 size_t dx, dy; int dt; void *dh; CUdeviceptr dd; void *da; size_t dp, w, h; } c2 = {0};
        c2.st = 2; c2.sd = d_z; c2.sp = N * 4; c2.dt = 2; c2.dd = d_x; c2.dp = N * 4; c2.w = N * 4; c2.h = 1;
        Copy3D c3 = {0};
        c3.srcType = 2; c3.srcDevice = d_x; c3.dstType = 1; c3.dstHost = h_out; c3.width = N * 4; c3.height = 1; c3.depth = 1;
        memset(h_out, 0, N * 4);
        SOFT(cuStreamBeginCapture_v2(s1, 0));
        SOFT(cuMemsetD32Async(d_z, 5, N, s1));
        SOFT(cuMemcpy2DAsync_v2(&c2, s1));
        SOFT(cuMemcpy3DAsync_v2(&c3, s1));
        SOFT(cuStreamEndCapture(s1, &g));
        size_t n3 = 0;
        SOFT(cuGraphGetNodes(g, 0, &n3));
        int before = h_out[0] + h_out[N - 1];
        SOFT(cuGraphInstantiateWithFlags(&exec, g, 0));
        SOFT(cuGraphLaunch(exec, s1));
        SOFT(cuStreamSynchronize(s1));
        int ok = 1;
        for (int i = 0; i < N; i++) ok &= h_out[i] == 5;
        printf("copies2d3d nodes=%zu before=%d ok=%d\n", n3, before, ok);
        SOFT(cuGraphExecDestroy(exec));
        SOFT(cuGraphDestroy(g));
        SOFT(cuStreamBeginCapture_v2(nbs, 0));
        CODE("sync_2d_copy_global", cuMemcpy2D_v2(&c2));
        CODE("end_after_sync_2d", cuStreamEndCapture(nbs, &graph));
    }
    /* 6. Executable graphs and node handles. */
    SOFT(cuGraphCreate(&g, 0));
    SOFT(cuGraphAddEmptyNode(&ns, g, 0, 0));
    SOFT(cuGraphAddEmptyNode(&nb, g, &ns, 1));
    CODE("add_edge_twice", cuGraphAddDependencies(g, &ns, &nb, 1));
    H other, foreign;
    SOFT(cuGraphCreate(&other, 0));
    SOFT(cuGraphAddEmptyNode(&foreign, other, 0, 0));
    H x;
    CODE("dependency_from_other_graph", cuGraphAddEmptyNode(&x, g, &foreign, 1));
    CODE("node_type_garbage", cuGraphNodeGetType((H)0x1234, &st));
    SOFT(cuGraphDestroyNode(foreign));
    CODE("node_type_destroyed", cuGraphNodeGetType(foreign, &st));
    CODE("mem_alloc_node", cuGraphAddMemAllocNode(&x, g, 0, 0, 0));
    struct { int type; int pad[3]; char rest[256]; } cond = {13, {0}, {0}};
    CODE("conditional_node", cuGraphAddNode(&x, g, 0, 0, &cond));
    SOFT(cuGraphInstantiateWithFlags(&exec, g, 0));
    SOFT(cuGraphLaunch(exec, s1));
    SOFT(cuGraphExecDestroy(exec));
    CODE("launch_destroyed_exec", cuGraphLaunch(exec, s1));
    CODE("destroy_exec_twice", cuGraphExecDestroy(exec));
    CODE("launch_null_exec", cuGraphLaunch(0, s1));
    CODE("device_launch_flag", cuGraphInstantiateWithFlags(&exec, g, 4));
    /* A cycle cannot be instantiated. */
    SOFT(cuGraphAddDependencies(g, &nb, &ns, 1));
    CODE("instantiate_cycle", cuGraphInstantiateWithFlags(&exec, g, 0));
    SOFT(cuGraphDestroy(g));
    CODE("destroy_graph_twice", cuGraphDestroy(g));
    SOFT(cuGraphDestroy(other));
    /* The driver still works. */
    SOFT(cuCtxSynchronize());
    return 0;
}
