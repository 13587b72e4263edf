//! `mbarrier` in PTX mode through the driver: the kernels of tests/mbarrier/mbarrier.ptx,
//! appended to numba_cta_barrier.ptx (NVRTC's PTX of numba-cuda's cta_barrier.cu, a
//! libcu++ `cuda::barrier<thread_scope_block>`), run by the PTX suite's runner with the
//! loop path on (auto) and off; outputs, statuses and the path notes must be equal, and
//! every output is checked against what the PTX ISA gives: a producer/consumer handoff
//! across warps over 5 phases (data stored before the arrive is read after the wait;
//! the tokens' phase parities), counts, tokens, arrive_drop, pending_count and waits
//! that are false before completion, cp.async.mbarrier.arrive with and without .noinc,
//! and numba's cta_barrier (every thread reads its neighbour's store made before the
//! barrier). A barrier one thread never arrives at ends the launch with the watchdog's
//! CUDA_ERROR_LAUNCH_TIMEOUT naming the wait, not a hang; a transaction-count form
//! fails the load naming it.

mod client_support;
use client_support::{root, run_suite_runner, runner_records as records, suite_runner_dir, SuiteRun};
use std::path::PathBuf;
use std::sync::OnceLock;

/// target/mbarrier/run-PID with the runner and combined.ptx (numba's PTX, then ours).
fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = suite_runner_dir("mbarrier");
        let src = root().join("emu-driver/tests/mbarrier");
        let mut ptx = std::fs::read_to_string(src.join("numba_cta_barrier.ptx")).unwrap();
        let ours = std::fs::read_to_string(src.join("mbarrier.ptx")).unwrap();
        for l in ours.lines().filter(|l| !l.starts_with(".version") && !l.starts_with(".target") && !l.starts_with(".address_size")) {
            ptx.push_str(l);
            ptx.push('\n');
        }
        std::fs::write(d.join("combined.ptx"), ptx).unwrap();
        d
    })
}

/// Runs `ptx` (a path under the run directory or absolute) over the cases of
/// tests/mbarrier/`cases` with EMU_CUDA_THREAD_LOOPS=`loops` and `env`.
fn run(tag: &str, ptx: &std::path::Path, cases: &str, loops: &str, env: &[(&str, &str)]) -> SuiteRun {
    let d = dir();
    let cases = root().join("emu-driver/tests/mbarrier").join(cases);
    run_suite_runner(d, tag, ptx, &cases, &[], loops, &[&[("SIMTWIN_CACHE_DIR", d.join("cache").to_str().unwrap())], env].concat())
}

