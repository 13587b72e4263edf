//! The device runtime ABI, version 2: the one contract between a host-compiled kernel
//! library (built by kernels-host) and the executor inside the emulated driver.
//!
//! This is the Rust definition of `kernels-host/include/simtwin/abi.h`; a test compiles
//! the header and compares every size and offset with these types.
//!
//! - library -> driver: the module descriptor returned by `simtwin_module_v2()`.
//! - driver -> library: one [`Runtime`] table handed over by `bind`, and a per-OS-thread
//!   context slot (`ctx_slot`) the executor points at the running CUDA thread's
//!   [`ThreadCtx`] before every resume.
//!
//! Version 2 (from 1): every rendezvous entry (`barrier`, `warp`, `activemask`) takes the
//! call site of the intrinsic as a [`Site`] (kernels-host fills it from
//! `__builtin_FILE/LINE/COLUMN` at the user's call), the context's unused `reserved0`
//! field is gone (padding), the runtime table gained `yield_now` and `report`, and the
//! module descriptor carries a `build_id` that its manifest repeats.
//!
//! Within version 2 the runtime table grows only at its end (`Runtime::size` says which
//! entries a driver provides): `access` was added so that a checking library
//! (`kernels-host build --checks`) can report its memory accesses, and `texture` for
//! texture and surface instructions (both execution modes sample through it).

use std::ffi::{c_char, c_void};

/// ABI version; a library of another version is refused at load.
pub const ABI_VERSION: u32 = 2;
/// The one symbol every kernel library exports (NUL-terminated for dlsym).
pub const MODULE_SYMBOL: &[u8] = b"simtwin_module_v2\0";

/// CUDA's `dim3`/`uint3`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dim3 {
    /// x
    pub x: u32,
    /// y
    pub y: u32,
    /// z
    pub z: u32,
}

/// [`ThreadCtx::lanes`] from the executor: run one thread at a time (abi.h
/// `SIMTWIN_LANES_ONE`).
pub const LANES_ONE: u32 = u32::MAX;

/// The running CUDA thread's context. The executor owns it; the library reads it through
/// its context slot.
///
/// `run(params, ctx, first, count)` executes threads `[first, first+count)` of the block
/// one after another: before each thread it writes `thread_idx` and `linear_tid` (the lane
/// is `linear_tid % 32`, not stored: one store less per thread of a barrier-free kernel).
/// `range_stop` is a limit the executor sets when a thread of the range reached a
/// rendezvous or was preempted and the threads after it moved to other fibers: the runner
/// starts no thread `t >= range_stop`. A runner that checks this before each thread,
/// after writing `linear_tid`, sets `reserved` to 1 when it starts: whichever of its
/// instructions is interrupted, `linear_tid` then names the last thread the range will
/// run, and the executor may preempt it (within version 2 a runner may instead return
/// after any thread once `range_stop` is non-zero; its threads are never preempted).
/// A runner that runs threads as vector lanes (PTX mode) writes `linear_tid` once per
/// chunk and the chunk's size in `lanes`.
#[repr(C)]
#[derive(Debug)]
pub struct ThreadCtx {
    /// threadIdx
    pub thread_idx: Dim3,
    /// blockIdx
    pub block_idx: Dim3,
    /// blockDim
    pub block_dim: Dim3,
    /// gridDim
    pub grid_dim: Dim3,
    /// x + y*bx + z*bx*by
    pub linear_tid: u32,
    /// Written 0 by the executor; 1 by a runner that checks `range_stop` as a limit
    /// before each thread (its threads may be preempted).
    pub reserved: u32,
    /// The block's dynamic shared memory (16-byte aligned).
    pub dyn_smem: *mut c_void,
    /// Bytes of dynamic shared memory, as given at launch.
    pub dyn_smem_size: u64,
    /// Set by the executor: 0, or the range starts no thread `>= range_stop`.
    pub range_stop: u32,
    /// 0 from the executor, or [`LANES_ONE`] to ask for one thread at a time (the
    /// replay of a range after a fault inside a chunk of lanes). A runner running
    /// threads as vector lanes writes the chunk's size here while `linear_tid` names the
    /// chunk's first thread, and 0 after.
    pub lanes: u32,
    /// Opaque to the library.
    pub executor: *mut c_void,
}

