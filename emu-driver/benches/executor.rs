//! Executor benchmark (`cargo bench -p emu-driver --bench executor`), one worker:
//! (a) c[i] = a[i] * 1.5f + b[i] over 2^24 floats in blocks of 256, under the executor,
//!     divided by the same body as a plain host loop in this run;
//! (b) nanoseconds per thread per __syncthreads for a 256-thread shared-memory tree
//!     reduction (a u64 square per thread, 8 halving steps: 9 barriers);
//! (c) nanoseconds per lane per shuffle for a 32-lane `__shfl_down_sync` reduction
//!     (5 shuffles per thread, blocks of 256);
//! (d) scaling with `ExecOptions::workers` (blocks on several OS threads) for three
//!     block-parallel kernels: compute-bound (a per-thread polynomial loop), the tree
//!     reduction (barriers) and (a) (memory-bound);
//! (e) launch and block overhead: a kernel whose threads store one word each, launched
//!     as 1 block of 32 threads many times (ns per launch) and as grids of 4096 blocks of
//!     32 and of 1 thread (ns per block beyond the threads' own work), the shape of VMAF's
//!     thousands of small blocks per frame.
//! The kernels are shaped like what kernels-host generates: `run` walks its range,
//! writes each thread's indices into the context, runs the body, and stops when
//! `range_stop` is set; the body reads its indices through the thread-local slot.
//! Each figure is the best of several repetitions.
//!
//! `EXEC_BENCH=abcde` picks the parts to run (default all); `EXEC_BENCH_BLOCKS=N` sets the
//! grid of (b)-(d); `EXEC_BENCH_QUICK=1` runs each once on a small grid (for `valgrind --tool=callgrind`, whose instruction counts do not
//! depend on machine load).

use cuda::abi::{self, Dim3, ThreadCtx};
use cuda::exec::{self, ExecOptions, KernelRef, LaunchConfig};
use std::cell::Cell;
use std::ffi::c_void;
use std::hint::black_box;
use std::ptr;
use std::time::{Duration, Instant};

thread_local! {
    static SLOT: Cell<*mut ThreadCtx> = const { Cell::new(ptr::null_mut()) };
}

unsafe extern "C" fn ctx_slot() -> *mut *mut ThreadCtx {
    SLOT.with(|s| s.as_ptr())
}

#[inline(always)]
fn ctx() -> &'static ThreadCtx {
    unsafe { &*SLOT.with(|s| s.get()) }
}

/// The range loop of a generated `run`: kernelParams are unpacked once per range into
/// the kernel's typed arguments, indices are stepped (not divided) per thread.
macro_rules! run_range {
    ($ctx:expr, $first:expr, $count:expr, $body:expr) => {{
        let ctx: *mut ThreadCtx = $ctx;
        let d = (*ctx).block_dim;
        let mut t = Dim3 { x: $first % d.x, y: ($first / d.x) % d.y, z: $first / (d.x * d.y) };
        for l in $first..$first + $count {
            (*ctx).thread_idx = t;
            (*ctx).linear_tid = l;
            $body;
            if ptr::read_volatile(ptr::addr_of!((*ctx).range_stop)) != 0 {
                return;
            }
            t.x += 1;
            if t.x == d.x {
                t.x = 0;
                t.y += 1;
                if t.y == d.y {
                    t.y = 0;
                    t.z += 1;
                }
            }
        }
    }};
}

unsafe fn param<T: Copy>(p: *const *mut c_void, i: usize) -> T {
    ptr::read_unaligned(*p.add(i) as *const T)
}

/// `__global__ void axpy(const float *a, const float *b, float *c, unsigned n)`
#[inline(always)]
unsafe fn axpy_body(a: *const f32, b: *const f32, r: *mut f32, n: u32) {
    let c = ctx();
    let i = c.block_idx.x * c.block_dim.x + c.thread_idx.x;
    if i < n {
        *r.add(i as usize) = *a.add(i as usize) * 1.5 + *b.add(i as usize);
    }
}

unsafe extern "C" fn axpy_run(p: *const *mut c_void, ctx: *mut ThreadCtx, first: u32, count: u32) {
    let (a, b, r, n) = (param(p, 0), param(p, 1), param(p, 2), param(p, 3));
    run_range!(ctx, first, count, axpy_body(a, b, r, n))
}

/// `__syncthreads()` as the shim writes it: the source line as the site hint, then the
/// runtime call.
macro_rules! syncthreads {
    () => {{
        (exec::runtime_table().barrier)(abi::bar::SYNC, 0, abi::Site { file: c"executor.rs".as_ptr(), line: line!(), column: 0 });
    }};
}

