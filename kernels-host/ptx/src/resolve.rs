//! Pass `resolve`: names to symbols. Every register, variable, parameter, label and
//! function an instruction names is looked up in its scope (nested `{ }` blocks shadow
//! outer names; registers declared `%r<N>` expand to `%r0..%r{N-1}`), and each function
//! becomes a flat list of labels and instructions over numbered registers: the form the
//! control-flow graph, the contraction model and the emitter share.

use crate::ast::{self, Init, Linkage, Operand, Space, Stmt, Ty};
use crate::Error;
use std::collections::HashMap;

/// A register of a function.
#[derive(Clone, Debug)]
pub struct Reg {
    /// The PTX name (for messages).
    pub name: String,
    /// Declared type.
    pub ty: Ty,
}

/// Where a variable lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarRef {
    /// Module variable i (global, const, shared, or a function-scope .shared/.global
    /// hoisted to module scope).
    Module(usize),
    /// Per-invocation variable i of the function (.local, call-site .param).
    Frame(usize),
    /// The function's parameter i.
    Param(usize),
    /// The function's return parameter i.
    Ret(usize),
}

/// A resolved operand.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Register, with a vector component for `.v2/.v4` registers.
    Reg(usize),
    /// A special register (`%tid.x`), as written.
    Special(String),
    /// The address of a variable plus an offset.
    Var(VarRef, i64),
    /// The address of a function.
    Func(usize),
    /// A label (branch target).
    Label(usize),
    /// A call prototype or branch-target list (by name).
    Named(String),
    /// Integer literal.
    Int(u64),
    /// Float literal.
    Float(ast::FloatLit),
    /// `[base + off]`.
    Addr(AddrBase, i64),
    /// `{...}`.
    Vector(Vec<Op>),
    /// `a|b`.
    Pair(Box<Op>, Box<Op>),
    /// `!p`.
    Not(Box<Op>),
    /// `(...)`.
    List(Vec<Op>),
    /// `[a, b, ...]` (texture forms).
    Bracket(Vec<Op>),
    /// `_`.
    Sink,
}

impl Op {
    /// Every register the operand names (an address's base register included), in order.
    pub fn regs(&self, out: &mut Vec<usize>) {
        match self {
            Op::Reg(r) | Op::Addr(AddrBase::Reg(r), _) => out.push(*r),
            Op::Vector(v) | Op::List(v) | Op::Bracket(v) => v.iter().for_each(|o| o.regs(out)),
            Op::Pair(a, b) => {
                a.regs(out);
                b.regs(out);
            }
            Op::Not(a) => a.regs(out),
            _ => {}
        }
    }
}

/// The base of an address operand.
#[derive(Clone, Debug, PartialEq)]
pub enum AddrBase {
    /// A register holding an address.
    Reg(usize),
    /// A variable.
    Var(VarRef),
    /// No base: an absolute address.
    None,
}

/// A resolved instruction.
#[derive(Clone, Debug)]
pub struct Instr {
    /// As written.
    pub src: ast::Instr,
    /// Guard: (negated, predicate register).
    pub guard: Option<(bool, usize)>,
    /// Operands.
    pub args: Vec<Op>,
    /// `.loc` in force (file index, line), if any.
    pub loc: Option<(u32, u32)>,
}

/// A statement of a flat body.
#[derive(Clone, Debug)]
pub enum Node {
    /// A label.
    Label(usize),
    /// An instruction.
    Instr(Instr),
}

/// A per-invocation variable (.local, or a .param declared at a call site).
#[derive(Clone, Debug)]
pub struct FrameVar {
    /// PTX name.
    pub name: String,
    /// Space (Local or Param).
    pub space: Space,
    /// Bytes.
    pub size: u64,
    /// Alignment.
    pub align: u64,
    /// Initializer (only .local may have none; kept for completeness).
    pub init: Option<Init>,
}

