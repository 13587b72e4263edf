//! Block barriers: `__syncthreads` and its `_count/_and/_or` forms, with sm_70+
//! semantics: a barrier completes when every thread that has not exited has arrived
//! (exited threads count as arrived), whatever the call site.
//!
//! An arrival costs a few stores: the generation's count, first site and op are kept
//! as it fills, and a thread whose site differs is noted aside. Completion is O(1) in
//! the common case: the waiter list becomes the run queue, and each waiter computes its
//! own result from the generation's count when it resumes (no generation can complete
//! before every waiter of the previous one has resumed: they are all needed for it).
//!
//! Reported (warn: the block goes on; error: the launch stops): a barrier that some
//! threads exited before (`barrier-divergence-exit`) and one generation reached from
//! different call sites (`barrier-divergence-site`, naming each site's file and line).

use super::hazard::{format_threads, key_of, Detected, HazardKind, HazardLog};
use super::threads::{entry, entry_thread, lane_bit_in, site_key, site_text, Arrival, Entry, Threads};
use super::warp_ops::barrier_name;
use crate::abi;

/// The state of the block's barrier: the generation that is filling up, and the counts
/// of the last completed one (read by its waiters when they resume).
pub(crate) struct Barrier {
    /// The waiting threads with their fibers, in arrival order: the run queue's
    /// entries once the generation completes.
    waiters: Vec<Entry>,
    /// True predicates among this generation's arrivals.
    count: u64,
    op0: u32,
    site0: abi::Site,
    /// Arrivals whose call site differs from the first one's (both known).
    other_sites: Vec<(u32, abi::Site)>,
    last_count: u64,
    last_arrived: u64,
}

impl Default for Barrier {
    fn default() -> Self {
        Barrier {
            waiters: Vec::new(),
            count: 0,
            op0: 0,
            site0: abi::Site::UNKNOWN,
            other_sites: Vec::new(),
            last_count: 0,
            last_arrived: 0,
        }
    }
}

impl Barrier {
    pub fn reset(&mut self) {
        self.waiters.clear();
        self.other_sites.clear();
        self.count = 0;
    }

    /// The first arrival of a generation (out of line: once per generation, and the
    /// arrival path keeps fewer values on the suspended thread's stack).
    /// (The call site comes as its fields, in registers.)
    #[inline(never)]
    fn open(&mut self, op: u32, file: *const std::ffi::c_char, line: u32, column: u32) {
        self.count = 0;
        self.op0 = op;
        self.site0 = abi::Site { file, line, column };
        self.other_sites.clear();
    }

    /// Notes an arrival from a call site other than the generation's first.
    #[cold]
    #[inline(never)]
    fn note_site(&mut self, tid: u32, file: *const std::ffi::c_char, line: u32, column: u32) {
        let site = abi::Site { file, line, column };
        if site.line != 0 && self.site0.line != 0 {
            self.other_sites.push((tid, site));
        }
    }

    /// Threads suspended at the barrier.
    pub fn waiting(&self) -> u32 {
        self.waiters.len() as u32
    }

    /// The waiting threads, in arrival order.
    pub fn waiters(&self) -> Vec<u32> {
        self.waiters.iter().map(|&e| entry_thread(e)).collect()
    }

    /// The lanes of warp `wi` waiting at the barrier.
    pub fn waiting_in(&self, wi: u32) -> u32 {
        self.waiters.iter().fold(0, |m, &e| m | lane_bit_in(entry_thread(e), wi))
    }

    /// The op and call site of the first arrival of the filling generation.
    pub fn first(&self) -> (u32, abi::Site) {
        (self.op0, self.site0)
    }

    /// The call sites of the filling generation, each with its threads.
    pub fn sites(&self) -> Vec<(abi::Site, Vec<u32>)> {
        let mut out: Vec<(abi::Site, Vec<u32>)> = Vec::new();
        for t in self.waiters.iter().map(|&e| entry_thread(e)) {
            let s = self.other_sites.iter().find(|(o, _)| *o == t).map(|(_, s)| *s).unwrap_or(self.site0);
            match out.iter_mut().find(|(k, _)| *k == s) {
                Some((_, ts)) => ts.push(t),
                None => out.push((s, vec![t])),
            }
        }
        out
    }

