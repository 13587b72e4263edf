//! parity: runs CPU vs CUDA extractors per frame, diffs, transfer audits, fp32 replay, timing.
//!
//! Commands (see `parity --help`): `frames`, `diff`, `transfers`, `bench`, `faults`, `bisect`,
//! `demo`, `driver-info`; `replay` and `libm` live in [`replay`].
//!
//! Exit codes: 0 parity / pass, 1 differences beyond tolerance, a failed gate, outputs
//! that change between block orders or a crash/hang under fault injection, 2 setup or
//! input error (an extractor that fails or reaches its time limit included), 77 a real
//! device was asked for and none exists.

#![warn(missing_docs)]

pub mod bench;
pub mod bisect;
pub(crate) mod common;
pub(crate) mod compare;
pub(crate) mod counts;
pub mod demo;
pub mod device;
pub mod diff;
pub mod faults;
pub(crate) mod fidelity;
pub mod frames;
pub(crate) mod num;
pub(crate) mod orders;
pub(crate) mod output;
pub mod replay;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod template;
pub(crate) mod tolerance;
pub mod transfers;

/// A run that cannot happen on this machine (no real device): exit code 77.
#[derive(Debug)]
pub struct Skip(pub String);

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Skip {}

/// The exit code of an error: 77 for [`Skip`], 2 for everything else.
pub fn exit_code_of(e: &anyhow::Error) -> i32 {
    if e.downcast_ref::<Skip>().is_some() {
        77
    } else {
        2
    }
}
