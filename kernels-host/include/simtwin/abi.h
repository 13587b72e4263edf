/*
 * simtwin device runtime ABI, version 2.
 *
 * The one contract between a host-compiled kernel library (built by kernels-host)
 * and the executor inside emu-driver. Kept deliberately narrow:
 *
 *   kernel library -> driver : the module descriptor returned by `simtwin_module_v2()`
 *                              (kernels, their parameter layout, globals, hooks).
 *   driver -> kernel library : one `simtwin_runtime_t` function table handed over once
 *                              by `bind()`, plus a per-OS-thread context slot that the
 *                              executor points at the current CUDA thread's context
 *                              before every resume.
 *
 * Everything here is plain C. The Rust definition is abi/src/kernel.rs (crate
 * simtwin-abi); its tests compile this header and compare every size and offset. Bump
 * SIMTWIN_ABI_VERSION on any change.
 *
 * Version 2: rendezvous entries take their call site (simtwin_site_t), `reserved0` is
 * gone (padding), the runtime table gained `yield_now` and `report`, and the module
 * descriptor carries `build_id` (repeated in the manifest).
 *
 * Within version 2 the runtime table may grow at its end: `size` says which entries a
 * driver provides, and a library checks it before calling an entry added later
 * (`access`, for the checking variant of a library: `kernels-host build --checks`).
 */
#ifndef SIMTWIN_ABI_H
#define SIMTWIN_ABI_H

#include <stdint.h>
#include <stddef.h>

#define SIMTWIN_ABI_VERSION 2u

