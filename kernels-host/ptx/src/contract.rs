//! Pass `contract`: ptxas's contraction of an unmodified `mul` and the `add`/`sub` that
//! consumes it into one fused multiply-add, the device's arithmetic (measured: PTX
//! `mul.f32` + `add.f32` without a rounding modifier become one FFMA in sm_90 SASS;
//! `mul.rn.f32` + `add.rn.f32` stay FMUL + FADD).
//!
//! The rule modelled (reports/ptxas-contraction/README.md gives the experiments): a
//! `mul.f32` or `mul.f64` without a rounding modifier and without `.sat`, defined once,
//! whose every use is an `add`/`sub` of the same type without a rounding modifier, with
//! the same `.ftz`, later in the same basic block and under the same guard, is fused
//! into each of them (measured on the H200: a product used by two adds becomes two
//! FFMAs): each add computes `fma(a, b, c)` (`sub`: `fma(a, b, -c)` or `fma(-a, b, c)`)
//! from the multiply's operands as they were at the multiply.

use crate::cfg::Cfg;
use crate::resolve::{Func, Node, Op};
use std::collections::{HashMap, HashSet};

/// One fused pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fused {
    /// The multiply's node.
    pub mul: usize,
    /// Which operand of the add/sub is the product (1 or 2).
    pub operand: usize,
}

/// The fusion decisions of one function.
#[derive(Clone, Debug, Default)]
pub struct Fusions {
    /// add/sub node -> the multiply fused into it.
    pub into: HashMap<usize, Fused>,
    /// Multiplies fused into at least one add (their operands are kept for it).
    pub absorbed: HashSet<usize>,
    /// Multiplies whose own result is no longer needed (every use was fused).
    pub dead: HashSet<usize>,
}

fn rounding(mods: &[String]) -> bool {
    mods.iter().any(|m| matches!(m.as_str(), ".rn" | ".rz" | ".rm" | ".rp"))
}

fn float_ty(mods: &[String]) -> Option<&str> {
    mods.iter().rev().find(|m| matches!(m.as_str(), ".f32" | ".f64")).map(|s| s.as_str())
}

/// Instructions ptxas expands into code of their own blocks before contracting (IEEE
/// div/rcp/sqrt branch to a slow path; integer division of most types), or that order
/// memory: a product and an add on opposite sides of one are not fused
/// (reports/ptxas-contraction/README.md, "Regions").
fn splits_region(i: &crate::resolve::Instr) -> bool {
    let op = i.src.op.as_str();
    let ty = i.src.mods.iter().rev().find(|m| m.len() > 1 && matches!(&m[..2], ".f" | ".s" | ".u" | ".b")).map(|s| s.as_str());
    match op {
        "membar" | "fence" | "call" => true,
        "div" | "rcp" | "sqrt" if matches!(ty, Some(".f32" | ".f64")) => {
            rounding(&i.src.mods) && !i.args.iter().skip(1).all(|a| matches!(a, Op::Int(_) | Op::Float(_)))
        }
        "div" | "rem" => matches!(ty, Some(".s16" | ".u16" | ".s32" | ".s64" | ".u64" | ".b64")),
        _ => false,
    }
}

/// Registers an operand reads (predicates of guards excluded).
fn reads(op: &Op, out: &mut Vec<usize>) {
    match op {
        Op::Reg(r) => out.push(*r),
        Op::Addr(crate::resolve::AddrBase::Reg(r), _) => out.push(*r),
        Op::Vector(v) | Op::List(v) | Op::Bracket(v) => v.iter().for_each(|o| reads(o, out)),
        Op::Pair(a, b) => {
            reads(a, out);
            reads(b, out);
        }
        Op::Not(a) => reads(a, out),
        _ => {}
    }
}

/// Counts uses of every register (every operand position, destinations included: a
/// register written twice is not a plain single-use temporary).
fn uses(f: &Func) -> Vec<u32> {
    let mut n = vec![0u32; f.regs.len()];
    for node in &f.body {
        if let Node::Instr(i) = node {
            let mut v = Vec::new();
            for a in &i.args {
                reads(a, &mut v);
            }
            if let Some((_, p)) = i.guard {
                v.push(p);
            }
            for r in v {
                n[r] += 1;
            }
        }
    }
    n
}

/// The fusions ptxas makes in `f`.
pub fn fusions(f: &Func, g: &Cfg) -> Fusions {
    let mut out = Fusions::default();
    let uses = uses(f);
    // Where each register is defined (destination operand 0), by node.
    let mut defs: HashMap<usize, Vec<usize>> = HashMap::new();
    for (k, node) in f.body.iter().enumerate() {
        if let Node::Instr(i) = node {
            if let Some(Op::Reg(r)) = i.args.first() {
                defs.entry(*r).or_default().push(k);
            }
        }
    }
    for (k, node) in f.body.iter().enumerate() {
        let Node::Instr(m) = node else { continue };
        if m.src.op != "mul" || rounding(&m.src.mods) || m.src.mods.iter().any(|x| x == ".sat") {
            continue;
        }
        let Some(ty) = float_ty(&m.src.mods) else { continue };
        let Some(Op::Reg(d)) = m.args.first() else { continue };
        // Defined once (here); every other mention is a read.
        if defs.get(d).map(|v| v.len()) != Some(1) || uses[*d] < 2 {
            continue;
        }
        let reads_left = uses[*d] - 1;
        let ftz = m.src.mods.iter().any(|x| x == ".ftz");
        let block = g.block_of[k];
        let end = g.blocks[block].end;
        let mut found = Vec::new();
        let mut ok_all = true;
        let mut split = false;
        for j in k + 1..end {
            let Node::Instr(a) = &f.body[j] else { continue };
            if splits_region(a) {
                split = true;
            }
            let n = a.args.iter().filter(|o| **o == Op::Reg(*d)).count() + (a.guard.map(|g| g.1 == *d).unwrap_or(false) as usize);
            if n == 0 {
                continue;
            }
            let pos = a.args.iter().skip(1).position(|o| *o == Op::Reg(*d));
            let ok = n == 1
                && pos.is_some()
                && matches!(a.src.op.as_str(), "add" | "sub")
                && !rounding(&a.src.mods)
                && float_ty(&a.src.mods) == Some(ty)
                && a.src.mods.iter().any(|x| x == ".ftz") == ftz
                && a.guard == m.guard
                && a.args.len() == 3;
            if !ok || split {
                ok_all = false;
                break;
            }
            found.push((j, pos.unwrap_or(0) + 1));
        }
        if ok_all && found.len() as u32 == reads_left {
            // An add absorbs one product: when both of its operands are products, the one
            // met first keeps it and the other is rounded there, so that multiply keeps
            // its own result for that add (while still fused into its other adds).
            let free: Vec<(usize, usize)> = found.iter().copied().filter(|(j, _)| !out.into.contains_key(j)).collect();
            if free.is_empty() {
                continue;
            }
            if free.len() == found.len() {
                out.dead.insert(k);
            }
            for (j, operand) in free {
                out.into.insert(j, Fused { mul: k, operand });
            }
            out.absorbed.insert(k);
        }
    }
    out
}
