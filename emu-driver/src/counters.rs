//! Counters (docs/architecture.md): a leaf every part of the driver writes to — calls and
//! failures by entry point name, copies by direction with bytes, memsets, allocations,
//! launches by symbol, synchronisations, hazards, leaks — in the shared schema of
//! `simtwin_abi::counters`. `counters_file` writes them to EMU_CUDA_COUNTS.

use simtwin_abi::counters::{Counters as Snapshot, Dir, Hazard, Injected, State};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// The process's counters.
pub struct Counters {
    /// Everything but the hot synchronisation count, behind one lock (driver calls are
    /// not hot enough for a finer scheme to matter).
    data: Mutex<Data>,
    syncs: AtomicU64,
    /// Calls counted by name (outside the export table); with the per-entry counts, the
    /// process's call sequence number.
    seq: AtomicU64,
    /// Calls per export-table entry: the per-call path is one atomic add, with no lock
    /// and no allocation (a mutex and a `String` key per call cost ~50 ns, as much as a
    /// real driver's whole cuCtxGetDevice). Folded into `calls` by name when read.
    by_entry: OnceLock<EntryCalls>,
}

/// What the counters' lock guards: the counts in the file's schema, and the launch tallies
/// of the emulated kernels (folded into `launches` when read).
struct Data {
    snap: Snapshot,
    tallies: HashMap<String, Arc<LaunchTally>>,
}

impl std::ops::Deref for Data {
    type Target = Snapshot;
    fn deref(&self) -> &Snapshot {
        &self.snap
    }
}

impl std::ops::DerefMut for Data {
    fn deref_mut(&mut self) -> &mut Snapshot {
        &mut self.snap
    }
}

/// The successful launches of one kernel symbol, counted without the counters' lock: a
/// kernel takes its symbol's tally at module load (`Counters::tally`), a launch adds to
/// it under the driver's lock (a load and a store per counter: three shared
/// read-modify-writes were a tenth of a small launch), and a snapshot folds every tally
/// into `launches` by symbol.
#[derive(Default)]
pub struct LaunchTally {
    count: AtomicU64,
    threads: AtomicU64,
    blocks: AtomicU64,
    run_ns: AtomicU64,
}

impl LaunchTally {
    /// One launch of `threads` threads in `blocks` blocks ran. The caller holds the
    /// driver's lock, as every writer of a tally does (launch.rs).
    pub fn add_locked(&self, threads: u64, blocks: u64) {
        self.count.store(self.count.load(Relaxed).wrapping_add(1), Relaxed);
        self.threads.store(self.threads.load(Relaxed).wrapping_add(threads), Relaxed);
        self.blocks.store(self.blocks.load(Relaxed).wrapping_add(blocks), Relaxed);
    }

    /// A counted launch of this kernel took `ns` nanoseconds to run (under the driver's
    /// lock, as `add_locked`).
    pub fn add_run_locked(&self, ns: u64) {
        self.run_ns.store(self.run_ns.load(Relaxed).wrapping_add(ns), Relaxed);
    }

    /// Takes back a launch `add` counted that then failed (under the driver's lock).
    pub fn retract_locked(&self, threads: u64, blocks: u64) {
        self.count.store(self.count.load(Relaxed).wrapping_sub(1), Relaxed);
        self.threads.store(self.threads.load(Relaxed).wrapping_sub(threads), Relaxed);
        self.blocks.store(self.blocks.load(Relaxed).wrapping_sub(blocks), Relaxed);
    }

    fn reset(&self) {
        self.count.store(0, Relaxed);
        self.threads.store(0, Relaxed);
        self.blocks.store(0, Relaxed);
        self.run_ns.store(0, Relaxed);
    }
}

/// Call counts indexed like the export table's names.
struct EntryCalls {
    names: &'static [&'static str],
    counts: Box<[AtomicU64]>,
}

thread_local! {
    /// The counters' lock, held by the forking thread from `fork_prepare` to
    /// `fork_release` (atfork handlers run on it, in the parent and in the child).
    static HELD: std::cell::RefCell<Option<MutexGuard<'static, Data>>> = const { std::cell::RefCell::new(None) };
}

/// The process-wide counters.
pub fn get() -> &'static Counters {
    static C: OnceLock<Counters> = OnceLock::new();
    C.get_or_init(|| Counters {
        data: Mutex::new(Data { snap: Snapshot::new("emulated"), tallies: HashMap::new() }),
        syncs: AtomicU64::new(0),
        seq: AtomicU64::new(0),
        by_entry: OnceLock::new(),
    })
}