/// A call prototype declared in a body.
#[derive(Clone, Debug)]
pub struct Proto {
    /// Name.
    pub name: String,
    /// Return parameters.
    pub rets: Vec<ast::Param>,
    /// Parameters.
    pub params: Vec<ast::Param>,
}

/// A resolved function.
#[derive(Clone, Debug)]
pub struct Func {
    /// The declaration.
    pub decl: ast::Function,
    /// Registers.
    pub regs: Vec<Reg>,
    /// Per-invocation variables.
    pub frame: Vec<FrameVar>,
    /// Label names by index.
    pub labels: Vec<String>,
    /// The body (empty for declarations).
    pub body: Vec<Node>,
    /// Prototypes declared in the body.
    pub protos: Vec<Proto>,
    /// Branch-target lists by name.
    pub branch_targets: HashMap<String, Vec<usize>>,
}

/// A module variable.
#[derive(Clone, Debug)]
pub struct ModVar {
    /// The declaration (function-scope ones are renamed unique).
    pub var: ast::Var,
    /// The function that declared it, for function-scope variables.
    pub owner: Option<usize>,
}

/// A resolved module.
#[derive(Clone, Debug)]
pub struct Module {
    /// The parsed module's header data.
    pub ast: ast::Module,
    /// Module variables.
    pub vars: Vec<ModVar>,
    /// Functions, in order (declarations included).
    pub funcs: Vec<Func>,
    /// `.file` names.
    pub files: std::collections::BTreeMap<u32, String>,
}

impl Module {
    /// Function index by name.
    pub fn func(&self, name: &str) -> Option<usize> {
        self.funcs.iter().position(|f| f.decl.name == name)
    }
}

/// Special registers: the names an instruction may read that no `.reg` declares.
pub fn is_special(name: &str) -> bool {
    let base = name.split('.').next().unwrap_or(name);
    matches!(
        base,
        "%tid"
            | "%ntid"
            | "%ctaid"
            | "%nctaid"
            | "%laneid"
            | "%warpid"
            | "%nwarpid"
            | "%smid"
            | "%nsmid"
            | "%gridid"
            | "%lanemask_eq"
            | "%lanemask_le"
            | "%lanemask_lt"
            | "%lanemask_ge"
            | "%lanemask_gt"
            | "%clock"
            | "%clock_hi"
            | "%clock64"
            | "%globaltimer"
            | "%globaltimer_lo"
            | "%globaltimer_hi"
            | "%dynamic_smem_size"
            | "%total_smem_size"
            | "%aggr_smem_size"
            | "%clusterid"
            | "%nclusterid"
            | "%cluster_ctaid"
            | "%cluster_nctaid"
            | "%cluster_ctarank"
            | "%cluster_nctarank"
            | "%is_explicit_cluster"
            | "%current_graph_exec"
            | "%reserved_smem_offset_begin"
            | "%reserved_smem_offset_end"
            | "%reserved_smem_offset_cap"
            | "%reserved_smem_offset_0"
            | "%reserved_smem_offset_1"
    ) || (base.starts_with("%envreg") && base[7..].parse::<u32>().map(|n| n < 32).unwrap_or(false))
        || (base.starts_with("%pm") && base[3..].trim_end_matches("_64").parse::<u32>().map(|n| n < 8).unwrap_or(false))
}

#[derive(Default)]
struct Scope {
    regs: HashMap<String, usize>,
    vars: HashMap<String, VarRef>,
}

struct FnResolver<'a> {
    module_vars: &'a HashMap<String, usize>,
    funcs: &'a HashMap<String, usize>,
    f: Func,
    scopes: Vec<Scope>,
    label_ids: HashMap<String, usize>,
    loc: Option<(u32, u32)>,
    hoisted: Vec<ast::Var>,
    fname: String,
}

