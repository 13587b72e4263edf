//! A kernel's vector form (`simd`): `V<fi>(T, P0, TI)` runs the 16 threads of a row from
//! `TI` as one call and answers false where they must run one at a time instead (ptx_rt.h
//! `simd`). What is the same for every lane runs as the thread's own statement, once.

use super::func::{ctype, push_stmt, FnEmitter};
use crate::ast::{Space, Ty};
use crate::resolve::{AddrBase, Instr, Op};
use crate::simd::{Class, Plan};
use crate::Error;
use std::fmt::Write;

const S: &str = "ptx::simd::";

impl FnEmitter<'_> {
    /// The vector form's function, into `self.out` (`template`: the kernel's own, so that
    /// the statements it shares with `K<fi>` see the runner's checks as `A`).
    pub fn body_simd(&mut self, plan: &Plan, template: &str) -> Result<(), Error> {
        self.loop_tid = true;
        self.site_prefix = "SV";
        let f = self.f;
        let body = self.walk_body(|e, n, i, body| {
            if plan.uniform(i) {
                let stmt = e.instr(i)?;
                push_stmt(body, i, &stmt);
            } else if matches!(i.src.op.as_str(), "bra" | "ret" | "exit") {
                // A jump makes its own guard (one that differs between lanes included).
                let stmt = e.simd_instr(i, n, plan)?;
                let _ = writeln!(body, "  {{ {stmt} }} // {}", i.src.line);
            } else {
                // Any other guard is the same for every lane (`simd::plan`).
                let stmt = e.simd_instr(i, n, plan)?;
                push_stmt(body, i, &stmt);
            }
            Ok(())
        })?;
        let nl = plan.load_site.len().max(1);
        let mut pro = format!(
            "{template}static inline __attribute__((always_inline)) bool V{}(Thread &T, const uint8_t *P0, const simtwin_dim3_t &TI) {{\n",
            self.fi
        );
        for (r, reg) in f.regs.iter().enumerate() {
            let _ = match (plan.class[r], reg.ty) {
                (Class::Uniform, t) => writeln!(pro, "  {} r{r} = 0;", ctype(t)),
                (Class::Vector, Ty::Pred) => writeln!(pro, "  {S}vi r{r} = {{}};"),
                (Class::Vector, _) => writeln!(pro, "  {S}vu r{r} = {{}};"),
                (Class::Split, _) => writeln!(pro, "  uint64_t r{r} = 0; {S}vi o{r} = {{}};"),
                (Class::Wide, _) => writeln!(pro, "  {S}vw r{r} = {{}};"),
            };
        }
        let _ = writeln!(pro, "  uint64_t LL[{nl}], LH[{nl}];\n  for (int k = 0; k < {nl}; ++k) LL[k] = ~0ull, LH[k] = 0;");
        let _ = writeln!(pro, "  {S}Undo<{}, {}> UNDO;", plan.undo_entries, plan.undo_bytes);
        pro.push_str(&self.decls);
        pro.push_str("  (void)T;\n");
        let mut all = std::mem::take(&mut self.site_decls);
        all.push_str(&pro);
        all.push_str(&body);
        let _ = writeln!(all, "FIN:\n  return UNDO.commit(LL, LH, {nl});\nBAIL:\n  UNDO.undo();\n  return false;\n}}");
        self.out = all;
        Ok(())
    }

    /// Instruction `i`'s own statement, once, into a scalar standing in for its result
    /// register `d`, then spread into `d`'s form (`d` differs between lanes through
    /// another write; these operands do not).
    fn spread(&mut self, i: &Instr, d: usize, plan: &Plan) -> Result<String, Error> {
        let stmt = self.instr(i)?;
        let ct = ctype(self.f.regs[d].ty);
        let spread = match (plan.class[d], self.f.regs[d].ty) {
            (Class::Vector, Ty::Pred) => format!("r{d} = {S}M(t_);"),
            (Class::Vector, _) => format!("r{d} = {S}V(t_);"),
            (Class::Split, _) => format!("r{d} = (uint64_t)t_; o{d} = {{}};"),
            _ => format!("r{d} = {S}X((uint64_t)t_);"),
        };
        Ok(format!("{ct} t_ = 0; {{ auto &r{d} = t_; {stmt} }} {spread}"))
    }

    /// A 32-bit operand as a vector (a uniform one broadcast).
    fn vop(&mut self, o: &Op, t: Ty) -> Result<String, Error> {
        Ok(match o {
            Op::Reg(r) => format!("{S}V(r{r})"),
            Op::Int(c) => format!("{S}V((uint32_t){}u)", *c as u32),
            Op::Special(s) if s == "%tid.x" => format!("({S}V((uint32_t)TI.x) + ({S}vu){S}IOTA)"),
            _ => format!("{S}V((uint32_t)({}))", self.val(o, t)?),
        })
    }

    /// A 64-bit operand as 16 64-bit lanes.
    fn wop(&mut self, o: &Op, plan: &Plan) -> Result<String, Error> {
        Ok(match (o, plan.of(o)) {
            (Op::Reg(r), Class::Wide) => format!("r{r}"),
            (Op::Reg(r), Class::Split) => format!("{S}split(r{r}, o{r})"),
            _ => format!("{S}X((uint64_t)({}))", self.val(o, Ty::U64)?),
        })
    }

    /// A predicate operand as a mask.
    fn mop(&mut self, o: &Op) -> Result<String, Error> {
        Ok(match o {
            Op::Reg(r) => format!("{S}M(r{r})"),
            Op::Not(a) => format!("~{}", self.mop(a)?),
            _ => format!("{S}M((bool)({}))", self.val(o, Ty::Pred)?),
        })
    }

    /// A guard's mask (`@p` / `@!p`).
    fn guard_mask(i: &Instr) -> Option<String> {
        i.guard.map(|(neg, p)| format!("{}{S}M(r{p})", if neg { "~" } else { "" }))
    }

    /// A statement for an instruction on lanes that differ (or a branch, exit, global load
    /// or store, which the vector form always makes itself).
    fn simd_instr(&mut self, i: &Instr, n: usize, plan: &Plan) -> Result<String, Error> {
        let op = i.src.op.as_str();
        let arg = |k: usize| i.args.get(k).cloned().ok_or_else(|| Error::parse(i.src.line, "missing operand"));
        // Branches and exits: a uniform guard as the thread's code; a varying one taken by
        // every lane, by none, or the chunk bails.
        let jump = match op {
            "bra" => match i.args.first() {
                Some(Op::Label(l)) => Some(format!("goto B{l};")),
                _ => return Err(self.unsupported("an indirect branch in the vector form")),
            },
            "ret" | "exit" => Some("goto FIN;".to_string()),
            _ => None,
        };
        if let Some(jump) = jump {
            return Ok(match i.guard {
                None => jump,
                Some((neg, p)) if plan.class[p] == Class::Uniform => format!("if ({}r{p}) {jump}", if neg { "!" } else { "" }),
                Some(_) => {
                    let m = Self::guard_mask(i).unwrap_or_default();
                    format!("const int w_ = {S}all_or_none({m}); if (w_ > 0) {jump} if (w_ < 0) goto BAIL;")
                }
            });
        }
        let t = i.src.last_ty().unwrap_or(Ty::B32);
        if op == "ld" && i.src.has(".global") {
            let k = plan.load_site.get(&n).copied().ok_or_else(|| self.unsupported("an untracked load in the vector form"))?;
            let a = arg(1)?;
            let parts = match arg(0)? {
                Op::Vector(v) => v,
                o => vec![o],
            };
            if plan.of(&a) == Class::Uniform {
                // Every lane loads the same address: once, its range tracked.
                let addr = self.addr(&a, Some(Space::Global))?;
                let seen = format!("{S}seen({addr}, {}, LL[{k}], LH[{k}]);", t.size() * parts.len() as u32);
                let load = match parts.as_slice() {
                    _ if parts.iter().all(|p| plan.of(p) == Class::Uniform) => self.instr(i)?,
                    [Op::Reg(d)] => self.spread(i, *d, plan)?,
                    _ => return Err(self.unsupported("a vector load into registers that differ between lanes")),
                };
                return Ok(format!("{load} {seen}"));
            }
            let Op::Addr(AddrBase::Reg(r), off) = a else { return Err(self.unsupported("a load address in the vector form")) };
            let mut s = format!(
                "{S}vu lv_[{}]; if (!{S}ld<{}, {}>(r{r} + (uint64_t){off}ll, o{r}, lv_, LL[{k}], LH[{k}])) goto BAIL;",
                parts.len(),
                ctype(t),
                parts.len()
            );
            for (j, p) in parts.iter().enumerate() {
                if let Op::Reg(d) = p {
                    // A 16-bit register holds its value zero-extended.
                    let mask = if self.f.regs[*d].ty.size() == 2 { " & 0xffffu" } else { "" };
                    let _ = write!(s, " r{d} = lv_[{j}]{mask};");
                }
            }
            return Ok(s);
        }
        if op == "st" {
            let k = plan.store_site.get(&n).copied().ok_or_else(|| self.unsupported("an untracked store in the vector form"))?;
            let Op::Addr(AddrBase::Reg(r), off) = arg(0)? else { return Err(self.unsupported("a store address in the vector form")) };
            let parts = match arg(1)? {
                Op::Vector(v) => v,
                o => vec![o],
            };
            if parts.contains(&Op::Sink) {
                return Err(self.unsupported("a partial vector store in the vector form"));
            }
            let mut vals = Vec::new();
            for p in &parts {
                // A 64-bit register stored narrower: its low bits.
                vals.push(match plan.of(p) {
                    Class::Wide | Class::Split => format!("{S}trunc({})", self.wop(p, plan)?),
                    _ => self.vop(p, t)?,
                });
            }
            return Ok(format!(
                "const {S}vu sv_[{}] = {{{}}}; if (!{S}st<{}, {}>(UNDO, {k}, r{r} + (uint64_t){off}ll, o{r}, sv_)) goto BAIL;",
                parts.len(),
                vals.join(", "),
                ctype(t),
                parts.len()
            ));
        }
        if let (true, Op::Vector(parts)) = (op == "mov", arg(0)?) {
            // `mov.b32 {lo, hi}, r`: a lane's halves, zero-extended.
            let x = self.vop(&arg(1)?, Ty::B32)?;
            let mut s = format!("const {S}vu x_ = {x};");
            for (p, half) in parts.iter().zip(["x_ & 0xffffu", "x_ >> 16"]) {
                if let Op::Reg(r) = p {
                    let _ = write!(s, " r{r} = {half};");
                }
            }
            return Ok(s);
        }
        let Op::Reg(d) = arg(0)? else { return Err(self.unsupported("an instruction without a register result in the vector form")) };
        // Operands the same for every lane, a result register that is not (another write of
        // it differs): the thread's own statement once, into a scalar, then spread.
        if i.args[1..].iter().all(|o| plan.of(o) == Class::Uniform) {
            return self.spread(i, d, plan);
        }
        match plan.class[d] {
            Class::Split => return self.simd_split(i, d, plan),
            Class::Wide => return self.simd_wide(i, d, plan),
            _ => {}
        }
        let a = |e: &mut Self, k: usize| -> Result<String, Error> { e.vop(&arg(k)?, t) };
        let pred = t == Ty::Pred;
        let signed = t == Ty::S32;
        let e = match op {
            "mov" if pred => self.mop(&arg(1)?)?,
            "mov" => a(self, 1)?,
            "cvt" => {
                let tys = i.src.tys();
                let (to, from) = (tys.first().copied().unwrap_or(Ty::B32), tys.get(1).copied().unwrap_or(Ty::B32));
                match plan.of(&arg(1)?) {
                    Class::Split => {
                        let Op::Reg(s) = arg(1)? else { return Err(self.unsupported("cvt operand")) };
                        format!("{S}V((uint32_t)r{s}) + ({S}vu)o{s}")
                    }
                    Class::Wide => format!("{S}trunc({})", self.wop(&arg(1)?, plan)?),
                    // To 16 bits: the low half; from a signed 16: sign-extended.
                    _ if to.size() == 2 => format!("{} & 0xffffu", a(self, 1)?),
                    _ if from == Ty::S16 => format!("{S}sext16({})", a(self, 1)?),
                    _ => a(self, 1)?,
                }
            }
            "add" => format!("{} + {}", a(self, 1)?, a(self, 2)?),
            "sub" => format!("{} - {}", a(self, 1)?, a(self, 2)?),
            "mul" if i.src.has(".wide") && t == Ty::S16 => format!("{S}sext16({}) * {S}sext16({})", a(self, 1)?, a(self, 2)?),
            "mul" => format!("{} * {}", a(self, 1)?, a(self, 2)?),
            "mad" => format!("{} * {} + {}", a(self, 1)?, a(self, 2)?, a(self, 3)?),
            "and" | "or" | "xor" if pred => {
                let sym = match op {
                    "and" => "&",
                    "or" => "|",
                    _ => "^",
                };
                format!("{} {sym} {}", self.mop(&arg(1)?)?, self.mop(&arg(2)?)?)
            }
            "and" => format!("{} & {}", a(self, 1)?, a(self, 2)?),
            "or" => format!("{} | {}", a(self, 1)?, a(self, 2)?),
            "xor" => format!("{} ^ {}", a(self, 1)?, a(self, 2)?),
            "not" if pred => format!("~{}", self.mop(&arg(1)?)?),
            "not" => format!("~{}", a(self, 1)?),
            "shl" => format!("{S}shl({}, {})", a(self, 1)?, a(self, 2)?),
            "shr" => format!("{S}{}({}, {})", if signed { "shr_s" } else { "shr_u" }, a(self, 1)?, a(self, 2)?),
            "abs" => format!("{S}abs_s({})", a(self, 1)?),
            "neg" => format!("{S}V(0u) - {}", a(self, 1)?),
            "min" | "max" => format!("{S}{op}_{}({}, {})", if signed { "s" } else { "u" }, a(self, 1)?, a(self, 2)?),
            "selp" => format!("({} != 0) ? {} : {}", self.mop(&arg(3)?)?, a(self, 1)?, a(self, 2)?),
            "setp" if matches!(t, Ty::U64 | Ty::S64 | Ty::B64) => {
                // Compared half by half; the 64-bit masks narrowed to one per lane.
                let (x, y) = (self.wop(&arg(1)?, plan)?, self.wop(&arg(2)?, plan)?);
                let sym = compare(i).ok_or_else(|| self.unsupported("this comparison in the vector form"))?;
                let c = if t == Ty::S64 { format!("({S}v8i)") } else { String::new() };
                return Ok(format!(
                    "const {S}vw x_ = {x}, y_ = {y}; r{d} = {S}narrow(({S}v8i)({c}x_.a {sym} {c}y_.a), ({S}v8i)({c}x_.b {sym} {c}y_.b));"
                ));
            }
            "setp" => {
                let (x, y) = (a(self, 1)?, a(self, 2)?);
                let (x, y) = if signed { (format!("({S}vi)({x})"), format!("({S}vi)({y})")) } else { (x, y) };
                let sym = compare(i).ok_or_else(|| self.unsupported("this comparison in the vector form"))?;
                format!("({S}vi)({x} {sym} {y})")
            }
            _ => return Err(self.unsupported(format!("{} in the vector form", i.src.text()))),
        };
        Ok(format!("r{d} = {e};"))
    }

    /// An instruction whose result is 16 64-bit lanes.
    fn simd_wide(&mut self, i: &Instr, d: usize, plan: &Plan) -> Result<String, Error> {
        let op = i.src.op.as_str();
        let arg = |k: usize| i.args.get(k).cloned().ok_or_else(|| Error::parse(i.src.line, "missing operand"));
        let t = i.src.last_ty().unwrap_or(Ty::B64);
        let w = |e: &mut Self, k: usize| -> Result<String, Error> { e.wop(&arg(k)?, plan) };
        let e = match op {
            "mov" => w(self, 1)?,
            "add" => format!("{} + {}", w(self, 1)?, w(self, 2)?),
            "sub" => format!("{} - {}", w(self, 1)?, w(self, 2)?),
            "and" => format!("{} & {}", w(self, 1)?, w(self, 2)?),
            "or" => format!("{} | {}", w(self, 1)?, w(self, 2)?),
            "xor" => format!("{} ^ {}", w(self, 1)?, w(self, 2)?),
            "not" => format!("~{}", w(self, 1)?),
            "neg" => format!("{S}X(0) - {}", w(self, 1)?),
            "selp" => format!("{S}wsel({}, {}, {})", self.mop(&arg(3)?)?, w(self, 1)?, w(self, 2)?),
            "shl" | "shr" => {
                let n = self.val(&arg(2)?, Ty::U32)?;
                let f = match (op, t) {
                    ("shl", _) => "wshl",
                    (_, Ty::S64) => "wshr_s",
                    _ => "wshr_u",
                };
                format!("{S}{f}({}, (uint32_t)({n}))", w(self, 1)?)
            }
            // mul.wide / mad.wide of 32-bit lanes: their 64-bit product.
            "mul" | "mad" if i.src.has(".wide") => {
                let ext = if t == Ty::S32 { "sext" } else { "zext" };
                let (x, y) = (self.vop(&arg(1)?, t)?, self.vop(&arg(2)?, t)?);
                let p = format!("{S}{ext}({x}) * {S}{ext}({y})");
                if op == "mad" {
                    format!("{p} + {}", w(self, 3)?)
                } else {
                    p
                }
            }
            "mul" => format!("{} * {}", w(self, 1)?, w(self, 2)?),
            "mad" => format!("{} * {} + {}", w(self, 1)?, w(self, 2)?, w(self, 3)?),
            "cvt" => {
                let ext = if i.src.tys().get(1) == Some(&Ty::S32) { "sext" } else { "zext" };
                format!("{S}{ext}({})", self.vop(&arg(1)?, Ty::U32)?)
            }
            // Forms that make a base plus offsets elsewhere, here joined into lanes.
            "cvta" => w(self, 1)?,
            _ => return Err(self.unsupported(format!("{} in the vector form", i.src.text()))),
        };
        Ok(format!("r{d} = {e};"))
    }

    /// An instruction whose result is a base plus per-lane offsets.
    fn simd_split(&mut self, i: &Instr, d: usize, plan: &Plan) -> Result<String, Error> {
        let op = i.src.op.as_str();
        let arg = |k: usize| i.args.get(k).cloned().ok_or_else(|| Error::parse(i.src.line, "missing operand"));
        let split = |o: &Op| match o {
            Op::Reg(r) if plan.class[*r] == Class::Split => Some(*r),
            _ => None,
        };
        let uni = |e: &mut Self, o: &Op| -> Result<String, Error> { Ok(format!("(uint64_t)({})", e.val(o, Ty::U64)?)) };
        // Every form reads its operands before it writes `d` (which may be one of them).
        let s = match op {
            "mov" | "cvta" => {
                let s = split(&arg(1)?).ok_or_else(|| self.unsupported("vector form operand"))?;
                format!("r{d} = r{s}; o{d} = o{s};")
            }
            "add" | "sub" => {
                let (x, y) = (arg(1)?, arg(2)?);
                match (split(&x), split(&y)) {
                    (Some(s), None) => {
                        let u = uni(self, &y)?;
                        format!("r{d} = r{s} {} {u}; o{d} = o{s};", if op == "add" { "+" } else { "-" })
                    }
                    (None, Some(s)) if op == "add" => format!("r{d} = {} + r{s}; o{d} = o{s};", uni(self, &x)?),
                    _ => return Err(self.unsupported("vector form operands")),
                }
            }
            "shl" => {
                let s = split(&arg(1)?).ok_or_else(|| self.unsupported("vector form operand"))?;
                let Op::Int(c) = arg(2)? else { return Err(self.unsupported("shl.b64 by a register in the vector form")) };
                format!("r{d} = r{s} << {c}; if (!{S}shl_off(o{s}, {c}, o{d})) goto BAIL;")
            }
            "mad" => {
                let s = split(&arg(3)?).ok_or_else(|| self.unsupported("vector form operand"))?;
                format!("r{d} = {} * {} + r{s}; o{d} = o{s};", uni(self, &arg(1)?)?, uni(self, &arg(2)?)?)
            }
            "cvt" => {
                let from = i.src.tys().get(1).copied().unwrap_or(Ty::U32);
                let v = self.vop(&arg(1)?, Ty::U32)?;
                if from == Ty::S32 {
                    format!("r{d} = 0; o{d} = ({S}vi)({v});")
                } else {
                    format!("r{d} = 0; if (!{S}zext_off({v}, o{d})) goto BAIL;")
                }
            }
            "mul" => {
                // mul.wide of lanes by a factor the same for every lane.
                let (x, y) = (arg(1)?, arg(2)?);
                let (v, u) = if plan.of(&x) == Class::Uniform { (y, x) } else { (x, y) };
                let v = self.vop(&v, Ty::U32)?;
                let (f, ct) = if i.src.last_ty() == Some(Ty::S32) { ("wide_s", "int32_t") } else { ("wide_u", "uint32_t") };
                let u = self.val(&u, i.src.last_ty().unwrap_or(Ty::U32))?;
                format!("r{d} = 0; if (!{S}{f}({v}, ({ct})({u}), o{d})) goto BAIL;")
            }
            _ => return Err(self.unsupported(format!("{} in the vector form", i.src.text()))),
        };
        Ok(s)
    }
}

/// A comparison's C++ operator (the unsigned and signed forms alike: the operands' types
/// decide).
fn compare(i: &Instr) -> Option<&'static str> {
    let cmp = ["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"].into_iter().find(|c| i.src.has(&format!(".{c}")))?;
    Some(match cmp {
        "eq" => "==",
        "ne" => "!=",
        "lt" | "lo" => "<",
        "le" | "ls" => "<=",
        "gt" | "hi" => ">",
        _ => ">=",
    })
}