#ifdef __cplusplus
extern "C" {
#endif

typedef struct simtwin_dim3 {
    uint32_t x, y, z;
} simtwin_dim3_t;

/*
 * Context of the CUDA thread that is running. The executor owns the memory; the kernel
 * library reads it through its thread-local slot (see `ctx_slot`).
 *
 * Range runs: `run` executes threads [first, first + count) of the current block one
 * after another (no fiber each). Before each thread it writes linear_tid into the
 * context it was given (the lane is linear_tid & 31), and thread_idx where the module's
 * code reads it there (the executor does not: kernels-host's twins always write it,
 * simtwin-ptx's runners where the kernel calls a function). `range_stop` is a limit
 * the executor sets (0: none): a thread of the range reached a rendezvous, or was
 * preempted, and the executor moved the threads after it onto fibers of their own; the
 * runner starts no thread t >= range_stop. Within version 2 a runner may check it after
 * each thread instead (any non-zero value: return); one that checks it before each
 * thread, after storing linear_tid, writes 1 into `reserved` when it starts, and only
 * then does the executor preempt its threads (a thread spinning in kernel code).
 */
typedef struct simtwin_thread_ctx {
    simtwin_dim3_t thread_idx;
    simtwin_dim3_t block_idx;
    simtwin_dim3_t block_dim;
    simtwin_dim3_t grid_dim;
    uint32_t linear_tid;      /* x + y*bx + z*bx*by */
    uint32_t reserved;        /* the executor writes 0; a runner that checks range_stop as a limit before each thread writes 1 */
    void *dyn_smem;           /* dynamic shared memory of this block (16-byte aligned) */
    uint64_t dyn_smem_size;   /* bytes, as given at launch */
    volatile uint32_t range_stop; /* 0, or: start no thread >= range_stop */
    uint32_t lanes;           /* 0 from the executor; a runner running threads as vector lanes writes the
                                 chunk's size while linear_tid names its first thread (0 after);
                                 SIMTWIN_LANES_ONE from the executor: run one thread at a time */
    void *executor;           /* opaque to the kernel library */
} simtwin_thread_ctx_t;

/* A runner's recovery point (the runtime's `recover_slot`): `landing` takes no arguments
   and never returns (it finds the point through the slot and jumps back into the runner,
   which undoes what the stretch did and runs it again another way, where the fault then
   names its thread). */
typedef struct simtwin_recover {
    void (*landing)(void);
} simtwin_recover_t;

/* ctx->lanes from the executor: replaying a range after a fault inside a chunk of lanes. */
#define SIMTWIN_LANES_ONE 0xffffffffu

/*
 * A source location in the user's code: the call site of a barrier, a warp collective or
 * __activemask. The shim fills it from __builtin_FILE/LINE/COLUMN evaluated at the
 * user's call (default arguments), so each source-level call is one site however the
 * compiler duplicates or inlines it. `file` is a string literal of the library.
 */
typedef struct simtwin_site {
    const char *file;
    uint32_t line;            /* 0 = unknown */
    uint32_t column;
} simtwin_site_t;

/* Block barrier flavours: __syncthreads, __syncthreads_count/_and/_or. */
enum simtwin_barrier_op {
    SIMTWIN_BAR_SYNC = 0,
    SIMTWIN_BAR_COUNT = 1,
    SIMTWIN_BAR_AND = 2,
    SIMTWIN_BAR_OR = 3
};

/* Warp collectives. `value` carries up to 64 bits (32-bit types in the low half). */
enum simtwin_warp_op {
    SIMTWIN_WARP_SHFL_IDX = 0,   /* arg = source lane,  width */
    SIMTWIN_WARP_SHFL_UP = 1,    /* arg = delta,        width */
    SIMTWIN_WARP_SHFL_DOWN = 2,  /* arg = delta,        width */
    SIMTWIN_WARP_SHFL_XOR = 3,   /* arg = lane mask,    width */
    SIMTWIN_WARP_BALLOT = 4,     /* value = predicate; result = ballot mask */
    SIMTWIN_WARP_ANY = 5,
    SIMTWIN_WARP_ALL = 6,
    SIMTWIN_WARP_MATCH_ANY = 7,  /* value = 32 or 64 bit key (arg = size in bytes) */
    SIMTWIN_WARP_MATCH_ALL = 8,  /* as MATCH_ANY; *pred_out = all equal */
    SIMTWIN_WARP_REDUCE_ADD = 9, /* 32-bit, arg = 1 for signed */
    SIMTWIN_WARP_REDUCE_MIN = 10,
    SIMTWIN_WARP_REDUCE_MAX = 11,
    SIMTWIN_WARP_REDUCE_AND = 12,
    SIMTWIN_WARP_REDUCE_OR = 13,
    SIMTWIN_WARP_REDUCE_XOR = 14,
    SIMTWIN_WARP_SYNC = 15       /* __syncwarp(mask) */
};

/* Device-defined results that C++ leaves undefined, computed by the library as the
   device computes them and reported through runtime->report (a hazard in warn mode,
   the launch fails in error mode). */
enum simtwin_report_kind {
    SIMTWIN_REPORT_CONVERSION = 1, /* float/double -> integer of NaN or out of range: saturated */
    SIMTWIN_REPORT_DIVISION = 2,   /* integer division by zero */
    SIMTWIN_REPORT_SHIFT = 3       /* shift by >= the operand's width: clamped */
};

/* Why a thread stops the launch (device assert, __trap, a fault the shim detected). */
enum simtwin_trap_kind {
    SIMTWIN_TRAP_ASSERT = 1,     /* CUDA_ERROR_ASSERT (710) */
    SIMTWIN_TRAP_TRAP = 2,       /* __trap(): CUDA_ERROR_LAUNCH_FAILED (719) */
    SIMTWIN_TRAP_UNSUPPORTED = 3, /* an operation the emulator cannot do faithfully */
    SIMTWIN_TRAP_MISALIGNED = 4   /* a load, store or atomic at an address not aligned to its size:
                                     CUDA_ERROR_MISALIGNED_ADDRESS (716); added within version 2 */
};

/* What a checking library (`kernels-host build --checks`) reports through
   runtime->access: a plain read or write, or an atomic one (atomics do not race with
   atomics). */
enum simtwin_access_kind {
    SIMTWIN_ACCESS_READ = 0,
    SIMTWIN_ACCESS_WRITE = 1,
    SIMTWIN_ACCESS_ATOMIC_READ = 2,
    SIMTWIN_ACCESS_ATOMIC_WRITE = 3  /* an atomic store or read-modify-write */
};

/* Texture and surface instructions (runtime->texture, added within version 2): the
   library fills a request, the driver samples exactly as the device does and answers in
   `data` (a surface store reads its value from there). Both execution modes (host twins
   through the texture functions of <cuda_runtime.h>, PTX mode through tex/tld4/txq/
   suld/sust/suq) call this one entry. */
enum simtwin_tex_op {
    SIMTWIN_TEX_FETCH = 0,      /* tex without a level: level 0 */
    SIMTWIN_TEX_LEVEL = 1,      /* tex.level: lod */
    SIMTWIN_TEX_GRAD = 2,       /* tex.grad: grad = dx (x, y, z), dy (x, y, z) */
    SIMTWIN_TEX_GATHER = 3,     /* tld4: component 0..3 */
    SIMTWIN_TEX_SURF_LOAD = 4,  /* suld.b: size bytes at byte x icoord[0], y icoord[1], z icoord[2] */
    SIMTWIN_TEX_SURF_STORE = 5, /* sust.b: size bytes of data */
    SIMTWIN_TEX_TXQ = 6,        /* txq: attribute `query` */
    SIMTWIN_TEX_SUQ = 7,        /* suq: attribute `query` */
    SIMTWIN_TEX_SURF_STORE_P = 8 /* sust.p: data converted to the element at element x icoord[0] */
};
enum simtwin_tex_geometry {
    SIMTWIN_TEX_1D = 0, SIMTWIN_TEX_2D = 1, SIMTWIN_TEX_3D = 2,
    SIMTWIN_TEX_A1D = 3, SIMTWIN_TEX_A2D = 4,      /* layer: icoord[3] */
    SIMTWIN_TEX_CUBE = 5, SIMTWIN_TEX_ACUBE = 6    /* coord: direction; layer: icoord[3] */
};
/* SIMTWIN_TEX_F16: PTX's .f16/.f16x2 results, four halves packed in data[0], data[1] */
enum simtwin_tex_result { SIMTWIN_TEX_F32 = 0, SIMTWIN_TEX_S32 = 1, SIMTWIN_TEX_U32 = 2, SIMTWIN_TEX_F16 = 3 };
#define SIMTWIN_TEX_INT_COORDS 1u   /* flags: coordinates are icoord (tex.*.s32, tex1Dfetch) */
enum simtwin_surf_clamp { SIMTWIN_SURF_TRAP = 0, SIMTWIN_SURF_CLAMP = 1, SIMTWIN_SURF_ZERO = 2 };
enum simtwin_tex_query {
    SIMTWIN_TXQ_WIDTH = 0, SIMTWIN_TXQ_HEIGHT = 1, SIMTWIN_TXQ_DEPTH = 2,
    SIMTWIN_TXQ_CHANNEL_DATA_TYPE = 3, SIMTWIN_TXQ_CHANNEL_ORDER = 4,
    SIMTWIN_TXQ_NORMALIZED_COORDS = 5, SIMTWIN_TXQ_FILTER_MODE = 6,
    SIMTWIN_TXQ_ADDR_MODE_0 = 7, SIMTWIN_TXQ_ADDR_MODE_1 = 8, SIMTWIN_TXQ_ADDR_MODE_2 = 9,
    SIMTWIN_TXQ_ARRAY_SIZE = 10, SIMTWIN_TXQ_NUM_MIPMAP_LEVELS = 11, SIMTWIN_TXQ_NUM_SAMPLES = 12,
    /* txq.level: the size of mip level icoord[0] */
    SIMTWIN_TXQ_LEVEL_WIDTH = 13, SIMTWIN_TXQ_LEVEL_HEIGHT = 14, SIMTWIN_TXQ_LEVEL_DEPTH = 15
};
typedef struct simtwin_tex_request {
    uint32_t op;          /* enum simtwin_tex_op */
    uint32_t geometry;    /* enum simtwin_tex_geometry */
    uint64_t handle;      /* cudaTextureObject_t / cudaSurfaceObject_t */
    float coord[4];       /* x, y, z */
    int32_t icoord[4];    /* integer x, y, z; [3] the layer */
    float lod;
    int8_t offset[4];     /* tex/tld4 texel offsets x, y, z (PTX's offset operand); [3] 0 */
    float grad[6];
    uint32_t component;   /* gather: 0..3 */
    uint32_t result;      /* enum simtwin_tex_result */
    uint32_t size;        /* surface access bytes: 1, 2, 4, 8, 16 */
    uint32_t clamp;       /* enum simtwin_surf_clamp */
    uint32_t query;       /* enum simtwin_tex_query */
    uint32_t flags;       /* SIMTWIN_TEX_INT_COORDS */
    uint32_t data[4];     /* the result, or the value to store */
} simtwin_tex_request_t;

/* Driver -> kernel library. Every function is called on the fiber of the CUDA thread. */
typedef struct simtwin_runtime {
    uint32_t abi_version;  /* SIMTWIN_ABI_VERSION */
    uint32_t size;         /* sizeof(simtwin_runtime_t) */
    /* Block barrier. Returns the count / and / or result (0 for SYNC). */
    int32_t (*barrier)(uint32_t op, int32_t pred, simtwin_site_t site);
    /* Warp collective over `mask`. `width` for shuffles (power of two <= 32, else 32). */
    uint64_t (*warp)(uint32_t op, uint32_t mask, uint64_t value, int32_t arg, int32_t width,
                     int32_t *pred_out, simtwin_site_t site);
    /* __activemask(): the lanes of this warp that converge at this call site. */
    uint32_t (*activemask)(simtwin_site_t site);
    /* Ends the launch with the trap kind's error. Does not return. */
    void (*trap)(uint32_t kind, const char *message, const char *file, uint32_t line);
    /* Device printf: the formatted text of one call. */
    void (*print)(const char *text, size_t len);
    /* __threadfence_block / __threadfence / __threadfence_system (scope 0 / 1 / 2). */
    void (*threadfence)(uint32_t scope);
    /* Clock for clock()/clock64()/__globaltimer (nanoseconds, monotonic). */
    uint64_t (*clock)(void);
    /* A spin-wait hint (__nanosleep, a polling load): other threads of the block may run
       before this one goes on. */
    void (*yield_now)(simtwin_site_t site);
    /* A device-defined result the library emulated (enum simtwin_report_kind). */
    void (*report)(uint32_t kind, const char *message, simtwin_site_t site);
    /* Added within version 2 (present when `size` covers it): a memory access of `size`
       bytes at `address` (enum simtwin_access_kind), made by the instruction that called
       the checking hook at return address `pc`. Only checking libraries call it; the
       driver keeps what falls into the block's shared memory (race detection). */
    void (*access)(const void *address, uint64_t size, uint32_t kind, const void *pc);
    /* Added within version 2 (present when `size` covers it): a texture or surface
       instruction. The answer is in req->data; a fault (surface access out of range in
       trap mode, an unknown object) ends the launch and does not return. */
    void (*texture)(simtwin_tex_request_t *req);
    /* Added within version 2 (present when `size` covers it): PTX mode's loop path ran
       the block's threads up to a barrier `op` at `site` one after another (no fiber
       each) and the barrier completes: `arrived` threads reached it, the `exited_count`
       threads in `exited` (in the order they exited) had exited before. Returns nonzero
       when the launch stops (an error-mode hazard): the caller returns at once. */
    int32_t (*block_barrier)(uint32_t op, simtwin_site_t site, uint32_t arrived, const uint32_t *exited, uint32_t exited_count);
    /* Added within version 2 (present when `size` covers it): PTX mode's loop path
       completed warp collective `op` (enum simtwin_warp_op) at `site` over `mask` in warp
       `warp` of the block, whose lanes `gone` had exited (the warp-lane-exited hazard, as
       a fiber's collective reports it). Returns nonzero when the launch stops. */
    int32_t (*warp_exited)(uint32_t op, simtwin_site_t site, uint32_t mask, uint32_t warp, uint32_t gone);
    /* Added within version 2 (present when `size` covers it): the running launch's grid
       workspace, 0 unless it is a cooperative launch (cuLaunchCooperativeKernel, or
       cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_COOPERATIVE). Zeroed for each launch; its
       32-bit word at offset 4 is the grid barrier's counter (cooperative_groups'
       grid_group::sync). PTX reads it as %envreg1 (high half) and %envreg2 (low half). */
    uint64_t (*grid_workspace)(void);
    /* Added within version 2 (present when `size` covers it): the running fiber's recovery
       slot, valid while the calling range runs. A runner may store a simtwin_recover_t* in
       it for a stretch of its own code and 0 after: a fault in kernel code while it is set
       continues at the point's landing, on the fiber's stack, as if called there, instead
       of ending the thread. The executor clears the slot before it redirects: a second
       fault ends the thread as any fault does. */
    const simtwin_recover_t **(*recover_slot)(void);
} simtwin_runtime_t;

/* One kernel entry (a __global__ function) of the library. */
typedef struct simtwin_kernel {
    const char *name;            /* name as written in the source (wrapper or template-id) */
    const void *function;        /* address of the kernel function: dladdr gives the
                                    (mangled) symbol that module images name */
    /* Runs threads [first, first+count) of the current block with these parameters.
       params: cuLaunchKernel's kernelParams (pointers to values, possibly unaligned). */
    void (*run)(void *const *params, simtwin_thread_ctx_t *ctx, uint32_t first, uint32_t count);
    uint32_t param_count;
    const uint32_t *param_sizes;  /* sizeof each parameter */
    const uint32_t *param_aligns; /* alignof each parameter */
    uint32_t max_threads;         /* from __launch_bounds__, 0 if none */
    uint32_t min_blocks;          /* from __launch_bounds__, 0 if none */
} simtwin_kernel_t;

/* One __device__ or __constant__ variable at namespace scope. */
typedef struct simtwin_global {
    const char *name;
    void *address;
    uint64_t size;
    uint32_t is_constant;
    uint32_t reserved;
} simtwin_global_t;

/* Kernel i and global i are entry / global i of the library's manifest. */
typedef struct simtwin_module {
    uint32_t abi_version;        /* SIMTWIN_ABI_VERSION */
    uint32_t kernel_count;
    const simtwin_kernel_t *kernels;
    uint32_t global_count;
    const simtwin_global_t *globals;
    const char *source_path;     /* the .cu file as given to kernels-host */
    const char *source_hash;     /* sha256 hex of the .cu file's bytes */
    const char *build_id;        /* identifies this build; the manifest repeats it */
    /* Hands the runtime table to the library. Called once, before any kernel runs. */
    void (*bind)(const simtwin_runtime_t *runtime);
    /* Address of the calling OS thread's context slot: the executor stores the current
       CUDA thread's context there before every resume. */
    simtwin_thread_ctx_t **(*ctx_slot)(void);
} simtwin_module_t;

/* The one symbol every kernel library exports. */
typedef const simtwin_module_t *(*simtwin_module_fn)(void);
#define SIMTWIN_MODULE_SYMBOL "simtwin_module_v2"

#ifdef __cplusplus
}
#endif

#endif /* SIMTWIN_ABI_H */
