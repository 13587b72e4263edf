//! One thread block's scheduling state: which threads have exited, which wait, which
//! can run next. Plain safe code with no fibers in it: the runtime entries report
//! arrivals and exits here, and the scheduler resumes whatever lands on the run queue.
//!
//! The rendezvous kinds each have their file and add their methods to [`Block`]:
//! `barrier` (block barriers), `warp` (warp collectives), `convergence`
//! (`__activemask`), `deadlock` (what to report when nothing can run).
//!
//! The state is initialised lazily ("slow mode") by the first runtime call of a block,
//! so a block whose threads never call the runtime costs nothing here. Threads that run
//! as plain calls inside a range are told about late: a range's finished threads are
//! marked exited when the next thread of the range calls the runtime or the range ends.

use super::barrier::Barrier;
use super::hazard::HazardLog;
use super::warp::Warp;
use super::warp_ops::{lane_range_mask, WARP};
use crate::abi;

/// Outcome of an arrival at a rendezvous.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// The arrival completed the rendezvous: go on with this result, without waiting.
    Done(u64, i32),
    /// Suspend until the scheduler resumes this thread; the result is in the block.
    Wait,
    /// A hazard in error mode: the launch stops.
    Stop,
}

/// Who runs next. The run queue is FIFO: threads resume in the order their rendezvous
/// released them.
#[derive(Default)]
pub(crate) struct Queues {
    run: Vec<u32>,
    head: usize,
    /// Ranges [first, end) of threads that have not started, to be run on a fiber.
    pub pending: Vec<(u32, u32)>,
    /// Threads suspended by `yield_now`, and where they yielded; they run again once
    /// nothing else can.
    pub yielded: Vec<(u32, abi::Site)>,
}

impl Queues {
    #[inline]
    pub fn push_run(&mut self, t: u32) {
        self.run.push(t);
    }

    #[inline]
    pub fn pop_run(&mut self) -> Option<u32> {
        let t = *self.run.get(self.head)?;
        self.head += 1;
        if self.head == self.run.len() {
            self.run.clear();
            self.head = 0;
        }
        Some(t)
    }

    /// Appends threads to the run queue.
    #[inline]
    pub fn extend_run(&mut self, count: usize, threads: impl Iterator<Item = u32>) {
        self.run.reserve(count);
        self.run.extend(threads);
    }

    #[inline]
    pub fn peek_run(&self) -> Option<u32> {
        self.run.get(self.head).copied()
    }

    pub fn run_is_empty(&self) -> bool {
        self.head == self.run.len()
    }

    /// Appends `threads` to the run queue, leaving `threads` empty (a swap when the
    /// queue is empty: releasing a whole barrier generation costs O(1)).
    pub fn append_run(&mut self, threads: &mut Vec<u32>) {
        if self.run_is_empty() {
            self.run.clear();
            self.head = 0;
            std::mem::swap(&mut self.run, threads);
        } else {
            self.run.append(threads);
        }
    }

    /// The threads on the run queue.
    pub fn runnable(&self) -> &[u32] {
        &self.run[self.head..]
    }

    pub fn clear(&mut self) {
        self.run.clear();
        self.head = 0;
        self.pending.clear();
        self.yielded.clear();
    }
}

/// Rendezvous completed in this block (added to the executor's statistics).
#[derive(Default, Clone, Copy)]
pub(crate) struct Completed {
    pub barriers: u64,
    pub collectives: u64,
    pub convergences: u64,
    pub yields: u64,
}

pub(crate) struct Block {
    /// Threads in the block.
    pub n: u32,
    /// Set by the first runtime call of the block: per-thread state is valid.
    pub slow: bool,
    /// Threads that have not exited.
    pub live: u32,
    /// The fiber each thread runs on once it has waited at least once.
    pub fiber_of: Vec<u32>,
    pub queues: Queues,
    pub barrier: Barrier,
    pub warps: Vec<Warp>,
    /// A hazard in error mode was recorded: the launch must stop.
    pub stop: bool,
    pub completed: Completed,
}

impl Block {
    pub fn new() -> Self {
        Block {
            n: 0,
            slow: false,
            live: 0,
            fiber_of: Vec::new(),
            queues: Queues::default(),
            barrier: Barrier::default(),
            warps: Vec::new(),
            stop: false,
            completed: Completed::default(),
        }
    }

    /// Starts a block of `n` threads, all in one pending range. O(1): per-thread state
    /// is set up by `begin_slow`.
    pub fn reset(&mut self, n: u32) {
        self.n = n;
        self.slow = false;
        self.live = n;
        self.queues.clear();
        self.queues.pending.push((0, n));
        self.stop = false;
    }

    /// Sets up per-thread state at the block's first runtime call.
    #[cold]
    pub fn begin_slow(&mut self) {
        if self.slow {
            return;
        }
        self.slow = true;
        let n = self.n as usize;
        if self.fiber_of.len() < n {
            self.fiber_of.resize(n, u32::MAX);
        }
        self.live = self.n;
        self.barrier.reset();
        let nw = n.div_ceil(WARP as usize);
        if self.warps.len() < nw {
            self.warps.resize_with(nw, Warp::default);
        }
        for (i, w) in self.warps.iter_mut().take(nw).enumerate() {
            let lanes = (n - i * WARP as usize).min(WARP as usize) as u32;
            w.reset(if lanes == WARP { 0 } else { !((1u32 << lanes) - 1) });
        }
    }

