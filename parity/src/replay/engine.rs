//! The replay loop: evaluates a batch function over a range of binary32 inputs on all
//! cores and checks every result against the reference.

use super::reference::{same, ulp_distance, ulp_error, RefFn};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Something that maps binary32 inputs (as bits) to binary32 outputs (as bits).
pub trait BatchFn: Sync {
    /// Writes `f(input[i])` to `output[i]`; both slices have the same length.
    fn eval(&self, input: &[u32], output: &mut [u32]);
}

impl<F: Fn(&[u32], &mut [u32]) + Sync> BatchFn for F {
    fn eval(&self, input: &[u32], output: &mut [u32]) {
        self(input, output)
    }
}

/// A scalar f32 -> f32 function as a batch function.
pub struct Scalar<F: Fn(f32) -> f32 + Sync>(pub F);

impl<F: Fn(f32) -> f32 + Sync> BatchFn for Scalar<F> {
    fn eval(&self, input: &[u32], output: &mut [u32]) {
        for (i, o) in input.iter().zip(output.iter_mut()) {
            *o = (self.0)(f32::from_bits(*i)).to_bits();
        }
    }
}

/// One misrounded input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Misround {
    /// The input (binary32 bits).
    pub input: u32,
    /// What the function returned (binary32 bits).
    pub got: u32,
    /// The correctly rounded result (binary32 bits).
    pub expected: u32,
    /// |got - exact| in ulps of the exact result (exact approximated in binary64).
    pub ulp_error: f64,
    /// Number of binary32 values between got and expected.
    pub ulp_distance: u64,
}

/// Totals of a replay.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Inputs checked.
    pub inputs: u64,
    /// Inputs whose result is not the correctly rounded one.
    pub misrounded: u64,
    /// Inputs whose reference the binary64 filter could not decide (computed with MPFR).
    pub mpfr_decided: u64,
    /// Seconds the run took (wall clock).
    pub seconds: f64,
    /// Largest ulp error seen over all inputs (misrounded or not), in ulps of the exact
    /// result; computed only where `track_max_error` was asked for, else over misrounded.
    pub max_ulp_error: f64,
    pub(crate) max_ulp_error_input: Option<u32>,
    /// Misrounded inputs, sorted by input, at most `max_list` of them.
    pub list: Vec<Misround>,
    /// More inputs misrounded than `list` holds.
    pub list_truncated: bool,
}

/// Options of a replay run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Inputs per work item (raised to at least 256, 1024 when checking device outputs).
    pub chunk: usize,
    /// Most misrounded inputs kept in [`Outcome::list`].
    pub max_list: usize,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// Compute the ulp error of every input (slower: one more division per input) so that
    /// `max_ulp_error` covers correctly rounded inputs too (their error is < 0.5).
    pub track_max_error: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { chunk: 1 << 16, max_list: 1_000_000, progress: false, track_max_error: false }
    }
}

#[derive(Default)]
struct Local {
    misrounded: u64,
    mpfr: u64,
    max_err: f64,
    max_err_input: Option<u32>,
    list: Vec<Misround>,
}

/// Checks precomputed outputs for the inputs `input` (used by the device path, where the
/// outputs come from the GPU).
pub(crate) fn check_outputs(reference: &RefFn, input_start: u32, outputs: &[u32], opts: &Options, sink: &Sink) {
    let n = outputs.len();
    let chunk = opts.chunk.max(1024);
    (0..n.div_ceil(chunk)).into_par_iter().for_each(|c| {
        let lo = c * chunk;
        let hi = (lo + chunk).min(n);
        let mut local = Local::default();
        for (k, got) in outputs[lo..hi].iter().enumerate() {
            let x = input_start.wrapping_add((lo + k) as u32);
            check_one(reference, x, *got, opts, &mut local);
        }
        sink.merge(local, (hi - lo) as u64, opts.max_list);
    });
}

/// Whether error `err` at input `x` replaces the largest so far (`max` at `at`): larger,
/// or as large at a smaller input, so that the answer does not depend on the order in
/// which workers (or shards) finish.
pub(crate) fn worse(err: f64, x: u32, max: f64, at: Option<u32>) -> bool {
    match at {
        None => true,
        Some(a) => err > max || (err == max && x < a),
    }
}

#[inline(always)]
fn check_one(reference: &RefFn, x: u32, got: u32, opts: &Options, local: &mut Local) {
    let xf = f32::from_bits(x);
    let (y, fast) = reference.fast(xf);
    let expected = match fast {
        Some(e) => e,
        None => {
            local.mpfr += 1;
            reference.mpfr_f32(xf)
        }
    };
    let ok = same(got, expected);
    if ok && !opts.track_max_error {
        return;
    }
    let g = f32::from_bits(got);
    let err = if ok && !expected.is_finite() { 0.0 } else { ulp_error(g, y) };
    if worse(err, x, local.max_err, local.max_err_input) {
        local.max_err = err;
        local.max_err_input = Some(x);
    }
    if !ok {
        local.misrounded += 1;
        if local.list.len() < opts.max_list {
            local.list.push(Misround {
                input: x,
                got,
                expected: expected.to_bits(),
                ulp_error: err,
                ulp_distance: ulp_distance(g, expected),
            });
        }
    }
}

