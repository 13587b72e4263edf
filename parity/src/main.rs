//! The `parity` command line.

use clap::{Parser, Subcommand};
use parity::{bench, bisect, demo, device, diff, faults, frames, merge, transfers};

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
  parity frames --clips clips.csv --features sse,topk --per-feature --shard 1/4 --out shard-1
  parity merge shard-1 shard-2 shard-3 shard-4 --out reports/frames
  parity bisect a.trace b.trace
  parity driver-info

Exit codes: 0 parity/pass, 1 differences, a failed gate, order-dependent outputs or a
crash/hang under fault injection, 2 setup or input error (an extractor that fails or
reaches --timeout), 77 no real device."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// Largest file parity reads (extractor outputs, counters, logs, tables), e.g. 2G
    /// [default 512M, or PARITY_MAX_INPUT]
    #[arg(long, global = true, value_name = "SIZE", value_parser = parity::input::parse_size)]
    max_input: Option<u64>,
    /// Time limit of reading one such file, in seconds [default 60, or PARITY_INPUT_TIMEOUT]
    #[arg(long, global = true, value_name = "SECONDS", value_parser = parity::input::parse_timeout)]
    input_timeout: Option<f64>,
}

/// A command-line error: the command never ran; its report directory (from `--out`, or
/// the command's default) must not keep an earlier run's results as if they were this
/// one's.
fn command_line_error(e: &clap::Error) {
    use clap::CommandFactory;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cli = Cli::command();
    let Some((name, sub)) = args.iter().find_map(|a| cli.find_subcommand(a).map(|s| (a.clone(), s.clone()))) else { return };
    let mut out =
        sub.get_arguments().find(|a| a.get_id() == "out").and_then(|a| a.get_default_values().first().map(std::path::PathBuf::from));
    for (i, a) in args.iter().enumerate() {
        if a == "--out" || a == "-o" {
            out = args.get(i + 1).map(std::path::PathBuf::from);
        } else if let Some(v) = a.strip_prefix("--out=") {
            out = Some(v.into());
        }
    }
    if let Some(out) = out {
        let msg = e.to_string();
        parity::command_line::report_command_line_error(&name, &out, msg.trim_end());
    }
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
    #[command(
        after_help = "Examples:\n  parity driver-info\n  LD_LIBRARY_PATH=$(scripts/emu-env) parity driver-info --json\n\nExit codes: 0 a driver with a device (or the emulated driver), 77 no driver or no device."
    )]
    DriverInfo(device::DriverInfoArgs),
    /// Replay a device function over every binary32 input of a range against a correctly rounded reference
    Replay(parity::replay::ReplayArgs),
    /// Audit a host libm function over binary32 inputs against a correctly rounded reference
    Libm(parity::replay::LibmArgs),
    /// Put the shards of a --shard K/N run (frames, faults, replay, libm) back together into one report
    Merge(merge::MergeArgs),
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            if !matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion) {
                command_line_error(&e);
            }
            e.exit();
        }
    };
    let limits = match parity::input::limits_from_env() {
        Ok(l) => parity::input::Limits {
            max_bytes: cli.max_input.unwrap_or(l.max_bytes),
            timeout: cli.input_timeout.map(std::time::Duration::from_secs_f64).unwrap_or(l.timeout),
        },
        Err(e) => {
            eprintln!("parity: error: {e:#}");
            std::process::exit(2);
        }
    };
    parity::input::set_limits(limits);
    let r = match &cli.cmd {
        Cmd::Frames(a) if !a.video.is_empty() => parity::video::run_video(a),
        Cmd::Frames(a) => frames::run_frames(a),
        Cmd::Diff(a) => diff::run_diff(a),
        Cmd::Transfers(a) => transfers::run_transfers(a),
        Cmd::Bench(a) => bench::run_bench(a),
        Cmd::Faults(a) => faults::run_faults(a),
        Cmd::Demo(a) => demo::run_demo(a),
        Cmd::Bisect(a) => bisect::run_bisect(a),
        Cmd::Replay(a) => parity::replay::run_replay(a),
        Cmd::Libm(a) => parity::replay::run_libm(a),
        Cmd::Merge(a) => merge::run_merge(a),
        Cmd::DriverInfo(a) => Ok(device::print_driver_info(a.json, a.init_emulated)),
    };
    let code = match r {
        Ok(c) => c,
        Err(e) => {
            let c = parity::exit::exit_code_of(&e);
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