/// Resolves a parsed module.
pub fn resolve(m: ast::Module) -> Result<Module, Error> {
    let mut module_vars: HashMap<String, usize> = HashMap::new();
    let mut vars: Vec<ModVar> = Vec::new();
    for v in &m.vars {
        if let Some(&i) = module_vars.get(&v.name) {
            // An .extern declaration followed by the definition (or the reverse): keep
            // the definition.
            if vars[i].var.linkage == Linkage::Extern && v.linkage != Linkage::Extern {
                vars[i].var = v.clone();
            }
            continue;
        }
        module_vars.insert(v.name.clone(), vars.len());
        vars.push(ModVar { var: v.clone(), owner: None });
    }
    let mut funcs: HashMap<String, usize> = HashMap::new();
    let mut decls: Vec<ast::Function> = Vec::new();
    for f in &m.funcs {
        match funcs.get(&f.name) {
            Some(&i) => {
                if decls[i].body.is_none() && f.body.is_some() {
                    decls[i] = f.clone();
                } else if f.body.is_some() {
                    return Err(Error::parse(f.line, format!("function {} is defined twice", f.name)));
                }
            }
            None => {
                funcs.insert(f.name.clone(), decls.len());
                decls.push(f.clone());
            }
        }
    }
    // Function-scope .shared/.global/.const variables are module variables reachable
    // only from their function: hoisted first so every function sees the indices.
    let mut out_funcs = Vec::with_capacity(decls.len());
    for (fi, d) in decls.iter().enumerate() {
        let mut r = FnResolver {
            module_vars: &module_vars,
            funcs: &funcs,
            f: Func {
                decl: d.clone(),
                regs: Vec::new(),
                frame: Vec::new(),
                labels: Vec::new(),
                body: Vec::new(),
                protos: Vec::new(),
                branch_targets: HashMap::new(),
            },
            scopes: vec![Scope::default()],
            label_ids: HashMap::new(),
            loc: None,
            hoisted: Vec::new(),
            fname: d.name.clone(),
        };
        for (i, p) in d.params.iter().enumerate() {
            r.declare_param(p, VarRef::Param(i))?;
        }
        for (i, p) in d.rets.iter().enumerate() {
            r.declare_param(p, VarRef::Ret(i))?;
        }
        if let Some(body) = &d.body {
            r.collect_labels(body)?;
            r.block(body, 0, &mut vars, fi)?;
        }
        out_funcs.push(r.f);
    }
    Ok(Module { files: m.files.clone(), ast: m, vars, funcs: out_funcs })
}

