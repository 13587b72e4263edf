//! Lanes: barrier-free kernels whose threads the host compiler can run as vector lanes.
//!
//! A plain runner runs a block's threads one after another (`for_each_thread`), and the
//! host compiler could vectorise that loop but for the index arithmetic: a CUDA index is a
//! 32-bit value (`blockIdx.x * blockDim.x + threadIdx.x`) that the code widens to 64 bits
//! for the address (`mul.wide.u32`), and a 32-bit sum may wrap, so the address is not an
//! affine function of the loop counter and the vectoriser gives up. This pass finds the
//! 32-bit registers that are affine in `%tid.x` (`u + k * tid.x`, `u` the same for every
//! thread of a row, `k` a literal) and the instructions that widen them. A kernel's
//! lanes instantiation (`K<fi><true, true>`) computes each such register as a 64-bit
//! `u + k * TX` (`TX` the runner's 64-bit loop counter, `%tid.x` itself: a 32-bit counter
//! the compiler cannot prove free of wrap-around) and its widenings from that; where no value of the row reaches 2^31 (the
//! runner checks `u + k * (end - 1)` once per row, and runs the plain instantiation
//! otherwise), both are the 32-bit code's values exactly: zero and sign extension agree.
//!
//! Only kernels whose code touches nothing but the thread's own index, the block's and
//! grid's shape, the parameters and global memory at accesses `align` proved aligned (or
//! single bytes) qualify: no calls, atomics, other state spaces, loops, traps or special registers that
//! read the thread's context (`%laneid` reads `linear_tid`, which a lanes runner writes
//! once per chunk of threads, not per thread). Their semantics is the plain runner's, in
//! the same thread order; vectorising is the compiler's business (it versions the loop on
//! aliasing where it must), and a fault inside a chunk is replayed one thread at a time
//! by the executor (`lanes` in the thread context) so that it names the thread.

use crate::align::Check;
use crate::ast::Ty;
use crate::resolve::{AddrBase, Func, Instr, Node, Op, VarRef};
use std::collections::{BTreeMap, HashMap};

/// What a kernel's lanes instantiation computes differently.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// Registers affine in `%tid.x`: their 64-bit shadows `w<reg>` are declared.
    pub wide: Vec<usize>,
    /// The statement each affected instruction runs in the lanes instantiation, by node.
    pub stmts: BTreeMap<usize, String>,
    /// The row's no-wrap condition: every affine register's largest value below 2^31,
    /// as a C++ expression over the row's `TI` (y, z) and its end `xe`.
    pub check: String,
}

/// A 32-bit value the same for every thread of a row, as C++ (`uint32_t` arithmetic).
type Uniform = String;

/// A 32-bit register's known form.
#[derive(Clone, Debug)]
enum Form {
    Uniform(Uniform),
    /// `u + k * tid.x`.
    Affine(Uniform, u64),
}

/// The largest stride kept: a row's values must stay far below 2^64 in 64-bit arithmetic.
const MAX_STRIDE: u64 = 1 << 16;