    /// The result a thread that called barrier op `op` gets from the last completed
    /// generation.
    #[inline(always)]
    pub fn result(&self, op: u32) -> u64 {
        if op == abi::bar::SYNC {
            return 0;
        }
        match op {
            abi::bar::COUNT => self.last_count,
            abi::bar::AND => (self.last_count == self.last_arrived) as u64,
            abi::bar::OR => (self.last_count > 0) as u64,
            _ => 0,
        }
    }
}

/// Whether two call sites are the same (compared as two words, without branches).
#[inline(always)]
fn same_site(a: &abi::Site, b: &abi::Site) -> bool {
    let lc = |s: &abi::Site| s.line as u64 | (s.column as u64) << 32;
    (a.file == b.file) & (lc(a) == lc(b))
}

impl Barrier {
    /// Thread `tid` (on fiber `fi`) arrives at a barrier: `Wait` when it must suspend
    /// (the block then records it as waiting), `Done` when it completed the generation.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn arrive(
        &mut self,
        threads: &mut Threads,
        tid: u32,
        fi: u32,
        op: u32,
        pred: bool,
        site: abi::Site,
        log: &mut HazardLog,
    ) -> Arrival {
        if self.waiters.is_empty() {
            self.open(op, site.file, site.line, site.column);
        } else if !same_site(&site, &self.site0) {
            self.note_site(tid, site.file, site.line, site.column);
        }
        self.count += pred as u64;
        if self.waiters.len() as u32 + 1 == threads.live {
            self.complete(threads, Some(tid), log);
            if threads.stop {
                return Arrival::Stop;
            }
            return Arrival::Done(self.result(op), 0);
        }
        self.waiters.push(entry(tid, fi));
        Arrival::Wait
    }

    /// Completes the filling generation: every waiter becomes runnable; `caller` (the
    /// last arrival, if a thread rather than an exit completed it) goes on directly.
    #[inline(never)]
    pub(crate) fn complete(&mut self, threads: &mut Threads, caller: Option<u32>, log: &mut HazardLog) {
        let arrived = self.waiters.len() as u64 + caller.is_some() as u64;
        self.last_count = self.count;
        self.last_arrived = arrived;
        if threads.live < threads.n {
            self.report_exit(threads, arrived, log);
        }
        if !self.other_sites.is_empty() {
            self.report_sites(threads, caller, log);
        }
        threads.queues.append_run(&mut self.waiters);
        self.count = 0;
        self.other_sites.clear();
        threads.completed.barriers += 1;
    }

    fn report_exit(&self, threads: &mut Threads, arrived: u64, log: &mut HazardLog) {
        let (op, site) = self.first();
        let stop = report_exit(op, &site, arrived, threads.n, || threads.exited_threads(), log);
        threads.stop |= stop;
    }

    fn report_sites(&self, threads: &mut Threads, caller: Option<u32>, log: &mut HazardLog) {
        let (op, site0) = self.first();
        // The generation's threads, the caller included, grouped by site.
        let mut all: Vec<u32> = self.waiters();
        all.extend(caller);
        let site_of = |t: u32| self.other_sites.iter().find(|(o, _)| *o == t).map(|(_, s)| *s).unwrap_or(site0);
        let mut sites: Vec<abi::Site> = Vec::new();
        for &t in &all {
            let s = site_of(t);
            if !sites.contains(&s) {
                sites.push(s);
            }
        }
        sites.sort_by_key(|s| (s.line, s.column, s.file as usize));
        let key = key_of(&sites.iter().map(site_key).collect::<Vec<_>>());
        let stop = log.note(HazardKind::BarrierDivergenceSite, key, || {
            let mut parts = Vec::new();
            for s in &sites {
                let mut ts: Vec<u32> = all.iter().copied().filter(|&t| site_of(t) == *s).collect();
                ts.sort_unstable();
                parts.push(format!("threads {} at call site {}", format_threads(&ts), site_text(s)));
            }
            let mut others: Vec<u32> = all.iter().copied().filter(|&t| site_of(t) != site0).collect();
            others.sort_unstable();
            Detected {
                kind: HazardKind::BarrierDivergenceSite,
                key,
                operation: format!("{} (call sites {})", barrier_name(op), sites.iter().map(site_text).collect::<Vec<_>>().join(", ")),
                message: format!(
                    "one barrier generation was reached from {} different call sites: {}. sm_70+ \
                     completes it, but the threads took different paths to their barrier",
                    sites.len(),
                    parts.join("; ")
                ),
                threads: others,
            }
        });
        threads.stop |= stop;
    }
}

