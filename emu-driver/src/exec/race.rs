//! The shared-memory checks of `EMU_CUDA_CHECKS` for the blocks a worker runs: poisoning
//! (see `smem`) and the race detector.
//!
//! The race detector sees every access of a checking library's kernel code (the
//! library's `access` calls, see kernels-host's `runtime/simtwin_checks.cpp`), keeps
//! those that fall into the block's shared memory, and reports a write and another
//! thread's access of the same byte with no synchronisation between them, in
//! compute-sanitizer racecheck's classes: read-after-write, write-after-read,
//! write-after-write. Atomics do not race with atomics (an atomic and a plain access
//! do).
//!
//! What synchronises (the CUDA programming guide's rules for sm_70 and later):
//! - a block barrier (`__syncthreads` and its forms; block start counts as one): every
//!   access before it is ordered with every access after it;
//! - a `__syncwarp(mask)`: orders the accesses of the lanes that took part in it (the
//!   guide: it "guarantees memory ordering among threads participating in the barrier").
//!   Shuffles, votes, matches and reductions do not (they "do not imply a memory
//!   barrier"): since sm_70 the lanes of a warp are scheduled independently, so two
//!   lanes exchanging data through shared memory with only a shuffle between are a real
//!   race. racecheck reports these too (as warp-level-programming hazards).
//!
//! How: a logical clock advances at every synchronisation event (taken from the block
//! state at the next access: the barrier count, the `__syncwarp` groups the warp
//! recorded in `Threads::syncwarps`); each access is stamped with it. Per byte of
//! shared memory the detector keeps the last write and the last two reads by different
//! threads (thread, clock, return address, atomic or not). A previous access of another
//! thread is ordered before the current one when a barrier came after it (the barrier's
//! clock is greater than its stamp), or, within a warp, a `__syncwarp` that both lanes
//! took part in did (per warp, the clock of the last such event for each pair of lanes).
//! Limits: two remembered reads per byte (a third reader of a byte that is then written
//! unsynchronised is found only if one of the remembered two races too); races are
//! found between the accesses the run makes, in the order the executor runs threads
//! (every pair of conflicting accesses of one synchronisation interval is seen, whatever
//! the order, except as the two-readers limit says).
//!
//! Reports are deduplicated per launch by (class, both call sites) and name kernel,
//! block, both threads, the variable (static `__shared__`: its name, from the library's
//! symbol table) or the offset in dynamic shared memory, and both call sites (file:line
//! from the library's debug info, looked up only when a report is made).

use super::hazard::{key_of, Detected, HazardKind, HazardLog};
use super::smem::{Ranges, Region};
use super::threads::Threads;
use super::types::Checks;
use crate::abi::{self, access};
use crate::symbols;

const WARP: u32 = 32;
const NOBODY: u32 = u32::MAX;

/// One remembered access of a byte.
#[derive(Clone, Copy, Debug)]
struct Rec {
    /// Return address of the checking hook: the instruction's place.
    pc: usize,
    /// The detector's clock when it happened.
    clock: u64,
    /// The thread (linear index in the block), NOBODY when empty.
    tid: u32,
    /// `abi::access` kind.
    kind: u32,
}

const EMPTY: Rec = Rec { pc: 0, clock: 0, tid: NOBODY, kind: 0 };

/// What is remembered of one byte: the last write, the last two reads by different
/// threads (the newest first).
#[derive(Clone, Copy, Debug)]
struct Cell {
    write: Rec,
    reads: [Rec; 2],
}

const FRESH: Cell = Cell { write: EMPTY, reads: [EMPTY, EMPTY] };

/// The race detector's state for one worker. Its shadow memory is never cleared: the
/// clock only grows, and each block start is a synchronisation, so what earlier blocks
/// (or launches) left behind is ordered before everything that follows.
struct Detector {
    clock: u64,
    /// Clock of the last block barrier (or block start).
    barrier_clock: u64,
    /// `Threads::completed.barriers` as last seen.
    seen_barriers: u64,
    /// Per warp, per (lane, other lane): clock of the last `__syncwarp` both took part in.
    pairs: Vec<Option<Box<[u64; (WARP * WARP) as usize]>>>,
    stat: Vec<Cell>,
    dynamic: Vec<Cell>,
}

