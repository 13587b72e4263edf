//! Forward progress as sm_70+ devices give it (independent thread scheduling): a thread
//! that spins in kernel code, without any runtime call, on a flag another lane of its
//! warp, another warp or another block sets, completes (the executor preempts it after a
//! time slice, and lets later blocks start on other OS threads when a block only spins);
//! a spin that nothing ends still ends with CUDA_ERROR_LAUNCH_TIMEOUT (702), and the
//! report says the threads spin. The H200's answers for the same shapes are the `spin_*`
//! lines of the conformance table.

mod exec_support;
use cuda::exec::{stats, ExecOptions, LaunchOutcome, CUDA_ERROR_LAUNCH_TIMEOUT};
use exec_support::*;
use std::ffi::c_void;
use std::ptr::{read_volatile, write_volatile};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

fn run_opts(k: &cuda::exec::KernelRef, grid: u32, block: u32, p: &[*mut c_void], opts: ExecOptions) -> (LaunchOutcome, Duration) {
    let t = Instant::now();
    let o = run_with(k, cfg([grid, 1, 1], [block, 1, 1], 0), p, opts);
    (o, t.elapsed())
}

fn opts(workers: usize) -> ExecOptions {
    ExecOptions { watchdog: Duration::from_secs(20), workers, ..ExecOptions::default() }
}

// Grid-linear thread `waiter` spins (plain loads, no runtime call) until `setter` sets the
// flag; every thread then writes 1 into out[t], the waiter 2. Parameters: flag, out,
// waiter, setter.
unsafe fn pair_body(p: *const *mut c_void) {
    let c = ctx();
    let t = c.block_idx.x * c.block_dim.x + c.linear_tid;
    let flag = out::<AtomicU32>(p, 0);
    let res = out::<u32>(p, 1);
    let (waiter, setter): (u64, u64) = (param(p, 2), param(p, 3));
    if t as u64 == setter {
        (*flag).store(1, Ordering::Release);
    }
    let mut r = 1;
    if t as u64 == waiter {
        while (*flag).load(Ordering::Acquire) == 0 {
            std::hint::spin_loop();
        }
        r = 2;
    }
    write_volatile(res.add(t as usize), r);
}
preemptible_kernel!(pair_run, pair_body);

fn pair(grid: u32, block: u32, waiter: u32, setter: u32, workers: usize) -> (Vec<u32>, Duration) {
    let k = kref("spin_pair", pair_run);
    let n = (grid * block) as usize;
    let mut flag = [0u32; 1];
    let mut res = vec![0u32; n];
    let p = params(&[addr(&mut flag), addr(&mut res), waiter as u64, setter as u64]);
    let (o, took) = run_opts(&k, grid, block, &p.ptrs, opts(workers));
    assert_eq!(o.result, Ok(()), "grid {grid} block {block} waiter {waiter} setter {setter} workers {workers}");
    (res, took)
}

fn expect(n: usize, waiter: usize) -> Vec<u32> {
    (0..n).map(|t| if t == waiter { 2 } else { 1 }).collect()
}