fn notes(r: &SuiteRun) -> String {
    r.counts["modules"][0]["notes"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|n| n.as_str().map(String::from))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn mbarrier_kernels_give_the_isa_results_on_both_paths() {
    let ptx = dir().join("combined.ptx");
    let loops = run("loops", &ptx, "cases.txt", "auto", &[]);
    let fibers = run("fibers", &ptx, "cases.txt", "off", &[]);
    assert!(loops.ok && fibers.ok, "loops:\n{}\nfibers:\n{}", loops.stderr, fibers.stderr);
    let (l, f) = (records(&loops.outputs, 16, true), records(&fibers.outputs, 16, true));
    let ins = records(&loops.inputs, 32, false);
    assert_eq!(l.len(), 8, "{}", loops.stderr);
    assert_eq!(l.len(), f.len());
    for (a, b) in l.iter().zip(&f) {
        assert_eq!(a.0, b.0);
        assert_eq!(a.1, 0, "{} failed: {}", a.0, loops.stderr);
        assert_eq!(b.1, 0, "{} failed: {}", b.0, fibers.stderr);
        assert!(a.2 == b.2, "{}: the outputs with THREAD_LOOPS=auto differ from those with off", a.0);
    }
    // Every kernel keeps fibers on both paths, saying why.
    for r in [&loops, &fibers] {
        let n = notes(r);
        for k in ["mb_pipeline", "mb_counts", "mb_cp_async", "mb_numba"] {
            assert!(n.contains(&format!("threads of {k}: fibers: an mbarrier")), "{k}:\n{n}");
        }
        assert!(n.contains("in cta_barrier"), "{n}");
    }
    let mut checked = [0usize; 4];
    for ((name, _, out), (_, _, inp)) in l.iter().zip(&ins) {
        let threads = out.len() / 16;
        let word = |t: usize, k: usize| u32::from_le_bytes(out[t * 16 + k * 4..t * 16 + k * 4 + 4].try_into().unwrap());
        let input = |u: usize| u32::from_le_bytes(inp[u * 32..u * 32 + 4].try_into().unwrap());
        match name.as_str() {
            "mb_pipeline" => {
                let block = match threads {
                    256 => 128,
                    96 => 96,
                    _ => 64,
                };
                for t in 0..threads {
                    let (b0, tid) = (t / block * block, t % block);
                    // A producer: the parities of its 5 tokens (phases 0..4); a consumer:
                    // the sum of what its lane's producer stored in the 5 rounds.
                    let want = if tid < 32 { 0b01010 } else { input(b0 + tid % 32).wrapping_mul(5).wrapping_add(10) };
                    assert_eq!(word(t, 0), want, "{name}/{threads} thread {t}");
                }
                checked[0] += 1;
            }
            "mb_counts" => {
                for t in 0..threads {
                    // pending counts of s0..s5: 3 1 3 2 | 2 1; waits 0,1,1,0,0,1,1 and
                    // token parities 0,1,0,1 (mbarrier.ptx says which is which).
                    assert_eq!([word(t, 0), word(t, 1), word(t, 2)], [0x0203_0103, 0x0102, 0xa66], "{name}/{threads} thread {t}");
                }
                checked[1] += 1;
            }
            "mb_cp_async" => {
                for t in 0..threads {
                    assert_eq!([word(t, 0), word(t, 2)], [input(t), 0x101], "{name} thread {t}");
                }
                checked[2] += 1;
            }
            "mb_numba" => {
                let block = if threads == 256 { 128 } else { 32 };
                for t in 0..threads {
                    let (b0, tid) = (t / block * block, t % block);
                    assert_eq!([word(t, 0), word(t, 1)], [input(b0 + (tid + 1) % block), 0], "{name}/{threads} thread {t}");
                }
                checked[3] += 1;
            }
            other => panic!("unexpected case {other}"),
        }
    }
    assert_eq!(checked, [3, 2, 1, 2]);
}

#[test]
fn a_barrier_that_never_completes_ends_with_the_watchdog_not_a_hang() {
    let ptx = dir().join("combined.ptx");
    let line = std::fs::read_to_string(&ptx)
        .unwrap()
        .lines()
        .position(|l| l.contains("mbarrier.try_wait.parity.shared.b64 %p3, [%r5], 0;"))
        .expect("mb_deadlock's wait")
        + 1;
    for loops in ["off", "auto"] {
        let start = std::time::Instant::now();
        let r = run(&format!("deadlock-{loops}"), &ptx, "deadlock_cases.txt", loops, &[("EMU_CUDA_WATCHDOG", "1")]);
        assert!(start.elapsed().as_secs() < 60, "took {:?}", start.elapsed());
        let recs = records(&r.outputs, 16, true);
        assert_eq!(recs.len(), 1, "{}", r.stderr);
        assert_eq!(recs[0].1, 702, "CUDA_ERROR_LAUNCH_TIMEOUT expected:\n{}", r.stderr);
        // The report names the wait the threads spin at.
        assert!(r.stderr.contains("watchdog") && r.stderr.contains("spin (yield)"), "{}", r.stderr);
        assert!(r.stderr.contains(&format!(":{line}:")), "PTX line {line}:\n{}", r.stderr);
    }
}

#[test]
fn a_transaction_count_form_fails_the_load_naming_it() {
    let r = run("refused", &root().join("emu-driver/tests/mbarrier/refused.ptx"), "deadlock_cases.txt", "auto", &[]);
    assert!(!r.ok);
    assert!(r.stderr.contains("CUDA_ERROR_NOT_SUPPORTED (801)"), "{}", r.stderr);
    assert!(
        r.stderr.contains("PTX line 14: `mbarrier.arrive.expect_tx.shared::cta.b64` in mb_expect_tx cannot be translated"),
        "{}",
        r.stderr
    );
}