impl Detector {
    fn new() -> Self {
        Detector { clock: 1, barrier_clock: 1, seen_barriers: 0, pairs: Vec::new(), stat: Vec::new(), dynamic: Vec::new() }
    }

    /// Takes in the synchronisation events since the last access.
    #[inline(always)]
    fn catch_up(&mut self, threads: &mut Threads) {
        if threads.completed.barriers != self.seen_barriers {
            self.seen_barriers = threads.completed.barriers;
            self.clock += 1;
            self.barrier_clock = self.clock;
        }
        if let Some(s) = threads.syncwarps.as_mut() {
            if !s.is_empty() {
                for (w, lanes) in s.drain(..) {
                    self.clock += 1;
                    self.syncwarp(w as usize, lanes, self.clock);
                }
            }
        }
    }

    #[cold]
    fn syncwarp(&mut self, w: usize, lanes: u32, clock: u64) {
        if self.pairs.len() <= w {
            self.pairs.resize_with(w + 1, || None);
        }
        let m = self.pairs[w].get_or_insert_with(|| Box::new([0; (WARP * WARP) as usize]));
        for i in 0..WARP {
            if lanes & (1 << i) != 0 {
                for j in 0..WARP {
                    if lanes & (1 << j) != 0 {
                        m[(i * WARP + j) as usize] = clock;
                    }
                }
            }
        }
    }

    /// Whether `prev` (of another thread) is ordered before an access of `tid` now.
    #[inline(always)]
    fn ordered(&self, prev: &Rec, tid: u32) -> bool {
        if prev.clock < self.barrier_clock {
            return true;
        }
        if prev.tid / WARP != tid / WARP {
            return false;
        }
        match self.pairs.get((tid / WARP) as usize) {
            Some(Some(m)) => m[((tid % WARP) * WARP + prev.tid % WARP) as usize] > prev.clock,
            _ => false,
        }
    }

    /// `prev` and an access of kind `kind` by `tid` conflict unsynchronised.
    #[inline(always)]
    fn races(&self, prev: &Rec, tid: u32, kind: u32) -> bool {
        prev.tid != NOBODY && prev.tid != tid && prev.kind & kind & access::ATOMIC_BIT == 0 && !self.ordered(prev, tid)
    }
}

/// One race found by an access: its class and the earlier access.
struct Found {
    kind: HazardKind,
    prev: Rec,
}

/// The shared-memory checks of the launch a worker runs (`EMU_CUDA_CHECKS`).
pub(crate) struct SharedChecks {
    on: Checks,
    ranges: Ranges,
    det: Detector,
}

impl SharedChecks {
    /// Sets up (or switches off) the checks for a launch on this worker: the kernel's
    /// code is at `code`, its static shared memory its library's thread-locals where
    /// `shared_in_tls` (`KernelRef::shared_in_tls`); `dyn_start`/`dyn_len` is the block's
    /// dynamic shared memory.
    #[allow(clippy::too_many_arguments)]
    pub fn begin_launch(
        slot: &mut Option<Box<SharedChecks>>,
        on: Checks,
        code: usize,
        shared_in_tls: bool,
        dyn_start: usize,
        dyn_len: usize,
        threads: &mut Threads,
    ) {
        if !on.any() {
            if let Some(c) = slot.as_mut() {
                c.on = on;
            }
            threads.syncwarps = None;
            return;
        }
        let c = slot.get_or_insert_with(|| Box::new(SharedChecks { on, ranges: Ranges::default(), det: Detector::new() }));
        c.on = on;
        c.ranges = Ranges::locate(code, shared_in_tls, dyn_start, dyn_len);
        if on.race {
            let (s, d) = (c.ranges.stat.1, c.ranges.dynamic.1);
            if c.det.stat.len() < s {
                c.det.stat.resize(s, FRESH);
            }
            if c.det.dynamic.len() < d {
                c.det.dynamic.resize(d, FRESH);
            }
        }
        threads.syncwarps = on.race.then(Vec::new);
    }

