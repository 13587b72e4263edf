//! Pass `waves`: independent warp shuffles side by side, fused into one exchange.
//!
//! nvcc reduces a 64-bit value over a warp as 32-bit shuffles of its halves, and VMAF's
//! filters reduce several sums one after another (vif's horizontal filter: seven sums,
//! five levels, three or four shuffles a level). On the loop path each shuffle is a split
//! point: every lane stops there, stores its live registers, and the runner exchanges one
//! word over the warp. Yet the shuffles of one level of every sum depend on nothing but
//! the level before. This pass reorders each straight-line run of integer register
//! arithmetic and full-mask shuffles into waves (a shuffle's wave is one more than the
//! waves of the shuffles it depends on, through any register), and fuses the shuffles of
//! a wave that share their mode, lane operand and clamp into one `shfl` whose value and
//! result operands are vectors: one split point, one exchange of several words
//! (`emit::func`'s `loop_collective`, ptx_rt.h `loop_collective_as`). The fibers run a
//! fused shuffle as its shuffles one after another, so both paths run the same code.
//!
//! What may move: the candidates (unguarded `shfl.sync.*.b32` whose lane operand, clamp
//! and full mask are literals and whose predicate result nothing reads; a shuffle of a
//! literal, which `uniform` elides, moves unfused), and integer register arithmetic (`PURE` instructions without a float type, carry, division or
//! guard). Everything else stays where it is and ends a run, so memory, barriers, other
//! collectives and float arithmetic (whose fusion `contract` decides as ptxas does) keep
//! their order. Within a run an instruction only moves past instructions it shares no
//! register with. Kernels where the order of the threads can show (`order_visible`: a
//! rendezvous fewer changes it) are left alone, as are runs where no two shuffles fuse.

use crate::cfg::{self, Cfg};
use crate::resolve::{effects, read_anywhere, writes, Func, Instr, Module, Node, Op, PURE};
use std::collections::HashMap;

/// Rewrites every kernel of `m`; returns how many shuffles were fused into others.
pub fn fuse(m: &mut Module) -> usize {
    m.funcs.iter_mut().filter(|f| f.decl.entry && f.decl.body.is_some()).map(fuse_fn).sum()
}

fn fuse_fn(f: &mut Func) -> usize {
    let read = read_anywhere(f);
    if order_visible(f, &read) || !f.body.iter().any(|n| matches!(n, Node::Instr(i) if i.src.op == "shfl")) {
        return 0;
    }
    let cfg = cfg::build(f);
    let lit = literal_regs(f);
    // Per node: a fusable shuffle's key, movable arithmetic, or neither (fixed).
    let class: Vec<Class> = (0..f.body.len()).map(|n| classify(f, &cfg, &lit, &read, n)).collect();
    let mut body: Vec<Node> = Vec::with_capacity(f.body.len());
    let mut fused = 0;
    let mut n = 0;
    while n < f.body.len() {
        if class[n] == Class::Fixed || matches!(f.body[n], Node::Label(_)) {
            body.push(f.body[n].clone());
            n += 1;
            continue;
        }
        // A run: movable nodes of one block.
        let b = cfg.block_of[n];
        let mut end = n;
        while end < f.body.len() && class[end] != Class::Fixed && cfg.block_of[end] == b && !matches!(f.body[end], Node::Label(_)) {
            end += 1;
        }
        fused += schedule(f, &class, n..end, &mut body);
        n = end;
    }
    if fused > 0 {
        f.body = body;
    }
    fused
}

#[derive(Clone, Debug, PartialEq)]
enum Class {
    Fixed,
    Arith,
    /// A fusable shuffle: its modifiers, lane operand and clamp.
    Shuffle(Vec<String>, u64, u64),
}

fn classify(f: &Func, cfg: &Cfg, lit: &[Option<Option<u64>>], read: &[bool], n: usize) -> Class {
    let Node::Instr(i) = &f.body[n] else { return Class::Fixed };
    let op = i.src.op.as_str();
    if op == "shfl" {
        let dest_ok = match i.args.first() {
            Some(Op::Reg(_)) => true,
            Some(Op::Pair(d, p)) => matches!(**d, Op::Reg(_)) && matches!(**p, Op::Reg(q) if !read[q]),
            _ => false,
        };
        let value_ok = matches!(i.args.get(1), Some(Op::Reg(_) | Op::Int(_)));
        if i.src.has(".sync") && i.src.has(".b32") && i.guard.is_none() && i.args.len() == 5 && dest_ok && value_ok {
            let b = literal_at(f, cfg, lit, n, &i.args[2]);
            let c = literal_at(f, cfg, lit, n, &i.args[3]);
            let full = literal_at(f, cfg, lit, n, &i.args[4]).is_some_and(|v| v & 0xffff_ffff == 0xffff_ffff);
            if let (Some(b), Some(c), true) = (b, c, full) {
                // A shuffle of a literal needs no exchange (`uniform` elides it): it moves
                // as arithmetic does, unfused.
                if literal_at(f, cfg, lit, n, &i.args[1]).is_some() {
                    return Class::Arith;
                }
                return Class::Shuffle(i.src.mods.clone(), b, c);
            }
        }
        return Class::Fixed;
    }
    let float = i.src.mods.iter().any(|m| {
        let m = m.trim_start_matches('.');
        let digit_after = |p: &str| m.strip_prefix(p).is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()));
        digit_after("f") || ["bf", "tf", "e2", "e3", "e4", "e5", "ue"].iter().any(|p| m.starts_with(p))
    });
    let movable = PURE.contains(&op)
        && !matches!(op, "div" | "rem")
        && !float
        && !i.src.has(".cc")
        && i.guard.is_none()
        && i.args.iter().all(|a| !matches!(a, Op::Addr(..) | Op::Var(..)));
    if movable {
        Class::Arith
    } else {
        Class::Fixed
    }
}

