//! Block barriers, thread indexing and the fast path of the executor.

mod exec_support;
use cuda::abi;
use cuda::exec::{self, stats};
use exec_support::*;
use std::ffi::c_void;

// Shared-memory tree reduction: sum of (global index)^2 per block.
unsafe fn tree_body(p: *const *mut c_void) {
    let c = ctx();
    let t = c.linear_tid as usize;
    let s = c.dyn_smem as *mut u64;
    let g = (c.block_idx.x * c.block_dim.x) as u64 + t as u64;
    *s.add(t) = g * g;
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
kernel!(tree_run, tree_body);

#[test]
fn tree_reduction_with_barriers_is_exact_and_reuses_fibers() {
    let k = kref("tree", tree_run);
    let mut res = vec![0u64; 4];
    let p = params(&[addr(&mut res)]);
    let before = stats();
    let o = run(&k, cfg([4, 1, 1], [256, 1, 1], 256 * 8), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert!(o.hazards.is_empty(), "{:?}", o.hazards);
    for (b, &r) in res.iter().enumerate() {
        let want: u64 = (b as u64 * 256..(b as u64 + 1) * 256).map(|g| g * g).sum();
        assert_eq!(r, want, "block {b}");
    }
    let mid = stats();
    assert_eq!(mid.barriers - before.barriers, 4 * 9);
    assert_eq!(mid.fibers_created - before.fibers_created, 256 - before.fibers_created.min(256));
    // A second launch creates no fiber at all.
    res.fill(0);
    let o = run(&k, cfg([4, 1, 1], [256, 1, 1], 256 * 8), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert_eq!(res[3], (768u64..1024).map(|g| g * g).sum::<u64>());
    assert_eq!(stats().fibers_created, mid.fibers_created);
}

unsafe fn votes_body(p: *const *mut c_void) {
    let t = tid();
    let o = out::<i32>(p, 0).add(t as usize * 6);
    *o = barrier(abi::bar::COUNT, t.is_multiple_of(3));
    *o.add(1) = barrier(abi::bar::AND, t < 100);
    *o.add(2) = barrier(abi::bar::AND, t != 57);
    *o.add(3) = barrier(abi::bar::OR, t == 99);
    *o.add(4) = barrier(abi::bar::OR, false);
    *o.add(5) = barrier(abi::bar::SYNC, true);
}
kernel!(votes_run, votes_body);

#[test]
fn barrier_count_and_or_give_block_wide_results() {
    let k = kref("votes", votes_run);
    let mut res = vec![-1i32; 100 * 6];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([1, 1, 1], [100, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert!(o.hazards.is_empty());
    for t in 0..100 {
        assert_eq!(&res[t * 6..t * 6 + 6], &[34, 1, 0, 1, 0, 0], "thread {t}");
    }
}

// Every thread records its indices before and after a barrier.
unsafe fn index_body(p: *const *mut c_void) {
    let c = ctx();
    let per_block = c.block_dim.x * c.block_dim.y * c.block_dim.z;
    let b = c.block_idx.x + c.grid_dim.x * (c.block_idx.y + c.grid_dim.y * c.block_idx.z);
    let g = (b * per_block + c.linear_tid) as usize;
    let o = out::<u32>(p, 0).add(g * 7);
    let before = [c.thread_idx.x, c.thread_idx.y, c.thread_idx.z];
    let n = barrier(abi::bar::COUNT, true);
    let c = ctx();
    assert_eq!(before, [c.thread_idx.x, c.thread_idx.y, c.thread_idx.z]);
    *o = c.thread_idx.x;
    *o.add(1) = c.thread_idx.y;
    *o.add(2) = c.thread_idx.z;
    *o.add(3) = c.block_idx.x;
    *o.add(4) = c.block_idx.y;
    *o.add(5) = c.block_idx.z;
    *o.add(6) = n as u32;
}
kernel!(index_run, index_body);

fn check_indices(grid: [u32; 3], block: [u32; 3]) {
    let k = kref("index", index_run);
    let per_block = (block[0] * block[1] * block[2]) as usize;
    let blocks = (grid[0] * grid[1] * grid[2]) as usize;
    let mut res = vec![u32::MAX; per_block * blocks * 7];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg(grid, block, 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert!(o.hazards.is_empty());
    let mut g = 0;
    for bz in 0..grid[2] {
        for by in 0..grid[1] {
            for bx in 0..grid[0] {
                for z in 0..block[2] {
                    for y in 0..block[1] {
                        for x in 0..block[0] {
                            assert_eq!(&res[g * 7..g * 7 + 7], &[x, y, z, bx, by, bz, per_block as u32], "global thread {g}");
                            g += 1;
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn three_dimensional_blocks_and_grids_index_like_cuda() {
    check_indices([2, 3, 2], [8, 4, 2]);
}

#[test]
fn blocks_of_1024_threads_synchronise() {
    check_indices([2, 1, 1], [1024, 1, 1]);
    check_indices([1, 1, 1], [16, 8, 8]);
}

unsafe fn axpy_body(p: *const *mut c_void) {
    let c = ctx();
    let i = (c.block_idx.x * c.block_dim.x + c.thread_idx.x) as usize;
    let n: u64 = param(p, 3);
    if (i as u64) < n {
        let a = out::<f32>(p, 0);
        let b = out::<f32>(p, 1);
        let r = out::<f32>(p, 2);
        *r.add(i) = *a.add(i) * 1.5 + *b.add(i);
    }
}
kernel!(axpy_run, axpy_body);

#[test]
fn blocks_without_rendezvous_take_one_resume_each() {
    let n = 64 * 256 - 17;
    let mut a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut b: Vec<f32> = (0..n).map(|i| 0.25 * i as f32).collect();
    let mut c = vec![0f32; n];
    let p = params(&[addr(&mut a), addr(&mut b), addr(&mut c), n as u64]);
    let k = kref("axpy", axpy_run);
    let s0 = stats();
    let o = run(&k, cfg([64, 1, 1], [256, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    let s1 = stats();
    assert_eq!(s1.blocks - s0.blocks, 64);
    assert_eq!(s1.fast_blocks - s0.fast_blocks, 64);
    assert_eq!(s1.fiber_resumes - s0.fiber_resumes, 64);
    assert_eq!(s1.ranges_started - s0.ranges_started, 64);
    assert!(s1.fibers_created - s0.fibers_created <= 1);
    for i in 0..n {
        assert_eq!(c[i], a[i] * 1.5 + b[i]);
    }
}

// Threads 40..47 (lanes 8..15 of warp 1) take part in a ballot over their own lanes; the
// rest never call the runtime.
unsafe fn partial_body(p: *const *mut c_void) {
    let t = tid();
    let o = out::<u32>(p, 0);
    if (40..48).contains(&t) {
        let (r, _) = warp(abi::warp::BALLOT, 0x0000_ff00, t.is_multiple_of(2) as u64, 0, 32);
        *o.add(t as usize) = r as u32;
    } else {
        *o.add(t as usize) = t + 1000;
    }
}
kernel!(partial_run, partial_body);

#[test]
fn a_range_is_interrupted_at_the_first_thread_that_waits() {
    let k = kref("partial", partial_run);
    let mut res = vec![0u32; 64];
    let p = params(&[addr(&mut res)]);
    let s0 = stats();
    let o = run(&k, cfg([1, 1, 1], [64, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert!(o.hazards.is_empty(), "{:?}", o.hazards);
    let s1 = stats();
    for t in 0..64u32 {
        let want = if (40..48).contains(&t) { 0x5500 } else { t + 1000 };
        assert_eq!(res[t as usize], want, "thread {t}");
    }
    // [0,64) runs plainly up to thread 40; threads 40..46 each wait and hand the rest
    // of the range on; thread 47 completes the ballot and runs 47..64 in its range.
    assert_eq!(s1.ranges_started - s0.ranges_started, 8);
    assert_eq!(s1.fast_blocks - s0.fast_blocks, 0);
    assert_eq!(s1.warp_collectives - s0.warp_collectives, 1);
    assert_eq!(s1.fiber_resumes - s0.fiber_resumes, 8 + 7);
}

#[test]
fn the_runtime_table_matches_the_abi() {
    let t = exec::runtime_table();
    assert_eq!(t.abi_version, abi::ABI_VERSION);
    assert_eq!(t.size as usize, std::mem::size_of::<abi::Runtime>());
    // Outside a launch the runtime answers neutrally instead of crashing.
    assert_eq!(unsafe { (t.activemask)(abi::Site::UNKNOWN) }, 0);
    assert_eq!(unsafe { (t.barrier)(abi::bar::COUNT, 1, abi::Site::UNKNOWN) }, 0);
    let c0 = unsafe { (t.clock)() };
    assert!(unsafe { (t.clock)() } >= c0);
}
