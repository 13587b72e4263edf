//! The counters file: what a program did with the driver, written by the emulated
//! driver (and by its pass-through mode over a real driver) to `EMU_CUDA_COUNTS`, read
//! by parity. One file per process (`%p` in the path is the process id).
//!
//! Schema `simtwin-counts/2`:
//! `{"schema", "pid", "driver", "state", "calls": {NAME: N}, "failures": {NAME: N},
//!   "copies": {"HtoD"|"DtoH"|"DtoD"|"HtoH": {"count","bytes"}}, "memsets": {"count","bytes"},
//!   "allocations": {"count","bytes","frees"}, "launches": {SYMBOL: {"count","threads","blocks","run_ns"}},
//!   "failed_launches": {SYMBOL: N}, "zero_copy": {SYMBOL: N}, "synchronizations",
//!   "hazards": [Hazard], "leaks": {"allocations","allocation_bytes","pinned","modules",
//!   "streams","events","details": [..]}, "unsupported": {NAME: N}, "injected": [..],
//!   "never_ran": [..], "modules": [ModuleRecord]}`
//!
//! `modules` was added within version 2 (readers of older files see it empty): every
//! module loaded, with `mode` `twin` or `ptx`; so was a launch's `run_ns` (absent where
//! not measured: readers see 0).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The schema string of this version.
pub const SCHEMA: &str = "simtwin-counts/2";

/// Count and bytes of one kind of traffic.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Traffic {
    /// Operations.
    pub count: u64,
    /// Bytes moved (2D copies count width x height).
    pub bytes: u64,
}

impl Traffic {
    /// One more operation of `bytes`.
    pub fn add(&mut self, bytes: u64) {
        self.count += 1;
        self.bytes += bytes;
    }
    fn merge(&mut self, o: &Traffic) {
        self.count += o.count;
        self.bytes += o.bytes;
    }
}

/// Copies by direction.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Copies {
    /// Host to device.
    #[serde(rename = "HtoD")]
    pub htod: Traffic,
    /// Device to host.
    #[serde(rename = "DtoH")]
    pub dtoh: Traffic,
    /// Device to device.
    #[serde(rename = "DtoD")]
    pub dtod: Traffic,
    /// Host to host (cuMemcpy between host pointers).
    #[serde(rename = "HtoH")]
    pub htoh: Traffic,
}

/// Copy directions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Host to device.
    HtoD,
    /// Device to host.
    DtoH,
    /// Device to device.
    DtoD,
    /// Host to host.
    HtoH,
}

impl Copies {
    /// The traffic of one direction.
    pub fn dir_mut(&mut self, d: Dir) -> &mut Traffic {
        match d {
            Dir::HtoD => &mut self.htod,
            Dir::DtoH => &mut self.dtoh,
            Dir::DtoD => &mut self.dtod,
            Dir::HtoH => &mut self.htoh,
        }
    }
}

/// Allocations made (device, pitched, pinned, managed, stream-ordered) and frees.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Allocations {
    /// Allocations.
    pub count: u64,
    /// Bytes allocated.
    pub bytes: u64,
    /// Frees.
    pub frees: u64,
}

/// Launches of one kernel symbol.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct LaunchCount {
    /// Launches.
    pub count: u64,
    /// Threads over all launches.
    pub threads: u64,
    /// Blocks over all launches.
    pub blocks: u64,
    /// Nanoseconds the emulated driver spent running these launches on the host (the
    /// executor's whole time, from the launch's start to its last block; in a file
    /// only where it was measured: the emulated driver with a counters file asked for,
    /// not the pass-through mode, where the device runs them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub run_ns: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// One hazard report (EMU_CUDA_HAZARDS in docs/driver.md): the executor's (with `kind`