/// Collects per-chunk results from the workers.
pub(crate) struct Sink {
    inner: Mutex<Local>,
    truncated: std::sync::atomic::AtomicBool,
    done: AtomicU64,
    pub bar: ProgressBar,
}

impl Sink {
    pub fn new(total: u64, progress: bool, label: &str) -> Sink {
        let bar = if progress {
            let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(4));
            b.set_style(
                ProgressStyle::with_template(
                    "{prefix} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} inputs, {per_sec} (eta {eta})",
                )
                .unwrap(),
            );
            b.set_prefix(label.to_string());
            b
        } else {
            ProgressBar::hidden()
        };
        Sink { inner: Mutex::new(Local::default()), truncated: Default::default(), done: AtomicU64::new(0), bar }
    }

    fn merge(&self, local: Local, n: u64, max_list: usize) {
        self.done.fetch_add(n, Ordering::Relaxed);
        self.bar.inc(n);
        if local.misrounded == 0 && local.mpfr == 0 && local.max_err_input.is_none() {
            return;
        }
        let mut g = self.inner.lock().unwrap();
        g.misrounded += local.misrounded;
        g.mpfr += local.mpfr;
        if let Some(x) = local.max_err_input.filter(|x| worse(local.max_err, *x, g.max_err, g.max_err_input)) {
            g.max_err = local.max_err;
            g.max_err_input = Some(x);
        }
        for m in local.list {
            if g.list.len() < max_list {
                g.list.push(m);
            } else {
                self.truncated.store(true, Ordering::Relaxed);
            }
        }
    }

    pub fn finish(self, seconds: f64) -> Outcome {
        self.bar.finish_and_clear();
        let g = self.inner.into_inner().unwrap();
        let mut list = g.list;
        list.sort_by_key(|m| m.input);
        let truncated = self.truncated.into_inner() || (list.len() as u64) < g.misrounded;
        Outcome {
            inputs: self.done.into_inner(),
            misrounded: g.misrounded,
            mpfr_decided: g.mpfr,
            seconds,
            max_ulp_error: g.max_err,
            max_ulp_error_input: g.max_err_input,
            list,
            list_truncated: truncated,
        }
    }
}

/// Replays every input of [from, to) (as bit patterns) through `f` and checks it.
pub fn replay(f: &dyn BatchFn, reference: &RefFn, from: u32, to: u64, opts: &Options, label: &str) -> Outcome {
    let from64 = from as u64;
    let to = to.max(from64);
    let total = to - from64;
    let chunk = opts.chunk.max(256) as u64;
    let sink = Sink::new(total, opts.progress, label);
    let t0 = Instant::now();
    let nchunks = total.div_ceil(chunk);
    (0..nchunks).into_par_iter().for_each_init(
        || (vec![0u32; chunk as usize], vec![0u32; chunk as usize]),
        |(inb, outb), c| {
            let lo = from64 + c * chunk;
            let hi = (lo + chunk).min(to);
            let n = (hi - lo) as usize;
            for (k, v) in inb[..n].iter_mut().enumerate() {
                *v = (lo as u32).wrapping_add(k as u32);
            }
            f.eval(&inb[..n], &mut outb[..n]);
            let mut local = Local::default();
            for k in 0..n {
                check_one(reference, inb[k], outb[k], opts, &mut local);
            }
            sink.merge(local, n as u64, opts.max_list);
        },
    );
    sink.finish(t0.elapsed().as_secs_f64())
}

/// Checks an explicit list of inputs (bits) through `f`.
pub fn replay_list(f: &dyn BatchFn, reference: &RefFn, inputs: &[u32], opts: &Options) -> Outcome {
    let sink = Sink::new(inputs.len() as u64, false, "");
    let t0 = Instant::now();
    let chunk = opts.chunk.max(256);
    inputs.par_chunks(chunk).for_each(|inb| {
        let mut outb = vec![0u32; inb.len()];
        f.eval(inb, &mut outb);
        let mut local = Local::default();
        for k in 0..inb.len() {
            check_one(reference, inb[k], outb[k], opts, &mut local);
        }
        sink.merge(local, inb.len() as u64, opts.max_list);
    });
    sink.finish(t0.elapsed().as_secs_f64())
}

/// The thread pool a replay runs on: `threads` workers, or rayon's default.
pub(crate) fn pool(threads: Option<usize>) -> anyhow::Result<rayon::ThreadPool> {
    let mut b = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        b = b.num_threads(t);
    }
    Ok(b.build()?)
}
