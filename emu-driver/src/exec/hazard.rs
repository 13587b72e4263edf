//! Hazard reports: what the CUDA programming guide calls undefined behaviour around
//! barriers and warp collectives, recorded with enough context (kernel, block, threads,
//! operation and call site) to find the offending code. A launch can hit the same hazard
//! in every block; reports are deduplicated per launch by (kind, key) — the key names
//! the call site and operation — and count their occurrences, so a 65536-block grid
//! does not produce 65536 identical reports. A repeated hazard costs a key lookup: its
//! report text is only built the first time.

use serde::Serialize;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

pub use crate::config::HazardMode;

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
    /// Shared memory written by one thread and read by another with no synchronisation
    /// between (`EMU_CUDA_CHECKS=race`).
    SharedRaceRaw,
    /// Shared memory read by one thread and then written by another with no
    /// synchronisation between.
    SharedRaceWar,
    /// Shared memory written by two threads with no synchronisation between.
    SharedRaceWaw,
}

impl HazardKind {
    /// The kebab-case name used in reports and the counters file.
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
            HazardKind::SharedRaceRaw => "shared-race-raw",
            HazardKind::SharedRaceWar => "shared-race-war",
            HazardKind::SharedRaceWaw => "shared-race-waw",
        }
    }
}

/// One hazard report (the type the counters file holds, with the executor's kinds).
/// `threads` are linear thread indices within `block`, at most [`MAX_REPORTED_THREADS`].
pub type Hazard = simtwin_abi::counters::Hazard<HazardKind>;

/// Thread lists in reports are cut here; the message states the full count.
pub const MAX_REPORTED_THREADS: usize = 64;

impl fmt::Display for HazardKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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
    pub key: u64,
    pub threads: Vec<u32>,
    pub operation: String,
    pub message: String,
}

/// One deduplicated report and where its occurrences were.
struct Entry {
    kind: HazardKind,
    key: u64,
    report: Hazard,
    /// Position (in the launch's block order) of the first occurrence.
    first_pos: u64,
    /// Occurrences per block position, run-length coded; only kept when several
    /// workers share the launch (their logs are cut at the first failing block).
    by_pos: Vec<(u64, u64)>,
}

/// The hasher of [`HazardLog`]'s index: a rotate, a xor and a multiply per word.
#[derive(Default)]
struct SiteHasher(u64);

impl Hasher for SiteHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        bytes.iter().for_each(|&b| self.write_u64(u64::from(b)));
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_isize(&mut self, x: isize) {
        self.write_u64(x as u64);
    }
}

/// The hazards one worker saw in one launch.
pub(crate) struct HazardLog {
    pub mode: HazardMode,
    /// The kernel's name, shared with its module (no copy per launch); None in a worker's
    /// log between launches.
    pub kernel: Option<Arc<str>>,
    /// The block being run and its position in the launch's block order.
    pub block: [u32; 3],
    pub pos: u64,
    /// Keep per-position counts (several workers).
    pub track_positions: bool,
    entries: Vec<Entry>,
    /// Each (kind, key)'s entry: a kernel with many sites notes without a scan. Keys are
    /// the executor's own site ids, not hostile input: a multiplicative hash (SipHash was
    /// 2-4% of upstream VMAF's vif frame, which notes a hazard per warp).
    index: HashMap<(HazardKind, u64), usize, BuildHasherDefault<SiteHasher>>,
    /// The entry noted last: a hazard met in every warp notes the same (kind, key) in a
    /// row.
    last: Option<(HazardKind, u64, usize)>,
}

impl HazardLog {
    #[cfg(test)]
    pub fn new(mode: HazardMode, kernel: impl Into<Arc<str>>) -> Self {
        HazardLog { kernel: Some(kernel.into()), ..HazardLog::idle(mode) }
    }

    /// A log for no launch (a worker's between launches).
    pub fn idle(mode: HazardMode) -> Self {
        HazardLog {
            mode,
            kernel: None,
            block: [0; 3],
            pos: 0,
            track_positions: false,
            entries: Vec::new(),
            index: HashMap::default(),
            last: None,
        }
    }

    /// Makes this (empty) log the one of a launch of `kernel`: a worker keeps its log
    /// from launch to launch while nothing was reported, and takes a reference to the
    /// kernel's name only when the kernel changes (a shared count per launch was a
    /// measurable part of a small launch).
    pub fn begin(&mut self, mode: HazardMode, kernel: &Arc<str>, track_positions: bool) {
        if !self.entries.is_empty() {
            // Left by a launch that did not end through `take` (it unwound).
            self.entries.clear();
            self.index.clear();
            self.last = None;
        }
        self.mode = mode;
        self.block = [0; 3];
        self.pos = 0;
        self.track_positions = track_positions;
        if !self.kernel.as_ref().is_some_and(|k| Arc::ptr_eq(k, kernel)) {
            self.kernel = Some(kernel.clone());
        }
    }

    /// The launch's log, leaving this one ready for the next launch: an empty log
    /// stays (with its kernel's name) and None comes back, a log with reports is moved
    /// out.
    pub fn take(&mut self) -> Option<HazardLog> {
        (!self.entries.is_empty()).then(|| std::mem::replace(self, HazardLog::idle(self.mode)))
    }

