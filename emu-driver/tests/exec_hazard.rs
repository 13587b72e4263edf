//! Hazard reports (warn mode goes on, error mode fails with 719) and structural
//! deadlock detection.

// Loops index per-thread results by thread id, as the CUDA they model does.
#![allow(clippy::needless_range_loop)]

mod exec_support;
use cuda::abi::*;
use cuda::exec::{self, HazardKind, HAZARD_ERROR_CODE};
use exec_support::*;
use std::ffi::c_void;

unsafe fn early_exit_body(p: *const *mut c_void) {
    let t = tid();
    if t >= 40 {
        return;
    }
    let s = ctx().dyn_smem as *mut u32;
    *s.add(t as usize) = t * 3;
    syncthreads();
    *out::<u32>(p, 0).add(t as usize) = *s.add(39 - t as usize);
}
kernel!(early_exit_run, early_exit_body);

#[test]
fn a_barrier_some_threads_exit_before_is_reported_and_completes() {
    let k = kref("early_exit", early_exit_run);
    let mut res = vec![0u32; 64];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([2, 1, 1], [64, 1, 1], 256), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    for t in 0..40 {
        assert_eq!(res[t], (39 - t as u32) * 3);
    }
    assert_eq!(o.hazards.len(), 1, "{:?}", o.hazards);
    let h = &o.hazards[0];
    assert_eq!(h.kind, HazardKind::BarrierDivergenceExit);
    assert_eq!(h.kernel, "early_exit");
    assert_eq!(h.block, [0, 0, 0]);
    assert_eq!(h.threads, (40..64).collect::<Vec<u32>>());
    assert_eq!(h.occurrences, 2, "once per block");
    assert!(h.operation.starts_with("__syncthreads"));
    assert!(h.message.contains("40 of 64 threads"), "{}", h.message);

    let o = run_strict(&k, cfg([2, 1, 1], [64, 1, 1], 256), &p.ptrs);
    let e = o.result.unwrap_err();
    assert_eq!(e.code, HAZARD_ERROR_CODE);
    assert_eq!(e.code, 719);
    assert!(e.message.contains("barrier-divergence-exit") && e.message.contains("early_exit"), "{}", e.message);
    assert_eq!(o.hazards.len(), 1);
}

unsafe fn two_sites_body(p: *const *mut c_void) {
    let t = tid();
    let o = out::<u32>(p, 0).add(t as usize);
    if t < 16 {
        syncthreads!();
        std::ptr::write_volatile(o, 1);
    } else {
        syncthreads!();
        std::ptr::write_volatile(o, 2 + t);
    }
}
kernel!(two_sites_run, two_sites_body);

#[test]
fn one_barrier_generation_reached_from_two_call_sites_is_reported() {
    let k = kref("two_sites", two_sites_run);
    let mut res = vec![0u32; 32];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    for t in 0..32u32 {
        assert_eq!(res[t as usize], if t < 16 { 1 } else { 2 + t });
    }
    assert_eq!(o.hazards.len(), 1, "{:?}", o.hazards);
    assert_eq!(o.hazards[0].kind, HazardKind::BarrierDivergenceSite);
    assert_eq!(o.hazards[0].threads, (16..32).collect::<Vec<u32>>());
    assert!(o.hazards[0].message.contains("threads 0-15 at call site"), "{}", o.hazards[0].message);
    let o = run_strict(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result.unwrap_err().code, 719);
}

unsafe fn exited_lanes_body(p: *const *mut c_void) {
    let l = lane();
    if l < 4 {
        return;
    }
    let (r, _) = warp(warp::SHFL_IDX, u32::MAX, l as u64 + 100, 0, 32);
    let (d, _) = warp(warp::SHFL_DOWN, u32::MAX, l as u64 + 100, 1, 32);
    *out::<u64>(p, 0).add(l as usize) = r << 32 | d;
}
kernel!(exited_lanes_run, exited_lanes_body);

#[test]
fn exited_lanes_named_in_a_mask_are_reported() {
    let k = kref("exited_lanes", exited_lanes_run);
    let mut res = vec![0u64; 32];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    for l in 4..32u64 {
        // Lane 0 exited: reading it gives 0, as on the H200 (devres_warp_exited_shfl_idx
        // in tests/data/h200-conformance.txt; this test expected the caller's own value
        // before that was measured).
        let d = if l < 31 { l + 101 } else { l + 100 };
        assert_eq!(res[l as usize], d, "lane {l}");
    }
    let kinds: Vec<_> = o.hazards.iter().map(|h| (h.kind, h.threads.clone())).collect();
    assert_eq!(kinds.len(), 2, "{:?}", o.hazards);
    assert!(kinds.iter().all(|(k, t)| *k == HazardKind::WarpLaneExited && *t == vec![0, 1, 2, 3]));
    assert!(o.hazards[0].operation.starts_with("__shfl_sync(mask=0xffffffff)"));
    assert_eq!(run_strict(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs).result.unwrap_err().code, 719);
}

unsafe fn missing_lanes_body(p: *const *mut c_void) {
    let (r, _) = warp(warp::BALLOT, u32::MAX, 1, 0, 32);
    *out::<u64>(p, 0).add(tid() as usize) = r;
}
kernel!(missing_lanes_run, missing_lanes_body);