/// Reports a barrier generation (op `op` at `site`) that completed with `arrived` of
/// the block's `n` threads, the threads `exited` (sorted) having exited before it: the
/// `barrier-divergence-exit` hazard. True when the launch stops (error mode). Shared by
/// the fibers' barrier and PTX mode's loop path (`loops`), so both report alike.
pub(crate) fn report_exit(op: u32, site: &abi::Site, arrived: u64, n: u32, exited: impl FnOnce() -> Vec<u32>, log: &mut HazardLog) -> bool {
    let key = key_of(&[site_key(site), op as u64]);
    log.note(HazardKind::BarrierDivergenceExit, key, || {
        let exited = exited();
        Detected {
            kind: HazardKind::BarrierDivergenceExit,
            key,
            operation: format!("{} (call site {})", barrier_name(op), site_text(site)),
            message: format!(
                "{} of {} threads reached this barrier; threads {} exited without reaching it. \
                 On sm_70+ exited threads count as arrived and the barrier completes, but the \
                 condition around a barrier must evaluate identically across the block",
                arrived,
                n,
                format_threads(&exited)
            ),
            threads: exited,
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::abi;
    use crate::exec::barrier::Barrier;
    use crate::exec::hazard::{HazardKind, HazardLog, HazardMode};
    use crate::exec::threads::tests::threads;
    use crate::exec::threads::Arrival;

    fn at(line: u32) -> abi::Site {
        abi::Site { file: c"k.cu".as_ptr(), line, column: 0 }
    }

    #[test]
    fn barrier_completes_when_the_last_live_thread_arrives() {
        let (mut t, mut b, mut log) = (threads(3), Barrier::default(), HazardLog::new(HazardMode::Warn, "k"));
        assert_eq!(b.arrive(&mut t, 0, 0, abi::bar::COUNT, true, at(7), &mut log), Arrival::Wait);
        assert_eq!(b.arrive(&mut t, 1, 1, abi::bar::COUNT, false, at(7), &mut log), Arrival::Wait);
        assert_eq!(b.arrive(&mut t, 2, 2, abi::bar::COUNT, true, at(7), &mut log), Arrival::Done(2, 0));
        assert_eq!(t.queues.runnable(), &[0, 1]);
        assert_eq!(b.result(abi::bar::COUNT), 2);
        assert_eq!(b.result(abi::bar::AND), 0);
        assert_eq!(b.result(abi::bar::OR), 1);
        assert!(log.into_reports().is_empty());
    }

    #[test]
    fn two_sites_in_one_generation_are_named() {
        let (mut t, mut b, mut log) = (threads(4), Barrier::default(), HazardLog::new(HazardMode::Warn, "k"));
        b.arrive(&mut t, 0, 0, abi::bar::SYNC, false, at(10), &mut log);
        b.arrive(&mut t, 1, 1, abi::bar::SYNC, false, at(12), &mut log);
        b.arrive(&mut t, 2, 2, abi::bar::SYNC, false, at(10), &mut log);
        assert_eq!(b.arrive(&mut t, 3, 3, abi::bar::SYNC, false, at(12), &mut log), Arrival::Done(0, 0));
        let r = log.into_reports();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].kind, HazardKind::BarrierDivergenceSite);
        assert_eq!(r[0].threads, vec![1, 3]);
        assert!(r[0].message.contains("threads 0,2 at call site k.cu:10:0; threads 1,3 at call site k.cu:12:0"), "{}", r[0].message);
    }
}
