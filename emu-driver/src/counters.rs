//! Counters (DESIGN.md §2): a leaf every part of the driver writes to — calls and
//! failures by entry point name, copies by direction with bytes, memsets, allocations,
//! launches by symbol, synchronisations, hazards, leaks — in the shared schema of
//! `simtwin_abi::counters`. `teardown` writes them to EMU_CUDA_COUNTS.

use simtwin_abi::counters::{Counters as Snapshot, Dir, Hazard, Injected, State};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The process's counters.
pub struct Counters {
    /// Everything but the hot synchronisation count, behind one lock (driver calls are
    /// not hot enough for a finer scheme to matter).
    data: Mutex<Snapshot>,
    syncs: AtomicU64,
    /// Calls of every entry point so far (the process's call sequence number).
    seq: AtomicU64,
}

/// The process-wide counters.
pub fn get() -> &'static Counters {
    static C: OnceLock<Counters> = OnceLock::new();
    C.get_or_init(|| Counters { data: Mutex::new(Snapshot::new("emulated")), syncs: AtomicU64::new(0), seq: AtomicU64::new(0) })
}

impl Counters {
    fn lock(&self) -> MutexGuard<'_, Snapshot> {
        self.data.lock().unwrap_or_else(|e| e.into_inner())
    }
    /// One call of entry point `name`; returns how many calls of it came before.
    pub fn call(&self, name: &str) -> u64 {
        self.seq.fetch_add(1, Relaxed);
        let mut d = self.lock();
        let n = d.calls.entry(name.to_string()).or_default();
        *n += 1;
        *n - 1
    }
    /// How many calls the process made so far.
    pub fn sequence(&self) -> u64 {
        self.seq.load(Relaxed)
    }
    /// Deferred work the program never waited for (EMU_CUDA_ASYNC=deferred, at exit).
    pub fn never_ran(&self, items: Vec<String>) {
        self.lock().never_ran = items;
    }
    /// A call of `name` answered an error.
    pub fn failure(&self, name: &str) {
        *self.lock().failures.entry(name.to_string()).or_default() += 1;
    }
    /// A call of an exported entry point that is not implemented.
    pub fn unsupported(&self, name: &str) {
        *self.lock().unsupported.entry(name.to_string()).or_default() += 1;
    }
    /// A failure injected by EMU_CUDA_FAIL.
    pub fn injected(&self, name: &str, call: u64, code: u32) {
        self.lock().injected.push(Injected { name: name.to_string(), call, code });
    }
    pub fn copy(&self, dir: Dir, bytes: u64) {
        self.lock().copies.dir_mut(dir).add(bytes);
    }
    pub fn memset(&self, bytes: u64) {
        self.lock().memsets.add(bytes);
    }
    pub fn alloc(&self, bytes: u64) {
        let mut d = self.lock();
        d.allocations.count += 1;
        d.allocations.bytes += bytes;
    }
    pub fn free(&self) {
        self.lock().allocations.frees += 1;
    }
    pub fn sync(&self) {
        self.syncs.fetch_add(1, Relaxed);
    }
    pub fn launch(&self, symbol: &str, threads: u64, blocks: u64) {
        let mut d = self.lock();
        let e = d.launches.entry(symbol.to_string()).or_default();
        e.count += 1;
        e.threads += threads;
        e.blocks += blocks;
    }
    pub fn failed_launch(&self, symbol: &str) {
        *self.lock().failed_launches.entry(symbol.to_string()).or_default() += 1;
    }
    /// A launch with an argument pointing into pinned or managed host memory.
    pub fn zero_copy(&self, symbol: &str) {
        *self.lock().zero_copy.entry(symbol.to_string()).or_default() += 1;
    }
    pub fn hazard(&self, h: Hazard) {
        self.lock().hazards.push(h);
    }
    /// Records a leak: `f` updates the leak counts, `detail` says what leaked.
    pub fn leak(&self, f: impl FnOnce(&mut simtwin_abi::counters::Leaks), detail: String) {
        let mut d = self.lock();
        f(&mut d.leaks);
        d.leaks.details.push(detail);
    }
    /// The counters as of now, in the file's schema.
    pub fn snapshot(&self, state: State) -> Snapshot {
        let mut s = self.lock().clone();
        s.synchronizations = self.syncs.load(Relaxed);
        s.pid = std::process::id();
        s.state = state;
        s
    }
}
