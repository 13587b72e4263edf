//! One function's body: registers, frame variables, operands, and the statement of every
//! instruction (the families are in `ops`).

use super::ident;
use crate::ast::{FloatLit, Space, Ty};
use crate::contract::Fusions;
use crate::layout::KernelLayout;
use crate::resolve::{AddrBase, Func, Module, Node, Op, VarRef};
use crate::{Error, Options};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

/// The C type of a PTX type.
pub(crate) fn ctype(t: Ty) -> &'static str {
    match t {
        Ty::B8 | Ty::U8 => "uint8_t",
        Ty::S8 => "int8_t",
        Ty::B16 | Ty::U16 | Ty::F16 | Ty::Bf16 | Ty::E4m3x2 | Ty::E5m2x2 => "uint16_t",
        Ty::S16 => "int16_t",
        Ty::B32 | Ty::U32 | Ty::F16x2 | Ty::Bf16x2 | Ty::Tf32 => "uint32_t",
        Ty::S32 => "int32_t",
        Ty::B64 | Ty::U64 => "uint64_t",
        Ty::S64 => "int64_t",
        Ty::F32 => "float",
        Ty::F64 => "double",
        Ty::Pred => "bool",
        Ty::B128 => "u128",
    }
}

/// The unsigned type of a size in bytes.
pub(crate) fn utype(bytes: u32) -> &'static str {
    match bytes {
        1 => "uint8_t",
        2 => "uint16_t",
        4 => "uint32_t",
        8 => "uint64_t",
        _ => "u128",
    }
}

/// What a loop-path split point is, as the runtime's `run_loops` reads it from the
/// kernel's table: a barrier (0), a shuffle (its `ptx::SH_*` mode + 1), a vote, or one of
/// the other warp collectives.
pub(crate) const SYNC_SHFL_UP: u8 = 1;
pub(crate) const SYNC_SHFL_IDX: u8 = 4;
pub(crate) const SYNC_BALLOT: u8 = 5;
pub(crate) const SYNC_UNI: u8 = 8;
pub(crate) const SYNC_ACTIVEMASK: u8 = 9;
pub(crate) const SYNC_WARP: u8 = 10;
/// match.any (32, 64 bits), match.all (32, 64 bits).
pub(crate) const SYNC_MATCH_ANY32: u8 = 11;
pub(crate) const SYNC_MATCH_ALL64: u8 = 14;
/// redux: add, min.u, min.s, max.u, max.s, and, or, xor.
pub(crate) const SYNC_REDUX_ADD: u8 = 15;
pub(crate) const SYNC_REDUX_XOR: u8 = 22;

/// Added to a shuffle's kind in a runner's kinds (`LK`) when its lane operand and clamp
/// are literals (ptx_rt.h `LOOP_LITERAL`).
pub(crate) const LOOP_LITERAL: u8 = 0x80;
/// Added to a shuffle's kind when nothing reads its predicate result (ptx_rt.h
/// `LOOP_NOPRED`: the runner does not write it).
pub(crate) const LOOP_NOPRED: u8 = 0x40;

/// The kind of split point instruction `i` (one of the plan's `syncs`: a barrier or a
/// collective `uniform::loop_collective` accepted) is (see `SYNC_*`).
/// What a loop-path kernel's note says of the vector form of its first segment.
#[derive(Clone, Copy, Debug)]
pub struct StartForm {
    /// Its cuts (the lanes go on one at a time from each).
    pub cuts: usize,
    /// The shuffles it performs itself.
    pub shuffles: usize,
    /// The cuts whose code reaches only exits (`simd::closed_tail`): the lanes run on to
    /// them in the form's own batch.
    pub tails: usize,
    /// The branches its lanes may take apart that it runs both ways under masks.
    pub masked: usize,
}

pub(crate) fn sync_kind(i: &crate::resolve::Instr) -> u8 {
    let has = |m: &str| i.src.has(m);
    match i.src.op.as_str() {
        "shfl" if has(".up") => 1,
        "shfl" if has(".down") => 2,
        "shfl" if has(".bfly") => 3,
        "shfl" => 4,
        "vote" if has(".ballot") => 5,
        "vote" if has(".any") => 6,
        "vote" if has(".all") => 7,
        "vote" => 8,
        "activemask" => SYNC_ACTIVEMASK,
        "bar" | "barrier" if has(".warp") => SYNC_WARP,
        "match" => SYNC_MATCH_ANY32 + if has(".all") { 2 } else { 0 } + if has(".b64") { 1 } else { 0 },
        "redux" => {
            let signed = has(".s32");
            if has(".add") {
                15
            } else if has(".min") {
                16 + signed as u8
            } else if has(".max") {
                18 + signed as u8
            } else if has(".and") {
                20
            } else if has(".or") {
                21
            } else {
                22
            }
        }
        _ => 0,
    }
}

pub(crate) struct FnEmitter<'a> {
    pub m: &'a Module,
    pub fi: usize,
    pub f: &'a Func,
    pub kl: Option<&'a KernelLayout>,
    pub fused: &'a Fusions,
    pub opts: &'a Options,
    pub out: String,
    /// SFU forms used (for the kernels' device-exactness).
    pub sfu: Vec<String>,
    /// Call sites of f32 special functions so far (their `sfu_memo` slots, modulo 8).
    pub memo_sites: u32,
    /// The function contains `exit`.
    pub uses_exit: bool,
    /// An entry always inlined into its runner (a barrier-free kernel, `emit`'s `inlined`).
    pub inline_entry: bool,
    /// The accesses (by node) whose alignment the runner checks once for all threads
    /// (`align::proven`): an inlined entry's `body`, which then takes the template
    /// argument `A`, and a loop-path kernel's `body_loops`, whose runner leaves a block
    /// whose check fails to the fibers' checked code (`aligned_arg` "true").
    pub aligned: std::collections::BTreeMap<usize, crate::align::Check>,
    /// What the `aligned` accesses pass for "checked by the runner": `A` or `true`.
    pub aligned_arg: &'static str,
    /// The `.const` loads (by node) the runner's checks let run as literals
    /// (`constants::folds`): where `aligned_arg` holds, the initializer's value.
    pub folds: std::collections::BTreeMap<usize, crate::constants::Fold>,
    /// An inlined entry whose threads may run as vector lanes (`lanes::plan`): its
    /// `body` takes the template argument `W` too, and the plan's statements replace
    /// their instructions' where it is true.
    pub lanes: Option<crate::lanes::Plan>,
    pub tmp: usize,
    /// Node being emitted.
    pub node: usize,
    /// Site literals (file string -> its C name).
    sites: HashMap<String, String>,
    pub(super) site_decls: String,
    /// Declarations the body needs at function scope (fused multiplies' operands).
    pub decls: String,
    /// The fused multiplies' kept operands (C type, node): `m<node>a`, `m<node>b`.
    pub kept: Vec<(&'static str, usize)>,
    /// Multiplies whose kept operands a vector form holds per lane (`mv<n>a/b`, declared).
    pub lane_kept: std::collections::BTreeSet<usize>,
    /// The loop path's chains of shuffles (`chains`): how many, and their links.
    pub chains: (usize, usize),
    /// Prefix of the site literals' names (the loop-path variant of a kernel has its own).
    pub(super) site_prefix: String,
    /// Emitting a kernel's own code (`body`, `body_loops`): `%tid` is the runner's `TI`
    /// (the thread's index, a local or its table's entry), not `ctx`, which the runners
    /// write only where the kernel calls a function (`Plan::tid_reads`, `for_each_thread`).
    pub(super) loop_tid: bool,
    /// Per register, how many operands of the body name it (filled on first use).
    reg_uses: Vec<u32>,
    nan_blind: Vec<bool>,
    /// A loop-path kernel: the vector form of its first segment (`simd::segment`), or why
    /// it has none.
    pub vector: Option<Result<StartForm, String>>,
    /// Loop path: how many barriers' resume points have a vector form.
    pub vector_resumed: usize,
    /// The prefix of the labels of the vector form's stretch being emitted.
    pub(super) labels: String,
}

