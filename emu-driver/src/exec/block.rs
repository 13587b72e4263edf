//! Scheduling state of one thread block: who has exited, who waits at which rendezvous,
//! and when a rendezvous completes. Plain safe code with no fibers in it: the fiber
//! layer (`fiber.rs`) reports arrivals and exits here and resumes whatever this state
//! puts on the run queue.
//!
//! Semantics are those of sm_70 and later (independent thread scheduling):
//! - A block barrier completes when every thread that has not exited has arrived;
//!   exited threads count as arrived, and the call site does not matter.
//! - Warp collectives are matched by mask, not by call site: lanes that call with the
//!   same mask meet in one group, which completes once every lane of the mask has
//!   arrived or exited. Values are exchanged only then.
//! - Everything that breaks the programming guide's rules on the way (divergent
//!   barriers, exited or foreign lanes in masks, mismatched collectives) is reported as
//!   a hazard, and the block goes on as a device would.
//!
//! The state is initialised lazily ("slow mode") by the first runtime call of a block,
//! so a block whose threads never call the runtime costs nothing here.

use super::hazard::{format_threads, Detected, HazardKind, HazardLog};
use super::warp::{self, WARP};
use crate::abi;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// Not run yet, or part of a range that has not reached it yet.
    Pending,
    Running,
    AtBarrier,
    AtWarp,
    Exited,
}

/// What one CUDA thread is doing, and the operands / results of its rendezvous.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ThreadState {
    pub status: Status,
    /// The fiber the thread lives on once it has waited at least once.
    pub fiber: u32,
    pub op: u32,
    pub mask: u32,
    pub arg: i32,
    pub width: i32,
    /// Barrier predicate (0/1) or warp collective value.
    pub value: u64,
    /// Call-site id of the barrier (the library's hint, 0 = unknown).
    pub site: usize,
    pub result: u64,
    pub pred_out: i32,
}

const IDLE_THREAD: ThreadState = ThreadState {
    status: Status::Pending,
    fiber: u32::MAX,
    op: 0,
    mask: 0,
    arg: 0,
    width: 0,
    value: 0,
    site: 0,
    result: 0,
    pred_out: 0,
};

/// Outcome of an arrival at a rendezvous.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// The arrival completed the rendezvous: go on with this result, without waiting.
    Done(u64, i32),
    /// Suspend until the scheduler resumes this thread; the result is in its state.
    Wait,
    /// A hazard in error mode: the launch stops.
    Stop,
}

/// Lanes of one warp that meet in a collective with the same mask.
#[derive(Clone, Debug)]
struct Group {
    mask: u32,
    arrived: u32,
    op: u32,
    kind_reported: bool,
    exit_reported: bool,
}

#[derive(Clone, Debug, Default)]
struct WarpState {
    /// Lanes that exited, or do not exist (the last warp of a block whose size is not a
    /// multiple of 32).
    gone: u32,
    groups: Vec<Group>,
}

pub(crate) struct BlockState {
    pub n: u32,
    pub slow: bool,
    pub threads: Vec<ThreadState>,
    pub live: u32,
    bar_waiters: Vec<u32>,
    warps: Vec<WarpState>,
    /// Threads whose rendezvous completed, to be resumed in this order.
    pub runq: VecDeque<u32>,
    /// Ranges [first, end) of threads that have not started, to be run on a fiber.
    pub pending: Vec<(u32, u32)>,
    /// A hazard in error mode was recorded: the launch must stop.
    pub stop: bool,
    pub barriers_completed: u64,
    pub collectives_completed: u64,
}

impl BlockState {
    pub fn new() -> Self {
        BlockState {
            n: 0,
            slow: false,
            threads: Vec::new(),
            live: 0,
            bar_waiters: Vec::new(),
            warps: Vec::new(),
            runq: VecDeque::new(),
            pending: Vec::new(),
            stop: false,
            barriers_completed: 0,
            collectives_completed: 0,
        }
    }

    /// Starts a block of `n` threads. O(1): per-thread state is set up by `begin_slow`.
    pub fn reset(&mut self, n: u32) {
        self.n = n;
        self.slow = false;
        self.live = n;
        self.runq.clear();
        self.pending.clear();
        self.stop = false;
    }

