//! Pass `constants`: a kernel's loads of an initialized `.const` variable at a fixed
//! address (`ld.const.u32 %r, [filter_width+0]`: nvcc's form for a `__constant__` scalar,
//! or an element at a literal index). Such a load reads the initializer's value unless
//! the program wrote the variable (cuModuleGetGlobal and a copy), so the runner compares
//! the variable's bytes with the initializer once per call, and where they match runs
//! code in which those values are literals: the same switch `align` uses
//! (`K<fi><true>`, the loop path's runner), so no new instantiation is needed where a
//! kernel already has checks. Elsewhere the loads run as written. A literal trip count
//! or radius lets the host compiler unroll and fold what the kernel computes from it
//! (VMAF motion's 25-tap blur reads its width and radius this way).
//!
//! Only what the initializer fixes is folded: no load overlapping an address relocation
//! (its value is known only when the library is loaded), no misaligned access (its trap
//! must stay), no volatile load; variables declared `.extern` have no initializer here.

use crate::ast::Space;
use crate::resolve::{AddrBase, Func, Module, Node, Op, VarRef};
use std::collections::BTreeMap;

/// One folded load: what it reads and the value the initializer gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fold {
    /// The module variable read.
    pub var: usize,
    /// Byte offset of the access in the variable.
    pub offset: u64,
    /// Bytes of one element (the load's type).
    pub elem: u32,
    /// The initializer's bytes at the access, every element in order.
    pub bytes: Vec<u8>,
}

impl Fold {
    /// Element `k`'s value as an unsigned little-endian integer.
    pub fn element(&self, k: usize) -> u64 {
        let e = self.elem as usize;
        self.bytes[k * e..(k + 1) * e].iter().rev().fold(0u64, |v, &b| v << 8 | b as u64)
    }
}

/// The initialized bytes of every module variable a load may fold (`.const`, with an
/// initializer, not `.extern`), with the byte ranges an address relocation covers.
pub struct Initial {
    vars: BTreeMap<usize, Bytes>,
}

/// A variable's initialized bytes, and the byte ranges its address relocations cover.
type Bytes = (Vec<u8>, Vec<(u64, u64)>);

impl Initial {
    /// Reads the initializers of `m`'s `.const` variables (an initializer that cannot be
    /// read folds nothing: the emitter reports it).
    pub fn of(m: &Module) -> Initial {
        let mut vars = BTreeMap::new();
        for (i, v) in m.vars.iter().enumerate() {
            let var = &v.var;
            if var.space != Space::Const || var.linkage == crate::ast::Linkage::Extern || var.opaque.is_some() {
                continue;
            }
            let Some(init) = &var.init else { continue };
            let Ok((bytes, relocs)) = crate::layout::init_bytes(init, var.ty, var.size(), var.line) else { continue };
            vars.insert(i, (bytes, relocs.iter().map(|(at, _, _)| (*at, *at + 8)).collect()));
        }
        Initial { vars }
    }

    /// Whether nothing can fold (no initialized `.const` variable).
    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }
}

/// The loads of function `f` (by node index) that read an initialized `.const` variable
/// at a fixed, aligned address free of relocations.
pub fn folds(f: &Func, init: &Initial) -> BTreeMap<usize, Fold> {
    let mut out = BTreeMap::new();
    if init.is_empty() {
        return out;
    }
    for (n, node) in f.body.iter().enumerate() {
        let Node::Instr(i) = node else { continue };
        if i.src.op != "ld" || !i.src.has(".const") || i.src.has(".volatile") {
            continue;
        }
        let Some(Op::Addr(AddrBase::Var(VarRef::Module(v)), off)) = i.args.get(1) else { continue };
        let Some((bytes, relocs)) = init.vars.get(v) else { continue };
        let Some(ty) = i.src.last_ty() else { continue };
        let (elem, width) = (ty.size() as u64, i.src.vec_width() as u64);
        let len = elem * width;
        let Ok(start) = u64::try_from(*off) else { continue };
        // The device traps a misaligned access (716): that load stays a load.
        let align = len.next_power_of_two().min(16);
        // (An element wider than 8 bytes, `.b128`, is not written as one literal.)
        if elem == 0 || elem > 8 || start % align != 0 || start + len > bytes.len() as u64 {
            continue;
        }
        if relocs.iter().any(|&(a, b)| a < start + len && start < b) {
            continue;
        }
        let bytes = bytes[start as usize..(start + len) as usize].to_vec();
        out.insert(n, Fold { var: *v, offset: start, elem: elem as u32, bytes });
    }
    out
}