/// The lanes plan of entry `f`, or why the kernel does not qualify (for its module's
/// note). `params`: the kernel's parameters as (bytes, offset in the buffer); `aligned`:
/// `align`'s proven accesses (every global access must be one, or a single byte).
pub fn plan(f: &Func, params: &[(u64, u64)], aligned: &BTreeMap<usize, Check>) -> Result<Plan, String> {
    let defs = crate::uniform::write_counts(f);
    let label_at = crate::resolve::label_positions(f);
    let once = |r: usize| defs.get(&r) == Some(&1) && f.regs.get(r).is_some_and(|g| matches!(g.ty, Ty::U32 | Ty::S32 | Ty::B32));
    let mut forms: HashMap<usize, Form> = HashMap::new();
    let mut in_first = true;
    let mut plan = Plan::default();
    let mut checks: Vec<String> = Vec::new();
    for (n, node) in f.body.iter().enumerate() {
        let i = match node {
            Node::Label(_) => {
                in_first = false;
                continue;
            }
            Node::Instr(i) => i,
        };
        if !allowed(i, n, params, aligned, &label_at) {
            let special = i.args.iter().find_map(|o| match o {
                Op::Special(s) if !operand_allowed(o) => Some(format!(" reads {s}")),
                _ => None,
            });
            return Err(format!("{}{} (PTX line {})", i.src.text(), special.unwrap_or_default(), i.src.line));
        }
        if let Some(stmt) = widening(i, &plan.wide) {
            plan.stmts.insert(n, stmt);
        }
        // A register written once, from operands whose forms hold wherever it is written
        // (registers of the first block, written once and unguarded), anywhere: the lanes
        // code writes it and its 64-bit shadow together (both 0 where it is not written).
        // Only the first block's unguarded ones are operands of later forms.
        if let Some(Op::Reg(d)) = i.args.first() {
            if once(*d) {
                if let Some(form) = define(i, &forms, params) {
                    if let Form::Affine(u, k) = &form {
                        plan.wide.push(*d);
                        plan.stmts
                            .insert(n, format!("w{d} = (uint64_t)(uint32_t)({u}) + {k}ull * TX; r{d} = (decltype(r{d}))(uint32_t)w{d};"));
                        checks.push(format!("(uint64_t)(uint32_t)({u}) + {k}ull * (uint64_t)(xe - 1u) < 0x80000000ull"));
                    }
                    if in_first && i.guard.is_none() {
                        forms.insert(*d, form);
                    }
                }
            }
        }
        if matches!(i.src.op.as_str(), "bra" | "ret" | "exit") {
            in_first = false;
        }
    }
    // Worth it only where an address is built from an affine index.
    if !plan.stmts.keys().any(|n| !plan.wide.iter().any(|&r| defines(&f.body[*n], r))) {
        return Err("no address from an index affine in %tid.x".into());
    }
    plan.check = checks.join(" && ");
    Ok(plan)
}

fn defines(node: &Node, r: usize) -> bool {
    matches!(node, Node::Instr(i) if matches!(i.args.first(), Some(Op::Reg(d)) if *d == r))
}

/// Whether instruction `i` (node `n`) may run in a lanes instantiation: nothing that reads
/// the thread's context, calls out, synchronises, loops, or touches memory other than the
/// kernel's parameters and proven-aligned global accesses.
fn allowed(i: &Instr, n: usize, params: &[(u64, u64)], aligned: &BTreeMap<usize, Check>, label_at: &HashMap<usize, usize>) -> bool {
    let ordered = [".volatile", ".relaxed", ".acquire", ".release", ".mmio", ".cv"];
    let plain_access = !ordered.iter().any(|m| i.src.has(m));
    let ok = match i.src.op.as_str() {
        // The kernel's parameters only where the emitter reads them from the buffer itself
        // (through an address it makes a checked load, whose trap would name the chunk's
        // first thread).
        "ld" => {
            let own = || crate::layout::own_param_at(i.args.get(1)?, params, i.src.access_bytes()?);
            plain_access
                && ((i.src.has(".param") && own().is_some())
                    || (i.src.has(".global") && (aligned.contains_key(&n) || i.src.access_bytes() == Some(1))))
        }
        "st" => plain_access && i.src.has(".global") && (aligned.contains_key(&n) || i.src.access_bytes() == Some(1)),
        "bra" => match i.args.first() {
            Some(Op::Label(l)) => label_at.get(l).is_some_and(|&at| at > n),
            _ => false,
        },
        // Float division and the special functions are pure functions of their operands;
        // integer division reports a zero divisor with the thread's name.
        "div" => i.src.last_ty().is_some_and(|t| matches!(t, Ty::F32 | Ty::F64)),
        "mov" | "add" | "sub" | "mul" | "mad" | "fma" | "mul24" | "mad24" | "sad" | "shl" | "shr" | "shf" | "and" | "or" | "xor"
        | "not" | "cnot" | "lop3" | "bfe" | "bfi" | "prmt" | "popc" | "clz" | "brev" | "cvt" | "cvta" | "setp" | "set" | "selp"
        | "slct" | "min" | "max" | "abs" | "neg" | "copysign" | "testp" | "sqrt" | "rcp" | "rsqrt" | "sin" | "cos" | "lg2" | "ex2"
        | "tanh" | "ret" | "exit" => true,
        _ => false,
    };
    ok && i.args.iter().all(operand_allowed)
}

