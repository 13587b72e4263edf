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

use super::threads::{site_key, Arrival, Threads};
use super::warp::Warp;
use super::warp_ops::{lanes, WARP};
use crate::abi;

/// Lanes of a warp that called `__activemask()` at one call site.
#[derive(Clone, Debug)]
pub(crate) struct ConvGroup {
    key: u64,
    pub site: abi::Site,
    pub members: u32,
}

/// The open `__activemask()` groups of one warp. The rule needs to know which lanes
/// wait at other rendezvous (`elsewhere`: a warp collective, a block barrier, a
/// yield); the block tells.
#[derive(Clone, Default)]
pub(crate) struct Convergence {
    groups: Vec<ConvGroup>,
}

impl Convergence {
    pub fn reset(&mut self) {
        self.groups.clear();
    }

    /// Some lane waits in `__activemask()`.
    #[inline]
    pub fn is_open(&self) -> bool {
        !self.groups.is_empty()
    }

    /// The open groups.
    pub fn groups(&self) -> &[ConvGroup] {
        &self.groups
    }

    /// The lanes waiting in `__activemask()`.
    pub fn members(&self) -> u32 {
        self.groups.iter().fold(0, |m, g| m | g.members)
    }

    /// Thread `tid` calls `__activemask()` at `site`: `Done` with its mask when that
    /// completes its warp's groups, `Wait` when it must suspend (the block then
    /// records it as waiting). `w` is its warp (results go into its lane slots).
    pub fn arrive(&mut self, threads: &mut Threads, w: &mut Warp, tid: u32, site: abi::Site, elsewhere: u32) -> Arrival {
        let wi = tid / WARP;
        let bit = 1u32 << (tid % WARP);
        let key = site_key(&site);
        threads.rare_waits = true;
        match self.groups.iter_mut().find(|g| g.key == key) {
            Some(g) => g.members |= bit,
            None => self.groups.push(ConvGroup { key, site, members: bit }),
        }
        if (self.members() | elsewhere | threads.gone[wi as usize]) == u32::MAX {
            let own = self.converge(threads, w, wi, Some(tid));
            return Arrival::Done(own as u64, 0);
        }
        Arrival::Wait
    }

    /// Completes the groups of warp `wi` when every live lane waits.
    pub(crate) fn maybe_converge(&mut self, threads: &mut Threads, w: &mut Warp, wi: u32, elsewhere: u32) {
        if self.is_open() && (self.members() | elsewhere | threads.gone[wi as usize]) == u32::MAX {
            self.converge(threads, w, wi, None);
        }
    }

    /// Every open group of warp `wi` completes: each member gets its group's mask.
    /// Returns the caller's mask.
    fn converge(&mut self, threads: &mut Threads, w: &mut Warp, wi: u32, caller: Option<u32>) -> u32 {
        let base = wi * WARP;
        let mut own = 0;
        for g in &self.groups {
            for lane in lanes(g.members) {
                w.lanes[lane as usize].result = g.members as u64;
            }
            for lane in lanes(g.members) {
                let tid = base + lane;
                if Some(tid) == caller {
                    own = g.members;
                } else {
                    threads.release(tid);
                }
            }
            threads.completed.convergences += 1;
        }
        self.groups.clear();
        own
    }
}

#[cfg(test)]
mod tests {
    use crate::abi;
    use crate::exec::convergence::Convergence;
    use crate::exec::threads::tests::threads;
    use crate::exec::threads::Arrival;
    use crate::exec::warp::Warp;

    fn at(line: u32) -> abi::Site {
        abi::Site { file: c"k.cu".as_ptr(), line, column: 0 }
    }

    #[test]
    fn two_sites_form_two_masks_and_the_last_caller_goes_on() {
        let (mut t, mut w, mut c) = (threads(8), Warp::default(), Convergence::default());
        for l in 0..7 {
            let site = if l < 3 { at(5) } else { at(7) };
            assert_eq!(c.arrive(&mut t, &mut w, l, site, 0), Arrival::Wait);
        }
        assert_eq!(c.arrive(&mut t, &mut w, 7, at(7), 0), Arrival::Done(0xf8, 0));
        assert_eq!(w.lanes[0].result, 0x07);
        assert_eq!(w.lanes[5].result, 0xf8);
    }
}
