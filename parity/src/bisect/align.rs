//! Aligning two event sequences (launches by kernel, copies by size) so that an extra,
//! missing or replaced launch in one run does not shift every later comparison.
//!
//! Walk both sequences; equal keys pair up. At a mismatch, look ahead (up to
//! [`WINDOW`] events on each side) for the nearest point (fewest events skipped, then
//! the most even split) where both sequences agree again for [`RESYNC`] events in a
//! row (or to their ends). The skipped stretches are a sequence divergence; as many of
//! them as both sides have are paired as *substitutions* (same position, different
//! kernel: a defective build that launches `band_box_clamp` where the correct one
//! launches `band_box`), and their buffers are still compared. Without a resync point
//! the rest of both sequences is one divergence.

/// How far to look ahead for a resync point.
pub const WINDOW: usize = 256;
/// Events that must agree in a row for a resync.
pub const RESYNC: usize = 3;

/// One step of the alignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Same key at A[i] and B[j].
    Pair(usize, usize),
    /// Different keys at the same place: compared anyway.
    Substitute(usize, usize),
    /// Only in A / only in B.
    OnlyA(usize),
    OnlyB(usize),
}

/// A place where the sequences themselves diverge: A[a.0..a.1] against B[b.0..b.1].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    pub a: (usize, usize),
    pub b: (usize, usize),
}

/// Aligns `a` and `b` by key.
pub fn align<K: PartialEq>(a: &[K], b: &[K]) -> (Vec<Step>, Vec<Divergence>) {
    let (mut i, mut j) = (0, 0);
    let mut steps = Vec::with_capacity(a.len().max(b.len()));
    let mut divs = Vec::new();
    let agrees = |i: usize, j: usize| {
        let n = RESYNC.min(a.len() - i).min(b.len() - j);
        // At the end of one side, only a joint end agrees.
        (n > 0 || (i == a.len() && j == b.len()))
            && (0..n).all(|k| a[i + k] == b[j + k])
            && (n == RESYNC || (i + n == a.len() && j + n == b.len()))
    };
    while i < a.len() && j < b.len() {
        if a[i] == b[j] {
            steps.push(Step::Pair(i, j));
            i += 1;
            j += 1;
            continue;
        }
        // The nearest resync point: fewest skipped, then the most even split.
        let mut best: Option<(usize, usize)> = None;
        'search: for total in 1..=2 * WINDOW {
            let mut cands: Vec<(usize, usize)> =
                (0..=total).map(|di| (di, total - di)).filter(|&(di, dj)| di <= WINDOW && dj <= WINDOW).collect();
            cands.sort_by_key(|&(di, dj)| di.abs_diff(dj));
            for (di, dj) in cands {
                if i + di <= a.len() && j + dj <= b.len() && agrees(i + di, j + dj) {
                    best = Some((di, dj));
                    break 'search;
                }
            }
        }
        let (di, dj) = best.unwrap_or((a.len() - i, b.len() - j));
        divs.push(Divergence { a: (i, i + di), b: (j, j + dj) });
        let common = di.min(dj);
        for k in 0..common {
            steps.push(Step::Substitute(i + k, j + k));
        }
        steps.extend((common..di).map(|k| Step::OnlyA(i + k)));
        steps.extend((common..dj).map(|k| Step::OnlyB(j + k)));
        i += di;
        j += dj;
    }
    if i < a.len() || j < b.len() {
        divs.push(Divergence { a: (i, a.len()), b: (j, b.len()) });
        steps.extend((i..a.len()).map(Step::OnlyA));
        steps.extend((j..b.len()).map(Step::OnlyB));
    }
    (steps, divs)
}

#[cfg(test)]
mod tests {
    use crate::bisect::align::*;

    fn keys(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn equal_sequences_pair_one_to_one() {
        let (steps, divs) = align(&keys("abcabc"), &keys("abcabc"));
        assert!(divs.is_empty());
        assert_eq!(steps, (0..6).map(|k| Step::Pair(k, k)).collect::<Vec<_>>());
    }

    #[test]
    fn a_replaced_kernel_is_a_substitution_and_the_rest_realigns() {
        // B launches X where A launches c (a defective build's other kernel).
        let (steps, divs) = align(&keys("abcdefabcdef"), &keys("abXdefabXdef"));
        assert_eq!(divs, vec![Divergence { a: (2, 3), b: (2, 3) }, Divergence { a: (8, 9), b: (8, 9) }]);
        assert_eq!(steps[2], Step::Substitute(2, 2));
        assert_eq!(steps[3], Step::Pair(3, 3));
        assert_eq!(steps.len(), 12);
    }

    #[test]
    fn an_extra_launch_is_skipped_and_later_launches_pair_again() {
        let (steps, divs) = align(&keys("abcdefgh"), &keys("abcXdefgh"));
        assert_eq!(divs, vec![Divergence { a: (3, 3), b: (3, 4) }]);
        assert!(steps.contains(&Step::OnlyB(3)));
        assert!(steps.contains(&Step::Pair(3, 4)) && steps.contains(&Step::Pair(7, 8)));
        // A missing launch, the other way round.
        let (steps, divs) = align(&keys("abcXdefgh"), &keys("abcdefgh"));
        assert_eq!(divs, vec![Divergence { a: (3, 4), b: (3, 3) }]);
        assert!(steps.contains(&Step::OnlyA(3)) && steps.contains(&Step::Pair(8, 7)));
    }

    #[test]
    fn a_truncated_run_diverges_at_its_end() {
        let (steps, divs) = align(&keys("abcdef"), &keys("abc"));
        assert_eq!(divs, vec![Divergence { a: (3, 6), b: (3, 3) }]);
        assert_eq!(steps.iter().filter(|s| matches!(s, Step::OnlyA(_))).count(), 3);
    }

    #[test]
    fn unrelated_sequences_diverge_once_to_the_end() {
        let (_, divs) = align(&keys("abcdefgh"), &keys("stuvwxyz"));
        assert_eq!(divs, vec![Divergence { a: (0, 8), b: (0, 8) }]);
    }
}
