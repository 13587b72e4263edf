//! PTX mode's loop path, the executor's side. A kernel that simtwin-ptx's `uniform`
//! pass proved barrier-uniform runs its whole block in one range run on one fiber: the
//! library's loop runner runs the code between two barriers for every live thread in
//! turn (no fiber each, no switch) and tells the executor when a barrier completes,
//! through the runtime entry `block_barrier`. What the executor does then is what a
//! completing barrier does on fibers: counts it, and reports the threads that exited
//! before it (`barrier-divergence-exit`, the same text and key as `barrier`), stopping
//! the launch in error mode.
//!
//! Everything else is unchanged: runtime entries called from the loop runner find the
//! thread in the context's `linear_tid` as in any range run; a trap or a fault ends the
//! fiber as it would a thread's.

use super::barrier::report_exit;
use super::scheduler::Worker;
use super::warp::report_exited_lanes;
use crate::abi;

impl Worker {
    /// A loop-path warp collective (op `op` at `site` over `mask`) of warp `wi`
    /// completed without its lanes `gone`, which had exited: the `warp-lane-exited`
    /// hazard as a fiber's collective reports it. True when the launch stops.
    pub(crate) fn loop_warp_exited(&mut self, op: u32, site: abi::Site, mask: u32, wi: u32, gone: u32) -> bool {
        let stop = report_exited_lanes(self.block.threads.n, wi, gone & mask, mask, op, site, &mut self.log);
        self.block.threads.stop |= stop;
        stop
    }

    /// A loop-path barrier (op `op` at `site`) completed with `arrived` threads, after
    /// the threads of `exited` exited. True when the launch stops.
    pub(crate) fn loop_barrier(&mut self, op: u32, site: abi::Site, arrived: u32, exited: &[u32]) -> bool {
        let threads = &mut self.block.threads;
        threads.completed.barriers += 1;
        if exited.is_empty() {
            return false;
        }
        let n = threads.n;
        let stop = report_exit(
            op,
            &site,
            arrived as u64,
            n,
            || {
                let mut e = exited.to_vec();
                e.sort_unstable();
                e
            },
            &mut self.log,
        );
        self.block.threads.stop |= stop;
        stop
    }
}