    /// Sets up per-thread state at the block's first runtime call.
    pub fn begin_slow(&mut self) {
        if self.slow {
            return;
        }
        self.slow = true;
        let n = self.n as usize;
        self.threads.clear();
        self.threads.resize(n, IDLE_THREAD);
        self.live = self.n;
        self.bar_waiters.clear();
        let nw = n.div_ceil(WARP as usize);
        self.warps.truncate(nw);
        self.warps.resize(nw, WarpState::default());
        for (i, w) in self.warps.iter_mut().enumerate() {
            w.groups.clear();
            let lanes = (n - i * WARP as usize).min(WARP as usize) as u32;
            w.gone = if lanes == WARP { 0 } else { !((1u32 << lanes) - 1) };
        }
    }

    pub fn mark_running(&mut self, tid: u32, fiber: u32) {
        let t = &mut self.threads[tid as usize];
        t.status = Status::Running;
        t.fiber = fiber;
    }

    /// Threads [a, e) have finished. May complete rendezvous that waited for them.
    pub fn exit_range(&mut self, a: u32, e: u32, log: &mut HazardLog) {
        if a >= e {
            return;
        }
        for t in a..e {
            let ts = &mut self.threads[t as usize];
            debug_assert!(ts.status != Status::Exited);
            ts.status = Status::Exited;
            self.live -= 1;
            self.warps[(t / WARP) as usize].gone |= 1 << (t % WARP);
        }
        for wi in a / WARP..=(e - 1) / WARP {
            if self.warps[wi as usize].groups.is_empty() {
                continue;
            }
            let lo = a.max(wi * WARP) - wi * WARP;
            let hi = e.min(wi * WARP + WARP) - wi * WARP;
            let newly = lane_range_mask(lo, hi);
            self.lanes_gone(wi, newly, log);
        }
        if !self.bar_waiters.is_empty() && self.bar_waiters.len() as u32 == self.live {
            self.complete_barrier(None, log);
        }
    }

    // ---- block barrier ------------------------------------------------------------

    pub fn arrive_barrier(&mut self, tid: u32, op: u32, pred: i32, site: usize, log: &mut HazardLog) -> Arrival {
        let t = &mut self.threads[tid as usize];
        t.status = Status::AtBarrier;
        t.op = op;
        t.value = (pred != 0) as u64;
        t.site = site;
        self.bar_waiters.push(tid);
        if self.bar_waiters.len() as u32 == self.live {
            let r = self.complete_barrier(Some(tid), log);
            if self.stop {
                return Arrival::Stop;
            }
            return Arrival::Done(r, 0);
        }
        Arrival::Wait
    }

    /// Releases every waiter; returns the caller's result (when the caller completed it).
    fn complete_barrier(&mut self, caller: Option<u32>, log: &mut HazardLog) -> u64 {
        let waiters = std::mem::take(&mut self.bar_waiters);
        let site0 = self.threads[waiters[0] as usize].site;
        let mut count = 0u64;
        let mut mixed_sites = false;
        for &t in &waiters {
            let ts = &self.threads[t as usize];
            count += ts.value;
            // Sites are compared only where the library gave them (nonzero).
            mixed_sites |= ts.site != site0 && ts.site != 0 && site0 != 0;
        }
        let all = count == waiters.len() as u64;
        if self.live < self.n {
            self.report_barrier_exit(&waiters, site0, log);
        }
        if mixed_sites {
            self.report_barrier_sites(&waiters, site0, log);
        }
        let mut own = 0;
        for &t in &waiters {
            let ts = &mut self.threads[t as usize];
            ts.result = match ts.op {
                abi::bar::COUNT => count,
                abi::bar::AND => all as u64,
                abi::bar::OR => (count > 0) as u64,
                _ => 0,
            };
            ts.status = Status::Running;
            if Some(t) == caller {
                own = ts.result;
            } else {
                self.runq.push_back(t);
            }
        }
        self.bar_waiters = waiters;
        self.bar_waiters.clear();
        self.barriers_completed += 1;
        own
    }