/// its `HazardKind`, which prints as the kebab-case class) and, as the counters file
/// holds it, with `kind` a string (e.g. `barrier-divergence-site`; the driver's own
/// reports add classes the executor does not have). One type for both, so a report reads
/// the same in the log and in the file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Hazard<K = String> {
    /// The class.
    pub kind: K,
    /// Kernel symbol.
    pub kernel: String,
    /// Block of the first occurrence (in the launch's block order).
    pub block: [u32; 3],
    /// Linear thread indices in the block (x + y*bx + z*bx*by), at most 64.
    pub threads: Vec<u32>,
    /// The operation and its call site (`file:line:column` where the library knew it).
    pub operation: String,
    /// What happened and what the emulation did about it.
    pub message: String,
    /// Occurrences of this (kind, site) in the launch; the report is the first.
    pub occurrences: u64,
}

impl<K: std::fmt::Display> Hazard<K> {
    /// The report as the counters file holds it (`kind` as its name).
    pub fn to_record(&self) -> Hazard {
        Hazard {
            kind: self.kind.to_string(),
            kernel: self.kernel.clone(),
            block: self.block,
            threads: self.threads.clone(),
            operation: self.operation.clone(),
            message: self.message.clone(),
            occurrences: self.occurrences,
        }
    }
}

impl<K: std::fmt::Display> std::fmt::Display for Hazard<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [x, y, z] = self.block;
        write!(f, "simtwin hazard [{}] kernel {} block ({x},{y},{z}) {}: {}", self.kind, self.kernel, self.operation, self.message)?;
        if self.occurrences > 1 {
            write!(f, " ({} occurrences in this launch)", self.occurrences)?;
        }
        Ok(())
    }
}

/// What a program left behind (at context destroy or exit).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Leaks {
    /// Device-side allocations (device, pitched, managed, stream-ordered).
    pub allocations: u64,
    /// Their bytes.
    pub allocation_bytes: u64,
    /// Pinned host allocations.
    pub pinned: u64,
    /// Modules still loaded.
    pub modules: u64,
    /// Streams not destroyed.
    pub streams: u64,
    /// Events not destroyed.
    pub events: u64,
    /// One line per leaked object.
    pub details: Vec<String>,
}

impl Leaks {
    /// Total leaked objects.
    pub fn total(&self) -> u64 {
        self.allocations + self.pinned + self.modules + self.streams + self.events
    }
}

/// One injected failure (EMU_CUDA_FAIL).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Injected {
    /// Entry point.
    pub name: String,
    /// Which call of it (1-based).
    pub call: u64,
    /// The code answered.
    pub code: u32,
}

/// When the file was written.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// At process exit or library unload: complete.
    #[default]
    Exit,
    /// On a fatal signal (the name): complete up to the signal.
    Signal(String),
    /// At a synchronisation while the program ran: the program ended without writing a
    /// later file (killed), counts are complete up to that synchronisation.
    Checkpoint,
}

/// One counters file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct Counters {
    /// [`SCHEMA`]
    pub schema: String,
    /// Process id.
    pub pid: u32,
    /// `emulated`, or `pass-through PATH`.
    pub driver: String,
    /// When it was written.
    pub state: State,
    /// Calls by exported entry point name.
    pub calls: BTreeMap<String, u64>,
    /// Calls that answered an error, by name.
    pub failures: BTreeMap<String, u64>,
    /// Copies by direction.
    pub copies: Copies,
    /// Memsets.
    pub memsets: Traffic,
    /// Allocations.
    pub allocations: Allocations,
    /// Kernel launches that ran, by symbol.
    pub launches: BTreeMap<String, LaunchCount>,
    /// Kernel launches that failed while running, by symbol.
    pub failed_launches: BTreeMap<String, u64>,
    /// Launches with an argument pointing into pinned or managed host memory (data that
    /// moves without a copy call), by symbol.
    pub zero_copy: BTreeMap<String, u64>,
    /// Stream, event and context synchronisations.
    pub synchronizations: u64,
    /// Hazard reports.
    pub hazards: Vec<Hazard>,
    /// Leaks.
    pub leaks: Leaks,
    /// Calls of exported but unimplemented entry points.
    pub unsupported: BTreeMap<String, u64>,
    /// Failures injected by EMU_CUDA_FAIL.
    pub injected: Vec<Injected>,
    /// Work still queued when the program ended (EMU_CUDA_ASYNC=deferred): it never ran
    /// because nothing waited for it.
    pub never_ran: Vec<String>,
    /// Every module loaded, and how its kernels ran (host twin or translated PTX).
    pub modules: Vec<ModuleRecord>,
}

