//! Block order (forward, reverse, seeded shuffle) and several workers: every block runs
//! once, per-OS-thread shared memory stays per block, and the first failing block in
//! the order decides the launch's failure and where its hazard reports stop.

mod exec_support;
use cuda::abi::*;
use cuda::exec::{stats, BlockOrder, ExecOptions, HazardKind};
use exec_support::*;
use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};

unsafe fn order_body(p: *const *mut c_void) {
    let c = ctx();
    if c.linear_tid == 0 {
        let b = c.block_idx.x + c.grid_dim.x * (c.block_idx.y + c.grid_dim.y * c.block_idx.z);
        let seq = (*out::<AtomicU32>(p, 0)).fetch_add(1, Ordering::Relaxed);
        *out::<u32>(p, 1).add(seq as usize) = b;
    }
}
kernel!(order_run, order_body);

fn block_order(order: BlockOrder, workers: usize) -> Vec<u32> {
    let k = kref("order", order_run);
    let mut counter = [0u32];
    let mut seen = vec![u32::MAX; 30];
    let p = params(&[addr(&mut counter), addr(&mut seen)]);
    let o = run_with(&k, cfg([5, 3, 2], [4, 1, 1], 0), &p.ptrs, ExecOptions { block_order: order, workers, ..ExecOptions::default() });
    assert_eq!(o.result, Ok(()));
    assert_eq!(counter[0], 30);
    seen
}

#[test]
fn blocks_run_forward_reverse_or_in_a_seeded_shuffle() {
    assert_eq!(block_order(BlockOrder::Forward, 1), (0..30).collect::<Vec<_>>());
    assert_eq!(block_order(BlockOrder::Reverse, 1), (0..30).rev().collect::<Vec<_>>());
    let a = block_order(BlockOrder::Shuffle(7), 1);
    let mut sorted = a.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..30).collect::<Vec<_>>(), "a permutation");
    assert_ne!(a, (0..30).collect::<Vec<_>>());
    assert_eq!(a, block_order(BlockOrder::Shuffle(7), 1), "same seed, same order");
    assert_ne!(a, block_order(BlockOrder::Shuffle(8), 1), "another seed, another order");
    for workers in [2, 3] {
        let mut got = block_order(BlockOrder::Shuffle(7), workers);
        got.sort_unstable();
        assert_eq!(got, (0..30).collect::<Vec<_>>(), "{workers} workers: every block once");
    }
}

thread_local! {
    /// What kernels-host makes of `__shared__ unsigned long long s[128]`: one array per
    /// OS thread, so per block as long as a block runs on one OS thread.
    static SHARED: RefCell<[u64; 128]> = const { RefCell::new([0; 128]) };
}

// A tree reduction through the per-OS-thread "static shared" array.
unsafe fn tls_tree_body(p: *const *mut c_void) {
    let c = ctx();
    let t = c.linear_tid as usize;
    let g = (c.block_idx.x * c.block_dim.x) as u64 + t as u64;
    let s = SHARED.with(|s| s.as_ptr() as *mut u64);
    *s.add(t) = g * 3 + 1;
    syncthreads!();
    let mut half = c.block_dim.x as usize / 2;
    while half > 0 {
        if t < half {
            *s.add(t) += *s.add(t + half);
        }
        syncthreads!();
        half /= 2;
    }
    if t == 0 {
        *out::<u64>(p, 0).add(c.block_idx.x as usize) = *s;
    }
}
kernel!(tls_tree_run, tls_tree_body);

#[test]
fn several_workers_keep_static_shared_memory_per_block() {
    let k = kref("tls_tree", tls_tree_run);
    for workers in [1, 2, 4] {
        let mut res = vec![0u64; 97];
        let p = params(&[addr(&mut res)]);
        let s0 = stats();
        let o = run_with(&k, cfg([97, 1, 1], [128, 1, 1], 0), &p.ptrs, ExecOptions { workers, ..ExecOptions::default() });
        assert_eq!(o.result, Ok(()));
        assert!(o.hazards.is_empty(), "{:?}", o.hazards);
        for (b, &r) in res.iter().enumerate() {
            let want: u64 = (b as u64 * 128..(b as u64 + 1) * 128).map(|g| g * 3 + 1).sum();
            assert_eq!(r, want, "{workers} workers, block {b}");
        }
        let s1 = stats();
        assert_eq!(s1.blocks - s0.blocks, 97, "the launching thread counts every worker's blocks");
        assert_eq!(s1.barriers - s0.barriers, 97 * 8);
    }
}

