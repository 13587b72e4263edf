//! The warp-collective and `__activemask` cases of the H200 conformance table, run on
//! the executor and compared value by value: the conformance kernels
//! (emu-driver/conformance/kernels/conformance.cu: warp_exited, warp_halves, am_*) are
//! ported here as test kernels with the same lanes, masks, operands and call sites, and
//! their outputs are printed in the table's format (`X*N` runs, `-` = not written).
//!
//! `warp_waiting` is not in the comparison: the H200 hangs there (lanes 16-31 wait at one
//! `__syncthreads`, lanes 0-15 reach another); the executor completes the barrier and
//! reports the divergence, which a test below checks.

mod exec_support;
use cuda::abi::*;
use cuda::exec::HazardKind;
use exec_support::*;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};

/// The `devres_warp_exited_*`, `devres_warp_halves_*` and `devres_activemask_*` lines of
/// emu-driver/tests/data/h200-conformance.txt as recorded on an H200 (driver
/// 580.159.04, CUDA 13.0, sm_90).
const H200: &str = "\
devres_warp_exited_shfl_idx: 0,0 done=0000ffff w32=0*16,-*16 w8=107,106,105,104,103,102,101,100,10f,10e,10d,10c,10b,10a,109,108,-*16
devres_warp_exited_shfl_up: 0,0 done=0000ffff w32=100,101,102,103,104,105,106,107,108,100,101,102,103,104,105,106,-*16 w8=100,101,102,100,101,102,103,104,108,109,10a,108,109,10a,10b,10c,-*16
devres_warp_exited_shfl_down: 0,0 done=0000ffff w32=109,10a,10b,10c,10d,10e,10f,0*9,-*16 w8=103,104,105,106,107,105,106,107,10b,10c,10d,10e,10f,10d,10e,10f,-*16
devres_warp_exited_shfl_xor: 0,0 done=0000ffff w32=0*16,-*16 w8=105,104,107,106,101,100,103,102,10d,10c,10f,10e,109,108,10b,10a,-*16
devres_warp_exited_ballot: 0,0 done=0000ffff r=9249*16,-*16
devres_warp_exited_any: 0,0 done=0000ffff r=0*16,-*16
devres_warp_exited_all: 0,0 done=0000ffff r=1*16,-*16
devres_warp_exited_reduce_add: 0,0 done=0000ffff r=1078*16,-*16
devres_warp_exited_reduce_min: 0,0 done=0000ffff r=f1*16,-*16
devres_warp_exited_match_any: 0,0 done=0000ffff r=1111,2222,4444,8888,1111,2222,4444,8888,1111,2222,4444,8888,1111,2222,4444,8888,-*16
devres_warp_exited_activemask: 0,0 done=0000ffff r=ffff*16,-*16
devres_warp_halves_shfl_idx: 0,0 done=ffffffff w32=11f,11e,11d,11c,11b,11a,119,118,117,116,115,114,113,112,111,110,10f,10e,10d,10c,10b,10a,109,108,107,106,105,104,103,102,101,100 w8=107,106,105,104,103,102,101,100,10f,10e,10d,10c,10b,10a,109,108,117,116,115,114,113,112,111,110,11f,11e,11d,11c,11b,11a,119,118
devres_warp_halves_shfl_up: 0,0 done=ffffffff w32=100,101,102,103,104,105,106,107,108,100,101,102,103,104,105,106,107,108,109,10a,10b,10c,10d,10e,10f,110,111,112,113,114,115,116 w8=100,101,102,100,101,102,103,104,108,109,10a,108,109,10a,10b,10c,110,111,112,110,111,112,113,114,118,119,11a,118,119,11a,11b,11c
devres_warp_halves_shfl_down: 0,0 done=ffffffff w32=109,10a,10b,10c,10d,10e,10f,110,111,112,113,114,115,116,117,118,119,11a,11b,11c,11d,11e,11f,117,118,119,11a,11b,11c,11d,11e,11f w8=103,104,105,106,107,105,106,107,10b,10c,10d,10e,10f,10d,10e,10f,113,114,115,116,117,115,116,117,11b,11c,11d,11e,11f,11d,11e,11f
devres_warp_halves_shfl_xor: 0,0 done=ffffffff w32=111,110,113,112,115,114,117,116,119,118,11b,11a,11d,11c,11f,11e,101,100,103,102,105,104,107,106,109,108,10b,10a,10d,10c,10f,10e w8=105,104,107,106,101,100,103,102,10d,10c,10f,10e,109,108,10b,10a,115,114,117,116,111,110,113,112,11d,11c,11f,11e,119,118,11b,11a
devres_warp_halves_ballot: 0,0 done=ffffffff r=41041041,8208208,41041041,8208208,41041041,8208208,41041041,8208208,41041041,8208208,41041041,8208208,41041041,8208208,41041041,8208208,41041041,8208208,41041041,8208208,41041041,8208208,41041041,8208208,41041041,8208208,41041041,8208208,41041041,8208208,41041041,8208208
devres_warp_halves_any: 0,0 done=ffffffff r=1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0
devres_warp_halves_all: 0,0 done=ffffffff r=0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1
devres_warp_halves_reduce_add: 0,0 done=ffffffff r=10f0,1100,10f0,1100,10f0,1100,10f0,1100,10f0,1100,10f0,1100,10f0,1100,10f0,1100,10f0,1100,10f0,1100,10f0,1100,10f0,1100,10f0,1100,10f0,1100,10f0,1100,10f0,1100
devres_warp_halves_reduce_min: 0,0 done=ffffffff r=e2,e1,e2,e1,e2,e1,e2,e1,e2,e1,e2,e1,e2,e1,e2,e1,e2,e1,e2,e1,e2,e1,e2,e1,e2,e1,e2,e1,e2,e1,e2,e1
devres_warp_halves_match_any: 0,0 done=ffffffff r=11111111,22222222,44444444,88888888,11111111,22222222,44444444,88888888,11111111,22222222,44444444,88888888,11111111,22222222,44444444,88888888,11111111,22222222,44444444,88888888,11111111,22222222,44444444,88888888,11111111,22222222,44444444,88888888,11111111,22222222,44444444,88888888
devres_warp_halves_activemask: 0,0 done=ffffffff r=ffffffff*32
devres_activemask_branch: 0,0 if=3ff*10,-*22 else=-*10,fffffc00*22
devres_activemask_mod3: 0,0 r=49249249,-*2,49249249,-*2,49249249,-*2,49249249,-*2,49249249,-*2,49249249,-*2,49249249,-*2,49249249,-*2,49249249,-*2,49249249,-*2,49249249,-
devres_activemask_exited: 0,0 r=fffff*20,-*12
devres_activemask_loop: 0,0 it0=-,9ce739ce*3,21084210,-,9ce739ce*3,21084210,-,9ce739ce*3,21084210,-,9ce739ce*3,21084210,-,9ce739ce*3,21084210,-,9ce739ce*3,21084210,-,9ce739ce it1=-*2,18c6318c*2,21084210,-*2,18c6318c*2,21084210,-*2,18c6318c*2,21084210,-*2,18c6318c*2,21084210,-*2,18c6318c*2,21084210,-*2,18c6318c*2,21084210,-*2 it2=-*3,10842108,21084210,-*3,10842108,21084210,-*3,10842108,21084210,-*3,10842108,21084210,-*3,10842108,21084210,-*3,10842108,21084210,-*2 it3=-*4,21084210,-*4,21084210,-*4,21084210,-*4,21084210,-*4,21084210,-*4,21084210,-*2
devres_activemask_aggregate: 0,0 masks=6db6db6d,-,6db6db6d*2,-,6db6db6d*2,-,6db6db6d*2,-,6db6db6d*2,-,6db6db6d*2,-,6db6db6d*2,-,6db6db6d*2,-,6db6db6d*2,-,6db6db6d*2,-,6db6db6d*2,-,f0f0f0f*4,-*4,f0f0f0f*4,-*4,f0f0f0f*4,-*4,f0f0f0f*4,-*4 ranks=0,-,1,2,-,3,4,-,5,6,-,7,8,-,9,a,-,b,c,-,d,e,-,f,10,-,11,12,-,13,14,-,0,1,2,3,-*4,4,5,6,7,-*4,8,9,a,b,-*4,c,d,e,f,-*4 counter=37 slots=ok
";