/// One loaded module: which code runs its kernels.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct ModuleRecord {
    /// The image: its kind and the entry used, with the first 16 hex digits of the sha256
    /// of its PTX or of its bytes, e.g. `fatbin: sm_90 cubin (ptx 1a2b...)`.
    pub image: String,
    /// `twin` (a kernels-host library) or `ptx` (the image's PTX, translated).
    pub mode: String,
    /// The kernel library that runs it.
    pub library: String,
    /// Kernels.
    pub kernels: u64,
    /// False when some result may differ from the device's (a twin built with nvcc's FMA
    /// contraction on, a PTX kernel using a special-function-unit form not yet modelled).
    pub device_exact: bool,
    /// Why not device-exact, and other notes of the build.
    pub notes: Vec<String>,
    /// PTX mode: microseconds translating and compiling (0 compiling when the library
    /// came from the cache), and whether it did.
    pub translate_us: u64,
    /// See `translate_us`.
    pub compile_us: u64,
    /// See `translate_us`.
    pub cached: bool,
}

/// Why a counters file could not be read.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadError(pub String);

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ReadError {}

fn add_map(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (k, v) in from {
        *into.entry(k.clone()).or_default() += v;
    }
}

impl Counters {
    /// Empty counters of this process.
    pub fn new(driver: &str) -> Counters {
        Counters { schema: SCHEMA.into(), pid: std::process::id(), driver: driver.into(), ..Default::default() }
    }

    /// Parses a counters file's text, checking the schema.
    pub fn parse(text: &str) -> Result<Counters, ReadError> {
        let c: Counters = serde_json::from_str(text).map_err(|e| ReadError(format!("malformed counters file: {e}")))?;
        if c.schema != SCHEMA {
            return Err(ReadError(format!("not a simtwin counters file of schema {SCHEMA} (schema {:?})", c.schema)));
        }
        Ok(c)
    }

    /// Reads and parses one file.
    pub fn read(path: &Path) -> Result<Counters, ReadError> {
        let text = std::fs::read_to_string(path).map_err(|e| ReadError(format!("{}: {e}", path.display())))?;
        Counters::parse(&text).map_err(|e| ReadError(format!("{}: {e}", path.display())))
    }

    /// The file's text (pretty JSON, final newline).
    pub fn to_text(&self) -> String {
        serde_json::to_string_pretty(self).expect("counters serialize") + "\n"
    }

    /// Adds another process's counters (a run of several processes is their sum).
    pub fn merge(&mut self, o: &Counters) {
        add_map(&mut self.calls, &o.calls);
        add_map(&mut self.failures, &o.failures);
        self.copies.htod.merge(&o.copies.htod);
        self.copies.dtoh.merge(&o.copies.dtoh);
        self.copies.dtod.merge(&o.copies.dtod);
        self.copies.htoh.merge(&o.copies.htoh);
        self.memsets.merge(&o.memsets);
        self.allocations.count += o.allocations.count;
        self.allocations.bytes += o.allocations.bytes;
        self.allocations.frees += o.allocations.frees;
        for (k, v) in &o.launches {
            let e = self.launches.entry(k.clone()).or_default();
            e.count += v.count;
            e.threads += v.threads;
            e.blocks += v.blocks;
            e.run_ns += v.run_ns;
        }
        add_map(&mut self.failed_launches, &o.failed_launches);
        add_map(&mut self.zero_copy, &o.zero_copy);
        self.synchronizations += o.synchronizations;
        self.hazards.extend(o.hazards.iter().cloned());
        let l = &mut self.leaks;
        l.allocations += o.leaks.allocations;
        l.allocation_bytes += o.leaks.allocation_bytes;
        l.pinned += o.leaks.pinned;
        l.modules += o.leaks.modules;
        l.streams += o.leaks.streams;
        l.events += o.leaks.events;
        l.details.extend(o.leaks.details.iter().cloned());
        add_map(&mut self.unsupported, &o.unsupported);
        self.injected.extend(o.injected.iter().cloned());
        self.never_ran.extend(o.never_ran.iter().cloned());
        self.modules.extend(o.modules.iter().cloned());
        if self.state == State::Exit && o.state != State::Exit {
            self.state = o.state.clone();
        }
    }

