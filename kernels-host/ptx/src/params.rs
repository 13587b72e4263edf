//! Pass `params`: a kernel's parameters read through a register that holds a
//! parameter's address, as nvcc writes every read of a large structure parameter
//! (`mov.b64 %rd1, k_param_0;` then `ld.param.u64 %rd3, [%rd1+136];`), become reads of
//! the parameter itself (`ld.param.u64 %rd3, [k_param_0+136];`) and the `mov` goes.
//!
//! The emitter reads such a load from the parameter buffer itself (`pload`), whose
//! address then never escapes, so the host compiler keeps the values in registers across
//! a runner's threads; `align` can prove the alignment of the pointers the structure
//! holds, `lanes` can follow them, and the loop path keeps no frame copy of the address.
//!
//! Only where nothing else can tell: the register is written once, by an unguarded
//! `mov` in the code every path runs first (before the first label or branch), and
//! every other use of it is the address base of an `ld.param` after that `mov`.

use crate::resolve::{AddrBase, Func, Module, Node, Op, VarRef};

/// Rewrites every entry of `m` (see the module's comment); returns how many loads moved.
pub fn forward(m: &mut Module) -> usize {
    m.funcs.iter_mut().filter(|f| f.decl.entry && f.decl.body.is_some()).map(forward_fn).sum()
}

fn forward_fn(f: &mut Func) -> usize {
    let writes = crate::resolve::write_counts(f);
    let mut moved = 0;
    let mut gone = Vec::new();
    for n in 0..crate::resolve::first_block_len(f) {
        let Node::Instr(i) = &f.body[n] else { continue };
        let def = match (i.src.op.as_str(), i.guard, i.args.as_slice()) {
            ("mov", None, [Op::Reg(r), Op::Var(VarRef::Param(p), off)]) if writes.get(r) == Some(&1) => Some((*r, *p, *off)),
            _ => None,
        };
        if let Some((r, p, base)) = def {
            if let Some(loads) = param_loads_of(f, r, n) {
                for at in &loads {
                    if let Node::Instr(l) = &mut f.body[*at] {
                        if let Op::Addr(_, off) = l.args[1] {
                            l.args[1] = Op::Addr(AddrBase::Var(VarRef::Param(p)), base + off);
                        }
                    }
                }
                moved += loads.len();
                gone.push(n);
            }
        }
    }
    for n in gone.into_iter().rev() {
        f.body.remove(n);
    }
    moved
}

/// The nodes after `def` that read register `r`, when every one is an `ld.param` with
/// `r` as its address base and nowhere else; None when `r` has any other use.
fn param_loads_of(f: &Func, r: usize, def: usize) -> Option<Vec<usize>> {
    let mut loads = Vec::new();
    for (n, node) in f.body.iter().enumerate() {
        let Node::Instr(i) = node else { continue };
        if n == def {
            continue;
        }
        let mut regs = Vec::new();
        i.args.iter().for_each(|a| a.regs(&mut regs));
        if let Some((_, g)) = i.guard {
            regs.push(g);
        }
        let uses = regs.iter().filter(|&&x| x == r).count();
        if uses == 0 {
            continue;
        }
        let is_param_load = i.src.op == "ld"
            && i.src.has(".param")
            && n > def
            && uses == 1
            && matches!(i.args.get(1), Some(Op::Addr(AddrBase::Reg(b), _)) if *b == r);
        if !is_param_load {
            return None;
        }
        loads.push(n);
    }
    Some(loads)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(m: &Module) -> &Func {
        m.funcs.iter().find(|f| f.decl.entry).unwrap()
    }

    fn module(body: &str) -> Module {
        let src = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .align 8 .b8 k_param_0[64], .param .u64 k_param_1) {{\n\
             .reg .pred %p<4>;\n.reg .b32 %r<9>;\n.reg .b64 %rd<9>;\n{body}\nret;\n}}\n"
        );
        crate::resolve::resolve(crate::parse::parse(&src).unwrap()).unwrap()
    }

    fn loads(f: &Func) -> Vec<String> {
        f.body
            .iter()
            .filter_map(|n| match n {
                Node::Instr(i) if i.src.op == "ld" => Some(format!("{:?}", i.args[1])),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn loads_through_a_parameter_address_read_the_parameter() {
        let mut m = module(
            "mov.b64 %rd1, k_param_0;\nld.param.u64 %rd2, [%rd1+8];\nld.param.v2.u32 {%r1, %r2}, [%rd1+16];\nst.global.u64 [%rd2], %rd2;",
        );
        assert_eq!(forward(&mut m), 2);
        let f = entry(&m);
        assert!(!f.body.iter().any(|n| matches!(n, Node::Instr(i) if i.src.op == "mov")), "the mov stays");
        let p = format!("{:?}", Op::Addr(AddrBase::Var(VarRef::Param(0)), 8));
        assert_eq!(loads(f)[0], p);
        assert_eq!(loads(f)[1], format!("{:?}", Op::Addr(AddrBase::Var(VarRef::Param(0)), 16)));
    }

    #[test]
    fn any_other_use_or_a_late_or_guarded_mov_keeps_the_register() {
        for body in [
            // the address itself is stored, or compared, or converted
            "mov.b64 %rd1, k_param_0;\nld.param.u64 %rd2, [%rd1+8];\nst.global.u64 [%rd2], %rd1;",
            "mov.b64 %rd1, k_param_0;\ncvta.param.u64 %rd3, %rd1;\nld.param.u64 %rd2, [%rd1];",
            // written twice
            "mov.b64 %rd1, k_param_0;\nld.param.u64 %rd2, [%rd1+8];\nadd.s64 %rd1, %rd1, 8;\nld.param.u64 %rd2, [%rd1];",
            // guarded, or after a branch
            "setp.eq.u32 %p1, %r1, 0;\n@%p1 mov.b64 %rd1, k_param_0;\nld.param.u64 %rd2, [%rd1+8];",
            "setp.eq.u32 %p1, %r1, 0;\n@%p1 bra L1;\nL1:\nmov.b64 %rd1, k_param_0;\nld.param.u64 %rd2, [%rd1+8];",
        ] {
            let mut m = module(body);
            let before = loads(entry(&m));
            assert_eq!(forward(&mut m), 0, "{body}");
            assert_eq!(loads(entry(&m)), before, "{body}");
        }
    }
}
