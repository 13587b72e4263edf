//! The statement of each instruction, family by family, from the PTX ISA's definitions.
//! Semantics live in `runtime/ptx_rt.h`; this maps operands and modifiers onto it.

use super::func::{ctype, utype, FnEmitter};
use crate::ast::{Space, Ty};
use crate::resolve::{Instr, Op, VarRef};
use crate::Error;
use std::fmt::Write;

/// Rounding modifier of a float operation: ptx::RN / RZ / RP / RM (0..3); None if absent.
pub(super) fn fround(mods: &[String]) -> Option<u32> {
    mods.iter().find_map(|m| match m.as_str() {
        ".rn" => Some(0),
        ".rz" => Some(1),
        ".rp" => Some(2),
        ".rm" => Some(3),
        _ => None,
    })
}

/// The runtime's name of `i`'s comparison (setp/set: `EQ`, `LTU`, ...), if it has one.
pub(super) fn comparison(i: &Instr) -> Option<&'static str> {
    CMP.iter().find(|(m, _)| i.src.has(m)).map(|(_, c)| *c)
}

/// Rounding to an integral value (cvt's .rni/.rzi/.rpi/.rmi): ptx::RNI..RMI.
pub(super) fn iround(mods: &[String]) -> Option<u32> {
    mods.iter().find_map(|m| match m.as_str() {
        ".rni" => Some(0),
        ".rzi" => Some(1),
        ".rpi" => Some(2),
        ".rmi" => Some(3),
        _ => None,
    })
}

fn is_half(t: Ty) -> bool {
    matches!(t, Ty::F16 | Ty::F16x2 | Ty::Bf16 | Ty::Bf16x2)
}

const CMP: &[(&str, &str)] = &[
    (".eq", "EQ"),
    (".ne", "NE"),
    (".lt", "LT"),
    (".le", "LE"),
    (".gt", "GT"),
    (".ge", "GE"),
    (".lo", "LO"),
    (".ls", "LS"),
    (".hi", "HI"),
    (".hs", "HS"),
    (".equ", "EQU"),
    (".neu", "NEU"),
    (".ltu", "LTU"),
    (".leu", "LEU"),
    (".gtu", "GTU"),
    (".geu", "GEU"),
    (".num", "NUM"),
    (".nan", "NAN_"),
];