impl<'a> FnEmitter<'a> {
    pub fn new(m: &'a Module, fi: usize, kl: Option<&'a KernelLayout>, fused: &'a Fusions, opts: &'a Options) -> Self {
        FnEmitter {
            m,
            fi,
            f: &m.funcs[fi],
            kl,
            fused,
            opts,
            out: String::new(),
            sfu: Vec::new(),
            memo_sites: 0,
            uses_exit: false,
            inline_entry: false,
            aligned: Default::default(),
            aligned_arg: "A",
            folds: Default::default(),
            lanes: None,
            tmp: 0,
            node: 0,
            sites: HashMap::new(),
            site_decls: String::new(),
            decls: String::new(),
            kept: Vec::new(),
            lane_kept: Default::default(),
            chains: (0, 0),
            site_prefix: "SF".into(),
            loop_tid: false,
            reg_uses: Vec::new(),
            nan_blind: Vec::new(),
            vector: None,
            vector_resumed: 0,
            labels: String::new(),
        }
    }

    pub fn is_entry(&self) -> bool {
        self.f.decl.entry
    }

    /// An error for the instruction being emitted.
    pub fn unsupported(&self, why: impl Into<String>) -> Error {
        let (instr, line) = match self.f.body.get(self.node) {
            Some(Node::Instr(i)) => (i.src.text(), i.src.line),
            _ => (String::new(), self.f.decl.line),
        };
        Error::Unsupported { instr, function: self.f.decl.name.clone(), line, why: why.into() }
    }

    /// An instruction the device's driver cannot compile into the kernel: `code` from
    /// cuModuleGetFunction under lazy loading, from the load under eager loading.
    pub fn refused_kernel(&self, code: u32, why: impl Into<String>) -> Error {
        match self.unsupported(why) {
            Error::Unsupported { instr, function, line, why } => Error::KernelRefused { what: instr, function, line, code, why },
            e => e,
        }
    }

    /// An error for the instruction being emitted that the device's driver refuses too,
    /// with its answer `code`.
    pub fn refused(&self, code: u32, why: impl Into<String>) -> Error {
        match self.unsupported(why) {
            Error::Unsupported { instr, function, line, why } => Error::DeviceRefuses { what: instr, function, line, code, why },
            e => e,
        }
    }

    /// Whether register `r` appears in an instruction other than the one being emitted
    /// (read, or written again): a vector load's lane whose register does not is dead, and
    /// ptxas narrows such loads.
    /// Whether destination `d` is a register of a kernel whose every mention is in an
    /// f32 `add`/`sub`/`mul`/`fma`/`mad` or `setp`: each gives the canonical NaN (or an
    /// unordered compare) for a NaN operand whatever its payload, so an f32 result
    /// written there need not be canonicalised (`farith<float, false>`). Device
    /// functions are left alone (their return registers leave through no instruction).
    pub fn nan_blind(&mut self, d: &Op) -> bool {
        let Op::Reg(r) = d else { return false };
        if !self.is_entry() {
            return false;
        }
        if self.nan_blind.is_empty() {
            let mut blind = vec![true; self.f.regs.len() + 1];
            let mut named = Vec::new();
            for n in &self.f.body {
                if let Node::Instr(i) = n {
                    let f32_op = i.src.mods.iter().any(|m| m == ".f32")
                        && matches!(i.src.op.as_str(), "add" | "sub" | "mul" | "fma" | "mad" | "setp")
                        && i.args.iter().all(|a| matches!(a, Op::Reg(_) | Op::Int(_) | Op::Float(_) | Op::Sink));
                    if !f32_op {
                        named_regs(i, &mut named);
                        for &r in &named {
                            if let Some(b) = blind.get_mut(r) {
                                *b = false;
                            }
                        }
                    }
                }
            }
            self.nan_blind = blind;
        }
        self.nan_blind.get(*r).copied().unwrap_or(false)
    }

    pub fn reg_read_elsewhere(&mut self, r: usize) -> bool {
        if self.reg_uses.is_empty() {
            let mut uses = vec![0u32; self.f.regs.len()];
            let mut named = Vec::new();
            for n in &self.f.body {
                if let Node::Instr(i) = n {
                    named_regs(i, &mut named);
                    for &r in &named {
                        if let Some(u) = uses.get_mut(r) {
                            *u += 1;
                        }
                    }
                }
            }
            self.reg_uses = uses;
        }
        self.reg_uses.get(r).is_some_and(|&u| u > 1)
    }

    pub fn fresh(&mut self) -> String {
        self.tmp += 1;
        format!("t{}", self.tmp)
    }

    pub fn reg_ty(&self, r: usize) -> Ty {
        self.f.regs[r].ty
    }

    /// The call site of the instruction being emitted (a `static const` site literal).
    pub fn site(&mut self) -> String {
        let (line, loc) = match self.f.body.get(self.node) {
            Some(Node::Instr(i)) => (i.src.line, i.loc),
            _ => (0, None),
        };
        let file = match loc.and_then(|(file, l)| self.m.files.get(&file).map(|n| (n.clone(), l))) {
            Some((name, l)) => {
                let short = name.rsplit('/').next().unwrap_or(&name).to_string();
                format!("{short}:{l}, {}", self.opts.name)
            }
            None => self.opts.name.clone(),
        };
        let n = self.sites.len();
        let fi = self.fi;
        let prefix = &self.site_prefix;
        let fname = self.sites.entry(file.clone()).or_insert_with(|| format!("{prefix}{fi}_{n}")).clone();
        if !self.site_decls.contains(&format!(" {fname}[]")) {
            let _ = writeln!(self.site_decls, "static const char {fname}[] = {};", super::c_str(&file));
        }
        format!("(simtwin_site_t{{{fname}, {line}u, 0u}})")
    }

    /// The PTX line of the instruction being emitted.
    pub fn line(&self) -> u32 {
        match self.f.body.get(self.node) {
            Some(Node::Instr(i)) => i.src.line,
            _ => 0,
        }
    }

    // ---- operands --------------------------------------------------------------------

    /// The value of a special register as a uint64_t expression.
    fn special(&self, name: &str) -> Result<(String, u32), Error> {
        let (base, comp) = match name.rsplit_once('.') {
            Some((b, c)) if matches!(c, "x" | "y" | "z") => (b, Some(c)),
            _ => (name, None),
        };
        let c = comp.unwrap_or("x");
        let v = match base {
            "%tid" if self.loop_tid => format!("TI.{c}"),
            "%tid" => format!("T.ctx->thread_idx.{c}"),
            "%ntid" => format!("T.bdim.{c}"),
            "%ctaid" | "%clusterid" => format!("T.bidx.{c}"),
            "%nctaid" | "%nclusterid" => format!("T.gdim.{c}"),
            "%cluster_ctaid" | "%cluster_ctarank" | "%is_explicit_cluster" => "0u".into(),
            "%cluster_nctaid" | "%cluster_nctarank" => "1u".into(),
            "%laneid" => "(T.ctx->linear_tid & 31u)".into(),
            "%warpid" => "(T.ctx->linear_tid >> 5)".into(),
            "%nwarpid" => "64u".into(),
            "%smid" => format!(
                "(uint32_t)(((uint64_t)T.bidx.x + (uint64_t)T.gdim.x * ((uint64_t)T.bidx.y + (uint64_t)T.gdim.y * T.bidx.z)) % {}u)",
                self.opts.sm_count
            ),
            "%nsmid" => format!("{}u", self.opts.sm_count),
            "%gridid" => return Ok(("(uint64_t)1".into(), 8)),
            "%lanemask_eq" => "lanemask(T, 0)".into(),
            "%lanemask_le" => "lanemask(T, 1)".into(),
            "%lanemask_lt" => "lanemask(T, 2)".into(),
            "%lanemask_ge" => "lanemask(T, 3)".into(),
            "%lanemask_gt" => "lanemask(T, 4)".into(),
            "%clock" => "(uint32_t)::__simtwin::rt->clock()".into(),
            "%clock_hi" => "(uint32_t)(::__simtwin::rt->clock() >> 32)".into(),
            "%clock64" | "%globaltimer" => return Ok(("::__simtwin::rt->clock()".into(), 8)),
            "%globaltimer_lo" => "(uint32_t)::__simtwin::rt->clock()".into(),
            "%globaltimer_hi" => "(uint32_t)(::__simtwin::rt->clock() >> 32)".into(),
            "%dynamic_smem_size" => "(uint32_t)T.ctx->dyn_smem_size".into(),
            "%total_smem_size" | "%aggr_smem_size" => "(uint32_t)T.smem_size".into(),
            "%current_graph_exec" => return Ok(("(uint64_t)0".into(), 8)),
            // A cooperative launch's grid workspace (cooperative_groups' grid_group reads
            // it as envreg1:envreg2, high:low; 0 otherwise, where grid sync traps, as on the
            // device); the other environment registers read 0.
            "%envreg1" => "(::__simtwin::rt->grid_workspace() >> 32)".into(),
            "%envreg2" => "::__simtwin::rt->grid_workspace()".into(),
            b if b.starts_with("%envreg") => "0u".into(),
            b if b.starts_with("%pm") => {
                if b.ends_with("_64") {
                    return Ok(("(uint64_t)0".into(), 8));
                }
                "0u".into()
            }
            b if b.starts_with("%reserved_smem") => "0u".into(),
            _ => return Err(self.unsupported(format!("special register {name}"))),
        };
        Ok((format!("(uint32_t)({v})"), 4))
    }

