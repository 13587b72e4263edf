//! A block's thread table and the small types every rendezvous shares: how many
//! threads the block has, which have exited, the fiber each waits on, who runs next,
//! and what the block's rendezvous have done (completions, a stop). The rendezvous
//! kinds (`barrier`, `warp`, `convergence`) each keep their own state and read and
//! write this table; `block` puts them together.
//!
//! The table is initialised lazily ("slow mode") by the first runtime call of a block,
//! so a block whose threads never call the runtime costs nothing here.

use super::warp_ops::WARP;
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

/// `file:line:column` of a call site, or "unknown site".
pub(crate) fn site_text(site: &abi::Site) -> String {
    site.describe()
}

/// Where a preempted thread "yielded": no call site (it ran kernel code with no runtime
/// call for a time slice).
pub(crate) const PREEMPTED: abi::Site = abi::Site { file: std::ptr::null(), line: u32::MAX, column: u32::MAX };

/// A key for a call site; all unknown sites share one.
pub(crate) fn site_key(site: &abi::Site) -> u64 {
    if site.line == 0 {
        0
    } else {
        site.key()
    }
}

/// A run-queue entry: a thread and the fiber it resumes on, packed into one word
/// (`thread | fiber << 32`), so that taking the next thread to run needs no lookup of
/// its fiber.
pub(crate) type Entry = u64;

/// The run-queue entry of thread `t` suspended on fiber `fi`.
#[inline(always)]
pub(crate) fn entry(t: u32, fi: u32) -> Entry {
    t as u64 | (fi as u64) << 32
}

/// The thread of a run-queue entry.
#[inline(always)]
pub(crate) fn entry_thread(e: Entry) -> u32 {
    e as u32
}

/// The fiber of a run-queue entry.
#[inline(always)]
pub(crate) fn entry_fiber(e: Entry) -> u32 {
    (e >> 32) as u32
}

/// Who runs next. The run queue is FIFO: threads resume in the order their rendezvous
/// released them.
#[derive(Default)]
pub(crate) struct Queues {
    run: Vec<Entry>,
    head: usize,
    /// Ranges [first, end) of threads that have not started, to be run on a fiber,
    /// each packed into one word (`first | end << 32`): a range pushed by a thread
    /// that starts waiting is often popped right after, and one store and one load of
    /// the same width forward in the store buffer where two halves would stall.
    pending: Vec<u64>,
    /// Threads suspended by `yield_now`, and where they yielded; they run again once
    /// nothing else can.
    pub yielded: Vec<(u32, abi::Site)>,
}

impl Queues {
    #[inline]
    pub fn push_run(&mut self, e: Entry) {
        self.run.push(e);
    }

    #[inline]
    pub fn pop_run(&mut self) -> Option<Entry> {
        let t = *self.run.get(self.head)?;
        self.head += 1;
        if self.head == self.run.len() {
            self.run.clear();
            self.head = 0;
        }
        Some(t)
    }

    /// Threads [first, end) have not started yet.
    #[inline]
    pub fn push_pending(&mut self, first: u32, end: u32) {
        self.pending.push(first as u64 | (end as u64) << 32);
    }

    /// The most recently pushed range of threads that have not started.
    #[inline]
    pub fn pop_pending(&mut self) -> Option<(u32, u32)> {
        self.pending.pop().map(|r| (r as u32, (r >> 32) as u32))
    }

    /// Whether some range of threads has not started.
    #[inline]
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The ranges of threads that have not started.
    pub fn pending(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.pending.iter().map(|&r| (r as u32, (r >> 32) as u32))
    }

    /// Forgets the ranges of threads that have not started (tests play them).
    #[cfg(test)]
    pub fn clear_pending(&mut self) {
        self.pending.clear();
    }

    #[inline]
    pub fn peek_run(&self) -> Option<Entry> {
        self.run.get(self.head).copied()
    }

    /// The entry `k` places behind the head of the run queue, if there is one.
    #[inline]
    pub fn peek_run_at(&self, k: usize) -> Option<Entry> {
        self.run.get(self.head + k).copied()
    }

    pub fn run_is_empty(&self) -> bool {
        self.head == self.run.len()
    }

    /// Appends `threads` to the run queue, leaving `threads` empty (a swap when the
    /// queue is empty: releasing a whole barrier generation costs O(1)).
    pub fn append_run(&mut self, threads: &mut Vec<Entry>) {
        if self.run_is_empty() {
            self.run.clear();
            self.head = 0;
            std::mem::swap(&mut self.run, threads);
        } else {
            self.run.append(threads);
        }
    }