/// A runner's recovery point ([`Runtime::recover_slot`], abi.h `simtwin_recover_t`): the
/// landing, which takes no arguments and never returns, finds the point through the slot
/// and jumps back into the runner (which undoes what the stretch did and runs it another
/// way, where the fault then names its thread).
#[repr(C)]
#[derive(Debug)]
pub struct Recover {
    /// Where a fault inside the stretch continues, on the fiber's stack.
    pub landing: unsafe extern "C" fn(),
}

/// A source location in the user's code: identifies the call site of a barrier, a warp
/// collective or `__activemask` (divergence reports, convergence groups). `file` is a
/// string literal of the library (the same pointer for every site of one file).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Site {
    /// The file as the compiler named it (`__builtin_FILE()`); may be null.
    pub file: *const c_char,
    /// `__builtin_LINE()`, 0 if unknown.
    pub line: u32,
    /// `__builtin_COLUMN()`, 0 if unknown.
    pub column: u32,
}

impl Site {
    /// No known site (calls from code that could not name one).
    pub const UNKNOWN: Site = Site { file: std::ptr::null(), line: 0, column: 0 };

    /// A key equal for equal sites (same file literal, line and column).
    pub fn key(&self) -> u64 {
        (self.file as u64).rotate_left(24) ^ ((self.line as u64) << 20) ^ self.column as u64
    }

    /// `file:line:column` for reports.
    pub fn describe(&self) -> String {
        if self.line == 0 {
            return "unknown site".into();
        }
        // SAFETY: `file` is null or a string literal of a loaded kernel library.
        let file = unsafe { crate::ffi::c_str(self.file) };
        format!("{file}:{}:{}", self.line, self.column)
    }
}

// SAFETY: `file` points to immutable static data of a library.
unsafe impl Send for Site {}
// SAFETY: as above.
unsafe impl Sync for Site {}

/// Block barrier flavours: `__syncthreads`, `__syncthreads_count/_and/_or`.
pub mod bar {
    /// `__syncthreads`
    pub const SYNC: u32 = 0;
    /// `__syncthreads_count`
    pub const COUNT: u32 = 1;
    /// `__syncthreads_and`
    pub const AND: u32 = 2;
    /// `__syncthreads_or`
    pub const OR: u32 = 3;
}

/// Warp collectives. `value` carries up to 64 bits (32-bit types in the low half).
pub mod warp {
    /// `__shfl_sync`: arg = source lane, width
    pub const SHFL_IDX: u32 = 0;
    /// `__shfl_up_sync`: arg = delta, width
    pub const SHFL_UP: u32 = 1;
    /// `__shfl_down_sync`: arg = delta, width
    pub const SHFL_DOWN: u32 = 2;
    /// `__shfl_xor_sync`: arg = lane mask, width
    pub const SHFL_XOR: u32 = 3;
    /// `__ballot_sync`: value = predicate
    pub const BALLOT: u32 = 4;
    /// `__any_sync`
    pub const ANY: u32 = 5;
    /// `__all_sync`
    pub const ALL: u32 = 6;
    /// `__match_any_sync`: arg = key size in bytes
    pub const MATCH_ANY: u32 = 7;
    /// `__match_all_sync`: as MATCH_ANY, `*pred_out` = all equal
    pub const MATCH_ALL: u32 = 8;
    /// `__reduce_add_sync` (32-bit; arg = 1 for signed)
    pub const REDUCE_ADD: u32 = 9;
    /// `__reduce_min_sync`
    pub const REDUCE_MIN: u32 = 10;
    /// `__reduce_max_sync`
    pub const REDUCE_MAX: u32 = 11;
    /// `__reduce_and_sync`
    pub const REDUCE_AND: u32 = 12;
    /// `__reduce_or_sync`
    pub const REDUCE_OR: u32 = 13;
    /// `__reduce_xor_sync`
    pub const REDUCE_XOR: u32 = 14;
    /// `__syncwarp(mask)`
    pub const SYNC: u32 = 15;
}

/// Why a thread stops the launch.
pub mod trap {
    /// Device `assert`: CUDA_ERROR_ASSERT (710).
    pub const ASSERT: u32 = 1;
    /// `__trap()`: CUDA_ERROR_LAUNCH_FAILED (719).
    pub const TRAP: u32 = 2;
    /// An operation the emulator cannot do faithfully (719).
    pub const UNSUPPORTED: u32 = 3;
    /// A load, store or atomic at an address not aligned to its size:
    /// CUDA_ERROR_MISALIGNED_ADDRESS (716). Added within version 2.
    pub const MISALIGNED: u32 = 4;
}

