//! Pass `depot`: nvcc's per-thread copy of by-value parameters read in place.
//!
//! A kernel that indexes a by-value structure parameter with a run-time value
//! (`p.data[plane]`) gets a copy of the structure in its `.local` depot: every thread
//! first stores the parameter's words there (`ld.param`, then `st.local` at the depot's
//! stack pointer `%SPL` plus a constant), then reads the copy at a computed offset
//! (`ld.local [%rd28+32]`). The VMAF fork's psnr kernels copy 192 bytes a thread so,
//! upstream's `adm_cm_line_kernel_8` 48: stores that are most of a small kernel's work and a
//! depot in every loop-path frame.
//!
//! Where the depot holds nothing but such a copy (every byte stored once, in the code every
//! path runs first, from a register an `ld.param` wrote there, the parameter buffer's byte
//! at one fixed distance from the depot's), and its address reaches nothing but `add`s and
//! the addresses of `ld.local`/`st.local` (no `cvta`, no call, no other store), the depot's
//! base becomes the parameter buffer's address at that distance, its loads `ld.param`
//! through the same address arithmetic, and the copy and the depot go. The parameters are
//! constant for the launch, so every read gives the bytes it gave.

use crate::ast::Space;
use crate::resolve::{AddrBase, Func, Module, Node, Op, VarRef};
use std::collections::{HashMap, HashSet};

/// Rewrites every entry of `m` (see the module's comment); returns the depots read in place.
pub fn forward(m: &mut Module) -> usize {
    m.funcs.iter_mut().filter(|f| f.decl.entry && f.decl.body.is_some()).map(|f| usize::from(forward_fn(f).is_some())).sum()
}

/// A register holding the depot's address plus a known or unknown offset.
#[derive(Clone, Copy)]
enum Derived {
    At(i64),
    Somewhere,
}

