//! `__activemask()` as a convergence rendezvous: the lanes that reach one call site
//! together, so the warp-aggregated atomic pattern (activemask in a divergent branch,
//! leader election with __ffs, `__shfl_sync(mask, ...)`) works as on a device.

// Loops index per-thread results by thread id, as the CUDA they model does.
#![allow(clippy::needless_range_loop)]

mod exec_support;
use cuda::exec::stats;
use exec_support::*;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};

/// Which threads take the branch, per pattern.
fn takes(pattern: u64, t: u32) -> bool {
    let l = t % 32;
    match pattern {
        0 => true,
        1 => l.is_multiple_of(2),
        2 => t % 7 < 3,
        3 => l < 5,
        4 => (t.wrapping_mul(2_654_435_761) >> 13).is_multiple_of(3),
        5 => t / 32 != 1, // warp 1 skips the branch entirely
        _ => l == 31,
    }
}

// `if (cond) { m = __activemask(); leader = __ffs(m) - 1; if (lane == leader) base =
// atomicAdd(counter, __popc(m)); base = __shfl_sync(m, base, leader);
// slot = base + __popc(m & lanemask_lt); }`
unsafe fn aggregate_body(p: *const *mut c_void) {
    let c = ctx();
    let t = c.linear_tid;
    let l = c.linear_tid % 32;
    let pattern: u64 = param(p, 3);
    let g = (c.block_idx.x * c.block_dim.x + t) as usize;
    if takes(pattern, t) {
        let m = activemask!();
        let leader = m.trailing_zeros();
        let mut base = 0u32;
        if l == leader {
            base = (*out::<AtomicU32>(p, 0)).fetch_add(m.count_ones(), Ordering::Relaxed);
        }
        let base = shfl!(m, base, leader) as u32;
        *out::<u32>(p, 1).add(g) = base + (m & ((1u32 << l) - 1)).count_ones();
        *out::<u32>(p, 2).add(g) = m;
    }
}
kernel!(aggregate_run, aggregate_body);

fn check_aggregate(pattern: u64, blocks: u32, threads: u32) {
    let k = kref("aggregate", aggregate_run);
    let n = (blocks * threads) as usize;
    let mut counter = [0u32];
    let mut slots = vec![u32::MAX; n];
    let mut masks = vec![0u32; n];
    let p = params(&[addr(&mut counter), addr(&mut slots), addr(&mut masks), pattern]);
    let o = run(&k, cfg([blocks, 1, 1], [threads, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()), "pattern {pattern}, {blocks}x{threads}");
    assert!(o.hazards.is_empty(), "pattern {pattern}: {:?}", o.hazards);
    let mut taken = 0;
    for b in 0..blocks {
        for w in 0..threads.div_ceil(32) {
            let lanes: Vec<u32> = (w * 32..((w + 1) * 32).min(threads)).filter(|&t| takes(pattern, t)).collect();
            let want = lanes.iter().fold(0u32, |m, &t| m | 1 << (t % 32));
            let mut warp_slots = Vec::new();
            for &t in &lanes {
                let g = (b * threads + t) as usize;
                assert_eq!(masks[g], want, "pattern {pattern} block {b} thread {t}: activemask");
                warp_slots.push(slots[g]);
            }
            // A warp's lanes got consecutive slots from one atomicAdd, in lane order.
            for (i, s) in warp_slots.iter().enumerate() {
                assert_eq!(*s, warp_slots[0] + i as u32, "pattern {pattern} block {b} warp {w}");
            }
            taken += lanes.len();
        }
        for t in 0..threads {
            if !takes(pattern, t) {
                assert_eq!(slots[(b * threads + t) as usize], u32::MAX);
            }
        }
    }
    assert_eq!(counter[0] as usize, taken, "pattern {pattern}");
    let mut all: Vec<u32> = slots.iter().copied().filter(|&s| s != u32::MAX).collect();
    all.sort_unstable();
    assert_eq!(all, (0..taken as u32).collect::<Vec<_>>(), "pattern {pattern}: every slot once");
}

#[test]
fn warp_aggregated_atomics_see_the_lanes_of_the_branch() {
    for pattern in 0..7 {
        check_aggregate(pattern, 3, 128);
    }
}

#[test]
fn warp_aggregated_atomics_in_partial_last_warps() {
    for pattern in [0, 1, 2, 4, 6] {
        check_aggregate(pattern, 2, 40);
        check_aggregate(pattern, 2, 70);
        check_aggregate(pattern, 1, 5);
    }
}

unsafe fn nested_body(p: *const *mut c_void) {
    let t = tid();
    let l = lane();
    let m = if l.is_multiple_of(2) {
        if l.is_multiple_of(4) {
            activemask!()
        } else {
            activemask!()
        }
    } else {
        activemask!()
    };
    *out::<u32>(p, 0).add(t as usize) = m;
}
kernel!(nested_run, nested_body);

#[test]
fn nested_branches_and_if_else_give_each_side_its_lanes() {
    let k = kref("nested", nested_run);
    let mut res = vec![0u32; 64];
    let p = params(&[addr(&mut res)]);
    let s0 = stats();
    let o = run(&k, cfg([1, 1, 1], [64, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert!(o.hazards.is_empty(), "{:?}", o.hazards);
    for t in 0..64 {
        let want = match t % 4 {
            0 => 0x1111_1111,
            2 => 0x4444_4444,
            _ => 0xaaaa_aaaa,
        };
        assert_eq!(res[t], want, "thread {t}");
    }
    assert_eq!(stats().activemask_groups - s0.activemask_groups, 2 * 3);
}

unsafe fn loop_body(p: *const *mut c_void) {
    let t = tid();
    let l = lane();
    for i in 0..(l % 5) {
        let m = activemask!();
        *out::<u32>(p, 0).add(t as usize * 5 + i as usize) = m;
    }
}
kernel!(loop_run, loop_body);

#[test]
fn activemask_in_a_loop_names_the_lanes_still_iterating() {
    let k = kref("loop", loop_run);
    let mut res = vec![0u32; 32 * 5];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert!(o.hazards.is_empty(), "{:?}", o.hazards);
    for l in 0..32u32 {
        for i in 0..5u32 {
            let want = if i < l % 5 { (0..32).filter(|x| x % 5 > i).fold(0u32, |m, x| m | 1 << x) } else { 0 };
            assert_eq!(res[(l * 5 + i) as usize], want, "lane {l} iteration {i}");
        }
    }
}

unsafe fn beside_barrier_body(p: *const *mut c_void) {
    let t = tid();
    if t % 32 < 8 {
        *out::<u32>(p, 0).add(t as usize) = activemask!();
    }
    syncthreads!();
    // Converged again after the barrier: every lane of the warp.
    *out::<u32>(p, 0).add(64 + t as usize) = activemask!();
}
kernel!(beside_barrier_run, beside_barrier_body);

#[test]
fn lanes_waiting_at_a_barrier_are_not_in_the_mask_and_converge_after_it() {
    let k = kref("beside_barrier", beside_barrier_run);
    let mut res = vec![0u32; 128];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([2, 1, 1], [64, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert!(o.hazards.is_empty(), "{:?}", o.hazards);
    for t in 0..64 {
        assert_eq!(res[t], if t % 32 < 8 { 0xff } else { 0 }, "thread {t}");
        assert_eq!(res[64 + t], u32::MAX, "thread {t} after the barrier");
    }
}