    /// The host address (uint64_t) of a variable.
    pub fn var_host(&self, v: VarRef) -> Result<String, Error> {
        Ok(match v {
            VarRef::Module(i) => {
                let var = &self.m.vars[i].var;
                match var.space {
                    Space::Shared => format!("sh(T, {})", self.shared_off(i)?),
                    Space::Global | Space::Const => format!("(uint64_t)(uintptr_t){}", ident("G", &var.name)),
                    Space::Local => return Err(self.unsupported(format!("module-scope .local variable {}", var.name))),
                    _ => return Err(self.unsupported(format!("variable {} in this state space", var.name))),
                }
            }
            VarRef::Frame(i) => format!("(uint64_t)(uintptr_t)L{i}"),
            VarRef::Param(i) => {
                if self.is_entry() {
                    let off = self.kl.map(|k| k.params[i].1).unwrap_or(0);
                    format!("(uint64_t)(uintptr_t)(P0 + {off})")
                } else {
                    format!("(uint64_t)(uintptr_t)P[{}]", self.f.decl.rets.len() + i)
                }
            }
            VarRef::Ret(i) => format!("(uint64_t)(uintptr_t)P[{i}]"),
        })
    }

    /// The shared-window offset of module variable `i`.
    fn shared_off(&self, i: usize) -> Result<String, Error> {
        if self.is_entry() {
            match self.kl.and_then(|k| k.shared[i]) {
                Some(o) => Ok(format!("(uint64_t){o}u")),
                None => Err(self.unsupported("shared variable outside the kernel's window")),
            }
        } else {
            Ok(format!("(uint64_t)T.soff[{i}]"))
        }
    }

    /// The value of a variable's name used as an operand: its address in its own state
    /// space (shared: the window offset; everything else: the host address).
    fn var_value(&self, v: VarRef) -> Result<String, Error> {
        if let VarRef::Module(i) = v {
            if self.m.vars[i].var.space == Space::Shared {
                return self.shared_off(i);
            }
        }
        self.var_host(v)
    }

    /// An operand's value as instruction type `t`.
    pub fn val(&mut self, op: &Op, t: Ty) -> Result<String, Error> {
        let ct = ctype(t);
        Ok(match op {
            Op::Reg(r) => {
                let rt = ctype(self.reg_ty(*r));
                if rt == ct {
                    format!("r{r}")
                } else {
                    format!("rd<{ct}>(r{r})")
                }
            }
            Op::Special(n) => {
                let (v, _) = self.special(n)?;
                if t == Ty::Pred {
                    format!("({v} != 0)")
                } else if t.float() {
                    return Err(self.unsupported(format!("special register {n} read as .{}", t.name())));
                } else {
                    format!("(({ct})(uint64_t)({v}))")
                }
            }
            Op::Int(v) => {
                if t == Ty::Pred {
                    format!("{}", *v != 0)
                } else if matches!(t, Ty::F32 | Ty::F64) {
                    format!("(({ct})(int64_t){}ll)", *v as i64)
                } else if t == Ty::B128 {
                    format!("((u128){v}ull)")
                } else {
                    format!("(({ct}){v}ull)")
                }
            }
            Op::Float(f) => {
                let bits = f.bits(t);
                match t {
                    Ty::F32 => format!("bc<float>((uint32_t){bits}u)"),
                    Ty::F64 => format!("bc<double>((uint64_t){bits}ull)"),
                    Ty::Pred => return Err(self.unsupported("float literal as a predicate")),
                    _ => {
                        if matches!(f, FloatLit::F64(_)) && t.size() < 8 {
                            return Err(self.unsupported("a 0d literal in an instruction narrower than 64 bits"));
                        }
                        format!("(({ct}){bits}ull)")
                    }
                }
            }
            Op::Var(v, off) => {
                let a = self.var_value(*v)?;
                format!("(({ct})({a} + (uint64_t){off}ll))")
            }
            Op::Func(g) => {
                let fname = if self.m.funcs[*g].decl.entry { format!("K{g}") } else { format!("F{g}") };
                if self.m.funcs[*g].decl.body.is_none() {
                    return Err(self.unsupported(format!("address of {}, which has no body", self.m.funcs[*g].decl.name)));
                }
                format!("(({ct})(uint64_t)(uintptr_t)&{fname})")
            }
            Op::Not(p) => {
                let v = self.val(p, Ty::Pred)?;
                format!("(!{v})")
            }
            Op::Pair(..) | Op::Vector(_) | Op::List(_) | Op::Bracket(_) | Op::Addr(..) | Op::Label(_) | Op::Named(_) | Op::Sink => {
                return Err(self.unsupported(format!("operand {op:?} where a value is expected")));
            }
        })
    }

    /// The host address (uint64_t) an address operand names in state space `space`
    /// (None: generic).
    pub fn addr(&mut self, op: &Op, space: Option<Space>) -> Result<String, Error> {
        let Op::Addr(base, off) = op else {
            return Err(self.unsupported("expected an address operand `[...]`"));
        };
        let shared = space == Some(Space::Shared);
        Ok(match base {
            AddrBase::Reg(r) => {
                // A 32-bit address register makes a 32-bit address: register + offset wraps
                // modulo 2^32 (nvcc's `[%r+4]` with %r = window - 4 reads the window's
                // first word).
                let sum = if self.reg_ty(*r).size() == 4 {
                    format!("(uint64_t)(uint32_t)(rd<uint32_t>(r{r}) + (uint32_t){off}ll)")
                } else {
                    format!("(rd<uint64_t>(r{r}) + (uint64_t){off}ll)")
                };
                if shared {
                    format!("sh(T, {sum})")
                } else {
                    sum
                }
            }
            AddrBase::Var(v) => {
                if shared || space.is_none() || matches!(v, VarRef::Module(_) | VarRef::Frame(_) | VarRef::Param(_) | VarRef::Ret(_)) {
                    let h = self.var_host(*v)?;
                    format!("({h} + (uint64_t){off}ll)")
                } else {
                    unreachable!()
                }
            }
            AddrBase::None => {
                if shared {
                    format!("sh(T, (uint64_t){off}ll)")
                } else {
                    format!("((uint64_t){off}ll)")
                }
            }
        })
    }

    /// A statement writing `expr` (of instruction type `t`) to destination `op`.
    pub fn set(&mut self, op: &Op, t: Ty, expr: &str) -> Result<String, Error> {
        Ok(match op {
            Op::Reg(r) => {
                let rt = ctype(self.reg_ty(*r));
                let ct = ctype(t);
                if rt == ct {
                    format!("r{r} = {expr};")
                } else {
                    format!("r{r} = wr<{rt}, {ct}>({expr});")
                }
            }
            Op::Sink => format!("(void)({expr});"),
            _ => return Err(self.unsupported(format!("destination {op:?}"))),
        })
    }