/// What a library reports through `Runtime::report`: a result the device defines but C++
/// does not, which the library computed as the device does. Reported as a hazard (warn
/// mode) or fails the launch (`EMU_CUDA_HAZARDS=error`).
pub mod report {
    /// A float/double-to-integer conversion of NaN or an out-of-range value (saturated
    /// like the device's `cvt`).
    pub const CONVERSION: u32 = 1;
    /// An integer division by zero (the device's result was used).
    pub const DIVISION: u32 = 2;
    /// A shift by at least the operand's width (clamped like the device).
    pub const SHIFT: u32 = 3;
}

/// Texture and surface instructions (`Runtime::texture`, added within version 2).
#[allow(missing_docs)] // named after the PTX forms they stand for
pub mod tex {
    /// `tex` without a level: level 0 (kernels have no implicit derivatives).
    pub const FETCH: u32 = 0;
    /// `tex.level` (tex*Lod): `lod` holds the level of detail.
    pub const LEVEL: u32 = 1;
    /// `tex.grad` (tex*Grad): `grad` holds dx (x, y, z) then dy (x, y, z).
    pub const GRAD: u32 = 2;
    /// `tld4` (tex2Dgather): `component` 0..3.
    pub const GATHER: u32 = 3;
    /// `suld.b`: `size` bytes at byte x `icoord[0]`, row `icoord[1]`, slice/layer `icoord[2]`.
    pub const SURF_LOAD: u32 = 4;
    /// `sust.b`: stores `size` bytes of `data`.
    pub const SURF_STORE: u32 = 5;
    /// `txq`: attribute `query` of a texture.
    pub const TXQ: u32 = 6;
    /// `suq`: attribute `query` of a surface.
    pub const SUQ: u32 = 7;
    /// `sust.p`: formatted store of the four words of `data` (f32, u32 or s32 by the
    /// surface's format) to the element at element x `icoord[0]`, converted to it.
    pub const SURF_STORE_P: u32 = 8;

    /// Geometries (`geometry`).
    pub const G_1D: u32 = 0;
    pub const G_2D: u32 = 1;
    pub const G_3D: u32 = 2;
    /// Layered 1D / 2D: the layer is `icoord[3]`.
    pub const G_A1D: u32 = 3;
    pub const G_A2D: u32 = 4;
    /// Cubemap: `coord` is a direction; layered cubemap: layer `icoord[3]`.
    pub const G_CUBE: u32 = 5;
    pub const G_ACUBE: u32 = 6;

    /// Result types (`result`).
    pub const R_F32: u32 = 0;
    pub const R_S32: u32 = 1;
    pub const R_U32: u32 = 2;
    /// `.f16` / `.f16x2` results (PTX mode): the f32 result converted to half as the
    /// H200 converts it, four halves packed in `data[0]`, `data[1]` (low half first).
    pub const R_F16: u32 = 3;

    /// `flags`: the coordinates are the integers in `icoord` (tex.*.s32, tex1Dfetch).
    pub const INT_COORDS: u32 = 1;

    /// Surface boundary modes (`clamp`).
    pub const TRAP: u32 = 0;
    pub const CLAMP: u32 = 1;
    pub const ZERO: u32 = 2;

    /// `query` for txq/suq.
    pub const Q_WIDTH: u32 = 0;
    pub const Q_HEIGHT: u32 = 1;
    pub const Q_DEPTH: u32 = 2;
    pub const Q_CHANNEL_DATA_TYPE: u32 = 3;
    pub const Q_CHANNEL_ORDER: u32 = 4;
    pub const Q_NORMALIZED_COORDS: u32 = 5;
    pub const Q_FILTER_MODE: u32 = 6;
    pub const Q_ADDR_MODE_0: u32 = 7;
    pub const Q_ADDR_MODE_1: u32 = 8;
    pub const Q_ADDR_MODE_2: u32 = 9;
    pub const Q_ARRAY_SIZE: u32 = 10;
    pub const Q_NUM_MIPMAP_LEVELS: u32 = 11;
    pub const Q_NUM_SAMPLES: u32 = 12;
    /// `txq.level.width/height/depth`: the size of mip level `icoord[0]` (0 outside the
    /// levels the resource has; a resource that is not mipmapped has level 0 only).
    pub const Q_LEVEL_WIDTH: u32 = 13;
    pub const Q_LEVEL_HEIGHT: u32 = 14;
    pub const Q_LEVEL_DEPTH: u32 = 15;
}

