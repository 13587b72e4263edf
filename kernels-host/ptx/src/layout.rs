//! Pass `layout`: where everything lives.
//!
//! - `.global` / `.const` variables: host arrays of the library (device memory is host
//!   memory), exported to the driver for cuModuleGetGlobal.
//! - `.shared` variables: each kernel has its own window, laid out from the variables it
//!   (or any function it may call) uses, in declaration order, each at its alignment; the
//!   window's dynamic part (`.extern .shared` arrays) starts after them at a 16-byte (or
//!   larger, if a dynamic array asks) boundary. The executor allocates that prefix in
//!   front of the block's dynamic shared memory. Shared-space addresses are offsets into
//!   the window, so 32-bit address arithmetic works as on the device.
//! - kernel parameters: the CUDA parameter buffer layout (each at its alignment).

use crate::ast::{Init, Linkage, Space};
use crate::resolve::{AddrBase, Func, Module, Node, Op, VarRef};
use crate::Error;
use std::collections::BTreeSet;

/// The byte offset in a kernel's parameter buffer that an `ld.param` address operand
/// names, when it is one of the kernel's parameters (`params`: (bytes, offset) pairs)
/// plus a literal offset that stays inside that parameter and is aligned for an access of
/// `bytes` bytes: what the emitter reads from the buffer itself (`pload`), and what
/// `align` and `lanes` may take as a known parameter value.
pub fn own_param_at(op: &Op, params: &[(u64, u64)], bytes: u32) -> Option<u64> {
    let Op::Addr(AddrBase::Var(VarRef::Param(p)), off) = op else { return None };
    let (size, base) = *params.get(*p)?;
    let at = base.checked_add_signed(*off)?;
    let bytes = bytes as u64;
    (*off >= 0 && (*off as u64).checked_add(bytes)? <= size && at % bytes.next_power_of_two().min(16) == 0).then_some(at)
}

/// An address an initializer stores: (byte offset in the variable, target name, addend).
pub(crate) type Reloc = (u64, String, i64);

/// The bytes of a numeric initializer for a variable of element type `ty` (`size` bytes
/// per element), plus address relocations.
pub(crate) fn init_bytes(init: &Init, elem: crate::ast::Ty, total: u64, line: u32) -> Result<(Vec<u8>, Vec<Reloc>), Error> {
    let esize = elem.size() as u64;
    let mut bytes = Vec::new();
    let mut relocs = Vec::new();
    fn flat<'a>(i: &'a Init, out: &mut Vec<&'a Init>) {
        match i {
            Init::List(v) => v.iter().for_each(|x| flat(x, out)),
            other => out.push(other),
        }
    }
    let mut items = Vec::new();
    flat(init, &mut items);
    for it in items {
        let at = bytes.len() as u64;
        let v: u64 = match it {
            Init::Int(v) => {
                if elem.float() {
                    match elem {
                        crate::ast::Ty::F32 => (*v as i64 as f32).to_bits() as u64,
                        crate::ast::Ty::F64 => (*v as i64 as f64).to_bits(),
                        _ => *v,
                    }
                } else {
                    *v
                }
            }
            Init::Float(f) => f.bits(elem),
            Init::Addr { name, offset, .. } => {
                relocs.push((at, name.clone(), *offset));
                0
            }
            Init::List(_) => 0,
        };
        bytes.extend_from_slice(&v.to_le_bytes()[..esize.min(8) as usize]);
        if esize > 8 {
            bytes.extend(std::iter::repeat_n(0, (esize - 8) as usize));
        }
    }
    if bytes.len() as u64 > total && total > 0 {
        return Err(Error::parse(line, format!("initializer of {} bytes for a variable of {total}", bytes.len())));
    }
    Ok((bytes, relocs))
}

/// One kernel's layout.
#[derive(Clone, Debug, Default)]
pub struct KernelLayout {
    /// The kernel's function index.
    pub func: usize,
    /// Offset of every module variable in this kernel's shared window (None: not in it).
    pub shared: Vec<Option<u64>>,
    /// Bytes of static shared memory.
    pub static_smem: u64,
    /// Where dynamic shared memory starts in the window.
    pub dyn_offset: u64,
    /// Parameter (size, offset) pairs.
    pub params: Vec<(u64, u64)>,
    /// Bytes of the parameter buffer.
    pub param_bytes: u64,
    /// Functions reachable from the kernel (itself included).
    pub reach: BTreeSet<usize>,
}

/// The module's layout.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    /// Per kernel, in function order.
    pub kernels: Vec<KernelLayout>,
    /// Module variables the driver sees (global/const, defined here), by index.
    pub exported: Vec<usize>,
}

/// Largest parameter buffer a kernel may declare (CUDA 12.1+: 32 764 bytes).
pub const MAX_PARAM_BYTES: u64 = 32764;

fn calls(f: &Func, out: &mut BTreeSet<usize>, indirect: &mut bool) {
    for node in &f.body {
        if let Node::Instr(i) = node {
            if i.src.op == "call" {
                for a in &i.args {
                    match a {
                        Op::Func(g) => {
                            out.insert(*g);
                        }
                        Op::Reg(_) => *indirect = true,
                        _ => {}
                    }
                }
            }
        }
    }
}

