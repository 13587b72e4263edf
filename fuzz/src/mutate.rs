//! The mutator: what is done to a corpus input to make the next one.
//!
//! A run stacks 1 to 16 of these (AFL's "havoc"): bit flips; bytes set to random or
//! boundary values; integers of 1, 2, 4, 8 bytes (either byte order) moved by small
//! amounts or set to boundary values (length and count fields); bytes inserted, erased,
//! duplicated, copied within the input; a piece of another corpus input spliced in;
//! whole lines (text formats) duplicated, dropped or swapped; a token of the target's
//! dictionary (format magic numbers, keywords) inserted or written over; an operand of a
//! comparison the code under test just made written where the other operand is.

use crate::coverage::{cmp_pair, CmpPair};

/// A small, fast, seedable generator (xorshift64*); runs are reproducible from `--seed`.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (any value; 0 is remapped).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn bits(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.bits() % n as u64) as usize
    }

    /// True with probability 1/n.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
}

/// Boundary values integers are set to.
const INTERESTING: [u64; 16] = [
    0,
    1,
    2,
    0x7f,
    0x80,
    0xff,
    0x100,
    0x7fff,
    0x8000,
    0xffff,
    0x1_0000,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x7fff_ffff_ffff_ffff,
    u64::MAX,
];

/// The mutator of one target.
pub struct Mutator {
    /// Tokens: format magic numbers, keywords.
    pub dict: Vec<Vec<u8>>,
    /// Inputs never grow past this.
    pub max_len: usize,
}

impl Mutator {
    /// Makes `out` from `base` with a stack of mutations; `other` is another corpus input
    /// for splicing.
    pub fn mutate(&self, rng: &mut Rng, base: &[u8], other: &[u8], out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(base);
        let n = 1 << rng.below(5);
        for _ in 0..n {
            self.one(rng, other, out);
        }
        if out.len() > self.max_len {
            out.truncate(self.max_len);
        }
    }

    fn one(&self, rng: &mut Rng, other: &[u8], d: &mut Vec<u8>) {
        let len = d.len();
        match rng.below(16) {
            // Flip a bit.
            0 if len > 0 => {
                let i = rng.below(len);
                d[i] ^= 1 << rng.below(8);
            }
            // A random byte, or a boundary one.
            1 if len > 0 => {
                let i = rng.below(len);
                d[i] = if rng.one_in(2) { rng.bits() as u8 } else { INTERESTING[rng.below(6)] as u8 };
            }
            // An integer field moved by a small amount (either byte order).
            2 if len > 0 => {
                let w = [1, 2, 4, 8][rng.below(4)].min(len);
                let i = rng.below(len - w + 1);
                let be = rng.one_in(2);
                let v = read_int(&d[i..i + w], be);
                let delta = 1 + rng.below(35) as u64;
                let v = if rng.one_in(2) { v.wrapping_add(delta) } else { v.wrapping_sub(delta) };
                write_int(&mut d[i..i + w], v, be);
            }
            // An integer field set to a boundary value, or to the input's length.
            3 if len > 0 => {
                let w = [1, 2, 4, 8][rng.below(4)].min(len);
                let i = rng.below(len - w + 1);
                let v = match rng.below(4) {
                    0 => len as u64,
                    1 => (len - i) as u64,
                    _ => INTERESTING[rng.below(INTERESTING.len())],
                };
                write_int(&mut d[i..i + w], v, rng.one_in(3));
            }
            // Insert random bytes, or a repeated one.
            4 => {
                let most = if rng.one_in(16) { 256 } else { 8 };
                let n = 1 + rng.below(most);
                let at = rng.below(len + 1);
                let fill = rng.bits() as u8;
                let bytes: Vec<u8> = (0..n).map(|_| if rng.one_in(2) { fill } else { rng.bits() as u8 }).collect();
                d.splice(at..at, bytes);
            }
            // Erase a range.
            5 if len > 1 => {
                let at = rng.below(len);
                let most = if rng.one_in(4) { 4096 } else { 16 };
                let n = 1 + rng.below((len - at).min(most));
                d.drain(at..at + n);
            }
            // Duplicate a range in place, or copy one over another.
            6 if len > 0 => {
                let from = rng.below(len);
                let n = 1 + rng.below((len - from).min(256));
                let piece = d[from..from + n].to_vec();
                let at = rng.below(len + 1);
                if rng.one_in(2) {
                    d.splice(at..at, piece);
                } else {
                    let end = (at + n).min(len);
                    d.splice(at..end, piece);
                }
            }
            // Splice: a piece of another input inserted, or this input's tail replaced.
            7 if !other.is_empty() => {
                let from = rng.below(other.len());
                let n = 1 + rng.below((other.len() - from).min(1024));
                let at = rng.below(len + 1);
                if rng.one_in(2) {
                    d.splice(at..at, other[from..from + n].iter().copied());
                } else {
                    d.truncate(at);
                    d.extend_from_slice(&other[from..]);
                }
            }
            // A dictionary token inserted or written over.
            8 | 9 if !self.dict.is_empty() => {
                let t = &self.dict[rng.below(self.dict.len())];
                let at = rng.below(len + 1);
                if rng.one_in(2) || at + t.len() > len {
                    d.splice(at..at, t.iter().copied());
                } else {
                    d[at..at + t.len()].copy_from_slice(t);
                }
            }
            // An operand of a recent comparison written where the other one is.
            10 | 11 => {
                if let Some(p) = cmp_pair(rng.bits()) {
                    cmp_replace(rng, d, p);
                }
            }
            // Lines: duplicate, drop, swap (text formats: PTX, CSV, JSON lines).
            12 | 13 => lines(rng, d),
            // Truncate.
            14 if len > 0 => d.truncate(rng.below(len)),
            // A line of another input inserted at a line start.
            15 if !other.is_empty() => {
                let o = split_lines(other);
                let l = o[rng.below(o.len())].clone();
                let mine = split_lines(d);
                let at = rng.below(mine.len() + 1);
                let mut v: Vec<Vec<u8>> = mine;
                v.insert(at, l);
                *d = v.concat();
            }
            _ => {
                let at = rng.below(len + 1);
                d.insert(at, rng.bits() as u8);
            }
        }
    }
}