    // ---- the body --------------------------------------------------------------------

    /// The statements of the function's body node by node (`self.node` naming each): a
    /// label as `B<l>:;`, an instruction as `each(self, node, instr, body)` writes it.
    pub(super) fn walk_body(
        &mut self,
        mut each: impl FnMut(&mut Self, usize, &crate::resolve::Instr, &mut String) -> Result<(), Error>,
    ) -> Result<String, Error> {
        let f = self.f;
        let mut body = String::new();
        for (n, node) in f.body.iter().enumerate() {
            self.node = n;
            match node {
                Node::Label(l) => {
                    let _ = writeln!(body, "B{l}:;");
                }
                Node::Instr(i) => each(self, n, i, &mut body)?,
            }
        }
        Ok(body)
    }

    pub fn body(&mut self) -> Result<(), Error> {
        let f = self.f;
        // A kernel reads `%tid` from its runner's `TI` (ptx_rt.h `for_each_thread`); a
        // function it calls reads it from `ctx`.
        self.loop_tid = self.is_entry();
        let body = self.walk_body(|e, n, i, body| {
            let stmt = e.instr(i)?;
            match e.lanes.as_ref().and_then(|p| p.stmts.get(&n)) {
                Some(w) => push_stmt(body, i, &format!("if constexpr (W) {{ {w} }} else {{ {stmt} }}")),
                None => push_stmt(body, i, &stmt),
            }
            Ok(())
        });
        self.loop_tid = false;
        let body = body?;
        // Prologue: registers, frame variables, register parameters.
        let mut pro = String::new();
        let sig = if self.is_entry() {
            let inline = if self.inline_entry { "static inline __attribute__((always_inline)) " } else { "" };
            // A: the runner checked the alignment of the `aligned` accesses, and that the
            // `folds` variables hold their initial values.
            // W: the threads run as vector lanes (`lanes`).
            let template = match (self.aligned.is_empty() && self.folds.is_empty(), self.lanes.is_some()) {
                (_, true) => "template <bool A, bool W> ",
                (false, false) => "template <bool A> ",
                (true, false) => "",
            };
            // TX: a lanes runner's 64-bit loop counter, `%tid.x` (`lanes`).
            let tx = if self.lanes.is_some() { ", uint64_t TX = 0" } else { "" };
            format!("{template}{inline}void K{}(Thread &T, const uint8_t *P0, const simtwin_dim3_t &TI{tx})", self.fi)
        } else {
            format!("void F{}(Thread &T, uint8_t *const *P)", self.fi)
        };
        let _ = writeln!(pro, "{sig} {{");
        for (r, reg) in f.regs.iter().enumerate() {
            let _ = writeln!(pro, "  {} r{r} = 0;", ctype(reg.ty));
        }
        for r in self.lanes.iter().flat_map(|p| &p.wide) {
            let _ = writeln!(pro, "  uint64_t w{r} = 0;");
        }
        for (i, v) in f.frame.iter().enumerate() {
            let _ = writeln!(pro, "  alignas({}) uint8_t L{i}[{}];", v.align.max(8), v.size.max(1));
        }
        if !self.is_entry() {
            let nrets = f.decl.rets.len();
            for (i, p) in f.decl.params.iter().enumerate() {
                if p.space == Space::Reg {
                    let r = self.param_reg(&p.name)?;
                    let _ = writeln!(pro, "  r{r} = load<{}>((uint64_t)(uintptr_t)P[{}]);", ctype(self.reg_ty(r)), nrets + i);
                }
            }
        }
        pro.push_str(&self.decls);
        pro.push_str("  (void)T;\n");
        let mut all = std::mem::take(&mut self.site_decls);
        all.push_str(&pro);
        all.push_str(&body);
        if !self.is_entry() {
            all.push_str("  ");
            all.push_str(&self.ret_stores()?);
            all.push('\n');
        }
        all.push_str("}\n");
        self.out = all;
        Ok(())
    }

    /// The probe of a loop-path kernel with early exits (`uniform::Plan::probe`):
    /// `KP<fi>(T, P0, S)` runs one thread from its start through `probe_allowed`
    /// instructions only and answers 1 when it exits there, 0 when it reaches a split
    /// point or anything else first (nothing has happened then: the runner decides
    /// whether the block takes the loop path). Its own function, small once the compiler
    /// drops what follows the first stop on every path, so that the kernel's loop body
    /// is inlined into its runner.
    pub fn body_probe(&mut self, k: usize, plan: &crate::uniform::Plan) -> Result<(), Error> {
        let body = self.walk_body(|e, n, i, body| {
            let exit = matches!(i.src.op.as_str(), "ret" | "exit");
            if !exit && (plan.syncs.contains(&n) || !crate::uniform::probe_allowed(i)) {
                let _ = writeln!(body, "  return 0u; // {}", i.src.line);
                return Ok(());
            }
            let stmt = if exit { "return 1u;".to_string() } else { e.instr(i)? };
            push_stmt(body, i, &stmt);
            Ok(())
        })?;
        let mut all = std::mem::take(&mut self.site_decls);
        let _ = writeln!(all, "static uint32_t KP{}(Thread &T, const uint8_t *P0, FR{k} &S) {{", self.fi);
        self.frame_locals(&mut all);
        all.push_str("  (void)T; (void)P0; (void)S;\n");
        all.push_str(&body);
        all.push_str("  return 1u;\n}\n");
        self.out = all;
        Ok(())
    }

    /// The locals of a loop-path function (`KL`, `KP`): every register (0 until written),
    /// the thread's `.local` variables in its frame `S`, the kept multiplies' operands.
    fn frame_locals(&self, out: &mut String) {
        for (r, reg) in self.f.regs.iter().enumerate() {
            let _ = writeln!(out, "  {} r{r} = 0;", ctype(reg.ty));
        }
        for i in 0..self.f.frame.len() {
            let _ = writeln!(out, "  auto &L{i} = S.L{i};");
        }
        out.push_str(&self.decls);
    }

    /// For each split point (body nodes `syncs`), the kept multiplies `n` (`m<n>a/b`)
    /// live across it: some path runs from the multiply to the split point and on to an
    /// add that absorbed it (the operands hold 0 before the multiply runs, in every
    /// call, so a split point no multiply reaches needs no copy). Saving every kept
    /// pair at every split point cost VMAF's vif horizontal filter eight frame accesses
    /// per lane per shuffle.
    pub(super) fn kept_live_across(&self, syncs: &[usize]) -> Vec<Vec<usize>> {
        let cfg = crate::cfg::build(self.f);
        let nb = cfg.blocks.len();
        // Blocks reachable from each block through at least one edge (computed once per
        // block, when first asked).
        let mut after: Vec<Option<Vec<bool>>> = vec![None; nb];
        let mut reaches = |from: usize, to: usize| -> bool {
            let (bf, bt) = (cfg.block_of[from], cfg.block_of[to]);
            if bf == bt && from < to {
                return true;
            }
            after[bf].get_or_insert_with(|| {
                let mut seen = vec![false; nb];
                let mut work: Vec<usize> = cfg.blocks[bf].succs.clone();
                while let Some(x) = work.pop() {
                    if !seen[x] {
                        seen[x] = true;
                        work.extend(cfg.blocks[x].succs.iter().copied());
                    }
                }
                seen
            })[bt]
        };
        let mut out = vec![Vec::new(); syncs.len()];
        for (_, n) in &self.kept {
            let uses: Vec<usize> = self.fused.into.iter().filter(|(_, fu)| fu.mul == *n).map(|(a, _)| *a).collect();
            for (k, &s) in syncs.iter().enumerate() {
                if reaches(*n, s) && uses.iter().any(|&a| reaches(s, a)) {
                    out[k].push(*n);
                }
            }
        }
        out
    }

