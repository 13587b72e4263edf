//! Runs the kernels of ../kernels.cu through cudarc's safe API (CudaContext, the default
//! stream, clone_htod / alloc_zeros, load_module, launch_builder, clone_dtoh) and checks
//! every result bit for bit against the CPU. Usage: cudarc-client KERNELS.fatbin.
//! Exit 0 only if every result matches.
use cudarc::driver::{CudaContext, DriverError, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;

const N: u32 = 4096;
const BLOCK: u32 = 256;
const WEIGHTS: [u32; 16] = [3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59];

fn run(fatbin: &str) -> Result<usize, DriverError> {
    let ctx = CudaContext::new(0)?;
    let stream = ctx.default_stream();
    let image = std::fs::read(fatbin).expect("read fatbin");
    let module = ctx.load_module(Ptx::from_binary(image))?;
    let scan_f = module.load_function("warp_scan")?;
    let total_f = module.load_function("block_total")?;
    let stats_f = module.load_function("ballot_stats")?;
    let weigh_f = module.load_function("weigh")?;

    let mut x = 777u32;
    let input: Vec<u32> = (0..N)
        .map(|_| {
            x = x.wrapping_mul(1664525).wrapping_add(1013904223);
            x >> 9
        })
        .collect();
    let d_in = stream.clone_htod(&input)?;
    let mut d_scan = stream.alloc_zeros::<u32>(N as usize)?;
    let mut d_total = stream.alloc_zeros::<u64>(1)?;
    let mut d_counts = stream.alloc_zeros::<u32>(3)?;
    let mut d_weigh = stream.alloc_zeros::<u32>(N as usize)?;
    let n = N;
    let cfg = LaunchConfig { grid_dim: (N / BLOCK, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 };
    let cfg_shared = LaunchConfig { shared_mem_bytes: BLOCK * 4, ..cfg };
    // SAFETY: argument lists match the kernels' signatures in kernels.cu.
    unsafe {
        stream.launch_builder(&scan_f).arg(&d_in).arg(&mut d_scan).arg(&n).launch(cfg)?;
        stream.launch_builder(&total_f).arg(&d_in).arg(&mut d_total).arg(&n).launch(cfg_shared)?;
        stream.launch_builder(&stats_f).arg(&d_in).arg(&mut d_counts).arg(&n).launch(cfg)?;
        stream.launch_builder(&weigh_f).arg(&d_in).arg(&mut d_weigh).arg(&n).launch(cfg)?;
    }
    let scan = stream.clone_dtoh(&d_scan)?;
    let total = stream.clone_dtoh(&d_total)?;
    let counts = stream.clone_dtoh(&d_counts)?;
    let weigh = stream.clone_dtoh(&d_weigh)?;
    stream.synchronize()?;

    let mut failures = 0;
    let mut check = |what: &str, ok: bool| {
        println!("{what}: {}", if ok { "ok" } else { "MISMATCH" });
        if !ok {
            failures += 1;
        }
    };
    let mut want_scan = vec![0u32; N as usize];
    let (mut odd, mut mx, mut xr) = (0u32, 0u32, 0u32);
    for w in 0..(N as usize / 32) {
        let mut acc = 0u32;
        let mut wm = 0u32;
        for l in 0..32 {
            let v = input[w * 32 + l];
            acc = acc.wrapping_add(v);
            want_scan[w * 32 + l] = acc;
            odd += v & 1;
            mx = mx.max(v);
            wm = wm.max(v);
        }
        xr ^= wm;
    }
    let want_total: u64 = input.iter().map(|&v| v as u64).sum();
    let want_weigh: Vec<u32> = input.iter().enumerate().map(|(i, &v)| v.wrapping_mul(WEIGHTS[i % 16]).wrapping_add(v >> 3)).collect();
    check("warp_scan", scan == want_scan);
    check("block_total", total == [want_total]);
    check("ballot_stats", counts == [odd, mx, xr]);
    check("weigh", weigh == want_weigh);
    Ok(failures)
}

fn main() {
    let Some(fatbin) = std::env::args().nth(1) else {
        eprintln!("usage: cudarc-client KERNELS.fatbin");
        std::process::exit(2);
    };
    match run(&fatbin) {
        Ok(0) => println!("cudarc-client: all results match"),
        Ok(n) => {
            println!("cudarc-client: FAILED ({n} mismatches)");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("cudarc-client: driver error {e:?}");
            std::process::exit(2);
        }
    }
}