fn operand_allowed(o: &Op) -> bool {
    match o {
        Op::Special(s) => ["%tid.", "%ntid.", "%ctaid.", "%nctaid."].iter().any(|p| s.starts_with(p)),
        Op::Var(..) | Op::Func(_) | Op::Named(_) => false,
        Op::Addr(AddrBase::Reg(_), _) | Op::Addr(AddrBase::Var(VarRef::Param(_)), _) => true,
        Op::Addr(..) => false,
        Op::Vector(v) => v.iter().all(operand_allowed),
        Op::Pair(a, b) => operand_allowed(a) && operand_allowed(b),
        Op::Not(a) => operand_allowed(a),
        _ => true,
    }
}

/// The 32-bit integer type of an arithmetic instruction that wraps (no carry, saturation
/// or high half).
fn int32(i: &Instr) -> bool {
    let t = i.src.last_ty();
    matches!(t, Some(Ty::U32 | Ty::S32 | Ty::B32)) && !i.src.has(".cc") && !i.src.has(".sat") && !i.src.has(".hi") && !i.src.has(".wide")
}

/// The form a single-definition, unguarded instruction of the kernel's first block gives
/// its 32-bit destination.
fn define(i: &Instr, forms: &HashMap<usize, Form>, params: &[(u64, u64)]) -> Option<Form> {
    let of = |k: usize| -> Option<Form> {
        match i.args.get(k)? {
            Op::Reg(r) => forms.get(r).cloned(),
            Op::Int(c) => Some(Form::Uniform(format!("{}u", *c as u32))),
            Op::Special(s) => special(s),
            _ => None,
        }
    };
    let lit = |k: usize| -> Option<u64> {
        match i.args.get(k)? {
            Op::Int(c) if *c <= MAX_STRIDE => Some(*c),
            _ => None,
        }
    };
    let op = i.src.op.as_str();
    match op {
        "ld" if i.src.has(".param") && i.src.vec_width() == 1 && matches!(i.src.last_ty(), Some(Ty::U32 | Ty::S32 | Ty::B32)) => {
            crate::layout::own_param_at(i.args.get(1)?, params, 4).map(|at| Form::Uniform(format!("pload<uint32_t>(P0, {at})")))
        }
        "mov" if matches!(i.src.last_ty(), Some(Ty::U32 | Ty::S32 | Ty::B32)) => of(1),
        "add" | "sub" if int32(i) => match (of(1)?, of(2)?) {
            (Form::Uniform(a), Form::Uniform(b)) => Some(Form::Uniform(bin(&a, if op == "add" { "+" } else { "-" }, &b))),
            (Form::Affine(a, k), Form::Uniform(b)) => Some(Form::Affine(bin(&a, if op == "add" { "+" } else { "-" }, &b), k)),
            (Form::Uniform(a), Form::Affine(b, k)) if op == "add" => Some(Form::Affine(bin(&a, "+", &b), k)),
            (Form::Affine(a, k), Form::Affine(b, l)) if op == "add" && k + l <= MAX_STRIDE => Some(Form::Affine(bin(&a, "+", &b), k + l)),
            _ => None,
        },
        "mul" if int32(i) && i.src.has(".lo") => mul(of(1)?, of(2)?, lit(1), lit(2)),
        "mad" if int32(i) && i.src.has(".lo") => {
            let p = mul(of(1)?, of(2)?, lit(1), lit(2))?;
            match (p, of(3)?) {
                (Form::Uniform(a), Form::Uniform(b)) => Some(Form::Uniform(bin(&a, "+", &b))),
                (Form::Uniform(a), Form::Affine(b, k)) | (Form::Affine(b, k), Form::Uniform(a)) => Some(Form::Affine(bin(&a, "+", &b), k)),
                (Form::Affine(a, k), Form::Affine(b, l)) if k + l <= MAX_STRIDE => Some(Form::Affine(bin(&a, "+", &b), k + l)),
                _ => None,
            }
        }
        // Bit operations of values the same across the row (not of affine ones).
        "shr" | "and" | "or" | "xor" if int32(i) => match (of(1)?, of(2)?) {
            (Form::Uniform(a), Form::Uniform(b)) => Some(Form::Uniform(match op {
                "shr" if i.src.last_ty() == Some(Ty::S32) => format!("(uint32_t)((int32_t)({a}) >> (({b}) > 31u ? 31u : ({b})))"),
                "shr" => format!("(({b}) > 31u ? 0u : (uint32_t)(({a}) >> ({b})))"),
                "and" => bin(&a, "&", &b),
                "or" => bin(&a, "|", &b),
                _ => bin(&a, "^", &b),
            })),
            _ => None,
        },
        "shl" if matches!(i.src.last_ty(), Some(Ty::B32)) => {
            let s = lit(2).filter(|s| *s < 32)?;
            match of(1)? {
                Form::Uniform(a) => Some(Form::Uniform(format!("({a} << {s}u)"))),
                Form::Affine(a, k) if k << s <= MAX_STRIDE => Some(Form::Affine(format!("({a} << {s}u)"), k << s)),
                _ => None,
            }
        }
        _ => None,
    }
}