    /// Every number as `dotted.key -> value` (`calls.cuInit`, `copies.HtoD.bytes`,
    /// `launches.SYM.count`, `hazards` = number of reports, `leaks.modules`, ...): the
    /// form the transfer audit compares and gates on. A launch's `run_ns` is left out: a
    /// time, not a count, different in every run and absent on a device.
    pub fn flatten(&self) -> BTreeMap<String, f64> {
        let mut out = BTreeMap::new();
        let mut v = serde_json::to_value(self).expect("counters serialize");
        if let Some(l) = v.get_mut("launches").and_then(|l| l.as_object_mut()) {
            for e in l.values_mut().filter_map(|e| e.as_object_mut()) {
                e.remove("run_ns");
            }
        }
        flatten_into("", &v, &mut out);
        out.remove("pid");
        out
    }
}

fn flatten_into(prefix: &str, v: &serde_json::Value, out: &mut BTreeMap<String, f64>) {
    use serde_json::Value as J;
    match v {
        J::Number(n) => {
            *out.entry(prefix.to_string()).or_insert(0.0) += n.as_f64().unwrap_or(0.0);
        }
        J::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten_into(&key, x, out);
            }
        }
        J::Array(a) => {
            // Lists count their entries (hazards, leak details, injected failures).
            *out.entry(prefix.to_string()).or_insert(0.0) += a.len() as f64;
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_merge_and_flatten() {
        let mut a = Counters::new("emulated");
        *a.calls.entry("cuInit".into()).or_default() += 1;
        a.copies.dir_mut(Dir::HtoD).add(100);
        a.launches.insert("k".into(), LaunchCount { count: 2, threads: 64, blocks: 2, run_ns: 7_000 });
        a.hazards.push(Hazard { kind: "deadlock".into(), ..Default::default() });
        a.leaks.modules = 1;
        let text = a.to_text();
        assert!(text.contains("\"HtoD\""), "{text}");
        let b = Counters::parse(&text).unwrap();
        assert_eq!(a, b);
        let mut sum = a.clone();
        sum.merge(&b);
        let f = sum.flatten();
        assert_eq!(f["calls.cuInit"], 2.0);
        assert_eq!(f["copies.HtoD.bytes"], 200.0);
        assert_eq!(f["launches.k.count"], 4.0);
        assert_eq!(sum.launches["k"].run_ns, 14_000, "run times add up");
        assert!(!f.contains_key("launches.k.run_ns"), "a time is not a count the audit compares");
        assert_eq!(f["hazards"], 2.0);
        assert_eq!(f["leaks.modules"], 2.0);
        assert!(!f.contains_key("pid"));
        assert!(Counters::parse(&text.replace(SCHEMA, "simtwin-counts/1")).is_err());
        assert!(Counters::parse("[]").is_err());
    }

    #[test]
    fn state_is_kebab_case() {
        let mut c = Counters::new("emulated");
        c.state = State::Signal("SIGTERM".into());
        assert!(c.to_text().contains("\"signal\": \"SIGTERM\""), "{}", c.to_text());
        c.state = State::Checkpoint;
        assert!(c.to_text().contains("\"checkpoint\""));
    }
}