/// The byte ranges a runner compares with the initializer before it runs folded code:
/// per variable, the span of its folded loads.
pub fn spans<'a>(folds: impl IntoIterator<Item = &'a Fold>) -> BTreeMap<usize, (u64, u64)> {
    let mut out: BTreeMap<usize, (u64, u64)> = BTreeMap::new();
    for f in folds {
        let end = f.offset + f.bytes.len() as u64;
        let e = out.entry(f.var).or_insert((f.offset, end));
        e.0 = e.0.min(f.offset);
        e.1 = e.1.max(end);
    }
    out
}

/// The initializer's bytes of variable `var` in `range` (for the runner's comparison).
pub fn initial_bytes(init: &Initial, var: usize, range: (u64, u64)) -> &[u8] {
    &init.vars[&var].0[range.0 as usize..range.1 as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(src: &str) -> Module {
        let ast = crate::parse::parse(src).unwrap();
        crate::resolve::resolve(ast).unwrap()
    }

    const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

    #[test]
    fn direct_loads_of_initialized_constants_fold_and_nothing_else_does() {
        let src = format!(
            "{HEAD}.const .align 4 .u32 width = 5;\n.const .align 8 .b8 tab[16] = {{1,0,0,0, 2,0,0,0, 3,0,0,0, 4,0,0,0}};\n\
             .const .align 4 .u32 blank[2];\n.const .align 8 .u64 ptr = generic(tab);\n\
             .const .align 16 .b8 wide[16] = {{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}};\n\
             .visible .entry k(.param .u64 out) {{\n.reg .b32 %r<9>;\n.reg .b64 %rd<4>;\n.reg .b128 %rq<2>;\n\
             ld.const.u32 %r1, [width];\n\
             ld.const.v2.u32 {{%r2, %r3}}, [tab+8];\n\
             ld.const.u32 %r4, [tab+2];\n\
             ld.const.u32 %r5, [blank];\n\
             ld.const.u64 %rd1, [ptr];\n\
             mov.u64 %rd2, tab;\n\
             ld.const.u32 %r6, [%rd2+4];\n\
             ld.const.u16 %r7, [tab+12];\n\
             ld.const.b128 %rq1, [wide];\n\
             ret;\n}}\n"
        );
        let m = module(&src);
        let init = Initial::of(&m);
        let f = m.funcs.iter().find(|f| f.decl.name == "k").unwrap();
        let got: Vec<(String, u64, Vec<u64>)> = folds(f, &init)
            .values()
            .map(|x| (m.vars[x.var].var.name.clone(), x.offset, (0..x.bytes.len() / x.elem as usize).map(|k| x.element(k)).collect()))
            .collect();
        // width, the aligned vector at tab+8 and the aligned u16 at tab+12; not the
        // misaligned tab+2, the uninitialized `blank`, the relocated `ptr`, the load
        // through a register, nor the 16-byte element of `wide`.
        assert_eq!(got, vec![("width".into(), 0, vec![5]), ("tab".into(), 8, vec![3, 4]), ("tab".into(), 12, vec![4])]);
        let s = spans(folds(f, &init).values());
        assert_eq!(s.values().copied().collect::<Vec<_>>(), vec![(0, 4), (8, 16)]);
    }
}
