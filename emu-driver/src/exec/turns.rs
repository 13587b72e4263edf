//! Spinning blocks take turns on the cores. A block whose threads only spin (each
//! preempted or yielding with nothing of the block moving for a whole round) waits for
//! something another block, on another OS thread, does. Hundreds of such blocks (a
//! reverse chain, a grid-wide barrier: every block resident at once, as on the device)
//! are hundreds of OS threads; if each simply spins or sleeps a fixed time, the one
//! whose flag was just set waits behind all the others in the OS's run queue, and every
//! step of a chain costs a full round of them.
//!
//! So such a worker asks for a turn before it resumes its spinning threads again: at
//! most [`slots`] workers (the cores) hold one; the others wait, parked, first come
//! first served, and a turn ends at the holder's next round (handed straight to the
//! longest waiting worker). While others wait, a resumed spinner is preempted after a
//! short budget (`watchdog`), so a round costs tens of microseconds and the waiter
//! whose flag was set is reached within one pass over the waiting blocks. Without
//! contention a turn is taken and given back with a lock and nothing waits.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// The process's turns.
struct Turns {
    state: Mutex<State>,
    /// Workers waiting for a turn (read without the lock).
    waiting: AtomicUsize,
}

struct State {
    /// Turns nobody holds.
    free: usize,
    /// Waiting workers, longest waiting first.
    queue: VecDeque<Arc<Waiter>>,
}

struct Waiter {
    thread: Thread,
    /// Set (under the lock) when a turn is handed to it.
    granted: AtomicBool,
}

/// A turn held by this worker: dropping it hands it on.
pub(crate) struct Turn(());

impl Drop for Turn {
    fn drop(&mut self) {
        let t = turns();
        let mut s = t.state.lock().unwrap_or_else(|e| e.into_inner());
        match s.queue.pop_front() {
            Some(w) => {
                t.waiting.fetch_sub(1, Relaxed);
                w.granted.store(true, Release);
                w.thread.unpark();
            }
            None => s.free += 1,
        }
    }
}

/// How many workers may resume spinning threads at once: the cores this process may
/// use.
pub(crate) fn slots() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn turns() -> &'static Turns {
    static T: OnceLock<Turns> = OnceLock::new();
    T.get_or_init(|| Turns { state: Mutex::new(State { free: slots(), queue: VecDeque::new() }), waiting: AtomicUsize::new(0) })
}

/// Whether workers wait for a turn now.
pub(crate) fn contended() -> bool {
    turns().waiting.load(Relaxed) > 0
}

/// Takes a turn, waiting (parked) behind the workers that asked before. None when
/// `give_up` says so (the launch timed out; checked every 100 ms: hundreds of waiters
/// waking every few milliseconds would take the processor from the holders) or after
/// `patience` (a holder that never hands its turn on, such as a thread spinning in code
/// that cannot be preempted, must not stop the others for good): the caller then goes
/// on without one.
pub(crate) fn take(patience: Duration, give_up: impl Fn() -> bool) -> Option<Turn> {
    let t = turns();
    let me = {
        let mut s = t.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.free > 0 && s.queue.is_empty() {
            s.free -= 1;
            return Some(Turn(()));
        }
        let me = Arc::new(Waiter { thread: std::thread::current(), granted: AtomicBool::new(false) });
        s.queue.push_back(me.clone());
        t.waiting.fetch_add(1, Relaxed);
        me
    };
    let until = Instant::now() + patience;
    loop {
        if me.granted.load(Acquire) {
            return Some(Turn(()));
        }
        let now = Instant::now();
        if now >= until || give_up() {
            let mut s = t.state.lock().unwrap_or_else(|e| e.into_inner());
            if me.granted.load(Acquire) {
                return Some(Turn(()));
            }
            s.queue.retain(|w| !Arc::ptr_eq(w, &me));
            t.waiting.fetch_sub(1, Relaxed);
            return None;
        }
        std::thread::park_timeout((until - now).min(Duration::from_millis(100)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_are_handed_on_first_come_first_served_and_waiting_gives_up() {
        // Hold every turn, then queue two waiters: releasing one turn reaches the first.
        let held: Vec<Turn> = (0..slots()).map(|_| take(Duration::from_secs(5), || false).expect("a free turn")).collect();
        assert!(take(Duration::from_millis(20), || false).is_none(), "no turn is free: waiting gives up");
        assert!(take(Duration::from_secs(5), || true).is_none(), "give_up ends the wait");
        let order = Arc::new(Mutex::new(Vec::new()));
        let spawn = |i: u32| {
            let order = order.clone();
            std::thread::spawn(move || {
                let t = take(Duration::from_secs(20), || false).expect("handed a turn");
                order.lock().unwrap().push(i);
                drop(t);
            })
        };
        let a = spawn(1);
        while turns().waiting.load(Relaxed) < 1 {
            std::thread::yield_now();
        }
        let b = spawn(2);
        while turns().waiting.load(Relaxed) < 2 {
            std::thread::yield_now();
        }
        assert!(contended());
        // One turn freed: the first waiter gets it and hands it to the second.
        let mut held = held;
        drop(held.pop());
        a.join().unwrap();
        b.join().unwrap();
        drop(held);
        assert_eq!(*order.lock().unwrap(), vec![1, 2]);
        assert!(!contended());
    }
}