// Every block: threads 60..63 exit before the barrier (a hazard in every block); then
// thread 3 of the blocks listed in parameter 1 (a bit set) traps.
unsafe fn failing_body(p: *const *mut c_void) {
    let c = ctx();
    let t = c.linear_tid;
    if t >= 60 {
        return;
    }
    syncthreads();
    let b = c.block_idx.x;
    *out::<u32>(p, 0).add(b as usize) = 1;
    let failing: u64 = param(p, 1);
    if t == 3 && failing & (1 << b) != 0 {
        let msg = std::ffi::CString::new("boom").unwrap();
        (rt().trap)(trap::ASSERT, msg.as_ptr(), std::ptr::null(), 0);
    }
}
kernel!(failing_run, failing_body);

#[test]
fn the_first_failing_block_in_the_order_wins_on_any_number_of_workers() {
    let k = kref("failing", failing_run);
    let failing: u64 = 1 << 5 | 1 << 9 | 1 << 40;
    for workers in [1, 2, 3] {
        for (order, first, before) in [(BlockOrder::Forward, 5u32, 0..5u32), (BlockOrder::Reverse, 40, 41..48)] {
            for _ in 0..3 {
                let mut ran = vec![0u32; 48];
                let p = params(&[addr(&mut ran), failing]);
                let o = run_with(
                    &k,
                    cfg([48, 1, 1], [64, 1, 1], 0),
                    &p.ptrs,
                    ExecOptions { workers, block_order: order, ..ExecOptions::default() },
                );
                let e = o.result.unwrap_err();
                assert_eq!(e.code, 710);
                assert!(e.message.contains(&format!("block ({first},0,0) thread (3,0,0)")), "{workers} workers {order:?}: {}", e.message);
                for b in before.clone() {
                    assert_eq!(ran[b as usize], 1, "{workers} workers {order:?}: block {b} runs before the failing one");
                }
                // Hazards as one worker would have seen them: every block up to and
                // including the failing one, the report from the first in the order.
                assert_eq!(o.hazards.len(), 1, "{:?}", o.hazards);
                let h = &o.hazards[0];
                assert_eq!(h.kind, HazardKind::BarrierDivergenceExit);
                assert_eq!(h.occurrences, before.len() as u64 + 1, "{workers} workers {order:?}");
                let b0 = if order == BlockOrder::Forward { 0 } else { 47 };
                assert_eq!(h.block, [b0, 0, 0]);
            }
        }
    }
}

// Each block records the OS thread it ran on, and takes a while.
unsafe fn where_body(p: *const *mut c_void) {
    let c = ctx();
    if c.linear_tid == 0 {
        std::thread::sleep(std::time::Duration::from_millis(5));
        *out::<i64>(p, 0).add(c.block_idx.x as usize) = libc::gettid() as i64;
    }
}
kernel!(where_run, where_body);

#[test]
fn several_workers_run_blocks_on_several_os_threads() {
    let k = kref("where", where_run);
    for workers in [2usize, 3] {
        let mut tids = vec![0i64; 40];
        let p = params(&[addr(&mut tids)]);
        let o = run_with(&k, cfg([40, 1, 1], [32, 1, 1], 0), &p.ptrs, ExecOptions { workers, ..ExecOptions::default() });
        assert_eq!(o.result, Ok(()));
        let mut distinct = tids.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(tids.iter().all(|&t| t > 0));
        assert_eq!(distinct.len(), workers, "{workers} workers: blocks ran on {} OS threads", distinct.len());
    }
}