    /// Records an occurrence of (kind, key); `detect` builds the report the first time.
    /// Returns true when the launch must stop (error mode).
    pub fn note(&mut self, kind: HazardKind, key: u64, detect: impl FnOnce() -> Detected) -> bool {
        let pos = self.pos;
        let hit = match self.last {
            Some((k, y, i)) if k == kind && y == key => Some(i),
            _ => self.index.get(&(kind, key)).copied(),
        };
        if let Some(i) = hit {
            self.last = Some((kind, key, i));
            let e = &mut self.entries[i];
            e.report.occurrences += 1;
            if self.track_positions {
                match e.by_pos.last_mut() {
                    Some((p, n)) if *p == pos => *n += 1,
                    _ => e.by_pos.push((pos, 1)),
                }
            }
        } else {
            let mut d = detect();
            d.threads.truncate(MAX_REPORTED_THREADS);
            self.index.insert((kind, key), self.entries.len());
            self.last = Some((kind, key, self.entries.len()));
            self.entries.push(Entry {
                kind,
                key,
                report: Hazard {
                    kind,
                    kernel: self.kernel.as_deref().unwrap_or_default().to_string(),
                    block: self.block,
                    threads: d.threads,
                    operation: d.operation,
                    message: d.message,
                    occurrences: 1,
                },
                first_pos: pos,
                by_pos: if self.track_positions { vec![(pos, 1)] } else { Vec::new() },
            });
        }
        self.mode == HazardMode::Error
    }

    /// Records a detected hazard (built eagerly).
    pub fn record(&mut self, d: Detected) -> bool {
        let (kind, key) = (d.kind, d.key);
        self.note(kind, key, || d)
    }

    /// The newest report (the one an error-mode stop is about).
    pub fn last(&self) -> Option<&Hazard> {
        self.entries.last().map(|e| &e.report)
    }

    /// The reports in order of first occurrence.
    pub fn into_reports(self) -> Vec<Hazard> {
        if self.entries.is_empty() {
            return Vec::new();
        }
        self.entries.into_iter().map(|e| e.report).collect()
    }

    /// Merges the logs of several workers of one launch as if one worker had run the
    /// blocks in order: occurrences at positions after `upto` (the first failing block)
    /// are dropped, each report is the one of the earliest position, sorted by it.
    pub fn merge(logs: impl IntoIterator<Item = HazardLog>, upto: Option<u64>) -> Vec<Hazard> {
        let limit = upto.unwrap_or(u64::MAX);
        let mut merged: Vec<(u64, usize, Entry)> = Vec::new();
        for log in logs {
            for (i, mut e) in log.entries.into_iter().enumerate() {
                let count: u64 = if e.by_pos.is_empty() {
                    if e.first_pos <= limit {
                        e.report.occurrences
                    } else {
                        0
                    }
                } else {
                    e.by_pos.iter().filter(|(p, _)| *p <= limit).map(|(_, n)| n).sum()
                };
                if count == 0 {
                    continue;
                }
                e.report.occurrences = count;
                match merged.iter_mut().find(|(_, _, m)| m.kind == e.kind && m.key == e.key) {
                    Some((fp, idx, m)) => {
                        let total = m.report.occurrences + count;
                        if (e.first_pos, i) < (*fp, *idx) {
                            *fp = e.first_pos;
                            *idx = i;
                            *m = e;
                        }
                        m.report.occurrences = total;
                    }
                    None => merged.push((e.first_pos, i, e)),
                }
            }
        }
        merged.sort_by_key(|(p, i, _)| (*p, *i));
        merged.into_iter().map(|(_, _, e)| e.report).collect()
    }
}

/// A dedup key from several parts (call site keys, op codes).
pub(crate) fn key_of(parts: &[u64]) -> u64 {
    parts.iter().fold(0x9e37_79b9_7f4a_7c15u64, |h, &p| (h.rotate_left(7) ^ p).wrapping_mul(0x100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use crate::exec::hazard::*;

    #[test]
    fn thread_lists_are_compressed_into_ranges() {
        assert_eq!(format_threads(&[0, 1, 2, 3, 7, 9, 10]), "0-3,7,9-10");
        assert_eq!(format_threads(&[5]), "5");
        assert_eq!(format_threads(&[]), "");
    }

    fn d() -> Detected {
        Detected { kind: HazardKind::WarpLaneExited, key: 3, threads: (0..100).collect(), operation: "op".into(), message: "m".into() }
    }

    #[test]
    fn repeated_hazards_are_counted_not_duplicated() {
        let mut log = HazardLog::new(HazardMode::Warn, "k");
        assert!(!log.record(d()));
        log.block = [1, 0, 0];
        let mut built = false;
        assert!(!log.note(HazardKind::WarpLaneExited, 3, || {
            built = true;
            d()
        }));
        assert!(!built, "a repeated hazard's report is not built again");
        let r = log.into_reports();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].occurrences, 2);
        assert_eq!(r[0].block, [0, 0, 0]);
        assert_eq!(r[0].threads.len(), MAX_REPORTED_THREADS);
        let mut strict = HazardLog::new(HazardMode::Error, "k");
        assert!(strict.record(d()));
    }

    #[test]
    fn logs_of_several_workers_merge_in_block_order_up_to_the_failure() {
        let mk = |positions: &[u64]| {
            let mut log = HazardLog::new(HazardMode::Warn, "k");
            log.track_positions = true;
            for &p in positions {
                log.pos = p;
                log.block = [p as u32, 0, 0];
                log.record(d());
            }
            log
        };
        let r = HazardLog::merge(vec![mk(&[1, 3, 5]), mk(&[0, 2, 4, 6])], None);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].block, r[0].occurrences), ([0, 0, 0], 7));
        let r = HazardLog::merge(vec![mk(&[1, 3, 5]), mk(&[4, 6])], Some(3));
        assert_eq!((r[0].block, r[0].occurrences), ([1, 0, 0], 2));
        assert!(HazardLog::merge(vec![mk(&[5])], Some(3)).is_empty());
    }
}