    fn report_barrier_exit(&mut self, waiters: &[u32], site: usize, log: &mut HazardLog) {
        let exited: Vec<u32> =
            (0..self.n).filter(|&t| self.threads[t as usize].status == Status::Exited).collect();
        let op = self.threads[waiters[0] as usize].op;
        let d = Detected {
            kind: HazardKind::BarrierDivergenceExit,
            site: site as u64,
            operation: format!("{} (call site {})", warp::barrier_name(op), site),
            message: format!(
                "{} of {} threads reached this barrier; threads {} exited without reaching it. \
                 On sm_70+ exited threads count as arrived and the barrier completes, but the \
                 condition around a barrier must evaluate identically across the block",
                waiters.len(),
                self.n,
                format_threads(&exited)
            ),
            threads: exited,
        };
        self.stop |= log.record(d);
    }

    fn report_barrier_sites(&mut self, waiters: &[u32], site0: usize, log: &mut HazardLog) {
        let mut sites: Vec<usize> = waiters.iter().map(|&t| self.threads[t as usize].site).collect();
        sites.sort_unstable();
        sites.dedup();
        let mut parts = Vec::new();
        for s in &sites {
            let ts: Vec<u32> = waiters.iter().copied().filter(|&t| self.threads[t as usize].site == *s).collect();
            parts.push(format!("threads {} at call site {}", format_threads(&ts), s));
        }
        let mut others: Vec<u32> =
            waiters.iter().copied().filter(|&t| self.threads[t as usize].site != site0).collect();
        others.sort_unstable();
        let op = self.threads[waiters[0] as usize].op;
        let d = Detected {
            kind: HazardKind::BarrierDivergenceSite,
            site: sites.iter().fold(0u64, |h, &s| h.rotate_left(7) ^ s as u64),
            operation: format!("{} (call sites {})", warp::barrier_name(op), sites.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")),
            message: format!(
                "one barrier generation was reached from {} different call sites: {}. sm_70+ \
                 completes it, but the threads took different paths to their barrier",
                sites.len(),
                parts.join("; ")
            ),
            threads: others,
        };
        self.stop |= log.record(d);
    }

    // ---- warp collectives -----------------------------------------------------------

    /// `__activemask()`: lanes of the caller's warp that exist and have not exited.
    pub fn activemask(&self, tid: u32) -> u32 {
        !self.warps[(tid / WARP) as usize].gone
    }

    #[allow(clippy::too_many_arguments)]
    pub fn arrive_warp(
        &mut self,
        tid: u32,
        op: u32,
        mask: u32,
        value: u64,
        arg: i32,
        width: i32,
        log: &mut HazardLog,
    ) -> Arrival {
        let lane = tid % WARP;
        let wi = tid / WARP;
        let bit = 1u32 << lane;
        let mut mask = mask;
        if mask & bit == 0 {
            let d = Detected {
                kind: HazardKind::WarpCallerNotInMask,
                site: op as u64,
                threads: vec![tid],
                operation: format!("{}(mask={:#010x})", warp::op_name(op), mask),
                message: format!(
                    "thread {tid} (lane {lane} of warp {wi}) called a warp collective with a mask \
                     that does not name it; it takes part as if its lane were in the mask"
                ),
            };
            self.stop |= log.record(d);
            mask |= bit;
        }
        {
            let t = &mut self.threads[tid as usize];
            t.status = Status::AtWarp;
            t.op = op;
            t.mask = mask;
            t.value = value;
            t.arg = arg;
            t.width = width;
            t.pred_out = 0;
        }
        let gi = match self.warps[wi as usize].groups.iter().position(|g| g.mask == mask) {
            Some(i) => {
                let g = &self.warps[wi as usize].groups[i];
                if g.op != op && !g.kind_reported {
                    let first = g.op;
                    let d = Detected {
                        kind: HazardKind::WarpKindMismatch,
                        site: ((first as u64) << 32) | op as u64,
                        threads: vec![tid],
                        operation: format!("{} / {} (mask={:#010x})", warp::op_name(first), warp::op_name(op), mask),
                        message: format!(
                            "lanes of warp {wi} met in one collective over mask {mask:#010x} with \
                             different operations: {} and {} (thread {tid}); each lane gets the \
                             result of its own operation over the group's values",
                            warp::op_name(first),
                            warp::op_name(op)
                        ),
                    };
                    self.warps[wi as usize].groups[i].kind_reported = true;
                    self.stop |= log.record(d);
                }
                i
            }
            None => {
                // A mismatch is certain when a lane this mask names already waits in a
                // collective whose mask names the caller: each waits for the other.
                // (A waiting group that does not name the caller may still complete,
                // and its lanes come here later: divergent sub-warp collectives.)
                let overlapping: Vec<u32> = self.warps[wi as usize]
                    .groups
                    .iter()
                    .filter(|g| g.arrived & mask != 0 && g.mask & bit != 0)
                    .map(|g| g.mask)
                    .collect();
                if !overlapping.is_empty() {
                    let d = Detected {
                        kind: HazardKind::WarpMaskMismatch,
                        site: op as u64,
                        threads: vec![tid],
                        operation: format!("{}(mask={:#010x})", warp::op_name(op), mask),
                        message: format!(
                            "thread {tid} (warp {wi}) waits in a collective over mask {mask:#010x} \
                             while lanes it names wait for it in collectives over masks {}; \
                             the groups are kept apart",
                            overlapping.iter().map(|m| format!("{m:#010x}")).collect::<Vec<_>>().join(", ")
                        ),
                    };
                    self.stop |= log.record(d);
                }
                self.warps[wi as usize].groups.push(Group {
                    mask,
                    arrived: 0,
                    op,
                    kind_reported: false,
                    exit_reported: false,
                });
                self.warps[wi as usize].groups.len() - 1
            }
        };
        self.warps[wi as usize].groups[gi].arrived |= bit;
        let gone = self.warps[wi as usize].gone;
        if mask & gone != 0 && !self.warps[wi as usize].groups[gi].exit_reported {
            self.warps[wi as usize].groups[gi].exit_reported = true;
            self.report_exited_lanes(wi, mask, op, log);
        }
        if (self.warps[wi as usize].groups[gi].arrived | gone) & mask == mask {
            let (r, p) = self.resolve(wi, gi, Some(tid), log);
            if self.stop {
                return Arrival::Stop;
            }
            return Arrival::Done(r, p);
        }
        if self.stop {
            return Arrival::Stop;
        }
        Arrival::Wait
    }

    /// Lanes `newly` of warp `wi` have just exited: report them where a waiting group
    /// names them, and complete groups that now only waited for them.
    fn lanes_gone(&mut self, wi: u32, newly: u32, log: &mut HazardLog) {
        let mut i = 0;
        while i < self.warps[wi as usize].groups.len() {
            let g = self.warps[wi as usize].groups[i].clone();
            if g.mask & newly != 0 {
                if !g.exit_reported {
                    self.warps[wi as usize].groups[i].exit_reported = true;
                    self.report_exited_lanes(wi, g.mask, g.op, log);
                }
                if (g.arrived | self.warps[wi as usize].gone) & g.mask == g.mask {
                    self.resolve(wi, i, None, log);
                    continue; // resolve swapped the last group into slot i
                }
            }
            i += 1;
        }
    }

    fn report_exited_lanes(&mut self, wi: u32, mask: u32, op: u32, log: &mut HazardLog) {
        let gone = self.warps[wi as usize].gone & mask;
        let mut exited = Vec::new();
        let mut missing = Vec::new();
        for lane in lanes(gone) {
            let t = wi * WARP + lane;
            if t < self.n {
                exited.push(t);
            } else {
                missing.push(lane);
            }
        }
        let mut what = Vec::new();
        if !exited.is_empty() {
            what.push(format!("threads {} have exited", format_threads(&exited)));
        }
        if !missing.is_empty() {
            what.push(format!(
                "lanes {} do not exist (the block has {} threads)",
                format_threads(&missing),
                self.n
            ));
        }
        let d = Detected {
            kind: HazardKind::WarpLaneExited,
            site: op as u64,
            threads: exited,
            operation: format!("{}(mask={:#010x})", warp::op_name(op), mask),
            message: format!(
                "the mask of a collective in warp {wi} names lanes that cannot take part: {}; \
                 the collective completes without them and reads from them return the \
                 caller's own value",
                what.join(" and ")
            ),
        };
        self.stop |= log.record(d);
    }

    /// Completes group `gi` of warp `wi`: computes every arrived lane's result.
    fn resolve(&mut self, wi: u32, gi: usize, caller: Option<u32>, log: &mut HazardLog) -> (u64, i32) {
        let g = self.warps[wi as usize].groups.swap_remove(gi);
        let base = wi * WARP;
        let arrived = g.arrived;
        let mut vals = [0u64; WARP as usize];
        let mut ballot = 0u32;
        for lane in lanes(arrived) {
            let v = self.threads[(base + lane) as usize].value;
            vals[lane as usize] = v;
            if v != 0 {
                ballot |= 1 << lane;
            }
        }
        let mut own = (0, 0);
        for lane in lanes(arrived) {
            let tid = base + lane;
            let t = self.threads[tid as usize];
            let (result, pred) = match t.op {
                op if warp::is_shuffle(op) => match warp::shuffle_source(op, lane, t.arg, t.width) {
                    None => (t.value, 0),
                    Some(j) if j == lane => (t.value, 1),
                    Some(j) if g.mask & (1 << j) == 0 => {
                        let d = Detected {
                            kind: HazardKind::ShuffleSourceOutsideMask,
                            site: op as u64,
                            threads: vec![tid],
                            operation: format!("{}(mask={:#010x})", warp::op_name(op), g.mask),
                            message: format!(
                                "thread {tid} (lane {lane} of warp {wi}) reads lane {j}, which is \
                                 not in the mask; it gets its own value"
                            ),
                        };
                        self.stop |= log.record(d);
                        (t.value, 0)
                    }
                    Some(j) if arrived & (1 << j) == 0 => (t.value, 0),
                    Some(j) => (vals[j as usize], 1),
                },
                abi::warp::BALLOT => (ballot as u64, 0),
                abi::warp::ANY => ((ballot != 0) as u64, 0),
                abi::warp::ALL => ((ballot == arrived) as u64, 0),
                abi::warp::MATCH_ANY => {
                    let key = warp::match_key(t.value, t.arg);
                    let m = lanes(arrived)
                        .filter(|&l| warp::match_key(vals[l as usize], t.arg) == key)
                        .fold(0u32, |m, l| m | 1 << l);
                    (m as u64, 0)
                }
                abi::warp::MATCH_ALL => {
                    let key = warp::match_key(t.value, t.arg);
                    if lanes(arrived).all(|l| warp::match_key(vals[l as usize], t.arg) == key) {
                        (g.mask as u64, 1)
                    } else {
                        (0, 0)
                    }
                }
                op if (abi::warp::REDUCE_ADD..=abi::warp::REDUCE_XOR).contains(&op) => {
                    (warp::reduce(op, t.arg == 1, lanes(arrived).map(|l| vals[l as usize])), 0)
                }
                _ => (0, 0),
            };
            let ts = &mut self.threads[tid as usize];
            ts.result = result;
            ts.pred_out = pred;
            ts.status = Status::Running;
            if Some(tid) == caller {
                own = (result, pred);
            } else {
                self.runq.push_back(tid);
            }
        }
        self.collectives_completed += 1;
        own
    }

    // ---- deadlock ---------------------------------------------------------------------

    /// Describes a block in which every live thread waits and nothing can complete.
    pub fn deadlock_report(&self) -> Detected {
        let mut waiting: Vec<u32> = (0..self.n)
            .filter(|&t| matches!(self.threads[t as usize].status, Status::AtBarrier | Status::AtWarp))
            .collect();
        waiting.sort_unstable();
        let mut parts = Vec::new();
        if !self.bar_waiters.is_empty() {
            let mut ts = self.bar_waiters.clone();
            ts.sort_unstable();
            let mut sites: Vec<usize> = ts.iter().map(|&t| self.threads[t as usize].site).collect();
            sites.sort_unstable();
            sites.dedup();
            parts.push(format!(
                "threads {} wait at {} (call site {}): {} of {} live threads arrived",
                format_threads(&ts),
                warp::barrier_name(self.threads[ts[0] as usize].op),
                sites.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
                ts.len(),
                self.live
            ));
        }
        for (wi, w) in self.warps.iter().enumerate() {
            for g in &w.groups {
                let base = wi as u32 * WARP;
                let ts: Vec<u32> = lanes(g.arrived).map(|l| base + l).collect();
                let missing = g.mask & !g.arrived & !w.gone;
                let mut why = Vec::new();
                for l in lanes(missing) {
                    let t = base + l;
                    let st = &self.threads[t as usize];
                    why.push(match st.status {
                        Status::AtBarrier => format!("thread {t} waits at {}", warp::barrier_name(st.op)),
                        Status::AtWarp => format!(
                            "thread {t} waits in {}(mask={:#010x})",
                            warp::op_name(st.op),
                            st.mask
                        ),
                        _ => format!("thread {t} has not arrived"),
                    });
                }
                parts.push(format!(
                    "threads {} wait in {}(mask={:#010x}) of warp {wi} for lanes {} ({})",
                    format_threads(&ts),
                    warp::op_name(g.op),
                    g.mask,
                    format_threads(&lanes(missing).collect::<Vec<_>>()),
                    why.join(", ")
                ));
            }
        }
        Detected {
            kind: HazardKind::Deadlock,
            site: 0,
            operation: "rendezvous".into(),
            message: format!(
                "deadlock: all {} live threads of the block wait and no rendezvous can complete: {}",
                self.live,
                parts.join("; ")
            ),
            threads: waiting,
        }
    }
}

/// Bit mask of lanes [lo, hi).
fn lane_range_mask(lo: u32, hi: u32) -> u32 {
    let upto = |n: u32| if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
    upto(hi) & !upto(lo)
}

/// The set lanes of a mask, lowest first.
fn lanes(mut m: u32) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros();
            m &= m - 1;
            Some(l)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::hazard::HazardMode;