/// One texture or surface instruction (`Runtime::texture`): the library fills it, the
/// driver answers in `data` (or reads the value to store from it).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TexRequest {
    /// [`tex`] operation.
    pub op: u32,
    /// [`tex`] geometry `G_*`.
    pub geometry: u32,
    /// The texture or surface object.
    pub handle: u64,
    /// Float coordinates x, y, z (a cubemap's direction), unused.
    pub coord: [f32; 4],
    /// Integer coordinates: with `INT_COORDS` the texel x, y, z; surfaces: byte x, y, z;
    /// `icoord[3]` is the layer of layered geometries.
    pub icoord: [i32; 4],
    /// Level of detail (`LEVEL`).
    pub lod: f32,
    /// Texel offsets x, y, z of `tex`/`tld4` (PTX's offset operand, added to the texel
    /// indices the coordinates select, at each mip level); `[3]` is 0. Was an unused
    /// float 0: zero offsets.
    pub offset: [i8; 4],
    /// Gradients (`GRAD`): dx x, y, z, dy x, y, z.
    pub grad: [f32; 6],
    /// Gather component 0..3 (r, g, b, a).
    pub component: u32,
    /// [`tex`] `R_*`: how `data` holds a fetch's result.
    pub result: u32,
    /// Surface access size in bytes (1, 2, 4, 8, 16).
    pub size: u32,
    /// Surface boundary mode ([`tex::TRAP`], `CLAMP`, `ZERO`).
    pub clamp: u32,
    /// txq / suq attribute ([`tex`] `Q_*`).
    pub query: u32,
    /// [`tex::INT_COORDS`].
    pub flags: u32,
    /// The result (four words), or the value a surface store writes.
    pub data: [u32; 4],
}

/// What a checking library reports through `Runtime::access`.
pub mod access {
    /// A plain read.
    pub const READ: u32 = 0;
    /// A plain write.
    pub const WRITE: u32 = 1;
    /// An atomic load.
    pub const ATOMIC_READ: u32 = 2;
    /// An atomic store or read-modify-write.
    pub const ATOMIC_WRITE: u32 = 3;
    /// The bit that marks an atomic access.
    pub const ATOMIC_BIT: u32 = 2;
    /// The bit that marks a write.
    pub const WRITE_BIT: u32 = 1;
}

/// Kernel body runner: threads `[first, first+count)` of the current block.
pub type RunFn = unsafe extern "C" fn(params: *const *mut c_void, ctx: *mut ThreadCtx, first: u32, count: u32);
/// The calling OS thread's context slot.
pub type CtxSlotFn = unsafe extern "C" fn() -> *mut *mut ThreadCtx;