/// `__global__ void reduce(unsigned long long *out)` with `extern __shared__ u64 s[]`.
#[inline(always)]
unsafe fn reduce_body(out: *mut u64) {
    let c = ctx();
    let t = c.thread_idx.x as usize;
    let s = c.dyn_smem as *mut u64;
    let v = c.block_idx.x as u64 * c.block_dim.x as u64 + t as u64;
    ptr::write_volatile(s.add(t), v * v);
    syncthreads!();
    let mut half = c.block_dim.x as usize / 2;
    while half > 0 {
        if t < half {
            ptr::write_volatile(s.add(t), ptr::read_volatile(s.add(t)) + ptr::read_volatile(s.add(t + half)));
        }
        syncthreads!();
        half /= 2;
    }
    if t == 0 {
        *out.add(c.block_idx.x as usize) = ptr::read_volatile(s);
    }
}

unsafe extern "C" fn reduce_run(p: *const *mut c_void, ctx: *mut ThreadCtx, first: u32, count: u32) {
    let out: *mut u64 = param(p, 0);
    run_range!(ctx, first, count, reduce_body(out))
}

/// `__shfl_down_sync(0xffffffff, v, delta)` as the shim writes it.
macro_rules! shfl_down {
    ($v:expr, $d:expr) => {{
        (exec::runtime_table().warp)(
            abi::warp::SHFL_DOWN,
            u32::MAX,
            $v,
            $d,
            32,
            ptr::null_mut(),
            abi::Site { file: c"executor.rs".as_ptr(), line: line!(), column: 0 },
        )
    }};
}

/// `__global__ void warp_sum(unsigned *out)`: a 32-lane shuffle reduction per warp.
#[inline(always)]
unsafe fn warp_sum_body(out: *mut u32) {
    let c = ctx();
    let g = c.block_idx.x * c.block_dim.x + c.thread_idx.x;
    let mut v = g.wrapping_mul(2654435761) >> 7;
    let mut d = 16;
    while d > 0 {
        v = v.wrapping_add(shfl_down!(v as u64, d) as u32);
        d /= 2;
    }
    if c.linear_tid.is_multiple_of(32) {
        *out.add((g / 32) as usize) = v;
    }
}

unsafe extern "C" fn warp_sum_run(p: *const *mut c_void, ctx: *mut ThreadCtx, first: u32, count: u32) {
    let out: *mut u32 = param(p, 0);
    run_range!(ctx, first, count, warp_sum_body(out))
}

fn best<F: FnMut()>(reps: usize, mut f: F) -> Duration {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap()
}

fn reps() -> usize {
    if quick() {
        1
    } else {
        7
    }
}

/// Blocks for parts (b)-(d): `EXEC_BENCH_BLOCKS`, else 64 quick or 4096.
fn blocks() -> u32 {
    std::env::var("EXEC_BENCH_BLOCKS").ok().and_then(|v| v.parse().ok()).unwrap_or(if quick() { 64 } else { 4096 })
}

fn quick() -> bool {
    std::env::var_os("EXEC_BENCH_QUICK").is_some()
}

fn part(p: char) -> bool {
    std::env::var("EXEC_BENCH").map(|s| s.contains(p)).unwrap_or(true)
}

fn main() {
    let opts = ExecOptions::default();
    if part('a') {
        axpy(&opts);
    }
    if part('b') {
        let (per, total, blocks) = reduction(&opts, 256, blocks(), true);
        println!("(b) 256-thread shared-memory tree reduction, 9 barriers per block, {blocks} blocks");
        println!("    total           : {:9.3} ms", total * 1e3);
        println!("    per thread      : {:9.3} ns per __syncthreads   (target <= 6 ns)", per);
        if !quick() {
            for threads in [32u32, 1024] {
                let (per, _, _) = reduction(&opts, threads, 4096 * 256 / threads, false);
                println!("    (same with {threads:4}-thread blocks: {per:.3} ns per thread per barrier)");
            }
        }
    }
    if part('d') {
        scaling(&opts);
    }
    if part('e') {
        overhead(&opts);
    }
    if part('c') {
        let blocks = blocks();
        let (per, total) = shuffles(&opts, blocks);
        println!("(c) 32-lane __shfl_down_sync reduction, 5 shuffles per thread, {blocks} blocks of 256");
        println!("    total           : {:9.3} ms", total * 1e3);
        println!("    per lane        : {:9.3} ns per shuffle   (target <= 6 ns)", per);
    }
}