#[test]
fn a_lane_spinning_on_a_later_lane_of_its_warp_completes() {
    let s0 = stats();
    let (r, took) = pair(1, 32, 0, 31, 1);
    assert_eq!(r, expect(32, 0));
    assert!(stats().preemptions > s0.preemptions, "the spinning lane was preempted");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

// As pair_body, but the waiter polls the runtime's clock (as `clock64()` bounds do), so
// nearly all its time is inside the runtime, where the probe cannot suspend it.
unsafe fn clock_pair_body(p: *const *mut c_void) {
    let c = ctx();
    let t = c.block_idx.x * c.block_dim.x + c.linear_tid;
    let flag = out::<AtomicU32>(p, 0);
    let res = out::<u32>(p, 1);
    if t == 31 {
        (*flag).store(1, Ordering::Release);
    }
    let mut r = 1;
    if t == 0 {
        while (*flag).load(Ordering::Acquire) == 0 {
            for _ in 0..64 {
                (rt().clock)();
            }
        }
        r = 2;
    }
    write_volatile(res.add(t as usize), r);
}
preemptible_kernel!(clock_pair_run, clock_pair_body);

#[test]
fn a_lane_spinning_through_clock_calls_is_preempted_and_completes() {
    let k = kref("spin_clock", clock_pair_run);
    let s0 = stats();
    let mut flag = [0u32; 1];
    let mut res = vec![0u32; 32];
    let p = params(&[addr(&mut flag), addr(&mut res)]);
    let (o, _) = run_opts(&k, 1, 32, &p.ptrs, opts(1));
    assert_eq!(o.result, Ok(()));
    assert_eq!(res, expect(32, 0));
    // Preempted: in kernel code when a probe lands there, else at its next clock call
    // once a probe found it in the runtime (which is where it spends nearly all its time;
    // before, only a probe landing in kernel code could preempt it, which under load took
    // seconds: the conformance case spin_lane_bounded saw its 2^32 ns bound expire).
    let d = stats();
    assert!(d.preemptions > s0.preemptions, "{d:?}");
    assert!(d.preemptions_at_call <= d.preemptions);
}

#[test]
fn a_warp_spinning_on_a_later_warp_completes_with_one_or_two_workers() {
    for workers in [1, 2] {
        let (r, _) = pair(1, 256, 3, 250, workers);
        assert_eq!(r, expect(256, 3));
    }
}

#[test]
fn a_block_spinning_on_a_block_that_has_not_started_completes() {
    for workers in [1, 2] {
        let s0 = stats();
        let (r, took) = pair(4, 64, 1, 255, workers);
        assert_eq!(r, expect(256, 1), "workers {workers}");
        if workers == 1 {
            // (With two workers the other one runs the later blocks anyway.)
            assert!(stats().spin_helpers > s0.spin_helpers, "a later block was started beside the spinning one");
        }
        assert!(took < Duration::from_secs(10), "{took:?}");
    }
}

// Thread t waits for thread t+1 (of n, grid-linear): the last one goes first.
unsafe fn chain_body(p: *const *mut c_void) {
    let c = ctx();
    let t = (c.block_idx.x * c.block_dim.x + c.linear_tid) as usize;
    let flags = out::<AtomicU32>(p, 0);
    let n: u64 = param(p, 1);
    if t + 1 < n as usize {
        while (*flags.add(t + 1)).load(Ordering::Acquire) == 0 {
            std::hint::spin_loop();
        }
    }
    (*flags.add(t)).store(1, Ordering::Release);
}
preemptible_kernel!(chain_run, chain_body);

#[test]
fn a_chain_of_spinning_threads_across_warps_and_blocks_completes() {
    let k = kref("spin_chain", chain_run);
    for (grid, block) in [(1u32, 256u32), (6, 32)] {
        let n = (grid * block) as usize;
        let mut flags = vec![0u32; n];
        let p = params(&[addr(&mut flags), n as u64]);
        let (o, took) = run_opts(&k, grid, block, &p.ptrs, opts(1));
        assert_eq!(o.result, Ok(()), "{grid}x{block}");
        assert!(flags.iter().all(|&f| f == 1), "{grid}x{block} took {took:?}");
    }
}

// Thread 0 spins on a flag nobody sets.
unsafe fn forever_body(p: *const *mut c_void) {
    let flag = out::<u32>(p, 0);
    if tid() == 0 {
        while read_volatile(flag) == 0 {
            std::hint::spin_loop();
        }
    }
}
preemptible_kernel!(forever_run, forever_body);

#[test]
fn a_spin_nothing_ends_still_times_out_and_says_the_threads_spin() {
    let k = kref("spin_forever", forever_run);
    let mut flag = [0u32; 1];
    let p = params(&[addr(&mut flag)]);
    let o = ExecOptions { watchdog: Duration::from_millis(400), ..ExecOptions::default() };
    let (r, took) = run_opts(&k, 1, 64, &p.ptrs, o);
    let e = r.result.unwrap_err();
    assert_eq!(e.code, CUDA_ERROR_LAUNCH_TIMEOUT);
    assert!(
        e.message.contains("spin in kernel code with no runtime call") || e.message.contains("thread 0 was running kernel code"),
        "{}",
        e.message
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn without_preemption_a_spin_on_a_later_lane_times_out() {
    // EMU_CUDA_PREEMPT=0: the spinning lane keeps the worker; the watchdog ends it.
    let k = kref("spin_pair", pair_run);
    let mut flag = [0u32; 1];
    let mut res = vec![0u32; 32];
    let p = params(&[addr(&mut flag), addr(&mut res), 0, 31]);
    let o = ExecOptions { watchdog: Duration::from_millis(400), preempt: Duration::ZERO, ..ExecOptions::default() };
    let (r, _) = run_opts(&k, 1, 32, &p.ptrs, o);
    let e = r.result.unwrap_err();
    assert_eq!(e.code, CUDA_ERROR_LAUNCH_TIMEOUT);
    assert!(e.message.contains("thread 0 was running kernel code"), "{}", e.message);
}

// Block b's thread 0 waits for block b + 1's flag (the last block waits for nothing),
// then the block meets at a barrier-free end and sets its own flag: a reverse chain.
unsafe fn reverse_blocks_body(p: *const *mut c_void) {
    let c = ctx();
    let b = c.block_idx.x as usize;
    let flags = out::<AtomicU32>(p, 0);
    let n: u64 = param(p, 1);
    if c.linear_tid == 0 {
        if b + 1 < n as usize {
            while (*flags.add(b + 1)).load(Ordering::Acquire) == 0 {
                std::hint::spin_loop();
            }
        }
        (*flags.add(b)).store(1, Ordering::Release);
    }
}
preemptible_kernel!(reverse_blocks_run, reverse_blocks_body);

#[test]
fn a_reverse_chain_of_512_spinning_blocks_completes() {
    // Each block waits for the one after it: all 512 must be resident at once (the H200
    // holds them; spin_blocks_reverse_512 of the conformance table), so the executor
    // starts later blocks on helper threads (a worker's chunk of blocks not started yet
    // goes back to the launch when its block spins) while the spinners take turns.
    let k = kref("spin_reverse_blocks", reverse_blocks_run);
    for grid in [64u32, 512] {
        let mut flags = vec![0u32; grid as usize];
        let p = params(&[addr(&mut flags), grid as u64]);
        let before = stats();
        // What the driver gives 32-thread blocks on an H200: 32 per SM, 132 SMs.
        let o = ExecOptions { resident_blocks: 4224, ..opts(2) };
        let (o, took) = run_opts(&k, grid, 32, &p.ptrs, o);
        let s = stats();
        eprintln!(
            "grid {grid}: {took:?}, helpers {}, preemptions {}, turns {} (missed {})",
            s.spin_helpers - before.spin_helpers,
            s.preemptions - before.preemptions,
            s.spin_turns - before.spin_turns,
            s.spin_turns_missed - before.spin_turns_missed
        );
        assert_eq!(o.result, Ok(()), "grid {grid}");
        assert!(flags.iter().all(|&f| f == 1), "grid {grid}");
        assert!(
            s.spin_helpers - before.spin_helpers >= grid as u64 - 2,
            "grid {grid}: every block but the launch's two workers' was started for a spinner"
        );
        assert_eq!(s.spin_turns_missed - before.spin_turns_missed, 0, "grid {grid}: no waiting block gave up on its turn");
    }
}

// Every 50th block's thread 0 waits for the flag of the block 20 after it (in the same
// chunk of blocks, not started yet); every block then sets its own flag.
unsafe fn now_and_then_body(p: *const *mut c_void) {
    let c = ctx();
    let b = c.block_idx.x as usize;
    let flags = out::<AtomicU32>(p, 0);
    let n: u64 = param(p, 1);
    if c.linear_tid == 0 {
        if b.is_multiple_of(50) && b + 20 < n as usize {
            while (*flags.add(b + 20)).load(Ordering::Acquire) == 0 {
                std::hint::spin_loop();
            }
        }
        (*flags.add(b)).store(1, Ordering::Release);
    }
}
preemptible_kernel!(now_and_then_run, now_and_then_body);

#[test]
fn blocks_that_wait_now_and_then_get_helpers_all_launch_long() {
    // One worker and 2 resident blocks: one helper may be in the launch at a time. 80
    // blocks wait, one after another, for a block not started yet, and each needs a
    // second worker to start it; a helper leaves when no block waits, and a later wait
    // asks for one again (how many were asked depends on how far a helper runs ahead
    // while a block waits: 2 to 80 here; the limit's bookkeeping is unit-tested in
    // exec/parallel.rs).
    let k = kref("spin_now_and_then", now_and_then_run);
    let grid = 4000u32;
    let mut flags = vec![0u32; grid as usize];
    let p = params(&[addr(&mut flags), grid as u64]);
    let before = stats();
    let o = ExecOptions { resident_blocks: 2, watchdog: Duration::from_secs(10), preempt: Duration::from_micros(100), ..opts(1) };
    let (o, took) = run_opts(&k, grid, 32, &p.ptrs, o);
    let s = stats();
    let helpers = s.spin_helpers - before.spin_helpers;
    eprintln!("{took:?}, helpers asked {helpers}");
    assert_eq!(o.result, Ok(()));
    assert!(flags.iter().all(|&f| f == 1));
    assert!(helpers >= 1, "helpers asked over the launch: {helpers}");
}

#[test]
fn hundreds_of_blocks_spinning_on_a_flag_nobody_sets_time_out_and_the_launch_ends() {
    // The reverse chain with one flag more than blocks: the last block waits for a block
    // that does not exist, so no block ever finishes. Every block is started for the
    // spinners and they take turns; the watchdog must still end the launch (waiting for
    // a turn is no progress), not leave it waiting.
    let k = kref("spin_reverse_blocks", reverse_blocks_run);
    let grid = 200u32;
    let mut flags = vec![0u32; grid as usize + 1];
    let p = params(&[addr(&mut flags), grid as u64 + 1]);
    let o = ExecOptions { resident_blocks: 4224, watchdog: Duration::from_secs(2), ..opts(2) };
    let (o, _) = run_opts(&k, grid, 32, &p.ptrs, o);
    let e = o.result.unwrap_err();
    assert_eq!(e.code, CUDA_ERROR_LAUNCH_TIMEOUT, "{}", e.message);
    assert!(e.message.contains("no progress"), "{}", e.message);
    assert!(flags.iter().all(|&f| f == 0));
}
