//! Coverage feedback from LLVM's SanitizerCoverage, on the stable toolchain.
//!
//! `scripts/fuzz` compiles the crates under test with `-C passes=sancov-module` and
//! `-sanitizer-coverage-inline-8bit-counters -sanitizer-coverage-trace-compares`
//! (`fuzz/rustc-sancov` adds them to those crates only). LLVM then gives every edge of
//! their code a one-byte counter and calls the hooks below: once per module with its
//! counter array, and at every integer comparison with both operands. libFuzzer is the
//! usual provider of these hooks (nightly-only through cargo-fuzz); this module is ours.
//!
//! A *feature* is an edge together with its hit count's bucket (1, 2, 3, 4-7, 8-15,
//! 16-31, 32-127, 128+), as AFL and libFuzzer count them: an input is kept when it shows
//! a feature no earlier input showed. Comparisons feed a table of recent operand pairs
//! that the mutator writes into inputs (how magic numbers and length checks are passed).
//!
//! In a build without the instrumentation (the test suite's) no counters are registered:
//! [`Coverage::edges_total`] is 0 and the fuzzer mutates blind from its seeds.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Counter arrays registered by instrumented modules: (start, length).
static REGIONS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// Registers one module's counters (called by LLVM's module constructors, before main).
#[no_mangle]
pub extern "C" fn __sanitizer_cov_8bit_counters_init(start: *mut u8, stop: *mut u8) {
    let len = (stop as usize).saturating_sub(start as usize);
    if len > 0 {
        if let Ok(mut r) = REGIONS.lock() {
            r.push((start as usize, len));
        }
    }
}

/// Size of the comparison table (a power of two).
const CMP_SLOTS: usize = 1024;
/// Operand pairs of recent comparisons: (a, b, width in bytes), hashed into slots.
static CMP_A: [AtomicU64; CMP_SLOTS] = [const { AtomicU64::new(0) }; CMP_SLOTS];
static CMP_B: [AtomicU64; CMP_SLOTS] = [const { AtomicU64::new(0) }; CMP_SLOTS];
static CMP_W: [AtomicU64; CMP_SLOTS] = [const { AtomicU64::new(0) }; CMP_SLOTS];
/// The most recent comparisons, in order (a ring): what the last inputs were checked for.
const RECENT: usize = 64;
static RECENT_A: [AtomicU64; RECENT] = [const { AtomicU64::new(0) }; RECENT];
static RECENT_B: [AtomicU64; RECENT] = [const { AtomicU64::new(0) }; RECENT];
static RECENT_W: [AtomicU64; RECENT] = [const { AtomicU64::new(0) }; RECENT];
/// How many comparisons were recorded (0: the build is not instrumented).
static CMP_COUNT: AtomicUsize = AtomicUsize::new(0);

#[inline(always)]
fn record(a: u64, b: u64, width: u64) {
    if a == b {
        return;
    }
    let slot = ((a ^ b.rotate_left(17)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54) as usize & (CMP_SLOTS - 1);
    CMP_A[slot].store(a, Ordering::Relaxed);
    CMP_B[slot].store(b, Ordering::Relaxed);
    CMP_W[slot].store(width, Ordering::Relaxed);
    let n = CMP_COUNT.fetch_add(1, Ordering::Relaxed) % RECENT;
    RECENT_A[n].store(a, Ordering::Relaxed);
    RECENT_B[n].store(b, Ordering::Relaxed);
    RECENT_W[n].store(width, Ordering::Relaxed);
}

macro_rules! cmp_hooks {
    ($($name:ident, $cname:ident: $t:ty, $w:expr;)*) => {$(
        /// A comparison of two operands (SanitizerCoverage's trace-compares hook).
        #[no_mangle]
        pub extern "C" fn $name(a: $t, b: $t) {
            record(a as u64, b as u64, $w);
        }
        /// A comparison with a compile-time constant (the first operand).
        #[no_mangle]
        pub extern "C" fn $cname(a: $t, b: $t) {
            record(b as u64, a as u64, $w);
        }
    )*};
}

cmp_hooks! {
    __sanitizer_cov_trace_cmp1, __sanitizer_cov_trace_const_cmp1: u8, 1;
    __sanitizer_cov_trace_cmp2, __sanitizer_cov_trace_const_cmp2: u16, 2;
    __sanitizer_cov_trace_cmp4, __sanitizer_cov_trace_const_cmp4: u32, 4;
    __sanitizer_cov_trace_cmp8, __sanitizer_cov_trace_const_cmp8: u64, 8;
}

/// A `switch` on `val`: `cases[0]` values of `cases[1]` bits follow in `cases[2..]`.
///
/// # Safety
/// Called by instrumented code with the case table LLVM emitted.
#[no_mangle]
pub unsafe extern "C" fn __sanitizer_cov_trace_switch(val: u64, cases: *const u64) {
    if cases.is_null() {
        return;
    }
    // SAFETY: LLVM's table: count, width, then `count` values.
    let (n, bits) = unsafe { (*cases, *cases.add(1)) };
    let width = (bits / 8).clamp(1, 8);
    // A few cases per switch: the nearest ones above and below the value.
    let (mut below, mut above) = (None, None);
    for i in 0..n.min(4096) as usize {
        // SAFETY: within the table's `count` entries.
        let c = unsafe { *cases.add(2 + i) };
        if c < val && below.is_none_or(|b| c > b) {
            below = Some(c);
        }
        if c > val && above.is_none_or(|a| c < a) {
            above = Some(c);
        }
    }
    for c in [below, above].into_iter().flatten() {
        record(val, c, width);
    }
}

/// An operand pair the mutator may use: replace `a`'s bytes in the input by `b`'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmpPair {
    /// The value seen (often from the input).
    pub a: u64,
    /// The value it was compared with.
    pub b: u64,
    /// Operand width in bytes.
    pub width: usize,
}

