//! One thread block's rendezvous state, put together: the thread table (`threads`:
//! who has exited, who waits on which fiber, who runs next), the block barrier
//! (`barrier`), and per warp its collectives (`warp`) and `__activemask` groups
//! (`convergence`). Plain safe code with no fibers in it: the runtime entries report
//! arrivals and exits here, and the scheduler resumes whatever lands on the run queue.
//!
//! Each rendezvous kind keeps its own rules in its file; what ties them together lives
//! here: a thread that starts waiting anywhere, or exits, may complete an
//! `__activemask` group or a shuffle of its warp that waited for it, and an exit may
//! complete the barrier. `deadlock` reads the whole state when nothing can run.
//!
//! The state is initialised lazily ("slow mode") by the first runtime call of a block,
//! so a block whose threads never call the runtime costs nothing here. Threads that run
//! as plain calls inside a range are told about late: a range's finished threads are
//! marked exited when the next thread of the range calls the runtime or the range ends.

use super::barrier::Barrier;
use super::convergence::Convergence;
use super::hazard::HazardLog;
use super::threads::{Arrival, Threads};
use super::warp::Warp;
use super::warp_ops::{lane_range_mask, WARP};
use crate::abi;

/// A block's rendezvous state: the thread table and each rendezvous kind's own part.
pub(crate) struct Block {
    pub threads: Threads,
    pub barrier: Barrier,
    pub warps: Vec<WarpState>,
}

/// One warp's rendezvous state: its collectives and its `__activemask` groups. Laid
/// out so that what every arrival checks (open groups, a blocked shuffle) shares the
/// first cache line; the lanes' operands follow.
#[derive(Default)]
#[repr(C)]
pub(crate) struct WarpState {
    pub convergence: Convergence,
    pub collectives: Warp,
}

/// The lanes of warp `wi` suspended at a rendezvous other than its collectives: at the
/// barrier, in `__activemask` (`conv`: that warp's groups), or yielded. What a warp asks
/// when a shuffle reads lanes outside its mask.
fn waiting_elsewhere<'a>(barrier: &'a Barrier, conv: &'a Convergence) -> impl Fn(&Threads, u32) -> u32 + Copy + 'a {
    move |t: &Threads, wi: u32| conv.members() | barrier.waiting_in(wi) | t.yielded_in(wi)
}

impl Block {
    pub fn new() -> Self {
        Block { threads: Threads::new(), barrier: Barrier::default(), warps: Vec::new() }
    }

    /// Starts a block of `n` threads, all in one pending range. O(1): per-thread state
    /// is set up by `begin_slow`.
    pub fn reset(&mut self, n: u32) {
        self.threads.reset(n);
    }

    /// Sets up per-thread state at the block's first runtime call.
    #[cold]
    pub fn begin_slow(&mut self) {
        if self.threads.slow {
            return;
        }
        let nw = self.threads.begin_slow();
        self.barrier.reset();
        if self.warps.len() < nw {
            self.warps.resize_with(nw, WarpState::default);
        }
        for w in self.warps.iter_mut().take(nw) {
            w.collectives.reset();
            w.convergence.reset();
        }
    }

    // ---- arrivals --------------------------------------------------------------------