const UNWRITTEN: u32 = 0xeeee_eeee;

/// The table's value format.
fn lanes_text(v: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i + 1;
        while j < v.len() && v[j] == v[i] {
            j += 1;
        }
        let s = if v[i] == UNWRITTEN { "-".to_string() } else { format!("{:x}", v[i]) };
        out.push(if j - i > 1 { format!("{s}*{}", j - i) } else { s });
        i = j;
    }
    out.join(",")
}

/// case -> key -> value
fn h200() -> HashMap<String, HashMap<String, String>> {
    H200.lines()
        .map(|l| {
            let (case, rest) = l.split_once(": ").expect("case: values");
            let vals = rest.split(' ').skip(1).filter_map(|kv| kv.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect();
            (case.to_string(), vals)
        })
        .collect()
}

fn check(case: &str, key: &str, got: String) {
    let table = h200();
    let want = &table[case][key];
    assert_eq!(&got, want, "{case} {key}: executor vs H200");
}

const OPS: [&str; 11] =
    ["shfl_idx", "shfl_up", "shfl_down", "shfl_xor", "ballot", "any", "all", "reduce_add", "reduce_min", "match_any", "activemask"];

/// conformance.cu's warp_op: one collective per op, results to out[lane] (width 32) and
/// out[32 + lane] (width 8, shuffles only). Each call its own site, as in the source.
unsafe fn warp_op(op: u32, mask: u32, lane: u32, v: u32, out: *mut u32) {
    let o = |i: u32, x: u64| *out.add(i as usize) = x as u32;
    let v = v as u64;
    match op {
        0 => {
            o(lane, warp_at(line!(), warp::SHFL_IDX, mask, v, 31 - lane as i32, 32).0);
            o(32 + lane, warp_at(line!(), warp::SHFL_IDX, mask, v, 31 - lane as i32, 8).0);
        }
        1 => {
            o(lane, warp_at(line!(), warp::SHFL_UP, mask, v, 9, 32).0);
            o(32 + lane, warp_at(line!(), warp::SHFL_UP, mask, v, 3, 8).0);
        }
        2 => {
            o(lane, warp_at(line!(), warp::SHFL_DOWN, mask, v, 9, 32).0);
            o(32 + lane, warp_at(line!(), warp::SHFL_DOWN, mask, v, 3, 8).0);
        }
        3 => {
            o(lane, warp_at(line!(), warp::SHFL_XOR, mask, v, 17, 32).0);
            o(32 + lane, warp_at(line!(), warp::SHFL_XOR, mask, v, 5, 8).0);
        }
        4 => o(lane, warp_at(line!(), warp::BALLOT, mask, lane.is_multiple_of(3) as u64, 0, 32).0),
        5 => o(lane, warp_at(line!(), warp::ANY, mask, (lane == 20) as u64, 0, 32).0),
        6 => o(lane, warp_at(line!(), warp::ALL, mask, (lane != 20) as u64, 0, 32).0),
        7 => o(lane, warp_at(line!(), warp::REDUCE_ADD, mask, v, 0, 32).0),
        8 => o(lane, warp_at(line!(), warp::REDUCE_MIN, mask, 0x200 - v, 0, 32).0),
        9 => o(lane, warp_at(line!(), warp::MATCH_ANY, mask, (lane % 4) as u64, 4, 32).0),
        _ => o(lane, activemask!() as u64),
    }
}

// scenario 0: exited, 1: waiting, 2: halves (conformance.cu's warp_exited/_waiting/_halves)
unsafe fn scenario_body(p: *const *mut c_void) {
    let lane = lane();
    let v = 0x100 + lane;
    let out = out::<u32>(p, 0);
    let op: u64 = param(p, 1);
    let scenario: u64 = param(p, 2);
    match scenario {
        0 => {
            if lane >= 16 {
                return;
            }
            warp_op(op as u32, u32::MAX, lane, v, out);
        }
        1 => {
            if lane >= 16 {
                syncthreads!();
            } else {
                warp_op(op as u32, 0x0000_ffff, lane, v, out);
                syncthreads!();
            }
        }
        _ => warp_op(op as u32, if lane & 1 != 0 { 0xaaaa_aaaa } else { 0x5555_5555 }, lane, v, out),
    }
    *out.add(64 + lane as usize) = 1;
}
kernel!(scenario_run, scenario_body);

fn scenario(name: &str, scenario: u64, op: usize) -> (Vec<u32>, cuda::exec::LaunchOutcome) {
    let k = kref(&format!("warp_{name}"), scenario_run);
    let mut out = vec![UNWRITTEN; 96];
    let p = params(&[addr(&mut out), op as u64, scenario]);
    let o = run(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs);
    (out, o)
}

fn compare_scenario(name: &str, sc: u64) {
    for (op, opname) in OPS.iter().enumerate() {
        let (out, o) = scenario(name, sc, op);
        assert_eq!(o.result, Ok(()), "{name} {opname}");
        let case = format!("devres_warp_{name}_{opname}");
        let done = (0..32).filter(|&l| out[64 + l] == 1).fold(0u32, |m, l| m | 1 << l);
        check(&case, "done", format!("{done:08x}"));
        if op < 4 {
            check(&case, "w32", lanes_text(&out[..32]));
            check(&case, "w8", lanes_text(&out[32..64]));
        } else {
            check(&case, "r", lanes_text(&out[..32]));
        }
    }
}

#[test]
fn collectives_with_exited_lanes_give_what_the_h200_gives() {
    compare_scenario("exited", 0);
}

#[test]
fn shuffles_reading_converged_lanes_outside_the_mask_give_what_the_h200_gives() {
    compare_scenario("halves", 2);
    // Reading outside the mask is still a hazard (undefined in CUDA).
    let (_, o) = scenario("halves", 2, 0);
    assert!(
        o.hazards.iter().any(|h| h.kind == HazardKind::ShuffleSourceOutsideMask && h.message.contains("that lane's value")),
        "{:?}",
        o.hazards
    );
}

#[test]
fn a_warp_split_across_two_barriers_completes_with_a_report_where_the_h200_hangs() {
    for op in [0usize, 4, 10] {
        let (out, o) = scenario("waiting", 1, op);
        assert_eq!(o.result, Ok(()), "op {op}");
        assert!((64..96).all(|i| out[i] == 1));
        assert!(o.hazards.iter().any(|h| h.kind == HazardKind::BarrierDivergenceSite), "op {op}: {:?}", o.hazards);
    }
    // The sources (lanes 16-31) wait at the other barrier: not measurable on the device
    // (it hangs); the executor gives the caller's own value.
    let (out, _) = scenario("waiting", 1, 0);
    assert_eq!(out[0], 0x100);
}

// conformance.cu's am_branch, am_mod3, am_exited, am_loop (one warp, `arg` per lane or
// scalar, outputs as there).
unsafe fn am_body(p: *const *mut c_void) {
    let lane = lane();
    let arg = out::<i32>(p, 0);
    let out = out::<u32>(p, 1);
    let which: u64 = param(p, 2);
    match which {
        0 => {
            if (lane as i32) < *arg {
                *out.add(lane as usize) = activemask!();
            } else {
                let m = activemask!();
                *out.add(32 + lane as usize) = m;
            }
        }
        1 => {
            if lane.is_multiple_of(*arg as u32) {
                *out.add(lane as usize) = activemask!();
            }
        }
        2 => {
            if lane as i32 >= *arg {
                return;
            }
            *out.add(lane as usize) = activemask!();
        }
        _ => {
            let n = *arg.add(lane as usize);
            for i in 0..n {
                *out.add(32 * i as usize + lane as usize) = activemask!();
            }
        }
    }
}
kernel!(am_run, am_body);

fn am(which: u64, mut arg: Vec<i32>, words: usize) -> Vec<u32> {
    let k = kref("am", am_run);
    let mut out = vec![UNWRITTEN; words];
    let p = params(&[addr(&mut arg), addr(&mut out), which]);
    let o = run(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert!(o.hazards.is_empty(), "{:?}", o.hazards);
    out
}

#[test]
fn activemask_in_divergent_code_gives_what_the_h200_gives() {
    let out = am(0, vec![10], 64);
    check("devres_activemask_branch", "if", lanes_text(&out[..32]));
    check("devres_activemask_branch", "else", lanes_text(&out[32..]));
    check("devres_activemask_mod3", "r", lanes_text(&am(1, vec![3], 32)));
    check("devres_activemask_exited", "r", lanes_text(&am(2, vec![20], 32)));
}

/// Parses the table's `X*N` lane list back into 32 values (UNWRITTEN for `-`).
fn parse_lanes(s: &str) -> Vec<u32> {
    s.split(',')
        .flat_map(|part| {
            let (v, n) = part.split_once('*').map_or((part, 1), |(v, n)| (v, n.parse().unwrap()));
            let v = if v == "-" { UNWRITTEN } else { u32::from_str_radix(v, 16).unwrap() };
            std::iter::repeat_n(v, n)
        })
        .collect()
}

#[test]
fn activemask_in_a_loop_is_the_documented_superset_of_the_h200s_masks() {
    // The H200 splits the lanes of `for (i = 0; i < trips; ++i)` by code path (lanes with
    // 4 trips run apart from those with 1-3: the compiler's unrolled and remainder
    // loops), which source-level convergence cannot see: the executor gives every lane
    // still in the loop (the model's documented limit), a superset of the device's mask.
    let out = am(3, (0..32).map(|l| l % 5).collect(), 128);
    let table = h200();
    for i in 0..4u32 {
        let device = parse_lanes(&table["devres_activemask_loop"][&format!("it{i}")]);
        let still = (0..32).filter(|l| l % 5 > i).fold(0u32, |m, l| m | 1 << l);
        for l in 0..32usize {
            let got = out[32 * i as usize + l];
            assert_eq!(got == UNWRITTEN, device[l] == UNWRITTEN, "iteration {i} lane {l}: written");
            if got != UNWRITTEN {
                assert_eq!(got, still, "iteration {i} lane {l}");
                assert_eq!(device[l] & !got, 0, "iteration {i} lane {l}: device mask within ours");
                assert_ne!(device[l] & (1 << l), 0);
            }
        }
    }
}

// conformance.cu's am_aggregate.
unsafe fn am_aggregate_body(p: *const *mut c_void) {
    let c = ctx();
    let t = c.block_idx.x * c.block_dim.x + c.thread_idx.x;
    let lane = c.linear_tid % 32;
    if *out::<i32>(p, 0).add(t as usize) != 0 {
        let mask = activemask!();
        let leader = mask.trailing_zeros();
        let mut base = 0u32;
        if lane == leader {
            base = (*out::<AtomicU32>(p, 1)).fetch_add(mask.count_ones(), Ordering::Relaxed);
        }
        let base = shfl!(mask, base, leader) as u32;
        let rank = (mask & ((1u32 << lane) - 1)).count_ones();
        *out::<u32>(p, 2).add(t as usize) = base + rank;
        *out::<u32>(p, 3).add(t as usize) = mask;
    }
}
kernel!(am_aggregate_run, am_aggregate_body);

#[test]
fn the_warp_aggregated_atomic_gives_what_the_h200_gives() {
    let k = kref("am_aggregate", am_aggregate_run);
    let mut pred: Vec<i32> = (0..64).map(|t: i32| if t < 32 { (t % 3 != 1) as i32 } else { (t & 4 == 0) as i32 }).collect();
    let mut counter = [1000u32];
    let mut out = vec![UNWRITTEN; 64];
    let mut masks = vec![UNWRITTEN; 64];
    let p = params(&[addr(&mut pred), addr(&mut counter), addr(&mut out), addr(&mut masks)]);
    let o = run(&k, cfg([1, 1, 1], [64, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert!(o.hazards.is_empty(), "{:?}", o.hazards);
    let mut ranks = vec![UNWRITTEN; 64];
    for w in 0..2 {
        let lw = &out[32 * w..32 * (w + 1)];
        if let Some(&base) = lw.iter().filter(|&&x| x != UNWRITTEN).min() {
            for (l, &x) in lw.iter().enumerate() {
                if x != UNWRITTEN {
                    ranks[32 * w + l] = x - base;
                }
            }
        }
    }
    let mut slots: Vec<u32> = out.iter().copied().filter(|&x| x != UNWRITTEN).collect();
    slots.sort_unstable();
    let exact = slots.iter().enumerate().all(|(i, &x)| x == 1000 + i as u32) && counter[0] == 1000 + slots.len() as u32;
    check("devres_activemask_aggregate", "masks", lanes_text(&masks));
    check("devres_activemask_aggregate", "ranks", lanes_text(&ranks));
    check("devres_activemask_aggregate", "counter", format!("{}", counter[0] - 1000));
    check("devres_activemask_aggregate", "slots", if exact { "ok" } else { "bad" }.to_string());
}