    /// The loop-path variant of a kernel (`uniform::Path::Loops`): `KL<fi>(T, P0, S, at)`
    /// runs one thread from resume point `at` (0: the start, k: after barrier k) to its
    /// next barrier, whose number it returns with the live registers in the thread's
    /// frame `S` (`FR<k>`: those that may be stale there are stored, `Plan::save`; a
    /// resume point loads only those read before the next, `Plan::load`), or to its
    /// exit (`ptx::LOOP_EXIT`). Also returns
    /// the frame's definition and `LS<fi>(k)`, the call site of barrier k.
    pub fn body_loops(&mut self, k: usize, plan: &crate::uniform::Plan) -> Result<String, Error> {
        let f = self.f;
        // The probe (`Plan::probe`) is a function of its own (`body_probe`): this one
        // is inlined into its runner (ptx_rt.h `run_loops` says why).
        self.site_prefix = "SL".into();
        self.loop_tid = true;
        let mut sites = Vec::new();
        // The carry flag goes through the frame only where some function of the module
        // (the kernel or one it may call) uses it.
        let carry = self.m.funcs.iter().any(|g| {
            g.body.iter().any(|n| matches!(n, Node::Instr(i) if i.src.has(".cc") || matches!(i.src.op.as_str(), "addc" | "subc" | "madc")))
        });
        let (save_cc, load_cc) = if carry { ("S.cc = T.cc; ", "T.cc = S.cc; ") } else { ("", "") };
        // Lane segments (`KS`): the code from a resume point to the next split point where
        // it is straight-line, as one loop over a batch's lanes, through conditional split
        // points (elided shuffles of a `partial` plan) in blocks of whole warps.
        // A segment may branch forward to a label before its end (an `if` around a load,
        // an early-exit test that meets again before the split point): its labels are
        // its own (`B<l>_s<from>`), and a segment whose branch would skip its end is
        // dropped.
        let mut open = vec![Segment::default()];
        let mut segments: Vec<Segment> = Vec::new();
        let label_at = crate::resolve::label_positions(f);
        // The vector forms of the segments from the kernel's start and from its barriers'
        // resume points (`simd::segment`): their cuts are resume points of the step too,
        // after the split points'.
        let planned = if self.opts.segment_vectors != crate::SegmentVectors::Off { self.vector_segments(plan) } else { Vec::new() };
        // Every form's cuts by resume point: its node, live registers and the resume point
        // its form starts at.
        let all_cuts: BTreeMap<usize, (usize, Vec<usize>, usize)> = planned
            .iter()
            .filter_map(|(from, v)| v.as_ref().ok().map(|v| (from, v)))
            .flat_map(|(&from, v)| v.cuts.iter().map(move |(&id, (n, l))| (id, (*n, l.clone(), from))))
            .collect();
        // (Two forms may cut before one node: each its own resume point there.)
        let mut cut_at: HashMap<usize, Vec<usize>> = HashMap::new();
        all_cuts.iter().for_each(|(&id, c)| cut_at.entry(c.0).or_default().push(id));
        let mut body = self.walk_body(|e, n, i, body| {
            for id in cut_at.get(&n).into_iter().flatten() {
                let _ = writeln!(body, "M{id}:;");
            }
            // A label inside a segment: other code may branch into its region.
            let mut at = n;
            while at > 0 {
                let Node::Label(l) = f.body[at - 1] else { break };
                at -= 1;
                for s in open.iter_mut() {
                    s.labelled = true;
                    s.pending.retain(|&p| p != l);
                    let _ = writeln!(s.text, "  B{l}_s{}:;", s.from);
                }
            }
            if let Some(id) = plan.syncs.iter().position(|&s| s == n) {
                // A segment whose branch jumps past this split point does not end here.
                open.retain(|s| s.pending.is_empty());
                let id = id + 1;
                sites.push(e.site());
                let mut save = String::new();
                for &r in &plan.save[id - 1] {
                    let _ = write!(save, "S.r{r} = r{r}; ");
                }
                // A warp collective: its operands go into the frame, its result
                // comes back there (the runner exchanges them over the warp).
                let (give, take) = e.loop_collective(i, plan.literal.contains_key(&n))?;
                let mut regs = Vec::new();
                named_regs(i, &mut regs);
                // A conditional split point (`Plan::partial`): a split point only where the
                // block's warps lost lanes (`T.partial`); elsewhere it is elided, its frame
                // copies stored and those its resume point loads loaded again (the frame
                // traffic is planned with it a split point: the stores of the next one
                // and the loads of the last one count on it). A `late` plan's blocks all
                // take them (its runner sets `T.partial` for every block): there they are
                // plain split points, where lane segments and chains can start.
                let elided = match plan.elide.get(&n).filter(|_| !plan.late) {
                    Some(how) => Some(format!("{}{}", frame_loads(&plan.load[id - 1]), e.elided_shuffle(i, how)?)),
                    None => None,
                };
                for seg in &mut open {
                    seg.regs.extend(regs.iter().copied());
                    seg.regs.extend(plan.save[id - 1].iter().copied());
                    if elided.is_some() {
                        seg.regs.extend(plan.load[id - 1].iter().copied());
                    }
                    match &elided {
                        None => {
                            let _ = writeln!(seg.text, "      {give}{save}SAVE_KEPT{id};");
                            seg.to = id;
                        }
                        Some(stmt) => {
                            let _ = writeln!(seg.text, "      {save}SAVE_KEPT{id};\n      if (T.partial) {{ {give}continue; }}\n      {{ {stmt} }}");
                            seg.stop.get_or_insert(id);
                        }
                    }
                }
                // A segment from a conditional split point would serve only blocks whose
                // warps lost lanes (they step each lane there): not worth its compile time.
                if elided.is_none() {
                    segments.append(&mut open);
                    let mut seg = Segment { from: id, regs: regs.clone(), ..Segment::default() };
                    seg.regs.extend(plan.load[id - 1].iter().copied());
                    let _ = writeln!(seg.text, "      {take}");
                    open.push(seg);
                }
                let taken = if take.is_empty() { String::new() } else { format!(" {{ {take} }}") };
                match elided {
                    None => {
                        let _ = writeln!(body, "  {{ {give}{save}SAVE_KEPT{id}; {save_cc}return {id}u; }} // {}\nY{id}:;{taken}", i.src.line);
                    }
                    Some(stmt) => {
                        let _ = writeln!(
                            body,
                            "  {{ {save}SAVE_KEPT{id}; if (T.partial) {{ {give}{save_cc}return {id}u; }} }} // {}\nY{id}:; if (T.partial) {{{taken} }} else {{ {stmt} }}",
                            i.src.line
                        );
                    }
                }
                return Ok(());
            }
            let exit = matches!(i.src.op.as_str(), "ret" | "exit");
            let elided = plan.elide.contains_key(&n);
            let stmt = if exit {
                "return ptx::LOOP_EXIT;".to_string()
            } else if let Some(how) = plan.elide.get(&n) {
                e.elided_shuffle(i, how)?
            } else {
                e.instr(i)?
            };
            push_stmt(body, i, &stmt);
            // A forward branch: each open segment takes it to its own copy of the label.
            if let (true, Some(Op::Label(l))) = (i.src.op == "bra", i.args.first()) {
                if label_at.get(l).is_some_and(|&t| t > n) && !stmt.contains("return") {
                    let mut regs = Vec::new();
                    named_regs(i, &mut regs);
                    for seg in &mut open {
                        seg.regs.extend(regs.iter().copied());
                        seg.pending.push(*l);
                        let own = stmt.replace(&format!("goto B{l};"), &format!("goto B{l}_s{};", seg.from));
                        push_stmt(&mut seg.text, i, &own);
                    }
                    return Ok(());
                }
            }
            match lane_step(i, &stmt, elided) {
                Some(thread) => {
                    let mut regs = Vec::new();
                    named_regs(i, &mut regs);
                    for seg in &mut open {
                        seg.regs.extend(regs.iter().copied());
                        seg.thread |= thread;
                        push_stmt(&mut seg.text, i, &stmt);
                    }
                }
                None => open.clear(),
            }
            Ok(())
        })?;
        // The kept operands of fused multiplies may straddle a split point: saved there
        // and loaded at its resume point where they are live across it.
        let kept_live = self.kept_live_across(&plan.syncs);
        let mut load_kept = Vec::new();
        let mut save_kept = Vec::new();
        for live in &kept_live {
            let (mut save, mut load) = (String::new(), String::new());
            for n in live {
                let _ = write!(save, "S.m{n}a = m{n}a; S.m{n}b = m{n}b; ");
                let _ = write!(load, "m{n}a = S.m{n}a; m{n}b = S.m{n}b; ");
            }
            save_kept.push(save);
            load_kept.push(load);
        }
        // One pass over each text (a pass per split point was most of VMAF vif's
        // translation time).
        body = fill_save_kept(&body, &save_kept);
        for seg in &mut segments {
            seg.text = fill_save_kept(&seg.text, &save_kept);
        }
        // The frame: every register live across some barrier, the .local variables, the
        // kept operands, the carry flag.
        let mut frame = format!("struct FR{k} {{\n");
        let mut live = plan.live.clone();
        live.extend(all_cuts.values().map(|c| c.1.clone()));
        for slot in frame_slots(&live) {
            match slot.as_slice() {
                [r] => {
                    let _ = writeln!(frame, "  {} r{r};", ctype(f.regs[*r].ty));
                }
                regs => {
                    let members: Vec<String> = regs.iter().map(|r| format!("{} r{r};", ctype(f.regs[*r].ty))).collect();
                    let _ = writeln!(frame, "  union {{ {} }};", members.join(" "));
                }
            }
        }
        for (i, v) in f.frame.iter().enumerate() {
            let _ = writeln!(frame, "  alignas({}) uint8_t L{i}[{}];", v.align.max(8), v.size.max(1));
        }
        for (ct, n) in &self.kept {
            let _ = writeln!(frame, "  {ct} m{n}a, m{n}b;");
        }
        let coll = plan.syncs.iter().any(|&n| matches!(&f.body[n], Node::Instr(i) if sync_kind(i) != 0));
        frame.push_str("  uint32_t cc;\n");
        // Fused shuffles (`waves`): the other members' values and results.
        let group = plan.syncs.iter().map(|&n| crate::waves::riders(&f.body[n])).max().unwrap_or(0);
        if group > 0 {
            let _ = writeln!(frame, "  uint32_t ga[{group}], gr[{group}];");
        }
        let _ = writeln!(frame, "  static constexpr uint32_t group = {group};");
        if coll {
            // The exchange of warp collectives: operands a, b, c; result and predicate.
            frame.push_str("  uint64_t xa; uint32_t xb, xc, xr; bool xp;\n  static constexpr bool collectives = true;\n};\n");
        } else {
            // A barrier kernel with a vector form: its sweeps go a warp at a time
            // (`run_sweeps`), so that each whole warp can take it.
            let vectors = planned.iter().any(|(_, v)| v.is_ok());
            let _ = writeln!(frame, "  static constexpr bool collectives = false, vectors = {vectors};\n}};");
        }
        // Inlined into its runner's loop.
        let mut pro = format!(
            "static inline __attribute__((always_inline)) uint32_t KL{}(Thread &T, const uint8_t *P0, FR{k} &S, uint32_t at, const simtwin_dim3_t &TI) {{\n",
            self.fi
        );
        self.frame_locals(&mut pro);
        pro.push_str("  (void)T; (void)P0; (void)TI;\n");
        // A resume point a segment starts at is never stepped (the runner runs the
        // segment): its code here is dead unless other code branches into it, and
        // unreachable, the compiler drops it (it was a third of VMAF vif's compile time).
        let in_segment = |id: usize| segments.iter().any(|s| s.from == id && !s.labelled);
        pro.push_str("  switch (at) {\n");
        pro.push_str(if in_segment(0) { "  case 0: __builtin_unreachable();\n" } else { "  case 0: break;\n" });
        for (id, regs) in plan.load.iter().enumerate() {
            if in_segment(id + 1) {
                let _ = writeln!(pro, "  case {}u: __builtin_unreachable();", id + 1);
                continue;
            }
            let _ = writeln!(pro, "  case {}u: {}{}{load_cc}goto Y{};", id + 1, frame_loads(regs), load_kept[id], id + 1);
        }
        for (id, (_, regs, _)) in &all_cuts {
            let _ = writeln!(pro, "  case {id}u: {}{load_cc}goto M{id};", frame_loads(regs));
        }
        pro.push_str("  default: __builtin_unreachable();\n  }\n");
        let mut all = std::mem::take(&mut self.site_decls);
        all.push_str(&pro);
        all.push_str(&body);
        all.push_str("  return ptx::LOOP_EXIT;\n}\n");
        // The lane segments: `KS<fi>(T, P0, fr, ids, nids, at, idx)` runs lanes
        // `ids[0..nids)` from resume point `at` to the split point it returns, where that
        // code is straight-line (0 otherwise: the runner steps each lane). The lanes run
        // one after another as `KL` would run them, the thread's index in `ctx` where
        // the code can read it or fault, so the runner neither dispatches nor books per
        // lane; a segment of register arithmetic alone is a loop the compiler may
        // vectorise.
        // A whole warp from the start: its two vectors of 16 first (`VS`, before `KS`).
        let mut hook = String::new();
        for (from, planned) in &planned {
            let made = match planned {
                Ok(v) => self.vector_segment_fn(k, plan, v, *from, carry, &save_kept).map(|f| (f, v)).map_err(|e| e.to_string()),
                Err(why) => Err(why.clone()),
            };
            match made {
                Ok(((func, ne, nb), v)) => {
                    all.push_str(&func);
                    // A cut whose code reaches only exits: the lanes on from there at once
                    // (ptx_rt.h `tail_lanes`).
                    let tails: String = v
                        .tails
                        .iter()
                        .map(|id| {
                            format!(
                                " if (v_ == (LOOP_MID | {id}u) && ptx::simd::passed != 1u) return ptx::tail_lanes(T, ids, idx, ptx::simd::passed, [&](uint32_t t_) {{ return KL{fi}(T, P0, fr[t_], {id}u, idx[t_]); }});",
                                fi = self.fi
                            )
                        })
                        .collect();
                    let _ = writeln!(
                        hook,
                        "  if (at == {from}u) {{ const uint32_t v_ = ptx::simd::warp_segment<{ne}, {nb}>(T, ids, nids, [&](ptx::simd::Undo<{ne}, {nb}> &UNDO) {{ return VS{fi}_{from}(T, P0, fr + ids[0], idx + ids[0], UNDO); }});{tails} if (v_ != 0u) return v_; }}",
                        fi = self.fi
                    );
                    if *from == 0 {
                        self.vector = Some(Ok(StartForm {
                            cuts: v.cuts.len(),
                            shuffles: v.shuffles(),
                            tails: v.tails.len(),
                            masked: v.stretches.iter().map(|s| s.plan.masked.len()).sum(),
                        }));
                    } else {
                        self.vector_resumed += 1;
                    }
                }
                Err(why) if *from == 0 => self.vector = Some(Err(why)),
                Err(_) => {}
            }
        }
        let _ = writeln!(
            all,
            "static inline __attribute__((always_inline)) uint32_t KS{}(Thread &T, const uint8_t *P0, FR{k} *fr, const uint32_t *ids, uint32_t nids, uint32_t at, const simtwin_dim3_t *idx) {{\n  (void)T; (void)P0; (void)fr; (void)ids; (void)nids; (void)idx;\n{hook}  switch (at) {{",
            self.fi
        );
        for seg in &mut segments {
            seg.regs.sort_unstable();
            seg.regs.dedup();
            let _ = writeln!(
                all,
                "  case {}u:\n    for (uint32_t j = 0; j < nids; ++j) {{\n      FR{k} &S = fr[ids[j]];\n      const simtwin_dim3_t &TI = idx[ids[j]]; (void)TI;",
                seg.from
            );
            if seg.thread {
                all.push_str("      T.ctx->linear_tid = ids[j];\n");
            }
            all.push_str(&seg.locals(f, &self.decls));
            for i in 0..f.frame.len() {
                let _ = writeln!(all, "      auto &L{i} = S.L{i};");
            }
            // From the start (0) nothing is loaded: the registers start at 0, as in `KL`.
            let load = match seg.from {
                0 => String::new(),
                from => format!("{}{}{load_cc}", frame_loads(&plan.load[from - 1]), load_kept[from - 1]),
            };
            let _ = writeln!(all, "      {load}");
            all.push_str(&seg.text);
            let to = match seg.stop {
                Some(stop) => format!("T.partial ? {stop}u : {}u", seg.to),
                None => format!("{}u", seg.to),
            };
            let _ = writeln!(all, "      {save_cc}\n    }}\n    return {to};");
        }
        all.push_str("  default: return 0u;\n  }\n}\n");
        // `LP<fi>[r]`: resume point `r` starts a segment of register arithmetic alone that
        // ends at a warp collective (not a conditional split point): nothing there shows
        // the lanes' order, so the runner may run a released warp as one batch (ptx_rt.h
        // `run_warps`).
        let mut pure = vec![0u8; plan.syncs.len() + 1 + all_cuts.len()];
        for seg in &segments {
            let collective = seg.to >= 1 && matches!(&f.body[plan.syncs[seg.to - 1]], Node::Instr(i) if sync_kind(i) != 0);
            if !seg.thread && seg.stop.is_none() && collective {
                pure[seg.from] = 1;
            }
        }
        all.push_str(&super::c_table("uint8_t", &format!("LP{}", self.fi), pure.iter().map(|p| format!("{p},")), "0"));
        // `KC<fi>`: the chains of shuffles a released warp runs at once (`chains`).
        let kernel = super::chains::Kernel {
            fi: self.fi,
            k,
            f,
            plan,
            pure: &pure,
            save_kept: &save_kept,
            load_kept: &load_kept,
            carry,
            group,
            decls: &self.decls,
        };
        let (chains, chain_links, links, table) = super::chains::emit(&kernel, &segments, pure.len());
        all.push_str(&chains);
        all.push_str(&super::c_table("uint32_t", &format!("LN{}", self.fi), table.iter().map(|t| format!("{t}u,")), "0u"));
        self.chains = (chain_links, links);
        // `LT<fi>[r]`: the code from resume point `r` calls a function, which reads `%tid`
        // from `ctx` (`Plan::tid_reads`; this code reads `TI`): the runner writes a
        // stepped thread's index into `ctx` only there (nothing else of the PTX mode
        // reads it; a fault names the thread by `linear_tid`).
        all.push_str(&super::c_table(
            "uint8_t",
            &format!("LT{}", self.fi),
            // A cut's code is part of the segment its form starts.
            plan.tid_reads.iter().chain(all_cuts.values().map(|c| &plan.tid_reads[c.2])).map(|&t| format!("{},", u8::from(t))),
            "0",
        ));
        let _ = writeln!(all, "static simtwin_site_t LS{}(uint32_t k) {{\n  switch (k) {{", self.fi);
        for (id, s) in sites.iter().enumerate() {
            let _ = writeln!(all, "  case {}u: return {s};", id + 1);
        }
        all.push_str("  default: return simtwin_site_t{nullptr, 0u, 0u};\n  }\n}\n");
        self.out = all;
        self.loop_tid = false;
        Ok(frame)
    }