impl Counters {
    fn lock(&self) -> MutexGuard<'_, Data> {
        self.data.lock().unwrap_or_else(|e| e.into_inner())
    }
    /// Before fork(): takes the lock, so that the child never inherits it held by a
    /// thread that does not exist there.
    pub fn fork_prepare(&'static self) {
        let g = self.lock();
        HELD.with(|h| *h.borrow_mut() = Some(g));
    }
    /// After fork(), in the parent or (`child`) in the child: releases the lock; the
    /// child's counters start from zero (they are its own process's).
    pub fn fork_release(&'static self, child: bool) {
        let g = HELD.with(|h| h.borrow_mut().take());
        if let Some(mut g) = g {
            if child {
                g.snap = Snapshot::new("emulated");
                g.tallies.values().for_each(|t| t.reset());
            }
            drop(g);
        }
        if child {
            self.syncs.store(0, Relaxed);
            self.seq.store(0, Relaxed);
            if let Some(e) = self.by_entry.get() {
                e.counts.iter().for_each(|c| c.store(0, Relaxed));
            }
        }
    }
    /// One call of entry point `name`; returns how many calls of it came before.
    pub fn call(&self, name: &str) -> u64 {
        self.seq.fetch_add(1, Relaxed);
        let mut d = self.lock();
        let n = d.calls.entry(name.to_string()).or_default();
        *n += 1;
        *n - 1
    }
    /// One call of export-table entry `id` (`names` is the table, the same on every
    /// call); returns how many calls of it came before.
    pub fn call_entry(&self, names: &'static [&'static str], id: usize) -> u64 {
        let e = self.by_entry.get_or_init(|| EntryCalls { names, counts: names.iter().map(|_| AtomicU64::new(0)).collect() });
        match e.counts.get(id) {
            Some(c) => c.fetch_add(1, Relaxed),
            None => self.call(names.get(id).copied().unwrap_or("unknown entry")),
        }
    }
    /// How many calls the process made so far.
    pub fn sequence(&self) -> u64 {
        let table = self.by_entry.get().map_or(0, |e| e.counts.iter().map(|c| c.load(Relaxed)).sum());
        self.seq.load(Relaxed) + table
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
    /// A module was loaded (twin or PTX mode).
    pub fn module(&self, m: simtwin_abi::counters::ModuleRecord) {
        self.lock().modules.push(m);
    }
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
    /// The launch tally of `symbol` (the same for every kernel of that name).
    pub fn tally(&self, symbol: &str) -> Arc<LaunchTally> {
        let mut d = self.lock();
        if let Some(t) = d.tallies.get(symbol) {
            return t.clone();
        }
        let t = Arc::new(LaunchTally::default());
        d.tallies.insert(symbol.to_string(), t.clone());
        t
    }
    pub fn launch(&self, symbol: &str, threads: u64, blocks: u64) {
        let mut d = self.lock();
        // No new key (an allocation) per launch of a kernel already counted, and one
        // lookup for it.
        let e = match d.launches.get_mut(symbol) {
            Some(e) => e,
            None => d.launches.entry(symbol.to_string()).or_default(),
        };
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
    /// A leaked allocation: pinned host memory counts by number, the others by number
    /// and bytes.
    pub fn leaked_allocation(&self, pinned: bool, size: u64, detail: String) {
        self.leak(
            |l| {
                if pinned {
                    l.pinned += 1;
                } else {
                    l.allocations += 1;
                    l.allocation_bytes += size;
                }
            },
            detail,
        );
    }
    /// The counters as of now, in the file's schema.
    pub fn snapshot(&self, state: State) -> Snapshot {
        let mut s = {
            let d = self.lock();
            let mut s = d.snap.clone();
            for (name, t) in &d.tallies {
                let count = t.count.load(Relaxed);
                if count > 0 {
                    let e = s.launches.entry(name.clone()).or_default();
                    e.count += count;
                    e.threads += t.threads.load(Relaxed);
                    e.blocks += t.blocks.load(Relaxed);
                    e.run_ns += t.run_ns.load(Relaxed);
                }
            }
            s
        };
        if let Some(e) = self.by_entry.get() {
            for (name, c) in e.names.iter().zip(e.counts.iter()) {
                let n = c.load(Relaxed);
                if n > 0 {
                    *s.calls.entry(name.to_string()).or_default() += n;
                }
            }
        }
        s.synchronizations = self.syncs.load(Relaxed);
        s.pid = std::process::id();
        s.state = state;
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh() -> Counters {
        Counters {
            data: Mutex::new(Data { snap: Snapshot::new("emulated"), tallies: HashMap::new() }),
            syncs: AtomicU64::new(0),
            seq: AtomicU64::new(0),
            by_entry: OnceLock::new(),
        }
    }

    #[test]
    fn launch_tallies_fold_into_launches_by_symbol() {
        let c = fresh();
        let (a, b) = (c.tally("k"), c.tally("k"));
        assert!(Arc::ptr_eq(&a, &b), "one tally per symbol");
        let idle = c.tally("never_launched");
        a.add_locked(64, 2);
        b.add_locked(32, 1);
        // The locked path (pass-through) adds to the same symbol's entry.
        c.launch("k", 10, 1);
        c.launch("other", 5, 5);
        let s = c.snapshot(State::Checkpoint);
        let k = &s.launches["k"];
        assert_eq!((k.count, k.threads, k.blocks), (3, 106, 4));
        assert_eq!(s.launches["other"].count, 1);
        assert!(!s.launches.contains_key("never_launched"), "{:?}", s.launches.keys());
        idle.add_locked(1, 1);
        assert_eq!(c.snapshot(State::Checkpoint).launches["never_launched"].count, 1);
        // A snapshot reads, it does not move counts: the next one is the same.
        assert_eq!(c.snapshot(State::Checkpoint).launches["k"].count, 3);
    }
}