/// Orders the run `run` of `f` into waves and pushes it onto `out`, fused; returns how
/// many shuffles were fused into others (0: the run is pushed as it was).
///
/// Slots: arithmetic takes even slots, shuffles odd ones, each the first its register
/// dependences allow (an instruction's slot is at least that of every earlier one it
/// shares a register with, and a shuffle's at least one wave past an earlier shuffle it
/// depends on); nodes then go out by slot, in their order within a slot. A slot's
/// shuffles with the same key become one instruction at the first one's place.
fn schedule(f: &Func, class: &[Class], run: std::ops::Range<usize>, out: &mut Vec<Node>) -> usize {
    let mut slot = Vec::with_capacity(run.len());
    // Per register: the highest slot of a write, of a shuffle's write, of a read so far.
    let mut w_at: HashMap<usize, usize> = HashMap::new();
    let mut w_shfl: HashMap<usize, usize> = HashMap::new();
    let mut r_at: HashMap<usize, usize> = HashMap::new();
    // A shuffle's slot must also differ from that of an earlier shuffle of another key
    // it depends on (a register one writes and the other reads or writes): fused
    // instructions keep their first member's place. Per register: (slot, key, wrote).
    let mut key_at: HashMap<usize, Vec<(usize, &Class, bool)>> = HashMap::new();
    for n in run.clone() {
        let Node::Instr(i) = &f.body[n] else { unreachable!("runs hold no labels") };
        let shuffle = matches!(class[n], Class::Shuffle(..));
        let (defs, uses) = effects(i);
        let mut w = writes(i);
        w.extend(defs);
        if shuffle {
            // Its predicate result, which nothing reads, goes with the fusion.
            if let Op::Pair(_, p) = &i.args[0] {
                if let Op::Reg(q) = **p {
                    w.retain(|&r| r != q);
                }
            }
        }
        let mut lo = 0;
        for &r in &uses {
            lo = lo.max(w_at.get(&r).copied().unwrap_or(0));
            if shuffle {
                lo = lo.max(w_shfl.get(&r).map_or(0, |s| s + 1));
            }
        }
        for &r in &w {
            lo = lo.max(w_at.get(&r).copied().unwrap_or(0)).max(r_at.get(&r).copied().unwrap_or(0));
        }
        if shuffle {
            let touched = uses.iter().map(|&r| (r, false)).chain(w.iter().map(|&r| (r, true)));
            for (r, writes) in touched {
                for (s, k, wrote) in key_at.get(&r).into_iter().flatten() {
                    if *k != &class[n] && (writes || *wrote) {
                        lo = lo.max(s + 1);
                    }
                }
            }
        }
        let s = if shuffle { lo | 1 } else { (lo + 1) & !1 };
        for &r in &uses {
            let e = r_at.entry(r).or_insert(0);
            *e = (*e).max(s);
        }
        for &r in &w {
            let e = w_at.entry(r).or_insert(0);
            *e = (*e).max(s);
            if shuffle {
                let e = w_shfl.entry(r).or_insert(0);
                *e = (*e).max(s);
            }
        }
        if shuffle {
            for (r, wrote) in uses.iter().map(|&r| (r, false)).chain(w.iter().map(|&r| (r, true))) {
                key_at.entry(r).or_default().push((s, &class[n], wrote));
            }
        }
        slot.push(s);
    }
    // Groups: per odd slot and key, the members in order.
    let mut groups: Vec<(usize, &Class, Vec<usize>)> = Vec::new();
    for (k, n) in run.clone().enumerate() {
        if let Class::Shuffle(..) = class[n] {
            match groups.iter_mut().find(|(s, c, _)| *s == slot[k] && *c == &class[n]) {
                Some(g) => g.2.push(n),
                None => groups.push((slot[k], &class[n], vec![n])),
            }
        }
    }
    let fused: usize = groups.iter().map(|g| g.2.len() - 1).sum();
    if fused == 0 {
        out.extend(f.body[run].iter().cloned());
        return 0;
    }
    let mut order: Vec<usize> = (0..run.len()).collect();
    order.sort_by_key(|&k| slot[k]); // stable: the run's order within a slot
    for k in order {
        let n = run.start + k;
        match &class[n] {
            Class::Shuffle(..) => {
                let g = groups.iter().find(|g| g.2[0] == n);
                if let Some((_, _, members)) = g {
                    out.push(Node::Instr(fused_shuffle(f, members)));
                }
            }
            _ => out.push(f.body[n].clone()),
        }
    }
    fused
}