    /// A shuffle no other lane is needed for (`uniform::elided_shuffles`; its predicate
    /// result, if any, is never read): its result set from the literal or the register.
    pub(super) fn elided_shuffle(&mut self, i: &crate::resolve::Instr, how: &crate::uniform::Elided) -> Result<String, Error> {
        let d = match self.arg(i, 0)?.clone() {
            Op::Pair(d, _) => *d,
            d => d,
        };
        let v = match how {
            crate::uniform::Elided::Value(v) => format!("(uint32_t){v}u"),
            crate::uniform::Elided::Repeat(r) => format!("r{r}"),
        };
        self.set(&d, Ty::B32, &v)
    }

    /// Reads `S.xr` (and `S.xp` into the `|p` predicate when the instruction has one) back
    /// into the result operand of a shuffle or match.
    fn take_result_and_pred(&mut self, i: &crate::resolve::Instr) -> Result<String, Error> {
        Ok(match self.arg(i, 0)?.clone() {
            Op::Pair(d, p) => format!("{} {}", self.set(&d, Ty::B32, "S.xr")?, self.set(&p, Ty::Pred, "S.xp")?),
            d => self.set(&d, Ty::B32, "S.xr")?,
        })
    }

    /// A loop-path split point's exchange: the statements that store a warp collective's
    /// operands into the thread's frame before it returns, and those that read its result
    /// back after it resumes (both empty for a barrier). The runner computes `S.xr` (and
    /// `S.xp`) as the fiber path's `shfl` / `warp` give them for 32 lanes in a full mask.
    /// A `literal` shuffle (`Plan::literal`) stores only its value: the runner takes its
    /// lane operand and clamp from the kernel's table (`LO`).
    pub(super) fn loop_collective(&mut self, i: &crate::resolve::Instr, literal: bool) -> Result<(String, String), Error> {
        let kind = sync_kind(i);
        match kind {
            0 => Ok((String::new(), String::new())),
            SYNC_SHFL_UP..=SYNC_SHFL_IDX => {
                if let Some((ds, vs)) = crate::waves::members(i) {
                    // A fused shuffle (`waves`, always `literal`): its first member's value and
                    // result in `xa`/`xr`, the others' in `ga`/`gr`; the runner moves them all
                    // with the first's source lanes (the predicate results are unread).
                    let (mut give, mut take) = (String::new(), String::new());
                    for (k, (d, v)) in ds.iter().zip(vs).enumerate() {
                        let a = self.val(v, Ty::B32)?;
                        let (x, r) = if k == 0 {
                            ("S.xa".to_string(), "S.xr".to_string())
                        } else {
                            (format!("S.ga[{}]", k - 1), format!("S.gr[{}]", k - 1))
                        };
                        let _ = write!(give, "{x} = {a}; ");
                        take.push_str(&self.set(d, Ty::B32, &r)?);
                        take.push(' ');
                    }
                    return Ok((give, take));
                }
                let a = self.val(self.arg(i, 1)?, Ty::B32)?;
                let give = if literal {
                    format!("S.xa = {a}; ")
                } else {
                    let b = self.val(self.arg(i, 2)?, Ty::U32)?;
                    let c = self.val(self.arg(i, 3)?, Ty::U32)?;
                    format!("S.xa = {a}; S.xb = {b}; S.xc = {c}; ")
                };
                let take = self.take_result_and_pred(i)?;
                Ok((give, take))
            }
            SYNC_BALLOT..=SYNC_UNI => {
                let p = self.val(self.arg(i, 1)?, Ty::Pred)?;
                let give = format!("S.xa = {p} ? 1u : 0u; ");
                let d = self.arg(i, 0)?.clone();
                let take = if kind == SYNC_BALLOT { self.set(&d, Ty::B32, "S.xr")? } else { self.set(&d, Ty::Pred, "(S.xr != 0)")? };
                Ok((give, take))
            }
            SYNC_ACTIVEMASK => {
                let d = self.arg(i, 0)?.clone();
                Ok((String::new(), self.set(&d, Ty::B32, "S.xr")?))
            }
            SYNC_WARP => Ok((String::new(), String::new())),
            SYNC_MATCH_ANY32..=SYNC_MATCH_ALL64 => {
                let t = self.ty(i)?;
                let a = self.val(self.arg(i, 1)?, t)?;
                let give = format!("S.xa = (uint64_t){a}; ");
                let take = self.take_result_and_pred(i)?;
                Ok((give, take))
            }
            SYNC_REDUX_ADD..=SYNC_REDUX_XOR => {
                let t = self.ty(i)?;
                let a = self.val(self.arg(i, 1)?, t)?;
                let give = format!("S.xa = (uint64_t)(uint32_t){a}; ");
                let d = self.arg(i, 0)?.clone();
                Ok((give, self.set(&d, t, &format!("({})S.xr", ctype(t)))?))
            }
            _ => Err(self.unsupported("a warp collective the loop path does not perform")),
        }
    }