fn axpy(opts: &ExecOptions) {
    let opts = *opts;

    // (a)
    let n: usize = if quick() { 1 << 16 } else { 1 << 24 };
    let a: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 777) as f32 * 0.25).collect();
    let mut c = vec![0f32; n];
    let mut plain = vec![0f32; n];
    let t_plain = best(reps(), || {
        let (a, b) = (black_box(&a), black_box(&b));
        for i in 0..n {
            plain[i] = a[i] * 1.5 + b[i];
        }
        black_box(&mut plain);
    });
    let (pa, pb, pc, pn) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr(), n as u32);
    let mut vals: [*const c_void; 4] = [pa.cast(), pb.cast(), pc.cast(), ptr::null()];
    vals[3] = ptr::addr_of!(pn).cast();
    let params: Vec<*mut c_void> = vec![
        ptr::addr_of!(vals[0]) as *mut c_void,
        ptr::addr_of!(vals[1]) as *mut c_void,
        ptr::addr_of!(vals[2]) as *mut c_void,
        vals[3] as *mut c_void,
    ];
    let k = KernelRef { name: "axpy".into(), run: axpy_run, ctx_slot, shared_in_tls: true };
    let cfg = LaunchConfig { grid: [(n / 256) as u32, 1, 1], block: [256, 1, 1], dyn_smem_bytes: 0, smem_prefix: 0, grid_workspace: 0 };
    let s0 = exec::stats();
    let t_exec = best(reps(), || {
        let o = exec::launch(&k, &cfg, &params, &opts);
        assert!(o.result.is_ok());
    });
    let s1 = exec::stats();
    assert_eq!(c, plain, "executor and plain loop disagree");
    println!("(a) c[i] = a[i]*1.5f + b[i], 2^24 floats, blocks of 256 ({} blocks)", n / 256);
    println!("    plain host loop : {:9.3} ms", t_plain.as_secs_f64() * 1e3);
    println!("    executor        : {:9.3} ms", t_exec.as_secs_f64() * 1e3);
    println!(
        "    ratio           : {:9.3} x   (target <= 1.5x; fast blocks {}/{}, resumes per block {:.2})",
        t_exec.as_secs_f64() / t_plain.as_secs_f64(),
        s1.fast_blocks - s0.fast_blocks,
        s1.blocks - s0.blocks,
        (s1.fiber_resumes - s0.fiber_resumes) as f64 / (s1.blocks - s0.blocks) as f64
    );
}

/// `__global__ void poly(float *out)`: 512 dependent multiply-adds per thread.
#[inline(always)]
unsafe fn poly_body(out: *mut f32) {
    let c = ctx();
    let i = c.block_idx.x * c.block_dim.x + c.thread_idx.x;
    let x = (i % 1000) as f32 * 1e-3;
    let mut acc = 0.0f32;
    for k in 0..512 {
        acc = acc * x + (k as f32) * 1e-3;
    }
    *out.add(i as usize) = acc;
}

unsafe extern "C" fn poly_run(p: *const *mut c_void, ctx: *mut ThreadCtx, first: u32, count: u32) {
    let out: *mut f32 = param(p, 0);
    run_range!(ctx, first, count, poly_body(out))
}

