//! PTX mode's loop path (simtwin-ptx `uniform`, EMU_CUDA_THREAD_LOOPS) against fibers:
//! the kernels of tests/thread_loops (barrier shapes the loop path takes, with early
//! exits, registers live across barriers, multiply-adds fused across a barrier; and
//! shapes that keep fibers) run through the PTX suite's runner with the loop path on
//! (the default) and off. Outputs, launch statuses, hazard reports (warn and error
//! mode) and counters must be the same; the tree reduction's and the warp shuffles' sums
//! are checked against the inputs; the module record says which path each kernel took
//! (warp collectives included: shuffles and votes, partial warps, an exit before a
//! shuffle, a partial mask). warp_tickets hands out atomic tickets around collectives:
//! equal outputs mean the loop path ran the threads in the fibers' order (per warp,
//! the run queue, the fairness streak), not only that it computed the same sums.

mod client_support;
use client_support::{root, run_suite_runner, runner_records as records, suite_runner_dir, SuiteRun};
use std::path::PathBuf;
use std::sync::OnceLock;

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| suite_runner_dir("thread-loops"))
}

/// Runs the cases (`only`: one of them) with EMU_CUDA_THREAD_LOOPS=`loops` and `env`.
fn run(tag: &str, loops: &str, only: Option<&str>, env: &[(&str, &str)]) -> SuiteRun {
    run_cases(tag, loops, "cases.txt", only, env)
}

/// `run` over the cases of file `cases` of tests/thread_loops.
fn run_cases(tag: &str, loops: &str, cases: &str, only: Option<&str>, env: &[(&str, &str)]) -> SuiteRun {
    let d = dir();
    let src = root().join("emu-driver/tests/thread_loops");
    let args: Vec<&str> = only.map(|o| vec!["--only", o]).unwrap_or_default();
    run_suite_runner(d, tag, &src.join("loops.ptx"), &src.join(cases), &args, loops, env)
}

/// The hazard lines of a run's stderr (what the driver reported), in order.
fn hazards(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains("hazard") || l.contains("barrier")).collect()
}

/// `kernel`'s cases with its warps' vectors (`EMU_CUDA_SEGMENT_VECTORS=all`), its lanes one
/// at a time (`off`) and on fibers, each run successful. Time slices of 50 ms, not 2 (as
/// in `both_paths_give_the_same_outputs_statuses_and_hazards`): the slice is wall-clock
/// time, and on a loaded machine (CI's parallel tests) a fiber descheduled for 2 ms
/// between two runtime calls was preempted, changing the order its tickets record
/// (seg_shfl/512 once in CI; never reproduced on a quiet machine or under three busy
/// loops).
fn three_ways(kernel: &str) -> [SuiteRun; 3] {
    let slice = ("EMU_CUDA_PREEMPT", "50");
    let vec = run(&format!("{kernel}-all"), "auto", Some(kernel), &[("EMU_CUDA_SEGMENT_VECTORS", "all"), slice]);
    let one = run(&format!("{kernel}-off"), "auto", Some(kernel), &[("EMU_CUDA_SEGMENT_VECTORS", "off"), slice]);
    let fib = run(&format!("{kernel}-fib"), "off", Some(kernel), &[slice]);
    assert!(vec.ok && one.ok && fib.ok, "{}\n{}\n{}", vec.stderr, one.stderr, fib.stderr);
    [vec, one, fib]
}

