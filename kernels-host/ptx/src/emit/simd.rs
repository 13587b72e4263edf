//! A kernel's vector form (`simd`): `V<fi>(T, P0, TI)` runs the 16 threads of a row from
//! `TI` as one call and answers false where they must run one at a time instead (ptx_rt.h
//! `simd`). What is the same for every lane runs as the thread's own statement, once.

use super::func::{ctype, push_stmt, sync_kind, FnEmitter, SYNC_SHFL_IDX, SYNC_SHFL_UP};
use crate::ast::{Space, Ty};
use crate::resolve::Node;
use crate::resolve::{AddrBase, Instr, Op};
use crate::simd::{Class, Plan, Region, Stop};
use crate::Error;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write;

const S: &str = "ptx::simd::";
/// What a vector form does where it cannot go on as the threads one at a time would: undo
/// its stores (`BAIL:`), counted by line under `SIMTWIN_SIMD_STATS`.
const BAIL: &str = "{ PTX_BAILED(); goto BAIL; }";

impl FnEmitter<'_> {
    /// The vector form's function, into `self.out` (`template`: the kernel's own, so that
    /// the statements it shares with `K<fi>` see the runner's checks as `A`).
    pub fn body_simd(&mut self, plan: &Plan, template: &str) -> Result<(), Error> {
        self.loop_tid = true;
        self.site_prefix = "SV".into();
        let f = self.f;
        let body = self.walk_body(|e, n, i, body| e.simd_stmt(n, i, plan, "goto FIN;", body))?;
        let nl = plan.load_ranges();
        let mut pro = format!(
            "{template}static inline __attribute__((always_inline)) bool V{}(Thread &T, const uint8_t *P0, const simtwin_dim3_t &TI) {{\n",
            self.fi
        );
        pro.push_str(&register_decls(plan, f));
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

    /// Instruction `i`'s (node `n`) statement in a vector form, into `body`: what is the
    /// same for every lane as the thread's own, the rest on vectors; `exit`: what an exit
    /// of every lane does.
    fn simd_stmt(&mut self, n: usize, i: &Instr, plan: &Plan, exit: &str, body: &mut String) -> Result<(), Error> {
        if plan.lane_loop.contains(&n) {
            // Its guard (one that differs between lanes included) inside the loop.
            let stmt = self.lane_block(&[n], plan, false, None)?;
            let _ = writeln!(body, "  {{ {stmt}}} // {}", i.src.line);
        } else if plan.uniform(i) {
            let stmt = self.instr(i)?;
            push_stmt(body, i, &stmt);
        } else if matches!(i.src.op.as_str(), "bra" | "ret" | "exit") {
            // A jump makes its own guard (one that differs between lanes included).
            let stmt = self.simd_instr(i, n, plan, exit)?;
            let _ = writeln!(body, "  {{ {stmt} }} // {}", i.src.line);
        } else {
            // Any other guard is the same for every lane (`simd::plan`).
            let stmt = self.simd_instr(i, n, plan, exit)?;
            push_stmt(body, i, &stmt);
        }
        Ok(())
    }

    /// The run of instructions `nodes` (one after another in a block, `Plan::lane_loop`) as
    /// one loop over the 16 lanes, each lane running the threads' own statements on its
    /// registers' values (shadowing the vectors' names), each under its guard and, where
    /// `masked`, kept only for the lanes of the mask `em_`. The vectors go through plain
    /// arrays (`a<r>_`): a loop over those the host compiler turns into vector
    /// instructions where the statements allow, one over a vector's elements it does not.
    /// A multiply an add absorbs keeps its operands per lane (`mv<n>a/b`).
    fn lane_block(&mut self, nodes: &[usize], plan: &Plan, masked: bool, live_out: Option<&[usize]>) -> Result<String, Error> {
        let f = self.f;
        let mut stmts = String::new();
        let (mut regs, mut dests, mut keep) = (Vec::new(), Vec::new(), Vec::new());
        // Registers read before the run writes them (their lanes come in), those it writes.
        let (mut exposed, mut written) = (BTreeSet::new(), BTreeSet::new());
        for &n in nodes {
            let Node::Instr(i) = &f.body[n] else { return Err(self.unsupported("a label in a lane loop")) };
            self.node = n;
            let stmt = self.instr(i)?;
            let Some(Op::Reg(d)) = i.args.first() else { return Err(self.unsupported("a lane loop without a result register")) };
            // A register the same for every lane (the statement's operands are too): the
            // thread's own scalar, written alike by every lane.
            if !matches!(plan.class[*d], Class::Vector | Class::Wide | Class::Uniform) {
                return Err(self.unsupported("a lane loop into a register held otherwise"));
            }
            let mut reads = Vec::new();
            i.args[1..].iter().for_each(|o| o.regs(&mut reads));
            reads.extend(i.guard.map(|(_, p)| p));
            // Under a guard or a mask a lane that does not write keeps the old value.
            if i.guard.is_some() || masked {
                reads.push(*d);
            }
            exposed.extend(reads.iter().copied().filter(|r| !written.contains(r)));
            written.insert(*d);
            regs.extend(reads);
            regs.push(*d);
            if plan.class[*d] != Class::Uniform {
                dests.push(*d);
            }
            let _ = match i.guard {
                Some((neg, p)) => write!(stmts, "if ({}r{p}) {{ {stmt} }} ", if neg { "!" } else { "" }),
                None => write!(stmts, "{{ {stmt} }} "),
            };
            // A multiply's kept operands per lane, where the multiply runs as a lane loop.
            if self.fused.absorbed.contains(&n) {
                keep.push(n);
            }
            if let Some(fu) = self.fused.into.get(&n).filter(|fu| plan.lane_loop.contains(&fu.mul)) {
                keep.push(fu.mul);
            }
        }
        for v in [&mut regs, &mut dests, &mut keep] {
            v.sort_unstable();
            v.dedup();
        }
        let (mut pre, mut shadow, mut back, mut post) = (String::new(), String::new(), String::new(), String::new());
        if masked {
            pre.push_str("int32_t m_[16]; memcpy(m_, &em_, 64); ");
        }
        // What the block leaves: the registers live after it that it writes (all of them
        // where no liveness is given).
        let out = |d: usize| live_out.is_none_or(|l| l.contains(&d));
        dests.retain(|&d| out(d));
        for &r in regs.iter().filter(|&&r| plan.class[r] != Class::Uniform) {
            let t = f.regs[r].ty;
            let ct = ctype(t);
            if !exposed.contains(&r) {
                // Written before it is read: the lane's own value from there on.
                let _ = match plan.class[r] {
                    Class::Wide if dests.contains(&r) => write!(pre, "uint64_t a{r}_[16]; "),
                    _ if dests.contains(&r) => write!(pre, "uint32_t a{r}_[16]; "),
                    _ => Ok(()),
                };
                let _ = write!(shadow, "{ct} r{r} = 0; ");
                continue;
            }
            let _ = match plan.class[r] {
                Class::Vector => write!(pre, "uint32_t a{r}_[16]; memcpy(a{r}_, &r{r}, 64); "),
                Class::Wide => write!(pre, "uint64_t a{r}_[16]; memcpy(a{r}_, &r{r}, 128); "),
                _ => write!(pre, "const uint64_t b{r}_ = r{r}; int32_t a{r}_[16]; memcpy(a{r}_, &o{r}, 64); "),
            };
            let _ = match (plan.class[r], t) {
                (Class::Vector, Ty::Pred) => write!(shadow, "bool r{r} = a{r}_[l_] != 0; "),
                (Class::Vector | Class::Wide, Ty::F32 | Ty::F64) => write!(shadow, "{ct} r{r} = bc<{ct}>(a{r}_[l_]); "),
                (Class::Split, _) => write!(shadow, "{ct} r{r} = ({ct})(b{r}_ + (uint64_t)(int64_t)a{r}_[l_]); "),
                _ => write!(shadow, "{ct} r{r} = ({ct})a{r}_[l_]; "),
            };
        }
        for &d in &dests {
            let wide = plan.class[d] == Class::Wide;
            let value = match f.regs[d].ty {
                Ty::Pred => format!("r{d} ? -1 : 0"),
                Ty::F32 | Ty::F64 => format!("bc<{}>(r{d})", if wide { "uint64_t" } else { "uint32_t" }),
                t if t.size() == 2 => format!("(uint32_t)(uint16_t)r{d}"),
                _ if wide => format!("(uint64_t)r{d}"),
                _ => format!("(uint32_t)r{d}"),
            };
            let _ = write!(back, "a{d}_[l_] = {value}; ");
            let _ = write!(post, "memcpy(&r{d}, a{d}_, {}); ", if wide { 128 } else { 64 });
        }
        for m in keep {
            let Some(Node::Instr(mi)) = f.body.get(m) else { continue };
            let ct = ctype(mi.src.last_ty().unwrap_or(Ty::F32));
            if self.lane_kept.insert(m) {
                let _ = writeln!(self.decls, "  {ct} mv{m}a[16] = {{}}, mv{m}b[16] = {{}};");
            }
            let _ = write!(shadow, "{ct} m{m}a = mv{m}a[l_], m{m}b = mv{m}b[l_]; ");
            let _ = write!(back, "mv{m}a[l_] = m{m}a; mv{m}b[l_] = m{m}b; ");
        }
        // Under a mask only the mask's lanes run: the others' values stay as they were.
        let (open, close) = if masked { ("if (m_[l_] != 0) { ", "} ") } else { ("", "") };
        Ok(format!("{pre}for (uint32_t l_ = 0; l_ < 16u; ++l_) {{ {open}{shadow}{stmts}{back}{close}}} {post}"))
    }

    /// The run of lane-loop instructions from node `n` in `region`: `n` and those right after
    /// it (no label, branch or stop between).
    fn lane_run(&self, n: usize, plan: &Plan, region: &Region) -> Vec<usize> {
        let mut run = vec![n];
        let mut m = n + 1;
        while m < self.f.body.len()
            && region.nodes[m]
            && !region.stops.contains_key(&m)
            && plan.lane_loop.contains(&m)
            && plan.under_mask(m) == plan.under_mask(n)
            && matches!(self.f.body[m], Node::Instr(_))
        {
            run.push(m);
            m += 1;
        }
        run
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
            (_, Ty::F64) => format!("r{d} = {S}X(bc<uint64_t>(t_));"),
            _ => format!("r{d} = {S}X((uint64_t)t_);"),
        };
        Ok(format!("{ct} t_ = 0; {{ auto &r{d} = t_; {stmt} }} {spread}"))
    }

    /// A 32-bit operand as a vector (a uniform one broadcast).
    fn vop(&mut self, o: &Op, t: Ty) -> Result<String, Error> {
        Ok(match o {
            Op::Reg(r) => format!("{S}V(r{r})"),
            // A 16-bit lane holds its value zero-extended: a literal's low 16 bits (nvcc
            // writes `mul.wide.u16 r, h, -13107` for a division by 5 or 20).
            Op::Int(c) if matches!(t, Ty::U16 | Ty::S16 | Ty::B16) => format!("{S}V((uint32_t){}u)", *c as u16),
            Op::Int(c) => format!("{S}V((uint32_t){}u)", *c as u32),
            Op::Float(x) if t == Ty::F32 => format!("{S}V((uint32_t){}u)", x.bits(Ty::F32)),
            Op::Special(s) if s == "%tid.x" => format!("({S}V((uint32_t)TI.x) + ({S}vu){S}IOTA)"),
            // An f32 value's bits (`V(float)`).
            _ if t == Ty::F32 => format!("{S}V({})", self.val(o, t)?),
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

    /// A 32-bit operand of type `t` (signed or not) extended into 64-bit lanes: a uniform
    /// one extended once and broadcast.
    fn wide_of(&mut self, o: &Op, t: Ty, plan: &Plan) -> Result<String, Error> {
        let signed = t == Ty::S32;
        if plan.of(o) == Class::Uniform {
            let v = self.val(o, Ty::U32)?;
            return Ok(if signed {
                format!("{S}X((uint64_t)(int64_t)(int32_t)({v}))")
            } else {
                format!("{S}X((uint64_t)(uint32_t)({v}))")
            });
        }
        Ok(format!("{S}{}({})", if signed { "sext" } else { "zext" }, self.vop(o, Ty::U32)?))
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
    fn simd_instr(&mut self, i: &Instr, n: usize, plan: &Plan, exit: &str) -> Result<String, Error> {
        let op = i.src.op.as_str();
        let arg = |k: usize| i.args.get(k).cloned().ok_or_else(|| Error::parse(i.src.line, "missing operand"));
        // Branches and exits: a uniform guard as the thread's code; a varying one taken by
        // every lane, by none, or the chunk bails.
        let jump = match op {
            "bra" => match i.args.first() {
                Some(Op::Label(l)) => Some(format!("goto {}B{l};", self.labels)),
                _ => return Err(self.unsupported("an indirect branch in the vector form")),
            },
            "ret" | "exit" => Some(exit.to_string()),
            _ => None,
        };
        if let Some(jump) = jump {
            return Ok(match i.guard {
                None => jump,
                Some((neg, p)) if plan.class[p] == Class::Uniform => format!("if ({}r{p}) {jump}", if neg { "!" } else { "" }),
                Some(_) => {
                    let m = Self::guard_mask(i).unwrap_or_default();
                    // A loop's lanes go on together, a bounded number of times.
                    let jump = if plan.lane_loop_back.contains(&n) {
                        format!("{{ if (++PS{n}_ == {}u) {BAIL} {jump} }}", crate::simd::LOOP_PASSES)
                    } else {
                        jump
                    };
                    format!("const int w_ = {S}all_or_none({m}); if (w_ > 0) {jump} if (w_ < 0) {BAIL}")
                }
            });
        }
        let t = i.src.last_ty().unwrap_or(Ty::B32);
        if crate::simd::tracked_access(i, "ld") {
            let k = plan.load_site.get(&n).copied().ok_or_else(|| self.unsupported("an untracked load in the vector form"))?;
            let a = arg(1)?;
            let parts = match arg(0)? {
                Op::Vector(v) => v,
                o => vec![o],
            };
            if plan.of(&a) == Class::Uniform {
                // Every lane loads the same address: once, its range tracked.
                let addr = self.addr(&a, Space::of_access(&i.src.mods))?;
                // Ranges matter only to a chunk that stores.
                let seen = if plan.store_site.is_empty() {
                    String::new()
                } else {
                    format!("{S}seen({addr}, {}, LL[{k}], LH[{k}]);", t.size() * parts.len() as u32)
                };
                let load = match parts.as_slice() {
                    _ if parts.iter().all(|p| plan.of(p) == Class::Uniform) => self.instr(i)?,
                    [Op::Reg(d)] => self.spread(i, *d, plan)?,
                    _ => return Err(self.unsupported("a vector load into registers that differ between lanes")),
                };
                return Ok(format!("{load} {seen}"));
            }
            let (at, base, offs) = self.lane_address(i, &a, plan)?;
            let mut s = format!(
                "{at}{S}vu lv_[{}]; if (!{S}ld<{}, {}, {}>({base}, {offs}, lv_, LL[{k}], LH[{k}])) {BAIL}",
                parts.len(),
                bits_ctype(t),
                parts.len(),
                !plan.store_site.is_empty()
            );
            for (j, p) in parts.iter().enumerate() {
                if let Op::Reg(d) = p {
                    // A 16-bit register holds its value zero-extended; a 64-bit one the
                    // value extended as the load's type says.
                    let _ = match (plan.class[*d], self.f.regs[*d].ty.size()) {
                        (Class::Wide, _) => write!(s, " r{d} = {S}{}(lv_[{j}]);", if t.signed() { "sext" } else { "zext" }),
                        (_, 2) => write!(s, " r{d} = lv_[{j}] & 0xffffu;"),
                        _ => write!(s, " r{d} = lv_[{j}];"),
                    };
                }
            }
            return Ok(s);
        }
        if op == "st" {
            let k = plan.store_site.get(&n).copied().ok_or_else(|| self.unsupported("an untracked store in the vector form"))?;
            let (at, base, offs) = self.lane_address(i, &arg(0)?, plan)?;
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
            // Inside a loop: each pass under its own site id, a pass past them bails.
            let (pass, k) = if plan.loop_store.contains(&n) {
                (format!("if (PS{n}_ == {}u) {BAIL} ", crate::simd::STORE_PASSES), format!("{k}u + PS{n}_++"))
            } else {
                (String::new(), k.to_string())
            };
            return Ok(format!(
                "{at}{pass}const {S}vu sv_[{}] = {{{}}}; if (!{S}st<{}, {}>(UNDO, {k}, {base}, {offs}, sv_)) {BAIL}",
                parts.len(),
                vals.join(", "),
                bits_ctype(t),
                parts.len()
            ));
        }
        if let (true, Op::Vector(parts), Ty::B64) = (op == "mov", arg(0)?, t) {
            // `mov.b64 {lo, hi}, rd`: a 64-bit lane's halves.
            let x = self.wop(&arg(1)?, plan)?;
            let mut s = format!("const {S}vw x_ = {x};");
            for (p, half) in parts.iter().zip([format!("{S}trunc(x_)"), format!("{S}trunc({S}wshr_u(x_, 32))")]) {
                if let Op::Reg(r) = p {
                    let _ = write!(s, " r{r} = {half};");
                }
            }
            return Ok(s);
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
        if crate::simd::double_lanes(i) {
            return self.simd_double(i, n, d, plan);
        }
        match plan.class[d] {
            Class::Split => return self.simd_split(i, d, plan),
            Class::Wide => return self.simd_wide(i, d, plan),
            _ => {}
        }
        let a = |e: &mut Self, k: usize| -> Result<String, Error> { e.vop(&arg(k)?, t) };
        if crate::simd::float_lanes(i) {
            return self.simd_float(i, n, d, plan);
        }
        if t.size() == 2 && matches!(op, "add" | "sub" | "neg" | "abs" | "min" | "max") {
            // A 16-bit register holds its value zero-extended: the operation on the values
            // (a signed one's sign-extended), wrapped to 16 bits again.
            let x = a(self, 1)?;
            let sx = |v: String| if t.signed() { format!("{S}sext16({v})") } else { v };
            let e = match op {
                "add" => format!("{x} + {}", a(self, 2)?),
                "sub" => format!("{x} - {}", a(self, 2)?),
                "neg" => format!("{S}V(0u) - {x}"),
                "abs" => format!("{S}abs_s({})", sx(x)),
                _ => format!("{S}{op}_{}({}, {})", if t.signed() { "s" } else { "u" }, sx(x), sx(a(self, 2)?)),
            };
            return Ok(format!("r{d} = ({e}) & 0xffffu;"));
        }
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
            "prmt" => {
                // Byte j of the result: byte s_j of {b, a} (a: 0-3, b: 4-7), or its sign
                // replicated where s_j has bit 3 (the default mode).
                let Op::Int(c) = arg(3)? else { return Err(self.unsupported("prmt by a selector that differs")) };
                let (x, y) = (a(self, 1)?, a(self, 2)?);
                let mut parts = Vec::new();
                for j in 0..4 {
                    let s = (c >> (4 * j)) as u32 & 0xf;
                    let src = if s & 7 < 4 { &x } else { &y };
                    let at = 8 * (s & 3);
                    parts.push(if s & 8 != 0 {
                        format!("(({S}V(0u) - (({src} >> {}u) & 1u)) & 0xffu) << {}u", at + 7, 8 * j)
                    } else {
                        format!("(({src} >> {at}u) & 0xffu) << {}u", 8 * j)
                    });
                }
                format!("({})", parts.join(" | "))
            }
            "clz" | "popc" if plan.of(&arg(1)?) == Class::Wide => format!("{S}w{op}({})", self.wop(&arg(1)?, plan)?),
            "clz" | "popc" => format!("{S}{op}_v({})", a(self, 1)?),
            "dp2a" | "dp4a" => {
                // Sums of products of packed halves (dp2a: a's halves, b's low or high
                // byte pair) or bytes, each extended as its type says, plus c (mod 2^32).
                let tys = i.src.tys();
                let (sa, sb) = (tys.first().is_some_and(|t| t.signed()), tys.get(1).is_some_and(|t| t.signed()));
                let (x, y, z) = (a(self, 1)?, a(self, 2)?, a(self, 3)?);
                let field = |v: &str, at: u32, bits: u32, signed: bool| {
                    if signed {
                        format!("({S}vu)(({S}vi)({v} << {}u) >> {})", 32 - at - bits, 32 - bits)
                    } else {
                        format!("(({v} >> {at}u) & {}u)", (1u64 << bits) - 1)
                    }
                };
                let terms: Vec<String> = if op == "dp4a" {
                    (0..4).map(|k| format!("{} * {}", field(&x, 8 * k, 8, sa), field(&y, 8 * k, 8, sb))).collect()
                } else {
                    let hi = if i.src.has(".hi") { 2 } else { 0 };
                    (0..2).map(|k| format!("{} * {}", field(&x, 16 * k, 16, sa), field(&y, 8 * (hi + k), 8, sb))).collect()
                };
                format!("{z} + {}", terms.join(" + "))
            }
            "mul" => format!("{} * {}", a(self, 1)?, a(self, 2)?),
            "mad" => format!("{} * {} + {}", a(self, 1)?, a(self, 2)?, a(self, 3)?),
            "bfi" => {
                let (x, y) = (a(self, 1)?, a(self, 2)?);
                bfi(i, 32, &x, y).ok_or_else(|| self.unsupported("bfi at a place that differs"))?
            }
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

    /// f32 arithmetic on 32-bit lanes holding the values' bits (`simd::float_lanes`): the
    /// runtime's vector forms of the thread's own rules, NaN made canonical where the
    /// thread's statement makes it (`nan_blind`).
    fn simd_float(&mut self, i: &Instr, n: usize, d: usize, plan: &Plan) -> Result<String, Error> {
        if plan.held.contains(&n) {
            return Err(self.unsupported("a contracted f32 operation as a vector expression"));
        }
        let op = i.src.op.as_str();
        let arg = |k: usize| i.args.get(k).cloned().ok_or_else(|| Error::parse(i.src.line, "missing operand"));
        let tys = i.src.tys();
        let x = |e: &mut Self, k: usize| -> Result<String, Error> { e.vop(&arg(k)?, Ty::F32) };
        let c = !self.nan_blind(&Op::Reg(d));
        let round = || super::ops::iround(&i.src.mods).ok_or_else(|| self.unsupported("cvt without an integer rounding"));
        let e = match (op, tys.as_slice()) {
            ("add" | "sub", _) if !i.src.has(".rn") && super::ops::fround(&i.src.mods).is_some() => {
                let r = ["RN", "RZ", "RP", "RM"][super::ops::fround(&i.src.mods).unwrap_or(0) as usize];
                format!("{S}fadd_dir<OP_{}, {r}>({}, {}, {c})", op.to_uppercase(), x(self, 1)?, x(self, 2)?)
            }
            ("add" | "sub" | "mul", _) => format!("{S}f{op}({}, {}, {c})", x(self, 1)?, x(self, 2)?),
            ("fma", _) => format!("{S}ffma({}, {}, {}, {c})", x(self, 1)?, x(self, 2)?, x(self, 3)?),
            ("abs" | "neg", _) => format!("{S}f{op}_v({})", x(self, 1)?),
            ("copysign", _) => format!("{S}fcopysign({}, {})", x(self, 1)?, x(self, 2)?),
            ("mov", _) => x(self, 1)?,
            ("selp", _) => format!("({} != 0) ? {} : {}", self.mop(&arg(3)?)?, x(self, 1)?, x(self, 2)?),
            ("setp", _) => {
                let cmp = super::ops::comparison(i).ok_or_else(|| self.unsupported("setp without a comparison"))?;
                format!("{S}fcmp<{cmp}>({}, {})", x(self, 1)?, x(self, 2)?)
            }
            ("cvt", [Ty::F32, Ty::S32]) => format!("{S}fcvt_s({})", self.vop(&arg(1)?, Ty::S32)?),
            ("cvt", [Ty::F32, Ty::U32 | Ty::U16]) => format!("{S}fcvt_u({})", self.vop(&arg(1)?, Ty::U32)?),
            ("cvt", [Ty::F32, Ty::F32]) => format!("{S}fround<{}>({})", round()?, x(self, 1)?),
            ("cvt", [Ty::U32, Ty::F32]) => format!("{S}f2u<{}>({})", round()?, x(self, 1)?),
            ("cvt", [Ty::S32, Ty::F32]) => format!("{S}f2s<{}>({})", round()?, x(self, 1)?),
            _ => return Err(self.unsupported(format!("{} in the vector form", i.src.text()))),
        };
        Ok(format!("r{d} = {e};"))
    }

    /// f64 arithmetic on 64-bit lanes holding the values' bits (`simd::double_lanes`): the
    /// runtime's vector forms (the host's operations where no lane holds a NaN or a value
    /// past a conversion's range, the thread's scalar rules otherwise).
    fn simd_double(&mut self, i: &Instr, n: usize, d: usize, plan: &Plan) -> Result<String, Error> {
        if plan.held.contains(&n) {
            return Err(self.unsupported("a contracted f64 operation as a vector expression"));
        }
        let op = i.src.op.as_str();
        let arg = |k: usize| i.args.get(k).cloned().ok_or_else(|| Error::parse(i.src.line, "missing operand"));
        let tys = i.src.tys();
        let x = |e: &mut Self, k: usize| -> Result<String, Error> {
            let o = arg(k)?;
            Ok(match (&o, plan.of(&o)) {
                (Op::Reg(r), Class::Wide) => format!("r{r}"),
                (Op::Float(v), _) => format!("{S}X((uint64_t){}ull)", v.bits(Ty::F64)),
                _ => format!("{S}X(bc<uint64_t>({}))", e.val(&o, Ty::F64)?),
            })
        };
        let round = || super::ops::iround(&i.src.mods).ok_or_else(|| self.unsupported("cvt without an integer rounding"));
        let e = match (op, tys.as_slice()) {
            ("add" | "sub" | "mul" | "div", _) => format!("{S}darith<OP_{}>({}, {})", op.to_uppercase(), x(self, 1)?, x(self, 2)?),
            ("fma", _) => format!("{S}dfma({}, {}, {})", x(self, 1)?, x(self, 2)?, x(self, 3)?),
            ("min" | "max", _) => format!("{S}dminmax<{}>({}, {})", op == "max", x(self, 1)?, x(self, 2)?),
            ("abs" | "neg", _) => format!("{S}d{op}({})", x(self, 1)?),
            ("mov", _) => x(self, 1)?,
            ("selp", _) => format!("{S}wsel({}, {}, {})", self.mop(&arg(3)?)?, x(self, 1)?, x(self, 2)?),
            ("setp", _) => {
                let cmp = super::ops::comparison(i).ok_or_else(|| self.unsupported("setp without a comparison"))?;
                format!("{S}dcmp<{cmp}>({}, {})", x(self, 1)?, x(self, 2)?)
            }
            ("cvt", [Ty::F64, Ty::S32]) => format!("{S}dcvt_s({})", self.vop(&arg(1)?, Ty::S32)?),
            ("cvt", [Ty::F64, Ty::U32]) => format!("{S}dcvt_u({})", self.vop(&arg(1)?, Ty::U32)?),
            ("cvt", [to @ (Ty::S32 | Ty::U32 | Ty::S64 | Ty::U64), Ty::F64]) => {
                let f = if to.size() == 8 { "d2l" } else { "d2i" };
                format!("{S}{f}<{}, {}>({})", ctype(*to), round()?, x(self, 1)?)
            }
            _ => return Err(self.unsupported(format!("{} in the vector form", i.src.text()))),
        };
        Ok(format!("r{d} = {e};"))
    }

    /// A per-lane access's address as a host base and 16 signed offsets: the statement
    /// that makes them (empty for a global base plus offsets) and their expressions. A
    /// shared address is the block's window plus the lanes' 32-bit addresses (a lane past
    /// 2^31 bails: the threads' code takes it) or plus a 64-bit base and offsets.
    fn lane_address(&mut self, i: &Instr, a: &Op, plan: &Plan) -> Result<(String, String, String), Error> {
        let Op::Addr(AddrBase::Reg(r), off) = a else { return Err(self.unsupported("an access address in the vector form")) };
        let shared = Space::of_access(&i.src.mods) == Some(Space::Shared);
        Ok(match (shared, plan.class[*r]) {
            (false, _) => (String::new(), format!("r{r} + (uint64_t){off}ll"), format!("o{r}")),
            (true, Class::Vector) => (
                format!("uint64_t sb_; {S}vi so_; if (!{S}sh_lanes(T, r{r} + (uint32_t){off}ll, sb_, so_)) {BAIL} "),
                "sb_".into(),
                "so_".into(),
            ),
            (true, _) => (String::new(), format!("sh(T, r{r} + (uint64_t){off}ll)"), format!("o{r}")),
        })
    }

    /// An instruction whose result is 16 64-bit lanes.
    fn simd_wide(&mut self, i: &Instr, d: usize, plan: &Plan) -> Result<String, Error> {
        let op = i.src.op.as_str();
        let arg = |k: usize| i.args.get(k).cloned().ok_or_else(|| Error::parse(i.src.line, "missing operand"));
        let t = i.src.last_ty().unwrap_or(Ty::B64);
        let w = |e: &mut Self, k: usize| -> Result<String, Error> { e.wop(&arg(k)?, plan) };
        let e = match (op, arg(1)?) {
            // `mov.b64 rd, {lo, hi}`: two 32-bit lanes joined.
            ("mov", Op::Vector(parts)) if parts.len() == 2 => {
                format!("{S}zext({}) | {S}wshl({S}zext({}), 32)", self.vop(&parts[0], Ty::B32)?, self.vop(&parts[1], Ty::B32)?)
            }
            _ => match op {
                "mov" => w(self, 1)?,
                "add" => format!("{} + {}", w(self, 1)?, w(self, 2)?),
                "sub" => format!("{} - {}", w(self, 1)?, w(self, 2)?),
                "and" => format!("{} & {}", w(self, 1)?, w(self, 2)?),
                "or" => format!("{} | {}", w(self, 1)?, w(self, 2)?),
                "xor" => format!("{} ^ {}", w(self, 1)?, w(self, 2)?),
                "not" => format!("~{}", w(self, 1)?),
                "neg" => format!("{S}X(0) - {}", w(self, 1)?),
                "selp" => format!("{S}wsel({}, {}, {})", self.mop(&arg(3)?)?, w(self, 1)?, w(self, 2)?),
                "bfi" => {
                    let (x, y) = (w(self, 1)?, w(self, 2)?);
                    bfi(i, 64, &x, y).ok_or_else(|| self.unsupported("bfi at a place that differs"))?
                }
                "shl" | "shr" if plan.of(&arg(2)?) == Class::Vector => {
                    let f = match (op, t) {
                        ("shl", _) => "wshl",
                        (_, Ty::S64) => "wshr_s",
                        _ => "wshr_u",
                    };
                    format!("{S}{f}({}, {})", w(self, 1)?, self.vop(&arg(2)?, Ty::U32)?)
                }
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
                    let (x, y) = (self.wide_of(&arg(1)?, t, plan)?, self.wide_of(&arg(2)?, t, plan)?);
                    let p = format!("{x} * {y}");
                    if op == "mad" {
                        format!("{p} + {}", w(self, 3)?)
                    } else {
                        p
                    }
                }
                "mul" => format!("{} * {}", w(self, 1)?, w(self, 2)?),
                "mad" => format!("{} * {} + {}", w(self, 1)?, w(self, 2)?, w(self, 3)?),
                "cvt" => {
                    let from = if i.src.tys().get(1) == Some(&Ty::S32) { Ty::S32 } else { Ty::U32 };
                    if plan.of(&arg(1)?) == Class::Wide {
                        // A 64-bit lane's low half (the scalar code's `rd<int32_t>`).
                        format!("{S}{}({})", if from == Ty::S32 { "wlow_s" } else { "wlow_u" }, w(self, 1)?)
                    } else {
                        self.wide_of(&arg(1)?, from, plan)?
                    }
                }
                // Forms that make a base plus offsets elsewhere, here joined into lanes.
                "cvta" => w(self, 1)?,
                _ => return Err(self.unsupported(format!("{} in the vector form", i.src.text()))),
            },
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
                    // Two bases plus offsets (a row's offset plus a column's).
                    (Some(s), Some(t)) if op == "add" => format!("r{d} = r{s} + r{t}; if (!{S}mad_off(1, o{s}, o{t}, o{d})) {BAIL}"),
                    _ => return Err(self.unsupported("vector form operands")),
                }
            }
            "shl" => {
                let s = split(&arg(1)?).ok_or_else(|| self.unsupported("vector form operand"))?;
                let Op::Int(c) = arg(2)? else { return Err(self.unsupported("shl.b64 by a register in the vector form")) };
                format!("r{d} = r{s} << {c}; if (!{S}shl_off(o{s}, {c}, o{d})) {BAIL}")
            }
            "mad" => {
                let (x, y, z) = (arg(1)?, arg(2)?, arg(3)?);
                match (split(&x), split(&y), split(&z)) {
                    (None, None, Some(s)) => format!("r{d} = {} * {} + r{s}; o{d} = o{s};", uni(self, &x)?, uni(self, &y)?),
                    // A row's base plus offsets scaled by a pitch the same for every lane,
                    // plus a column's or a base the same for every lane.
                    (Some(a), None, c) | (None, Some(a), c) => {
                        let u = uni(self, if split(&x).is_some() { &y } else { &x })?;
                        let (rc, oc) = match c {
                            Some(c) => (format!("r{c}"), format!("o{c}")),
                            None => (uni(self, &z)?, format!("({S}vi){{}}")),
                        };
                        format!("r{d} = {u} * r{a} + {rc}; if (!{S}mad_off({u}, o{a}, {oc}, o{d})) {BAIL}")
                    }
                    _ => return Err(self.unsupported("vector form operands")),
                }
            }
            "cvt" => {
                let from = i.src.tys().get(1).copied().unwrap_or(Ty::U32);
                let v = self.vop(&arg(1)?, Ty::U32)?;
                if from == Ty::S32 {
                    format!("r{d} = 0; o{d} = ({S}vi)({v});")
                } else {
                    format!("r{d} = 0; if (!{S}zext_off({v}, o{d})) {BAIL}")
                }
            }
            // mul.lo.u64 of a base plus offsets by a pitch the same for every lane.
            "mul" if i.src.has(".lo") => {
                let (x, y) = (arg(1)?, arg(2)?);
                let (a, u) = match (split(&x), split(&y)) {
                    (Some(a), None) => (a, uni(self, &y)?),
                    (None, Some(a)) => (a, uni(self, &x)?),
                    _ => return Err(self.unsupported("vector form operands")),
                };
                format!("r{d} = {u} * r{a}; if (!{S}mad_off({u}, o{a}, ({S}vi){{}}, o{d})) {BAIL}")
            }
            "mul" => {
                // mul.wide of lanes by a factor the same for every lane.
                let (x, y) = (arg(1)?, arg(2)?);
                let (v, u) = if plan.of(&x) == Class::Uniform { (y, x) } else { (x, y) };
                let v = self.vop(&v, Ty::U32)?;
                let (f, ct) = if i.src.last_ty() == Some(Ty::S32) { ("wide_s", "int32_t") } else { ("wide_u", "uint32_t") };
                let u = self.val(&u, i.src.last_ty().unwrap_or(Ty::U32))?;
                format!("r{d} = 0; if (!{S}{f}({v}, ({ct})({u}), o{d})) {BAIL}")
            }
            _ => return Err(self.unsupported(format!("{} in the vector form", i.src.text()))),
        };
        Ok(s)
    }
}

/// A `bfi` of literal position and length on `bits`-bit values: the bits it inserts, those
/// it keeps of the base, and the shift (None where it inserts nothing: a length of 0 or a
/// position past the value; both operands are taken modulo 256, as the ISA says).
fn field(i: &Instr, bits: u32) -> Option<(u64, u64, Option<u32>)> {
    let (Some(Op::Int(pos)), Some(Op::Int(len))) = (i.args.get(3), i.args.get(4)) else { return None };
    let (pos, len) = ((*pos & 0xff) as u32, (*len & 0xff) as u32);
    let all = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    if len == 0 || pos >= bits {
        return Some((0, all, None));
    }
    let mask = if len >= 64 { u64::MAX } else { (1u64 << len) - 1 };
    let ins = (mask << pos) & all;
    Some((ins, !ins & all, Some(pos)))
}

/// `bfi` at a literal place on lanes of `bits` (32 or 64) bits: base `y`'s kept bits and
/// `x`'s inserted ones (None where the place is not literal).
fn bfi(i: &Instr, bits: u32, x: &str, y: String) -> Option<String> {
    let (ins, keep, pos) = field(i, bits)?;
    let Some(pos) = pos else { return Some(y) };
    Some(if bits == 64 {
        format!("({y} & {S}X({keep}ull)) | ({S}wshl({x}, {pos}) & {S}X({ins}ull))")
    } else {
        format!("({y} & {S}V((uint32_t){keep}u)) | (({x} << {pos}u) & {S}V((uint32_t){ins}u))")
    })
}

/// Each register of `f` declared in its vector form's class (all zero, as the thread's
/// registers start).
fn register_decls(plan: &Plan, f: &crate::resolve::Func) -> String {
    register_decls_of(plan, f, &vec![true; f.regs.len()])
}

/// `register_decls` of the registers `used` marks (a stretch's: those its nodes name and
/// those it enters with; a kernel with many shuffles would otherwise declare every
/// register once per stretch, which the host compiler pays for).
fn register_decls_of(plan: &Plan, f: &crate::resolve::Func, used: &[bool]) -> String {
    let mut out = String::new();
    for (r, reg) in f.regs.iter().enumerate().filter(|(r, _)| used[*r]) {
        let _ = match (plan.class[r], reg.ty) {
            (Class::Uniform, t) => writeln!(out, "  {} r{r} = 0;", ctype(t)),
            (Class::Vector, Ty::Pred) => writeln!(out, "  {S}vi r{r} = {{}};"),
            (Class::Vector, _) => writeln!(out, "  {S}vu r{r} = {{}};"),
            (Class::Split, _) => writeln!(out, "  uint64_t r{r} = 0; {S}vi o{r} = {{}};"),
            (Class::Wide, _) => writeln!(out, "  {S}vw r{r} = {{}};"),
        };
    }
    // Passes of a loop's store sites and lane-varying backward branches (per half).
    for n in plan.loop_store.iter().chain(&plan.lane_loop_back) {
        let _ = writeln!(out, "  uint32_t PS{n}_ = 0;");
    }
    out
}

/// The C++ type a vector load or store moves elements of type `t` as (an f32 element as
/// its bits: the lanes hold them).
fn bits_ctype(t: Ty) -> &'static str {
    if t == Ty::F32 {
        "uint32_t"
    } else {
        ctype(t)
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

/// What a loop-path segment's vector form needs of its kernel's loop path (`body_loops`).
pub(super) struct SegmentForm<'p> {
    /// The kernel's number (its frame is `FR<k>`).
    pub k: usize,
    /// The resume point the segment starts at.
    pub from: usize,
    /// The loop path's plan: the split points' stores (`save`), the registers live across
    /// them (`live`), the shuffles whose lane operand and clamp are literals (`literal`).
    pub up: &'p crate::uniform::Plan,
    /// The registers live at each cut, by its resume point.
    pub cut_live: &'p BTreeMap<usize, Vec<usize>>,
    /// The carry flag goes through the frame.
    pub carry: bool,
}

/// A stop of a segment's vector form: what the form answers there, the registers it
/// stages there (per half, in `ST<r>_<node>`), and the statements that store a lane's into
/// its frame (`S`) where they are that lane's scalars.
struct StopCode {
    code: String,
    regs: Vec<usize>,
    store: String,
}

/// What the stretches of one segment form share: each stop's code, the class each staged
/// register is held in there, and the stretch after each performed shuffle.
struct Staging {
    stops: BTreeMap<usize, StopCode>,
    staged_class: BTreeMap<(usize, usize), Class>,
    after: BTreeMap<usize, usize>,
    /// A form from a barrier's resume point: its frame's type, the registers it reads
    /// there and the node it starts at (its code is in body order, which a loop back
    /// past the barrier puts after nodes before it: the form jumps there first).
    entry: Option<(usize, Vec<usize>, usize)>,
    /// The shuffles done without an exchange (the form computes those it reaches).
    elide: HashMap<usize, crate::uniform::Elided>,
    /// The shuffles whose lane operand and clamp are literals (for liveness).
    literal: HashMap<usize, (u32, u32)>,
}

/// The wider of two classes of one register (a vector never meets a split or wide one:
/// the register's type decides).
fn join(a: Class, b: Class) -> Class {
    match (a, b) {
        (x, y) if x == y => x,
        (Class::Uniform, y) => y,
        (x, Class::Uniform) => x,
        _ => Class::Wide,
    }
}

/// A value of class `from` as class `to` (at least as wide): its value and, for a split
/// one, its offsets (`v`, `o`: the value's and offsets' expressions).
fn widen(from: Class, to: Class, t: Ty, v: &str, o: &str) -> (String, String) {
    let value = match (from, to) {
        _ if from == to => v.to_string(),
        (Class::Uniform, Class::Vector) if t == Ty::Pred => format!("{S}M((bool)({v}))"),
        (Class::Uniform, Class::Vector) => format!("{S}V({v})"),
        (Class::Uniform, Class::Split) => format!("(uint64_t)({v})"),
        (Class::Uniform, _) if t == Ty::F64 => format!("{S}X(bc<uint64_t>({v}))"),
        (Class::Uniform, _) => format!("{S}X((uint64_t)({v}))"),
        (Class::Split, _) => format!("{S}split({v}, {o})"),
        _ => v.to_string(),
    };
    let offsets = match (from, to) {
        (Class::Split, Class::Split) => o.to_string(),
        (_, Class::Split) => format!("({S}vi){{}}"),
        _ => String::new(),
    };
    (value, offsets)
}

/// Statements setting `dst` (its value, and offsets `dst_o` where `to` is split) from
/// `src` (and `src_o`) of class `from`.
fn assign(from: Class, to: Class, t: Ty, (dst, dst_o): (&str, &str), (src, src_o): (&str, &str)) -> String {
    let (v, o) = widen(from, to, t, src, src_o);
    if to == Class::Split {
        format!("{dst} = {v}; {dst_o} = {o}; ")
    } else {
        format!("{dst} = {v}; ")
    }
}

impl FnEmitter<'_> {
    /// The vector form of a loop-path segment: `VS<fi>_<from>(T, P0, fr, TIs, UNDO)` runs a
    /// warp's 32 lanes (frames `fr[0..32)`, indices `TIs[0..32)`) as two halves of 16 from
    /// resume point `from` to where both halves stop alike: a split point, whose number it
    /// answers with the lanes' frames as their own steps would leave them, or a cut
    /// (`LOOP_MID` with its resume point, the live registers in the frames). 0 where the
    /// lanes must be stepped one at a time (nothing in the frames changed, the stores
    /// undone). At a shuffle with a stretch after it (`VectorSegment::stretches`) both
    /// halves' values are in the staging arrays: the form performs it as a permute of the
    /// two vectors and goes on, while the runner's fairness budget allows
    /// (`ptx::simd::pass_budget`), telling the runner how many it performed
    /// (`ptx::simd::passed`). Returns the function and the undo log's size (entries, bytes).
    pub(super) fn body_simd_segment(&mut self, v: &VectorSegment, form: &SegmentForm) -> Result<(String, u32, u32), Error> {
        self.loop_tid = true;
        self.site_prefix = format!("SW{}R", form.from);
        let staging = self.staging(v, form)?;
        let mut body = String::new();
        for (x, st) in v.stretches.iter().enumerate() {
            body.push_str(&self.stretch_code(x, st, &staging)?);
            body.push_str(&self.performed_shuffles(st, &staging, form)?);
            body.push_str("  goto DONE_;\n");
        }
        let (f, Staging { stops, staged_class, after, .. }) = (self.f, staging);
        self.labels.clear();
        let nl: usize = v.stretches.iter().map(|s| s.plan.load_ranges()).sum();
        let ne: u32 = 2 * v.stretches.iter().map(|s| s.plan.undo_entries).sum::<u32>();
        let nb: u32 = 2 * v.stretches.iter().map(|s| s.plan.undo_bytes).sum::<u32>();
        let mut out = std::mem::take(&mut self.site_decls);
        let _ = writeln!(
            out,
            "static inline __attribute__((always_inline)) uint32_t VS{}_{}(Thread &T, const uint8_t *P0, FR{} *fr, const simtwin_dim3_t *TIs, {S}Undo<{ne}, {nb}> &UNDO) {{",
            self.fi, form.from, form.k
        );
        let _ = writeln!(out, "  uint64_t LL[{nl}], LH[{nl}];\n  for (int k = 0; k < {nl}; ++k) LL[k] = ~0ull, LH[k] = 0;");
        for (&(n, r), &c) in &staged_class {
            let _ = match (c, f.regs[r].ty) {
                (Class::Uniform, t) => writeln!(out, "  {} ST{r}_{n}[2];", ctype(t)),
                (Class::Vector, Ty::Pred) => writeln!(out, "  {S}vi ST{r}_{n}[2];"),
                (Class::Vector, _) => writeln!(out, "  {S}vu ST{r}_{n}[2];"),
                (Class::Split, _) => writeln!(out, "  uint64_t ST{r}_{n}[2]; {S}vi SO{r}_{n}[2];"),
                (Class::Wide, _) => writeln!(out, "  {S}vw ST{r}_{n}[2];"),
            };
        }
        for &n in after.keys() {
            let Node::Instr(i) = &f.body[n] else { continue };
            for (j, d) in shuffle_members(i).0.iter().enumerate() {
                if d.is_some() {
                    let _ = writeln!(out, "  {S}vu SD{j}_{n}[2];");
                }
            }
            if shuffle_pred(i).is_some() {
                let _ = writeln!(out, "  {S}vi SP_{n}[2];");
            }
        }
        out.push_str("  uint32_t TO0_ = 0, PASS_ = 0;\n  const uint32_t BUDGET_ = ptx::simd::pass_budget;\n  (void)T; (void)BUDGET_;\n");
        out.push_str(&self.decls);
        out.push_str(&body);
        out.push_str("DONE_:\n");
        let _ = writeln!(out, "  if (!UNDO.commit(LL, LH, {nl})) return 0u;");
        // Both halves stopped alike: each lane's registers into its frame.
        out.push_str("  switch (TO0_) {\n");
        for (&n, stop) in &stops {
            let _ = writeln!(out, "  case {}:\n    for (uint32_t l_ = 0; l_ < 32u; ++l_) {{\n      FR{} &S = fr[l_];\n      const uint32_t h_ = l_ >> 4, j_ = l_ & 15u; (void)h_; (void)j_;", stop.code, form.k);
            for &r in &stop.regs {
                let ct = ctype(f.regs[r].ty);
                let _ = match (staged_class[&(n, r)], f.regs[r].ty) {
                    (Class::Uniform, _) => writeln!(out, "      const {ct} r{r} = ST{r}_{n}[h_];"),
                    (Class::Vector, Ty::Pred) => writeln!(out, "      const bool r{r} = ST{r}_{n}[h_][j_] != 0;"),
                    (Class::Vector, Ty::F32) => writeln!(out, "      const float r{r} = bc<float>((uint32_t)ST{r}_{n}[h_][j_]);"),
                    (Class::Vector, _) => writeln!(out, "      const {ct} r{r} = ({ct})ST{r}_{n}[h_][j_];"),
                    (Class::Split, _) => writeln!(out, "      const uint64_t r{r} = ST{r}_{n}[h_] + (uint64_t)(int64_t)SO{r}_{n}[h_][j_];"),
                    (Class::Wide, Ty::F64) => writeln!(out, "      const double r{r} = bc<double>({S}lane(ST{r}_{n}[h_], j_));"),
                    (Class::Wide, _) => writeln!(out, "      const uint64_t r{r} = {S}lane(ST{r}_{n}[h_], j_);"),
                };
            }
            let _ = writeln!(out, "      {}\n    }}\n    break;", stop.store);
        }
        out.push_str("  case LOOP_EXIT: break;\n  default: return 0u;\n  }\n  ptx::simd::passed = PASS_;\n  return TO0_;\nBAIL:\n  UNDO.undo();\n  return 0u;\n}\n");
        self.loop_tid = false;
        Ok((out, ne, nb))
    }

    /// Every stop of every stretch: the registers staged there and their classes (the
    /// widest any stretch that reaches it gives them), and which stretch follows each
    /// shuffle the form performs.
    fn staging(&mut self, v: &VectorSegment, form: &SegmentForm) -> Result<Staging, Error> {
        let mut stops: BTreeMap<usize, StopCode> = BTreeMap::new();
        let mut staged_class: BTreeMap<(usize, usize), Class> = BTreeMap::new();
        for st in &v.stretches {
            for (&node, stop) in &st.region.stops {
                if let std::collections::btree_map::Entry::Vacant(e) = stops.entry(node) {
                    e.insert(self.stop_code(node, *stop, form)?);
                }
                for &r in &stops[&node].regs {
                    let c = staged_class.entry((node, r)).or_insert(Class::Uniform);
                    *c = join(*c, st.plan.class[r]);
                }
            }
        }
        let after = v.stretches.iter().enumerate().filter_map(|(x, s)| s.after.map(|n| (n, x))).collect();
        let entry = v.resumed.as_ref().map(|(b, regs)| (form.k, regs.clone(), form.up.syncs[*b] + 1));
        Ok(Staging { stops, staged_class, after, entry, elide: form.up.elide.clone(), literal: form.up.literal.clone() })
    }

    /// Stretch `x`'s code: a loop over the two halves from its start (the shuffle's results
    /// and the registers the stretch before staged) to its stops (`E<x>_`, both halves'
    /// answers compared).
    fn stretch_code(&mut self, x: usize, st: &Stretch, staging: &Staging) -> Result<String, Error> {
        let (f, stops, staged_class) = (self.f, &staging.stops, &staging.staged_class);
        self.labels = format!("P{x}");
        let plan = &st.plan;
        let mut body = String::new();
        if let Some(n) = st.after {
            let _ = writeln!(body, "P{x}_: // after the shuffle of PTX line {}", line_of(f, n));
        }
        body.push_str("  for (uint32_t h_ = 0; h_ < 2u; ++h_) {\n  const simtwin_dim3_t &TI = TIs[16u * h_];\n");
        let mut used = vec![false; f.regs.len()];
        for (n, node) in f.body.iter().enumerate() {
            if let (true, Node::Instr(i)) = (st.region.nodes[n] || st.region.stops.contains_key(&n), node) {
                let mut rs = Vec::new();
                i.args.iter().for_each(|o| o.regs(&mut rs));
                rs.extend(i.guard.map(|(_, p)| p));
                rs.into_iter().for_each(|r| used[r] = true);
            }
        }
        for n in st.region.stops.keys().chain(&st.after) {
            stops[n].regs.iter().for_each(|&r| used[r] = true);
        }
        body.push_str(&register_decls_of(plan, f, &used));
        body.push_str("  uint32_t TO_ = 0;\n");
        if let (None, Some((k, regs, _))) = (st.after, &staging.entry) {
            // From a barrier's resume point: the registers from the half's 16 frames, each
            // as its class holds it (lanes that differ where it is uniform, or offsets past
            // 32 bits, undo the form before it stores anything).
            for &r in regs.iter().filter(|&&r| used[r]) {
                let m = format!("fr + 16u * h_, &FR{k}::r{r}");
                let _ = match (plan.class[r], f.regs[r].ty) {
                    (Class::Uniform, _) => writeln!(body, "  if (!{S}frame_uniform({m}, r{r})) {BAIL}"),
                    (Class::Vector, Ty::Pred) => writeln!(body, "  r{r} = {S}frame_mask({m});"),
                    (Class::Vector, _) => writeln!(body, "  r{r} = {S}frame_lanes({m});"),
                    (Class::Split, _) => writeln!(body, "  if (!{S}frame_split({m}, r{r}, o{r})) {BAIL}"),
                    (Class::Wide, _) => writeln!(body, "  r{r} = {S}frame_wide({m});"),
                };
            }
            let _ = writeln!(body, "  goto P{x}R_;");
        }
        if let Some(n) = st.after {
            // The live registers as the stretch before left them, then the shuffle's
            // results.
            for &r in &stops[&n].regs {
                let from = staged_class[&(n, r)];
                // Staged but not live after it (the shuffle's own operands): not read.
                if join(from, plan.class[r]) != plan.class[r] {
                    continue;
                }
                let (dst, src) = ((format!("r{r}"), format!("o{r}")), (format!("ST{r}_{n}[h_]"), format!("SO{r}_{n}[h_]")));
                let _ = writeln!(body, "  {}", assign(from, plan.class[r], f.regs[r].ty, (&dst.0, &dst.1), (&src.0, &src.1)));
            }
            let Node::Instr(i) = &f.body[n] else { return Err(self.unsupported("a shuffle that is not an instruction")) };
            let (dests, _) = shuffle_members(i);
            for (j, d) in dests.iter().enumerate() {
                if let Some(d) = d {
                    let _ = writeln!(body, "  r{d} = SD{j}_{n}[h_];");
                }
            }
            if let Some(p) = shuffle_pred(i) {
                let _ = writeln!(body, "  r{p} = SP_{n}[h_];");
            }
            // Its code is in body order, which a loop back to the shuffle puts first.
            let _ = writeln!(body, "  goto P{x}N_;");
        }
        // The runs of lane loops by first node, and the registers live after each (one
        // analysis; None after the body's last node: every register it writes goes back).
        let mut found = Vec::new();
        let mut n = 0;
        while n < f.body.len() {
            if st.region.nodes[n] && !st.region.stops.contains_key(&n) && plan.lane_loop.contains(&n) && !plan.masked.contains_key(&n) {
                let run = self.lane_run(n, plan, &st.region);
                n = run[run.len() - 1] + 1;
                found.push(run);
            } else {
                n += 1;
            }
        }
        let cfg = crate::cfg::build(f);
        let ends: Vec<usize> = found.iter().map(|r| (r[r.len() - 1] + 1).min(f.body.len() - 1)).collect();
        let live = crate::uniform::live_before(f, &cfg, &ends, &staging.literal);
        let runs: BTreeMap<usize, (Vec<usize>, Option<Vec<usize>>)> = found
            .into_iter()
            .zip(live)
            .map(|(run, l)| {
                let inside = run[run.len() - 1] + 1 < f.body.len();
                (run[0], (run, inside.then_some(l)))
            })
            .collect();
        let labels = crate::resolve::label_positions(f);
        let mut skip_to = 0;
        for (n, node) in f.body.iter().enumerate() {
            self.node = n;
            if st.after.is_some_and(|a| a + 1 == n) {
                let _ = writeln!(body, "P{x}N_:;");
            }
            if st.after.is_none() && staging.entry.as_ref().is_some_and(|e| e.2 == n) {
                let _ = writeln!(body, "P{x}R_:;");
            }
            if let Some(stop) = stops.get(&n).filter(|_| st.region.stops.contains_key(&n)) {
                let mut s = String::new();
                for &r in &stop.regs {
                    let to = staged_class[&(n, r)];
                    let (dst, src) = ((format!("ST{r}_{n}[h_]"), format!("SO{r}_{n}[h_]")), (format!("r{r}"), format!("o{r}")));
                    s.push_str(&assign(plan.class[r], to, f.regs[r].ty, (&dst.0, &dst.1), (&src.0, &src.1)));
                }
                let _ = writeln!(body, "  {{ {s}TO_ = {}; goto E{x}_; }} // stop", stop.code);
                continue;
            }
            if !st.region.nodes[n] {
                continue;
            }
            if skip_to > n {
                continue;
            }
            if let Some((run, live)) = runs.get(&n) {
                // A run of lane-loop instructions: one loop over the lanes.
                skip_to = run[run.len() - 1] + 1;
                let stmt = self.lane_block(run, plan, plan.under_mask(n), live.as_deref())?;
                let _ = writeln!(body, "  {{ {stmt}}} // {}", run.iter().map(|&m| line_of(f, m).to_string()).collect::<Vec<_>>().join(" "));
                continue;
            }
            if plan.masked.contains_key(&n) || plan.under_mask(n) || plan.masked.values().any(|&j| j == n) {
                self.masked_node(x, n, plan, &labels, &mut body)?;
                continue;
            }
            match node {
                Node::Label(l) => {
                    let _ = writeln!(body, "P{x}B{l}:;");
                }
                // A shuffle without an exchange: the literal or the earlier result.
                Node::Instr(i) if staging.elide.contains_key(&n) => {
                    let d = crate::simd::shuffle_dest(i).ok_or_else(|| self.unsupported("a shuffle without a result register"))?;
                    let stmt = match (&staging.elide[&n], plan.class[d]) {
                        (crate::uniform::Elided::Repeat(r), Class::Vector) => {
                            assign(plan.class[*r], Class::Vector, Ty::B32, (&format!("r{d}"), ""), (&format!("r{r}"), ""))
                        }
                        (crate::uniform::Elided::Value(v), Class::Vector) => format!("r{d} = {S}V((uint32_t){v}u);"),
                        (how, _) => self.elided_shuffle(i, how)?,
                    };
                    push_stmt(&mut body, i, &stmt);
                }
                // Every lane exits: the runner books their exits.
                Node::Instr(i) => self.simd_stmt(n, i, plan, &format!("{{ TO_ = LOOP_EXIT; goto E{x}_; }}"), &mut body)?,
            }
        }
        let _ = writeln!(body, "  TO_ = 0; {BAIL}\nE{x}_:\n  if (h_ == 0) TO0_ = TO_;\n  else if (TO_ != TO0_) {BAIL}\n  }}");
        Ok(body)
    }

    /// Node `n` of a branch the lanes take apart, run both ways under masks
    /// (`Plan::masked`): at the branch, the lanes' mask `em_` and one per label up to the
    /// join (`mk<node>_`); a branch moves the lanes it takes from `em_` to its label's
    /// mask, a label takes its mask's lanes back, and a block no lane runs is skipped; each
    /// instruction writes only the mask's lanes (lane loops come as their runs, `lane_block`
    /// under the mask; here a vector expression blended with the register's old lanes). At
    /// the join every lane is back.
    fn masked_node(&mut self, x: usize, n: usize, plan: &Plan, labels: &HashMap<usize, usize>, body: &mut String) -> Result<(), Error> {
        let f = self.f;
        let (b, j) = plan
            .masked
            .iter()
            .map(|(&b, &j)| (b, j))
            .find(|&(b, j)| b <= n && n <= j)
            .ok_or_else(|| self.unsupported("a masked node outside its branch"))?;
        let next = |k: usize| (k + 1..=j).find(|&m| matches!(f.body[m], Node::Label(_))).unwrap_or(j);
        let branch = |e: &Self, i: &Instr, k: usize| -> Result<String, Error> {
            let Some(Op::Label(l)) = i.args.first() else { return Err(e.unsupported("an indirect branch under a mask")) };
            let t = labels.get(l).copied().ok_or_else(|| e.unsupported("a branch to no label"))?;
            let c = match i.guard {
                None => format!("~({S}vi){{}}"),
                Some((neg, p)) if plan.class[p] == Class::Uniform => format!("{S}M({}r{p})", if neg { "!" } else { "" }),
                Some((neg, p)) => format!("{}{S}M(r{p})", if neg { "~" } else { "" }),
            };
            Ok(format!("{{ const {S}vi c_ = {c}; mk{t}_ |= em_ & c_; em_ &= ~c_; if ({S}bits(em_) == 0) goto P{x}M{}_; }}", next(k)))
        };
        match &f.body[n] {
            Node::Label(_) if n == j => {
                let _ = writeln!(body, "P{x}M{n}_:; }}");
                if let Node::Label(l) = &f.body[n] {
                    let _ = writeln!(body, "P{x}B{l}:;");
                }
            }
            Node::Label(_) => {
                let _ = writeln!(body, "P{x}M{n}_:; em_ |= mk{n}_; if ({S}bits(em_) == 0) goto P{x}M{}_;", next(n));
            }
            Node::Instr(i) if n == b => {
                let mut open = format!("  {{ {S}vi em_ = ~({S}vi){{}};");
                for k in (b + 1..=j).filter(|&k| matches!(f.body[k], Node::Label(_))) {
                    let _ = write!(open, " {S}vi mk{k}_ = {{}};");
                }
                let _ = writeln!(body, "{open} // both ways under masks to PTX line {}", line_of(f, next(b)));
                let _ = writeln!(body, "  {} // {}", branch(self, i, n)?, i.src.line);
            }
            Node::Instr(i) if i.src.op == "bra" => {
                let _ = writeln!(body, "  {} // {}", branch(self, i, n)?, i.src.line);
            }
            Node::Instr(i) => {
                let Some(Op::Reg(d)) = i.args.first() else { return Err(self.unsupported("an instruction without a result under a mask")) };
                let stmt = self.simd_instr(i, n, plan, "")?;
                let stmt = match i.guard {
                    Some((neg, p)) => format!("if ({}r{p}) {{ {stmt} }}", if neg { "!" } else { "" }),
                    None => stmt,
                };
                let _ = writeln!(body, "  {{ const auto o_ = r{d}; {{ {stmt} }} r{d} = {S}blend(em_, r{d}, o_); }} // {}", i.src.line);
            }
        }
        Ok(())
    }

    /// Both halves at a shuffle the form performs (a stop of `st` that a stretch follows),
    /// while the runner's budget allows: its permutes, then a jump to the stretch after it.
    fn performed_shuffles(&mut self, st: &Stretch, staging: &Staging, form: &SegmentForm) -> Result<String, Error> {
        let f = self.f;
        let mut body = String::new();
        for (&n, stop) in st.region.stops.iter().filter_map(|(n, s)| staging.after.get(n).map(|x| (n, (s, *x)))) {
            let (Stop::Split(id), y) = stop else { continue };
            let Node::Instr(i) = &f.body[n] else { continue };
            let (b, c) = form.up.literal[&n];
            let mode = sync_kind(i) - SYNC_SHFL_UP;
            let _ = write!(
                body,
                "  if (TO0_ == {id}u && PASS_ < BUDGET_) {{\n    ++PASS_;\n    static constexpr {S}ShflLanes L_ = {S}shfl_lanes({mode}, {b}u, {c}u);\n"
            );
            let (dests, srcs) = shuffle_members(i);
            for (j, (d, a)) in dests.iter().zip(&srcs).enumerate() {
                if d.is_none() {
                    continue;
                }
                let half = |h: u32| -> Result<String, Error> {
                    Ok(match a {
                        Op::Reg(r) => widen(staging.staged_class[&(n, *r)], Class::Vector, Ty::B32, &format!("ST{r}_{n}[{h}]"), "").0,
                        Op::Int(k) => format!("{S}V((uint32_t){}u)", *k as u32),
                        _ => return Err(self.unsupported("a shuffle's value in the vector form")),
                    })
                };
                let _ = writeln!(body, "    {S}warp_shfl(L_, {}, {}, SD{j}_{n}[0], SD{j}_{n}[1]);", half(0)?, half(1)?);
            }
            if shuffle_pred(i).is_some() {
                let _ = writeln!(body, "    {S}warp_shfl_ok(L_, SP_{n}[0], SP_{n}[1]);");
            }
            let _ = writeln!(body, "    goto P{y}_;\n  }}");
        }
        Ok(body)
    }

    /// Stop `stop` at node `node`: its answer, the registers staged there (a split point's
    /// stores, the registers live across it and its operands; a cut's live registers) and
    /// the statements that store a lane's into its frame.
    fn stop_code(&mut self, node: usize, stop: Stop, form: &SegmentForm) -> Result<StopCode, Error> {
        let (code, mut regs, mut store) = match stop {
            Stop::Split(id) => {
                let Node::Instr(i) = &self.f.body[node] else { return Err(self.unsupported("a split point that is not an instruction")) };
                let (give, _) = self.loop_collective(i, form.up.literal.contains_key(&node))?;
                let mut regs = form.up.save[id - 1].clone();
                regs.extend(&form.up.live[id - 1]);
                i.args.iter().for_each(|o| o.regs(&mut regs));
                let store: String = form.up.save[id - 1].iter().map(|r| format!("S.r{r} = r{r}; ")).collect();
                (format!("{id}u"), regs, format!("{store}{give}"))
            }
            Stop::Cut(id) => {
                let live = form.cut_live.get(&id).ok_or_else(|| self.unsupported("a cut without its live registers"))?;
                (format!("(LOOP_MID | {id}u)"), live.clone(), live.iter().map(|r| format!("S.r{r} = r{r}; ")).collect())
            }
        };
        if form.carry {
            store.push_str("S.cc = T.cc; ");
        }
        regs.sort_unstable();
        regs.dedup();
        Ok(StopCode { code, regs, store })
    }
}

/// The registers a form at barrier `k`'s resume point reads from the lanes' frames (those
/// it uses of): every register live across the barrier, whose frame copy is current there,
/// not only those the thread's own resume loads (`load`: the code to the next split point
/// reads them). A form runs on past that split point, and at a cut it stores the live
/// registers, a pointer the code after the shuffles needs among them (the fork's
/// `motion_v2` faulted on the 0 a form stored for it).
fn resumed_regs(up: &crate::uniform::Plan, k: usize) -> Vec<usize> {
    let mut regs: Vec<usize> = up.live[k].iter().chain(&up.load[k]).copied().collect();
    regs.sort_unstable();
    regs.dedup();
    regs
}

/// The PTX line of node `n` (for the generated code's comments).
fn line_of(f: &crate::resolve::Func, n: usize) -> u32 {
    match &f.body[n] {
        Node::Instr(i) => i.src.line,
        Node::Label(_) => 0,
    }
}

/// A shuffle's members (one, or a fused shuffle's, `waves`): their result registers (None
/// where discarded) and their values.
fn shuffle_members(i: &Instr) -> (Vec<Option<usize>>, Vec<Op>) {
    let reg = |o: &Op| match o {
        Op::Reg(r) => Some(*r),
        Op::Pair(d, _) => match **d {
            Op::Reg(r) => Some(r),
            _ => None,
        },
        _ => None,
    };
    match crate::waves::members(i) {
        Some((ds, vs)) => (ds.iter().map(reg).collect(), vs.to_vec()),
        None => (vec![i.args.first().and_then(reg)], i.args.get(1).cloned().into_iter().collect()),
    }
}

/// A shuffle's predicate result register (`d|p`), if it has one.
fn shuffle_pred(i: &Instr) -> Option<usize> {
    match i.args.first() {
        Some(Op::Pair(_, p)) => match **p {
            Op::Reg(r) => Some(r),
            _ => None,
        },
        _ => None,
    }
}

/// One stretch of a loop-path segment's vector form: from the segment's start (`after`
/// None), or from just after a shuffle the form performs for the whole warp (`after`: its
/// node), with the classes its live registers enter with (`seed`).
pub(super) struct Stretch {
    pub after: Option<usize>,
    pub seed: Vec<Class>,
    pub plan: Plan,
    pub region: Region,
}

/// A loop-path kernel's vector form of the segment from its start or from a barrier's
/// resume point (`simd::segment`).
pub(super) struct VectorSegment {
    /// The first from the segment's start, then those after the shuffles it performs.
    pub stretches: Vec<Stretch>,
    /// Its cuts by resume point: the node, and the registers live there.
    pub cuts: BTreeMap<usize, (usize, Vec<usize>)>,
    /// From barrier `k`'s resume point: the registers it reads from the lanes' frames.
    pub resumed: Option<(usize, Vec<usize>)>,
    /// The cuts (resume points) whose code reaches only exits (`simd::closed_tail`).
    pub tails: BTreeSet<usize>,
}

impl VectorSegment {
    /// The shuffles the form performs itself.
    pub fn shuffles(&self) -> usize {
        self.stretches.len() - 1
    }
}

/// The most stretches a form may have after shuffles, and the most rounds their classes may
/// take to settle (a loop through shuffles widens them again).
const MAX_STRETCHES: usize = 64;
const MAX_ROUNDS: usize = 16;

impl FnEmitter<'_> {
    /// The vector form of the loop-path segment from the kernel's start, where it has one
    /// worth running (it loads from memory); else why not.
    /// The vector forms of a loop-path kernel's segments, by resume point: from its start,
    /// and (a kernel of barriers alone) from each barrier's resume point, each Err with why
    /// it has none (only the start's reason is noted). Their cuts are numbered one after
    /// another from the split points' last resume point.
    pub(super) fn vector_segments(&self, up: &crate::uniform::Plan) -> Vec<(usize, Result<VectorSegment, String>)> {
        let f = self.f;
        let mut out = Vec::new();
        let mut first_cut = up.syncs.len() + 1;
        let start = self.vector_segment(up, None, first_cut);
        if let Ok(v) = &start {
            first_cut += v.cuts.len();
        }
        out.push((0, start));
        // From each barrier's resume point (a warp collective's released lanes come to the
        // runner one lane after another, never as a warp from its start).
        let barrier = |n: usize| matches!(&f.body[n], Node::Instr(i) if sync_kind(i) == 0);
        if self.kl.is_none() || !up.syncs.iter().any(|&n| barrier(n)) {
            return out;
        }
        // The classes the start's form gives the registers it writes (each checked as the
        // form reads it from the frames).
        let guess = self.start_classes(up);
        for k in (0..up.syncs.len()).filter(|&k| barrier(up.syncs[k])) {
            let resumed = crate::simd::resume_seed(f, &resumed_regs(up, k), guess.as_ref().map(|(c, w)| (c.as_slice(), w.as_slice())))
                .ok_or_else(|| "a register of its resume point the form does not hold".to_string())
                .and_then(|seed| self.vector_segment(up, Some((k, &seed)), first_cut));
            if let Ok(v) = &resumed {
                first_cut += v.cuts.len();
            }
            out.push((k + 1, resumed));
        }
        out
    }

    /// The start segment's form's classes and which registers it writes (None where it has
    /// none, whatever its work).
    fn start_classes(&self, up: &crate::uniform::Plan) -> Option<(Vec<Class>, Vec<bool>)> {
        let f = self.f;
        let kl = self.kl?;
        let splits: Vec<(usize, usize)> = up.syncs.iter().enumerate().map(|(k, &n)| (n, k + 1)).collect();
        let held = self.fused.held();
        let entry = crate::simd::Entry { start: 0, seed: None, resumed: false, elided: Some(&up.elide), held: Some(&held) };
        let (plan, region) = crate::simd::segment(f, &kl.params, &splits, &[], &entry, up.syncs.len() + 1, 0).ok()?;
        let mut written = vec![false; f.regs.len()];
        for (n, node) in f.body.iter().enumerate() {
            if let (true, Node::Instr(i)) = (region.nodes[n], node) {
                crate::resolve::writes(i).into_iter().for_each(|d| written[d] = true);
            }
        }
        Some((plan.class, written))
    }

    /// The vector form of the segment from the kernel's start, or (`resumed`: barrier `k`
    /// and its registers' classes) from that barrier's resume point; its cuts numbered from
    /// `first_cut`.
    fn vector_segment(
        &self,
        up: &crate::uniform::Plan,
        resumed: Option<(usize, &[Class])>,
        first_cut: usize,
    ) -> Result<VectorSegment, String> {
        let f = self.f;
        let kl = self.kl.ok_or("not a kernel")?;
        let held = self.fused.held();
        // Elided shuffles that are split points only where warps lost lanes: a form from the
        // kernel's start runs a whole warp and lets no lane exit on its own (an exit some
        // lanes take is a cut), so every lane is there when it reaches one: it computes it
        // as the warp's lanes do (`Entry::elided`). From a barrier's resume point: cuts.
        let conditional = |n: &usize| up.elide.contains_key(n) && !up.late;
        let splits: Vec<(usize, usize)> = up.syncs.iter().enumerate().filter(|(_, n)| !conditional(n)).map(|(k, &n)| (n, k + 1)).collect();
        let forced: Vec<usize> = if resumed.is_some() { up.syncs.iter().copied().filter(conditional).collect() } else { Vec::new() };
        let all = self.opts.segment_vectors == crate::SegmentVectors::All;
        let start = match resumed {
            None => crate::simd::Entry { start: 0, seed: None, resumed: false, elided: Some(&up.elide), held: Some(&held) },
            Some((k, seed)) => {
                crate::simd::Entry { start: up.syncs[k] + 1, seed: Some(seed), resumed: true, elided: Some(&up.elide), held: Some(&held) }
            }
        };
        let (plan, region) = crate::simd::segment(f, &kl.params, &splits, &forced, &start, first_cut, 0)?;
        if plan.load_site.is_empty() {
            let which = if resumed.is_some() { "segment after a barrier" } else { "first segment" };
            return Err(format!("its {which} loads nothing from memory the lanes differ in"));
        }
        let mut stretches = vec![Stretch { after: None, seed: Vec::new(), plan, region }];
        self.stretches_after_shuffles(up, &splits, &forced, &mut stretches);
        let work: usize = stretches.iter().map(|s| crate::simd::lane_work(f, &s.plan, &s.region)).sum::<usize>()
            + crate::simd::SHUFFLE_WORK * (stretches.len() - 1);
        // Whole: it stops only at split points or at cuts whose lanes go on to their exits
        // in its own batch (`tail_lanes`), never back to the runner one lane at a time.
        let cfg = crate::cfg::build(f);
        let closed: BTreeSet<usize> = stretches
            .iter()
            .flat_map(|s| s.region.stops.iter())
            .filter(|(&n, st)| matches!(st, Stop::Cut(_)) && crate::simd::closed_tail(f, &cfg, &up.syncs, &up.elide, n))
            .map(|(&n, _)| n)
            .collect();
        let whole = stretches.iter().all(|s| s.region.stops.iter().all(|(n, st)| matches!(st, Stop::Split(_)) || closed.contains(n)));
        let min_work = match (all, whole) {
            (true, _) => 0,
            (false, true) => crate::simd::MIN_WHOLE_WORK,
            (false, false) => crate::simd::MIN_LANE_WORK,
        };
        if work < min_work {
            return Err(crate::simd::too_little(work));
        }
        // A shared tile's fill in a loop as vectors (each pass's stores logged) ran slower
        // than its lanes one at a time: the fork's vif_cuda 45.6 -> 49.5 ms per frame, its
        // motion kernels no faster (the registers scattered at the barrier outweigh it).
        if !all && stretches.iter().any(|s| !s.plan.loop_store.is_empty()) {
            return Err("its stores inside a loop (as vectors slower than its lanes one at a time)".into());
        }
        // Each stretch's loads and stores numbered after the ones before; its cuts by node
        // (two stretches that stop at one node share its resume point).
        let (mut loads, mut stores) = (0, 0);
        let mut cut_of: BTreeMap<usize, usize> = BTreeMap::new();
        for s in &mut stretches {
            let nl = s.plan.load_ranges();
            s.plan.load_site.values_mut().for_each(|k| *k += loads);
            s.plan.store_site.values_mut().for_each(|k| *k += stores);
            loads += nl;
            stores += s.plan.store_ids;
            for (&n, stop) in s.region.stops.iter_mut() {
                if let Stop::Cut(id) = stop {
                    let next = first_cut + cut_of.len();
                    *id = *cut_of.entry(n).or_insert(next);
                }
            }
        }
        let cut_nodes: Vec<(usize, usize)> = cut_of.iter().map(|(&n, &id)| (id, n)).collect();
        let tails = cut_of.iter().filter(|(n, _)| closed.contains(n)).map(|(_, &id)| id).collect();
        let nodes: Vec<usize> = cut_nodes.iter().map(|c| c.1).collect();
        let live = crate::uniform::live_before(f, &cfg, &nodes, &up.literal);
        let cuts = cut_nodes.into_iter().zip(live).map(|((id, n), l)| (id, (n, l))).collect();
        Ok(VectorSegment { stretches, cuts, resumed: resumed.map(|(k, _)| (k, resumed_regs(up, k))), tails })
    }

    /// The stretches after the shuffles the form can perform itself (full-mask, literal
    /// lane operand and clamp: every lane's source is known), planned until the classes
    /// their live registers enter with settle. A shuffle whose stretch has no form stays a
    /// stop; where they do not settle, or a stretch on a cycle stores (it could store more
    /// than the undo log holds), or past `MAX_STRETCHES`, the form keeps only its first.
    fn stretches_after_shuffles(
        &self,
        up: &crate::uniform::Plan,
        splits: &[(usize, usize)],
        forced: &[usize],
        stretches: &mut Vec<Stretch>,
    ) {
        let f = self.f;
        let Some(kl) = self.kl else { return };
        let held = self.fused.held();
        let performs = |n: usize| {
            up.literal.contains_key(&n)
                && matches!(&f.body[n], Node::Instr(i) if (SYNC_SHFL_UP..=SYNC_SHFL_IDX).contains(&sync_kind(i))
                    && shuffle_members(i).1.iter().all(|a| matches!(a, Op::Reg(_) | Op::Int(_))))
        };
        // After a shuffle, only the shuffles the form performs are split points; the
        // others are cuts (the runner takes the lanes there in the fibers' order).
        let later_splits: Vec<(usize, usize)> = splits.iter().copied().filter(|&(n, _)| performs(n)).collect();
        let mut later_forced: Vec<usize> = forced.to_vec();
        later_forced.extend(splits.iter().map(|s| s.0).filter(|&n| !performs(n)));
        let mut refused: std::collections::HashSet<usize> = Default::default();
        for _ in 0..MAX_ROUNDS {
            let mut changed = false;
            let reached: std::collections::BTreeSet<usize> = stretches
                .iter()
                .flat_map(|s| s.region.stops.iter().filter(|(_, st)| matches!(st, Stop::Split(_))).map(|(&n, _)| n))
                .collect();
            let candidates: Vec<usize> = reached.into_iter().filter(|&n| performs(n) && !refused.contains(&n)).collect();
            for n in candidates {
                let seed = self.seed_after(up, n, stretches);
                let at = stretches.iter().position(|s| s.after == Some(n));
                if at.is_some_and(|x| stretches[x].seed == seed) {
                    continue;
                }
                changed = true;
                let entry =
                    crate::simd::Entry { start: n + 1, seed: Some(&seed), resumed: false, elided: Some(&up.elide), held: Some(&held) };
                match crate::simd::segment(f, &kl.params, &later_splits, &later_forced, &entry, 0, 0) {
                    Ok((plan, region)) => {
                        let s = Stretch { after: Some(n), seed: seed.clone(), plan, region };
                        match at {
                            Some(x) => stretches[x] = s,
                            None => stretches.push(s),
                        }
                    }
                    Err(_) => {
                        refused.insert(n);
                        if let Some(x) = at {
                            stretches.remove(x);
                        }
                    }
                }
            }
            if !changed {
                let bytes: u32 = stretches.iter().map(|s| s.plan.undo_bytes).sum();
                let cyclic = on_cycles(stretches);
                let stores_repeat = stretches.iter().zip(&cyclic).any(|(s, c)| *c && !s.plan.store_site.is_empty());
                if stretches.len() <= MAX_STRETCHES + 1 && bytes <= 4096 && !stores_repeat {
                    return;
                }
                break;
            }
        }
        stretches.truncate(1);
    }

    /// The classes the registers enter the stretch after shuffle `n` with: those staged
    /// there as the widest stretch reaching it leaves them, the shuffle's results lanes.
    fn seed_after(&self, up: &crate::uniform::Plan, n: usize, stretches: &[Stretch]) -> Vec<Class> {
        let f = self.f;
        let mut seed = vec![Class::Uniform; f.regs.len()];
        let Some(id) = up.syncs.iter().position(|&s| s == n) else { return seed };
        let Node::Instr(i) = &f.body[n] else { return seed };
        let mut regs = up.save[id].clone();
        regs.extend(&up.live[id]);
        for s in stretches.iter().filter(|s| s.region.stops.contains_key(&n)) {
            for &r in &regs {
                seed[r] = join(seed[r], s.plan.class[r]);
            }
        }
        for d in shuffle_members(i).0.into_iter().flatten().chain(shuffle_pred(i)) {
            seed[d] = Class::Vector;
        }
        seed
    }

    /// The function of `v` (`body_simd_segment`), written by an emitter of its own (its
    /// temporaries and sites), and its undo log's size. Err where a kept operand of a
    /// fused multiply would cross one of its stops (the form does not carry them).
    pub(super) fn vector_segment_fn(
        &mut self,
        k: usize,
        up: &crate::uniform::Plan,
        v: &VectorSegment,
        from: usize,
        carry: bool,
        save_kept: &[String],
    ) -> Result<(String, u32, u32), Error> {
        if from > 0 && (carry || !save_kept[from - 1].is_empty()) {
            return Err(self.unsupported("a carry flag or a fused multiply's operands across the barrier the vector form starts at"));
        }
        let splits_kept =
            v.stretches.iter().flat_map(|s| s.region.stops.values()).any(|s| matches!(s, Stop::Split(id) if !save_kept[id - 1].is_empty()));
        let cut_nodes: Vec<usize> = v.cuts.values().map(|c| c.0).collect();
        if splits_kept || self.kept_live_across(&cut_nodes).iter().any(|l| !l.is_empty()) {
            return Err(self.unsupported("a fused multiply's operands across a stop of the vector form"));
        }
        let mut e = FnEmitter::new(self.m, self.fi, self.kl, self.fused, self.opts);
        e.aligned = self.aligned.clone();
        e.aligned_arg = self.aligned_arg;
        e.folds = self.folds.clone();
        let cut_live = v.cuts.iter().map(|(&id, (_, l))| (id, l.clone())).collect();
        let form = SegmentForm { k, from, up, cut_live: &cut_live, carry };
        e.body_simd_segment(v, &form)
    }
}

/// By stretch: whether it lies on a cycle of stretches (a loop through a shuffle), where
/// it may run more than once per half (its stores could outgrow the undo log).
fn on_cycles(stretches: &[Stretch]) -> Vec<bool> {
    let of: HashMap<usize, usize> = stretches.iter().enumerate().filter_map(|(x, s)| s.after.map(|n| (n, x))).collect();
    let next: Vec<Vec<usize>> = stretches.iter().map(|s| s.region.stops.keys().filter_map(|n| of.get(n).copied()).collect()).collect();
    (0..stretches.len())
        .map(|x| {
            // Whether x reaches itself.
            let mut seen = vec![false; stretches.len()];
            let mut work = next[x].clone();
            while let Some(y) = work.pop() {
                if y == x {
                    return true;
                }
                if !std::mem::replace(&mut seen[y], true) {
                    work.extend(&next[y]);
                }
            }
            false
        })
        .collect()
}