fn bin(a: &str, op: &str, b: &str) -> String {
    format!("(uint32_t)({a} {op} {b})")
}

/// A 32-bit low product: uniform by uniform, or affine by a literal.
fn mul(a: Form, b: Form, la: Option<u64>, lb: Option<u64>) -> Option<Form> {
    match (a, b) {
        (Form::Uniform(a), Form::Uniform(b)) => Some(Form::Uniform(bin(&a, "*", &b))),
        (Form::Affine(a, k), Form::Uniform(b)) => {
            let l = lb?;
            (k * l <= MAX_STRIDE).then(|| Form::Affine(bin(&a, "*", &b), k * l))
        }
        (Form::Uniform(a), Form::Affine(b, k)) => {
            let l = la?;
            (k * l <= MAX_STRIDE).then(|| Form::Affine(bin(&a, "*", &b), k * l))
        }
        _ => None,
    }
}

/// A special register's form: `%tid.x` is the lane, the rest are the same across a row.
fn special(s: &str) -> Option<Form> {
    let (base, c) = s.rsplit_once('.')?;
    if !matches!(c, "x" | "y" | "z") {
        return None;
    }
    match base {
        "%tid" if c == "x" => Some(Form::Affine("0u".into(), 1)),
        "%tid" => Some(Form::Uniform(format!("(uint32_t)TI.{c}"))),
        "%ntid" => Some(Form::Uniform(format!("(uint32_t)T.bdim.{c}"))),
        "%ctaid" => Some(Form::Uniform(format!("(uint32_t)T.bidx.{c}"))),
        "%nctaid" => Some(Form::Uniform(format!("(uint32_t)T.gdim.{c}"))),
        _ => None,
    }
}

/// The lanes statement of an instruction that widens an affine register (one of `wide`)
/// to 64 bits (`mul.wide` by a literal or a register, `cvt` to a 64-bit integer).
fn widening(i: &Instr, wide: &[usize]) -> Option<String> {
    let affine = |k: usize| match i.args.get(k) {
        Some(Op::Reg(r)) if wide.contains(r) => Some(*r),
        _ => None,
    };
    let Some(Op::Reg(d)) = i.args.first() else { return None };
    match i.src.op.as_str() {
        "mul" if i.src.has(".wide") => {
            let signed = match i.src.last_ty()? {
                Ty::U32 => false,
                Ty::S32 => true,
                _ => return None,
            };
            let (a, other) = match (affine(1), affine(2)) {
                (Some(a), _) => (a, i.args.get(2)?),
                (None, Some(b)) => (b, i.args.get(1)?),
                _ => return None,
            };
            let factor = match other {
                Op::Int(c) if signed => format!("(int64_t)(int32_t){}u", *c as u32),
                Op::Int(c) => format!("(uint64_t){}u", *c as u32),
                Op::Reg(r) if signed => format!("(int64_t)(int32_t)r{r}"),
                Op::Reg(r) => format!("(uint64_t)(uint32_t)r{r}"),
                _ => return None,
            };
            let w = if signed { format!("(int64_t)w{a}") } else { format!("w{a}") };
            Some(format!("r{d} = (decltype(r{d}))({w} * {factor});"))
        }
        "cvt" => {
            let tys: Vec<Ty> = i.src.mods.iter().filter_map(|m| Ty::parse(m)).collect();
            let ok = matches!(tys.as_slice(), [Ty::U64, Ty::U32] | [Ty::S64, Ty::S32] | [Ty::U64, Ty::S32] | [Ty::S64, Ty::U32]);
            let plain = i.src.mods.iter().all(|m| Ty::parse(m).is_some());
            let a = affine(1)?;
            (ok && plain).then(|| format!("r{d} = (decltype(r{d}))w{a};"))
        }
        _ => None,
    }
}
