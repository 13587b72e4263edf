//! The arithmetic of warp collectives, separate from matching and scheduling: given who
//! arrived with which value, what each lane gets back. Shuffle lane selection follows the PTX
//! `shfl.sync` definition (5-bit lane operand, segment mask and clamp derived from
//! `width` the way the CUDA intrinsics encode it), which is what makes the documented
//! corner cases come out right: `__shfl_up_sync` does not wrap inside a segment,
//! `__shfl_xor_sync` may read an earlier segment but not a later one, and an
//! out-of-range source returns the caller's own value.

use crate::abi;

/// Warp width in lanes.
pub(crate) const WARP: u32 = 32;

/// `width` as the shuffle intrinsics use it: a power of two in 1..=32, anything else 32.
pub(crate) fn normalize_width(width: i32) -> u32 {
    if width > 0 && width <= 32 && (width as u32).is_power_of_two() {
        width as u32
    } else {
        WARP
    }
}

/// The lane a shuffle reads from, or None when the computed lane is out of range (the
/// caller then keeps its own value).
#[inline]
pub(crate) fn shuffle_source(op: u32, lane: u32, arg: i32, width: i32) -> Option<u32> {
    ShuffleMap::new(op, arg, width).source(lane)
}

/// A shuffle's lane mapping with its operand and width decoded once.
#[derive(Clone, Copy)]
pub(crate) struct ShuffleMap {
    op: u32,
    /// The 5-bit lane operand.
    b: u32,
    /// The segment width (a power of two).
    w: u32,
}

impl ShuffleMap {
    #[inline(always)]
    pub fn new(op: u32, arg: i32, width: i32) -> Self {
        ShuffleMap { op, b: (arg as u32) & (WARP - 1), w: normalize_width(width) }
    }

    #[inline(always)]
    pub fn source(&self, lane: u32) -> Option<u32> {
        match self.op {
            abi::warp::SHFL_IDX => self.source_idx(lane),
            abi::warp::SHFL_UP => self.source_up(lane),
            abi::warp::SHFL_DOWN => self.source_down(lane),
            abi::warp::SHFL_XOR => self.source_xor(lane),
            _ => None,
        }
    }

    /// The shuffle op this map is for.
    #[inline(always)]
    pub fn op(&self) -> u32 {
        self.op
    }

    /// Whether the segment is the whole warp (width 32, the common case).
    #[inline(always)]
    pub fn whole_warp(&self) -> bool {
        self.w == WARP
    }

    /// This map with the segment width known to be the whole warp (a constant the
    /// compiler folds into `source_*`).
    #[inline(always)]
    pub fn with_whole_warp(&self) -> Self {
        ShuffleMap { op: self.op, b: self.b, w: WARP }
    }

    #[inline(always)]
    fn seg_start(&self, lane: u32) -> u32 {
        lane & !(self.w - 1)
    }

    /// `__shfl_sync`: lane `b` of the caller's segment.
    #[inline(always)]
    pub fn source_idx(&self, lane: u32) -> Option<u32> {
        Some(self.seg_start(lane) | (self.b & (self.w - 1)))
    }

    /// `__shfl_up_sync`: `b` lanes below, not below the segment's start.
    #[inline(always)]
    pub fn source_up(&self, lane: u32) -> Option<u32> {
        let j = lane as i32 - self.b as i32;
        (j >= self.seg_start(lane) as i32).then_some(j as u32)
    }

    /// `__shfl_down_sync`: `b` lanes above, not past the segment's end.
    #[inline(always)]
    pub fn source_down(&self, lane: u32) -> Option<u32> {
        let j = lane + self.b;
        (j < self.seg_start(lane) + self.w).then_some(j)
    }

    /// `__shfl_xor_sync`: the lane `lane ^ b`, not past the segment's end.
    #[inline(always)]
    pub fn source_xor(&self, lane: u32) -> Option<u32> {
        let j = lane ^ self.b;
        (j < self.seg_start(lane) + self.w).then_some(j)
    }
}

/// The four `__shfl*_sync` ops.
pub(crate) fn is_shuffle(op: u32) -> bool {
    op <= abi::warp::SHFL_XOR
}

/// An op this executor implements.
pub(crate) fn is_known(op: u32) -> bool {
    op <= abi::warp::SYNC
}

/// `__reduce_*_sync` over 32-bit values; `signed` selects the int forms of min/max
/// (add, and, or, xor are the same bits either way). Result in the low 32 bits.
pub(crate) fn reduce(op: u32, signed: bool, values: impl Iterator<Item = u64>) -> u64 {
    let vals = values.map(|v| v as u32);
    let r = match op {
        abi::warp::REDUCE_ADD => vals.fold(0u32, |a, v| a.wrapping_add(v)),
        abi::warp::REDUCE_MIN if signed => vals.map(|v| v as i32).fold(i32::MAX, i32::min) as u32,
        abi::warp::REDUCE_MIN => vals.fold(u32::MAX, u32::min),
        abi::warp::REDUCE_MAX if signed => vals.map(|v| v as i32).fold(i32::MIN, i32::max) as u32,
        abi::warp::REDUCE_MAX => vals.fold(0, u32::max),
        abi::warp::REDUCE_AND => vals.fold(u32::MAX, |a, v| a & v),
        abi::warp::REDUCE_OR => vals.fold(0, |a, v| a | v),
        abi::warp::REDUCE_XOR => vals.fold(0, |a, v| a ^ v),
        _ => 0,
    };
    r as u64
}