    /// The register of a `.reg` parameter.
    pub fn param_reg(&self, name: &str) -> Result<usize, Error> {
        self.f.regs.iter().position(|r| r.name == name).ok_or_else(|| self.unsupported(format!("register parameter {name}")))
    }

    /// Stores of `.reg` return values before a return.
    pub fn ret_stores(&self) -> Result<String, Error> {
        let mut s = String::new();
        for (i, p) in self.f.decl.rets.iter().enumerate() {
            if p.space == Space::Reg {
                let r = self.param_reg(&p.name)?;
                let _ = write!(s, "store<{}>((uint64_t)(uintptr_t)P[{i}], r{r}); ", ctype(self.reg_ty(r)));
            }
        }
        Ok(s)
    }
}

/// The loads of registers `regs` from the thread's frame at a resume point.
pub(super) fn frame_loads(regs: &[usize]) -> String {
    regs.iter().map(|r| format!("r{r} = S.r{r}; ")).collect()
}

/// A lane segment under construction (`body_loops`): from resume point `from` to split
/// point `to`, its statements, the registers they name, and whether they need the
/// thread's index in `ctx` (they read it, touch memory or may fault).
#[derive(Default)]
pub(super) struct Segment {
    pub from: usize,
    pub to: usize,
    /// The first conditional split point on the way, where blocks with `T.partial` stop.
    pub stop: Option<usize>,
    /// A label lies inside: code elsewhere may branch into the region.
    pub labelled: bool,
    pub text: String,
    pub regs: Vec<usize>,
    pub thread: bool,
    /// Labels its forward branches go to that it has not reached yet.
    pub pending: Vec<usize>,
}

