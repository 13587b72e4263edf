//! parity: runs CPU vs CUDA extractors per frame, diffs, transfer audits, fp32 replay, timing.
//!
//! Commands (see `parity --help`): `frames`, `diff`, `transfers`, `bench`, `faults`,
//! `demo`, `driver-info`, `merge` (shards of `--shard K/N` runs); `replay` and `libm`
//! live in [`replay`]. The `simtwin` front door (run any command on the emulated driver)
//! is [`wrap`].
//!
//! Exit codes: 0 parity / pass, 1 differences beyond tolerance, a failed gate, outputs
//! that change between block orders or a crash/hang under fault injection, 2 setup or
//! input error (an extractor that fails or reaches its time limit included), 77 a real
//! device was asked for and none exists.

#![warn(missing_docs)]

pub mod bench;
pub(crate) mod common;
pub(crate) mod compare;
pub(crate) mod counts;
pub mod demo;
pub mod device;
pub mod diff;
pub mod faults;
pub(crate) mod fidelity;
pub mod frames;
pub mod input;
pub(crate) mod junit;
pub(crate) mod matrix;
pub mod merge;
pub(crate) mod num;
pub(crate) mod orders;
pub(crate) mod output;
pub mod replay;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod run_summary;
pub mod settings;
pub mod shard;
pub(crate) mod template;
pub(crate) mod tolerance;
pub mod transfers;
pub mod wrap;

/// A run that cannot happen on this machine (no real device): exit code 77.
#[derive(Debug)]
pub struct Skip(pub String);

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Skip {}

/// What command `name` leaves in its report directory (None for commands without one).
fn artefacts_of(name: &str) -> Option<&'static report::Artefacts<'static>> {
    Some(match name {
        "frames" => &report::FRAMES_ARTEFACTS,
        "diff" => &report::DIFF_ARTEFACTS,
        "transfers" => &transfers::ARTEFACTS,
        "bench" => &bench::ARTEFACTS,
        "faults" => &faults::ARTEFACTS,
        "demo" => &demo::DEMO_ARTEFACTS,
        _ => return None,
    })
}

/// A command-line error of command `name`: its report directory `dir` (if it exists) is
/// cleared of an earlier run's files and gets an error summary holding `message`.
pub fn report_command_line_error(name: &str, dir: &std::path::Path, message: &str) {
    if let Some(a) = artefacts_of(name) {
        report::command_line_error(name, dir, a, message);
    }
}

/// The exit code of an error: 77 for [`Skip`], 2 for everything else.
pub fn exit_code_of(e: &anyhow::Error) -> i32 {
    if e.downcast_ref::<Skip>().is_some() {
        77
    } else {
        2
    }
}