fn read_int(b: &[u8], be: bool) -> u64 {
    let mut v = 0u64;
    for k in 0..b.len() {
        let byte = if be { b[k] } else { b[b.len() - 1 - k] };
        v = (v << 8) | byte as u64;
    }
    v
}

fn write_int(b: &mut [u8], v: u64, be: bool) {
    let w = b.len();
    for k in 0..w {
        let byte = (v >> (8 * k)) as u8;
        if be {
            b[w - 1 - k] = byte;
        } else {
            b[k] = byte;
        }
    }
}

/// Finds `a` (little-endian, its width; or as decimal text) in the input and writes `b`
/// there; if `a` is not there, writes `b` at a random place.
fn cmp_replace(rng: &mut Rng, d: &mut Vec<u8>, p: CmpPair) {
    let (a, b) = if rng.one_in(2) { (p.a, p.b) } else { (p.b, p.a) };
    let w = p.width;
    let mut pat = vec![0u8; w];
    write_int(&mut pat, a, false);
    let mut rep = vec![0u8; w];
    write_int(&mut rep, b, false);
    if rng.one_in(4) {
        // As text: numbers in PTX, CSV, JSON.
        pat = a.to_string().into_bytes();
        rep = b.to_string().into_bytes();
    }
    if !pat.is_empty() && d.len() >= pat.len() {
        // From the start half the time (formats check their first fields first).
        let start = if rng.one_in(2) { 0 } else { rng.below(d.len() - pat.len() + 1) };
        let hit = (start..=d.len() - pat.len()).chain(0..start).find(|&i| d[i..i + pat.len()] == pat[..]);
        if let Some(i) = hit {
            d.splice(i..i + pat.len(), rep);
            return;
        }
    }
    let at = rng.below(d.len() + 1);
    if rng.one_in(2) && at + rep.len() <= d.len() {
        d[at..at + rep.len()].copy_from_slice(&rep);
    } else {
        d.splice(at..at, rep);
    }
}

/// The input as lines, each with its newline.
fn split_lines(d: &[u8]) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = d.split_inclusive(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    if v.is_empty() {
        v.push(Vec::new());
    }
    v
}

fn lines(rng: &mut Rng, d: &mut Vec<u8>) {
    let mut l = split_lines(d);
    let n = l.len();
    match rng.below(3) {
        0 => {
            let i = rng.below(n);
            let c = l[i].clone();
            l.insert(rng.below(n + 1), c);
        }
        1 if n > 1 => {
            l.remove(rng.below(n));
        }
        _ => {
            let (i, j) = (rng.below(n), rng.below(n));
            l.swap(i, j);
        }
    }
    *d = l.concat();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_round_trip_in_both_byte_orders() {
        let mut b = [0u8; 4];
        write_int(&mut b, 0xBA55_ED50, false);
        assert_eq!(b, [0x50, 0xED, 0x55, 0xBA]);
        assert_eq!(read_int(&b, false), 0xBA55_ED50);
        write_int(&mut b, 0x0102_0304, true);
        assert_eq!(b, [1, 2, 3, 4]);
        assert_eq!(read_int(&b, true), 0x0102_0304);
    }

    #[test]
    fn mutations_stay_within_the_length_limit_and_change_the_input() {
        let m = Mutator { dict: vec![b"TOKEN".to_vec()], max_len: 64 };
        let mut rng = Rng::new(7);
        let base = b"line one\nline two\n".to_vec();
        let mut out = Vec::new();
        let mut changed = 0;
        for _ in 0..10_000 {
            m.mutate(&mut rng, &base, b"other\ninput\n", &mut out);
            assert!(out.len() <= 64);
            changed += (out != base) as usize;
        }
        assert!(changed > 9_000, "only {changed} of 10000 mutations changed the input");
    }
}
