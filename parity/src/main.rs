//! The `parity` command line.

use clap::{Parser, Subcommand};
use parity::{bench, bisect, demo, device, diff, faults, frames, transfers};

#[derive(Parser)]
#[command(
    name = "parity",
    version,
    about = "CPU vs CUDA extractor parity: per-frame diffs, transfer audits and timing, on simtwin's emulated driver or a real GPU",
    after_help = "Examples:
  parity demo
  parity frames -r ref.yuv -d dis.yuv -W 256 -H 256 --features sse,topk
  parity diff cpu.json cuda.json --out reports/diff
  parity transfers -r ref.yuv -d dis.yuv -W 256 -H 256 --features temporal --baseline sse --max-htod-per-frame 0
  parity frames -r ref.yuv -d dis.yuv -W 256 -H 256 --features topk --block-orders forward,reverse,shuffle:1
  parity bench -r ref.yuv -d dis.yuv -W 256 -H 256 --features sse --backend cpu --b-backend cuda
  parity faults -r ref.yuv -d dis.yuv -W 256 -H 256 --features sse --max-runs 40
  parity bisect a.trace b.trace
  parity driver-info

Exit codes: 0 parity/pass, 1 differences, a failed gate, order-dependent outputs or a
crash/hang under fault injection, 2 setup or input error (an extractor that fails or
reaches --timeout), 77 no real device."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a CPU and a CUDA extractor on the same clips and compare every frame and metric bit for bit
    Frames(frames::FramesArgs),
    /// Compare two existing outputs (VMAF JSON, XML or CSV) without running anything
    Diff(diff::DiffArgs),
    /// Per-frame audit of driver calls, copies and kernel launches: (count(N2) - count(N1)) / (N2 - N1)
    Transfers(transfers::TransfersArgs),
    /// Milliseconds per frame, (t(N) - t(2)) / (N - 2), median of 3; A/B mode interleaves two commands
    Bench(bench::BenchArgs),
    /// Fault injection: fail each driver call of a program in turn (EMU_CUDA_FAIL), report crashes, hangs and leaks
    Faults(faults::FaultsArgs),
    /// The first kernel launch at which two runs diverge: two launch traces (EMU_CUDA_TRACE) aligned launch by launch
    Bisect(bisect::BisectArgs),
    /// The end-to-end demo: fixture clips, parity per feature, transfer audits, planted defects
    Demo(demo::DemoArgs),
    /// Which libcuda.so.1 the loader picks, whether it is simtwin's emulated driver, how many devices it sees
    #[command(after_help = "Examples:\n  parity driver-info\n  LD_LIBRARY_PATH=$(scripts/emu-env) parity driver-info --json\n\nExit codes: 0 a driver with a device (or the emulated driver), 77 no driver or no device.")]
    DriverInfo {
        /// Print one JSON line
        #[arg(long)]
        json: bool,
        /// Call cuInit on simtwin's emulated driver too (does it accept the EMU_CUDA_* settings?)
        #[arg(long, hide = true)]
        init_emulated: bool,
    },
    /// Replay a device function over every binary32 input of a range against a correctly rounded reference
    Replay(parity::replay::ReplayArgs),
    /// Audit a host libm function over binary32 inputs against a correctly rounded reference
    Libm(parity::replay::LibmArgs),
}

fn main() {
    let cli = Cli::parse();
    let r = match &cli.cmd {
        Cmd::Frames(a) => frames::run_frames(a),
        Cmd::Diff(a) => diff::run_diff(a),
        Cmd::Transfers(a) => transfers::run_transfers(a),
        Cmd::Bench(a) => bench::run_bench(a),
        Cmd::Faults(a) => faults::run_faults(a),
        Cmd::Demo(a) => demo::run_demo(a),
        Cmd::Bisect(a) => bisect::run_bisect(a),
        Cmd::Replay(a) => parity::replay::run_replay(a),
        Cmd::Libm(a) => parity::replay::run_libm(a),
        Cmd::DriverInfo { json, init_emulated } => {
            let info = device::driver_info_here(true, *init_emulated);
            if *json {
                println!("{}", serde_json::to_string(&info).unwrap());
            } else {
                println!("libcuda.so.1: {}", info.path.as_deref().unwrap_or(if info.loaded { "(loaded, path unknown)" } else { "not found" }));
                println!("simtwin emulated driver: {}", if info.emulated { "yes" } else { "no" });
                if let Some(i) = info.init {
                    println!("cuInit: {i}");
                }
                if let Some(d) = info.devices {
                    println!("devices: {d}");
                }
                if let Some(e) = &info.error {
                    println!("note: {e}");
                }
            }
            Ok(if info.emulated || info.devices.unwrap_or(0) > 0 { 0 } else { 77 })
        }
    };
    let code = match r {
        Ok(c) => c,
        Err(e) => {
            let c = parity::exit_code_of(&e);
            if c == 77 {
                eprintln!("parity: skipped: {e:#}");
            } else {
                eprintln!("parity: error: {e:#}");
            }
            c
        }
    };
    std::process::exit(code);
}
