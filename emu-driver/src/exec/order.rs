//! Block order: which block runs at each position of a launch.
//!
//! Forward is CUDA's linear block index order (x fastest); reverse runs the last block
//! first; shuffle runs a permutation chosen by a seed, the same for the same seed and
//! grid size. Results that change with the order (float atomics across blocks,
//! inter-block races, a block waiting for a later one) show up as differences between
//! runs under different orders.
//!
//! The shuffle is a keyed bijection computed per position (a 4-round Feistel network on
//! the smallest even power-of-two domain that holds the grid, cycle-walking values that
//! fall outside it), so it costs no memory even for grids of 2^40 blocks.

pub use crate::config::BlockOrder;

/// Maps positions 0..total of a launch to linear block indices.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sequence {
    total: u64,
    order: BlockOrder,
    half_bits: u32,
}

impl Sequence {
    pub fn new(total: u64, order: BlockOrder) -> Self {
        let bits = 64 - total.saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        Sequence { total, order, half_bits }
    }

    /// The linear index of the block at position `pos` (< total).
    #[inline]
    pub fn block_at(&self, pos: u64) -> u64 {
        match self.order {
            BlockOrder::Forward => pos,
            BlockOrder::Reverse => self.total - 1 - pos,
            BlockOrder::Shuffle(seed) => {
                let mut x = pos;
                loop {
                    x = self.feistel(seed, x);
                    if x < self.total {
                        return x;
                    }
                }
            }
        }
    }

    fn feistel(&self, seed: u64, x: u64) -> u64 {
        let h = self.half_bits;
        let m = (1u64 << h) - 1;
        let (mut l, mut r) = (x >> h, x & m);
        for round in 0..4u64 {
            let f = mix(seed ^ round.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ r) & m;
            (l, r) = (r, l ^ f);
        }
        (l << h) | r
    }
}

/// splitmix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use crate::exec::order::*;

    fn order(total: u64, o: BlockOrder) -> Vec<u64> {
        let s = Sequence::new(total, o);
        (0..total).map(|p| s.block_at(p)).collect()
    }

    #[test]
    fn forward_and_reverse() {
        assert_eq!(order(4, BlockOrder::Forward), vec![0, 1, 2, 3]);
        assert_eq!(order(4, BlockOrder::Reverse), vec![3, 2, 1, 0]);
        assert_eq!(order(1, BlockOrder::Shuffle(5)), vec![0]);
    }

    #[test]
    fn shuffles_are_permutations_fixed_by_the_seed() {
        for total in [2u64, 3, 7, 64, 100, 1000, 4097] {
            let a = order(total, BlockOrder::Shuffle(42));
            let mut sorted = a.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..total).collect::<Vec<_>>(), "total {total}");
            assert_eq!(a, order(total, BlockOrder::Shuffle(42)));
            if total >= 7 {
                assert_ne!(a, order(total, BlockOrder::Shuffle(43)), "total {total}");
                assert_ne!(a, (0..total).collect::<Vec<_>>());
            }
        }
        // Huge grids cost nothing up front.
        let s = Sequence::new(1 << 40, BlockOrder::Shuffle(1));
        assert!(s.block_at(12345) < 1 << 40);
    }
}
