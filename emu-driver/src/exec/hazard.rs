//! Hazard reports: what the CUDA programming guide calls undefined behaviour around
//! barriers and warp collectives, recorded with enough context (kernel, block, threads,
//! operation) to find the offending code. A launch can hit the same hazard in every
//! block; reports are deduplicated per launch by (kind, operation site) and count their
//! occurrences, so a 65536-block grid does not produce 65536 identical reports.

use serde::Serialize;
use std::fmt;

/// What `EMU_CUDA_HAZARDS` selects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HazardMode {
    /// Report and go on as a device would (the default).
    #[default]
    Warn,
    /// The first hazard fails the launch with [`super::HAZARD_ERROR_CODE`].
    Error,
}

/// The hazard classes the executor detects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HazardKind {
    /// A block barrier completed although some threads of the block exited without
    /// reaching it (the condition around the barrier was not uniform).
    BarrierDivergenceExit,
    /// One barrier generation was reached from different `__syncthreads` call sites.
    BarrierDivergenceSite,
    /// A lane named in a warp collective's mask has exited or does not exist.
    WarpLaneExited,
    /// A shuffle read from a lane that is not in its mask.
    ShuffleSourceOutsideMask,
    /// Lanes met in one collective (same mask) with different operations.
    WarpKindMismatch,
    /// Lanes of one warp are waiting in collectives with overlapping, different masks.
    WarpMaskMismatch,
    /// A lane called a warp collective with a mask that does not name itself.
    WarpCallerNotInMask,
    /// Every live thread of the block waits and no rendezvous can complete.
    Deadlock,
    /// A result C++ leaves undefined and the device defines (a saturating conversion,
    /// ...), computed as the device does.
    DeviceDefinedResult,
}

impl HazardKind {
    pub fn as_str(self) -> &'static str {
        match self {
            HazardKind::BarrierDivergenceExit => "barrier-divergence-exit",
            HazardKind::BarrierDivergenceSite => "barrier-divergence-site",
            HazardKind::WarpLaneExited => "warp-lane-exited",
            HazardKind::ShuffleSourceOutsideMask => "shuffle-source-outside-mask",
            HazardKind::WarpKindMismatch => "warp-kind-mismatch",
            HazardKind::WarpMaskMismatch => "warp-mask-mismatch",
            HazardKind::WarpCallerNotInMask => "warp-caller-not-in-mask",
            HazardKind::Deadlock => "deadlock",
            HazardKind::DeviceDefinedResult => "device-defined-result",
        }
    }
}

/// One hazard report. `threads` are linear thread indices within `block`
/// (x + y*bx + z*bx*by), at most [`MAX_REPORTED_THREADS`] of them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Hazard {
    pub kind: HazardKind,
    pub kernel: String,
    pub block: [u32; 3],
    pub threads: Vec<u32>,
    pub operation: String,
    pub message: String,
    /// How often this (kind, site) occurred in the launch; the report is the first.
    pub occurrences: u64,
}

/// Thread lists in reports are cut here; the message states the full count.
pub const MAX_REPORTED_THREADS: usize = 64;

impl fmt::Display for Hazard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "simtwin hazard [{}] kernel {} block ({},{},{}) {}: {}",
            self.kind.as_str(),
            self.kernel,
            self.block[0],
            self.block[1],
            self.block[2],
            self.operation,
            self.message
        )?;
        if self.occurrences > 1 {
            write!(f, " ({} occurrences in this launch)", self.occurrences)?;
        }
        Ok(())
    }
}

/// Formats thread lists compactly: "0-31,40,64-95".
pub fn format_threads(threads: &[u32]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < threads.len() {
        let start = threads[i];
        let mut end = start;
        while i + 1 < threads.len() && threads[i + 1] == end + 1 {
            i += 1;
            end = threads[i];
        }
        if !out.is_empty() {
            out.push(',');
        }
        if start == end {
            out.push_str(&start.to_string());
        } else {
            out.push_str(&format!("{start}-{end}"));
        }
        i += 1;
    }
    out
}

/// A hazard as detected inside a block, before kernel name and dedup are applied.
pub(crate) struct Detected {
    pub kind: HazardKind,
    /// Dedup key within the kind: a call site, an op code, ...
    pub site: u64,
    pub threads: Vec<u32>,
    pub operation: String,
    pub message: String,
}

/// The hazards of one launch.
pub(crate) struct HazardLog {
    pub mode: HazardMode,
    pub kernel: String,
    pub block: [u32; 3],
    pub reports: Vec<Hazard>,
    keys: Vec<(HazardKind, u64)>,
}

impl HazardLog {
    pub fn new(mode: HazardMode, kernel: &str) -> Self {
        HazardLog { mode, kernel: kernel.to_string(), block: [0; 3], reports: Vec::new(), keys: Vec::new() }
    }

    /// Records a hazard; returns true when the launch must stop (error mode).
    pub fn record(&mut self, mut d: Detected) -> bool {
        if let Some(i) = self.keys.iter().position(|k| *k == (d.kind, d.site)) {
            self.reports[i].occurrences += 1;
        } else {
            d.threads.truncate(MAX_REPORTED_THREADS);
            self.keys.push((d.kind, d.site));
            self.reports.push(Hazard {
                kind: d.kind,
                kernel: self.kernel.clone(),
                block: self.block,
                threads: d.threads,
                operation: d.operation,
                message: d.message,
                occurrences: 1,
            });
        }
        self.mode == HazardMode::Error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_lists_are_compressed_into_ranges() {
        assert_eq!(format_threads(&[0, 1, 2, 3, 7, 9, 10]), "0-3,7,9-10");
        assert_eq!(format_threads(&[5]), "5");
        assert_eq!(format_threads(&[]), "");
    }

    #[test]
    fn repeated_hazards_are_counted_not_duplicated() {
        let mut log = HazardLog::new(HazardMode::Warn, "k");
        let d = || Detected {
            kind: HazardKind::WarpLaneExited,
            site: 3,
            threads: (0..100).collect(),
            operation: "op".into(),
            message: "m".into(),
        };
        assert!(!log.record(d()));
        log.block = [1, 0, 0];
        assert!(!log.record(d()));
        assert_eq!(log.reports.len(), 1);
        assert_eq!(log.reports[0].occurrences, 2);
        assert_eq!(log.reports[0].block, [0, 0, 0]);
        assert_eq!(log.reports[0].threads.len(), MAX_REPORTED_THREADS);
        let mut strict = HazardLog::new(HazardMode::Error, "k");
        assert!(strict.record(d()));
    }
}