/// One `shfl` of the members' values into their results (predicate results, unread,
/// dropped), written as the first member (its line, site and `.loc`).
fn fused_shuffle(f: &Func, members: &[usize]) -> Instr {
    let instr = |n: usize| match &f.body[n] {
        Node::Instr(i) => i,
        Node::Label(_) => unreachable!("members are shuffles"),
    };
    let mut first = instr(members[0]).clone();
    if members.len() == 1 {
        return first;
    }
    let dest = |i: &Instr| match &i.args[0] {
        Op::Pair(d, _) => (**d).clone(),
        d => d.clone(),
    };
    first.args[0] = Op::Vector(members.iter().map(|&n| dest(instr(n))).collect());
    first.args[1] = Op::Vector(members.iter().map(|&n| instr(n).args[1].clone()).collect());
    first
}

/// Whether a fused shuffle (`waves`): its value and result operands are vectors, one
/// element per member.
pub fn members(i: &Instr) -> Option<(&[Op], &[Op])> {
    match (i.src.op.as_str(), i.args.first(), i.args.get(1)) {
        ("shfl", Some(Op::Vector(d)), Some(Op::Vector(a))) if d.len() == a.len() => Some((d, a)),
        _ => None,
    }
}

/// How many shuffles ride in node `n`'s exchange besides its first (0 for anything that is
/// not a fused shuffle).
pub fn riders(n: &Node) -> usize {
    match n {
        Node::Instr(i) => members(i).map_or(0, |(d, _)| d.len() - 1),
        Node::Label(_) => 0,
    }
}

/// Whether the order in which the threads run can show in a kernel's results: an atomic
/// whose old value is read, one that is not an integer add, and, or, xor, min or max, or
/// a call (`printf`, or a function that may hold either). An elided shuffle is a
/// rendezvous fewer than the fibers have, after which the lanes go on in another order;
/// only kernels where nothing shows it elide.
pub(crate) fn order_visible(f: &Func, read: &[bool]) -> bool {
    f.body.iter().any(|node| {
        let Node::Instr(i) = node else { return false };
        match i.src.op.as_str() {
            "call" => true,
            "atom" | "red" => {
                let commutes = ["add", "and", "or", "xor", "min", "max"].iter().any(|m| i.src.has(&format!(".{m}")))
                    && !["f16", "bf16", "f32", "f64", "f16x2", "bf16x2"].iter().any(|t| i.src.has(&format!(".{t}")));
                let old_read = i.src.op == "atom" && matches!(i.args.first(), Some(Op::Reg(r)) if read[*r]);
                !commutes || old_read
            }
            _ => false,
        }
    })
}

/// Per register, the literal every write of it moves into it (an unguarded `mov` of one
/// literal), if so: `Some(Some(v))`; never written: `None`; otherwise `Some(None)`.
pub(crate) fn literal_regs(f: &Func) -> Vec<Option<Option<u64>>> {
    let mut lit: Vec<Option<Option<u64>>> = vec![None; f.regs.len()];
    for node in &f.body {
        let Node::Instr(i) = node else { continue };
        let v = match (i.src.op.as_str(), i.guard, i.args.get(1)) {
            ("mov", None, Some(Op::Int(v))) if i.args.len() == 2 => Some(*v),
            _ => None,
        };
        for x in writes(i) {
            lit[x] = match lit[x] {
                None => Some(v),
                Some(old) if old == v => Some(old),
                _ => Some(None),
            };
        }
    }
    lit
}

/// The value operand `a` of node `n` holds in every lane, where it is a literal: a literal
/// operand, or a register of `literal_regs` written earlier in `n`'s block (nvcc's
/// `mov.u32 %r48, 16;` before a shuffle). A register read before any write on some path
/// would hold 0 there: hence the block.
pub(crate) fn literal_at(f: &Func, cfg: &Cfg, lit: &[Option<Option<u64>>], n: usize, a: &Op) -> Option<u64> {
    match a {
        Op::Int(v) => Some(*v),
        Op::Reg(r) => match lit[*r] {
            Some(Some(v)) => {
                let start = cfg.blocks[cfg.block_of[n]].start;
                f.body[start..n].iter().any(|m| matches!(m, Node::Instr(j) if writes(j).contains(r))).then_some(v)
            }
            _ => None,
        },
        _ => None,
    }
}
