//! parity: runs CPU vs CUDA extractors per frame, diffs, transfer audits, fp32 replay, timing.
//!
//! Commands (see `parity --help`): `frames`, `diff`, `transfers`, `bench`, `faults`, `bisect`,
//! `demo`, `driver-info`, `merge` (shards of `--shard K/N` runs); `replay` and `libm`
//! live in [`replay`]. The `simtwin` front door (run any command on the emulated driver)
//! is [`wrap`].
//!
//! Exit codes: 0 parity / pass, 1 differences beyond tolerance, a failed gate, outputs
//! that change between block orders or a crash/hang under fault injection, 2 setup or
//! input error (an extractor that fails or reaches its time limit included), 77 a real
//! device was asked for and none exists.

#![warn(missing_docs)]

pub(crate) mod atomic_write;
pub mod bench;
pub mod bisect;
pub mod command_line;
pub(crate) mod common;
pub(crate) mod compare;
pub(crate) mod counts;
pub mod demo;
pub mod device;
pub mod diff;
pub mod exit;
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
pub mod untrusted;
pub mod video;
pub mod wrap;