    /// A block starts: poison its shared memory, and (race detection) everything before
    /// is ordered before it.
    pub fn begin_block(&mut self, threads: &mut Threads) {
        if self.on.poison {
            self.ranges.poison();
        }
        if self.on.race {
            let d = &mut self.det;
            d.seen_barriers = threads.completed.barriers;
            d.clock += 1;
            d.barrier_clock = d.clock;
            if let Some(s) = threads.syncwarps.as_mut() {
                s.clear();
            }
        }
    }

    /// Race detection is on and `addr` is in the block's shared memory.
    #[inline(always)]
    pub fn watches(&self, addr: usize) -> bool {
        self.on.race && self.ranges.find(addr).is_some()
    }

    /// Thread `tid` made an access (`abi::access` kind) of `size` bytes at `addr` from
    /// the hook call returning to `pc`. Records it and reports any race. Returns true
    /// when the launch must stop (`EMU_CUDA_HAZARDS=error`).
    #[allow(clippy::too_many_arguments)]
    pub fn access(
        &mut self,
        tid: u32,
        block_dim: abi::Dim3,
        addr: usize,
        size: u64,
        kind: u32,
        pc: usize,
        threads: &mut Threads,
        log: &mut HazardLog,
    ) -> bool {
        let Some((region, off)) = self.ranges.find(addr) else { return false };
        let det = &mut self.det;
        det.catch_up(threads);
        let cur = Rec { pc, clock: det.clock, tid, kind };
        let len = match region {
            Region::Static => det.stat.len(),
            Region::Dynamic => det.dynamic.len(),
        };
        let end = (off as u64).saturating_add(size).min(len as u64) as usize;
        let write = kind & access::WRITE_BIT != 0;
        let mut found: Vec<Found> = Vec::new();
        for i in off..end {
            let c = match region {
                Region::Static => det.stat[i],
                Region::Dynamic => det.dynamic[i],
            };
            let mut check = |prev: &Rec, class: HazardKind| {
                if det.races(prev, tid, kind) && !found.iter().any(|f| f.kind == class) {
                    found.push(Found { kind: class, prev: *prev });
                }
            };
            let mut c2 = c;
            if write {
                check(&c.write, HazardKind::SharedRaceWaw);
                for r in &c.reads {
                    check(r, HazardKind::SharedRaceWar);
                }
                c2.write = cur;
                c2.reads = [EMPTY, EMPTY];
            } else {
                check(&c.write, HazardKind::SharedRaceRaw);
                if c2.reads[0].tid != tid {
                    c2.reads[1] = c2.reads[0];
                }
                c2.reads[0] = cur;
            }
            match region {
                Region::Static => det.stat[i] = c2,
                Region::Dynamic => det.dynamic[i] = c2,
            }
        }
        if found.is_empty() {
            return false;
        }
        let mut stop = false;
        for f in found {
            stop |= self.report(f, cur, region, off, addr, size, block_dim, log);
        }
        stop
    }

    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn report(
        &self,
        f: Found,
        cur: Rec,
        region: Region,
        off: usize,
        addr: usize,
        size: u64,
        block_dim: abi::Dim3,
        log: &mut HazardLog,
    ) -> bool {
        let key = key_of(&[f.prev.pc as u64, cur.pc as u64]);
        let library = self.ranges.library.clone();
        log.note(f.kind, key, || {
            let (a, b) = (symbols::place_of_return(f.prev.pc), symbols::place_of_return(cur.pc));
            let what = match f.kind {
                HazardKind::SharedRaceRaw => "read-after-write",
                HazardKind::SharedRaceWar => "write-after-read",
                _ => "write-after-write",
            };
            let target = describe_target(region, off, library.as_deref());
            let same_warp = f.prev.tid / WARP == cur.tid / WARP;
            let between = if same_warp {
                "with neither __syncthreads nor a __syncwarp of both lanes between them (lanes of one warp: since sm_70 \
                 they are scheduled independently, and shuffles or votes do not order memory)"
            } else {
                "with no __syncthreads between them"
            };
            Detected {
                kind: f.kind,
                key,
                threads: vec![f.prev.tid, cur.tid],
                operation: format!(
                    "shared-memory {} at {} after {} at {}",
                    verb(cur.kind),
                    b.user_line(),
                    verb(f.prev.kind),
                    a.user_line()
                ),
                message: format!(
                    "{what} race on {target} ({size} byte{} at {addr:#x}): thread {} {} it at {}, then thread {} {} it at {}, {between}",
                    if size == 1 { "" } else { "s" },
                    thread_text(f.prev.tid, block_dim),
                    past(f.prev.kind),
                    a.user_line(),
                    thread_text(cur.tid, block_dim),
                    past(cur.kind),
                    b.user_line(),
                ),
            }
        })
    }
}