fn scaling(opts: &ExecOptions) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut counts = vec![1usize, 2];
    let mut n = 4;
    while n <= cores {
        counts.push(n);
        n *= 2;
    }
    println!("(d) blocks on several workers ({cores} cores here); time per launch, speedup over 1 worker");
    let blocks = blocks();
    // compute-bound
    let mut out = vec![0f32; blocks as usize * 256];
    let po = out.as_mut_ptr();
    let params: Vec<*mut c_void> = vec![ptr::addr_of!(po) as *mut c_void];
    let k = KernelRef { name: "poly".into(), run: poly_run, ctx_slot, shared_in_tls: true };
    let cfg = LaunchConfig { grid: [blocks, 1, 1], block: [256, 1, 1], dyn_smem_bytes: 0, smem_prefix: 0, grid_workspace: 0 };
    let mut base = 0.0;
    let mut reference: Option<Vec<f32>> = None;
    for &w in &counts {
        let o = ExecOptions { workers: w, ..*opts };
        let _ = exec::launch(&k, &cfg, &params, &o);
        let t = best(reps(), || assert!(exec::launch(&k, &cfg, &params, &o).result.is_ok())).as_secs_f64();
        match &reference {
            None => reference = Some(out.clone()),
            Some(r) => assert!(r == &out, "{w} workers: same results"),
        }
        if w == 1 {
            base = t;
        }
        println!("    compute  {w:2} workers: {:9.3} ms  x{:.2}", t * 1e3, base / t);
    }
    // barriers
    let threads = 256u32;
    let mut res = vec![0u64; blocks as usize];
    let pr = res.as_mut_ptr();
    let params: Vec<*mut c_void> = vec![ptr::addr_of!(pr) as *mut c_void];
    let k = KernelRef { name: "tree_reduce".into(), run: reduce_run, ctx_slot, shared_in_tls: true };
    let cfg = LaunchConfig {
        grid: [blocks, 1, 1],
        block: [threads, 1, 1],
        dyn_smem_bytes: threads as usize * 8,
        smem_prefix: 0,
        grid_workspace: 0,
    };
    for &w in &counts {
        let o = ExecOptions { workers: w, ..*opts };
        let _ = exec::launch(&k, &cfg, &params, &o);
        let t = best(reps(), || assert!(exec::launch(&k, &cfg, &params, &o).result.is_ok())).as_secs_f64();
        for (bi, &r) in res.iter().enumerate() {
            let want: u64 = (bi as u64 * 256..(bi as u64 + 1) * 256).map(|g| g * g).sum();
            assert_eq!(r, want, "{w} workers: block {bi}");
        }
        if w == 1 {
            base = t;
        }
        println!("    barriers {w:2} workers: {:9.3} ms  x{:.2}", t * 1e3, base / t);
    }
    // memory-bound
    let n: usize = if quick() { 1 << 16 } else { 1 << 24 };
    let a: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 777) as f32 * 0.25).collect();
    let mut c = vec![0f32; n];
    let (pa, pb, pc, pn) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr(), n as u32);
    let params: Vec<*mut c_void> = vec![
        ptr::addr_of!(pa) as *mut c_void,
        ptr::addr_of!(pb) as *mut c_void,
        ptr::addr_of!(pc) as *mut c_void,
        ptr::addr_of!(pn) as *mut c_void,
    ];
    let k = KernelRef { name: "axpy".into(), run: axpy_run, ctx_slot, shared_in_tls: true };
    let cfg = LaunchConfig { grid: [(n / 256) as u32, 1, 1], block: [256, 1, 1], dyn_smem_bytes: 0, smem_prefix: 0, grid_workspace: 0 };
    for &w in &counts {
        let o = ExecOptions { workers: w, ..*opts };
        let t = best(reps(), || assert!(exec::launch(&k, &cfg, &params, &o).result.is_ok())).as_secs_f64();
        if w == 1 {
            base = t;
        }
        println!("    axpy     {w:2} workers: {:9.3} ms  x{:.2}", t * 1e3, base / t);
    }
    assert!(c.iter().zip(a.iter().zip(&b)).all(|(c, (a, b))| *c == a * 1.5 + b));
}

/// Runs the warp shuffle reduction; returns (ns per lane per shuffle, seconds per launch).
fn shuffles(opts: &ExecOptions, blocks: u32) -> (f64, f64) {
    let threads = 256u32;
    let mut out = vec![0u32; (blocks * threads / 32) as usize];
    let po = out.as_mut_ptr();
    let params: Vec<*mut c_void> = vec![ptr::addr_of!(po) as *mut c_void];
    let k = KernelRef { name: "warp_sum".into(), run: warp_sum_run, ctx_slot, shared_in_tls: true };
    let cfg = LaunchConfig { grid: [blocks, 1, 1], block: [threads, 1, 1], dyn_smem_bytes: 0, smem_prefix: 0, grid_workspace: 0 };
    let _ = exec::launch(&k, &cfg, &params, opts);
    let t = best(reps(), || {
        let o = exec::launch(&k, &cfg, &params, opts);
        assert!(o.result.is_ok() && o.hazards.is_empty(), "{:?}", o);
    });
    for (w, &r) in out.iter().enumerate() {
        let want = (0..32u32).fold(0u32, |a, l| {
            let g = w as u32 * 32 + l;
            a.wrapping_add(g.wrapping_mul(2654435761) >> 7)
        });
        // A tree of shfl_down over 32 lanes sums every lane into lane 0.
        assert_eq!(r, want, "warp {w}");
    }
    (t.as_secs_f64() * 1e9 / (blocks as f64 * threads as f64 * 5.0), t.as_secs_f64())
}