#[test]
fn a_full_mask_in_a_partial_last_warp_names_lanes_that_do_not_exist() {
    let k = kref("missing_lanes", missing_lanes_run);
    let mut res = vec![0u64; 40];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([1, 1, 1], [40, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert!(res[..32].iter().all(|&r| r == 0xffff_ffff));
    assert!(res[32..].iter().all(|&r| r == 0xff));
    assert_eq!(o.hazards.len(), 1);
    assert_eq!(o.hazards[0].kind, HazardKind::WarpLaneExited);
    assert!(o.hazards[0].message.contains("lanes 8-31 do not exist"), "{}", o.hazards[0].message);
}

unsafe fn outside_body(p: *const *mut c_void) {
    let l = lane();
    if l >= 16 {
        return;
    }
    let (r, pr) = warp(warp::SHFL_IDX, 0x0000_ffff, l as u64, if l == 3 { 20 } else { 15 - l as i32 }, 32);
    *out::<u64>(p, 0).add(l as usize) = r | (pr as u64) << 8;
}
kernel!(outside_run, outside_body);

#[test]
fn a_shuffle_from_a_lane_outside_the_mask_is_reported() {
    let k = kref("outside", outside_run);
    let mut res = vec![0u64; 16];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    for l in 0..16u64 {
        let want = if l == 3 { 3 } else { (15 - l) | 1 << 8 };
        assert_eq!(res[l as usize], want, "lane {l}");
    }
    // Lanes 16..31 exited without being named: no exit hazard; one source hazard.
    assert_eq!(o.hazards.len(), 1, "{:?}", o.hazards);
    assert_eq!(o.hazards[0].kind, HazardKind::ShuffleSourceOutsideMask);
    assert_eq!(o.hazards[0].threads, vec![3]);
}

unsafe fn kinds_body(p: *const *mut c_void) {
    let l = lane();
    let r = if l < 16 { warp(warp::BALLOT, u32::MAX, (l % 2) as u64, 0, 32).0 } else { warp(warp::ANY, u32::MAX, (l % 2) as u64, 0, 32).0 };
    *out::<u64>(p, 0).add(l as usize) = r;
}
kernel!(kinds_run, kinds_body);

#[test]
fn lanes_meeting_with_different_collectives_are_reported() {
    let k = kref("kinds", kinds_run);
    let mut res = vec![0u64; 32];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    for l in 0..32 {
        assert_eq!(res[l], if l < 16 { 0xaaaa_aaaa } else { 1 });
    }
    assert_eq!(o.hazards.len(), 1);
    assert_eq!(o.hazards[0].kind, HazardKind::WarpKindMismatch);
    assert_eq!(o.hazards[0].threads, vec![16]);
}

unsafe fn not_in_mask_body(p: *const *mut c_void) {
    let l = lane();
    let (r, _) = warp(warp::BALLOT, if l == 5 { 0 } else { 1 << l }, 1, 0, 32);
    *out::<u64>(p, 0).add(l as usize) = r;
}
kernel!(not_in_mask_run, not_in_mask_body);

#[test]
fn a_caller_missing_from_its_own_mask_is_reported() {
    let k = kref("not_in_mask", not_in_mask_run);
    let mut res = vec![0u64; 32];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    for l in 0..32 {
        assert_eq!(res[l], 1 << l, "lane {l}");
    }
    assert_eq!(o.hazards.len(), 1, "{:?}", o.hazards);
    assert_eq!(o.hazards[0].kind, HazardKind::WarpCallerNotInMask);
    assert_eq!(o.hazards[0].threads, vec![5]);
}

// Lane 0 waits in __syncwarp for lane 1, which waits at __syncthreads for lane 0.
unsafe fn deadlock_body(_p: *const *mut c_void) {
    let t = tid();
    if t == 0 {
        warp(warp::SYNC, 0x3, 0, 0, 32);
    }
    syncthreads();
    if t == 1 {
        warp(warp::SYNC, 0x3, 0, 0, 32);
    }
}
kernel!(deadlock_run, deadlock_body);

#[test]
fn a_structural_deadlock_fails_the_launch_with_a_report() {
    let k = kref("deadlock", deadlock_run);
    let o = run(&k, cfg([3, 1, 1], [64, 1, 1], 0), &[]);
    let e = o.result.unwrap_err();
    assert_eq!(e.code, 719);
    assert!(e.message.contains("kernel deadlock block (0,0,0)"), "{}", e.message);
    assert!(e.message.contains("threads 1-63 wait at __syncthreads"), "{}", e.message);
    assert!(e.message.contains("63 of 64 live threads arrived"), "{}", e.message);
    assert!(
        e.message.contains("threads 0 wait in __syncwarp(mask=0x00000003) of warp 0 for lanes 1 (thread 1 waits at __syncthreads)"),
        "{}",
        e.message
    );
    assert_eq!(o.hazards.len(), 1);
    assert_eq!(o.hazards[0].kind, HazardKind::Deadlock);
    assert_eq!(o.hazards[0].threads, (0..64).collect::<Vec<u32>>());
    // The executor discarded the stuck fibers and runs the next launch normally.
    let k2 = kref("tree_after_deadlock", early_exit_run);
    let mut res = vec![0u32; 64];
    let p = params(&[addr(&mut res)]);
    let s0 = exec::stats();
    let o = run(&k2, cfg([1, 1, 1], [40, 1, 1], 256), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert!(o.hazards.is_empty());
    assert_eq!(res[0], 39 * 3);
    assert_eq!(exec::stats().fibers_created, s0.fibers_created);
}
