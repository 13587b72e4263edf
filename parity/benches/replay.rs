//! Replay throughput: the fixtures' crlog2 host-compiled, the reference's fast path alone,
//! and the full replay (function + reference + MPFR) on sample ranges; prints inputs/s
//! and the extrapolated time of the full replay over all 2 139 095 039 positive finite
//! floats. `cargo bench -p parity --bench replay` (set REPLAY_BENCH_INPUTS to change the
//! sample size, REPLAY_BENCH_THREADS the worker count).

use parity::replay::engine::{self, BatchFn, Options};
use parity::replay::host;
use parity::replay::reference::RefFn;
use std::path::PathBuf;
use std::time::Instant;

const FULL: f64 = 2_139_095_039.0;

fn main() {
    let n: u64 = std::env::var("REPLAY_BENCH_INPUTS").ok().and_then(|s| s.parse().ok()).unwrap_or(1 << 25);
    let threads: Option<usize> = std::env::var("REPLAY_BENCH_THREADS").ok().and_then(|s| s.parse().ok());
    let mut b = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        b = b.num_threads(t);
    }
    let pool = b.build().unwrap();
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let src = root.join("fixtures/cuda/crlog2_device.cu");
    let work = std::env::temp_dir().join(format!("replay-bench-{}", std::process::id()));
    let lib = host::compile(&src, "crlog2_device", &[], &[], &work).expect("compile crlog2");
    let f = host::HostBatch::load(&lib).unwrap();
    let r = RefFn::Log2;
    println!(
        "replay bench: {} worker threads, {} inputs per sample (machine shared: figures are pessimistic)",
        pool.current_num_threads(),
        n
    );

    // Samples spread over the range: [2^-126, ..), [0.5, 2), [2^100, ..), subnormals.
    let starts: [u32; 4] = [0x0080_0000, 0x3f00_0000, 0x7180_0000, 0x0000_0001];
    let chunk = 1usize << 16;

    // 1. function alone
    let t0 = Instant::now();
    pool.install(|| {
        use rayon::prelude::*;
        starts.par_iter().for_each(|&s| {
            let mut inb = vec![0u32; chunk];
            let mut outb = vec![0u32; chunk];
            let mut lo = s as u64;
            let end = s as u64 + n / 4;
            let mut acc = 0u32;
            while lo < end {
                for (k, v) in inb.iter_mut().enumerate() {
                    *v = (lo as u32).wrapping_add(k as u32);
                }
                f.eval(&inb, &mut outb);
                acc ^= outb[0];
                lo += chunk as u64;
            }
            std::hint::black_box(acc);
        })
    });
    let tf = t0.elapsed().as_secs_f64();
    println!("crlog2 (host-compiled) alone : {:>8.2} M inputs/s", n as f64 / tf / 1e6);

    // 2. reference fast path alone
    let t0 = Instant::now();
    let accepted: u64 = pool.install(|| {
        use rayon::prelude::*;
        starts
            .par_iter()
            .map(|&s| (s as u64..s as u64 + n / 4).filter(|&x| r.fast(f32::from_bits(x as u32)).1.is_some()).count() as u64)
            .sum()
    });
    let tr = t0.elapsed().as_secs_f64();
    println!(
        "reference fast path alone    : {:>8.2} M inputs/s ({} of {} accepted, {:.2e} to MPFR)",
        n as f64 / tr / 1e6,
        accepted,
        n,
        1.0 - accepted as f64 / n as f64
    );

    // 3. full replay (what `parity replay` does)
    let opts = Options { progress: false, ..Default::default() };
    let mut total = 0u64;
    let mut secs = 0.0;
    let mut mpfr = 0u64;
    for &s in &starts {
        let o = pool.install(|| engine::replay(&f, &r, s, s as u64 + n / 4, &opts, "bench"));
        total += o.inputs;
        secs += o.seconds;
        mpfr += o.mpfr_decided;
        assert_eq!(o.misrounded, 0, "crlog2 with its table misrounds at 0x{s:08x}");
    }
    let rate = total as f64 / secs;
    println!("full replay                  : {:>8.2} M inputs/s ({} MPFR-decided)", rate / 1e6, mpfr);
    println!("extrapolated full range (2^31 - 2^23 - 1 inputs): {:.1} s", FULL / rate);
    let _ = std::fs::remove_dir_all(&work);
}