    /// The threads on the run queue.
    pub fn runnable(&self) -> Vec<u32> {
        self.run[self.head..].iter().map(|&e| entry_thread(e)).collect()
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

impl Completed {
    /// Rendezvous completed (yields are not: a thread that only yields makes no progress).
    pub fn total(&self) -> u64 {
        self.barriers + self.collectives + self.convergences
    }
}

/// The thread table of one block.
pub(crate) struct Threads {
    /// Threads in the block.
    pub n: u32,
    /// Set by the first runtime call of the block: per-thread state is valid.
    pub slow: bool,
    /// Threads that have not exited.
    pub live: u32,
    /// The fiber each thread runs on once it has waited at least once.
    pub fiber_of: Vec<u32>,
    /// Per warp, the lanes that exited or do not exist (the last warp of a block whose
    /// size is not a multiple of 32).
    pub gone: Vec<u32>,
    pub queues: Queues,
    /// A hazard in error mode was recorded: the launch must stop.
    pub stop: bool,
    /// Some warp of the block had an `__activemask()` group or a shuffle group blocked
    /// on lanes outside its mask (set when either appears, cleared only by the next
    /// block): until then a thread that starts waiting cannot complete anything in its
    /// warp, and `Block::start_waiting` skips looking.
    pub rare_waits: bool,
    /// A fault inside a chunk of vector lanes is being replayed: ranges run one thread
    /// at a time (`Worker::replay_lanes_fault`).
    pub lanes_one: bool,
    pub completed: Completed,
    /// Completed `__syncwarp` groups (warp, lanes) not yet seen by the shared-memory race
    /// detector (`race`); None, and nothing recorded, unless it is on.
    pub syncwarps: Option<Vec<(u32, u32)>>,
}

impl Threads {
    pub fn new() -> Self {
        Threads {
            n: 0,
            slow: false,
            live: 0,
            fiber_of: Vec::new(),
            gone: Vec::new(),
            queues: Queues::default(),
            stop: false,
            rare_waits: false,
            lanes_one: false,
            completed: Completed::default(),
            syncwarps: None,
        }
    }

    /// Starts a block of `n` threads, all in one pending range. O(1): per-thread state
    /// is set up by `begin_slow`.
    pub fn reset(&mut self, n: u32) {
        self.n = n;
        self.slow = false;
        self.live = n;
        self.queues.clear();
        self.queues.push_pending(0, n);
        self.stop = false;
        self.rare_waits = false;
        self.lanes_one = false;
    }

    /// Sets up per-thread state at the block's first runtime call. Returns the number
    /// of warps.
    pub fn begin_slow(&mut self) -> usize {
        self.slow = true;
        let n = self.n as usize;
        if self.fiber_of.len() < n {
            self.fiber_of.resize(n, u32::MAX);
        }
        self.live = self.n;
        let nw = n.div_ceil(WARP as usize);
        if self.gone.len() < nw {
            self.gone.resize(nw, 0);
        }
        for (i, g) in self.gone.iter_mut().take(nw).enumerate() {
            let lanes = (n - i * WARP as usize).min(WARP as usize) as u32;
            *g = if lanes == WARP { 0 } else { !((1u32 << lanes) - 1) };
        }
        nw
    }

    /// Thread `t`, suspended on its fiber (`fiber_of`), becomes runnable.
    #[inline(always)]
    pub fn release(&mut self, t: u32) {
        let fi = self.fiber_of[t as usize];
        self.queues.push_run(entry(t, fi));
    }

    /// Threads `ts` (`count` of them), suspended on their fibers, become runnable.
    #[inline]
    pub fn release_all(&mut self, count: usize, ts: impl Iterator<Item = u32>) {
        let fiber_of = &self.fiber_of;
        self.queues.run.reserve(count);
        self.queues.run.extend(ts.map(|t| entry(t, fiber_of[t as usize])));
    }

    /// Every yielded thread becomes runnable (nothing else could run), the most recent
    /// first: the thread that yielded last is the likeliest to find what it waits for
    /// (in a chain where each thread waits for the next, one round resolves it).
    pub fn resume_yielded(&mut self) {
        let ys = std::mem::take(&mut self.queues.yielded);
        for &(t, _) in ys.iter().rev() {
            self.release(t);
        }
        self.queues.yielded = ys;
        self.queues.yielded.clear();
    }

    /// Whether thread `tid` has exited.
    pub fn exited(&self, tid: u32) -> bool {
        self.gone[(tid / WARP) as usize] & (1 << (tid % WARP)) != 0
    }

    /// The threads that have exited, in order.
    pub fn exited_threads(&self) -> Vec<u32> {
        (0..self.n).filter(|&t| self.exited(t)).collect()
    }

    /// The lanes of warp `wi` suspended by `yield_now`.
    pub fn yielded_in(&self, wi: u32) -> u32 {
        self.queues.yielded.iter().fold(0, |m, &(t, _)| m | lane_bit_in(t, wi))
    }
}

/// The bit of thread `t` in warp `wi`'s lane masks (0 when `t` is in another warp).
#[inline]
pub(crate) fn lane_bit_in(t: u32, wi: u32) -> u32 {
    if t / WARP == wi {
        1u32 << (t % WARP)
    } else {
        0
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::exec::threads::{entry, entry_fiber, entry_thread, Queues, Threads};

    /// A block of `n` threads in slow mode, none started: the tests play the threads'
    /// arrivals themselves.
    pub(crate) fn threads(n: u32) -> Threads {
        let mut t = Threads::new();
        t.reset(n);
        t.begin_slow();
        t.queues.clear_pending();
        t
    }

    #[test]
    fn the_run_queue_is_fifo_and_takes_whole_generations() {
        let mut q = Queues::default();
        let mut gen = vec![entry(3, 30), entry(1, 10), entry(2, 20)];
        q.append_run(&mut gen);
        assert!(gen.is_empty());
        q.push_run(entry(9, 90));
        let mut more = vec![entry(4, 40)];
        q.append_run(&mut more);
        let got: Vec<u32> = std::iter::from_fn(|| q.pop_run())
            .map(|e| {
                assert_eq!(entry_fiber(e), entry_thread(e) * 10);
                entry_thread(e)
            })
            .collect();
        assert_eq!(got, vec![3, 1, 2, 9, 4]);
        assert!(q.run_is_empty());
    }
}
