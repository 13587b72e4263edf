//! Warp collectives: every op of the ABI, with widths and partial masks, checked against
//! references written from the CUDA programming guide's descriptions.

// Loops index per-thread results by thread id, as the CUDA they model does.
#![allow(clippy::needless_range_loop)]

mod exec_support;
use cuda::abi::*;
use exec_support::*;
use std::ffi::c_void;

const WIDTHS: [i32; 6] = [1, 2, 4, 8, 16, 32];
const ARGS: [i32; 6] = [0, 1, 3, 7, 16, 31];
const OPS: [u32; 4] = [warp::SHFL_IDX, warp::SHFL_UP, warp::SHFL_DOWN, warp::SHFL_XOR];

fn value_of(t: u32) -> u64 {
    0xabcd_0000_0000_0000 | (t as u64 * 7 + 3)
}

/// The guide's words: idx reads lane srcLane % width of the caller's segment; up reads
/// lane - delta unless that leaves the segment; down reads lane + delta likewise; xor
/// reads lane ^ laneMask unless that lies in a later segment.
fn reference(op: u32, lane: u32, arg: i32, w: i32) -> u32 {
    let (w, a) = (w as u32, arg as u32);
    let seg = lane / w;
    match op {
        warp::SHFL_IDX => seg * w + a % w,
        warp::SHFL_UP => {
            if lane % w >= a {
                lane - a
            } else {
                lane
            }
        }
        warp::SHFL_DOWN => {
            if lane % w + a < w {
                lane + a
            } else {
                lane
            }
        }
        _ => {
            let t = lane ^ a;
            if t / w > seg {
                lane
            } else {
                t
            }
        }
    }
}

unsafe fn shfl_body(p: *const *mut c_void) {
    let t = tid();
    let o = out::<u64>(p, 0);
    let mut k = 0;
    for op in OPS {
        for w in WIDTHS {
            for a in ARGS {
                let (r, _) = warp(op, u32::MAX, value_of(t), a, w);
                *o.add(t as usize * 144 + k) = r;
                k += 1;
            }
        }
    }
}
kernel!(shfl_run, shfl_body);

