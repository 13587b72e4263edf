//! Reads from lanes that cannot take part in a warp collective (exited, outside the
//! mask): CUDA leaves them undefined, the device gives definite values; the executor
//! returns those (see src/exec/device_defined.rs for the source of each) and reports
//! every occurrence as a hazard (error mode fails the launch).

mod exec_support;
use cuda::abi::*;
use cuda::exec::{HazardKind, HAZARD_ERROR_CODE};
use exec_support::*;
use std::ffi::c_void;

// Lanes >= `live` exit first; the others shuffle with a full mask.
unsafe fn shuffle_body(p: *const *mut c_void) {
    let l = lane();
    let live: u64 = param(p, 1);
    let op: u64 = param(p, 2);
    let arg: u64 = param(p, 3);
    if l as u64 >= live {
        return;
    }
    let (r, _) = warp_at(line!(), op as u32, u32::MAX, 1000 + l as u64, arg as i32, 32);
    *out::<u64>(p, 0).add(l as usize) = r;
}
kernel!(shuffle_run, shuffle_body);

fn shuffle_with_exited(op: u32, arg: u64, live: u64) -> (Vec<u64>, cuda::exec::LaunchOutcome) {
    let k = kref("shuffle_exited", shuffle_run);
    let mut res = vec![u64::MAX; 32];
    let p = params(&[addr(&mut res), live, op as u64, arg]);
    let o = run(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs);
    (res, o)
}

#[test]
fn shfl_down_from_an_exited_lane_reads_zero_as_on_the_h200() {
    let (res, o) = shuffle_with_exited(warp::SHFL_DOWN, 4, 30);
    assert_eq!(o.result, Ok(()));
    for l in 0..30u64 {
        // Sources 30 and 31 exited: 0 (measured on an H200); past lane 31 is out of
        // range (the caller's own value, as PTX defines); the rest read their source.
        let want = if l + 4 < 30 {
            1000 + l + 4
        } else if l + 4 < 32 {
            0
        } else {
            1000 + l
        };
        assert_eq!(res[l as usize], want, "lane {l}");
    }
    assert_eq!(o.hazards.len(), 1, "{:?}", o.hazards);
    assert_eq!(o.hazards[0].kind, HazardKind::WarpLaneExited);
    assert_eq!(o.hazards[0].threads, vec![30, 31]);
    assert!(o.hazards[0].message.contains("shuffle reads from them return 0"), "{}", o.hazards[0].message);
    assert!(o.hazards[0].operation.contains("exec_test.rs:"), "{}", o.hazards[0].operation);
    // Out of the segment (lane + delta > 31) is not an absent lane: own value.
    let (res, o) = shuffle_with_exited(warp::SHFL_DOWN, 4, 32);
    assert!(o.hazards.is_empty());
    assert_eq!(res[30], 1030);
    // Error mode fails the launch on it.
    let k = kref("shuffle_exited", shuffle_run);
    let mut r = vec![0u64; 32];
    let p = params(&[addr(&mut r), 30, warp::SHFL_DOWN as u64, 4]);
    assert_eq!(run_strict(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs).result.unwrap_err().code, HAZARD_ERROR_CODE);
}

#[test]
fn every_shuffle_from_an_exited_lane_reads_zero() {
    for (op, arg, reader) in [(warp::SHFL_IDX, 31u64, 0usize), (warp::SHFL_UP, 1, 0), (warp::SHFL_XOR, 1, 30)] {
        // Lane 31 exits. idx: every lane reads it; xor 1: lane 30 does; up 1: nobody
        // does (lane 0's source is out of range: its own value, as PTX defines).
        let (res, o) = shuffle_with_exited(op, arg, 31);
        assert_eq!(o.result, Ok(()));
        let want = if op == warp::SHFL_UP { 1000 } else { 0 };
        assert_eq!(res[reader], want, "op {op}: lane {reader}");
        assert_eq!(o.hazards.len(), 1, "op {op}: {:?}", o.hazards);
        assert!(o.hazards[0].message.contains("shuffle reads from them return 0"), "{}", o.hazards[0].message);
    }
}