/// The variable at `off` (static shared memory, named from the library's symbols) or
/// the offset in dynamic shared memory.
fn describe_target(region: Region, off: usize, library: Option<&std::path::Path>) -> String {
    match region {
        Region::Dynamic => format!("dynamic shared memory (extern __shared__) + {off}"),
        Region::Static => {
            let vars = library.map(symbols::tls_vars).unwrap_or_default();
            match vars.iter().find(|v| (off as u64) >= v.offset && (off as u64) < v.offset + v.size) {
                Some(v) => {
                    let at = off as u64 - v.offset;
                    let short = symbols::short_name(&v.name);
                    let inside = if at == 0 { String::new() } else { format!(" + {at}") };
                    if short.len() == v.name.len() {
                        format!("__shared__ `{short}`{inside}")
                    } else {
                        format!("__shared__ `{short}`{inside} (`{}`)", v.name)
                    }
                }
                None => format!("static shared memory + {off}"),
            }
        }
    }
}

fn verb(kind: u32) -> &'static str {
    match kind {
        access::READ => "read",
        access::WRITE => "write",
        access::ATOMIC_READ => "atomic read",
        _ => "atomic write",
    }
}

fn past(kind: u32) -> &'static str {
    match kind {
        access::READ => "read",
        access::WRITE => "wrote",
        access::ATOMIC_READ => "atomically read",
        _ => "atomically wrote",
    }
}

/// "(x,y,z) [linear N, warp W lane L]".
fn thread_text(tid: u32, d: abi::Dim3) -> String {
    let (bx, by) = (d.x.max(1), d.y.max(1));
    format!("({},{},{}) [#{tid}, warp {} lane {}]", tid % bx, (tid / bx) % by, tid / (bx * by), tid / WARP, tid % WARP)
}

#[cfg(test)]
mod tests {
    use crate::abi::{self, access};
    use crate::exec::hazard::{HazardKind, HazardLog, HazardMode};
    use crate::exec::race::SharedChecks;
    use crate::exec::threads::tests::threads;
    use crate::exec::threads::Threads;
    use crate::exec::types::Checks;

    /// A detector over 64 bytes of dynamic shared memory (a plain buffer).
    fn setup(n: u32) -> (SharedChecks, Threads, HazardLog, Vec<u8>) {
        let buf = vec![0u8; 64];
        let mut t = threads(n);
        let mut slot = None;
        SharedChecks::begin_launch(&mut slot, Checks { race: true, poison: false }, 0, true, buf.as_ptr() as usize, 64, &mut t);
        let mut c = *slot.unwrap();
        c.begin_block(&mut t);
        (c, t, HazardLog::new(HazardMode::Warn, "k"), buf)
    }

    fn dim(n: u32) -> abi::Dim3 {
        abi::Dim3 { x: n, y: 1, z: 1 }
    }