/// The device function named `name` and the kernels (with bodies) that reach it through
/// direct calls, or None when it is not a defined device function or when an indirect
/// call could hide a caller.
pub(crate) fn callers(m: &Module, name: &str) -> Option<(usize, Vec<usize>)> {
    let target = m.funcs.iter().position(|f| !f.decl.entry && f.decl.name == name && !f.body.is_empty())?;
    let mut indirect = false;
    let callees: Vec<BTreeSet<usize>> = m
        .funcs
        .iter()
        .map(|f| {
            let mut out = BTreeSet::new();
            calls(f, &mut out, &mut indirect);
            out
        })
        .collect();
    if indirect {
        return None;
    }
    let mut reach = BTreeSet::from([target]);
    loop {
        let more: Vec<usize> = (0..m.funcs.len()).filter(|g| !reach.contains(g) && callees[*g].iter().any(|c| reach.contains(c))).collect();
        if more.is_empty() {
            break;
        }
        reach.extend(more);
    }
    let kernels = reach.into_iter().filter(|&g| m.funcs[g].decl.entry && !m.funcs[g].body.is_empty()).collect();
    Some((target, kernels))
}

fn address_taken(m: &Module) -> BTreeSet<usize> {
    let mut s = BTreeSet::new();
    for f in &m.funcs {
        for node in &f.body {
            if let Node::Instr(i) = node {
                if i.src.op != "call" {
                    for a in &i.args {
                        if let Op::Func(g) = a {
                            s.insert(*g);
                        }
                    }
                }
            }
        }
    }
    s
}

fn shared_used(m: &Module, f: &Func, out: &mut BTreeSet<usize>) {
    fn visit(m: &Module, op: &Op, out: &mut BTreeSet<usize>) {
        match op {
            Op::Var(VarRef::Module(i), _) | Op::Addr(AddrBase::Var(VarRef::Module(i)), _) if m.vars[*i].var.space == Space::Shared => {
                out.insert(*i);
            }
            Op::Vector(v) | Op::List(v) | Op::Bracket(v) => v.iter().for_each(|o| visit(m, o, out)),
            Op::Pair(a, b) => {
                visit(m, a, out);
                visit(m, b, out);
            }
            Op::Not(a) => visit(m, a, out),
            _ => {}
        }
    }
    for node in &f.body {
        if let Node::Instr(i) = node {
            for a in &i.args {
                visit(m, a, out);
            }
        }
    }
}

fn align_up(x: u64, a: u64) -> u64 {
    let a = a.max(1);
    x.div_ceil(a) * a
}

/// Lays out the module.
pub fn layout(m: &Module) -> Result<Layout, Error> {
    let taken = address_taken(m);
    let mut out = Layout::default();
    for (i, v) in m.vars.iter().enumerate() {
        if matches!(v.var.space, Space::Global | Space::Const) && v.var.linkage != Linkage::Extern && v.owner.is_none() {
            out.exported.push(i);
        }
    }
    for (fi, f) in m.funcs.iter().enumerate() {
        if !f.decl.entry || f.decl.body.is_none() {
            continue;
        }
        // Reachable functions.
        let mut reach = BTreeSet::from([fi]);
        let mut work = vec![fi];
        let mut indirect = false;
        while let Some(g) = work.pop() {
            let mut c = BTreeSet::new();
            calls(&m.funcs[g], &mut c, &mut indirect);
            if indirect {
                c.extend(taken.iter().copied());
            }
            for h in c {
                if reach.insert(h) {
                    work.push(h);
                }
            }
        }
        let mut used = BTreeSet::new();
        for &g in &reach {
            shared_used(m, &m.funcs[g], &mut used);
        }
        let mut shared = vec![None; m.vars.len()];
        let mut off = 0u64;
        let mut dyn_align = 16u64;
        for &i in &used {
            let v = &m.vars[i].var;
            if v.linkage == Linkage::Extern {
                dyn_align = dyn_align.max(v.alignment());
                continue;
            }
            off = align_up(off, v.alignment());
            shared[i] = Some(off);
            off = off.checked_add(v.size()).ok_or_else(|| Error::Module(format!("shared variable {} is too large", v.name)))?;
        }
        let static_smem = off;
        let dyn_offset = align_up(off, dyn_align);
        for &i in &used {
            if m.vars[i].var.linkage == Linkage::Extern {
                shared[i] = Some(dyn_offset);
            }
        }
        let params = f.decl.param_offsets();
        let p = params.last().map_or(0, |&(size, at)| at + size);
        if p > MAX_PARAM_BYTES {
            return Err(Error::Module(format!("kernel {}: {p} bytes of parameters (the limit is {MAX_PARAM_BYTES})", f.decl.name)));
        }
        out.kernels.push(KernelLayout { func: fi, shared, static_smem, dyn_offset, params, param_bytes: p, reach });
    }
    Ok(out)
}