    /// Thread `tid` (on fiber `fi`) arrives at a barrier.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn arrive_barrier(&mut self, tid: u32, fi: u32, op: u32, pred: bool, site: abi::Site, log: &mut HazardLog) -> Arrival {
        let a = self.barrier.arrive(&mut self.threads, tid, fi, op, pred, site, log);
        if a == Arrival::Wait {
            // Its fiber is in its barrier entry: only the barrier releases it.
            self.waiting_started(tid, log);
        }
        a
    }

    /// Thread `tid` (on fiber `fi`) arrives at warp collective `op` over `mask`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn arrive_warp(
        &mut self,
        tid: u32,
        fi: u32,
        op: u32,
        mask: u32,
        value: u64,
        arg: i32,
        width: i32,
        site: abi::Site,
        log: &mut HazardLog,
    ) -> Arrival {
        let wi = tid / WARP;
        let w = &mut self.warps[wi as usize];
        let elsewhere = waiting_elsewhere(&self.barrier, &w.convergence);
        let a = w.collectives.arrive(&mut self.threads, tid, op, mask, value, arg, width, site, elsewhere, log);
        if a == Arrival::Wait {
            self.start_waiting(tid, fi, log);
        }
        a
    }

    /// Thread `tid` (on fiber `fi`) joins its warp's open collective the common way
    /// (`Warp::join_fast`) and waits in it; false, with nothing changed, otherwise.
    /// Only while no warp of the block has an `__activemask` group or a blocked shuffle
    /// (`rare_waits`), so that waiting completes nothing else.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn join_warp_fast(&mut self, tid: u32, fi: u32, op: u32, mask: u32, value: u64, arg: i32, width: i32) -> bool {
        let wi = (tid / WARP) as usize;
        if self.threads.rare_waits || wi >= self.warps.len() {
            return false;
        }
        let gone = self.threads.gone[wi];
        if !self.warps[wi].collectives.join_fast(tid % WARP, op, mask, value, arg, width, gone) {
            return false;
        }
        self.threads.fiber_of[tid as usize] = fi;
        true
    }

    /// Thread `tid` (on fiber `fi`) calls `__activemask()` at `site`.
    pub fn arrive_activemask(&mut self, tid: u32, fi: u32, site: abi::Site, log: &mut HazardLog) -> Arrival {
        let wi = tid / WARP;
        let elsewhere = self.waiting_outside_activemask(wi);
        let w = &mut self.warps[wi as usize];
        let a = w.convergence.arrive(&mut self.threads, &mut w.collectives, tid, site, elsewhere);
        if a == Arrival::Wait {
            self.threads.fiber_of[tid as usize] = fi;
            if w.collectives.is_blocked() {
                self.retry_blocked(wi, log);
            }
        }
        a
    }

    /// Thread `tid` yields at `site`: it runs again once nothing else can.
    pub fn yield_thread(&mut self, tid: u32, fi: u32, site: abi::Site, log: &mut HazardLog) {
        self.threads.queues.yielded.push((tid, site));
        self.threads.completed.yields += 1;
        self.start_waiting(tid, fi, log);
    }

    /// The result and predicate a resumed lane of a warp collective gets.
    #[inline]
    pub fn warp_result(&self, tid: u32) -> (u64, i32) {
        self.warps[(tid / WARP) as usize].collectives.result(tid % WARP)
    }

    /// The mask a resumed `__activemask()` caller gets.
    pub fn activemask_result(&self, tid: u32) -> u32 {
        self.warps[(tid / WARP) as usize].collectives.lanes[(tid % WARP) as usize].result as u32
    }

    // ---- what waiting and exiting complete -----------------------------------------

    /// Thread `tid` suspends on fiber `fi` at a rendezvous (or a yield): it counts as
    /// waiting for convergence, which may now complete in its warp, and for shuffles
    /// that read it from outside their masks.
    #[inline(always)]
    pub fn start_waiting(&mut self, tid: u32, fi: u32, log: &mut HazardLog) {
        self.threads.fiber_of[tid as usize] = fi;
        self.waiting_started(tid, log);
    }

    /// Thread `tid` suspends (its fiber noted where its release will find it): what it
    /// may complete in its warp.
    #[inline(always)]
    fn waiting_started(&mut self, tid: u32, log: &mut HazardLog) {
        if !self.threads.rare_waits {
            return; // no warp of the block has an activemask group or a blocked shuffle
        }
        let wi = tid / WARP;
        let w = &self.warps[wi as usize];
        let (converging, blocked) = (w.convergence.is_open(), w.collectives.is_blocked());
        if converging {
            self.maybe_converge(wi); // leaves the collectives as they are
        }
        if blocked {
            self.retry_blocked(wi, log);
        }
    }

    /// The lanes of warp `wi` suspended at a rendezvous other than `__activemask` (a
    /// warp collective, the barrier) or a yield: what convergence asks. Computed when
    /// asked (only warps with `__activemask` callers do), so arrivals do not keep it up
    /// to date.
    fn waiting_outside_activemask(&self, wi: u32) -> u32 {
        self.warps[wi as usize].collectives.waiting() | self.barrier.waiting_in(wi) | self.threads.yielded_in(wi)
    }

    /// The lanes of warp `wi` suspended at any rendezvous or yield.
    #[cfg(test)]
    fn waiting_lanes(&self, wi: u32) -> u32 {
        self.waiting_outside_activemask(wi) | self.warps[wi as usize].convergence.members()
    }

    /// Completes warp `wi`'s `__activemask()` groups when every live lane waits.
    #[cold]
    #[inline(never)]
    fn maybe_converge(&mut self, wi: u32) {
        let elsewhere = self.waiting_outside_activemask(wi);
        let w = &mut self.warps[wi as usize];
        w.convergence.maybe_converge(&mut self.threads, &mut w.collectives, wi, elsewhere);
    }

    /// Retries warp `wi`'s shuffle groups that waited for lanes outside their masks.
    #[cold]
    #[inline(never)]
    fn retry_blocked(&mut self, wi: u32, log: &mut HazardLog) {
        let w = &mut self.warps[wi as usize];
        w.collectives.retry_blocked(&mut self.threads, wi, waiting_elsewhere(&self.barrier, &w.convergence), log);
    }

    /// Threads [a, e) have finished. May complete rendezvous that waited for them.
    pub fn exit_range(&mut self, a: u32, e: u32, log: &mut HazardLog) {
        if a >= e {
            return;
        }
        self.threads.live -= e - a;
        for wi in a / WARP..=(e - 1) / WARP {
            let lo = a.max(wi * WARP) - wi * WARP;
            let hi = e.min(wi * WARP + WARP) - wi * WARP;
            self.lanes_exit(wi, lane_range_mask(lo, hi), log);
        }
        self.exits_done(log);
    }

    /// Thread `t` has finished (a range of one: every thread of a block with a barrier
    /// ends like this).
    #[inline]
    pub fn exit_one(&mut self, t: u32, log: &mut HazardLog) {
        self.threads.live -= 1;
        self.lanes_exit(t / WARP, 1 << (t % WARP), log);
        self.exits_done(log);
    }

    /// Lanes `newly` of warp `wi` have exited: the warp's collectives and
    /// `__activemask` groups that waited for them may complete.
    #[inline(always)]
    fn lanes_exit(&mut self, wi: u32, newly: u32, log: &mut HazardLog) {
        let gone = &mut self.threads.gone[wi as usize];
        debug_assert_eq!(*gone & newly, 0, "a thread exited twice");
        *gone |= newly;
        let w = &mut self.warps[wi as usize];
        if w.collectives.has_groups() || w.convergence.is_open() || w.collectives.is_blocked() {
            self.open_rendezvous_exit(wi, newly, log);
        }
    }

    #[inline(never)]
    fn open_rendezvous_exit(&mut self, wi: u32, newly: u32, log: &mut HazardLog) {
        let w = &mut self.warps[wi as usize];
        if w.collectives.has_groups() {
            w.collectives.lanes_gone(&mut self.threads, wi, newly, waiting_elsewhere(&self.barrier, &w.convergence), log);
        }
        if self.warps[wi as usize].convergence.is_open() {
            self.maybe_converge(wi);
        }
        if self.warps[wi as usize].collectives.is_blocked() {
            self.retry_blocked(wi, log);
        }
    }

    /// After exits: the barrier completes when every live thread waits at it.
    #[inline(always)]
    fn exits_done(&mut self, log: &mut HazardLog) {
        if self.barrier.waiting() > 0 && self.barrier.waiting() == self.threads.live {
            self.barrier.complete(&mut self.threads, None, log);
        }
    }

    /// Whether thread `tid` has exited.
    pub fn exited(&self, tid: u32) -> bool {
        self.threads.exited(tid)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::abi;
    use crate::exec::block::Block;
    use crate::exec::hazard::{HazardKind, HazardLog, HazardMode};
    use crate::exec::threads::Arrival;

    pub(crate) fn block(n: u32) -> (Block, HazardLog) {
        let mut b = Block::new();
        b.reset(n);
        b.begin_slow();
        // The tests play the threads' arrivals themselves.
        b.threads.queues.clear_pending();
        (b, HazardLog::new(HazardMode::Warn, "k"))
    }

    fn at(line: u32) -> abi::Site {
        abi::Site { file: c"k.cu".as_ptr(), line, column: 0 }
    }

    #[test]
    fn exits_mark_lanes_gone_and_partial_warps_start_with_missing_lanes() {
        let (mut b, mut log) = block(40);
        assert_eq!(b.threads.gone[1], !0xff);
        b.exit_range(30, 34, &mut log);
        assert_eq!(b.threads.live, 36);
        assert_eq!(b.threads.gone[0], 0xc000_0000);
        assert_eq!(b.threads.gone[1], !0xff | 0b11);
        assert_eq!(b.waiting_lanes(0), 0);
        assert!(b.exited(31) && !b.exited(34));
    }

    #[test]
    fn an_exit_completes_a_barrier_and_is_reported() {
        let (mut b, mut log) = block(3);
        b.arrive_barrier(0, 0, abi::bar::AND, true, at(7), &mut log);
        b.arrive_barrier(1, 1, abi::bar::AND, true, at(7), &mut log);
        b.exit_range(2, 3, &mut log);
        assert_eq!(b.threads.queues.runnable().len(), 2);
        assert_eq!(b.barrier.result(abi::bar::AND), 1);
        let r = log.into_reports();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].kind, HazardKind::BarrierDivergenceExit);
        assert_eq!(r[0].threads, vec![2]);
        assert!(r[0].operation.contains("k.cu:7"), "{}", r[0].operation);
    }

    #[test]
    fn a_shuffle_down_from_an_exited_lane_reads_zero() {
        let (mut b, mut log) = block(32);
        b.exit_range(31, 32, &mut log);
        for l in 0..31 {
            b.arrive_warp(l, l, abi::warp::SHFL_DOWN, u32::MAX, 100 + l as u64, 1, 32, abi::Site::UNKNOWN, &mut log);
        }
        assert_eq!(b.warp_result(30), (0, 0));
        assert_eq!(b.warp_result(29), (130, 1));
        assert_eq!(log.into_reports().len(), 1);
    }

    #[test]
    fn lanes_at_one_site_get_their_mask_once_the_rest_wait_elsewhere_or_exit() {
        let (mut b, mut log) = block(32);
        // Even lanes call activemask at line 5; odd lanes exit, except lane 1 which waits
        // in a barrier.
        for l in (0..32).step_by(2) {
            assert_eq!(b.arrive_activemask(l, l, at(5), &mut log), Arrival::Wait);
        }
        for l in (3..32).step_by(2) {
            b.exit_range(l, l + 1, &mut log);
        }
        assert!(b.threads.queues.runnable().is_empty(), "lane 1 has not arrived anywhere yet");
        assert_eq!(b.arrive_barrier(1, 1, abi::bar::SYNC, false, at(9), &mut log), Arrival::Wait);
        assert_eq!(b.threads.queues.runnable(), (0..32).step_by(2).collect::<Vec<u32>>().as_slice());
        assert_eq!(b.activemask_result(4), 0x5555_5555);
    }
}