impl FnEmitter<'_> {
    pub(super) fn arg<'i>(&self, i: &'i Instr, k: usize) -> Result<&'i Op, Error> {
        i.args.get(k).ok_or_else(|| self.unsupported(format!("operand {} is missing", k + 1)))
    }

    pub(crate) fn ty(&self, i: &Instr) -> Result<Ty, Error> {
        i.src.last_ty().ok_or_else(|| self.unsupported("no type modifier"))
    }

    /// `d = f(a, b, ...)` with all operands of type t.
    fn simple(&mut self, i: &Instr, t: Ty, n: usize, f: impl FnOnce(&[String]) -> String) -> Result<String, Error> {
        let mut v = Vec::with_capacity(n);
        for k in 1..=n {
            let a = self.arg(i, k)?;
            v.push(self.val(a, t)?);
        }
        let e = f(&v);
        let d = self.arg(i, 0)?;
        self.set(d, t, &e)
    }

    /// Emits one instruction (without its guard).
    pub fn instr(&mut self, i: &Instr) -> Result<String, Error> {
        let op = i.src.op.as_str();
        let mods = &i.src.mods;
        match op {
            "mov" => self.mov(i),
            "ld" | "ldu" => self.load(i),
            "st" => self.store(i),
            "add" | "sub" | "addc" | "subc" => self.addsub(i),
            "mul" => self.mul(i),
            "mad" | "madc" | "fma" => self.mad(i),
            "mul24" | "mad24" => {
                let t = self.ty(i)?;
                let sgn = t.signed();
                let hi = i.src.has(".hi");
                let f = if hi { "mul24_hi" } else { "mul24_lo" };
                if op == "mul24" {
                    self.simple(i, t, 2, |v| format!("({})(ptx::{f}((uint32_t){}, (uint32_t){}, {sgn}))", ctype(t), v[0], v[1]))
                } else {
                    self.simple(i, t, 3, |v| {
                        format!("({})((uint32_t)ptx::{f}((uint32_t){}, (uint32_t){}, {sgn}) + (uint32_t){})", ctype(t), v[0], v[1], v[2])
                    })
                }
            }
            "sad" => {
                let t = self.ty(i)?;
                self.simple(i, t, 3, |v| format!("sad({}, {}, {})", v[0], v[1], v[2]))
            }
            "div" | "rem" => self.divrem(i),
            "abs" | "neg" => {
                let t = self.ty(i)?;
                let z = i.src.has(".ftz");
                match t {
                    Ty::F32 | Ty::F64 => {
                        let f = if op == "abs" { "fabs_" } else { "fneg" };
                        self.simple(i, t, 1, |v| format!("{f}(fz({}, {z}))", v[0]))
                    }
                    Ty::F16 | Ty::Bf16 | Ty::F16x2 | Ty::Bf16x2 => {
                        if z {
                            return Err(self.unsupported("abs/neg.ftz on half types"));
                        }
                        let bf = matches!(t, Ty::Bf16 | Ty::Bf16x2);
                        let f = if matches!(t, Ty::F16x2 | Ty::Bf16x2) { "habs_neg2" } else { "habs_neg" };
                        let neg = op == "neg";
                        self.simple(i, t, 1, |v| format!("{f}({}, {neg}, {bf})", v[0]))
                    }
                    _ => {
                        let f = if op == "abs" { "abs_" } else { "neg" };
                        self.simple(i, t, 1, |v| format!("{f}({})", v[0]))
                    }
                }
            }
            "min" | "max" => self.minmax(i),
            "popc" | "clz" => {
                let t = self.ty(i)?;
                let a = self.val(self.arg(i, 1)?, t)?;
                let d = self.arg(i, 0)?;
                self.set(d, Ty::U32, &format!("{op}({a})"))
            }
            "bfind" => {
                let t = self.ty(i)?;
                let a = self.val(self.arg(i, 1)?, t)?;
                let sh = i.src.has(".shiftamt");
                let d = self.arg(i, 0)?;
                self.set(d, Ty::U32, &format!("bfind({a}, {sh})"))
            }
            "brev" => {
                let t = self.ty(i)?;
                self.simple(i, t, 1, |v| format!("brev({})", v[0]))
            }
            "bfe" => {
                let t = self.ty(i)?;
                let a = self.val(self.arg(i, 1)?, t)?;
                let b = self.val(self.arg(i, 2)?, Ty::U32)?;
                let c = self.val(self.arg(i, 3)?, Ty::U32)?;
                let d = self.arg(i, 0)?;
                self.set(d, t, &format!("bfe({a}, {b}, {c})"))
            }
            "bfi" => {
                let t = self.ty(i)?;
                let a = self.val(self.arg(i, 1)?, t)?;
                let b = self.val(self.arg(i, 2)?, t)?;
                let c = self.val(self.arg(i, 3)?, Ty::U32)?;
                let e = self.val(self.arg(i, 4)?, Ty::U32)?;
                let d = self.arg(i, 0)?;
                self.set(d, t, &format!("bfi({a}, {b}, {c}, {e})"))
            }
            "fns" => {
                let a = self.val(self.arg(i, 1)?, Ty::U32)?;
                let b = self.val(self.arg(i, 2)?, Ty::U32)?;
                let c = self.val(self.arg(i, 3)?, Ty::S32)?;
                let d = self.arg(i, 0)?;
                self.set(d, Ty::U32, &format!("fns({a}, {b}, {c})"))
            }
            "bmsk" => {
                let clamp = i.src.has(".clamp");
                self.simple(i, Ty::B32, 2, |v| format!("bmsk({}, {}, {clamp})", v[0], v[1]))
            }
            "szext" => {
                let clamp = i.src.has(".clamp");
                let t = self.ty(i)?;
                let sgn = t.signed();
                self.simple(i, Ty::U32, 2, |v| format!("szext({}, {}, {sgn}, {clamp})", v[0], v[1]))
            }
            "dp4a" | "dp2a" => {
                let tys = i.src.tys();
                let (ta, tb) = (tys.first().copied().unwrap_or(Ty::U32), tys.get(1).copied().unwrap_or(Ty::U32));
                let dt = if ta.signed() || tb.signed() { Ty::S32 } else { Ty::U32 };
                let a = self.val(self.arg(i, 1)?, Ty::U32)?;
                let b = self.val(self.arg(i, 2)?, Ty::U32)?;
                let c = self.val(self.arg(i, 3)?, Ty::U32)?;
                let e = if op == "dp4a" {
                    format!("dp4a({a}, {b}, {c}, {}, {})", ta.signed(), tb.signed())
                } else {
                    format!("dp2a({a}, {b}, {c}, {}, {}, {})", ta.signed(), tb.signed(), i.src.has(".hi"))
                };
                let d = self.arg(i, 0)?;
                self.set(d, dt, &format!("({})({e})", ctype(dt)))
            }
            "and" | "or" | "xor" => {
                let t = self.ty(i)?;
                let o = match op {
                    "and" => "&",
                    "or" => "|",
                    _ => "^",
                };
                let ct = ctype(t);
                if t == Ty::Pred {
                    let o2 = match op {
                        "and" => "&&",
                        "or" => "||",
                        _ => "!=",
                    };
                    self.simple(i, t, 2, |v| format!("({} {o2} {})", v[0], v[1]))
                } else {
                    self.simple(i, t, 2, |v| format!("({ct})({} {o} {})", v[0], v[1]))
                }
            }
            "not" => {
                let t = self.ty(i)?;
                let ct = ctype(t);
                if t == Ty::Pred {
                    self.simple(i, t, 1, |v| format!("(!{})", v[0]))
                } else {
                    self.simple(i, t, 1, |v| format!("({ct})~{}", v[0]))
                }
            }
            "cnot" => {
                let t = self.ty(i)?;
                let ct = ctype(t);
                self.simple(i, t, 1, |v| format!("({ct})({} == 0 ? 1 : 0)", v[0]))
            }
            "lop3" => {
                if i.args.len() != 5 {
                    return Err(self.unsupported("lop3 with a predicate output"));
                }
                let a = self.val(self.arg(i, 1)?, Ty::B32)?;
                let b = self.val(self.arg(i, 2)?, Ty::B32)?;
                let c = self.val(self.arg(i, 3)?, Ty::B32)?;
                let l = self.val(self.arg(i, 4)?, Ty::B32)?;
                let d = self.arg(i, 0)?;
                self.set(d, Ty::B32, &format!("lop3({a}, {b}, {c}, {l})"))
            }
            "shl" | "shr" => {
                let t = self.ty(i)?;
                let a = self.val(self.arg(i, 1)?, t)?;
                let b = self.val(self.arg(i, 2)?, Ty::U32)?;
                let d = self.arg(i, 0)?;
                self.set(d, t, &format!("{op}({a}, {b})"))
            }
            "shf" => {
                let a = self.val(self.arg(i, 1)?, Ty::B32)?;
                let b = self.val(self.arg(i, 2)?, Ty::B32)?;
                let c = self.val(self.arg(i, 3)?, Ty::U32)?;
                let clamp = i.src.has(".clamp");
                let f = if i.src.has(".l") { "shf_l" } else { "shf_r" };
                let d = self.arg(i, 0)?;
                self.set(d, Ty::B32, &format!("{f}({a}, {b}, {c}, {clamp})"))
            }
            "prmt" => {
                let mode = [".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"].iter().position(|m| i.src.has(m)).map(|p| p + 1).unwrap_or(0);
                let a = self.val(self.arg(i, 1)?, Ty::B32)?;
                let b = self.val(self.arg(i, 2)?, Ty::B32)?;
                let c = self.val(self.arg(i, 3)?, Ty::B32)?;
                let d = self.arg(i, 0)?;
                self.set(d, Ty::B32, &format!("prmt({a}, {b}, {c}, {mode})"))
            }
            "setp" => self.setp(i),
            "set" => self.set_(i),
            "selp" => {
                let t = self.ty(i)?;
                let a = self.val(self.arg(i, 1)?, t)?;
                let b = self.val(self.arg(i, 2)?, t)?;
                let c = self.val(self.arg(i, 3)?, Ty::Pred)?;
                let d = self.arg(i, 0)?;
                self.set(d, t, &format!("({c} ? {a} : {b})"))
            }
            "slct" => {
                let tys = i.src.tys();
                let (dt, ct_) = (tys.first().copied().ok_or_else(|| self.unsupported("type"))?, tys.get(1).copied().unwrap_or(Ty::S32));
                let a = self.val(self.arg(i, 1)?, dt)?;
                let b = self.val(self.arg(i, 2)?, dt)?;
                let c = self.val(self.arg(i, 3)?, ct_)?;
                let cond = if ct_ == Ty::F32 { format!("(fz({c}, {}) >= 0.0f)", i.src.has(".ftz")) } else { format!("({c} >= 0)") };
                let d = self.arg(i, 0)?;
                self.set(d, dt, &format!("({cond} ? {a} : {b})"))
            }
            "rcp" | "sqrt" | "rsqrt" | "sin" | "cos" | "lg2" | "ex2" | "tanh" => self.unary_float(i),
            "copysign" => {
                let t = self.ty(i)?;
                self.simple(i, t, 2, |v| format!("copysign_({}, {})", v[0], v[1]))
            }
            "testp" => {
                let t = self.ty(i)?;
                let what = [".finite", ".infinite", ".number", ".notanumber", ".normal", ".subnormal"]
                    .iter()
                    .position(|m| i.src.has(m))
                    .ok_or_else(|| self.unsupported("testp without an operation"))?;
                let a = self.val(self.arg(i, 1)?, t)?;
                let d = self.arg(i, 0)?;
                self.set(d, Ty::Pred, &format!("testp({a}, {what})"))
            }
            "cvt" => self.cvt(i),
            "cvta" => self.cvta(i),
            "isspacep" => {
                let a = self.val(self.arg(i, 1)?, Ty::U64)?;
                let e = if i.src.has(".shared") || i.src.has(".shared::cta") || i.src.has(".shared::cluster") {
                    format!("({a} - (uint64_t)(uintptr_t)T.smem < T.smem_size)")
                } else if i.src.has(".global") {
                    format!("({a} - (uint64_t)(uintptr_t)T.smem >= T.smem_size && !is_local({a}))")
                } else if i.src.has(".local") {
                    format!("is_local({a})")
                } else if i.src.has(".const") || i.src.has(".param") {
                    "false".into()
                } else {
                    return Err(self.unsupported("isspacep of this space"));
                };
                let d = self.arg(i, 0)?;
                self.set(d, Ty::Pred, &e)
            }
            "prefetch" | "prefetchu" | "applypriority" | "discard" => Ok(String::new()),
            "createpolicy" => {
                let d = self.arg(i, 0)?;
                self.set(d, Ty::B64, "(uint64_t)0")
            }
            "atom" | "red" => self.atom(i),
            "membar" | "fence" => {
                let scope = if i.src.has(".cta") {
                    0
                } else if i.src.has(".sys") {
                    2
                } else {
                    1
                };
                if i.src.has(".proxy") || mods.iter().any(|m| m.starts_with(".mbarrier")) {
                    return Ok(String::new());
                }
                Ok(format!("::__simtwin::rt->threadfence({scope}u);"))
            }
            "bar" | "barrier" => self.barrier(i),
            "shfl" => self.shfl(i),
            "vote" => self.vote(i),
            "match" => self.match_(i),
            "redux" => self.redux(i),
            "activemask" => {
                let site = self.site();
                let d = self.arg(i, 0)?;
                self.set(d, Ty::B32, &format!("::__simtwin::rt->activemask({site})"))
            }
            "elect" => {
                let mask = self.val(self.arg(i, 1)?, Ty::B32)?;
                let site = self.site();
                let t = self.fresh();
                let mut s = format!("uint32_t {t}; {{ int32_t pp; uint32_t bal = (uint32_t)warp(SIMTWIN_WARP_BALLOT, {mask}, 1, 0, 32, &pp, {site}); {t} = bal ? (uint32_t)__builtin_ctz(bal) : 0u; }} ");
                match self.arg(i, 0)? {
                    Op::Pair(d, p) => {
                        s.push_str(&self.set(d, Ty::U32, &t)?);
                        s.push_str(&self.set(p, Ty::Pred, &format!("({t} == laneid(T))"))?);
                    }
                    d => s.push_str(&self.set(d, Ty::U32, &t)?),
                }
                Ok(s)
            }
            "bra" => {
                let Op::Label(l) = self.arg(i, 0)? else { return Err(self.unsupported("branch target is not a label")) };
                Ok(format!("goto B{l};"))
            }
            "brx" => {
                let idx = self.val(self.arg(i, 0)?, Ty::U32)?;
                let Op::Named(n) = self.arg(i, 1)? else { return Err(self.unsupported("brx.idx target list")) };
                let targets =
                    self.f.branch_targets.get(n).cloned().ok_or_else(|| self.unsupported(format!("unknown branch-target list {n}")))?;
                let mut s = format!("switch ({idx}) {{ ");
                for (k, l) in targets.iter().enumerate() {
                    let _ = write!(s, "case {k}: goto B{l}; ");
                }
                let line = self.line();
                let _ = write!(
                    s,
                    "default: ptx::trap(\"brx.idx: index past the end of its target list\", {}, {line}); }}",
                    super::c_str(&self.opts.name)
                );
                Ok(s)
            }
            "call" => self.call(i),
            "ret" => {
                if self.is_entry() {
                    Ok("return;".into())
                } else {
                    Ok(format!("{}return;", self.ret_stores()?))
                }
            }
            "exit" => {
                self.uses_exit = true;
                if self.is_entry() {
                    Ok("return;".into())
                } else {
                    Ok("throw ptx::Exit{};".into())
                }
            }
            "trap" | "brkpt" => {
                let line = self.line();
                Ok(format!("ptx::trap(\"{op}\", {}, {line});", super::c_str(&self.opts.name)))
            }
            "nanosleep" => {
                let site = self.site();
                Ok(format!("::__simtwin::rt->yield_now({site});"))
            }
            "pmevent" => Ok(String::new()),
            "mbarrier" => self.mbarrier(i),
            "cp" if Self::is_cp_mbarrier_arrive(i) => self.mbarrier(i),
            "cp" => self.cp_async(i),
            "tex" | "tld4" => self.tex(i),
            "txq" | "suq" => self.txq(i),
            "suld" | "sust" => self.surface(i),
            _ => Err(self.unsupported(format!("`{op}` is not implemented in PTX mode"))),
        }
    }

    fn mov(&mut self, i: &Instr) -> Result<String, Error> {
        let t = self.ty(i)?;
        let d = self.arg(i, 0)?.clone();
        let a = self.arg(i, 1)?.clone();
        match (&d, &a) {
            (Op::Vector(parts), src) => {
                // Unpack: low part first.
                let v = self.val(src, t)?;
                let n = parts.len() as u32;
                let psize = t.size() / n.max(1);
                let pt = match psize {
                    1 => Ty::B8,
                    2 => Ty::B16,
                    4 => Ty::B32,
                    _ => Ty::B64,
                };
                let tmp = self.fresh();
                let mut s = format!("{} {tmp} = bc<{}>({v}); ", utype(t.size()), utype(t.size()));
                for (k, p) in parts.iter().enumerate() {
                    let e = format!("({})({tmp} >> {})", ctype(pt), k as u32 * psize * 8);
                    s.push_str(&self.set(p, pt, &e)?);
                    s.push(' ');
                }
                Ok(s)
            }
            (dst, Op::Vector(parts)) => {
                let n = parts.len() as u32;
                let psize = t.size() / n.max(1);
                let pt = match psize {
                    1 => Ty::B8,
                    2 => Ty::B16,
                    4 => Ty::B32,
                    _ => Ty::B64,
                };
                let ut = utype(t.size());
                let mut e = String::from("(");
                for (k, p) in parts.iter().enumerate() {
                    let v = self.val(p, pt)?;
                    if k > 0 {
                        e.push_str(" | ");
                    }
                    let _ = write!(e, "(({ut}){v} << {})", k as u32 * psize * 8);
                }
                e.push(')');
                let e = if ctype(t) == ut { e } else { format!("bc<{}>({e})", ctype(t)) };
                self.set(dst, t, &e)
            }
            (dst, src) => {
                let v = self.val(src, t)?;
                self.set(dst, t, &v)
            }
        }
    }

    fn load(&mut self, i: &Instr) -> Result<String, Error> {
        let t = self.ty(i)?;
        let space = Space::of_access(&i.src.mods);
        let n = i.src.vec_width() as usize;
        let a = self.addr(self.arg(i, 1)?, space)?;
        let volatile = i.src.has(".volatile") || i.src.has(".relaxed") || i.src.has(".acquire");
        let f = if volatile && space != Some(Space::Param) { "vload" } else { "load" };
        // An acquire load at device or system scope is how threads poll a flag another
        // block sets (cooperative_groups' grid sync spins on one): let the rest of the
        // block, and other blocks, run first (a spin-wait hint, as `nanosleep`; such
        // kernels keep fibers, simtwin-ptx `uniform`).
        let poll = if crate::uniform::polling_load(i) { format!("::__simtwin::rt->yield_now({}); ", self.site()) } else { String::new() };
        let ct = ctype(t);
        let d = self.arg(i, 0)?.clone();
        if let Some(off) = self.own_param_offset(self.arg(i, 1)?, space, t.size() * n as u32) {
            // The kernel's own parameter at a fixed, aligned offset: read from the buffer
            // itself, not through an address made from it, so the buffer's address never
            // escapes and the compiler keeps the value in a register across the threads.
            if n == 1 {
                return self.set(&d, t, &format!("pload<{ct}>(P0, {off})"));
            }
            let Op::Vector(parts) = d else { return Err(self.unsupported("vector load into a non-vector")) };
            let mut s = String::new();
            for (k, p) in parts.iter().enumerate() {
                s.push_str(&self.set(p, t, &format!("pload<{ct}>(P0, {})", off + k as u64 * t.size() as u64))?);
                s.push(' ');
            }
            return Ok(s);
        }
        // A load of an initialized `.const` variable the runner found unwritten: the
        // initializer's value where its checks hold (`constants`).
        if let Some(fold) = self.folds.get(&self.node).filter(|_| f == "load" && poll.is_empty()) {
            let (arg, ut) = (self.aligned_arg, utype(t.size()));
            let lits: Vec<String> = (0..n).map(|k| format!("bc<{ct}>(({ut}){:#x}ull)", fold.element(k))).collect();
            if n == 1 {
                return self.set(&d, t, &format!("({arg} ? {} : load<{ct}>({a}))", lits[0]));
            }
            let Op::Vector(parts) = d else { return Err(self.unsupported("vector load into a non-vector")) };
            let tmp = self.fresh();
            let mut s = format!("uint64_t {tmp} = {a}; ");
            for (k, p) in parts.iter().enumerate() {
                s.push_str(&self.set(p, t, &format!("({arg} ? {} : load<{ct}>({tmp} + {}))", lits[k], k as u32 * t.size()))?);
                s.push(' ');
            }
            return Ok(s);
        }
        // An access whose alignment the runner checked for every thread (`align`).
        let skip = if f == "load" && self.aligned.contains_key(&self.node) { format!(", {}", self.aligned_arg) } else { String::new() };
        if n == 1 {
            let e = format!("{f}<{ct}{skip}>({a})");
            return Ok(format!("{poll}{}", self.set(&d, t, &e)?));
        }
        let Op::Vector(parts) = d else { return Err(self.unsupported("vector load into a non-vector")) };
        let tmp = self.fresh();
        let mut s = format!("{poll}uint64_t {tmp} = {a}; ");
        // Every lane used: ptxas keeps the whole vector access (LDG.64/.128), which needs the
        // vector's alignment (716 otherwise); lanes unused: it may narrow the access, and
        // each element needs only its own (checked by the element loads).
        // (Not for kernel parameters: their buffer is laid out by simtwin, not the program.)
        if space != Some(Space::Param) && parts.iter().all(|p| matches!(p, Op::Reg(r) if self.reg_read_elsewhere(*r))) {
            let guard = if skip.is_empty() { String::new() } else { format!("if (!{}) ", self.aligned_arg) };
            let _ = write!(s, "{guard}align_check({tmp}, {}); ", parts.len() as u32 * t.size());
        }
        for (k, p) in parts.iter().enumerate() {
            let e = format!("{f}<{ct}{skip}>({tmp} + {})", k as u32 * t.size());
            s.push_str(&self.set(p, t, &e)?);
            s.push(' ');
        }
        Ok(s)
    }

    /// The byte offset in the kernel's parameter buffer that `ld.param` operand `op`
    /// names, when it is the kernel's own parameter plus a literal offset, aligned for an
    /// access of `bytes` bytes (a misaligned one keeps the checked load and its trap).
    fn own_param_offset(&self, op: &Op, space: Option<Space>, bytes: u32) -> Option<u64> {
        if space != Some(Space::Param) || !self.is_entry() {
            return None;
        }
        crate::layout::own_param_at(op, &self.kl?.params, bytes)
    }

    fn store(&mut self, i: &Instr) -> Result<String, Error> {
        let t = self.ty(i)?;
        let space = Space::of_access(&i.src.mods);
        let n = i.src.vec_width() as usize;
        let a = self.addr(self.arg(i, 0)?, space)?;
        let volatile = i.src.has(".volatile") || i.src.has(".relaxed") || i.src.has(".release");
        let f = if volatile { "vstore" } else { "store" };
        let ct = ctype(t);
        let src = self.arg(i, 1)?.clone();
        // An access whose alignment the runner checked for every thread (`align`).
        let skip = if f == "store" && self.aligned.contains_key(&self.node) { format!(", {}", self.aligned_arg) } else { String::new() };
        if n == 1 {
            let v = self.val(&src, t)?;
            return Ok(format!("{f}<{ct}{skip}>({a}, {v});"));
        }
        let Op::Vector(parts) = src else { return Err(self.unsupported("vector store of a non-vector")) };
        let tmp = self.fresh();
        let mut s = format!("uint64_t {tmp} = {a}; ");
        // Every lane written: one STG.64/.128, aligned to the whole vector (716 otherwise).
        if space != Some(Space::Param) && !parts.contains(&Op::Sink) {
            let guard = if skip.is_empty() { String::new() } else { format!("if (!{}) ", self.aligned_arg) };
            let _ = write!(s, "{guard}align_check({tmp}, {}); ", parts.len() as u32 * t.size());
        }
        for (k, p) in parts.iter().enumerate() {
            if *p == Op::Sink {
                continue;
            }
            let v = self.val(p, t)?;
            let _ = write!(s, "{f}<{ct}{skip}>({tmp} + {}, {v}); ", k as u32 * t.size());
        }
        Ok(s)
    }

    fn addsub(&mut self, i: &Instr) -> Result<String, Error> {
        let t = self.ty(i)?;
        let op = i.src.op.as_str();
        let is_sub = op.starts_with("sub");
        if t.float() || is_half(t) {
            return self.float_arith(i, t, if is_sub { "OP_SUB" } else { "OP_ADD" });
        }
        let cc_out = i.src.has(".cc");
        let cc_in = op == "addc" || op == "subc";
        if cc_in || cc_out {
            let f = if is_sub { "sub_cc" } else { "add_cc" };
            return self.simple(i, t, 2, |v| format!("{f}(T, {}, {}, {cc_in}, {cc_out})", v[0], v[1]));
        }
        if i.src.has(".sat") {
            let f = if is_sub { "sub_sat" } else { "add_sat" };
            return self.simple(i, t, 2, |v| format!("{f}({}, {})", v[0], v[1]));
        }
        let f = if is_sub { "sub" } else { "add" };
        self.simple(i, t, 2, |v| format!("{f}({}, {})", v[0], v[1]))
    }

    /// f32/f64/f16 arithmetic with modifiers; contraction applied for fused add/sub.
    fn float_arith(&mut self, i: &Instr, t: Ty, opname: &str) -> Result<String, Error> {
        // A multiply ptxas fuses into this add/sub (pass `contract`).
        if let Some(fu) = self.fused.into.get(&self.node).copied() {
            if opname == "OP_ADD" || opname == "OP_SUB" {
                return self.fused_add(i, t, opname == "OP_SUB", fu);
            }
        }
        let rm = fround(&i.src.mods).unwrap_or(0);
        let z = i.src.has(".ftz");
        let s = i.src.has(".sat");
        if is_half(t) {
            let code = match opname {
                "OP_ADD" => 0,
                "OP_SUB" => 1,
                "OP_MUL" => 2,
                _ => return Err(self.unsupported("half operation")),
            };
            let bf = matches!(t, Ty::Bf16 | Ty::Bf16x2);
            let f = if matches!(t, Ty::F16x2 | Ty::Bf16x2) { "harith2" } else { "harith" };
            return self.simple(i, t, 2, |v| format!("{f}({code}, {rm}, {z}, {s}, {}, {}, 0, {bf})", v[0], v[1]));
        }
        let ct = ctype(t);
        let c = self.canon_arg(i, t)?;
        self.simple(i, t, 2, |v| format!("farith<{ct}{c}>({opname}, {rm}, {z}, {s}, {}, {}, ({ct})0)", v[0], v[1]))
    }

    /// `, false` (no NaN canonicalisation, `FnEmitter::nan_blind`) for an f32 result
    /// whose register only f32 arithmetic and compares read; empty otherwise.
    fn canon_arg(&mut self, i: &Instr, t: Ty) -> Result<&'static str, Error> {
        let d = self.arg(i, 0)?.clone();
        Ok(if t == Ty::F32 && self.nan_blind(&d) { ", false" } else { "" })
    }

    /// An add/sub that absorbed a product: one `fma.rn` (with the add's `.ftz`/`.sat`) of
    /// the multiply's operands as they were at the multiply (`m<node>a/b`, kept by `mul`)
    /// and the add's other operand, signs folded in (reports/ptxas-contraction §2.7):
    /// `p + c`, `c + p` -> fma(a, b, c); `p - c` -> fma(a, b, -c); `c - p` -> fma(-a, b, c);
    /// a product that reached the add negated (`neg`, `× -1`) negates `a` once more.
    fn fused_add(&mut self, i: &Instr, t: Ty, sub: bool, fu: crate::contract::Fused) -> Result<String, Error> {
        let z = i.src.has(".ftz");
        let s = i.src.has(".sat");
        let other = if fu.operand == 1 { 2 } else { 1 };
        let c = self.val(self.arg(i, other)?, t)?;
        let neg_a = fu.neg ^ (sub && fu.operand == 2);
        let neg_c = sub && fu.operand == 1;
        let (ma, mb) = (format!("m{}a", fu.mul), format!("m{}b", fu.mul));
        let e = if is_half(t) {
            let bf = matches!(t, Ty::Bf16 | Ty::Bf16x2);
            let (f, sign) = if matches!(t, Ty::F16x2 | Ty::Bf16x2) { ("harith2", "0x80008000u") } else { ("harith", "0x8000u") };
            let ct = ctype(t);
            let flip = |x: String, on: bool| if on { format!("({ct})({x} ^ {sign})") } else { x };
            format!("{f}(3, RN, {z}, {s}, {}, {mb}, {}, {bf})", flip(ma, neg_a), flip(c, neg_c))
        } else {
            let flip = |x: String, on: bool| if on { format!("fneg_bits({x})") } else { x };
            let ct = ctype(t);
            let canon = self.canon_arg(i, t)?;
            format!("farith<{ct}{canon}>(OP_FMA, RN, {z}, {s}, {}, {mb}, {})", flip(ma, neg_a), flip(c, neg_c))
        };
        let d = self.arg(i, 0)?;
        self.set(d, t, &e)
    }

    /// Keeps the operands of a multiply that an add absorbs (`m<node>a/b`, declared at
    /// function scope: the add may be in another block, after a loop's back edge).
    fn keep_operands(&mut self, i: &Instr, t: Ty) -> Result<String, Error> {
        let a = self.val(self.arg(i, 1)?, t)?;
        let b = self.val(self.arg(i, 2)?, t)?;
        let n = self.node;
        let ct = ctype(t);
        let _ = writeln!(self.decls, "  {ct} m{n}a = 0, m{n}b = 0;");
        self.kept.push((ct, n));
        if i.src.op == "div" {
            // div.approx/full.f32: the dividend and the reciprocal, scaled as the division does.
            let full = i.src.has(".full");
            let z = i.src.has(".ftz");
            return Ok(format!("div_parts({full}, {z}, {a}, {b}, m{n}a, m{n}b);"));
        }
        Ok(format!("m{n}a = {a}; m{n}b = {b};"))
    }

    fn mul(&mut self, i: &Instr) -> Result<String, Error> {
        let t = self.ty(i)?;
        if t.float() || is_half(t) {
            if self.fused.absorbed.contains(&self.node) {
                // Fused into later adds: keep the operands as they are now; the product
                // itself is computed too (a copy of it may be read where ptxas kept it).
                let pre = self.keep_operands(i, t)?;
                let own = self.float_arith(i, t, "OP_MUL")?;
                return Ok(format!("{pre} {own}"));
            }
            return self.float_arith(i, t, "OP_MUL");
        }
        if i.src.has(".wide") {
            let wt = match t {
                Ty::S16 => Ty::S32,
                Ty::U16 => Ty::U32,
                Ty::S32 => Ty::S64,
                Ty::U32 => Ty::U64,
                _ => return Err(self.unsupported("mul.wide of this type")),
            };
            let a = self.val(self.arg(i, 1)?, t)?;
            let b = self.val(self.arg(i, 2)?, t)?;
            let d = self.arg(i, 0)?;
            return self.set(d, wt, &format!("mul_wide<{}>({a}, {b})", ctype(wt)));
        }
        if i.src.has(".hi") {
            return self.simple(i, t, 2, |v| format!("mul_hi({}, {})", v[0], v[1]));
        }
        self.simple(i, t, 2, |v| format!("mul_lo({}, {})", v[0], v[1]))
    }

    fn mad(&mut self, i: &Instr) -> Result<String, Error> {
        let t = self.ty(i)?;
        let op = i.src.op.as_str();
        if t.float() || is_half(t) {
            let rm = fround(&i.src.mods).unwrap_or(0);
            let z = i.src.has(".ftz");
            let s = i.src.has(".sat");
            if is_half(t) {
                if i.src.has(".oob") {
                    return Err(self.unsupported("fma.oob on half types"));
                }
                let bf = matches!(t, Ty::Bf16 | Ty::Bf16x2);
                let x2 = matches!(t, Ty::F16x2 | Ty::Bf16x2);
                let f = if x2 { "harith2" } else { "harith" };
                let relu = match (i.src.has(".relu"), x2) {
                    (false, _) => "",
                    (true, false) => "hrelu",
                    (true, true) => "hrelu2",
                };
                return self.simple(i, t, 3, |v| format!("{relu}({f}(3, {rm}, {z}, {s}, {}, {}, {}, {bf}))", v[0], v[1], v[2]));
            }
            let ct = ctype(t);
            let c = self.canon_arg(i, t)?;
            return self.simple(i, t, 3, |v| format!("farith<{ct}{c}>(OP_FMA, {rm}, {z}, {s}, {}, {}, {})", v[0], v[1], v[2]));
        }
        let cc_out = i.src.has(".cc");
        let cc_in = op == "madc";
        let (prod_t, prod) = if i.src.has(".wide") {
            let wt = match t {
                Ty::S16 => Ty::S32,
                Ty::U16 => Ty::U32,
                Ty::S32 => Ty::S64,
                Ty::U32 => Ty::U64,
                _ => return Err(self.unsupported("mad.wide of this type")),
            };
            let a = self.val(self.arg(i, 1)?, t)?;
            let b = self.val(self.arg(i, 2)?, t)?;
            (wt, format!("mul_wide<{}>({a}, {b})", ctype(wt)))
        } else {
            let a = self.val(self.arg(i, 1)?, t)?;
            let b = self.val(self.arg(i, 2)?, t)?;
            let f = if i.src.has(".hi") { "mul_hi" } else { "mul_lo" };
            (t, format!("{f}({a}, {b})"))
        };
        let c = self.val(self.arg(i, 3)?, prod_t)?;
        let e = if cc_in || cc_out {
            format!("add_cc(T, {prod}, {c}, {cc_in}, {cc_out})")
        } else if i.src.has(".sat") {
            // mad.hi.sat.s32: the sum saturated to 32 bits.
            format!("add_sat({prod}, {c})")
        } else {
            format!("add({prod}, {c})")
        };
        let d = self.arg(i, 0)?;
        self.set(d, prod_t, &e)
    }

    fn divrem(&mut self, i: &Instr) -> Result<String, Error> {
        let t = self.ty(i)?;
        if t.float() {
            if let Some((f, form)) = crate::sfu::function("div", &i.src.mods) {
                self.sfu.push(form);
                if self.fused.absorbed.contains(&self.node) {
                    let pre = self.keep_operands(i, t)?;
                    let own = self.simple(i, t, 2, |v| format!("{f}({}, {})", v[0], v[1]))?;
                    return Ok(format!("{pre} {own}"));
                }
                // The models give the unit's own NaN results (runtime/simtwin_sfu.cpp).
                return self.simple(i, t, 2, |v| format!("{f}({}, {})", v[0], v[1]));
            }
            let rm = fround(&i.src.mods).ok_or_else(|| self.unsupported("div without .approx, .full or a rounding modifier"))?;
            let z = i.src.has(".ftz");
            let ct = ctype(t);
            return self.simple(i, t, 2, |v| format!("farith<{ct}>(OP_DIV, {rm}, {z}, false, {}, {}, ({ct})0)", v[0], v[1]));
        }
        let site = self.site();
        let f = if i.src.op == "div" { "div_" } else { "rem_" };
        self.simple(i, t, 2, |v| format!("{f}({}, {}, {site})", v[0], v[1]))
    }

    fn minmax(&mut self, i: &Instr) -> Result<String, Error> {
        let t = self.ty(i)?;
        let mx = i.src.op == "max";
        if i.args.len() > 3 {
            return Err(self.unsupported("three-input min/max"));
        }
        if i.src.has(".xorsign") {
            return Err(self.unsupported("min/max.xorsign.abs"));
        }
        let z = i.src.has(".ftz");
        let nan = i.src.has(".NaN");
        match t {
            Ty::F32 | Ty::F64 => {
                let f = if mx { "fmax_" } else { "fmin_" };
                self.simple(i, t, 2, |v| format!("{f}({}, {}, {z}, {nan})", v[0], v[1]))
            }
            Ty::F16 | Ty::Bf16 | Ty::F16x2 | Ty::Bf16x2 => {
                let bf = matches!(t, Ty::Bf16 | Ty::Bf16x2);
                let f = if matches!(t, Ty::F16x2 | Ty::Bf16x2) { "hminmax2" } else { "hminmax" };
                self.simple(i, t, 2, |v| format!("{f}({mx}, {}, {}, {z}, {nan}, {bf})", v[0], v[1]))
            }
            _ => {
                let relu = i.src.has(".relu");
                let ct = ctype(t);
                let o = if mx { ">" } else { "<" };
                self.simple(i, t, 2, |v| {
                    let e = format!("({} {o} {} ? {} : {})", v[0], v[1], v[0], v[1]);
                    if relu {
                        format!("({ct})({e} < 0 ? 0 : {e})")
                    } else {
                        e
                    }
                })
            }
        }
    }

    fn setp(&mut self, i: &Instr) -> Result<String, Error> {
        let t = self.ty(i)?;
        let cmp = comparison(i).ok_or_else(|| self.unsupported("setp without a comparison"))?;
        let bool_op = if i.src.has(".and") {
            Some("&&")
        } else if i.src.has(".or") {
            Some("||")
        } else if i.src.has(".xor") {
            Some("!=")
        } else {
            None
        };
        let z = i.src.has(".ftz");
        let (pv, qv) = if is_half(t) {
            self.half_compare(i, t, cmp, z)?
        } else {
            let a = self.val(self.arg(i, 1)?, t)?;
            let b = self.val(self.arg(i, 2)?, t)?;
            if t.float() {
                (format!("cmp({cmp}, fz({a}, {z}), fz({b}, {z}))"), None)
            } else {
                (format!("cmp({cmp}, {a}, {b})"), None)
            }
        };
        let c = match (bool_op, i.args.get(3)) {
            (Some(_), Some(c)) => Some(self.val(c, Ty::Pred)?),
            _ => None,
        };
        let comb = |e: String, neg: bool| -> String {
            let e = if neg { format!("!{e}") } else { e };
            match (&bool_op, &c) {
                (Some(o), Some(c)) => format!("(({e}) {o} {c})"),
                _ => e,
            }
        };
        let d = self.arg(i, 0)?.clone();
        match (d, qv) {
            (Op::Pair(p, q), None) => {
                let t1 = self.fresh();
                let mut s = format!("bool {t1} = {pv}; ");
                s.push_str(&self.set(&p, Ty::Pred, &comb(t1.clone(), false))?);
                s.push_str(&self.set(&q, Ty::Pred, &comb(t1, true))?);
                Ok(s)
            }
            (Op::Pair(p, q), Some(qv)) => {
                let mut s = self.set(&p, Ty::Pred, &comb(pv, false))?;
                s.push_str(&self.set(&q, Ty::Pred, &comb(qv, false))?);
                Ok(s)
            }
            (d, _) => self.set(&d, Ty::Pred, &comb(pv, false)),
        }
    }

    /// A half-precision comparison of operands 1 and 2 (setp, set): the low halves' result
    /// and, for the x2 types, the high halves'.
    fn half_compare(&mut self, i: &Instr, t: Ty, cmp: &str, z: bool) -> Result<(String, Option<String>), Error> {
        let bf = matches!(t, Ty::Bf16 | Ty::Bf16x2);
        let conv = if bf { "bf2f" } else { "h2f" };
        let ft = match (z, bf) {
            (false, _) => "",
            (true, true) => "bfftz",
            (true, false) => "hftz",
        };
        let a = self.val(self.arg(i, 1)?, t)?;
        let b = self.val(self.arg(i, 2)?, t)?;
        Ok(if matches!(t, Ty::F16x2 | Ty::Bf16x2) {
            (
                format!("cmp({cmp}, {conv}({ft}((uint16_t){a})), {conv}({ft}((uint16_t){b})))"),
                Some(format!("cmp({cmp}, {conv}({ft}((uint16_t)({a} >> 16))), {conv}({ft}((uint16_t)({b} >> 16))))")),
            )
        } else {
            (format!("cmp({cmp}, {conv}({ft}({a})), {conv}({ft}({b})))"), None)
        })
    }

    /// `set`: 1.0 (in the destination's float type) or all ones (integer destinations)
    /// where the comparison holds, else 0; the x2 source types compare and write each
    /// 16-bit half on its own (PTX ISA, set and its half-precision forms).
    fn set_(&mut self, i: &Instr) -> Result<String, Error> {
        let tys = i.src.tys();
        let (dt, st) = (tys.first().copied().ok_or_else(|| self.unsupported("type"))?, tys.get(1).copied().unwrap_or(Ty::U32));
        let cmp = comparison(i).ok_or_else(|| self.unsupported("set without a comparison"))?;
        let z = i.src.has(".ftz");
        let (mut e, mut hi) = if is_half(st) {
            self.half_compare(i, st, cmp, z)?
        } else {
            let a = self.val(self.arg(i, 1)?, st)?;
            let b = self.val(self.arg(i, 2)?, st)?;
            (if st.float() { format!("cmp({cmp}, fz({a}, {z}), fz({b}, {z}))") } else { format!("cmp({cmp}, {a}, {b})") }, None)
        };
        let bool_op = if i.src.has(".and") {
            Some("&&")
        } else if i.src.has(".or") {
            Some("||")
        } else if i.src.has(".xor") {
            Some("!=")
        } else {
            None
        };
        if let (Some(o), Some(c)) = (bool_op, i.args.get(3)) {
            let c = self.val(c, Ty::Pred)?;
            e = format!("(({e}) {o} {c})");
            hi = hi.map(|h| format!("(({h}) {o} {c})"));
        }
        // The value a true comparison writes into one result (a 16-bit half for x2 sources).
        let one = match dt {
            Ty::F16 | Ty::F16x2 => "0x3c00u",
            Ty::Bf16 | Ty::Bf16x2 => "0x3f80u",
            _ if hi.is_some() => "0xffffu",
            _ => "",
        };
        let ct = ctype(dt);
        if hi.is_some() && !matches!(dt, Ty::F16x2 | Ty::Bf16x2 | Ty::U32 | Ty::S32 | Ty::B32) {
            return Err(self.unsupported("set of an x2 source into a destination that is not 32 bits"));
        }
        let v = match (&hi, dt) {
            (Some(h), _) => format!("({ct})(({e} ? {one} : 0u) | ({h} ? {one} : 0u) << 16)"),
            (None, Ty::F32) => format!("({e} ? 1.0f : 0.0f)"),
            (None, Ty::F16 | Ty::Bf16) => format!("({ct})({e} ? {one} : 0u)"),
            (None, Ty::F16x2 | Ty::Bf16x2 | Ty::F64) => return Err(self.unsupported("set with this destination type")),
            (None, _) => format!("({e} ? ({ct})0xffffffffffffffffull : ({ct})0)"),
        };
        let d = self.arg(i, 0)?;
        self.set(d, dt, &v)
    }

    fn unary_float(&mut self, i: &Instr) -> Result<String, Error> {
        let t = self.ty(i)?;
        let op = i.src.op.as_str();
        if let Some((f, form)) = crate::sfu::function(op, &i.src.mods) {
            self.sfu.push(form);
            // The models give the unit's own NaN results (runtime/simtwin_sfu.cpp). An
            // f32 one remembers its last operand per call site (ptx_rt.h `sfu_memo`).
            if t == Ty::F32 {
                let slot = self.memo_sites % 8;
                self.memo_sites += 1;
                return self.simple(i, t, 1, |v| format!("sfu_memo<{f}>(T, {slot}u, {})", v[0]));
            }
            return self.simple(i, t, 1, |v| format!("{f}({})", v[0]));
        }
        let z = i.src.has(".ftz");
        let ct = ctype(t);
        let rm = fround(&i.src.mods);
        match (op, rm) {
            ("sqrt", Some(rm)) if matches!(t, Ty::F32 | Ty::F64) => {
                self.simple(i, t, 1, |v| format!("farith<{ct}>(OP_SQRT, {rm}, {z}, false, {}, ({ct})0, ({ct})0)", v[0]))
            }
            ("rcp", Some(rm)) if matches!(t, Ty::F32 | Ty::F64) => {
                self.simple(i, t, 1, |v| format!("farith<{ct}>(OP_RCP, {rm}, {z}, false, {}, ({ct})0, ({ct})0)", v[0]))
            }
            _ => Err(self.unsupported(format!("{} is not implemented in PTX mode", i.src.text()))),
        }
    }

    fn cvt(&mut self, i: &Instr) -> Result<String, Error> {
        let tys = i.src.tys();
        if tys.len() < 2 {
            return Err(self.unsupported("cvt needs a destination and a source type"));
        }
        let (dt, st) = (tys[0], tys[1]);
        let z = i.src.has(".ftz");
        let sat = i.src.has(".sat");
        let relu = i.src.has(".relu");
        let d = self.arg(i, 0)?.clone();
        // Packing forms: cvt.rn.f16x2.f32 d, a, b (a to the upper half).
        if matches!(dt, Ty::F16x2 | Ty::Bf16x2) && st == Ty::F32 {
            if relu || i.src.has(".satfinite") {
                return Err(self.unsupported("cvt .relu/.satfinite packing"));
            }
            let rm = fround(&i.src.mods).unwrap_or(0);
            let a = self.val(self.arg(i, 1)?, Ty::F32)?;
            let b = self.val(self.arg(i, 2)?, Ty::F32)?;
            let f = if dt == Ty::F16x2 { "f2h" } else { "f2bf" };
            let e = format!("(((uint32_t){f}({a}, {rm}) << 16) | (uint32_t){f}({b}, {rm}))");
            return self.set(&d, dt, &e);
        }
        let a = self.val(self.arg(i, 1)?, st)?;
        let dct = ctype(dt);
        let e: String = if dt == Ty::Tf32 {
            format!("f2tf32({a})")
        } else if matches!(dt, Ty::F16 | Ty::Bf16) {
            let rm = fround(&i.src.mods).unwrap_or(0);
            let f = if dt == Ty::F16 { "f2h" } else { "f2bf" };
            let r = match st {
                Ty::F32 => format!("{f}({a}, {rm})"),
                Ty::F64 => format!("{}({a}, {rm})", if dt == Ty::F16 { "d2h" } else { "d2bf" }),
                Ty::F16 | Ty::Bf16 => {
                    if st == dt {
                        match iround(&i.src.mods) {
                            // To an integral value in the same format (numba's bf16 trunc).
                            Some(ir) => format!("hround_int({a}, {ir}, {})", dt == Ty::Bf16),
                            None => a.clone(),
                        }
                    } else {
                        let g = if st == Ty::F16 { "h2f" } else { "bf2f" };
                        format!("{f}({g}({a}), {rm})")
                    }
                }
                _ => format!("i2h({a}, {rm}, {})", dt == Ty::Bf16),
            };
            if relu || sat {
                return Err(self.unsupported("cvt to a half type with .relu/.sat"));
            }
            r
        } else if dt.float() {
            // To f32/f64. NaN rules as measured on the H200 (runtime/ptx_rt.h, canon).
            let v = if matches!(st, Ty::F32 | Ty::F64 | Ty::F16 | Ty::Bf16) {
                let from = match st {
                    Ty::F16 => format!("h2f({a})"),
                    Ty::Bf16 => format!("bf2f({a})"),
                    _ => a.clone(),
                };
                let src_f32 = st != Ty::F64;
                match (src_f32, dt, iround(&i.src.mods)) {
                    (_, _, Some(ir)) => {
                        if (st == Ty::F64) != (dt == Ty::F64) || matches!(st, Ty::F16 | Ty::Bf16) {
                            return Err(self.unsupported("cvt with integer rounding between float formats"));
                        }
                        if dt == Ty::F32 {
                            format!("canon(round_int(fz({from}, {z}), {ir}))")
                        } else {
                            format!("round_int(fz({from}, {z}), {ir})")
                        }
                    }
                    (false, Ty::F32, None) => {
                        let rm = fround(&i.src.mods).unwrap_or(0);
                        format!("d2f({from}, {rm}, {z})")
                    }
                    (true, Ty::F64, None) => {
                        // A NaN keeps its payload; with .ftz it becomes the canonical f32 NaN, widened.
                        if z {
                            format!("(double)canon(fz({from}, true))")
                        } else {
                            format!("(double){from}")
                        }
                    }
                    (true, Ty::F32, None) => {
                        if st == Ty::Bf16 {
                            format!("fz({from}, {z})")
                        } else {
                            format!("canon(fz({from}, {z}))")
                        }
                    }
                    _ => format!("fz({from}, {z})"),
                }
            } else {
                let rm = fround(&i.src.mods).unwrap_or(0);
                format!("i2f<{dct}>({a}, {rm})")
            };
            let v = if dt == Ty::F32 && z { format!("ftz({v})") } else { v };
            if sat {
                format!("canon(sat({v}))")
            } else {
                v
            }
        } else if dt == Ty::Pred || st == Ty::Pred {
            return Err(self.unsupported("cvt of a predicate"));
        } else if st.float() || matches!(st, Ty::F16 | Ty::Bf16) {
            let ir = iround(&i.src.mods).unwrap_or(1);
            let from = match st {
                Ty::F16 => format!("h2f({a})"),
                Ty::Bf16 => format!("bf2f({a})"),
                _ => a.clone(),
            };
            format!("f2i<{dct}>({from}, {ir}, {z})")
        } else {
            // Integer to integer: sign- or zero-extension by the source type, truncation
            // to the destination; .sat clamps.
            if sat {
                format!("isat<{dct}>({a})")
            } else {
                format!("({dct}){a}")
            }
        };
        self.set(&d, dt, &e)
    }

    fn cvta(&mut self, i: &Instr) -> Result<String, Error> {
        let t = self.ty(i)?;
        let to = i.src.has(".to");
        let shared = i.src.has(".shared") || i.src.has(".shared::cta") || i.src.has(".shared::cluster");
        let a = self.val(self.arg(i, 1)?, Ty::U64)?;
        let e = if shared {
            if to {
                format!("({a} - (uint64_t)(uintptr_t)T.smem)")
            } else {
                format!("sh(T, {a})")
            }
        } else if i.src.has(".global") || i.src.has(".local") || i.src.has(".const") || i.src.has(".param") {
            a
        } else {
            return Err(self.unsupported("cvta of this state space"));
        };
        let d = self.arg(i, 0)?;
        self.set(d, t, &format!("({})({e})", ctype(t)))
    }

    fn atom(&mut self, i: &Instr) -> Result<String, Error> {
        let red = i.src.op == "red";
        let t = self.ty(i)?;
        let space = Space::of_access(&i.src.mods);
        let shared = space == Some(Space::Shared);
        if i.src.vec_width() > 1 {
            return Err(self.unsupported("vector atomics"));
        }
        let opc = [
            (".add", "A_ADD"),
            (".min", "A_MIN"),
            (".max", "A_MAX"),
            (".and", "A_AND"),
            (".or", "A_OR"),
            (".xor", "A_XOR"),
            (".exch", "A_EXCH"),
            (".inc", "A_INC"),
            (".dec", "A_DEC"),
            (".cas", "A_CAS"),
        ]
        .iter()
        .find(|(m, _)| i.src.has(m))
        .map(|(_, c)| *c)
        .ok_or_else(|| self.unsupported("atom without an operation"))?;
        let (aidx, bidx) = if red { (0, 1) } else { (1, 2) };
        let a = self.addr(self.arg(i, aidx)?, space)?;
        if is_half(t) {
            if opc != "A_ADD" {
                return Err(self.unsupported("half atomics other than add"));
            }
            let (bt, f) = match t {
                Ty::F16 => ("uint16_t", "hadd_noftz"),
                Ty::F16x2 => ("uint32_t", "hadd2_noftz"),
                Ty::Bf16 => ("uint16_t", "bfadd_noftz"),
                _ => ("uint32_t", "bfadd2_noftz"),
            };
            let b = self.val(self.arg(i, bidx)?, t)?;
            let e = format!("atom_bits<{bt}>({shared}, {a}, &{f}, {b})");
            return if red { Ok(format!("(void){e};")) } else { self.set(&self.arg(i, 0)?.clone(), t, &e) };
        }
        let b = self.val(self.arg(i, bidx)?, t)?;
        let c = if opc == "A_CAS" { self.val(self.arg(i, bidx + 1)?, t)? } else { format!("({})0", ctype(t)) };
        let e = format!("atom<{}>({opc}, {shared}, {a}, {b}, {c})", ctype(t));
        if red {
            Ok(format!("(void){e};"))
        } else {
            let d = self.arg(i, 0)?.clone();
            self.set(&d, t, &e)
        }
    }

    fn barrier(&mut self, i: &Instr) -> Result<String, Error> {
        let op = i.src.op.as_str();
        let site = self.site();
        let line = self.line();
        let file = super::c_str(&self.opts.name);
        // bar.warp.sync
        if i.src.has(".warp") {
            let mask = self.val(self.arg(i, 0)?, Ty::B32)?;
            return Ok(format!("{{ int32_t pp; warp(SIMTWIN_WARP_SYNC, {mask}, 0, 0, 32, &pp, {site}); }}"));
        }
        if i.src.has(".arrive") || (op == "barrier" && i.src.has(".arrive")) {
            return Err(self.unsupported("bar.arrive (producer/consumer barriers) is not implemented"));
        }
        let red = i.src.has(".red");
        let (id_idx, first) = if red { (1, 1) } else { (0, 0) };
        let _ = first;
        let id = self.val(self.arg(i, id_idx)?, Ty::U32)?;
        // Thread count operand (bar.sync a, b / bar.red.op d, a, b, p).
        let count = if red {
            if i.args.len() == 4 {
                Some(self.val(self.arg(i, 2)?, Ty::U32)?)
            } else {
                None
            }
        } else if i.args.len() >= 2 {
            Some(self.val(self.arg(i, 1)?, Ty::U32)?)
        } else {
            None
        };
        let check = match count {
            Some(c) => format!(
                "if (({id}) != 0u || ({c}) != T.ctx->block_dim.x * T.ctx->block_dim.y * T.ctx->block_dim.z) ptx::unsupported(\"named barriers and barriers over part of the block\", {file}, {line}); "
            ),
            None => format!("if (({id}) != 0u) ptx::unsupported(\"named barriers (id other than 0)\", {file}, {line}); "),
        };
        if red {
            let p = self.val(i.args.last().ok_or_else(|| self.unsupported("bar.red needs a predicate"))?, Ty::Pred)?;
            let (bop, t) = if i.src.has(".popc") {
                ("SIMTWIN_BAR_COUNT", Ty::U32)
            } else if i.src.has(".and") {
                ("SIMTWIN_BAR_AND", Ty::Pred)
            } else {
                ("SIMTWIN_BAR_OR", Ty::Pred)
            };
            let e = format!("::__simtwin::rt->barrier({bop}, {p} ? 1 : 0, {site})");
            let d = self.arg(i, 0)?.clone();
            let e = if t == Ty::Pred { format!("({e} != 0)") } else { format!("(uint32_t)({e})") };
            let set = self.set(&d, t, &e)?;
            return Ok(format!("{check}{set}"));
        }
        Ok(format!("{check}::__simtwin::rt->barrier(SIMTWIN_BAR_SYNC, 0, {site});"))
    }

    fn shfl(&mut self, i: &Instr) -> Result<String, Error> {
        let mode = if i.src.has(".up") {
            "SH_UP"
        } else if i.src.has(".down") {
            "SH_DOWN"
        } else if i.src.has(".bfly") {
            "SH_BFLY"
        } else if i.src.has(".idx") {
            "SH_IDX"
        } else {
            return Err(self.unsupported("shfl without a mode"));
        };
        let site = self.site();
        let b = self.val(self.arg(i, 2)?, Ty::U32)?;
        let c = self.val(self.arg(i, 3)?, Ty::U32)?;
        let mask = if i.src.has(".sync") {
            self.val(self.arg(i, 4)?, Ty::B32)?
        } else {
            // The deprecated form: the lanes active here.
            format!("::__simtwin::rt->activemask({site})")
        };
        if let Some((ds, vs)) = crate::waves::members(i) {
            // A fused shuffle (`waves`): its shuffles one after another, each a rendezvous
            // of its own (no member reads another's result).
            let mut s = String::new();
            for (d, v) in ds.iter().zip(vs) {
                let a = self.val(v, Ty::B32)?;
                let t = self.fresh();
                let _ = write!(s, "uint32_t {t} = shfl(T, {mode}, {a}, {b}, {c}, {mask}, nullptr, {site}); ");
                s.push_str(&self.set(d, Ty::B32, &t)?);
            }
            return Ok(s);
        }
        let a = self.val(self.arg(i, 1)?, Ty::B32)?;
        let d = self.arg(i, 0)?.clone();
        let t = self.fresh();
        match d {
            Op::Pair(dv, p) => {
                let mut s = format!("bool {t}p; uint32_t {t} = shfl(T, {mode}, {a}, {b}, {c}, {mask}, &{t}p, {site}); ");
                s.push_str(&self.set(&dv, Ty::B32, &t)?);
                s.push_str(&self.set(&p, Ty::Pred, &format!("{t}p"))?);
                Ok(s)
            }
            dv => {
                let mut s = format!("uint32_t {t} = shfl(T, {mode}, {a}, {b}, {c}, {mask}, nullptr, {site}); ");
                s.push_str(&self.set(&dv, Ty::B32, &t)?);
                Ok(s)
            }
        }
    }

    fn vote(&mut self, i: &Instr) -> Result<String, Error> {
        let site = self.site();
        let sync = i.src.has(".sync");
        let p = self.val(self.arg(i, 1)?, Ty::Pred)?;
        let mask = if sync { self.val(self.arg(i, 2)?, Ty::B32)? } else { format!("::__simtwin::rt->activemask({site})") };
        let d = self.arg(i, 0)?.clone();
        let t = self.fresh();
        let call = |op: &str| format!("{{ int32_t pp; {t} = (uint32_t)warp({op}, {t}m, {p} ? 1 : 0, 0, 32, &pp, {site}); }}");
        let pre = format!("uint32_t {t}m = {mask}; uint32_t {t}; ");
        if i.src.has(".ballot") {
            let s = format!("{pre}{} ", call("SIMTWIN_WARP_BALLOT"));
            Ok(s + &self.set(&d, Ty::B32, &t)?)
        } else if i.src.has(".any") {
            let s = format!("{pre}{} ", call("SIMTWIN_WARP_ANY"));
            Ok(s + &self.set(&d, Ty::Pred, &format!("({t} != 0)"))?)
        } else if i.src.has(".all") {
            let s = format!("{pre}{} ", call("SIMTWIN_WARP_ALL"));
            Ok(s + &self.set(&d, Ty::Pred, &format!("({t} != 0)"))?)
        } else if i.src.has(".uni") {
            let s = format!("{pre}{} ", call("SIMTWIN_WARP_BALLOT"));
            Ok(s + &self.set(&d, Ty::Pred, &format!("(({t} & {t}m) == 0 || ({t} & {t}m) == {t}m)"))?)
        } else {
            Err(self.unsupported("vote without a mode"))
        }
    }

    fn match_(&mut self, i: &Instr) -> Result<String, Error> {
        let site = self.site();
        let t = self.ty(i)?;
        let a = self.val(self.arg(i, 1)?, t)?;
        let mask = self.val(self.arg(i, 2)?, Ty::B32)?;
        let all = i.src.has(".all");
        let op = if all { "SIMTWIN_WARP_MATCH_ALL" } else { "SIMTWIN_WARP_MATCH_ANY" };
        let tmp = self.fresh();
        let mut s = format!(
            "int32_t {tmp}p = 0; uint32_t {tmp} = (uint32_t)warp({op}, {mask}, (uint64_t){a}, {}, 32, &{tmp}p, {site}); ",
            t.size()
        );
        match self.arg(i, 0)?.clone() {
            Op::Pair(d, p) => {
                s.push_str(&self.set(&d, Ty::B32, &tmp)?);
                s.push_str(&self.set(&p, Ty::Pred, &format!("({tmp}p != 0)"))?);
            }
            d => s.push_str(&self.set(&d, Ty::B32, &tmp)?),
        }
        Ok(s)
    }

    fn redux(&mut self, i: &Instr) -> Result<String, Error> {
        let site = self.site();
        let t = self.ty(i)?;
        if t.float() {
            return Err(self.unsupported("redux.sync on floats"));
        }
        let op = if i.src.has(".add") {
            "SIMTWIN_WARP_REDUCE_ADD"
        } else if i.src.has(".min") {
            "SIMTWIN_WARP_REDUCE_MIN"
        } else if i.src.has(".max") {
            "SIMTWIN_WARP_REDUCE_MAX"
        } else if i.src.has(".and") {
            "SIMTWIN_WARP_REDUCE_AND"
        } else if i.src.has(".or") {
            "SIMTWIN_WARP_REDUCE_OR"
        } else if i.src.has(".xor") {
            "SIMTWIN_WARP_REDUCE_XOR"
        } else {
            return Err(self.unsupported("redux without an operation"));
        };
        let a = self.val(self.arg(i, 1)?, t)?;
        let mask = self.val(self.arg(i, 2)?, Ty::B32)?;
        let e = format!("({})warp({op}, {mask}, (uint64_t)(uint32_t){a}, {}, 32, nullptr, {site})", ctype(t), t.signed() as u32);
        let d = self.arg(i, 0)?.clone();
        self.set(&d, t, &e)
    }

    fn call(&mut self, i: &Instr) -> Result<String, Error> {
        // call{.uni} (rets), f, (params) [, proto];  also without rets/params.
        let mut k = 0;
        let rets: Vec<Op> = match i.args.first() {
            Some(Op::List(v)) => {
                k = 1;
                v.clone()
            }
            _ => Vec::new(),
        };
        let target = self.arg(i, k)?.clone();
        let params: Vec<Op> = match i.args.get(k + 1) {
            Some(Op::List(v)) => v.clone(),
            _ => Vec::new(),
        };
        let (fname, callee) = match &target {
            Op::Func(g) => {
                let d = &self.m.funcs[*g].decl;
                if d.body.is_none() {
                    return self.provided_call(&d.name.clone(), &rets, &params);
                }
                (format!("F{g}"), Some(*g))
            }
            Op::Reg(_) => {
                let v = self.val(&target, Ty::U64)?;
                (format!("((void (*)(Thread &, uint8_t *const *))(uintptr_t){v})"), None)
            }
            _ => return Err(self.unsupported("call target")),
        };
        let tmp = self.fresh();
        let mut s = String::from("{ ");
        let mut ptrs = Vec::new();
        let mut after = String::new();
        let callee_params: Option<(Vec<crate::ast::Param>, Vec<crate::ast::Param>)> =
            callee.map(|g| (self.m.funcs[g].decl.rets.clone(), self.m.funcs[g].decl.params.clone()));
        // A call whose prototype differs from the definition it was linked to (numba
        // declares `consume` returning .b64; the .cu defines it void): the device passes
        // what the definition takes, so the callee gets its own count of return and
        // parameter slots (missing ones zeroed, extra ones dropped; a return value the
        // callee never writes reads 0).
        let (want_rets, want_params) = match &callee_params {
            Some((r, p)) => (r.len(), p.len()),
            None => (rets.len(), params.len()),
        };
        let spare = |s: &mut String, what: &str, n: usize| -> String {
            let _ = write!(s, "alignas(16) uint8_t {tmp}{what}{n}[16] = {{}}; ");
            format!("{tmp}{what}{n}")
        };
        for (n, r) in rets.iter().enumerate() {
            match r {
                Op::Var(_, 0) if n >= want_rets => {}
                Op::Var(v, 0) => ptrs.push(format!("(uint8_t *)(uintptr_t){}", self.var_host(*v)?)),
                Op::Reg(reg) => {
                    let ct = ctype(self.reg_ty(*reg));
                    let slot = spare(&mut s, "r", n);
                    if n < want_rets {
                        ptrs.push(slot);
                    }
                    let _ = write!(after, "r{reg} = load<{ct}>((uint64_t)(uintptr_t){tmp}r{n}); ");
                }
                _ => return Err(self.unsupported("call return operand")),
            }
        }
        for n in rets.len()..want_rets {
            let p = spare(&mut s, "xr", n);
            ptrs.push(p);
        }
        for (n, p) in params.iter().enumerate().take(want_params) {
            match p {
                Op::Var(v, 0) => ptrs.push(format!("(uint8_t *)(uintptr_t){}", self.var_host(*v)?)),
                other => {
                    // A register or immediate argument (register parameters).
                    let ty = match (&callee_params, other) {
                        (Some((_, ps)), _) if n < ps.len() => ps[n].ty,
                        (_, Op::Reg(r)) => self.reg_ty(*r),
                        _ => Ty::B32,
                    };
                    let v = self.val(other, ty)?;
                    let _ = write!(s, "alignas(16) uint8_t {tmp}p{n}[16]; store<{}>((uint64_t)(uintptr_t){tmp}p{n}, {v}); ", ctype(ty));
                    ptrs.push(format!("{tmp}p{n}"));
                }
            }
        }
        for n in params.len()..want_params {
            let p = spare(&mut s, "xp", n);
            ptrs.push(p);
        }
        if ptrs.is_empty() {
            ptrs.push("nullptr".into());
        }
        let _ = write!(s, "uint8_t *const {tmp}[] = {{{}}}; {fname}(T, {tmp}); {after}}}", ptrs.join(", "));
        Ok(s)
    }

    /// Calls of functions the device runtime provides (vprintf, malloc, free, __assertfail).
    fn provided_call(&mut self, name: &str, rets: &[Op], params: &[Op]) -> Result<String, Error> {
        let p = |e: &Self, k: usize| -> Result<String, Error> {
            match params.get(k) {
                Some(Op::Var(v, 0)) => e.var_host(*v),
                _ => Err(e.unsupported(format!("argument {k} of {name}"))),
            }
        };
        let r = |e: &Self| -> Result<Option<String>, Error> {
            match rets.first() {
                Some(Op::Var(v, 0)) => Ok(Some(e.var_host(*v)?)),
                None => Ok(None),
                _ => Err(e.unsupported(format!("return value of {name}"))),
            }
        };
        let line = self.line();
        let file = super::c_str(&self.opts.name);
        Ok(match name {
            "vprintf" => {
                let (fmt, args) = (p(self, 0)?, p(self, 1)?);
                let call = format!("vprintf_(load<uint64_t>({fmt}), load<uint64_t>({args}))");
                match r(self)? {
                    Some(ret) => format!("store<int32_t>({ret}, {call});"),
                    None => format!("(void){call};"),
                }
            }
            "malloc" => {
                let size = p(self, 0)?;
                let ret = r(self)?.ok_or_else(|| self.unsupported("malloc without a result"))?;
                format!("store<uint64_t>({ret}, (uint64_t)(uintptr_t)::malloc((size_t)load<uint64_t>({size})));")
            }
            "free" => {
                let ptr = p(self, 0)?;
                format!("::free((void *)(uintptr_t)load<uint64_t>({ptr}));")
            }
            "__assertfail" | "__assert_fail" => {
                let (msg, f, l) = (p(self, 0)?, p(self, 1)?, p(self, 2)?);
                format!("assert_fail(load<uint64_t>({msg}), load<uint64_t>({f}), load<uint32_t>({l}), {file}, {line});")
            }
            other => {
                return Err(self.unsupported(format!(
                    "call of {other}, which is declared but defined nowhere (not in this module, not provided by the runtime)"
                )))
            }
        })
    }

    fn cp_async(&mut self, i: &Instr) -> Result<String, Error> {
        // cp.async.ca/cg.shared.global [dst], [src], cp-size{, src-size}{, policy}: done at
        // once (the copy is complete before any wait, as a correct program cannot tell).
        if i.src.has(".async") && (i.src.has(".commit_group") || i.src.has(".wait_group") || i.src.has(".wait_all")) {
            return Ok(String::new());
        }
        if i.src.has(".async") && !i.src.has(".bulk") && !i.src.has(".mbarrier") {
            let dst = self.addr(self.arg(i, 0)?, Some(Space::Shared))?;
            let src = self.addr(self.arg(i, 1)?, Some(Space::Global))?;
            let size = self.val(self.arg(i, 2)?, Ty::U32)?;
            let src_size = match i.args.get(3) {
                Some(op @ (Op::Reg(_) | Op::Int(_))) => self.val(op, Ty::U32)?,
                _ => size.clone(),
            };
            return Ok(format!(
                "{{ uint32_t n = {size}, k = {src_size}; if (k > n) k = n; memcpy((void *)(uintptr_t){dst}, (const void *)(uintptr_t){src}, k); memset((void *)(uintptr_t)({dst} + k), 0, n - k); }}"
            ));
        }
        Err(self.unsupported("cp.async.bulk / mbarrier copies are not implemented"))
    }

    /// Unused helper kept for frame parameter spaces (call-site .param arrays).
    #[allow(dead_code)]
    fn frame_is_param(&self, v: VarRef) -> bool {
        matches!(v, VarRef::Frame(i) if self.f.frame[i].space == Space::Param)
    }
}