fn forward_fn(f: &mut Func) -> Option<()> {
    let writes = crate::resolve::write_counts(f);
    let once = |r: &usize| writes.get(r) == Some(&1);
    // The depot: the function's only `.local` variable, named once, by an unguarded `mov`
    // of the first block into a register written only there.
    let locals: Vec<usize> = f.frame.iter().enumerate().filter(|(_, v)| v.space == Space::Local).map(|(i, _)| i).collect();
    let [depot] = locals.as_slice() else { return None };
    let depot = *depot;
    let size = f.frame[depot].size as i64;
    let names = |o: &Op| {
        matches!(o, Op::Var(VarRef::Frame(i), _) if *i == depot) || matches!(o, Op::Addr(AddrBase::Var(VarRef::Frame(i)), _) if *i == depot)
    };
    let uses: Vec<usize> =
        f.body.iter().enumerate().filter(|(_, n)| matches!(n, Node::Instr(i) if i.args.iter().any(names))).map(|(n, _)| n).collect();
    let [base_at] = uses.as_slice() else { return None };
    let base_at = *base_at;
    let first_block = crate::resolve::first_block_len(f);
    let Node::Instr(i) = &f.body[base_at] else { return None };
    let (sp, base_off) = match (i.src.op.as_str(), i.guard, i.args.as_slice()) {
        ("mov", None, [Op::Reg(r), Op::Var(VarRef::Frame(_), off)]) if once(r) && base_at < first_block => (*r, *off),
        _ => return None,
    };
    // The registers derived from the depot's address, and every use of them.
    let mut derived: HashMap<usize, Derived> = HashMap::from([(sp, Derived::At(base_off))]);
    let mut stores = Vec::new();
    let mut loads = Vec::new();
    for (n, node) in f.body.iter().enumerate() {
        let Node::Instr(i) = node else { continue };
        if n == base_at {
            continue;
        }
        // The registers it reads: every operand's but a destination's (a store's first
        // operand is its address).
        let mut read = Vec::new();
        let dest = matches!(i.args.first(), Some(Op::Reg(_) | Op::Vector(_) | Op::Pair(..)));
        i.args.iter().skip(usize::from(dest)).for_each(|o| o.regs(&mut read));
        if let Some((_, p)) = i.guard {
            read.push(p);
        }
        if !read.iter().any(|r| derived.contains_key(r)) {
            // A write of a derived register by anything else: not followed.
            if matches!(i.args.first(), Some(Op::Reg(d)) if derived.contains_key(d)) {
                return None;
            }
            continue;
        }
        let op = i.src.op.as_str();
        match (op, i.args.as_slice()) {
            ("add", [Op::Reg(d), Op::Reg(a), b])
                if i.guard.is_none() && once(d) && derived.contains_key(a) && i.src.access_bytes() == Some(8) =>
            {
                let to = match (derived[a], b) {
                    (Derived::At(x), Op::Int(c)) => Derived::At(x.wrapping_add(*c as i64)),
                    (_, Op::Reg(b)) if derived.contains_key(b) => return None,
                    _ => Derived::Somewhere,
                };
                derived.insert(*d, to);
            }
            ("add", [Op::Reg(d), b @ Op::Reg(_), Op::Reg(a)])
                if i.guard.is_none() && once(d) && derived.contains_key(a) && i.src.access_bytes() == Some(8) =>
            {
                if matches!(b, Op::Reg(b) if derived.contains_key(b)) {
                    return None;
                }
                derived.insert(*d, Derived::Somewhere);
            }
            ("ld", [_, Op::Addr(AddrBase::Reg(a), _)]) if i.src.has(".local") && derived.contains_key(a) && !i.src.has(".volatile") => {
                // The loaded value itself is not derived: the address must be only here.
                let mut dst = Vec::new();
                i.args[0].regs(&mut dst);
                if dst.iter().any(|r| derived.contains_key(r)) || i.guard.is_some_and(|(_, p)| derived.contains_key(&p)) {
                    return None;
                }
                loads.push(n);
            }
            ("st", [Op::Addr(AddrBase::Reg(a), off), value]) if i.src.has(".local") && i.guard.is_none() && n < first_block => {
                let Derived::At(at) = derived[a] else { return None };
                let mut vals = Vec::new();
                value.regs(&mut vals);
                if vals.iter().any(|r| derived.contains_key(r)) {
                    return None;
                }
                stores.push((n, at.wrapping_add(*off)));
            }
            _ => return None,
        }
    }
    if loads.is_empty() {
        return None;
    }
    // Each stored element: a register an unguarded `ld.param` of the first block wrote
    // once, before the store, from the parameter buffer at one distance from the depot.
    let param_at = f.decl.param_offsets();
    let mut sources: HashMap<usize, (i64, usize)> = HashMap::new(); // register -> its byte in the buffer, its load
    for (n, node) in f.body.iter().enumerate().take(first_block) {
        let Node::Instr(i) = node else { continue };
        if i.src.op != "ld" || !i.src.has(".param") || i.guard.is_some() {
            continue;
        }
        let (Some(ty), Some(Op::Addr(AddrBase::Var(VarRef::Param(p)), off))) = (i.src.last_ty(), i.args.get(1)) else { continue };
        let Some(&(_, at)) = param_at.get(*p) else { continue };
        for (k, part) in elements(&i.args[0]).into_iter().enumerate() {
            if let Op::Reg(r) = part {
                if once(r) {
                    sources.insert(*r, (at as i64 + off + (k as i64) * ty.size() as i64, n));
                }
            }
        }
    }
    let mut distance: Option<i64> = None;
    let mut covered: HashSet<i64> = HashSet::new();
    for &(n, at) in &stores {
        let Node::Instr(i) = &f.body[n] else { return None };
        let ty = i.src.last_ty()?;
        for (k, part) in elements(&i.args[1]).into_iter().enumerate() {
            let Op::Reg(r) = part else { return None };
            // The register's type must be the store's width (no truncation of a wider value).
            if f.regs.get(*r).map(|g| g.ty.size()) != Some(ty.size()) {
                return None;
            }
            let (from, loaded) = *sources.get(r)?;
            if loaded > n {
                return None;
            }
            let here = at + (k as i64) * ty.size() as i64;
            let d = from - here;
            if *distance.get_or_insert(d) != d {
                return None;
            }
            for b in here..here + ty.size() as i64 {
                if b < 0 || b >= size || !covered.insert(b) {
                    return None;
                }
            }
        }
    }
    // Every byte of the depot is the copy.
    if covered.len() as i64 != size {
        return None;
    }
    let distance = distance?;
    // The depot's base is the buffer's address at that distance (the first parameter is
    // at the buffer's start); its loads read the parameter space; the copy goes.
    if let Node::Instr(i) = &mut f.body[base_at] {
        i.args[1] = Op::Var(VarRef::Param(0), base_off + distance);
    }
    for &n in &loads {
        if let Node::Instr(i) = &mut f.body[n] {
            for m in i.src.mods.iter_mut() {
                if m == ".local" {
                    *m = ".param".into();
                }
            }
        }
    }
    let gone: HashSet<usize> = stores.iter().map(|&(n, _)| n).collect();
    let mut n = 0;
    f.body.retain(|_| {
        n += 1;
        !gone.contains(&(n - 1))
    });
    // The depot itself: later frame variables move down one.
    f.frame.remove(depot);
    for node in &mut f.body {
        if let Node::Instr(i) = node {
            for o in &mut i.args {
                renumber(o, depot);
            }
        }
    }
    Some(())
}

/// A load's or store's value operand element by element (a vector's, or the one).
fn elements(o: &Op) -> Vec<&Op> {
    match o {
        Op::Vector(v) => v.iter().collect(),
        one => vec![one],
    }
}

fn renumber(o: &mut Op, gone: usize) {
    match o {
        Op::Var(VarRef::Frame(i), _) | Op::Addr(AddrBase::Var(VarRef::Frame(i)), _) if *i > gone => *i -= 1,
        Op::Vector(v) | Op::List(v) | Op::Bracket(v) => v.iter_mut().for_each(|x| renumber(x, gone)),
        Op::Pair(a, b) => {
            renumber(a, gone);
            renumber(b, gone);
        }
        Op::Not(a) => renumber(a, gone),
        _ => {}
    }
}