    /// Warp `wi` of the block.
    #[cfg(test)]
    pub fn warp(&self, wi: u32) -> &Warp {
        &self.warps[wi as usize]
    }

    /// Thread `tid` suspends on fiber `fi` at a rendezvous (or a yield): it counts as
    /// waiting for convergence, which may now complete in its warp.
    #[inline(always)]
    pub fn start_waiting(&mut self, tid: u32, fi: u32, log: &mut HazardLog) {
        self.fiber_of[tid as usize] = fi;
        let wi = tid / WARP;
        let w = &self.warps[wi as usize];
        if w.has_convergence() {
            self.maybe_converge(wi);
        }
        if self.warps[wi as usize].is_blocked() {
            self.retry_blocked(wi, log);
        }
    }

    /// The lanes of warp `wi` suspended at any rendezvous or yield. Computed when
    /// convergence asks (rare), so arrivals do not keep it up to date.
    pub fn waiting_lanes(&self, wi: u32) -> u32 {
        let w = &self.warps[wi as usize];
        let in_warp = |t: u32| if t / WARP == wi { 1u32 << (t % WARP) } else { 0 };
        let mut m = w.groups().iter().fold(0, |m, g| m | g.arrived);
        m |= w.conv.iter().fold(0, |m, g| m | g.members);
        m |= self.barrier.waiters().iter().fold(0, |m, &t| m | in_warp(t));
        m |= self.queues.yielded.iter().fold(0, |m, &(t, _)| m | in_warp(t));
        m
    }

    /// Thread `tid` yields at `site`: it runs again once nothing else can.
    pub fn yield_thread(&mut self, tid: u32, fi: u32, site: abi::Site, log: &mut HazardLog) {
        self.queues.yielded.push((tid, site));
        self.completed.yields += 1;
        self.start_waiting(tid, fi, log);
    }

    /// Every yielded thread becomes runnable (nothing else could run).
    pub fn resume_yielded(&mut self) {
        let ys = std::mem::take(&mut self.queues.yielded);
        for &(t, _) in &ys {
            self.queues.push_run(t);
        }
        self.queues.yielded = ys;
        self.queues.yielded.clear();
    }

    /// Threads [a, e) have finished. May complete rendezvous that waited for them.
    pub fn exit_range(&mut self, a: u32, e: u32, log: &mut HazardLog) {
        if a >= e {
            return;
        }
        self.live -= e - a;
        for wi in a / WARP..=(e - 1) / WARP {
            let lo = a.max(wi * WARP) - wi * WARP;
            let hi = e.min(wi * WARP + WARP) - wi * WARP;
            let newly = lane_range_mask(lo, hi);
            let w = &mut self.warps[wi as usize];
            debug_assert_eq!(w.gone & newly, 0, "a thread exited twice");
            w.gone |= newly;
            if w.has_groups() {
                self.lanes_gone(wi, newly, log);
            }
            if self.warps[wi as usize].has_convergence() {
                self.maybe_converge(wi);
            }
            if self.warps[wi as usize].is_blocked() {
                self.retry_blocked(wi, log);
            }
        }
        if self.barrier.waiting() > 0 && self.barrier.waiting() == self.live {
            self.complete_barrier(None, log);
        }
    }

    /// Whether thread `tid` has exited.
    pub fn exited(&self, tid: u32) -> bool {
        self.warps[(tid / WARP) as usize].gone & (1 << (tid % WARP)) != 0
    }

    /// The threads that have exited, in order.
    pub fn exited_threads(&self) -> Vec<u32> {
        (0..self.n).filter(|&t| self.exited(t)).collect()
    }
}

/// `file:line:column` of a call site, or "unknown site".
pub(crate) fn site_text(site: &abi::Site) -> String {
    site.describe()
}

/// A key for a call site; all unknown sites share one.
pub(crate) fn site_key(site: &abi::Site) -> u64 {
    if site.line == 0 {
        0
    } else {
        site.key()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::exec::hazard::HazardMode;

    pub(crate) fn block(n: u32) -> (Block, HazardLog) {
        let mut b = Block::new();
        b.reset(n);
        b.begin_slow();
        // The tests play the threads' arrivals themselves.
        b.queues.pending.clear();
        (b, HazardLog::new(HazardMode::Warn, "k"))
    }

    #[test]
    fn the_run_queue_is_fifo_and_takes_whole_generations() {
        let mut q = Queues::default();
        let mut gen = vec![3, 1, 2];
        q.append_run(&mut gen);
        assert!(gen.is_empty());
        q.push_run(9);
        let mut more = vec![4];
        q.append_run(&mut more);
        let got: Vec<u32> = std::iter::from_fn(|| q.pop_run()).collect();
        assert_eq!(got, vec![3, 1, 2, 9, 4]);
        assert!(q.run_is_empty());
    }

    #[test]
    fn exits_mark_lanes_gone_and_partial_warps_start_with_missing_lanes() {
        let (mut b, mut log) = block(40);
        assert_eq!(b.warp(1).gone, !0xff);
        b.exit_range(30, 34, &mut log);
        assert_eq!(b.live, 36);
        assert_eq!(b.warp(0).gone, 0xc000_0000);
        assert_eq!(b.warp(1).gone, !0xff | 0b11);
        assert_eq!(b.waiting_lanes(0), 0);
        assert!(b.exited(31) && !b.exited(34));
    }
}