/// The key a match collective compares: 32 or 64 bits (`arg` = size in bytes).
pub(crate) fn match_key(value: u64, arg: i32) -> u64 {
    if arg == 4 {
        value & 0xffff_ffff
    } else {
        value
    }
}

/// Human name of a warp op for reports.
pub(crate) fn op_name(op: u32) -> &'static str {
    match op {
        abi::warp::SHFL_IDX => "__shfl_sync",
        abi::warp::SHFL_UP => "__shfl_up_sync",
        abi::warp::SHFL_DOWN => "__shfl_down_sync",
        abi::warp::SHFL_XOR => "__shfl_xor_sync",
        abi::warp::BALLOT => "__ballot_sync",
        abi::warp::ANY => "__any_sync",
        abi::warp::ALL => "__all_sync",
        abi::warp::MATCH_ANY => "__match_any_sync",
        abi::warp::MATCH_ALL => "__match_all_sync",
        abi::warp::REDUCE_ADD => "__reduce_add_sync",
        abi::warp::REDUCE_MIN => "__reduce_min_sync",
        abi::warp::REDUCE_MAX => "__reduce_max_sync",
        abi::warp::REDUCE_AND => "__reduce_and_sync",
        abi::warp::REDUCE_OR => "__reduce_or_sync",
        abi::warp::REDUCE_XOR => "__reduce_xor_sync",
        abi::warp::SYNC => "__syncwarp",
        _ => "unknown warp op",
    }
}

/// Human name of a barrier op for reports.
pub(crate) fn barrier_name(op: u32) -> &'static str {
    match op {
        abi::bar::SYNC => "__syncthreads",
        abi::bar::COUNT => "__syncthreads_count",
        abi::bar::AND => "__syncthreads_and",
        abi::bar::OR => "__syncthreads_or",
        _ => "unknown barrier op",
    }
}

/// Bit mask of lanes [lo, hi).
pub(crate) fn lane_range_mask(lo: u32, hi: u32) -> u32 {
    let upto = |n: u32| if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
    upto(hi) & !upto(lo)
}

/// The set lanes of a mask, lowest first.
pub(crate) fn lanes(mut m: u32) -> impl Iterator<Item = u32> {
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
    use crate::abi::*;
    use crate::exec::warp_ops::*;

    #[test]
    fn shuffle_sources_follow_the_documented_corner_cases() {
        // idx wraps modulo width inside the caller's segment.
        assert_eq!(shuffle_source(warp::SHFL_IDX, 13, 3, 8), Some(11));
        assert_eq!(shuffle_source(warp::SHFL_IDX, 13, 11, 8), Some(11));
        assert_eq!(shuffle_source(warp::SHFL_IDX, 5, -1, 32), Some(31));
        // up does not wrap below the segment start.
        assert_eq!(shuffle_source(warp::SHFL_UP, 9, 2, 8), None);
        assert_eq!(shuffle_source(warp::SHFL_UP, 10, 2, 8), Some(8));
        // down does not cross the segment end.
        assert_eq!(shuffle_source(warp::SHFL_DOWN, 6, 2, 8), None);
        assert_eq!(shuffle_source(warp::SHFL_DOWN, 5, 2, 8), Some(7));
        // xor may reach an earlier segment, not a later one.
        assert_eq!(shuffle_source(warp::SHFL_XOR, 9, 8, 8), Some(1));
        assert_eq!(shuffle_source(warp::SHFL_XOR, 1, 8, 8), None);
        // a bad width is 32.
        assert_eq!(shuffle_source(warp::SHFL_DOWN, 6, 2, 12), Some(8));
    }

    #[test]
    fn lane_masks() {
        assert_eq!(lane_range_mask(0, 32), u32::MAX);
        assert_eq!(lane_range_mask(3, 5), 0b11000);
        assert_eq!(lanes(0b1010).collect::<Vec<_>>(), vec![1, 3]);
    }

    #[test]
    fn reductions_distinguish_signedness() {
        let v = [5u64, (-3i32) as u32 as u64, 7];
        assert_eq!(reduce(warp::REDUCE_MIN, true, v.iter().copied()), (-3i32) as u32 as u64);
        assert_eq!(reduce(warp::REDUCE_MIN, false, v.iter().copied()), 5);
        assert_eq!(reduce(warp::REDUCE_MAX, true, v.iter().copied()), 7);
        assert_eq!(reduce(warp::REDUCE_MAX, false, v.iter().copied()), (-3i32) as u32 as u64);
        assert_eq!(reduce(warp::REDUCE_ADD, false, v.iter().copied()), 9);
    }
}