impl Segment {
    /// The declarations a lane's run of the segment starts with: its registers (0 until
    /// written, as in `KL`) and the function's other locals (`FnEmitter::decls`).
    pub(super) fn locals(&self, f: &Func, decls: &str) -> String {
        let mut out = String::new();
        for &r in &self.regs {
            let _ = writeln!(out, "      {} r{r} = 0;", ctype(f.regs[r].ty));
        }
        for line in decls.lines() {
            let _ = writeln!(out, "    {line}");
        }
        out
    }
}

/// `text` with each `SAVE_KEPT<id>;` mark replaced by `saves[id - 1]` (the stores of the
/// kept operands live across split point `id`).
fn fill_save_kept(text: &str, saves: &[String]) -> String {
    const MARK: &str = "SAVE_KEPT";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let after = &rest[at + MARK.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        match (after[..digits].parse::<usize>(), after[digits..].starts_with(';')) {
            (Ok(id), true) if id >= 1 && id <= saves.len() => {
                out.push_str(&saves[id - 1]);
                rest = &after[digits + 1..];
            }
            _ => {
                out.push_str(MARK);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether an instruction may run in a lane segment (`None`: it branches, calls or
/// exits, so the lane's next split point is not known), and whether it needs the
/// thread's index in `ctx` (`Some(true)`) or is register arithmetic alone.
fn lane_step(i: &crate::resolve::Instr, stmt: &str, elided: bool) -> Option<bool> {
    if matches!(i.src.op.as_str(), "bra" | "brx" | "call" | "ret" | "exit") || stmt.contains("goto") || stmt.contains("return") {
        return None;
    }
    Some(!lane_pure(i, stmt, elided))
}

/// Register arithmetic only: nothing that reads memory, the thread's identity or state,
/// the carry flag or the clock, or that can trap.
fn lane_pure(i: &crate::resolve::Instr, stmt: &str, elided: bool) -> bool {
    let op = i.src.op.as_str();
    // `uniform`'s list (integer division reports division by zero at its site, which
    // the text check below refuses).
    let arith = crate::uniform::PURE.contains(&op) || matches!(op, "bmsk" | "szext");
    fn plain(o: &Op) -> bool {
        match o {
            Op::Reg(_) | Op::Int(_) | Op::Float(_) | Op::Sink => true,
            Op::Vector(v) | Op::List(v) => v.iter().all(plain),
            Op::Pair(a, b) => plain(a) && plain(b),
            Op::Not(a) => plain(a),
            _ => false,
        }
    }
    let names_thread = stmt.char_indices().any(|(at, c)| {
        c == 'T'
            && !stmt[..at].ends_with(|p: char| p.is_ascii_alphanumeric() || p == '_')
            && !stmt[at + 1..].starts_with(|p: char| p.is_ascii_alphanumeric() || p == '_')
    });
    (arith || elided)
        && i.args.iter().all(plain)
        && !names_thread
        && !["rt->", "simtwin_site_t", "S.", "trap", "unsupported", "load", "store"].iter().any(|w| stmt.contains(w))
}

/// The registers instruction `i` names (its operands' and its guard's), into `out`.
fn named_regs(i: &crate::resolve::Instr, out: &mut Vec<usize>) {
    out.clear();
    i.args.iter().for_each(|o| o.regs(out));
    out.extend(i.guard.map(|(_, p)| p));
}

/// One instruction's statement in a body: under its guard, braced (a goto may jump over
/// the statement's temporaries), with its PTX line.
pub(super) fn push_stmt(body: &mut String, i: &crate::resolve::Instr, stmt: &str) {
    match i.guard {
        Some((neg, p)) if !stmt.is_empty() => {
            let _ = writeln!(body, "  if ({}r{p}) {{ {stmt} }} // {}", if neg { "!" } else { "" }, i.src.line);
        }
        _ => {
            let _ = writeln!(body, "  {{ {stmt} }} // {}", i.src.line);
        }
    }
}

/// The loop path's frame slots: the registers live across some split point, those never
/// live across the same one sharing a slot (an anonymous union in the frame, so the
/// code's `S.r<n>` names stay). A register's frame copy is needed only while it is live
/// across the split points between its save and its load (`Plan::save` stores it at
/// every split point where the copy may be stale), so two registers never live across
/// the same split point never need their copies at once. VMAF vif's horizontal filters
/// have 250 such registers but at most a few dozen live across any one split point: a
/// frame per thread of ~1.5 KB put a warp's frames out of the first-level cache.
fn frame_slots(live: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut regs: Vec<usize> = live.iter().flatten().copied().collect();
    regs.sort_unstable();
    regs.dedup();
    // The split points each register is live across.
    let at: std::collections::HashMap<usize, Vec<usize>> =
        regs.iter().map(|&r| (r, live.iter().enumerate().filter(|(_, l)| l.contains(&r)).map(|(k, _)| k).collect())).collect();
    // Greedy: each register in order joins the first slot none of whose registers is
    // live across one of its split points.
    let mut slots: Vec<(Vec<usize>, std::collections::BTreeSet<usize>)> = Vec::new();
    for &r in &regs {
        let mine = &at[&r];
        match slots.iter_mut().find(|(_, busy)| mine.iter().all(|k| !busy.contains(k))) {
            Some((members, busy)) => {
                members.push(r);
                busy.extend(mine.iter().copied());
            }
            None => slots.push((vec![r], mine.iter().copied().collect())),
        }
    }
    slots.into_iter().map(|(m, _)| m).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn save_kept_marks_are_filled_in_one_pass() {
        let saves = vec!["S.m1a = m1a; ".to_string(), String::new()];
        let text = "a SAVE_KEPT1; b SAVE_KEPT2; c SAVE_KEPT3; SAVE_KEPTx SAVE_KEPT1";
        assert_eq!(super::fill_save_kept(text, &saves), "a S.m1a = m1a;  b  c SAVE_KEPT3; SAVE_KEPTx SAVE_KEPT1");
    }
}
