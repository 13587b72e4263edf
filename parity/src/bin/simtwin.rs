//! The `simtwin` command: the front door for running any command on the emulated driver
//! (see `parity::wrap`).

use clap::{Parser, Subcommand};
use parity::wrap;

#[derive(Parser)]
#[command(
    name = "simtwin",
    version,
    about = "Run any command on simtwin's emulated CUDA driver and summarise what its processes did",
    after_help = "Examples:
  simtwin run --kernels build/simtwin-kernels -- ctest --output-on-failure
  eval \"$(simtwin env --kernels build/simtwin-kernels)\"; make test; simtwin summary
  simtwin run --report simtwin-report -- parity frames -r ref.yuv -d dis.yuv -W 256 -H 256

Exit codes of `simtwin run`: CMD's status when it fails; 80 unsupported calls, 81 hazards
(--hazards error), 82 work that never ran, 83 leaks, 84 no process loaded the driver (the
last three with --fail-on), 85 kernel launches that failed (a fault, trap or timeout CMD
went on from); 125 simtwin failed, 126 CMD not executable, 127 CMD not found."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run CMD (and every process it starts) on the emulated driver, then print one summary
    Run(wrap::RunArgs),
    /// Print the same environment as `export` lines (or $GITHUB_ENV lines) for CI steps
    Env(wrap::EnvArgs),
    /// Summarise the counters the processes since `simtwin env` left
    Summary(wrap::SummaryArgs),
    /// Which libcuda.so.1 the loader picks (used by simtwin's own driver probe)
    #[command(hide = true)]
    DriverInfo(parity::device::DriverInfoArgs),
}

fn main() {
    // A bad option is simtwin's own failure (125), never a status CMD could have given.
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { wrap::EXIT_SIMTWIN } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let code = match &cli.cmd {
        Cmd::Run(a) => wrap::run(a),
        Cmd::Env(a) => wrap::env(a).unwrap_or_else(|e| {
            eprintln!("simtwin: error: {e:#}");
            wrap::EXIT_SIMTWIN
        }),
        Cmd::Summary(a) => wrap::summary(a).unwrap_or_else(|e| {
            eprintln!("simtwin: error: {e:#}");
            wrap::EXIT_SIMTWIN
        }),
        Cmd::DriverInfo(a) => parity::device::print_driver_info(a.json, a.init_emulated),
    };
    std::process::exit(code);
}