#[test]
fn shuffles_of_every_kind_and_width_read_the_documented_lane() {
    let k = kref("shfl", shfl_run);
    let mut res = vec![0u64; 64 * 144];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([1, 1, 1], [64, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert!(o.hazards.is_empty(), "{:?}", o.hazards);
    for t in 0..64u32 {
        let mut k = 0;
        for op in OPS {
            for w in WIDTHS {
                for a in ARGS {
                    let src = (t / 32) * 32 + reference(op, t % 32, a, w);
                    assert_eq!(res[t as usize * 144 + k], value_of(src), "thread {t} op {op} width {w} arg {a}");
                    k += 1;
                }
            }
        }
    }
}

const VOTE_MASK: u32 = 0x0f0f_f0f0;

unsafe fn vote_body(p: *const *mut c_void) {
    let l = lane();
    if VOTE_MASK & (1 << l) == 0 {
        return;
    }
    let o = out::<u64>(p, 0).add(tid() as usize * 6);
    *o = warp(warp::BALLOT, VOTE_MASK, l.is_multiple_of(3) as u64, 0, 32).0;
    *o.add(1) = warp(warp::ANY, VOTE_MASK, (l == 27) as u64, 0, 32).0;
    *o.add(2) = warp(warp::ANY, VOTE_MASK, (l == 0) as u64, 0, 32).0; // lane 0 is not in the mask
    *o.add(3) = warp(warp::ALL, VOTE_MASK, (l >= 4) as u64, 0, 32).0;
    *o.add(4) = warp(warp::ALL, VOTE_MASK, (l != 13) as u64, 0, 32).0;
    *o.add(5) = warp(warp::SYNC, VOTE_MASK, 0, 0, 32).0;
}
kernel!(vote_run, vote_body);

#[test]
fn votes_over_a_partial_mask_see_only_its_lanes() {
    let k = kref("vote", vote_run);
    let mut res = vec![u64::MAX; 32 * 6];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert!(o.hazards.is_empty(), "{:?}", o.hazards);
    let ballot = (0..32).filter(|l| VOTE_MASK & (1 << l) != 0 && l % 3 == 0).fold(0u64, |m, l| m | 1 << l);
    for l in 0..32usize {
        let got = &res[l * 6..l * 6 + 6];
        if VOTE_MASK & (1 << l) == 0 {
            assert_eq!(got, &[u64::MAX; 6]);
        } else {
            assert_eq!(got, &[ballot, 1, 0, 1, 0, 0], "lane {l}");
        }
    }
}

unsafe fn match_entry(p: *const *mut c_void) {
    // match_all over lanes 4..7 only is called by those lanes; the rest skip it.
    let l = lane();
    let o = out::<u64>(p, 0).add(tid() as usize * 8);
    let key32 = (l / 4) as u64;
    let key64 = ((l % 2) as u64) << 40 | 5;
    *o = warp(warp::MATCH_ANY, u32::MAX, key32, 4, 32).0;
    *o.add(1) = warp(warp::MATCH_ANY, u32::MAX, key64, 4, 32).0;
    *o.add(2) = warp(warp::MATCH_ANY, u32::MAX, key64, 8, 32).0;
    if (4..8).contains(&l) {
        let (m, pr) = warp(warp::MATCH_ALL, 0x0000_00f0, key32, 4, 32);
        *o.add(3) = m;
        *o.add(4) = pr as u64;
    }
    let (m, pr) = warp(warp::MATCH_ALL, u32::MAX, key64, 8, 32);
    *o.add(5) = m;
    *o.add(6) = pr as u64;
    let (m, pr) = warp(warp::MATCH_ALL, u32::MAX, key64, 4, 32);
    *o.add(7) = m | (pr as u64) << 32;
}
kernel!(match_run, match_entry);

#[test]
fn match_any_and_all_compare_32_or_64_bit_keys() {
    let k = kref("match", match_run);
    let mut res = vec![u64::MAX; 32 * 8];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert!(o.hazards.is_empty(), "{:?}", o.hazards);
    for l in 0..32usize {
        let g = &res[l * 8..l * 8 + 8];
        assert_eq!(g[0], 0xfu64 << (l / 4 * 4), "lane {l}");
        assert_eq!(g[1], 0xffff_ffff);
        assert_eq!(g[2], if l % 2 == 0 { 0x5555_5555 } else { 0xaaaa_aaaa });
        if (4..8).contains(&l) {
            assert_eq!((g[3], g[4]), (0xf0, 1));
        } else {
            assert_eq!((g[3], g[4]), (u64::MAX, u64::MAX));
        }
        assert_eq!((g[5], g[6]), (0, 0));
        assert_eq!(g[7], 0xffff_ffff | 1 << 32);
    }
}

unsafe fn reduce_body(p: *const *mut c_void) {
    let l = lane();
    let o = out::<u64>(p, 0).add(tid() as usize * 9);
    let v = (l as i32 - 10) as u32 as u64;
    let half = 0x0000_ffffu32;
    let ops = [
        (warp::REDUCE_ADD, 1, u32::MAX),
        (warp::REDUCE_MIN, 1, u32::MAX),
        (warp::REDUCE_MIN, 0, u32::MAX),
        (warp::REDUCE_MAX, 1, u32::MAX),
        (warp::REDUCE_MAX, 0, u32::MAX),
        (warp::REDUCE_AND, 0, u32::MAX),
        (warp::REDUCE_OR, 0, u32::MAX),
        (warp::REDUCE_XOR, 0, u32::MAX),
        (warp::REDUCE_ADD, 0, half),
    ];
    for (i, (op, signed, mask)) in ops.into_iter().enumerate() {
        if mask & (1 << l) != 0 {
            *o.add(i) = warp(op, mask, v, signed, 32).0;
        }
    }
}
kernel!(reduce_run, reduce_body);

#[test]
fn reductions_are_signed_or_unsigned_as_asked() {
    let k = kref("reduce", reduce_run);
    let mut res = vec![u64::MAX; 32 * 9];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert!(o.hazards.is_empty(), "{:?}", o.hazards);
    let vals: Vec<u32> = (0..32).map(|l| (l - 10) as u32).collect();
    let want = [
        vals.iter().fold(0u32, |a, &v| a.wrapping_add(v)),
        (-10i32) as u32,
        0,
        21,
        u32::MAX,
        vals.iter().fold(u32::MAX, |a, &v| a & v),
        vals.iter().fold(0, |a, &v| a | v),
        vals.iter().fold(0, |a, &v| a ^ v),
        vals[..16].iter().fold(0u32, |a, &v| a.wrapping_add(v)),
    ];
    for l in 0..32usize {
        for i in 0..9 {
            let expect = if i == 8 && l >= 16 { u64::MAX } else { want[i] as u64 };
            assert_eq!(res[l * 9 + i], expect, "lane {l} op {i}");
        }
    }
}

unsafe fn active_body(p: *const *mut c_void) {
    let t = tid();
    if t < 10 {
        return;
    }
    let m = activemask();
    warp(warp::SYNC, m, 0, 0, 32);
    *out::<u32>(p, 0).add(t as usize) = m;
}
kernel!(active_run, active_body);

#[test]
fn activemask_names_the_lanes_that_have_not_exited() {
    let k = kref("active", active_run);
    let mut res = vec![0u32; 48];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([1, 1, 1], [48, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert!(o.hazards.is_empty(), "{:?}", o.hazards);
    for t in 10..32 {
        assert_eq!(res[t], !0x3ffu32, "thread {t}");
    }
    for t in 32..48 {
        assert_eq!(res[t], 0xffff, "thread {t}");
    }
}

unsafe fn halves_body(p: *const *mut c_void) {
    let l = lane();
    let v = l as u64 * 10;
    let r = if l < 16 { warp(warp::SHFL_XOR, 0x0000_ffff, v, 1, 32).0 } else { warp(warp::SHFL_DOWN, 0xffff_0000, v, 2, 16).0 };
    *out::<u64>(p, 0).add(l as usize) = r;
}
kernel!(halves_run, halves_body);

#[test]
fn disjoint_masks_in_divergent_branches_form_separate_collectives() {
    let k = kref("halves", halves_run);
    let mut res = vec![0u64; 32];
    let p = params(&[addr(&mut res)]);
    let o = run(&k, cfg([1, 1, 1], [32, 1, 1], 0), &p.ptrs);
    assert_eq!(o.result, Ok(()));
    assert!(o.hazards.is_empty(), "{:?}", o.hazards);
    for l in 0..32u64 {
        let src = if l < 16 {
            l ^ 1
        } else if l % 16 + 2 < 16 {
            l + 2
        } else {
            l
        };
        assert_eq!(res[l as usize], src * 10, "lane {l}");
    }
}
