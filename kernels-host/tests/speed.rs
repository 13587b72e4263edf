//! Generated code speed: the runner reads the thread context without `__tls_get_addr`,
//! computes thread indices without divisions and inlines the kernel body; a measurement
//! (`--ignored`) prints ns per thread of a trivial kernel called through `run`.

mod common;
use common::*;
use kernels_host::build::{build, BuildOptions, Built};
use std::ffi::c_void;
use std::sync::OnceLock;

fn speed_lib() -> &'static (tempfile::TempDir, Built) {
    static LIB: OnceLock<(tempfile::TempDir, Built)> = OnceLock::new();
    LIB.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let opts = BuildOptions::new(dir.path(), vec![cu("speed.cu")]);
        let built = build(&opts).unwrap_or_else(|e| panic!("{e}")).remove(0);
        (dir, built)
    })
}

fn open_speed() -> kernels_host::module::LoadedModule {
    let m = kernels_host::module::LoadedModule::open(&speed_lib().1.library).unwrap();
    unsafe { m.bind(&RUNTIME) };
    m
}

#[test]
fn three_d_indices_from_any_range_start() {
    let m = open_speed();
    let k = m.kernel("ids").unwrap();
    // Odd shapes take the dividing path, power-of-two shapes the shifting one; ranges
    // start inside the first row, inside a later row and inside a later plane.
    for (bx, by, bz) in [(5u32, 3u32, 4u32), (8, 4, 2), (16, 16, 1), (32, 1, 1), (1, 1, 4)] {
        let n = bx * by * bz;
        let mut out = vec![u32::MAX; 4 * n as usize];
        let mut p = out.as_mut_ptr();
        let args = [arg(&mut p)];
        let mut ctx = new_ctx(bx, &mut []);
        ctx.block_dim = kernels_host::module::ffi::Dim3 { x: bx, y: by, z: bz };
        let cuts = [0, 1.min(n - 1), (bx + 1).min(n - 1), (bx * by + 2).min(n - 1), n];
        let mut cuts: Vec<u32> = cuts.to_vec();
        cuts.dedup();
        for w in cuts.windows(2) {
            let (first, count) = (w[0], w[1] - w[0]);
            unsafe {
                *m.ctx_slot() = &mut ctx;
                (k.run)(args.as_ptr(), &mut ctx, first, count);
            }
            // The last thread run is named; `reserved = 1`: the runner checks range_stop
            // before each thread (abi.h), so the executor may preempt its threads.
            let last = first + count - 1;
            assert_eq!((ctx.linear_tid, ctx.reserved), (last, 1));
        }
        for t in 0..n {
            let e = [t % bx, (t / bx) % by, t / (bx * by), t];
            assert_eq!(&out[4 * t as usize..4 * t as usize + 4], &e, "block {bx}x{by}x{bz}, thread {t}");
        }
    }
}

/// The functions of `lib` whose (demangled) names contain `pat`, with their disassembly.
fn disassembly(lib: &std::path::Path, pat: &str) -> Vec<(String, String)> {
    let out = std::process::Command::new("objdump").args(["-d", "-C", "--no-show-raw-insn"]).arg(lib).output().expect("objdump (binutils)");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let mut funcs = Vec::new();
    for block in text.split("\n\n") {
        let Some(head) = block.lines().next() else { continue };
        if head.ends_with(">:") && head.contains(pat) {
            funcs.push((head.to_string(), block.to_string()));
        }
    }
    funcs
}

#[test]
fn runner_reads_the_context_without_tls_calls_divisions_or_kernel_calls() {
    let lib = &speed_lib().1.library;
    let runners = disassembly(lib, "runner<void (*)(");
    let run_fns: Vec<_> = runners.iter().filter(|(h, _)| h.contains("::run(") || h.contains("::go<")).collect();
    assert!(!run_fns.is_empty(), "no runner functions found in {}", lib.display());
    for (head, body) in &run_fns {
        assert!(!body.contains("__tls_get_addr"), "{head} calls __tls_get_addr:\n{body}");
        assert!(!body.lines().any(|l| l.contains("\tdiv") || l.contains("\tidiv")), "{head} divides:\n{body}");
        // The kernel body is inlined: no call to the kernel's own symbol.
        assert!(!body.contains("<saxpy>") && !body.contains("<ids>"), "{head} calls the kernel:\n{body}");
    }
    // The kernels themselves still exist under their own names (the manifest's symbols).
    let kernels = disassembly(lib, "<saxpy>:");
    assert_eq!(kernels.len(), 1);
    assert!(!kernels[0].1.contains("__tls_get_addr"), "{}", kernels[0].1);
}

/// ns per thread of `saxpy` over 2^22 threads in blocks of 256, called through `run`.
#[test]
#[ignore]
fn measure_ns_per_thread() {
    let m = open_speed();
    let k = m.kernel("saxpy").unwrap();
    let n: usize = 1 << 22;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let mut c = vec![0f32; n];
    let (mut pa, mut pb, mut pc, mut nn) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr(), n as i32);
    let args: [*mut c_void; 4] = [arg(&mut pa), arg(&mut pb), arg(&mut pc), arg(&mut nn)];
    let mut ctx = new_ctx(256, &mut []);
    ctx.grid_dim.x = (n / 256) as u32;
    let mut best = f64::MAX;
    for _ in 0..7 {
        let t0 = std::time::Instant::now();
        for blk in 0..(n / 256) as u32 {
            ctx.block_idx.x = blk;
            unsafe {
                *m.ctx_slot() = &mut ctx;
                (k.run)(args.as_ptr(), &mut ctx, 0, 256);
            }
        }
        best = best.min(t0.elapsed().as_secs_f64());
    }
    assert!(c.iter().enumerate().all(|(i, v)| *v == a[i] * 1.5 + b[i]));
    // The same work as a plain loop, for scale.
    let mut plain = f64::MAX;
    for _ in 0..7 {
        let t0 = std::time::Instant::now();
        for i in 0..n {
            c[i] = std::hint::black_box(a[i]) * 1.5 + b[i];
        }
        plain = plain.min(t0.elapsed().as_secs_f64());
    }
    println!("saxpy through run: {:.2} ns/thread; plain loop {:.2} ns/element", best * 1e9 / n as f64, plain * 1e9 / n as f64);
}
