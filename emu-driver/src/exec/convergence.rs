//! Convergence: what `__activemask()` returns.
//!
//! On a device, `__activemask()` in a divergent branch returns the lanes of the warp that
//! execute that branch together, and real code builds on it (warp-aggregated atomics:
//! `m = __activemask(); leader = __ffs(m) - 1; ... __shfl_sync(m, base, leader)`). Here
//! the threads of a block run one after another on fibers, so "together" is modelled as
//! a warp-scoped rendezvous keyed by call site:
//!
//! - a lane calling `__activemask()` at site S waits until every other live lane of its
//!   warp has arrived at `__activemask()` at S, exited, or is waiting at some other
//!   rendezvous (a barrier, a warp collective, `__activemask()` at another site, or a
//!   `yield_now` spin);
//! - then every open `__activemask()` group of the warp completes at once, each lane
//!   getting the mask of the lanes that called at its site.
//!
//! Lanes that have not started, or that were released from a rendezvous and have not
//! run yet, are not waiting: the group waits for them to run up to their next
//! rendezvous or their exit. Lanes spin-waiting with `yield_now` count as waiting
//! elsewhere (they diverged).
//!
//! This gives the device's answer for the common shapes: converged code (all lanes at
//! S: the full mask of live lanes), one divergent branch (`if (cond) { __activemask(); }`:
//! the lanes with `cond`), if/else branches calling it at two sites (each side its
//! lanes), nested branches, loops whose trip count differs per lane (each iteration the
//! lanes still in the loop: a lane suspends at every call, so lanes stay in step), and
//! partial last warps (missing lanes count as exited).
//!
//! Limits of the model:
//! - the mask is the largest set a device could report; where the hardware would run a
//!   converged-looking region in several passes (sm_70+ does not promise reconvergence
//!   after a branch unless `__syncwarp` forces it), the device may return fewer lanes;
//! - lanes group by source call site (file and line, and column where the compiler
//!   gives one: GCC gives none), so two calls on one line in different branches are one
//!   site, and one call reached through different inlined callers (a helper function
//!   called from two branches) is one site too: on a device those would form two masks;
//! - a call site unknown to the library (line 0) is one shared site;
//! - `__activemask()` costs a suspension per lane (a rendezvous), not a register read.

use super::block::{site_key, Arrival, Block};
use super::hazard::HazardLog;
use super::warp_ops::{lanes, WARP};
use crate::abi;

/// Lanes of a warp that called `__activemask()` at one call site.
#[derive(Clone, Debug)]
pub(crate) struct ConvGroup {
    key: u64,
    pub site: abi::Site,
    pub members: u32,
}

impl Block {
    /// Thread `tid` (on fiber `fi`) calls `__activemask()` at `site`.
    pub fn arrive_activemask(&mut self, tid: u32, fi: u32, site: abi::Site, log: &mut HazardLog) -> Arrival {
        let wi = tid / WARP;
        let bit = 1u32 << (tid % WARP);
        let key = site_key(&site);
        let w = &mut self.warps[wi as usize];
        match w.conv.iter_mut().find(|g| g.key == key) {
            Some(g) => g.members |= bit,
            None => w.conv.push(ConvGroup { key, site, members: bit }),
        }
        if (self.waiting_lanes(wi) | self.warps[wi as usize].gone) == u32::MAX {
            let own = self.converge(wi, Some(tid));
            return Arrival::Done(own as u64, 0);
        }
        self.fiber_of[tid as usize] = fi;
        if self.warps[wi as usize].is_blocked() {
            self.retry_blocked(wi, log);
        }
        Arrival::Wait
    }

    /// Completes the warp's `__activemask()` groups when every live lane waits.
    pub(crate) fn maybe_converge(&mut self, wi: u32) {
        let w = &self.warps[wi as usize];
        if !w.conv.is_empty() && (self.waiting_lanes(wi) | w.gone) == u32::MAX {
            self.converge(wi, None);
        }
    }

    /// Every open group of warp `wi` completes: each member gets its group's mask.
    /// Returns the caller's mask.
    fn converge(&mut self, wi: u32, caller: Option<u32>) -> u32 {
        let base = wi * WARP;
        let groups = std::mem::take(&mut self.warps[wi as usize].conv);
        let mut own = 0;
        for g in &groups {
            let w = &mut self.warps[wi as usize];
            for lane in lanes(g.members) {
                w.lanes[lane as usize].result = g.members as u64;
            }
            for lane in lanes(g.members) {
                let tid = base + lane;
                if Some(tid) == caller {
                    own = g.members;
                } else {
                    self.queues.push_run(tid);
                }
            }
            self.completed.convergences += 1;
        }
        // Keep the vector's allocation.
        let mut groups = groups;
        groups.clear();
        self.warps[wi as usize].conv = groups;
        own
    }

    /// The mask a resumed `__activemask()` caller gets.
    pub fn activemask_result(&self, tid: u32) -> u32 {
        self.warps[(tid / WARP) as usize].lanes[(tid % WARP) as usize].result as u32
    }
}

#[cfg(test)]
mod tests {
    use crate::abi;
    use crate::exec::block::tests::block;
    use crate::exec::block::Arrival;

    fn at(line: u32) -> abi::Site {
        abi::Site { file: c"k.cu".as_ptr(), line, column: 0 }
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
        assert!(b.queues.runnable().is_empty(), "lane 1 has not arrived anywhere yet");
        assert_eq!(b.arrive_barrier(1, 1, abi::bar::SYNC, false, at(9), &mut log), Arrival::Wait);
        assert_eq!(b.queues.runnable(), (0..32).step_by(2).collect::<Vec<u32>>().as_slice());
        assert_eq!(b.activemask_result(4), 0x5555_5555);
    }

    #[test]
    fn two_sites_form_two_masks_and_the_last_caller_goes_on() {
        let (mut b, mut log) = block(8);
        for l in 0..7 {
            let site = if l < 3 { at(5) } else { at(7) };
            assert_eq!(b.arrive_activemask(l, l, site, &mut log), Arrival::Wait);
        }
        assert_eq!(b.arrive_activemask(7, 7, at(7), &mut log), Arrival::Done(0xf8, 0));
        assert_eq!(b.activemask_result(0), 0x07);
        assert_eq!(b.activemask_result(5), 0xf8);
    }
}