/// One recorded comparison, picked by `pick` (random bits): half the time one of the most
/// recent, else one of the table (the first filled slot of a few tried).
pub fn cmp_pair(pick: u64) -> Option<CmpPair> {
    let count = CMP_COUNT.load(Ordering::Relaxed);
    if count == 0 {
        return None;
    }
    if pick & 1 == 0 {
        let k = (pick >> 1) as usize % count.min(RECENT);
        let width = RECENT_W[k].load(Ordering::Relaxed) as usize;
        return (width > 0).then(|| CmpPair { a: RECENT_A[k].load(Ordering::Relaxed), b: RECENT_B[k].load(Ordering::Relaxed), width });
    }
    for t in 0..32 {
        let slot = (pick >> (1 + t)) as usize & (CMP_SLOTS - 1);
        let slot = (slot + t * 97) & (CMP_SLOTS - 1);
        let width = CMP_W[slot].load(Ordering::Relaxed) as usize;
        if width > 0 {
            return Some(CmpPair { a: CMP_A[slot].load(Ordering::Relaxed), b: CMP_B[slot].load(Ordering::Relaxed), width });
        }
    }
    None
}

/// AFL's hit-count buckets: which of 8 ranges a nonzero count is in.
fn bucket(count: u8) -> u8 {
    match count {
        0 => 0,
        1 => 1,
        2 => 2,
        3 => 4,
        4..=7 => 8,
        8..=15 => 16,
        16..=31 => 32,
        32..=127 => 64,
        _ => 128,
    }
}

/// The features seen so far, and the counters to read after each run.
pub struct Coverage {
    regions: Vec<(usize, usize)>,
    /// Per edge: the buckets seen (a bit each).
    seen: Vec<u8>,
    edges: usize,
    features: usize,
}

impl Coverage {
    /// Takes the registered counter arrays (all registered before main) and clears them.
    pub fn new() -> Coverage {
        let regions = REGIONS.lock().map(|r| r.clone()).unwrap_or_default();
        let total = regions.iter().map(|r| r.1).sum();
        let c = Coverage { regions, seen: vec![0; total], edges: 0, features: 0 };
        c.clear();
        c
    }

    /// Number of instrumented edges (0: not an instrumented build).
    pub fn edges_total(&self) -> usize {
        self.seen.len()
    }

    /// Edges hit by any run so far.
    pub fn edges(&self) -> usize {
        self.edges
    }

    /// Features (edge, bucket) seen so far.
    pub fn features(&self) -> usize {
        self.features
    }

    /// Zeroes every counter (before a run whose coverage is to be read).
    pub fn clear(&self) {
        for &(start, len) in &self.regions {
            // SAFETY: a counter array LLVM registered: `len` writable bytes for the life of
            // the process; only this thread runs instrumented code between runs.
            unsafe { std::ptr::write_bytes(start as *mut u8, 0, len) };
        }
    }

    /// Reads the counters of the run that just ended, clears them, and returns how many
    /// features were new.
    pub fn collect(&mut self) -> usize {
        let mut new = 0;
        let mut base = 0;
        for &(start, len) in &self.regions {
            let p = start as *mut u8;
            let mut i = 0;
            while i < len {
                if i + 8 <= len {
                    // SAFETY: within the registered array (i + 8 <= len); counters are plain bytes.
                    let w = unsafe { std::ptr::read_unaligned(p.add(i) as *const u64) };
                    if w == 0 {
                        i += 8;
                        continue;
                    }
                }
                let end = (i + 8).min(len);
                for k in i..end {
                    // SAFETY: k < len, inside the registered array.
                    let c = unsafe { std::ptr::read_volatile(p.add(k)) };
                    if c != 0 {
                        // SAFETY: as above.
                        unsafe { std::ptr::write_volatile(p.add(k), 0) };
                        let b = bucket(c);
                        let s = &mut self.seen[base + k];
                        if *s & b == 0 {
                            if *s == 0 {
                                self.edges += 1;
                            }
                            *s |= b;
                            self.features += 1;
                            new += 1;
                        }
                    }
                }
                i = end;
            }
            base += len;
        }
        new
    }
}

impl Default for Coverage {
    fn default() -> Self {
        Coverage::new()
    }
}