    fn block(n: u32) -> (BlockState, HazardLog) {
        let mut b = BlockState::new();
        b.reset(n);
        b.begin_slow();
        (b, HazardLog::new(HazardMode::Warn, "k"))
    }

    #[test]
    fn barrier_completes_when_the_last_live_thread_arrives() {
        let (mut b, mut log) = block(3);
        assert_eq!(b.arrive_barrier(0, abi::bar::COUNT, 1, 7, &mut log), Arrival::Wait);
        assert_eq!(b.arrive_barrier(1, abi::bar::COUNT, 0, 7, &mut log), Arrival::Wait);
        assert_eq!(b.arrive_barrier(2, abi::bar::COUNT, 1, 7, &mut log), Arrival::Done(2, 0));
        assert_eq!(b.runq.iter().copied().collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(b.threads[0].result, 2);
        assert!(log.reports.is_empty());
    }

    #[test]
    fn an_exit_completes_a_barrier_and_is_reported() {
        let (mut b, mut log) = block(3);
        b.arrive_barrier(0, abi::bar::AND, 1, 7, &mut log);
        b.arrive_barrier(1, abi::bar::AND, 1, 7, &mut log);
        b.exit_range(2, 3, &mut log);
        assert_eq!(b.runq.len(), 2);
        assert_eq!(b.threads[1].result, 1);
        assert_eq!(log.reports.len(), 1);
        assert_eq!(log.reports[0].kind, HazardKind::BarrierDivergenceExit);
        assert_eq!(log.reports[0].threads, vec![2]);
    }

    #[test]
    fn lane_masks() {
        assert_eq!(lane_range_mask(0, 32), u32::MAX);
        assert_eq!(lane_range_mask(3, 5), 0b11000);
        assert_eq!(lanes(0b1010).collect::<Vec<_>>(), vec![1, 3]);
    }

    #[test]
    fn partial_last_warp_has_missing_lanes_gone() {
        let (b, _) = block(40);
        assert_eq!(b.activemask(0), u32::MAX);
        assert_eq!(b.activemask(33), 0xff);
    }
}
