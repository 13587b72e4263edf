//! Forward progress: spin-waits that a device completes complete here when the thread
//! that sets the flag can run (yield_now lets it); a launch that makes no progress ends
//! with CUDA_ERROR_LAUNCH_TIMEOUT (702) and a report of where its threads are, whether
//! it spins in plain kernel code, through yields, or through warp collectives.

mod exec_support;
use cuda::abi::*;
use cuda::exec::{stats, ExecOptions, LaunchOutcome, CUDA_ERROR_LAUNCH_TIMEOUT};
use exec_support::*;
use std::ffi::c_void;
use std::ptr::{read_volatile, write_volatile};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_millis(300);

fn run_watched(k: &cuda::exec::KernelRef, c: cuda::exec::LaunchConfig, p: &[*mut c_void], workers: usize) -> (LaunchOutcome, Duration) {
    let t = Instant::now();
    let o = run_with(k, c, p, ExecOptions { watchdog: LIMIT, workers, ..ExecOptions::default() });
    (o, t.elapsed())
}

// Thread 0 spins on a flag thread 1 sets; parameter 1 says whether the spin yields.
unsafe fn flag_body(p: *const *mut c_void) {
    let t = tid();
    let flag = out::<u32>(p, 0);
    let yields: u64 = param(p, 1);
    if t == 0 {
        while read_volatile(flag) == 0 {
            if yields != 0 {
                yield_at(line!());
            } else {
                std::hint::spin_loop();
            }
        }
        write_volatile(flag.add(1), 7);
    } else if t == 1 && yields != 2 {
        write_volatile(flag, 1);
    }
}
kernel!(flag_run, flag_body);

#[test]
fn a_spin_wait_with_yield_completes_when_the_setter_runs_later_in_the_range() {
    let k = kref("flag", flag_run);
    let mut flag = [0u32; 2];
    let p = params(&[addr(&mut flag), 1]);
    let s0 = stats();
    let (o, _) = run_watched(&k, cfg([1, 1, 1], [2, 1, 1], 0), &p.ptrs, 1);
    assert_eq!(o.result, Ok(()));
    assert_eq!(flag, [1, 7]);
    assert!(stats().yields - s0.yields >= 1);
}

#[test]
fn a_spin_in_plain_kernel_code_ends_with_702_and_names_the_spinning_thread() {
    let k = kref("spin", flag_run);
    for workers in [1, 2] {
        let mut flag = [0u32; 2];
        let p = params(&[addr(&mut flag), 0]);
        let (o, took) = run_watched(&k, cfg([2, 1, 1], [2, 1, 1], 0), &p.ptrs, workers);
        let e = o.result.unwrap_err();
        assert_eq!(e.code, CUDA_ERROR_LAUNCH_TIMEOUT);
        assert_eq!(e.code, 702);
        assert!(e.message.contains("kernel spin block (") && e.message.contains("no progress for 0.3 s"), "{}", e.message);
        assert!(e.message.contains("thread 0 was running kernel code at pc 0x"), "{}", e.message);
        assert!(e.message.contains("threads 1 have not started"), "{}", e.message);
        assert!(took < LIMIT * 10, "took {took:?}");
    }
    // The executor runs the next launch normally.
    let mut flag = [0u32; 2];
    let p = params(&[addr(&mut flag), 1]);
    assert_eq!(run_watched(&k, cfg([1, 1, 1], [2, 1, 1], 0), &p.ptrs, 1).0.result, Ok(()));
}

#[test]
fn a_yield_livelock_ends_with_702_and_names_the_site() {
    let k = kref("yield_forever", flag_run);
    let mut flag = [0u32; 2];
    let p = params(&[addr(&mut flag), 2]);
    let (o, took) = run_watched(&k, cfg([1, 1, 1], [2, 1, 1], 0), &p.ptrs, 1);
    let e = o.result.unwrap_err();
    assert_eq!(e.code, 702);
    assert!(e.message.contains("threads 0 spin (yield) at exec_test.rs:"), "{}", e.message);
    assert!(took < LIMIT * 10, "took {took:?}");
}

// Warp 0 spins through __syncwarp until warp 1 (not started yet) sets the flag; with
// parameter 1 set nobody does.
unsafe fn syncwarp_spin_body(p: *const *mut c_void) {
    let t = tid();
    let flag = out::<u32>(p, 0);
    let never: u64 = param(p, 1);
    if t < 32 {
        while read_volatile(flag) == 0 {
            warp_at(line!(), warp::SYNC, u32::MAX, 0, 0, 32);
        }
    } else if t == 40 && never == 0 {
        write_volatile(flag, 1);
    }
}
kernel!(syncwarp_spin_run, syncwarp_spin_body);

#[test]
fn a_warp_spinning_through_collectives_lets_unstarted_threads_run() {
    let k = kref("syncwarp_spin", syncwarp_spin_run);
    let mut flag = [0u32];
    let p = params(&[addr(&mut flag), 0]);
    let (o, _) = run_watched(&k, cfg([1, 1, 1], [64, 1, 1], 0), &p.ptrs, 1);
    assert_eq!(o.result, Ok(()));
    assert_eq!(flag[0], 1);
}

#[test]
fn a_livelock_through_collectives_ends_with_702() {
    let k = kref("syncwarp_forever", syncwarp_spin_run);
    let mut flag = [0u32];
    let p = params(&[addr(&mut flag), 1]);
    let (o, took) = run_watched(&k, cfg([1, 1, 1], [64, 1, 1], 0), &p.ptrs, 1);
    let e = o.result.unwrap_err();
    assert_eq!(e.code, 702);
    assert!(e.message.contains("kernel syncwarp_forever block (0,0,0)"), "{}", e.message);
    assert!(took < LIMIT * 10, "took {took:?}");
}

// Each thread works 20 ms: the block takes far longer than the limit, but threads keep
// finishing, which is progress.
unsafe fn slow_body(p: *const *mut c_void) {
    let t0 = Instant::now();
    let mut x = 0u64;
    while t0.elapsed() < Duration::from_millis(20) {
        x = std::hint::black_box(x.wrapping_add(1));
    }
    *out::<u64>(p, 0).add(tid() as usize) = x.max(1);
}
kernel!(slow_run, slow_body);

#[test]
fn a_slow_block_whose_threads_finish_is_not_stopped() {
    let k = kref("slow", slow_run);
    let mut res = vec![0u64; 32];
    let p = params(&[addr(&mut res)]);
    let (o, took) = run_watched(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs, 1);
    assert_eq!(o.result, Ok(()));
    assert!(took > LIMIT * 2, "took {took:?}");
    assert!(res.iter().all(|&r| r > 0));
}