// A 48-thread block: warp 1 has 16 lanes. A full-mask shfl_down tree sums a warp; in
// warp 1 the reads from the 16 lanes that do not exist give 0, so lane 0 gets the sum
// of the existing lanes, as on the device.
unsafe fn tail_body(p: *const *mut c_void) {
    let t = tid();
    let mut v = t as u64 + 1;
    let mut d = 16;
    while d > 0 {
        v += warp(warp::SHFL_DOWN, u32::MAX, v, d, 32).0;
        d /= 2;
    }
    if t.is_multiple_of(32) {
        *out::<u64>(p, 0).add((t / 32) as usize) = v;
    }
}
kernel!(tail_run, tail_body);

#[test]
fn a_full_mask_reduction_over_a_partial_warp_sums_the_existing_lanes() {
    let k = kref("tail", tail_run);
    let mut res = vec![0u64; 2];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([1, 1, 1], [48, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert_eq!(res[0], (1..=32).sum::<u64>());
    assert_eq!(res[1], (33..=48).sum::<u64>());
    assert_eq!(o.hazards.len(), 1);
    assert!(o.hazards[0].message.contains("lanes 16-31 do not exist"), "{}", o.hazards[0].message);
}

// Lanes 0..15 shuffle over mask 0x0000ffff; lane 3 reads lane 20 (alive, outside the
// mask: it waits at the barrier below), lane 4 reads lane 21 likewise.
unsafe fn outside_alive_body(p: *const *mut c_void) {
    let l = lane();
    if l < 16 {
        let src = match l {
            3 => 20,
            4 => 21,
            _ => 15 - l,
        };
        let (r, _) = warp_at(line!(), warp::SHFL_IDX, 0x0000_ffff, 500 + l as u64, src as i32, 32);
        *out::<u64>(p, 0).add(l as usize) = r;
    }
    syncthreads();
}
kernel!(outside_alive_run, outside_alive_body);

#[test]
fn a_shuffle_from_an_alive_lane_outside_the_mask_keeps_the_callers_value() {
    let k = kref("outside_alive", outside_alive_run);
    let mut res = vec![0u64; 16];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    for l in 0..16u64 {
        let want = if l == 3 || l == 4 { 500 + l } else { 500 + 15 - l };
        assert_eq!(res[l as usize], want, "lane {l}");
    }
    assert_eq!(o.hazards.len(), 1, "{:?}", o.hazards);
    assert_eq!(o.hazards[0].kind, HazardKind::ShuffleSourceOutsideMask);
    assert!(
        o.hazards[0].message.contains("reads lane 20") && o.hazards[0].message.contains("the caller's own value"),
        "{}",
        o.hazards[0].message
    );
}

// Lanes 28..31 exit; the rest vote, match and reduce over the full mask.
unsafe fn votes_body(p: *const *mut c_void) {
    let l = lane();
    if l >= 28 {
        return;
    }
    let o = out::<u64>(p, 0).add(l as usize * 7);
    *o = warp(warp::BALLOT, u32::MAX, 1, 0, 32).0;
    *o.add(1) = warp(warp::ALL, u32::MAX, 1, 0, 32).0;
    *o.add(2) = warp(warp::ANY, u32::MAX, (l == 27) as u64, 0, 32).0;
    let (m, pr) = warp(warp::MATCH_ALL, u32::MAX, 9, 4, 32);
    *o.add(3) = m;
    *o.add(4) = pr as u64;
    *o.add(5) = warp(warp::REDUCE_ADD, u32::MAX, 1, 0, 32).0;
    *o.add(6) = warp(warp::MATCH_ANY, u32::MAX, 9, 4, 32).0;
}
kernel!(votes_run, votes_body);

#[test]
fn votes_matches_and_reductions_count_only_the_lanes_that_arrived() {
    let k = kref("votes_exited", votes_run);
    let mut res = vec![u64::MAX; 32 * 7];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    for l in 0..28 {
        // __match_all_sync gives the lanes that took part, not the mask (measured on the
        // device: devres_warp_exited_match_all, devres_warp_partial_match_all).
        assert_eq!(&res[l * 7..l * 7 + 7], &[0x0fff_ffff, 1, 1, 0x0fff_ffff, 1, 28, 0x0fff_ffff], "lane {l}");
    }
    // One report per collective (call site and op), each naming the exited threads.
    assert_eq!(o.hazards.len(), 6, "{:?}", o.hazards);
    assert!(o.hazards.iter().all(|h| h.kind == HazardKind::WarpLaneExited && h.threads == vec![28, 29, 30, 31]));
    assert!(o.hazards[0].message.contains("contribute nothing"), "{}", o.hazards[0].message);
}
