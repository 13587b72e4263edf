//! Deadlock detection and "where is every thread" reports.
//!
//! A deadlock is structural: the scheduler has nothing to run (no runnable thread, no
//! pending range, no yielded thread) while live threads remain, so every one of them
//! waits at a rendezvous that cannot complete. `__activemask()` groups never deadlock
//! (they complete as soon as every live lane of their warp waits), so what remains is a
//! barrier generation and warp collectives waiting for each other. The report says who
//! waits where and what each collective still waits for.
//!
//! The same survey describes a block stopped by the watchdog (no progress): which
//! threads spin, wait, have not started or are runnable.

use super::block::Block;
use super::hazard::{format_threads, Detected, HazardKind};
use super::threads::{site_text, PREEMPTED};
use super::warp_ops::{barrier_name, lanes, op_name, WARP};
use crate::abi;

/// Describes a block in which every live thread waits and nothing can complete.
pub(crate) fn report(b: &Block) -> Detected {
    let mut parts = Vec::new();
    if b.barrier.waiting() > 0 {
        let mut ts = b.barrier.waiters();
        ts.sort_unstable();
        let (op, _) = b.barrier.first();
        let sites: Vec<String> = b.barrier.sites().iter().map(|(s, _)| site_text(s)).collect();
        parts.push(format!(
            "threads {} wait at {} (call site {}): {} of {} live threads arrived",
            format_threads(&ts),
            barrier_name(op),
            sites.join(", "),
            ts.len(),
            b.threads.live
        ));
    }
    for (wi, w) in b.warps.iter().enumerate().take(b.threads.n.div_ceil(WARP) as usize) {
        let base = wi as u32 * WARP;
        for g in w.collectives.groups() {
            let ts: Vec<u32> = lanes(g.arrived).map(|l| base + l).collect();
            let missing = g.mask & !g.arrived & !b.threads.gone[wi];
            let why: Vec<String> = lanes(missing).map(|l| what_blocks(b, base + l)).collect();
            parts.push(format!(
                "threads {} wait in {}(mask={:#010x}) of warp {wi} for lanes {} ({}), called at {}",
                format_threads(&ts),
                op_name(g.op),
                g.mask,
                format_threads(&lanes(missing).collect::<Vec<_>>()),
                why.join(", "),
                site_text(&g.site)
            ));
        }
    }
    let waiting: Vec<u32> = (0..b.threads.n).filter(|&t| !b.exited(t)).collect();
    Detected {
        kind: HazardKind::Deadlock,
        key: 0,
        operation: "rendezvous".into(),
        message: format!(
            "deadlock: all {} live threads of the block wait and no rendezvous can complete: {}",
            b.threads.live,
            parts.join("; ")
        ),
        threads: waiting,
    }
}

/// Why thread `t` is not at a collective that waits for it.
fn what_blocks(b: &Block, t: u32) -> String {
    if b.barrier.waiters().contains(&t) {
        return format!("thread {t} waits at {}", barrier_name(b.barrier.first().0));
    }
    let w = &b.warps[(t / WARP) as usize].collectives;
    if let Some(g) = w.group_of(t % WARP) {
        return format!("thread {t} waits in {}(mask={:#010x})", op_name(g.op), g.mask);
    }
    format!("thread {t} has not arrived")
}

/// Where every live thread of the block is, grouped ("threads 0-31 wait at
/// __syncthreads (call site k.cu:12:0)"), for timeout reports. `running` is the thread
/// that was running when the launch was stopped, with what it was doing.
pub(crate) fn survey(b: &Block, running: Option<(u32, String)>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some((t, at)) = &running {
        out.push(format!("thread {t} {at}"));
    }
    let skip = |t: u32| running.as_ref().is_some_and(|(r, _)| *r == t);
    let mut ys: Vec<(abi::Site, Vec<u32>)> = Vec::new();
    for &(t, s) in &b.threads.queues.yielded {
        match ys.iter_mut().find(|(k, _)| *k == s) {
            Some((_, ts)) => ts.push(t),
            None => ys.push((s, vec![t])),
        }
    }
    for (s, mut ts) in ys {
        ts.sort_unstable();
        if s == PREEMPTED {
            out.push(format!("threads {} spin in kernel code with no runtime call (preempted at every time slice)", format_threads(&ts)));
        } else {
            out.push(format!("threads {} spin (yield) at {}", format_threads(&ts), site_text(&s)));
        }
    }
    for (s, mut ts) in b.barrier.sites() {
        ts.sort_unstable();
        out.push(format!("threads {} wait at {} (call site {})", format_threads(&ts), barrier_name(b.barrier.first().0), site_text(&s)));
    }
    for (wi, w) in b.warps.iter().enumerate().take(b.threads.n.div_ceil(WARP) as usize) {
        let base = wi as u32 * WARP;
        for g in w.collectives.groups() {
            let ts: Vec<u32> = lanes(g.arrived).map(|l| base + l).collect();
            out.push(format!("threads {} wait in {}(mask={:#010x}) at {}", format_threads(&ts), op_name(g.op), g.mask, site_text(&g.site)));
        }
        for g in w.convergence.groups() {
            let ts: Vec<u32> = lanes(g.members).map(|l| base + l).collect();
            out.push(format!("threads {} wait in __activemask at {}", format_threads(&ts), site_text(&g.site)));
        }
    }
    let mut runnable: Vec<u32> = b.threads.queues.runnable().iter().copied().filter(|&t| !skip(t)).collect();
    runnable.sort_unstable();
    if !runnable.is_empty() {
        out.push(format!("threads {} are runnable", format_threads(&runnable)));
    }
    let mut unstarted: Vec<u32> = b.threads.queues.pending().flat_map(|(a, e)| a..e).filter(|&t| !skip(t)).collect();
    unstarted.sort_unstable();
    if !unstarted.is_empty() {
        out.push(format!("threads {} have not started", format_threads(&unstarted)));
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::abi;
    use crate::exec::block::tests::block;
    use crate::exec::deadlock::{report, survey};

    #[test]
    fn a_barrier_and_a_collective_waiting_for_each_other_are_described() {
        let (mut b, mut log) = block(2);
        b.arrive_warp(0, 0, abi::warp::SYNC, 0x3, 0, 0, 32, abi::Site::UNKNOWN, &mut log);
        b.arrive_barrier(1, 1, abi::bar::SYNC, false, abi::Site::UNKNOWN, &mut log);
        let d = report(&b);
        assert!(
            d.message.contains("threads 1 wait at __syncthreads (call site unknown site): 1 of 2 live threads arrived"),
            "{}",
            d.message
        );
        assert!(
            d.message.contains("threads 0 wait in __syncwarp(mask=0x00000003) of warp 0 for lanes 1 (thread 1 waits at __syncthreads)"),
            "{}",
            d.message
        );
        assert_eq!(d.threads, vec![0, 1]);
        let s = survey(&b, None);
        assert_eq!(s.len(), 2, "{s:?}");
    }
}