/// Runs the tree reduction with `threads`-thread blocks; returns (ns per thread per
/// barrier, seconds per launch, blocks).
fn reduction(opts: &ExecOptions, threads: u32, blocks: u32, check: bool) -> (f64, f64, u32) {
    let mut out = vec![0u64; blocks as usize];
    let po = out.as_mut_ptr();
    let params: Vec<*mut c_void> = vec![ptr::addr_of!(po) as *mut c_void];
    let k = KernelRef { name: "tree_reduce".into(), run: reduce_run, ctx_slot, shared_in_tls: true };
    let cfg = LaunchConfig {
        grid: [blocks, 1, 1],
        block: [threads, 1, 1],
        dyn_smem_bytes: threads as usize * 8,
        smem_prefix: 0,
        grid_workspace: 0,
    };
    let _ = exec::launch(&k, &cfg, &params, opts); // creates the fibers
    let s0 = exec::stats();
    let t = best(reps(), || {
        let o = exec::launch(&k, &cfg, &params, opts);
        assert!(o.result.is_ok() && o.hazards.is_empty(), "{:?}", o);
    });
    let s1 = exec::stats();
    assert_eq!(s1.fibers_created, s0.fibers_created, "fibers are reused");
    if check {
        for (bi, &r) in out.iter().enumerate() {
            let n = threads as u64;
            let want: u64 = (bi as u64 * n..(bi as u64 + 1) * n).map(|g| g * g).sum();
            assert_eq!(r, want, "block {bi}");
        }
    }
    let barriers = (1 + threads.trailing_zeros()) as f64;
    (t.as_secs_f64() * 1e9 / (blocks as f64 * threads as f64 * barriers), t.as_secs_f64(), blocks)
}

/// `__global__ void touch(unsigned *out)`: each thread stores its global index.
#[inline(always)]
unsafe fn touch_body(out: *mut u32) {
    let c = ctx();
    let i = c.block_idx.x * c.block_dim.x + c.thread_idx.x;
    *out.add(i as usize) = i;
}

unsafe extern "C" fn touch_run(p: *const *mut c_void, ctx: *mut ThreadCtx, first: u32, count: u32) {
    let out = param(p, 0);
    run_range!(ctx, first, count, touch_body(out))
}

/// (e): what a launch and a block cost the executor beyond the threads' own stores.
fn overhead(opts: &ExecOptions) {
    let grid = if quick() { 256 } else { 4096 };
    let mut out = vec![0u32; grid as usize * 32];
    let po = out.as_mut_ptr();
    let params: Vec<*mut c_void> = vec![ptr::addr_of!(po) as *mut c_void];
    let k = KernelRef { name: "touch".into(), run: touch_run, ctx_slot, shared_in_tls: true };
    let cfg = |g: u32, b: u32| LaunchConfig { grid: [g, 1, 1], block: [b, 1, 1], dyn_smem_bytes: 0, smem_prefix: 0, grid_workspace: 0 };
    let launches = if quick() { 100 } else { 20_000 };
    let one = cfg(1, 32);
    let _ = exec::launch(&k, &one, &params, opts);
    let t = best(reps(), || {
        for _ in 0..launches {
            let o = exec::launch(&k, &one, &params, opts);
            assert!(o.result.is_ok());
        }
    });
    let per_launch = t.as_secs_f64() * 1e9 / launches as f64;
    let time_grid = |b: u32| {
        let c = cfg(grid, b);
        let _ = exec::launch(&k, &c, &params, opts);
        best(reps(), || {
            let o = exec::launch(&k, &c, &params, opts);
            assert!(o.result.is_ok());
        })
        .as_secs_f64()
            * 1e9
    };
    let (t32, t1) = (time_grid(32), time_grid(1));
    assert!(out.iter().enumerate().all(|(i, &v)| v == i as u32), "every thread stored its index");
    // A 1-thread block is almost all block overhead; the 32-thread grid adds 31 threads'
    // stores per block, which gives the per-thread cost.
    let per_block = (t1 - per_launch) / grid as f64;
    let per_thread = (t32 - t1) / (grid as f64 * 31.0);
    println!("(e) launch and block overhead (a one-store kernel)");
    println!("    per launch      : {per_launch:9.1} ns   (1 block of 32 threads, {launches} launches)");
    println!("    per block       : {per_block:9.1} ns   ({grid} blocks of 1 thread, launch cost taken off)");
    println!("    per thread      : {per_thread:9.2} ns   ({grid} blocks of 32 threads against blocks of 1)");
}
