//! Alignment facts: which global loads and stores of a kernel address one of the
//! kernel's pointer parameters plus a multiple of their size (`p + i * 4` for a float,
//! the shape of nearly every coalesced access). Such an access is aligned for every
//! thread or for none, so its check (a misaligned access traps with 716, as on the
//! device) can be made once per runner call, before the threads, instead of at every
//! access: a branch to a trap in the thread loop keeps the compiler from its best code
//! (every address kept whole in a register for the trap's message), at about a third of
//! a barrier-free kernel's time. The runner checks every such base and runs the threads'
//! code without those checks only where all hold; otherwise the checked code, which traps
//! at the first thread that makes the access, as always (emit: `K<fi><true>`).
//!
//! Sound by construction, not by pattern: a fact is kept only for registers written once
//! in the function, by an unguarded instruction, and used only where that instruction
//! dominates the use (every path from the entry runs it first: `cfg`'s dominators), so
//! the value an access sees is the one the fact describes.

use crate::ast::Ty;
use crate::resolve::{AddrBase, Func, Instr, Node, Op};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// An access proven aligned when `(param + offset) % bytes == 0`, with `param` the
/// 8-byte kernel parameter at byte `param_at` of the parameter buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Check {
    /// Byte offset of the pointer parameter in the kernel's parameter buffer.
    pub param_at: u64,
    /// Added to the parameter's value (the access's constant part).
    pub offset: i64,
    /// The access's size: the alignment it needs.
    pub bytes: u32,
}

/// The distinct checks of `proven`'s accesses, each offset reduced modulo its size:
/// what a runner tests before its threads.
pub fn runner_checks(proven: &BTreeMap<usize, Check>) -> BTreeSet<Check> {
    proven.values().map(|c| Check { offset: c.offset.rem_euclid(c.bytes as i64), ..*c }).collect()
}

/// What is known of a 64-bit register's value modulo a power of two.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fact {
    /// The parameter at `at` plus `k` plus a multiple of 2^`z`.
    Base { at: u64, k: i64, z: u32 },
    /// A multiple of 2^`z`.
    Zero { z: u32 },
}

/// The accesses of entry `f` (by node index) whose alignment one check per runner call
/// decides. `params`: the kernel's parameters as (bytes, offset in the buffer).
pub fn proven(f: &Func, params: &[(u64, u64)]) -> BTreeMap<usize, Check> {
    let defs = crate::resolve::write_counts(f);
    let once = |r: usize| defs.get(&r) == Some(&1) && f.regs.get(r).is_some_and(|g| g.ty.size() == 8);
    let cfg = crate::cfg::build(f);
    let dom = cfg.dominators();
    // Whether node `d` runs before node `n` on every path to `n`.
    let dominates = |d: usize, n: usize| {
        let (bd, bn) = (cfg.block_of[d], cfg.block_of[n]);
        if bd == bn {
            d < n
        } else {
            dom[bn][bd]
        }
    };
    // Per register written once: its fact and the node writing it. The register holds
    // that one value wherever the node dominates.
    let mut facts: HashMap<usize, (Fact, usize)> = HashMap::new();
    let mut out = BTreeMap::new();
    for (n, node) in f.body.iter().enumerate() {
        let Node::Instr(i) = node else { continue };
        let at_n = |r: usize| facts.get(&r).filter(|(_, d)| dominates(*d, n)).map(|(fact, _)| *fact);
        if let Some(c) = access(i, &at_n) {
            out.insert(n, c);
        }
        if let (None, Some(Op::Reg(d))) = (i.guard, i.args.first()) {
            if once(*d) {
                if let Some(fact) = define(i, &at_n, params) {
                    facts.insert(*d, (fact, n));
                }
            }
        }
    }
    out
}

/// The check that decides a global load's or store's alignment, when there is one.
fn access(i: &Instr, facts: &impl Fn(usize) -> Option<Fact>) -> Option<Check> {
    let at = match i.src.op.as_str() {
        "ld" => 1,
        "st" => 0,
        _ => return None,
    };
    if !i.src.has(".global") {
        return None;
    }
    let bytes = i.src.access_bytes()?;
    if bytes < 2 || !bytes.is_power_of_two() {
        return None;
    }
    let Some(Op::Addr(AddrBase::Reg(r), off)) = i.args.get(at) else { return None };
    match facts(*r)? {
        Fact::Base { at, k, z } if (1u64 << z.min(63)).is_multiple_of(bytes as u64) => {
            Some(Check { param_at: at, offset: k.wrapping_add(*off), bytes })
        }
        _ => None,
    }
}