    #[test]
    fn a_write_then_another_threads_read_races_until_a_barrier_separates_them() {
        let (mut c, mut t, mut log, buf) = setup(64);
        let a = buf.as_ptr() as usize;
        c.access(1, dim(64), a + 4, 4, access::WRITE, 0x10, &mut t, &mut log);
        c.access(40, dim(64), a + 4, 4, access::READ, 0x20, &mut t, &mut log);
        // Same thread: no race.
        c.access(1, dim(64), a + 4, 4, access::READ, 0x30, &mut t, &mut log);
        t.completed.barriers += 1; // a __syncthreads completes
        c.access(41, dim(64), a + 4, 4, access::WRITE, 0x40, &mut t, &mut log);
        let r = log.into_reports();
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].kind, HazardKind::SharedRaceRaw);
        assert_eq!(r[0].threads, vec![1, 40]);
        assert!(r[0].message.contains("dynamic shared memory (extern __shared__) + 4"), "{}", r[0].message);
    }

    #[test]
    fn war_waw_and_atomics() {
        let (mut c, mut t, mut log, buf) = setup(64);
        let a = buf.as_ptr() as usize;
        c.access(2, dim(64), a, 4, access::READ, 0x10, &mut t, &mut log);
        c.access(3, dim(64), a, 4, access::READ, 0x11, &mut t, &mut log);
        c.access(2, dim(64), a, 4, access::WRITE, 0x12, &mut t, &mut log); // WAR with thread 3's read
        c.access(5, dim(64), a, 4, access::WRITE, 0x13, &mut t, &mut log); // WAW with thread 2
        c.access(6, dim(64), a + 8, 8, access::ATOMIC_WRITE, 0x14, &mut t, &mut log);
        c.access(7, dim(64), a + 8, 8, access::ATOMIC_WRITE, 0x14, &mut t, &mut log); // atomics: no race
        c.access(8, dim(64), a + 8, 8, access::READ, 0x15, &mut t, &mut log); // plain read after an atomic: RAW
        let r = log.into_reports();
        let kinds: Vec<(HazardKind, Vec<u32>)> = r.iter().map(|h| (h.kind, h.threads.clone())).collect();
        assert_eq!(
            kinds,
            vec![(HazardKind::SharedRaceWar, vec![3, 2]), (HazardKind::SharedRaceWaw, vec![2, 5]), (HazardKind::SharedRaceRaw, vec![7, 8])]
        );
    }

    #[test]
    fn a_syncwarp_orders_its_lanes_only_and_shuffles_do_not() {
        let (mut c, mut t, mut log, buf) = setup(64);
        let a = buf.as_ptr() as usize;
        c.access(0, dim(64), a, 4, access::WRITE, 0x10, &mut t, &mut log);
        c.access(33, dim(64), a + 16, 4, access::WRITE, 0x11, &mut t, &mut log);
        t.syncwarps.as_mut().unwrap().push((0, 0b11)); // __syncwarp(0b11) of lanes 0 and 1
        t.completed.collectives += 1;
        c.access(1, dim(64), a, 4, access::READ, 0x12, &mut t, &mut log); // ordered
        c.access(2, dim(64), a, 4, access::READ, 0x13, &mut t, &mut log); // lane 2 took no part: race
        c.access(34, dim(64), a + 16, 4, access::READ, 0x14, &mut t, &mut log); // warp 1, no sync: race
        let r = log.into_reports();
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!((r[0].kind, r[0].threads.clone()), (HazardKind::SharedRaceRaw, vec![0, 2]));
        assert!(r[0].message.contains("lanes of one warp"), "{}", r[0].message);
        assert_eq!(r[1].threads, vec![33, 34]);
    }

    #[test]
    fn reports_are_counted_per_site_pair_and_blocks_do_not_race_with_each_other() {
        let (mut c, mut t, mut log, buf) = setup(64);
        let a = buf.as_ptr() as usize;
        for i in 0..8u32 {
            c.access(i, dim(64), a + 4 * i as usize, 4, access::WRITE, 0x10, &mut t, &mut log);
            c.access(i + 1, dim(64), a + 4 * i as usize, 4, access::READ, 0x20, &mut t, &mut log);
        }
        c.begin_block(&mut t); // the next block: its accesses follow the previous block's
        c.access(9, dim(64), a, 4, access::WRITE, 0x30, &mut t, &mut log);
        let r = log.into_reports();
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].occurrences, 8);
    }
}