#[test]
fn both_paths_give_the_same_outputs_statuses_and_hazards() {
    // Time slices of 50 ms, not 2: the slice is wall-clock time, and on a loaded machine a
    // fiber running shfl_chains' 140 links could pass 2 ms and be preempted, changing the
    // order its tickets record (the spinning cases still get preempted, later).
    let slice = [("EMU_CUDA_PREEMPT", "50")];
    let loops = run("loops", "auto", None, &slice);
    let fibers = run("fibers", "off", None, &slice);
    assert!(loops.ok && fibers.ok, "loops:\n{}\nfibers:\n{}", loops.stderr, fibers.stderr);
    let (l, f) = (records(&loops.outputs, 16, true), records(&fibers.outputs, 16, true));
    assert_eq!(l.len(), 93);
    for (a, b) in l.iter().zip(&f) {
        assert_eq!(a.0, b.0);
        assert_eq!(a.1, 0, "{} failed: {}", a.0, loops.stderr);
        assert!(a.2 == b.2, "{}: the loop path's outputs differ from the fibers'", a.0);
    }
    assert_eq!(hazards(&loops.stderr), hazards(&fibers.stderr));
    assert_eq!(loops.counts["hazards"], fibers.counts["hazards"]);
    // The early exits are reported on both paths, naming the barrier.
    let h = hazards(&loops.stderr).join("\n");
    assert!(h.contains("barrier-divergence-exit") && h.contains("early_exit") && h.contains("leave_loop_early"), "{h}");
    assert!(h.contains("barrier-divergence-site") && h.contains("divergent_bar"), "{h}");
    // The tree reduction's results are the block sums of the inputs (not only equal).
    let ins = records(&loops.inputs, 32, false);
    for ((name, _, out), (_, _, inp)) in l.iter().zip(&ins).filter(|(o, _)| o.0 == "tree_sum") {
        let threads = inp.len() / 32;
        let block = if threads == 1024 { 256 } else { 32 };
        for t in 0..threads {
            let b0 = t / block * block;
            let sum = (b0..b0 + block).fold(0u32, |s, u| s.wrapping_add(u32::from_le_bytes(inp[u * 32..u * 32 + 4].try_into().unwrap())));
            assert_eq!(u32::from_le_bytes(out[t * 16..t * 16 + 4].try_into().unwrap()), sum, "{name} thread {t}");
        }
    }
    // The warp sums are the sums of the squares of the inputs: lane 0 of each warp has
    // its warp's, and (after the barrier and the second round) its block's.
    for ((name, _, out), (_, _, inp)) in l.iter().zip(&ins).filter(|(o, _)| o.0 == "warp_sums") {
        let threads = inp.len() / 32;
        let block = match threads {
            1024 => 256,
            96 => 32,
            _ => continue, // blocks of 20: partial warps, fibers, device-defined lanes
        };
        let sq = |u: usize| {
            let v = u32::from_le_bytes(inp[u * 32..u * 32 + 4].try_into().unwrap()) as u64;
            v * v
        };
        let at = |t: usize, k: usize| u64::from_le_bytes(out[t * 16 + k * 8..t * 16 + k * 8 + 8].try_into().unwrap());
        for t in (0..threads).step_by(32) {
            let (b0, w0) = (t / block * block, t);
            let warp: u64 = (w0..w0 + 32).map(sq).fold(0, u64::wrapping_add);
            let blk: u64 = (b0..b0 + block).map(sq).fold(0, u64::wrapping_add);
            assert_eq!(at(t, 1), warp, "{name} warp of thread {t}");
            assert_eq!(at(t, 0), blk, "{name} block of thread {t}");
        }
    }
    // shfl_exit_part's shuffles down 1 of its input (and the elided repeat of it, and of
    // a literal 7): a lane whose source exited (index 3 mod 8 in block 0, the last 40)
    // reads 0, the others their neighbour's input (and 7).
    for ((name, _, out), (_, _, inp)) in l.iter().zip(&ins).filter(|(o, _)| o.0 == "shfl_exit_part" || o.0 == "shfl_exit_elided") {
        let threads = inp.len() / 32;
        let block = if threads == 160 { 32 } else { threads };
        let word = |t: usize, k: usize| u32::from_le_bytes(out[t * 16 + k * 4..t * 16 + k * 4 + 4].try_into().unwrap());
        let input = |u: usize| u32::from_le_bytes(inp[u * 32..u * 32 + 4].try_into().unwrap());
        let gone = |u: usize| (u < block && u % 8 == 3) || u >= threads - 40;
        for t in (0..threads).filter(|&t| !gone(t) && t % 32 != 31) {
            let (v, lit) = if gone(t + 1) { (0, 0) } else { (input(t + 1), 7) };
            let lit2 = if t % 32 >= 30 || !gone(t + 2) { 7 } else { 0 };
            assert_eq!(word(t, 0), v, "{name}/{threads} thread {t}");
            assert_eq!(word(t, 3), v ^ (lit << 24) ^ (lit2 << 16), "{name}/{threads} thread {t}: the literal and repeated shuffles");
        }
    }
    // shfl_exit_late: threads leave after the barrier (the last 40, and those whose input
    // is 3 mod 64), then the rest reduce v = in[t] + in[t+1 mod n] down their warp; a
    // shuffle whose source lane exited reads 0, one past the warp's end the lane's own
    // value (the device's results: exec/device_defined.rs). The literal and repeated
    // shuffles, elided where no lane can be gone, are exchanges here.
    let (mut wholes, mut partial) = (0, 0);
    for ((name, _, out), (_, _, inp)) in l.iter().zip(&ins).filter(|(o, _)| o.0 == "shfl_exit_late" || o.0 == "shfl_exit_late_tickets") {
        let n = inp.len() / 32;
        let input = |u: usize| u32::from_le_bytes(inp[u * 32..u * 32 + 4].try_into().unwrap());
        let word = |t: usize, k: usize| u32::from_le_bytes(out[t * 16 + k * 4..t * 16 + k * 4 + 4].try_into().unwrap());
        let gone = |u: usize| u + 40 >= n || input(u) & 63 == 3;
        let mut whole = 0;
        for w0 in (0..n).step_by(32) {
            let down = |vals: &[u32], d: usize| -> Vec<u32> {
                (0..32)
                    .map(|l| {
                        if l + d > 31 {
                            vals[l]
                        } else if gone(w0 + l + d) {
                            0
                        } else {
                            vals[l + d]
                        }
                    })
                    .collect()
            };
            let v: Vec<u32> = (0..32).map(|l| input(w0 + l).wrapping_add(input((w0 + l + 1) % n))).collect();
            let mut acc: Vec<u32> = v.iter().zip(down(&v, 16)).map(|(a, b)| a.wrapping_add(b)).collect();
            for d in [8, 4, 2] {
                acc = acc.iter().zip(down(&acc, d)).map(|(a, b)| a.wrapping_add(b)).collect();
            }
            let last = down(&acc, 1);
            let lit = down(&[7; 32], 2);
            for l in (0..32).filter(|&l| !gone(w0 + l)) {
                let t = w0 + l;
                assert_eq!(word(t, 0), acc[l].wrapping_add(last[l]), "{name}/{n} thread {t}");
                if name == "shfl_exit_late" {
                    assert_eq!(word(t, 1), v[l], "{name}/{n} thread {t}");
                }
                assert_eq!(word(t, 2), (l < 16) as u32, "{name}/{n} thread {t}: the first shuffle's predicate");
                assert_eq!(word(t, 3), last[l] ^ (lit[l] << 8), "{name}/{n} thread {t}: the literal and repeated shuffles");
            }
            whole += (0..32).all(|l| !gone(w0 + l)) as usize;
            if (0..32).all(|l| !gone(w0 + l)) {
                assert_eq!(word(w0, 0), v.iter().fold(0u32, |a, &b| a.wrapping_add(b)), "{name}/{n}: warp {w0}'s sum");
            }
        }
        partial += n / 32 - whole;
        wholes += whole;
    }
    assert!(wholes > 0 && partial > 0, "shfl_exit_late: some warps whole ({wholes}), some not ({partial})");
    // shfl_waves: three 64-bit sums reduced down each warp, their levels' shuffles fused
    // into one exchange a level (`waves`); the last 40 threads leave first. Every live
    // lane's sums follow the device's rules: a source lane that exited reads 0, one past
    // the warp's end the lane's own value.
    let mut partial = 0;
    for ((name, _, out), (_, _, inp)) in l.iter().zip(&ins).filter(|(o, _)| o.0 == "shfl_waves") {
        let n = inp.len() / 32;
        let input = |u: usize| u32::from_le_bytes(inp[u * 32..u * 32 + 4].try_into().unwrap()) as u64;
        let at = |t: usize, k: usize| u64::from_le_bytes(out[t * 16 + k * 8..t * 16 + k * 8 + 8].try_into().unwrap());
        let gone = |u: usize| u + 40 >= n;
        for w0 in (0..n).step_by(32) {
            let reduce = |f: &dyn Fn(u64) -> u64| -> Vec<u64> {
                let mut acc: Vec<u64> = (0..32).map(|l| f(input(w0 + l))).collect();
                for d in [16, 8, 4, 2, 1] {
                    acc = (0..32)
                        .map(|l| {
                            let other = if l + d > 31 {
                                acc[l]
                            } else if gone(w0 + l + d) {
                                0
                            } else {
                                acc[l + d]
                            };
                            acc[l].wrapping_add(other)
                        })
                        .collect();
                }
                acc
            };
            let (a, b, c) = (reduce(&|x| x), reduce(&|x| x * x), reduce(&|x| (x * x).wrapping_mul(x)));
            for l in (0..32).filter(|&l| !gone(w0 + l)) {
                let t = w0 + l;
                assert_eq!(at(t, 0), a[l], "{name}/{n} thread {t}: the sum of x");
                assert_eq!(at(t, 1), b[l] ^ c[l], "{name}/{n} thread {t}: the sums of x^2 and x^3");
            }
            partial += (0..32).any(|l| gone(w0 + l)) as usize;
        }
    }
    assert!(partial > 0, "shfl_waves: some warp lost lanes");
    // sfu_memo: one value's lg2 at eight call sites and its ex2 at a ninth that shares the
    // first's memo slot (the function is part of the key), each thread's own lg2 beside.
    for ((name, _, out), (_, _, inp)) in l.iter().zip(&ins).filter(|(o, _)| o.0 == "sfu_memo") {
        let word = |t: usize, k: usize| u32::from_le_bytes(out[t * 16 + k * 4..t * 16 + k * 4 + 4].try_into().unwrap());
        let mut own = std::collections::BTreeSet::new();
        for t in 0..inp.len() / 32 {
            assert_eq!((word(t, 0), word(t, 1), word(t, 2)), (0x3f80_0000, 0x4080_0000, 0x4100_0000), "{name} thread {t}");
            let x = (u32::from_le_bytes(inp[t * 32..t * 32 + 4].try_into().unwrap()) & 255) + 1;
            if x.is_power_of_two() {
                assert_eq!(f32::from_bits(word(t, 3)), x.trailing_zeros() as f32, "{name} thread {t}: lg2({x})");
            }
            own.insert(word(t, 3));
        }
        assert!(own.len() > 100, "{name}: each thread's own lg2, not a neighbour's ({} distinct)", own.len());
    }
    // shfl_chains: chain A (an f32 sum, a 64-bit sum in two fused words, an up shuffle whose
    // predicate is read, a forward branch, an index shuffle) and chain B (140 links) against
    // the device's rules for whole warps; the tickets taken after each chain are 2n values
    // of one counter in a row, their order compared with the fibers' above.
    for ((name, _, out), (_, _, inp)) in l.iter().zip(&ins).filter(|(o, _)| o.0 == "shfl_chains") {
        let n = inp.len() / 32;
        let input = |u: usize| u32::from_le_bytes(inp[u * 32..u * 32 + 4].try_into().unwrap());
        let word = |t: usize, k: usize| u32::from_le_bytes(out[t * 16 + k * 4..t * 16 + k * 4 + 4].try_into().unwrap());
        let down = |x: &[u32], d: usize, l: usize| if l + d <= 31 { x[l + d] } else { x[l] };
        let mut tickets = std::collections::BTreeSet::new();
        for w0 in (0..n).step_by(32) {
            let v: Vec<u32> = (0..32).map(|l| input(w0 + l)).collect();
            let a: Vec<u32> = (0..32).map(|l| v[l].wrapping_add(down(&v, 16, l))).collect();
            let f: Vec<f32> = (0..32).map(|l| (v[l] & 0xffff) as f32).collect();
            let sq: Vec<u64> = (0..32).map(|l| v[l] as u64 * v[l] as u64).collect();
            let mut b: Vec<u32> =
                (0..32).map(|l| if l >= 3 { a[l].wrapping_add(1000).wrapping_add(a[l - 3]) } else { a[l].wrapping_add(a[l]) }).collect();
            b.iter_mut().filter(|x| **x & 1 == 1).for_each(|x| *x ^= 23130);
            let mut x: Vec<u32> = (0..32).map(|l| (w0 + l) as u32).collect();
            for _ in 0..140 {
                x = (0..32).map(|l| x[l].wrapping_add(down(&x, 1, l))).collect();
            }
            for l in 0..32 {
                let t = w0 + l;
                let s = sq[l].wrapping_add(if l + 8 <= 31 { sq[l + 8] } else { sq[l] });
                assert_eq!(word(t, 0), b[l].wrapping_add(b[7]), "{name}/{n} thread {t}: chain A's integer");
                assert_eq!(word(t, 1), (s as u32) ^ (f[l] + f[l ^ 1]).to_bits(), "{name}/{n} thread {t}: chain A's f32 and 64-bit sums");
                assert_eq!(word(t, 2), x[l], "{name}/{n} thread {t}: chain B");
                tickets.insert(word(t, 3) >> 16);
                tickets.insert(word(t, 3) & 0xffff);
            }
        }
        // (The counter carries on from the launches before.)
        let first = *tickets.first().unwrap();
        assert_eq!(tickets, (first..first + 2 * n as u32).collect(), "{name}/{n}: the tickets");
    }
    // depot_copy reads pin, pout and pn through its copy of them in the `.local` depot
    // (simtwin-ptx `depot`: from the parameter buffer): the pointer its parity picks equals
    // the parameter read directly (0), pn, its input through the copy of pin, its index.
    for ((name, _, out), (_, _, inp)) in l.iter().zip(&ins).filter(|(o, _)| o.0 == "depot_copy") {
        let n = inp.len() / 32;
        let word = |t: usize, k: usize| u32::from_le_bytes(out[t * 16 + k * 4..t * 16 + k * 4 + 4].try_into().unwrap());
        for t in 0..n {
            let input = u32::from_le_bytes(inp[t * 32..t * 32 + 4].try_into().unwrap());
            assert_eq!([word(t, 0), word(t, 1), word(t, 2), word(t, 3)], [0, n as u32, input, t as u32], "{name} thread {t}");
        }
    }
    // tid_after_bar reads the thread's index again after each barrier (and in a function):
    // its own, not the last thread's that ran.
    for (name, _, out) in l.iter().filter(|o| o.0 == "tid_after_bar") {
        let word = |t: usize, k: usize| u32::from_le_bytes(out[t * 16 + k * 4..t * 16 + k * 4 + 4].try_into().unwrap());
        let block = if out.len() / 16 == 96 { 96 } else { 128 };
        for t in 0..out.len() / 16 {
            let x = (t % block) as u32;
            assert_eq!([word(t, 0), word(t, 1), word(t, 2), word(t, 3)], [x, x, 0, x], "{name} thread {t}");
        }
    }
    for (name, _, out) in l.iter().filter(|o| o.0 == "tid_call_plain") {
        let word = |t: usize, k: usize| u32::from_le_bytes(out[t * 16 + k * 4..t * 16 + k * 4 + 4].try_into().unwrap());
        for t in 0..out.len() / 16 {
            let x = (t % 64) as u32;
            assert_eq!([word(t, 0), word(t, 1), word(t, 2), word(t, 3)], [x, x, t as u32, (t / 64) as u32], "{name} thread {t}");
        }
    }
    // warp_more's redux.sync.add is its warp's sum of the (odd: +7) inputs; its
    // activemask in converged code is the full mask, its match.all over the warp number
    // the full mask with the predicate set.
    for ((name, _, out), (_, _, inp)) in l.iter().zip(&ins).filter(|(o, _)| o.0 == "warp_more") {
        let v = |u: usize| {
            let x = u32::from_le_bytes(inp[u * 32..u * 32 + 4].try_into().unwrap());
            if x & 1 == 1 {
                x.wrapping_add(7)
            } else {
                x
            }
        };
        let word = |t: usize, k: usize| u32::from_le_bytes(out[t * 16 + k * 4..t * 16 + k * 4 + 4].try_into().unwrap());
        for t in 0..inp.len() / 32 {
            let w0 = t / 32 * 32;
            assert_eq!(word(t, 0), (w0..w0 + 32).map(v).fold(0u32, u32::wrapping_add), "{name} thread {t}");
            assert_eq!(word(t, 1) & !2, 1, "{name} thread {t}: activemask, match.all and its predicate");
        }
    }
    // lanes_mix (vector lanes with THREAD_LOOPS=auto, one thread at a time with off):
    // the values the kernel computes from its inputs, not only equal on both paths.
    for ((name, _, out), (_, _, inp)) in l.iter().zip(&ins).filter(|(o, _)| o.0 == "lanes_mix") {
        let threads = inp.len() / 32;
        let at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        for t in 0..threads {
            let o = &out[t * 16..t * 16 + 16];
            if t >= threads - 7 {
                assert!(o.iter().all(|&b| b == 0), "{name} thread {t}: past the bound, nothing stored");
                continue;
            }
            let v = at(inp, t * 32);
            let f = f32::from_bits(at(inp, t * 32 + 8));
            let want = (v.wrapping_mul(3) ^ (v >> 5)).wrapping_add((t as u32).wrapping_sub(3));
            let sum = f + f;
            let sum = if sum.is_nan() { 0x7fff_ffff } else { sum.to_bits() };
            assert_eq!((at(o, 0), at(o, 4), u64::from_le_bytes(o[8..16].try_into().unwrap())), (want, sum, t as u64), "{name} thread {t}");
        }
    }
    // lanes_2d: rows of a 16x4 block as lanes; slot s holds y = s / W, x = s % W.
    for ((name, _, out), (_, _, inp)) in l.iter().zip(&ins).filter(|(o, _)| o.0 == "lanes_2d") {
        let threads = inp.len() / 32;
        let w = threads / 4;
        let at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        for s in 0..threads {
            let o = &out[s * 16..s * 16 + 16];
            let want = (at(inp, s * 32).wrapping_mul(5).wrapping_add((s / w) as u32), (s % w) as u32, s as u64);
            assert_eq!((at(o, 0), at(o, 4), u64::from_le_bytes(o[8..16].try_into().unwrap())), want, "{name} slot {s}");
        }
    }
    // simd_filter (16 threads of a row as vectors with THREAD_LOOPS=auto): the values of a
    // model of the kernel, not only equal on both paths (chunks that ran as vectors and
    // the chunks at n - 40 and n - 5, whose lanes branch apart and run one at a time).
    for ((name, _, out), (_, _, inp)) in l.iter().zip(&ins).filter(|(o, _)| o.0 == "simd_filter") {
        let n = (inp.len() / 32) as i64;
        let at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        for t in 0..n {
            let o = &out[t as usize * 16..t as usize * 16 + 16];
            if t >= n - 5 {
                assert!(o.iter().all(|&b| b == 0), "{name} thread {t}: left before the loop, nothing stored");
                continue;
            }
            let (mut sum, mut mx, mut mn) = (at(inp, 0), 0u32, 0i32);
            for k in 0..5i64 {
                let idx = k * 7 + t - 10;
                let m = idx.abs();
                let mi = if m < n { m } else { 2 * n - 2 - m };
                let b = inp[mi as usize + 1] as u32;
                let w = at(inp, (t * 4 + k * 4) as usize);
                let c = inp[(t + k) as usize] as u32;
                sum = b.wrapping_mul(k as u32 + 1).wrapping_add(sum).wrapping_add((w >> k) ^ c);
                mx = mx.max(c);
                mn = mn.min(idx as i32);
                if t >= n - 40 {
                    sum = sum.wrapping_add(7);
                }
            }
            let want = (sum, sum << 3, mx, (mn >> 1) as u32);
            assert_eq!((at(o, 0), at(o, 4), at(o, 8), at(o, 12)), want, "{name} thread {t}");
        }
    }
    // simd_wide: .v2 loads, 16-bit lanes, a mul.wide by a register, shl.b64, against a model.
    for ((name, _, out), (_, _, inp)) in l.iter().zip(&ins).filter(|(o, _)| o.0 == "simd_wide") {
        let at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        let h = |i: usize| u16::from_le_bytes(inp[i..i + 2].try_into().unwrap());
        for t in 0..inp.len() / 32 {
            let (r11, r12, r13, r14) = (at(inp, t * 8 + 2048), at(inp, t * 8 + 2052), at(inp, t * 8), at(inp, t * 8 + 4));
            let (lo, hi) = (r13 & 0xffff, r13 >> 16);
            let r16 = hi as u16 as i16 as i32 as u32;
            let r17 = lo * hi;
            let r18 = (lo as u16 as i16 as i32).wrapping_mul(hi as u16 as i16 as i32) as u32;
            let r19 = h(t * 2 + 512) as u32;
            let r21 = h(t * 2 + 1024) as i16 as i32 as u32;
            let n = (inp.len() / 32) as u64;
            let mut acc = ((n * 0x9E37_79B1) >> 32) as u32;
            for k in 0..3u32 {
                acc = acc.wrapping_add(r17.wrapping_mul(k).wrapping_add(r11 ^ r14)).wrapping_add(r12.wrapping_add(r21));
            }
            let want = (acc, lo.wrapping_add(r16), r18, r19 ^ (acc & 0xffff) ^ r21);
            let o = &out[t * 16..t * 16 + 16];
            assert_eq!((at(o, 0), at(o, 4), at(o, 8), at(o, 12)), want, "{name} thread {t}");
        }
    }
    // simd_chain: running sums, as one thread after another makes them (every chunk's
    // stores meet its loads: it runs one thread at a time).
    for ((name, _, out), (_, _, inp)) in l.iter().zip(&ins).filter(|(o, _)| o.0 == "simd_chain") {
        let n = inp.len() / 32;
        let at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        let mut want = 0u32;
        for k in 1..n {
            want = want.wrapping_add(at(inp, (k - 1) * 4).wrapping_mul(2));
            assert_eq!(at(out, k * 4), want, "{name} word {k}");
        }
    }
    // The module record says which path each kernel took, and why.
    let notes = |r: &SuiteRun| {
        r.counts["modules"][0]["notes"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter_map(|n| n.as_str().map(String::from))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (nl, nf) = (notes(&loops), notes(&fibers));
    assert!(nl.contains("threads of tree_sum: loops over threads: 2 barriers reached by every thread together"), "{nl}");
    assert!(nl.contains("threads of spin: fibers: a loop whose exit depends on memory it reads"), "{nl}");
    assert!(
        nl.contains("threads of shuffle: loops over threads: 1 barrier and 1 warp collective reached by every thread together"),
        "{nl}"
    );
    assert!(nl.contains("threads of warp_ops: loops over threads: 1 barrier and 11 warp collectives"), "{nl}");
    assert!(nl.contains("threads of warp_sums: loops over threads: 1 barrier and 5 warp collectives"), "{nl}");
    assert!(nl.contains("threads of warp_more: loops over threads: 11 warp collectives reached by every thread together"), "{nl}");
    assert!(nl.contains("threads of reg_mask: loops over threads: 2 warp collectives reached by every thread together"), "{nl}");
    assert!(nl.contains("threads of reg_mask_maybe: fibers: a warp collective other than an unguarded full-mask"), "{nl}");
    assert!(nl.contains("threads of warp_tickets: loops over threads: 1 barrier and 4 warp collectives"), "{nl}");
    assert!(nl.contains("threads of shfl_chain_tickets: loops over threads: 7 warp collectives reached by every thread together"), "{nl}");
    assert!(nl.contains("threads of tid_after_bar: loops over threads: 2 barriers reached by every thread together"), "{nl}");
    for k in ["lanes_mix", "lanes_2d"] {
        assert!(nl.contains(&format!("threads of {k}: one after another: no barrier or warp collective")), "{nl}");
    }
    assert_eq!(nl.matches("; as vector lanes").count(), 4, "lanes_mix, lanes_fault, lanes_2d, sfu_memo:\n{nl}");
    for k in ["simd_filter", "simd_chain", "simd_wide", "simd_fault", "simd_misaligned", "misaligned_base", "simd_bytes"] {
        let own = nl.split(&format!("threads of {k}: ")).nth(1).and_then(|n| n.lines().next()).unwrap_or_default();
        assert!(own.starts_with("one after another:") && own.contains("; as vectors of 16 threads (`simd`"), "{k}: {nl}");
    }
    // What keeps a kernel one thread at a time is named (here: a call).
    let own = nl.split("threads of tid_call_plain: ").nth(1).and_then(|n| n.lines().next()).unwrap_or_default();
    assert!(own.contains("; nor as vectors of 16 threads: call"), "{own}");
    assert!(
        nl.contains(
            "threads of shfl_after_exit: loops over threads: 1 warp collective reached by every thread together (lanes that exit before the first are left out of their warp's shuffles)"
        ),
        "{nl}"
    );
    assert!(nl.contains("threads of shfl_exit_64: loops over threads: 1 barrier and 2 warp collectives reached by every thread together (early exits probed"), "{nl}");
    // Exits the probe cannot see, or after a split point, where every collective is a
    // shuffle: the loop path, every block taking its elided shuffles as exchanges.
    for k in ["shfl_exit_dirty", "shfl_exit_late"] {
        assert!(
            nl.contains(&format!("threads of {k}: loops over threads: "))
                && nl.contains("(lanes that exit, before the first or after it, are left out of their warp's shuffles)"),
            "{k}: {nl}"
        );
    }
    assert!(nl.contains("shfl_exit_late: loops over threads: 1 barrier and 5 warp collectives reached by every thread together (lanes that exit, before the first or after it, are left out of their warp's shuffles); 1 more shuffle of a literal or repeating an earlier one, done without an exchange only where no lane can have exited: they are exchanges; 1 more shuffle rides in the exchange of an independent one (`waves`)"), "{nl}");
    assert!(nl.contains("threads of shfl_exit_late_tickets: loops over threads: 1 barrier and 7 warp collectives reached by every thread together (lanes that exit, before"), "{nl}");
    assert!(nl.contains("threads of vote_exit_late: fibers: an early exit (the branch at PTX line"), "{nl}");
    assert!(h.contains("warp-lane-exited") && h.contains("shfl_exit_late"), "{h}");
    assert!(nl.contains("threads of shfl_exit_part: loops over threads: 1 barrier and 6 warp collectives reached by every thread together (lanes that exit before the first are left out of their warp's shuffles)"), "{nl}");
    assert!(nl.contains("threads of shfl_exit_elided: loops over threads: 1 barrier and 3 warp collectives reached by every thread together (lanes that exit before the first are left out of their warp's shuffles); 3 more shuffles of a literal or repeating an earlier one, done without an exchange in blocks whose warps lose no lanes"), "{nl}");
    // Its warps that lost lanes ran the loop path: the hazard of each collective is
    // reported alike (compared above), and shuffles read 0 from exited lanes.
    assert!(h.contains("warp-lane-exited") && h.contains("shfl_exit_part"), "{h}");
    assert!(nl.contains("threads of shfl_half_mask: fibers: a warp collective other than an unguarded full-mask"), "{nl}");
    assert!(nl.contains("threads of shfl_uniform_forms: loops over threads: 10 warp collectives reached by every thread together"), "{nl}");
    assert!(
        nl.contains(
            "threads of shfl_elided: loops over threads: 5 warp collectives reached by every thread together; 2 more shuffles of a literal or repeating an earlier one, done without an exchange; 1 more shuffle rides in the exchange of an independent one (`waves`)"
        ),
        "{nl}"
    );
    assert!(
        nl.contains("threads of shfl_waves: loops over threads: 1 barrier and 5 warp collectives reached by every thread together (lanes that exit, before the first or after it, are left out of their warp's shuffles); 15 more shuffles of a literal or repeating an earlier one, done without an exchange only where no lane can have exited: they are exchanges; 25 more shuffles ride in the exchange of an independent one (`waves`)"),
        "{nl}"
    );
    assert!(h.contains("warp-lane-exited") && h.contains("shfl_waves"), "{h}");
    assert!(
        nl.contains("threads of shfl_chains: loops over threads: 146 warp collectives reached by every thread together; 144 shuffles in 2 chains run for a warp's lanes at once (`chains`)"),
        "{nl}"
    );
    assert!(nf.contains("threads of tree_sum: fibers (EMU_CUDA_THREAD_LOOPS=off)"), "{nf}");
}

#[test]
fn an_error_mode_exit_hazard_fails_the_launch_alike_on_both_paths() {
    for case in ["early_exit", "leave_loop_early"] {
        let env = [("EMU_CUDA_HAZARDS", "error")];
        let (l, f) =
            (run(&format!("{case}-err-loops"), "auto", Some(case), &env), run(&format!("{case}-err-fibers"), "off", Some(case), &env));
        let (rl, rf) = (records(&l.outputs, 16, true), records(&f.outputs, 16, true));
        assert_eq!(rl.len(), 1, "{}", l.stderr);
        assert_eq!(rl[0].1, 719, "{case}: {}", l.stderr);
        assert_eq!(rl[0].1, rf[0].1);
        let msg = |s: &str| s.lines().filter(|l| l.contains("barrier-divergence-exit")).map(String::from).collect::<Vec<_>>();
        assert!(!msg(&l.stderr).is_empty(), "{}", l.stderr);
        assert_eq!(msg(&l.stderr), msg(&f.stderr));
    }
    // Lanes that exited after the barrier, missing from their warp's first shuffle: the
    // warp-lane-exited hazard stops the launch at the same shuffle, naming the same lanes.
    let env = [("EMU_CUDA_HAZARDS", "error")];
    let case = "shfl_exit_late_tickets";
    let (l, f) = (run("late-err-loops", "auto", Some(case), &env), run("late-err-fibers", "off", Some(case), &env));
    let (rl, rf) = (records(&l.outputs, 16, true), records(&f.outputs, 16, true));
    assert_eq!((rl.len(), rl[0].1), (1, 719), "{}", l.stderr);
    assert_eq!(rl[0].1, rf[0].1);
    let msg = |s: &str| s.lines().filter(|l| l.contains("warp-lane-exited")).map(String::from).collect::<Vec<_>>();
    assert!(!msg(&l.stderr).is_empty(), "{}", l.stderr);
    assert_eq!(msg(&l.stderr), msg(&f.stderr));
}

#[test]
fn thread_loops_on_reports_kernels_that_keep_fibers_and_a_bad_value_is_refused() {
    let on = run("on", "on", Some("shfl_half_mask"), &[]);
    assert!(on.ok, "{}", on.stderr);
    assert!(on.stderr.contains("threads of shfl_half_mask: fibers: a warp collective other than an unguarded full-mask"), "{}", on.stderr);
    assert!(on.stderr.contains("(`shfl.sync.bfly.b32"), "{}", on.stderr);
    assert!(!on.stderr.contains("threads of tree_sum"), "{}", on.stderr);
    let bad = run("bad", "sometimes", Some("tree_sum"), &[]);
    assert!(!bad.ok);
    assert!(bad.stderr.contains("EMU_CUDA_THREAD_LOOPS"), "{}", bad.stderr);
}

/// A case file whose one launch fails, run with the loop path on and off: each run, its
/// launch status and what the driver's error names (`CUDA_ERROR_... (kernel K block (..)
/// thread (..)`).
fn failing_on_both_paths(tag: &str, cases: &str) -> [(SuiteRun, i32, Option<String>); 2] {
    failing_with(tag, cases, &[])
}

/// `failing_on_both_paths` with `env` for the loop path's run.
fn failing_with(tag: &str, cases: &str, env: &[(&str, &str)]) -> [(SuiteRun, i32, Option<String>); 2] {
    ["auto", "off"].map(|loops| {
        let r = run_cases(&format!("{tag}-{loops}"), loops, cases, None, if loops == "auto" { env } else { &[] });
        let rec = records(&r.outputs, 16, true);
        assert_eq!(rec.len(), 1, "{}", r.stderr);
        let who = r.stderr.lines().find_map(|l| l.split_once("failed: ").map(|(_, e)| e.split(": ").next().unwrap_or("").to_string()));
        let status = rec[0].1;
        (r, status, who)
    })
}

#[test]
fn a_fault_after_a_collective_names_the_same_thread_on_both_paths() {
    // warp_fault faults in lanes 5 and 31 after a shuffle: on fibers the shuffle's last
    // lane goes on first, so thread 31 faults first (a sweep would name thread 5).
    let [(l, sl, wl), (f, sf, wf)] = failing_on_both_paths("fault", "fault_cases.txt");
    assert_eq!((sl, sf), (700, 700), "{}\n{}", l.stderr, f.stderr);
    assert_eq!(wl, Some("CUDA_ERROR_ILLEGAL_ADDRESS (kernel warp_fault block (0,0,0) thread (31,0,0)".to_string()), "{}", l.stderr);
    assert_eq!(wl, wf);
    let notes = l.counts["modules"][0]["notes"].to_string();
    assert!(notes.contains("threads of warp_fault: loops over threads: 1 warp collective"), "{notes}");
}

#[test]
fn a_fault_inside_a_chunk_of_vector_lanes_names_its_thread() {
    // The lanes runner names only the chunk (64 threads from thread 64); the executor
    // replays it one thread at a time, and the fault names thread 13 of block 1, as with
    // the loop path off (one thread at a time throughout).
    let [(l, sl, wl), (f, sf, wf)] = failing_on_both_paths("lanes-fault", "lanes_fault_cases.txt");
    assert_eq!((sl, sf), (700, 700), "{}\n{}", l.stderr, f.stderr);
    assert_eq!(wl, Some("CUDA_ERROR_ILLEGAL_ADDRESS (kernel lanes_fault block (1,0,0) thread (13,0,0)".to_string()), "{}", l.stderr);
    assert_eq!(wl, wf);
    let notes = l.counts["modules"][0]["notes"].to_string();
    let own = notes.split("threads of lanes_fault: ").nth(1).and_then(|n| n.split('"').next()).unwrap_or_default();
    assert!(own.starts_with("one after another:") && own.contains("; as vector lanes"), "{notes}");
}

#[test]
fn a_misaligned_parameter_base_traps_at_the_first_thread_on_both_paths() {
    // The load's alignment is the same for every thread (its parameter plus 32 t + 2):
    // the runner's once-per-call check fails, so the checked code runs and thread 0
    // traps after its own store, as without the check.
    let [(l, sl, wl), (f, sf, wf)] = failing_on_both_paths("misaligned", "misaligned_cases.txt");
    assert_eq!((sl, sf), (716, 716), "{}\n{}", l.stderr, f.stderr);
    assert_eq!(wl, Some("CUDA_ERROR_MISALIGNED_ADDRESS (kernel misaligned_base block (0,0,0) thread (0,0,0)".to_string()), "{}", l.stderr);
    assert_eq!(wl, wf);
    // With a barrier (the loop path): the loop runner's check fails, the block runs on
    // fibers, and the thread the fibers name traps on both paths.
    let [(l, sl, wl), (f, sf, wf)] = failing_on_both_paths("misaligned-bar", "misaligned_bar_cases.txt");
    assert_eq!((sl, sf), (716, 716), "{}\n{}", l.stderr, f.stderr);
    assert!(
        wl.as_ref().is_some_and(|w| w.starts_with("CUDA_ERROR_MISALIGNED_ADDRESS (kernel misaligned_bar block (0,0,0) thread")),
        "{}",
        l.stderr
    );
    assert_eq!(wl, wf);
    let notes = l.counts["modules"][0]["notes"].to_string();
    assert!(notes.contains("threads of misaligned_bar: loops over threads"), "{notes}");
}

#[test]
fn a_fault_or_a_misaligned_access_in_a_chunk_of_16_threads_names_its_thread() {
    // Thread 77's offset does not fit the vector form: its chunk (threads 64-79) runs one
    // thread at a time and the fault names block 1, thread 13, as with the loop path off.
    let [(l, sl, wl), (f, sf, wf)] = failing_on_both_paths("simd-fault", "simd_fault_cases.txt");
    assert_eq!((sl, sf), (700, 700), "{}\n{}", l.stderr, f.stderr);
    assert_eq!(wl, Some("CUDA_ERROR_ILLEGAL_ADDRESS (kernel simd_fault block (1,0,0) thread (13,0,0)".to_string()), "{}", l.stderr);
    assert_eq!(wl, wf);
    // Thread 21's load is 2 bytes off: its chunk bails, and thread 21 traps.
    let [(l, sl, wl), (f, sf, wf)] = failing_on_both_paths("simd-misaligned", "simd_misaligned_cases.txt");
    assert_eq!((sl, sf), (716, 716), "{}\n{}", l.stderr, f.stderr);
    assert_eq!(wl, Some("CUDA_ERROR_MISALIGNED_ADDRESS (kernel simd_misaligned block (0,0,0) thread (21,0,0)".to_string()), "{}", l.stderr);
    assert_eq!(wl, wf);
    let notes = l.counts["modules"][0]["notes"].to_string();
    assert!(
        notes.contains("threads of simd_misaligned: one after another: ") && notes.contains("as vectors of 16 threads (`simd`"),
        "{notes}"
    );
}

/// seg_vec's outputs: per thread t (16 bytes), its 32-bit sum, the low word of its 64-bit
/// sum, and in lane 0 of each warp the warp's 64-bit sum; the last warp exits at once
/// (its records keep what the runner put there, compared only between runs).
fn seg_vec_model(inp: &[u8], threads: usize) -> Vec<(usize, usize, u64)> {
    let word = |u: usize| u32::from_le_bytes(inp[u * 4..u * 4 + 4].try_into().unwrap());
    let w = 2 * threads as i64;
    let mirror = |x: i64| -> usize {
        let a = x.abs();
        (if a < w { a } else { 2 * w - 2 - a }) as usize
    };
    let mut out = Vec::new();
    let sums: Vec<(u32, u64)> = (0..threads - 32)
        .map(|t| {
            let x = 2 * t as i64;
            let (a, b, c) = (word(mirror(x - 1)), word(mirror(x)), word(mirror(x + 1)));
            let mut s32 = a.wrapping_add(b.wrapping_mul(2)).wrapping_add(c.wrapping_mul(3));
            if t % 32 < 16 {
                s32 = s32.wrapping_add(100);
            }
            let mut s64 = (a as u64) * 3 + (b as u64) * 4 + (c as u64) * 5;
            if word(8 * t + 1) & 1 != 0 {
                s64 += 7;
            }
            (s32, s64)
        })
        .collect();
    for (t, &(s32, s64)) in sums.iter().enumerate() {
        out.push((t, 0, s32 as u64));
        out.push((t, 1, s64 as u32 as u64));
        if t % 32 == 0 {
            out.push((t, 2, sums[t..t + 32].iter().map(|s| s.1).fold(0u64, u64::wrapping_add)));
        }
    }
    out
}

#[test]
fn a_warps_two_vectors_give_what_its_lanes_one_at_a_time_give() {
    // EMU_CUDA_SEGMENT_VECTORS=all: seg_vec's first segment runs a warp at a time as two
    // vectors of 16 lanes (a span of every other word, gathers at the mirrored edges,
    // 64-bit products, half-warps apart, a store, whole warps exiting), then one lane at a
    // time from the branch on a loaded word. Outputs, statuses and hazards equal the
    // lanes one at a time and the fibers', and a model of the kernel.
    // (`all`: its form is smaller than the default asks; `off`: none.)
    let [vec, one, fib] = three_ways("seg_vec");
    let (v, o, f) = (records(&vec.outputs, 16, true), records(&one.outputs, 16, true), records(&fib.outputs, 16, true));
    assert_eq!(v.len(), 2);
    for ((a, b), c) in v.iter().zip(&o).zip(&f) {
        assert_eq!((a.1, b.1, c.1), (0, 0, 0), "{}", vec.stderr);
        assert!(a.2 == b.2 && a.2 == c.2, "{}: the warps' vectors give other outputs", a.0);
    }
    assert_eq!(hazards(&vec.stderr), hazards(&fib.stderr));
    let ins = records(&vec.inputs, 32, false);
    for ((_, _, out), (_, _, inp)) in v.iter().zip(&ins) {
        let threads = inp.len() / 32;
        for (t, k, want) in seg_vec_model(inp, threads) {
            let got = if k == 2 {
                u64::from_le_bytes(out[t * 16 + 8..t * 16 + 16].try_into().unwrap())
            } else {
                u32::from_le_bytes(out[t * 16 + 4 * k..t * 16 + 4 * k + 4].try_into().unwrap()) as u64
            };
            assert_eq!(got, want, "seg_vec/{threads} thread {t} word {k}");
        }
    }
    // The module says which form ran.
    let nv = vec.counts["modules"][0]["notes"].to_string();
    assert!(
        nv.contains("threads of seg_vec: loops over threads: ")
            && nv.contains("; from its start a warp's lanes as two vectors of 16 (`simd`), one lane at a time after 1 cut"),
        "{nv}"
    );
    let no = one.counts["modules"][0]["notes"].to_string();
    assert!(!no.contains("two vectors of 16"), "{no}");
}

#[test]
fn a_fault_inside_a_warps_vectors_names_its_thread() {
    // Thread 45's load is 2 GiB past the input: the warp's vectors fault inside (the
    // gather), the runtime's recovery point undoes their store and the lanes run one at
    // a time, where thread 45 (block 0) faults as on fibers.
    let [(l, sl, wl), (f, sf, wf)] = failing_with("seg-fault", "seg_fault_cases.txt", &[("EMU_CUDA_SEGMENT_VECTORS", "all")]);
    assert_eq!((sl, sf), (700, 700), "{}\n{}", l.stderr, f.stderr);
    assert_eq!(wl, Some("CUDA_ERROR_ILLEGAL_ADDRESS (kernel seg_fault block (0,0,0) thread (45,0,0)".to_string()), "{}", l.stderr);
    assert_eq!(wl, wf);
    let notes = l.counts["modules"][0]["notes"].to_string();
    assert!(notes.contains("threads of seg_fault: loops over threads: ") && notes.contains("two vectors of 16"), "{notes}");
}

#[test]
fn a_warps_vectors_load_and_store_narrow_elements_through_generic_addresses() {
    // seg_narrow's first segment as the warp's two vectors (signed and unsigned bytes and
    // halfwords widened as their types say, bytes and halfwords stored from the lanes'
    // low bits, every access generic) against the lanes one at a time and a model.
    let vec = run("segnarrow-all", "auto", Some("seg_narrow"), &[("EMU_CUDA_SEGMENT_VECTORS", "all")]);
    let one = run("segnarrow-off", "auto", Some("seg_narrow"), &[("EMU_CUDA_SEGMENT_VECTORS", "off")]);
    assert!(vec.ok && one.ok, "{}\n{}", vec.stderr, one.stderr);
    let (v, o) = (records(&vec.outputs, 16, true), records(&one.outputs, 16, true));
    let inp = &records(&vec.inputs, 32, false)[0].2;
    let n = inp.len() / 32;
    let s: Vec<u32> = (0..n)
        .map(|g| {
            let half = |at: usize| [inp[at], inp[at + 1]];
            let h = 16 * n;
            let sb = inp[h + g] as i8 as i32 as u32;
            let ub = inp[h + 4 * n + g] as u32;
            let sh = i16::from_le_bytes(half(h + 8 * n + 2 * g)) as i32 as u32;
            let uh = u16::from_le_bytes(half(h + 12 * n + 2 * g)) as u32;
            sb.wrapping_mul(3).wrapping_add(ub).wrapping_add(sh.wrapping_mul(5)).wrapping_add(uh)
        })
        .collect();
    let mut want = vec![0u8; 16 * n];
    for g in 0..n {
        want[4 * g..4 * g + 4].copy_from_slice(&s[g].to_le_bytes());
        want[4 * n + g] = s[g] as u8;
        want[6 * n + 2 * g..6 * n + 2 * g + 2].copy_from_slice(&(s[g] as u16).to_le_bytes());
        let next = if g % 32 == 31 { s[g] } else { s[g + 1] };
        want[8 * n + 4 * g..8 * n + 4 * g + 4].copy_from_slice(&next.to_le_bytes());
    }
    let region = |b: &[u8]| [&b[..5 * n], &b[6 * n..12 * n]].concat();
    assert_eq!((v[0].1, o[0].1), (0, 0), "{}", vec.stderr);
    assert!(region(&v[0].2) == region(&want), "the warp's vectors differ from the model");
    assert!(region(&o[0].2) == region(&want), "the lanes one at a time differ from the model");
    let nv = vec.counts["modules"][0]["notes"].to_string();
    assert!(nv.contains("threads of seg_narrow: loops over threads: 1 warp collective reached by every thread together; from its start a warp's lanes as two vectors of 16 (`simd`)"), "{nv}");
}

/// seg_shfl's words 0 and 2 for the threads of input `inp` (32 bytes a thread, its two
/// operands at 0 and 8): per warp, x = in0 ^ in1, v after n/2 butterflies by 1, the sum down the warp, and bfly(v, 3) +
/// idx(x, 5) in groups of 8 + (up(x, 2) where valid, else 1000) + the two field inserts.
fn seg_shfl_model(inp: &[u8], threads: usize) -> Vec<(u32, u32)> {
    let word = |t: usize, k: usize| u32::from_le_bytes(inp[32 * t + 4 * k..32 * t + 4 * k + 4].try_into().unwrap());
    let mut out = Vec::new();
    for w in 0..threads / 32 {
        let x: Vec<u32> = (0..32).map(|l| word(32 * w + l, 0) ^ word(32 * w + l, 2)).collect();
        let mut v = x.clone();
        for _ in 0..threads / 2 {
            v = (0..32).map(|l| v[l].wrapping_add(v[l ^ 1])).collect();
        }
        let mut sum = x.clone();
        for s in [16, 8, 4, 2, 1] {
            sum = (0..32).map(|l| sum[l].wrapping_add(if l + s <= 31 { sum[l + s] } else { sum[l] })).collect();
        }
        for l in 0..32 {
            let up = if l >= 2 { x[l - 2] } else { 1000 };
            let (in0, in1) = (word(32 * w + l, 0), word(32 * w + l, 2));
            let field = (in0 & !(0x1ff << 5)) | ((x[l] << 5) & (0x1ff << 5));
            let joined = ((x[l] as u64 | (in1 as u64) << 32) >> 7) as u32;
            let f = field.wrapping_add(joined);
            out.push((v[l ^ 3].wrapping_add(x[(l & 0x18) | 5]).wrapping_add(up).wrapping_add(f), sum[l]));
        }
    }
    out
}

/// `kernel`'s cases (blocks of `blocks` threads) three ways (`three_ways`): every case
/// successful, the same outputs and hazards on each, every thread's four words as `model`
/// (inputs, threads, block) gives them; the module note of the vector form's run.
fn three_ways_against(kernel: &str, blocks: &[usize], model: fn(&[u8], usize, usize) -> Vec<[u32; 4]>) -> String {
    let [vec, one, fib] = three_ways(kernel);
    let (v, o, f) = (records(&vec.outputs, 16, true), records(&one.outputs, 16, true), records(&fib.outputs, 16, true));
    let ins = records(&vec.inputs, 32, false);
    assert_eq!(v.len(), blocks.len());
    for ((((a, b), c), (_, _, inp)), block) in v.iter().zip(&o).zip(&f).zip(&ins).zip(blocks) {
        assert_eq!((a.1, b.1, c.1), (0, 0, 0), "{}", vec.stderr);
        assert!(a.2 == b.2 && a.2 == c.2, "{kernel}/{block}: the warps' vectors give other outputs");
        for (g, want) in model(inp, inp.len() / 32, *block).iter().enumerate() {
            let got: Vec<u32> = (0..4).map(|k| u32::from_le_bytes(a.2[g * 16 + 4 * k..g * 16 + 4 * k + 4].try_into().unwrap())).collect();
            assert_eq!(got, want, "{kernel}/{block} thread {g}");
        }
    }
    assert_eq!(hazards(&vec.stderr), hazards(&fib.stderr));
    vec.counts["modules"][0]["notes"].to_string()
}

/// seg_sh's outputs by thread (four words each), as the kernel defines them.
fn seg_sh_model(inp: &[u8], threads: usize, block: usize) -> Vec<[u32; 4]> {
    let word = |g: usize, k: usize| u32::from_le_bytes(inp[g * 32 + 8 * k..g * 32 + 8 * k + 4].try_into().unwrap());
    (0..threads)
        .map(|g| {
            let (b, t) = (g / block * block, g % block);
            let t1 = (t + 1) % block;
            let x1 = word(b + t1, 0);
            let got_before = x1.wrapping_mul(3).wrapping_add(t1 as u32).wrapping_add(word(b + (t ^ 1), 1));
            let branch = if t < 40 { word(g, 0).wrapping_add(1) } else { 7 };
            [got_before, word(g, 0) ^ t as u32, branch, x1 & 0xffff]
        })
        .collect()
}

/// seg_tile's outputs by thread: the 3-tap column sum of the tile (four times the mirrored
/// byte plus the element's index over 5) at its row and column, and that plus the next
/// lane's (its own at lane 31).
fn seg_tile_model(inp: &[u8], threads: usize, block: usize) -> Vec<[u32; 4]> {
    let mirror = |v: i32, n: i32| if v.abs() < n { v.abs() } else { 2 * n - 2 - v.abs() };
    let sums: Vec<u32> = (0..threads)
        .map(|g| {
            let (b, t) = ((g / block) as i32, (g % block) as i32);
            let (x0, y0) = ((b & 1) * 16 - 2, (b >> 1) * 8 - 2);
            let tile = |ty: i32, tx: i32| {
                4 * u32::from(inp[(mirror(y0 + ty, 12) * 96 + mirror(x0 + tx, 30)) as usize]) + (ty * 20 + tx) as u32 / 5
            };
            let (r, c) = (t / 16, t % 16 + 2);
            tile(r, c) + 2 * tile(r + 1, c) + tile(r + 2, c)
        })
        .collect();
    (0..threads).map(|g| [sums[g], sums[g] + if g % 32 < 31 { sums[g + 1] } else { sums[g] }, 0, 0]).collect()
}

#[test]
fn a_warps_vectors_fill_a_shared_tile_in_a_loop_whose_passes_differ_between_lanes() {
    // seg_tile: the fill loop from %tid.x by %ntid.x runs as the warp's two vectors while
    // every lane of a half goes on (a half whose lanes part bails: lanes below 4 of a
    // 128-thread block pass three times; a 64-thread block passes five times, past the
    // store passes a form logs); each pass's shared stores under their own site ids; the
    // mirrored byte at row * pitch + column through 64-bit products of the pitch (offsets
    // of two lanes' values added); nvcc's 16-bit division idiom (a literal of a 16-bit
    // lane is its low 16 bits). Against the lanes one at a time, the fibers and a model.
    let nv = three_ways_against("seg_tile", &[128, 64], seg_tile_model);
    assert!(
        nv.contains("threads of seg_tile: loops over threads: ")
            && nv.contains("from its start a warp's lanes as two vectors of 16 (`simd`)"),
        "{nv}"
    );
}

/// seg_passes' outputs by thread: word %tid.x % 24 as the threads one after another leave
/// it (each thread's elements i = %tid.x, %tid.x + 32 store i * 7 + its input word), and
/// that plus the next lane's (its own at lane 31).
fn seg_passes_model(inp: &[u8], threads: usize, block: usize) -> Vec<[u32; 4]> {
    let word = |g: usize| u32::from_le_bytes(inp[g * 32..g * 32 + 4].try_into().unwrap());
    let mut out = Vec::new();
    for b in (0..threads).step_by(block) {
        let mut sm = [0u32; 24];
        for t in 0..block {
            for i in (t..48).step_by(block) {
                sm[i % 24] = (i as u32).wrapping_mul(7).wrapping_add(word(b + t));
            }
        }
        let v: Vec<u32> = (0..block).map(|t| sm[t % 24]).collect();
        out.extend((0..block).map(|t| [v[t], v[t].wrapping_add(if t % 32 < 31 { v[t + 1] } else { v[t] }), 0, 0]));
    }
    out
}

#[test]
fn a_warps_passes_whose_stores_meet_run_its_lanes_one_at_a_time() {
    // seg_passes: a lane's second pass of the loop overwrites words other lanes stored in
    // their first; each pass logs under its own site id, so the warp's commit finds them
    // meeting and its lanes run one at a time (one site id for both passes would leave
    // the first pass's later lanes' words where the threads leave the earlier ones').
    three_ways_against("seg_passes", &[32], seg_passes_model);
}

#[test]
fn a_barrier_kernels_warps_take_their_vectors_into_shared_memory_one_warp_after_another() {
    // seg_sh: blocks of 4, 3 and 2 warps (the last of 16 lanes) whose first segment each
    // whole warp runs as two vectors: shared stores of consecutive words, a scatter to
    // the neighbour's word and a halfword run; warp 1 takes the branch on %tid.x < 40
    // apart, so it runs one lane at a time within the same sweep. After the barrier
    // the threads read the words the others stored. Against the lanes one at a time,
    // the fibers and a model.
    let nv = three_ways_against("seg_sh", &[128, 96, 80], seg_sh_model);
    assert!(
        nv.contains("threads of seg_sh: loops over threads: ")
            && nv.contains("from its start a warp's lanes as two vectors of 16 (`simd`)"),
        "{nv}"
    );
}

/// seg_resume's outputs by thread (four words each), as the kernel defines them.
fn seg_resume_model(inp: &[u8], threads: usize, block: usize) -> Vec<[u32; 4]> {
    let word = |g: usize, k: usize| u32::from_le_bytes(inp[g * 32 + 8 * k..g * 32 + 8 * k + 4].try_into().unwrap());
    (0..threads)
        .map(|g| {
            let t = g % block;
            if t >= 72 {
                return [0; 4];
            }
            let set = if t < 40 { 5 } else { 9 };
            let next = word(g + 1, 0).wrapping_mul(3).wrapping_add(t as u32 + 1);
            let v = if t < 40 { next.wrapping_add(set) } else { word(g, 1) };
            let halves = (next as u16 as i16 as i32).wrapping_add((next >> 16) as u16 as i16 as i32) as u32;
            [v.wrapping_add(word(g, 1) & 0xffff), set, halves, 0]
        })
        .collect()
}

#[test]
fn a_barrier_kernels_warps_take_their_vectors_on_from_the_barrier_with_registers_from_their_frames() {
    // seg_resume: after its barrier each whole warp runs as two vectors again, its
    // registers read from the lanes' frames (an address as a base plus offsets, a
    // predicate, a halfword, a value the start's form takes as the same in every lane,
    // which warp 1's lanes hold apart: that warp's form must see it and run its lanes one
    // at a time), a pair of signed halfwords per lane from shared memory, exits from thread
    // 72 on (taken apart by warp 2 of a block of 96). Blocks of 4, 3 and 2 warps (the last
    // of 16 lanes). Against the lanes one at a time, the fibers and a model.
    let nv = three_ways_against("seg_resume", &[128, 96, 80], seg_resume_model);
    assert!(
        nv.contains("threads of seg_resume: loops over threads: ")
            && nv.contains("after 1 of its barriers a warp's lanes as two vectors of 16 too"),
        "{nv}"
    );
}

#[test]
fn a_warps_vectors_whose_store_sites_meet_run_its_lanes_one_at_a_time() {
    // seg_overlap: each thread stores its word, then its neighbour's; one thread after
    // another leave each word its own thread's value, which the form (store after store
    // for all lanes) would not: its commit finds the two sites' bytes meet.
    let [vec, one, fib] = three_ways("seg_overlap");
    let (v, o, f) = (records(&vec.outputs, 16, true), records(&one.outputs, 16, true), records(&fib.outputs, 16, true));
    let ins = records(&vec.inputs, 32, false);
    let (a, inp) = (&v[0], &ins[0].2);
    assert_eq!((a.1, o[0].1, f[0].1), (0, 0, 0), "{}", vec.stderr);
    assert!(a.2 == o[0].2 && a.2 == f[0].2, "seg_overlap: the warps' vectors give other outputs");
    for g in 0..inp.len() / 32 {
        let want = u32::from_le_bytes(inp[g * 32..g * 32 + 4].try_into().unwrap());
        assert_eq!(u32::from_le_bytes(a.2[g * 16..g * 16 + 4].try_into().unwrap()), want, "seg_overlap thread {g}");
    }
    let nv = vec.counts["modules"][0]["notes"].to_string();
    assert!(
        nv.contains("threads of seg_overlap: loops over threads: ")
            && nv.contains("from its start a warp's lanes as two vectors of 16 (`simd`)"),
        "{nv}"
    );
}

#[test]
fn a_warps_vectors_perform_its_shuffles_and_hand_its_lanes_on_in_the_fibers_order() {
    // seg_shfl's first segment as the warp's two vectors through its shuffles (a loop of
    // n/2 butterflies, a sum down the warp, index and up shuffles, stores after them), to
    // the cut before every lane's ticket: the tickets (then lane 0's second) must come out
    // as on fibers, which hand the lanes on with the lane that completed the last shuffle
    // first. With 64 threads every warp's form reaches the cut; with 512 (256 butterflies)
    // a warp that starts while others of its block wait stops inside the loop (the
    // fairness budget) and the runner goes on from there. From the cut the code reaches
    // only the exit: a warp whose form reached it runs its lanes on there in the same batch
    // (ptx_rt.h `tail_lanes`), in the runner's order, which the tickets show. Against the
    // lanes one at a time, the fibers and a model.
    let [vec, one, fib] = three_ways("seg_shfl");
    let (v, o, f) = (records(&vec.outputs, 16, true), records(&one.outputs, 16, true), records(&fib.outputs, 16, true));
    let ins = records(&vec.inputs, 32, false);
    assert_eq!(v.len(), 2);
    for (((a, b), c), (_, _, inp)) in v.iter().zip(&o).zip(&f).zip(&ins) {
        let n = inp.len() / 32;
        assert_eq!((a.1, b.1, c.1), (0, 0, 0), "{}", vec.stderr);
        assert!(a.2 == c.2, "seg_shfl/{n}: the warp's vectors give other outputs or tickets than the fibers");
        assert!(b.2 == c.2, "seg_shfl/{n}: the lanes one at a time give other outputs or tickets than the fibers");
        let at = |t: usize, k: usize| u32::from_le_bytes(a.2[16 * t + 4 * k..16 * t + 4 * k + 4].try_into().unwrap());
        for (t, (w0, w2)) in seg_shfl_model(inp, n).into_iter().enumerate() {
            assert_eq!((at(t, 0), at(t, 2)), (w0, w2), "seg_shfl/{n} thread {t}");
        }
    }
    let nv = vec.counts["modules"][0]["notes"].to_string();
    assert!(
        nv.contains("threads of seg_shfl: loops over threads: 9 warp collectives reached by every thread together")
            && nv.contains("from its start a warp's lanes as two vectors of 16 (`simd`), through 9 shuffles of its own, one lane at a time after 1 cut (1 on to the exit in the same batch)"),
        "{nv}"
    );
}

/// seg_half's outputs by thread (four words each), as the kernel defines them.
fn seg_half_model(inp: &[u8], threads: usize, _block: usize) -> Vec<[u32; 4]> {
    let word = |g: usize, k: usize| u32::from_le_bytes(inp[g * 32 + 8 * k..g * 32 + 8 * k + 4].try_into().unwrap());
    let s16 = |v: u32| v as u16 as i16;
    let sums: Vec<u64> = (0..threads)
        .map(|g| {
            let b = ((u64::from(word(g, 0)) * u64::from(word(g, 1))) as i64 >> 7) as u64;
            (b as u32 as i32 as i64 as u64).wrapping_add(u64::from(b as u32))
        })
        .collect();
    // shfl.down by d, clamp 31: lane l reads lane l + d, or its own value past lane 31.
    let down = |v: &[u64], d: usize| -> Vec<u64> {
        (0..v.len()).map(|g| if g % 32 + d < 32 { v[g].wrapping_add(v[g + d]) } else { v[g].wrapping_add(v[g]) }).collect()
    };
    let reduced = down(&down(&sums, 16), 8);
    (0..threads)
        .map(|g| {
            let (x, y) = (word(g, 0) & 0xffff, word(g, 1) & 0xffff);
            let neg = x.wrapping_neg() & 0xffff;
            let max_abs = if s16(x) >= s16(neg) { x } else { neg };
            let (sum, diff) = ((x + y) & 0xffff, x.wrapping_sub(y) & 0xffff);
            let abs_y = u32::from(s16(y).unsigned_abs());
            let lo = if s16(sum) <= s16(diff) { sum } else { diff };
            [
                max_abs * x.min(y),
                abs_y | sum.max(diff) << 16,
                s16(lo) as i32 as u32,
                (reduced[g] as u32).wrapping_add((reduced[g] >> 32) as u32),
            ]
        })
        .collect()
}

#[test]
fn a_warps_vectors_take_16_bit_arithmetic_and_compute_shuffles_without_an_exchange() {
    // seg_half: halves of the loaded words through neg/max/min/add/sub/abs (signed and
    // unsigned, wrapping at 16 bits), a 64-bit register's low half extended both ways, and
    // nvcc's 64-bit warp sum whose shuffles of a literal 0 and a repeated shuffle the form
    // computes itself: its lanes one at a time, the fibers and the model agree.
    let nv = three_ways_against("seg_half", &[128, 64], seg_half_model);
    assert!(
        nv.contains("threads of seg_half: loops over threads: 2 warp collectives reached by every thread together; 2 more shuffles of a literal or repeating an earlier one, done without an exchange")
            && nv.contains("from its start a warp's lanes as two vectors of 16 (`simd`), through 2 shuffles of its own, one lane at a time after 1 cut (1 on to the exit in the same batch)"),
        "{nv}"
    );
}

/// seg_float's outputs by thread (four words each), as the kernel defines them: IEEE
/// operations in f32 and f64 (Rust's), a round-toward-zero add from the exact sum in f64.
fn seg_float_model(inp: &[u8], threads: usize, _block: usize) -> Vec<[u32; 4]> {
    let word = |g: usize, k: usize| u32::from_le_bytes(inp[g * 32 + 8 * k..g * 32 + 8 * k + 4].try_into().unwrap());
    let tenth = f32::from_bits(0x3dcc_cccd);
    let add_rz = |a: f32, b: f32| {
        let s = f64::from(a) + f64::from(b);
        let t = s as f32;
        if f64::from(t).abs() > s.abs() {
            f32::from_bits(t.to_bits() - 1)
        } else {
            t
        }
    };
    let first: Vec<[u32; 3]> = (0..threads)
        .map(|g| {
            let (x, y) = (word(g, 0), word(g, 1));
            let (x16, y10) = (x & 0xffff, y & 1023);
            let (mut w0, w1) = if x < 1 << 30 {
                let f6 = (x16 as f32).mul_add(1.0 / 1024.0, -0.5);
                let f7 = f6.mul_add(f6, tenth);
                // The parameter (the thread count) loaded on this side only.
                (f7.to_bits(), add_rz(f7, f32::from_bits(0x3380_0000)).to_bits().wrapping_add(threads as u32))
            } else {
                let q = (f64::from(x16) / (f64::from(y10) + 1.5) * 100.0).trunc() as i32 as u32;
                let (q, w1) = if y10 > 511 {
                    // The product fused into the add (its operands kept per lane).
                    (q.wrapping_add(threads as u32), (x16 as f32).mul_add(y10 as f32 * tenth, 1.0).trunc() as u32)
                } else {
                    (q, add_rz(x16 as f32 * tenth, 0.5).trunc() as u32)
                };
                (q, w1.wrapping_add(x & 15))
            };
            if x & 1 == 1 {
                w0 = w0.wrapping_add(7);
            }
            [w0, w1, (f64::from(y) * 0.5).trunc() as u32]
        })
        .collect();
    // shfl.down by d, clamp 31: lane l reads lane l + d, or its own value past lane 31.
    let down = |v: &[u32], g: usize, d: usize| if g % 32 + d < 32 { v[g + d] } else { v[g] };
    let v: Vec<u32> = first.iter().map(|f| f[0]).collect();
    let sums: Vec<u32> = (0..threads)
        .map(|g| {
            let r41 = down(&v, g, 16);
            let r42 = r41.wrapping_add(v[g]);
            if r41 > v[g] {
                r42
            } else {
                r42 ^ 255
            }
        })
        .collect();
    (0..threads).map(|g| [first[g][0], first[g][1], first[g][2], down(&sums, g, 8).wrapping_add(sums[g])]).collect()
}

#[test]
fn a_warps_vectors_run_floating_point_in_lane_loops_and_branches_on_data_both_ways_under_masks() {
    // seg_float: a branch on a loaded word (a nested one inside) and, after a shuffle, one
    // on shuffled data, each run both ways under masks; f32 and f64 in their own and in
    // untyped registers, nvcc's roundf (copysign, add.rz, cvt.rzi), a multiply fused into
    // an add, a guard that differs between lanes: the lanes one at a time, the fibers and
    // the model agree.
    let nv = three_ways_against("seg_float", &[128, 64], seg_float_model);
    assert!(
        nv.contains("threads of seg_float: loops over threads: 2 warp collectives reached by every thread together")
            && nv.contains("from its start a warp's lanes as two vectors of 16 (`simd`), 2 branches its lanes take apart both ways under masks, through 2 shuffles of its own, one lane at a time after 1 cut (1 on to the exit in the same batch)"),
        "{nv}"
    );
}

/// `kernel`'s cases three ways (`three_ways`): the same words from every thread, each case
/// successful; the module note.
fn vectors_as_threads(kernel: &str) -> String {
    let [vec, one, fib] = three_ways(kernel);
    let (v, o, f) = (records(&vec.outputs, 16, true), records(&one.outputs, 16, true), records(&fib.outputs, 16, true));
    assert_eq!(v.len(), 2);
    for ((a, b), c) in v.iter().zip(&o).zip(&f) {
        assert_eq!((a.1, b.1, c.1), (0, 0, 0), "{}", vec.stderr);
        assert!(!c.2.is_empty() && c.2.iter().any(|&x| x != 0));
        for (g, ((x, y), z)) in a.2.chunks(16).zip(b.2.chunks(16)).zip(c.2.chunks(16)).enumerate() {
            assert_eq!((x, y), (z, z), "{kernel} thread {g}: vectors, lanes one at a time, fibers");
        }
    }
    vec.counts["modules"][0]["notes"].to_string()
}

#[test]
fn a_warps_vectors_compute_f32_arithmetic_as_its_threads_do_at_every_edge() {
    // seg_fvec: f32 add/sub/mul/fma (add/sub rounding each way), abs/neg/copysign, clz and
    // popc, ordered and unordered comparisons, selects and conversions (to integral values
    // and to 32-bit integers by each integer rounding, from integers to nearest) as vector
    // expressions, on every pair of the PTX suite's f32 edges (NaN payloads, infinities,
    // signed zeros, subnormals, values past the integers' ranges) and random values; under
    // a mask a product ptxas fuses into an add (a lane loop between vector expressions).
    // The warps' vectors, the lanes one at a time and the fibers (the scalar rules measured
    // on the H200) give the same words.
    let nv = vectors_as_threads("seg_fvec");
    assert!(
        nv.contains("threads of seg_fvec: loops over threads: 2 warp collectives reached by every thread together; from its start a warp's lanes as two vectors of 16 (`simd`), 1 branch its lanes take apart both ways under masks"),
        "{nv}"
    );
}

#[test]
fn a_warps_vectors_compute_f64_arithmetic_as_its_threads_do_at_every_edge() {
    // seg_dvec: 64-bit shifts by amounts that differ between lanes (past 63 too), clz and
    // popc of 64-bit lanes, f64 add/sub/mul/div/fma, min/max, abs/neg, comparisons, selects and
    // conversions (to 32- and 64-bit integers by each integer rounding, from 32-bit integers)
    // as vector expressions on every pair of the f64 edges (a NaN in a lane, or a value past
    // a conversion's range, sends the vector to the scalar rules) and random values; under a
    // mask a product ptxas fuses into an add. The three ways give the same words.
    let nv = vectors_as_threads("seg_dvec");
    assert!(
        nv.contains("threads of seg_dvec: loops over threads: 2 warp collectives reached by every thread together; from its start a warp's lanes as two vectors of 16 (`simd`), 1 branch its lanes take apart both ways under masks"),
        "{nv}"
    );
}

#[test]
fn a_warps_vectors_load_and_store_f32_elements_as_their_bits() {
    // seg_f32mem: f32 global loads (gathered), a pair stored to shared memory as one run,
    // f32 global stores (scattered) of the lanes' bits (NaN payloads, signed zeros,
    // subnormals of the f32 edges), around a product and a sum as vector expressions. The
    // three ways give the same words.
    let nv = vectors_as_threads("seg_f32mem");
    assert!(nv.contains("threads of seg_f32mem: loops over threads: 1 barrier and 1 warp collective reached by every thread together; from its start a warp's lanes as two vectors of 16 (`simd`)"), "{nv}");
}

#[test]
fn a_warps_vectors_from_a_barrier_inside_a_loop_start_at_its_resume_point() {
    // tree_sum: its barriers' forms (taken where every form is: their loop's store) hold
    // the loop's head before the resume point in body order; each begins at its resume
    // point (begun at the head, a warp skipped the step's halving and its lanes looked
    // exited at the next barrier: a barrier-divergence-exit the fibers never report).
    let [vec, one, fib] = three_ways("tree_sum");
    let (v, o, f) = (records(&vec.outputs, 16, true), records(&one.outputs, 16, true), records(&fib.outputs, 16, true));
    assert!(v.len() == 2 && v.iter().zip(&o).zip(&f).all(|((a, b), c)| a.2 == c.2 && b.2 == c.2));
    assert_eq!(hazards(&vec.stderr), hazards(&fib.stderr));
    let nv = vec.counts["modules"][0]["notes"].to_string();
    assert!(
        nv.contains("threads of tree_sum: loops over threads: 2 barriers reached by every thread together")
            && nv.contains("after 2 of its barriers a warp's lanes as two vectors of 16 too"),
        "{nv}"
    );
}

/// seg_bar_shfl's outputs by thread: its value (a tenth-ish of three times its neighbour's
/// word, plus its index) and that plus lane + 16's (its own past lane 15).
fn seg_bar_shfl_model(inp: &[u8], threads: usize, block: usize) -> Vec<[u32; 4]> {
    let word = |g: usize| u32::from_le_bytes(inp[g * 32..g * 32 + 4].try_into().unwrap());
    let v: Vec<u32> =
        (0..threads).map(|g| (word(g / block * block + ((g % block) ^ 1)).wrapping_mul(3) / 7).wrapping_add((g % block) as u32)).collect();
    (0..threads).map(|g| [v[g], v[g].wrapping_add(if g % 32 < 16 { v[g + 16] } else { v[g] }), 0, 0]).collect()
}

#[test]
fn a_warps_vectors_from_a_barrier_in_a_kernel_with_shuffles_keep_what_the_frames_hold() {
    // seg_bar_shfl: the warp runner's form at the barrier's resume point stops at a cut
    // (a division) where the output pointer and %tid, made before the barrier, are live:
    // read from the frames, the lanes go on with them (a form that stored registers it
    // never read faulted on a null pointer in the fork's motion_v2).
    let nv = three_ways_against("seg_bar_shfl", &[128, 64], seg_bar_shfl_model);
    assert!(
        nv.contains("threads of seg_bar_shfl: loops over threads: 1 barrier and 1 warp collective reached by every thread together")
            && nv.contains("after 1 of its barriers a warp's lanes as two vectors of 16 too"),
        "{nv}"
    );
}

/// bar_chain_tickets' first word by thread: two rounds of (the neighbour's word times 3
/// plus the thread's index, summed down its warp by shuffles of 16, 8, 4, 2, 1 whose
/// sources past lane 31 are the lane itself), the second round's input the first's result.
fn bar_chain_model(inp: &[u8], threads: usize, block: usize) -> Vec<u32> {
    let mut v: Vec<u32> = (0..threads).map(|g| u32::from_le_bytes(inp[g * 32..g * 32 + 4].try_into().unwrap())).collect();
    for _round in 0..2 {
        let mut r: Vec<u32> =
            (0..threads).map(|g| v[g / block * block + ((g % block) ^ 1)].wrapping_mul(3).wrapping_add((g % block) as u32)).collect();
        for d in [16, 8, 4, 2, 1] {
            r = (0..threads).map(|g| r[g].wrapping_add(if g % 32 + d < 32 { r[g + d] } else { r[g] })).collect();
        }
        v = r;
    }
    v
}

#[test]
fn a_blocks_warps_reducing_after_a_barrier_run_their_chains_at_once_and_take_their_tickets_in_the_fibers_order() {
    // The fibers take the warps in turn at every shuffle of the chain (each warp's 32 lanes
    // to the next shuffle, then the next warp's): the runner books those links, runs the
    // chain for a warp's lanes at once where a lane goes on past it, and the tickets each
    // lane takes after the chain come in the fibers' order.
    let [vec, one, fib] = three_ways("bar_chain_tickets");
    let (v, o, f) = (records(&vec.outputs, 16, true), records(&one.outputs, 16, true), records(&fib.outputs, 16, true));
    let ins = records(&vec.inputs, 32, false);
    assert_eq!(v.len(), 2);
    for ((((a, b), c), (_, _, inp)), block) in v.iter().zip(&o).zip(&f).zip(&ins).zip([128, 256]) {
        assert_eq!((a.1, b.1, c.1), (0, 0, 0), "{}", vec.stderr);
        assert!(a.2 == c.2 && b.2 == c.2, "bar_chain_tickets/{block}: the loop path's outputs (tickets included) differ from the fibers'");
        let threads = inp.len() / 32;
        let word = |g: usize, k: usize| u32::from_le_bytes(a.2[g * 16 + 4 * k..g * 16 + 4 * k + 4].try_into().unwrap());
        let mut tickets = std::collections::HashSet::new();
        for (g, want) in bar_chain_model(inp, threads, block).into_iter().enumerate() {
            assert_eq!((word(g, 0), word(g, 2)), (want, g as u32), "bar_chain_tickets/{block} thread {g}");
            assert!(tickets.insert(word(g, 1)) && tickets.insert(word(g, 3)), "bar_chain_tickets/{block} thread {g}: a ticket taken twice");
        }
    }
    assert_eq!(hazards(&vec.stderr), hazards(&fib.stderr));
    let notes = vec.counts["modules"][0]["notes"].to_string();
    assert!(notes.contains("threads of bar_chain_tickets: loops over threads: 2 barriers and 5 warp collectives reached by every thread together; 4 shuffles in 1 chain"), "{notes}");
}
