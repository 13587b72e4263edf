//! What the device gives where CUDA leaves a warp collective's result undefined: a lane
//! reads from a lane that cannot take part (exited, outside the mask, not arriving).
//! The programming guide calls these reads undefined; the hardware is deterministic,
//! and real programs (reduction tails, partial warps) depend on what it does, so the
//! executor returns what an H200 returned when measured, and still reports each
//! occurrence as a hazard (`EMU_CUDA_HAZARDS=error` fails the launch on it).
//!
//! Every such value is decided here, one function per family, with its source: the
//! `devres_warp_*` lines of the H200 conformance table (driver 580.159.04, CUDA 13.0,
//! sm_90; kernels in emu-driver/conformance/kernels/conformance.cu):
//! - `warp_exited` (lanes 16-31 returned, lanes 0-15 call with the full mask): every
//!   shuffle (idx, up, down, xor) reading an exited lane gives 0; a source out of the
//!   segment gives the caller's own value (PTX defines that); ballot, any, all, reduce
//!   and match cover the live lanes only (`__match_all_sync` returns those lanes, not the
//!   mask); `__activemask` gives the live lanes. (A real
//!   extractor's scores drifted by 3.5e-3 when exited reads returned the caller's value.)
//! - `warp_halves` (every lane converged, each with the mask of its parity, reading a
//!   lane of the other parity): the device returns the source lane's value; votes,
//!   reductions and matches are per mask. The executor gives converged lanes that value
//!   (see `warp`); a lane outside the mask that is not at the same shuffle (waiting at a
//!   barrier: `warp_waiting`, where the device hangs) or has exited while outside the
//!   mask was not measured: the caller's own value.

use crate::abi;

/// Why the lane a shuffle reads from cannot supply its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Absent {
    /// Named in the mask, but exited (or beyond the end of a partial last warp).
    Exited,
    /// Not named in the mask, and exited or nonexistent.
    OutsideMaskExited,
    /// Not named in the mask and alive (it does not take part in this collective).
    OutsideMaskAlive,
}

/// What a lane gets instead of a value it cannot read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fill {
    /// The calling lane's own operand.
    Own,
    /// All bits zero.
    Zero,
}

impl Fill {
    pub fn value(self, own: u64) -> u64 {
        match self {
            Fill::Own => own,
            Fill::Zero => 0,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Fill::Own => "the caller's own value",
            Fill::Zero => "0",
        }
    }
}

/// What a `__shfl*_sync` of kind `op` returns when its source lane is absent.
pub(crate) fn shuffle_fill(op: u32, why: Absent) -> Fill {
    match (op, why) {
        // Measured (warp_exited): idx, up, down and xor reading an exited lane gave 0.
        (abi::warp::SHFL_IDX..=abi::warp::SHFL_XOR, Absent::Exited) => Fill::Zero,
        // Not measured.
        _ => Fill::Own,
    }
}

/// The lanes whose operands a vote (`__ballot/__any/__all_sync`), a `__match_*_sync`
/// or a `__reduce_*_sync` counts: those that arrived. Lanes of the mask that exited
/// contribute nothing (a ballot bit of 0; `__all_sync` is over the arrived lanes).
pub(crate) fn contributing_lanes(arrived: u32, _mask: u32) -> u32 {
    arrived
}

/// The mask `__match_all_sync` returns when every contributing value is equal: the
/// lanes that contributed, not the mask as the caller gave it. Measured
/// (`devres_warp_{exited,partial,halves}_match_all`, GH100, driver 580.159.04): with the
/// full mask, lanes 16-31 exited gave 0x0000ffff, a 10-thread block 0x000003ff (numba's
/// test_match_all_sync expects the same); each parity group of `halves` its own lanes.
pub(crate) fn match_all_mask(mask: u32, arrived: u32) -> u32 {
    mask & contributing_lanes(arrived, mask)
}

/// One line for reports: what reads from exited lanes named in a mask give.
pub(crate) fn exited_read_note(op: u32) -> String {
    if super::warp_ops::is_shuffle(op) {
        format!("shuffle reads from them return {} (as the device does)", shuffle_fill(op, Absent::Exited).describe())
    } else {
        "they contribute nothing to the result".to_string()
    }
}

#[cfg(test)]
mod tests {
    use crate::exec::device_defined::*;

    #[test]
    fn the_measured_case_and_the_default() {
        for op in abi::warp::SHFL_IDX..=abi::warp::SHFL_XOR {
            assert_eq!(shuffle_fill(op, Absent::Exited), Fill::Zero);
        }
        assert_eq!(shuffle_fill(abi::warp::SHFL_DOWN, Absent::OutsideMaskAlive), Fill::Own);
        assert_eq!(Fill::Zero.value(7), 0);
        assert_eq!(Fill::Own.value(7), 7);
    }

    #[test]
    fn match_all_returns_the_lanes_that_took_part() {
        // devres_warp_partial_match_all and devres_warp_exited_match_all (GH100).
        assert_eq!(match_all_mask(u32::MAX, 0x3ff), 0x3ff);
        assert_eq!(match_all_mask(u32::MAX, 0xffff), 0xffff);
        assert_eq!(match_all_mask(0x5555_5555, 0x5555_5555), 0x5555_5555);
    }
}