/// The fact a single-definition instruction establishes for its destination.
fn define(i: &Instr, facts: &impl Fn(usize) -> Option<Fact>, params: &[(u64, u64)]) -> Option<Fact> {
    let has = |m: &str| i.src.has(m);
    let of = |k: usize| -> Option<Operand> {
        match i.args.get(k)? {
            Op::Reg(r) => facts(*r).map(Operand::Fact),
            Op::Int(c) => Some(Operand::Const(*c as i64)),
            _ => None,
        }
    };
    match i.src.op.as_str() {
        "ld" if has(".param") && i.src.last_ty().map(Ty::size) == Some(8) && i.src.vec_width() == 1 => {
            crate::layout::own_param_at(i.args.get(1)?, params, 8).map(|at| Fact::Base { at, k: 0, z: 64 })
        }
        "cvta" if has(".to") && has(".global") => fact(of(1)?),
        "mov" => fact(of(1)?),
        "mul" if has(".wide") || has(".lo") => {
            let c = match (of(1), of(2)) {
                (_, Some(Operand::Const(c))) | (Some(Operand::Const(c)), _) => c,
                _ => return None,
            };
            Some(Fact::Zero { z: zeros(c) })
        }
        "shl" => match of(2)? {
            Operand::Const(c) if (0..64).contains(&c) => Some(Fact::Zero { z: c as u32 }),
            _ => None,
        },
        "add" if !has(".sat") && !has(".cc") => add(of(1)?, of(2)?),
        _ => None,
    }
}

#[derive(Clone, Copy)]
enum Operand {
    Fact(Fact),
    Const(i64),
}

fn fact(o: Operand) -> Option<Fact> {
    match o {
        Operand::Fact(f) => Some(f),
        Operand::Const(c) => Some(Fact::Zero { z: zeros(c) }),
    }
}

/// Trailing zero bits of a constant (64 for zero).
fn zeros(c: i64) -> u32 {
    c.trailing_zeros()
}

fn add(a: Operand, b: Operand) -> Option<Fact> {
    use Fact::*;
    use Operand as O;
    match (a, b) {
        (O::Fact(Base { at, k, z }), O::Fact(Zero { z: y })) | (O::Fact(Zero { z: y }), O::Fact(Base { at, k, z })) => {
            Some(Base { at, k, z: z.min(y) })
        }
        (O::Fact(Base { at, k, z }), O::Const(c)) | (O::Const(c), O::Fact(Base { at, k, z })) => Some(Base { at, k: k.wrapping_add(c), z }),
        (O::Fact(Zero { z }), O::Fact(Zero { z: y })) => Some(Zero { z: z.min(y) }),
        (O::Fact(Zero { z }), O::Const(c)) | (O::Const(c), O::Fact(Zero { z })) => Some(Zero { z: z.min(zeros(c)) }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_proves_the_accesses_it_dominates_and_no_other() {
        let src = ".version 8.0\n.target sm_90\n.address_size 64\n\
            .visible .entry k(.param .u64 p, .param .u32 n) {\n\
            .reg .pred %p<3>;\n.reg .b32 %r<5>;\n.reg .b64 %rd<8>;\n\
            mov.u32 %r1, %tid.x;\nld.param.u32 %r2, [n];\nsetp.ge.u32 %p1, %r1, %r2;\n@%p1 bra DONE;\n\
            ld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd2, %rd1;\nmul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd2, %rd3;\n\
            setp.eq.u32 %p2, %r1, 0;\n@%p2 bra SKIP;\nld.param.u64 %rd5, [p];\nadd.s64 %rd6, %rd5, 8;\n\
            SKIP:\nst.global.u32 [%rd4], %r1;\nst.global.u32 [%rd6], %r1;\n\
            DONE:\nret;\n}\n";
        let m = crate::resolve::resolve(crate::parse::parse(src).unwrap()).unwrap();
        let f = m.funcs.iter().find(|f| f.decl.entry).unwrap();
        let stores: Vec<usize> =
            f.body.iter().enumerate().filter(|(_, n)| matches!(n, Node::Instr(i) if i.src.op == "st")).map(|(k, _)| k).collect();
        let got = proven(f, &[(8, 0), (4, 8)]);
        // After the early exit and past a join: the address's definition dominates it.
        assert_eq!(got.get(&stores[0]), Some(&Check { param_at: 0, offset: 0, bytes: 4 }));
        // Defined on one arm only: not proven (the join's other path never wrote it).
        assert_eq!(got.get(&stores[1]), None);
        assert_eq!(got.len(), 1);
    }
}