/// Driver -> library function table. Every function is called on the CUDA thread's
/// fiber.
#[repr(C)]
pub struct Runtime {
    /// [`ABI_VERSION`]
    pub abi_version: u32,
    /// `size_of::<Runtime>()`: entries past a library's known size are absent.
    pub size: u32,
    /// Block barrier; returns the count / and / or result (0 for SYNC).
    pub barrier: unsafe extern "C" fn(op: u32, pred: i32, site: Site) -> i32,
    /// Warp collective over `mask`.
    pub warp: unsafe extern "C" fn(op: u32, mask: u32, value: u64, arg: i32, width: i32, pred_out: *mut i32, site: Site) -> u64,
    /// `__activemask()`: the lanes of the warp converged at this call site.
    pub activemask: unsafe extern "C" fn(site: Site) -> u32,
    /// Ends the launch with the trap kind's error. Does not return.
    pub trap: unsafe extern "C" fn(kind: u32, message: *const c_char, file: *const c_char, line: u32),
    /// Device printf: the formatted text of one call.
    pub print: unsafe extern "C" fn(text: *const c_char, len: usize),
    /// `__threadfence*` (scope 0 block, 1 device, 2 system).
    pub threadfence: unsafe extern "C" fn(scope: u32),
    /// Nanoseconds, monotonic (`clock()`, `clock64()`, `__globaltimer`).
    pub clock: unsafe extern "C" fn() -> u64,
    /// A spin-wait hint (`__nanosleep`, a polling load): lets other threads of the block
    /// run before this one goes on.
    pub yield_now: unsafe extern "C" fn(site: Site),
    /// A device-defined result the library emulated (see [`report`]).
    pub report: unsafe extern "C" fn(kind: u32, message: *const c_char, site: Site),
    /// Added within version 2: a memory access of `size` bytes at `address` (see
    /// [`access`]) by the instruction that called the checking hook at return address
    /// `pc`. Only checking libraries (`kernels-host build --checks`) call it.
    pub access: unsafe extern "C" fn(address: *const c_void, size: u64, kind: u32, pc: *const c_void),
    /// Added within version 2: a texture or surface instruction (see [`TexRequest`]).
    /// The answer is in `req.data`; a fault (a surface access out of range in trap
    /// mode, an unknown object) ends the launch and does not return.
    pub texture: unsafe extern "C" fn(req: *mut TexRequest),
    /// Added within version 2: PTX mode's loop path completed a block barrier `op` at
    /// `site` that `arrived` threads reached, after the `exited_count` threads of
    /// `exited` (in exit order) had exited. Nonzero: the launch stops (the library
    /// returns at once).
    pub block_barrier: unsafe extern "C" fn(op: u32, site: Site, arrived: u32, exited: *const u32, exited_count: u32) -> i32,
    /// Added within version 2: PTX mode's loop path completed warp collective `op` (a
    /// [`warp`] op) at `site` over `mask` in warp `warp` of the block, whose lanes `gone`
    /// had exited (the `warp-lane-exited` hazard, as a fiber's collective reports it).
    /// Nonzero: the launch stops (the library returns at once).
    pub warp_exited: unsafe extern "C" fn(op: u32, site: Site, mask: u32, warp: u32, gone: u32) -> i32,
    /// Added within version 2: the address of the running launch's grid workspace, 0
    /// unless it is a cooperative launch (cuLaunchCooperativeKernel, or cuLaunchKernelEx
    /// with CU_LAUNCH_ATTRIBUTE_COOPERATIVE). Zeroed for each launch, at least 8-byte
    /// aligned; its 32-bit word at offset 4 is the grid barrier's counter. PTX reads it as
    /// `%envreg1` (the high half) and `%envreg2` (the low half), as the device hands it
    /// to cooperative_groups' grid_group.
    pub grid_workspace: unsafe extern "C" fn() -> u64,
    /// Added within version 2: the running fiber's recovery slot, valid while the calling
    /// range runs. A runner may store a [`Recover`] pointer in it for a stretch of its own
    /// code and null after: a fault in kernel code while it is set continues at the
    /// point's landing, on the fiber's stack, as if called there. The executor clears the
    /// slot before it redirects: a second fault ends the thread.
    pub recover_slot: unsafe extern "C" fn() -> *mut *const Recover,
}

/// One `__global__` function of the library.
#[repr(C)]
pub struct Kernel {
    /// The name as written (template-id for instantiations).
    pub name: *const c_char,
    /// The kernel function's address.
    pub function: *const c_void,
    /// Runs a range of threads.
    pub run: RunFn,
    /// Number of parameters.
    pub param_count: u32,
    /// `sizeof` each parameter.
    pub param_sizes: *const u32,
    /// `alignof` each parameter.
    pub param_aligns: *const u32,
    /// `__launch_bounds__` max threads, 0 if none.
    pub max_threads: u32,
    /// `__launch_bounds__` min blocks, 0 if none.
    pub min_blocks: u32,
}

/// One namespace-scope `__device__` or `__constant__` variable.
#[repr(C)]
pub struct Global {
    /// Qualified name as written.
    pub name: *const c_char,
    /// Its address in the library.
    pub address: *mut c_void,
    /// `sizeof`
    pub size: u64,
    /// 1 for `__constant__`.
    pub is_constant: u32,
    /// Padding (0).
    pub reserved: u32,
}

/// The module descriptor. Kernel `i` and global `i` are entry / global `i` of the
/// library's manifest, which records the same `build_id`.
#[repr(C)]
pub struct Module {
    /// [`ABI_VERSION`]
    pub abi_version: u32,
    /// Number of kernels.
    pub kernel_count: u32,
    /// The kernels.
    pub kernels: *const Kernel,
    /// Number of globals.
    pub global_count: u32,
    /// The globals.
    pub globals: *const Global,
    /// The .cu file as given to kernels-host.
    pub source_path: *const c_char,
    /// sha256 hex of the .cu file's bytes.
    pub source_hash: *const c_char,
    /// Identifies this build (sha256 hex of the generated translation unit); the
    /// manifest written with the library holds the same string.
    pub build_id: *const c_char,
    /// Hands the runtime table over, once, before any kernel runs.
    pub bind: unsafe extern "C" fn(runtime: *const Runtime),
    /// The calling OS thread's context slot.
    pub ctx_slot: CtxSlotFn,
}

/// Type of `simtwin_module_v2`.
pub type ModuleFn = unsafe extern "C" fn() -> *const Module;