impl FnResolver<'_> {
    fn declare_param(&mut self, p: &ast::Param, r: VarRef) -> Result<(), Error> {
        if p.space == Space::Reg {
            // A register parameter: a register of the function, bound at the call.
            let id = self.f.regs.len();
            self.f.regs.push(Reg { name: p.name.clone(), ty: p.ty });
            self.scopes[0].regs.insert(p.name.clone(), id);
            // The index maps through VarRef as well so calls can find it.
            self.scopes[0].vars.insert(p.name.clone(), r);
        } else {
            self.scopes[0].vars.insert(p.name.clone(), r);
        }
        Ok(())
    }

    fn collect_labels(&mut self, body: &[Stmt]) -> Result<(), Error> {
        for s in body {
            match s {
                Stmt::Label { line, name } => {
                    if self.label_ids.contains_key(name) {
                        return Err(Error::parse(*line, format!("label {name} is defined twice in {}", self.fname)));
                    }
                    self.label_ids.insert(name.clone(), self.f.labels.len());
                    self.f.labels.push(name.clone());
                }
                Stmt::Block(b) => self.collect_labels(b)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn lookup_reg(&self, name: &str) -> Option<usize> {
        self.scopes.iter().rev().find_map(|s| s.regs.get(name).copied())
    }
    fn lookup_var(&self, name: &str) -> Option<VarRef> {
        self.scopes.iter().rev().find_map(|s| s.vars.get(name).copied()).or_else(|| self.module_vars.get(name).map(|&i| VarRef::Module(i)))
    }

    fn block(&mut self, body: &[Stmt], depth: usize, vars: &mut Vec<ModVar>, fi: usize) -> Result<(), Error> {
        if depth > 0 {
            self.scopes.push(Scope::default());
        }
        for s in body {
            match s {
                Stmt::Reg { line, ty, vector, names } => {
                    for (n, count) in names {
                        let comps: Vec<String> = if *vector > 1 {
                            ["x", "y", "z", "w"].iter().take(*vector as usize).map(|c| format!("{n}.{c}")).collect()
                        } else {
                            vec![n.clone()]
                        };
                        match count {
                            Some(k) => {
                                if *k > 1 << 20 {
                                    return Err(Error::parse(*line, format!("{n}<{k}>: too many registers")));
                                }
                                for j in 0..*k {
                                    for c in &comps {
                                        let name = if *vector > 1 {
                                            let (b, comp) = c.rsplit_once('.').unwrap_or((c, ""));
                                            format!("{b}{j}.{comp}")
                                        } else {
                                            format!("{c}{j}")
                                        };
                                        self.add_reg(name, *ty);
                                    }
                                }
                            }
                            None => {
                                for c in comps {
                                    self.add_reg(c, *ty);
                                }
                            }
                        }
                    }
                }
                Stmt::Var(v) => match v.space {
                    Space::Local | Space::Param => {
                        let id = self.f.frame.len();
                        self.f.frame.push(FrameVar {
                            name: v.name.clone(),
                            space: v.space,
                            size: v.size(),
                            align: v.alignment(),
                            init: v.init.clone(),
                        });
                        let scope = self.scopes.last_mut().expect("scope");
                        scope.vars.insert(v.name.clone(), VarRef::Frame(id));
                    }
                    _ => {
                        // .shared / .global / .const at function scope: one per module.
                        let mut hv = v.clone();
                        hv.name = format!("{}${}", v.name, fi);
                        let id = vars.len();
                        vars.push(ModVar { var: hv.clone(), owner: Some(fi) });
                        self.hoisted.push(hv);
                        self.scopes.last_mut().expect("scope").vars.insert(v.name.clone(), VarRef::Module(id));
                    }
                },
                Stmt::Label { name, .. } => {
                    let id = self.label_ids[name];
                    self.f.body.push(Node::Label(id));
                }
                Stmt::Loc { file, line } => self.loc = Some((*file, *line)),
                Stmt::Block(b) => self.block(b, depth + 1, vars, fi)?,
                Stmt::Prototype { name, rets, params, .. } => {
                    self.f.protos.push(Proto { name: name.clone(), rets: rets.clone(), params: params.clone() });
                }
                Stmt::BranchTargets { line, name, labels } => {
                    let mut ids = Vec::new();
                    for l in labels {
                        ids.push(*self.label_ids.get(l).ok_or_else(|| Error::parse(*line, format!("unknown label {l}")))?);
                    }
                    self.f.branch_targets.insert(name.clone(), ids);
                }
                Stmt::Instr(i) => {
                    let ri = self.instr(i)?;
                    self.f.body.push(Node::Instr(ri));
                }
            }
        }
        if depth > 0 {
            self.scopes.pop();
        }
        Ok(())
    }

    fn add_reg(&mut self, name: String, ty: Ty) {
        let id = self.f.regs.len();
        self.f.regs.push(Reg { name: name.clone(), ty });
        self.scopes.last_mut().expect("scope").regs.insert(name, id);
    }

    fn instr(&mut self, i: &ast::Instr) -> Result<Instr, Error> {
        let guard = match &i.guard {
            Some((neg, p)) => Some((*neg, self.lookup_reg(p).ok_or_else(|| Error::parse(i.line, format!("unknown predicate {p}")))?)),
            None => None,
        };
        let mut args = Vec::with_capacity(i.args.len());
        for a in &i.args {
            args.push(self.operand(a, i)?);
        }
        Ok(Instr { src: i.clone(), guard, args, loc: self.loc })
    }

    fn name(&self, n: &str, i: &ast::Instr) -> Result<Op, Error> {
        if let Some(r) = self.lookup_reg(n) {
            return Ok(Op::Reg(r));
        }
        if let Some(v) = self.lookup_var(n) {
            return Ok(Op::Var(v, 0));
        }
        if is_special(n) {
            return Ok(Op::Special(n.to_string()));
        }
        // PTX's one predefined constant (PTX ISA, "Predefined Identifiers"); numba writes it.
        if n == "WARP_SZ" {
            return Ok(Op::Int(32));
        }
        if let Some(&f) = self.funcs.get(n) {
            return Ok(Op::Func(f));
        }
        if let Some(&l) = self.label_ids.get(n) {
            return Ok(Op::Label(l));
        }
        if self.f.protos.iter().any(|p| p.name == n) || self.f.branch_targets.contains_key(n) {
            return Ok(Op::Named(n.to_string()));
        }
        // Prototypes and branch-target lists may be declared after their use.
        if matches!(i.op.as_str(), "call" | "brx") {
            return Ok(Op::Named(n.to_string()));
        }
        Err(Error::parse(i.line, format!("`{n}` is not declared ({} in {})", i.text(), self.fname)))
    }

    fn operand(&self, a: &Operand, i: &ast::Instr) -> Result<Op, Error> {
        Ok(match a {
            Operand::Name(n) => self.name(n, i)?,
            Operand::Sink => Op::Sink,
            Operand::Int(v) => Op::Int(*v),
            Operand::Float(f) => Op::Float(*f),
            Operand::SymOff(n, off) => match self.name(n, i)? {
                Op::Var(v, o) => Op::Var(v, o + off),
                _ => return Err(Error::parse(i.line, format!("`{n}+{off}`: {n} is not a variable"))),
            },
            Operand::Addr { base, offset } => {
                let b = match base {
                    None => AddrBase::None,
                    Some(n) => match self.name(n, i)? {
                        Op::Reg(r) => AddrBase::Reg(r),
                        Op::Var(v, o) => return Ok(Op::Addr(AddrBase::Var(v), o + offset)),
                        Op::Func(_) | Op::Label(_) | Op::Named(_) | Op::Special(_) => {
                            return Err(Error::parse(i.line, format!("`[{n}]` is not an address")));
                        }
                        _ => AddrBase::None,
                    },
                };
                Op::Addr(b, *offset)
            }
            Operand::Vector(v) => Op::Vector(v.iter().map(|x| self.operand(x, i)).collect::<Result<_, _>>()?),
            Operand::Pair(a, b) => Op::Pair(Box::new(self.operand(a, i)?), Box::new(self.operand(b, i)?)),
            Operand::Not(a) => Op::Not(Box::new(self.operand(a, i)?)),
            Operand::List(v) => Op::List(v.iter().map(|x| self.operand(x, i)).collect::<Result<_, _>>()?),
            Operand::Bracket(v) => Op::Bracket(v.iter().map(|x| self.operand(x, i)).collect::<Result<_, _>>()?),
        })
    }
}

/// The body node of each label of `f`.
pub(crate) fn label_positions(f: &Func) -> HashMap<usize, usize> {
    f.body.iter().enumerate().filter_map(|(n, node)| if let Node::Label(l) = node { Some((*l, n)) } else { None }).collect()
}

/// The length of the code every path through `f` runs first: its body up to the first
/// label, branch, return, trap or call.
pub(crate) fn first_block_len(f: &Func) -> usize {
    f.body
        .iter()
        .position(|n| match n {
            Node::Label(_) => true,
            Node::Instr(i) => matches!(i.src.op.as_str(), "bra" | "brx" | "ret" | "exit" | "trap" | "call"),
        })
        .unwrap_or(f.body.len())
}

/// How many instructions of `f` write each register (`writes`): a register written once
/// holds one value wherever its writer has run.
pub(crate) fn write_counts(f: &Func) -> HashMap<usize, u32> {
    let mut defs: HashMap<usize, u32> = HashMap::new();
    for n in &f.body {
        if let Node::Instr(i) = n {
            for r in writes(i) {
                *defs.entry(r).or_default() += 1;
            }
        }
    }
    defs
}

/// Every register an instruction may write (destinations of any instruction, whole or
/// not), for the uniformity of values.
pub(crate) fn writes(i: &Instr) -> Vec<usize> {
    let mut w = Vec::new();
    if let Some(a) = i.args.first() {
        match i.src.op.as_str() {
            "st" | "red" | "bar" | "barrier" | "bra" | "brx" | "ret" | "exit" | "trap" | "membar" | "fence" | "prefetch" | "prefetchu"
            | "sust" | "cp" | "nanosleep" | "pmevent" | "applypriority" | "discard" => {}
            "call" => {
                if let Op::List(v) = a {
                    v.iter().for_each(|o| o.regs(&mut w));
                }
            }
            _ => match a {
                Op::Addr(..) => {}
                other => other.regs(&mut w),
            },
        }
    }
    w
}

/// Instructions whose first operand is a destination written in full (when unguarded)
/// and whose other operands are only read.
const DEFINES_FIRST: &[&str] = &[
    "mov", "ld", "ldu", "add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max", "setp", "selp", "set", "slct", "cvt", "cvta", "and",
    "or", "xor", "not", "cnot", "shl", "shr", "neg", "abs", "popc", "clz", "brev", "bfe", "bfi", "bfind", "prmt", "sad", "copysign", "rcp",
    "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh", "testp", "mul24", "mad24", "shf", "lop3", "atom", "fns", "dp4a", "dp2a", "addc",
    "subc", "madc", "shfl", "vote",
];

/// Instructions whose result depends on their operands only (the same operands give
/// the same result in every thread).
pub(crate) const PURE: &[&str] = &[
    "mov", "add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max", "setp", "selp", "set", "slct", "cvt", "cvta", "and", "or", "xor",
    "not", "cnot", "shl", "shr", "neg", "abs", "popc", "clz", "brev", "bfe", "bfi", "bfind", "prmt", "sad", "copysign", "rcp", "sqrt",
    "rsqrt", "sin", "cos", "lg2", "ex2", "tanh", "testp", "mul24", "mad24", "shf", "lop3", "fns", "dp4a", "dp2a",
];

/// (registers written, registers read) by an instruction. Writes are only those that
/// certainly replace the whole register: anything else counts as a read.
pub(crate) fn effects(i: &Instr) -> (Vec<usize>, Vec<usize>) {
    let mut defs = Vec::new();
    let mut uses = Vec::new();
    let op = i.src.op.as_str();
    let defines = DEFINES_FIRST.contains(&op);
    for (k, a) in i.args.iter().enumerate() {
        if k == 0 && defines {
            match a {
                Op::Reg(r) => defs.push(*r),
                Op::Pair(x, y) => {
                    for o in [x.as_ref(), y.as_ref()] {
                        match o {
                            Op::Reg(r) => defs.push(*r),
                            other => other.regs(&mut uses),
                        }
                    }
                }
                Op::Vector(v) => {
                    for o in v {
                        match o {
                            Op::Reg(r) => defs.push(*r),
                            other => other.regs(&mut uses),
                        }
                    }
                }
                other => other.regs(&mut uses),
            }
        } else {
            a.regs(&mut uses);
        }
    }
    if let Some((_, p)) = i.guard {
        uses.push(p);
        // A guarded write keeps the old value when the guard is false: also a read.
        uses.extend(defs.iter().copied());
    }
    (defs, uses)
}

/// The registers some instruction of `f` reads.
pub(crate) fn read_anywhere(f: &Func) -> Vec<bool> {
    let mut read = vec![false; f.regs.len()];
    for node in &f.body {
        if let Node::Instr(i) = node {
            for x in effects(i).1 {
                read[x] = true;
            }
        }
    }
    read
}
