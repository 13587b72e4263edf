//! Pass `contract`: ptxas's contraction of an unmodified `mul` and the `add`/`sub`s that
//! consume it into fused multiply-adds (FFMA, DFMA, HFMA2): the device's arithmetic. PTX
//! `mul.f32` + `add.f32` without a rounding modifier become one FFMA in sm_90 SASS, which
//! rounds once where the PTX read literally rounds twice, so a translator that wants the
//! device's bits must fuse exactly where ptxas fuses.
//!
//! The rule is the one derived by experiment in `reports/ptxas-contraction/README.md`
//! ("README" below; section numbers refer to it) and prototyped in
//! `scripts/ptxas-contraction/predict.py`; `tests/contraction_corpus.rs` checks this port
//! against the 316 hand-made cases ptxas 13.5 assembled. In short:
//!
//! - the function is cut into *regions* (basic blocks, further cut around instructions
//!   ptxas expands into code of their own blocks: §2.3);
//! - an operand's *value* is found through reaching definitions and copies (`mov`, `neg`,
//!   `selp x, x`, `×±1`, `st.local`→`ld.local`: §2.2); uses by dead code do not count, and
//!   at -O2/-O3 a repeated add in a dominating region is merged first (§2.4);
//! - contractable multiplies (§2.1) are fused into the contractable adds that use them,
//!   single-use products first, then products all of whose remaining uses can absorb them,
//!   preferring fewer uses and the first operand (§2.5); a product is duplicated into every
//!   add that absorbed it, and keeps its own multiply if some use did not;
//! - -O0 fuses nothing (§2.0).
//!
//! What a fused pair computes (§2.7) is one `fma.rn` of the multiply's operands *as they
//! were at the multiply* and the add's other operand, signs folded in: the emitter keeps
//! the operands of every absorbed multiply for that.

use crate::ast::{FloatLit, Ty};
use crate::cfg::Cfg;
use crate::resolve::{AddrBase, Func, Instr, Node, Op};
use std::collections::{BTreeMap, HashMap, HashSet};

/// ptxas's default optimisation level (and the driver JIT's).
pub const DEFAULT_OPT_LEVEL: u8 = 3;

/// One add/sub that computes an FMA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fused {
    /// The multiply's node (a `mul`, or a `div.approx/full.f32`).
    pub mul: usize,
    /// Which operand of the add/sub holds the product (1 or 2).
    pub operand: usize,
    /// The product reaches that operand negated (through `neg` or `× -1`).
    pub neg: bool,
}

/// The contraction decisions of one function (node indices of `Func::body`).
#[derive(Clone, Debug, Default)]
pub struct Fusions {
    /// add/sub node -> the multiply it absorbs. Includes adds that ptxas replaced by an
    /// identical earlier one that is fused (§2.4, `repeats`): they compute the same FMA.
    pub into: HashMap<usize, Fused>,
    /// Multiplies absorbed by at least one add (the emitter keeps their operands).
    pub absorbed: HashSet<usize>,
    /// Absorbed multiplies that keep no instruction of their own (every use absorbed them).
    pub dead: HashSet<usize>,
    /// Every contractable multiply ptxas keeps, -> whether it keeps its own FMUL.
    pub materialized: BTreeMap<usize, bool>,
    /// Adds replaced before contracting by an identical add of a dominating region (§2.4).
    pub repeats: HashMap<usize, usize>,
    /// Adds and multiplies merged after contracting into an identical one of their region
    /// (§2.6; no value changes).
    pub merged: HashMap<usize, usize>,
    /// Multiplies folded with a later multiply by 2^±k into one FMUL.M2..D8 (§2.6).
    pub scaled: HashMap<usize, (usize, &'static str)>,
    /// Instructions whose results nothing needs (ptxas removes them before contracting).
    pub removed: HashSet<usize>,
    /// Products that reach an add around a loop, which ptxas's unrolling may fuse in some
    /// iterations only (README §3): flagged, not modelled.
    pub notes: Vec<String>,
}

impl Fusions {
    /// The nodes whose f32/f64 arithmetic the emitter writes with the contraction (adds that
    /// absorb a multiply, multiplies that keep operands for one): never a vector expression.
    pub fn held(&self) -> std::collections::HashSet<usize> {
        self.into.keys().chain(&self.absorbed).copied().collect()
    }
}

impl Fusions {
    /// The rule's fused (mul node, add node) pairs in program order of the adds (repeats
    /// merged into another add left out: they follow that add).
    pub fn pairs(&self) -> Vec<(usize, usize)> {
        let mut v: Vec<(usize, usize)> =
            self.into.iter().filter(|(a, _)| !self.repeats.contains_key(a)).map(|(&a, fu)| (fu.mul, a)).collect();
        v.sort_by_key(|&(m, a)| (a, m));
        v
    }
}

// ---- instruction classes ---------------------------------------------------------------

const ROUNDING: [&str; 5] = [".rn", ".rz", ".rm", ".rp", ".rna"];

fn rounding(i: &Instr) -> bool {
    i.src.mods.iter().any(|m| ROUNDING.contains(&m.as_str()))
}

/// The instruction's type: its last type modifier.
fn ty(i: &Instr) -> Option<Ty> {
    i.src.last_ty()
}

fn float_ty(i: &Instr) -> bool {
    matches!(ty(i), Some(Ty::F32 | Ty::F64 | Ty::F16 | Ty::Bf16 | Ty::F16x2 | Ty::Bf16x2))
}

/// Instructions without a destination: every operand is read.
fn dest_less(op: &str) -> bool {
    matches!(
        op,
        "st" | "bra"
            | "brx"
            | "ret"
            | "exit"
            | "trap"
            | "bar"
            | "barrier"
            | "membar"
            | "fence"
            | "red"
            | "prefetch"
            | "prefetchu"
            | "cp"
            | "nanosleep"
            | "brkpt"
            | "sust"
            | "pmevent"
            | "griddepcontrol"
            | "setmaxnreg"
    )
}

/// `call (rets), f, (args)` writes its return list.
fn call_rets(i: &Instr) -> bool {
    i.src.op == "call" && matches!(i.args.first(), Some(Op::List(_))) && i.args.len() >= 2
}

/// Registers an instruction writes.
fn dests(i: &Instr) -> Vec<usize> {
    let mut v = Vec::new();
    if call_rets(i) {
        i.args[0].regs(&mut v);
    } else if !dest_less(&i.src.op) && i.src.op != "call" {
        if let Some(a) = i.args.first() {
            if matches!(a, Op::Reg(_) | Op::Vector(_) | Op::Pair(..)) {
                a.regs(&mut v);
            }
        }
    }
    v
}

/// Registers an instruction reads, with their source position (0 = the first source
/// operand; -1 = the guard).
fn srcs(i: &Instr) -> Vec<(i32, usize)> {
    let skip = usize::from(call_rets(i) || (!dest_less(&i.src.op) && i.src.op != "call"));
    let mut out = Vec::new();
    for (k, a) in i.args.iter().enumerate().skip(skip) {
        let mut v = Vec::new();
        a.regs(&mut v);
        out.extend(v.into_iter().map(|r| ((k - skip) as i32, r)));
    }
    if let Some((_, p)) = i.guard {
        out.push((-1, p));
    }
    out
}

fn imm_value(op: &Op) -> Option<f64> {
    match op {
        Op::Float(FloatLit::F32(b)) => Some(f32::from_bits(*b) as f64),
        Op::Float(FloatLit::F64(b)) => Some(f64::from_bits(*b)),
        Op::Float(FloatLit::Dec(v)) => Some(*v),
        Op::Int(n) => Some(*n as i64 as f64),
        _ => None,
    }
}

/// The region splitters of §2.3 (besides block ends): a product and an add on opposite
/// sides of one are not fused. IEEE div/rcp/sqrt branch to a slow path unless every
/// operand is a constant; integer division is a subroutine except for u32.
fn splits_region(i: &Instr, all_const: impl Fn() -> bool) -> bool {
    match i.src.op.as_str() {
        "membar" | "fence" | "call" | "ret" | "exit" | "trap" | "brkpt" => true,
        "div" | "rcp" | "sqrt" if matches!(ty(i), Some(Ty::F32 | Ty::F64)) => rounding(i) && !all_const(),
        "div" | "rem" => matches!(ty(i), Some(Ty::S16 | Ty::U16 | Ty::S32 | Ty::S64 | Ty::U64 | Ty::B64)),
        _ => false,
    }
}

/// PTX operations without side effects (removed by ptxas when nothing reads them).
fn pure(i: &Instr) -> bool {
    let op = i.src.op.as_str();
    if op == "ld" {
        return !(i.src.has(".volatile") || i.src.has(".acquire") || i.src.has(".relaxed"));
    }
    matches!(
        op,
        "add"
            | "sub"
            | "mul"
            | "mad"
            | "fma"
            | "div"
            | "rem"
            | "neg"
            | "abs"
            | "min"
            | "max"
            | "mov"
            | "selp"
            | "setp"
            | "cvt"
            | "cvta"
            | "and"
            | "or"
            | "xor"
            | "not"
            | "shl"
            | "shr"
            | "rcp"
            | "sqrt"
            | "rsqrt"
            | "ex2"
            | "lg2"
            | "sin"
            | "cos"
            | "tanh"
            | "copysign"
            | "testp"
            | "set"
            | "slct"
            | "bfe"
            | "bfi"
            | "prmt"
            | "popc"
            | "clz"
            | "brev"
            | "bfind"
            | "lop3"
            | "shf"
            | "cnot"
            | "mul24"
            | "mad24"
            | "sad"
            | "dp4a"
            | "dp2a"
            | "fns"
    )
}

/// `mul` of a float type, or `div.approx/full.f32`, which ptxas expands before
/// contracting into a multiply by `rcp.approx` of the divisor (§2.1).
pub fn mul_like(i: &Instr) -> bool {
    (i.src.op == "mul" && float_ty(i)) || (i.src.op == "div" && ty(i) == Some(Ty::F32) && (i.src.has(".approx") || i.src.has(".full")))
}

/// add/sub of a float type without a rounding modifier (`.sat` and a guard allowed).
pub fn contractable_add(i: &Instr) -> bool {
    matches!(i.src.op.as_str(), "add" | "sub") && float_ty(i) && i.args.len() == 3 && !rounding(i)
}

// ---- values ------------------------------------------------------------------------------

/// What an operand holds after looking through copies (§2.2).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// The result of the instruction at this node.
    Def(usize),
    /// A constant.
    Imm(f64),
    /// Several definitions reach it (a join, a loop), or none.
    Unknown,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Value {
    kind: Kind,
    neg: bool,
}

/// A comparable key of a value (for "the same product", "the same sum").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum VKey {
    Def(usize, bool),
    Imm(u64),
}

fn vkey(v: Value) -> Option<VKey> {
    match v.kind {
        Kind::Def(d) => Some(VKey::Def(d, v.neg)),
        Kind::Imm(x) => Some(VKey::Imm(x.to_bits())),
        Kind::Unknown => None,
    }
}

/// The flow facts of one function: blocks as ptxas sees them, regions, reaching
/// definitions and dominators.
struct Flow<'a> {
    f: &'a Func,
    /// Region of every node.
    region: Vec<usize>,
    /// ptxas block of every node.
    block: Vec<usize>,
    /// Dominator sets of blocks (bitsets).
    dom: Vec<Vec<u64>>,
    /// Reaching definitions of every (instruction node, register read).
    reach: HashMap<(usize, usize), Vec<usize>>,
    /// Early-CSE replacements (repeat -> the earlier add).
    alias: HashMap<usize, usize>,
    is_entry: bool,
}

fn instr(f: &Func, k: usize) -> Option<&Instr> {
    match f.body.get(k) {
        Some(Node::Instr(i)) => Some(i),
        _ => None,
    }
}

impl<'a> Flow<'a> {
    fn new(f: &'a Func, g: &Cfg) -> Flow<'a> {
        let n = f.body.len();
        // ptxas's blocks: the CFG's, except that an unreferenced label and an unguarded
        // `bra` to the very next instruction do not start one (`block_unused_label`,
        // `block_bra_next`).
        let to_next = |k: usize| -> bool {
            let Some(i) = instr(f, k) else { return false };
            if i.src.op != "bra" || i.guard.is_some() {
                return false;
            }
            let Some(Op::Label(l)) = i.args.first() else { return false };
            let mut j = k + 1;
            while j < n {
                match &f.body[j] {
                    Node::Label(x) if x == l => return true,
                    Node::Label(_) => j += 1,
                    Node::Instr(_) => return false,
                }
            }
            false
        };
        let mut targeted = vec![false; f.labels.len()];
        for (k, node) in f.body.iter().enumerate() {
            if let Node::Instr(i) = node {
                if i.src.op == "bra" && !to_next(k) {
                    if let Some(Op::Label(l)) = i.args.first() {
                        targeted[*l] = true;
                    }
                }
            }
        }
        for ls in f.branch_targets.values() {
            for &l in ls {
                targeted[l] = true;
            }
        }
        let nb = g.blocks.len();
        let mut group = vec![0usize; nb];
        for b in 1..nb {
            let prev = &g.blocks[b - 1];
            let last = (prev.start..prev.end).rev().find(|&k| instr(f, k).is_some());
            let ends = last.is_some_and(|k| {
                let op = instr(f, k).map(|i| i.src.op.as_str()).unwrap_or("");
                (op == "bra" && !to_next(k)) || matches!(op, "brx" | "ret" | "exit" | "trap")
            });
            let labelled = (g.blocks[b].start..g.blocks[b].end).any(|k| matches!(f.body[k], Node::Label(l) if targeted[l]));
            group[b] = group[b - 1] + usize::from(ends || labelled);
        }
        let ngroups = group.last().map(|g| g + 1).unwrap_or(0);
        let mut succ = vec![Vec::new(); ngroups];
        for b in 0..nb {
            let last_of_group = b + 1 == nb || group[b + 1] != group[b];
            if last_of_group {
                for &s in &g.blocks[b].succs {
                    succ[group[b]].push(group[s]);
                }
            }
        }
        let block: Vec<usize> = (0..n).map(|k| group[g.block_of[k]]).collect();
        let mut flow =
            Flow { f, region: vec![0; n], block, dom: Vec::new(), reach: HashMap::new(), alias: HashMap::new(), is_entry: f.decl.entry };
        flow.reaching(&succ, ngroups);
        flow.dominators(&succ, ngroups);
        // Regions: blocks cut before and after every splitter.
        let split: Vec<bool> = (0..n)
            .map(|k| {
                instr(f, k)
                    .is_some_and(|i| splits_region(i, || i.args.iter().skip(1).all(|a| matches!(flow.resolve(k, a).kind, Kind::Imm(_)))))
            })
            .collect();
        let mut region = 0usize;
        let mut prev: Option<(usize, bool)> = None;
        for (k, &here) in split.iter().enumerate() {
            if instr(f, k).is_some() {
                if let Some((pb, psplit)) = prev {
                    if pb != flow.block[k] || here || psplit {
                        region += 1;
                    }
                }
                prev = Some((flow.block[k], here));
            }
            flow.region[k] = region;
        }
        flow
    }

    /// Reaching definitions over ptxas's blocks (a guarded definition does not kill).
    /// Definitions are numbered (one per instruction and register it writes) and the
    /// sets are bitsets: real modules have blocks of thousands of instructions and
    /// registers (VMAF's adm_cm: 5 400 lines), where maps of lists per block were most
    /// of a module's translation time.
    fn reaching(&mut self, succ: &[Vec<usize>], nb: usize) {
        let f = self.f;
        let n = f.body.len();
        let mut ranges = vec![(usize::MAX, 0usize); nb];
        for (k, &b) in self.block.iter().enumerate() {
            ranges[b].0 = ranges[b].0.min(k);
            ranges[b].1 = k + 1;
        }
        let span = |b: usize| ranges[b].0..ranges[b].1.max(ranges[b].0);
        // Definition d = (node, register, guarded), in node order; each register's in order.
        let mut defs: Vec<(usize, usize, bool)> = Vec::new();
        let mut first_def = vec![0usize; n + 1]; // defs[first_def[k]..first_def[k + 1]] are node k's
        let mut of_reg: HashMap<usize, Vec<usize>> = HashMap::new();
        for (k, node) in f.body.iter().enumerate() {
            first_def[k] = defs.len();
            if let Node::Instr(i) = node {
                let mut ds = dests(i);
                ds.sort_unstable();
                ds.dedup();
                for r in ds {
                    of_reg.entry(r).or_default().push(defs.len());
                    defs.push((k, r, i.guard.is_some()));
                }
            }
        }
        first_def[n] = defs.len();
        let words = defs.len().div_ceil(64);
        let set = |v: &mut [u64], d: usize| v[d / 64] |= 1u64 << (d % 64);
        let has = |v: &[u64], d: usize| v[d / 64] >> (d % 64) & 1 == 1;
        // Node k's definitions applied to `cur`: an unguarded one kills its register's others.
        let apply = |cur: &mut [u64], k: usize| {
            for (d, &(_, r, guarded)) in defs.iter().enumerate().take(first_def[k + 1]).skip(first_def[k]) {
                if !guarded {
                    for &o in &of_reg[&r] {
                        cur[o / 64] &= !(1u64 << (o % 64));
                    }
                }
                set(cur, d);
            }
        };
        let mut preds = vec![Vec::new(); nb];
        for (b, ss) in succ.iter().enumerate() {
            for &s in ss {
                preds[s].push(b);
            }
        }
        let mut out = vec![vec![0u64; words]; nb];
        let mut ins = vec![vec![0u64; words]; nb];
        let mut cur = vec![0u64; words];
        let mut changed = true;
        while changed {
            changed = false;
            for b in 0..nb {
                let mut inn = vec![0u64; words];
                for &p in &preds[b] {
                    for (x, y) in inn.iter_mut().zip(&out[p]) {
                        *x |= *y;
                    }
                }
                cur.copy_from_slice(&inn);
                for k in span(b) {
                    apply(&mut cur, k);
                }
                if cur != out[b] || inn != ins[b] {
                    out[b].copy_from_slice(&cur);
                    ins[b] = inn;
                    changed = true;
                }
            }
        }
        for (b, inn) in ins.iter().enumerate() {
            cur.copy_from_slice(inn);
            for k in span(b) {
                if let Some(i) = instr(f, k) {
                    for (_, r) in srcs(i) {
                        let v: Vec<usize> =
                            of_reg.get(&r).map(|ds| ds.iter().filter(|&&d| has(&cur, d)).map(|&d| defs[d].0).collect()).unwrap_or_default();
                        self.reach.insert((k, r), v);
                    }
                    apply(&mut cur, k);
                }
            }
        }
    }

    fn dominators(&mut self, succ: &[Vec<usize>], nb: usize) {
        let words = nb.div_ceil(64);
        let mut preds = vec![Vec::new(); nb];
        for (b, ss) in succ.iter().enumerate() {
            for &s in ss {
                preds[s].push(b);
            }
        }
        let mut dom = vec![vec![u64::MAX; words]; nb];
        if nb > 0 {
            dom[0] = vec![0; words];
            dom[0][0] = 1;
        }
        let mut changed = true;
        while changed {
            changed = false;
            for b in 1..nb {
                let mut new = if preds[b].is_empty() { vec![0; words] } else { vec![u64::MAX; words] };
                for &p in &preds[b] {
                    for (w, x) in new.iter_mut().zip(&dom[p]) {
                        *w &= x;
                    }
                }
                new[b / 64] |= 1 << (b % 64);
                if new != dom[b] {
                    dom[b] = new;
                    changed = true;
                }
            }
        }
        self.dom = dom;
    }

    /// Node i is executed before node j on every path to j.
    fn dominates(&self, i: usize, j: usize) -> bool {
        let (a, b) = (self.block[i], self.block[j]);
        if a == b {
            return i < j;
        }
        self.dom[b][a / 64] >> (a % 64) & 1 == 1
    }

    fn instr(&self, k: usize) -> &'a Instr {
        match &self.f.body[k] {
            Node::Instr(i) => i,
            Node::Label(_) => unreachable!("node {k} is a label"),
        }
    }

    /// If the instruction at `k` only moves a value (§2.2: `mov`, `neg`, `selp x, x`, a
    /// multiply by ±1.0, `ld.local` of a slot stored earlier in its region), its source,
    /// the node where that source is read, and whether it is negated.
    fn copy_source(&self, k: usize) -> Option<(&'a Op, usize, bool)> {
        let i = self.instr(k);
        let a = &i.args;
        let op = i.src.op.as_str();
        let reg_or_imm = |o: &Op| matches!(o, Op::Reg(_)) || imm_value(o).is_some();
        match op {
            "mov" if a.len() == 2 && reg_or_imm(&a[1]) => Some((&a[1], k, false)),
            "neg" if float_ty(i) && i.guard.is_none() && a.len() == 2 => Some((&a[1], k, true)),
            "selp" if a.len() == 4 && a[1] == a[2] && i.guard.is_none() => Some((&a[1], k, false)),
            "mul" if float_ty(i) && i.guard.is_none() && !i.src.has(".sat") && a.len() == 3 => {
                // x * 1.0 is x and x * -1.0 is -x: removed before contracting
                // (`const_mul_one`, `mul_one_ftz_in_add`).
                for (x, y) in [(&a[1], &a[2]), (&a[2], &a[1])] {
                    if let Some(v) = imm_value(y) {
                        if (v == 1.0 || v == -1.0) && reg_or_imm(x) {
                            return Some((x, k, v == -1.0));
                        }
                    }
                }
                None
            }
            "ld" if i.src.has(".local") && i.guard.is_none() && !i.src.has(".volatile") && a.len() == 2 => {
                // ptxas promotes local memory before contracting (`dist_local`).
                let mut j = k;
                while j > 0 {
                    j -= 1;
                    let Some(q) = instr(self.f, j) else { continue };
                    if self.region[j] != self.region[k] {
                        break;
                    }
                    if q.src.op == "st" && q.src.has(".local") {
                        if q.args.first() == a.get(1) && q.src.last_ty() == i.src.last_ty() && q.args.len() == 2 {
                            return Some((&q.args[1], j, false));
                        }
                        break;
                    }
                    if q.src.op == "call" {
                        break;
                    }
                }
                None
            }
            _ => None,
        }
    }

    /// The value operand `op` of the instruction at `k` holds.
    fn resolve(&self, k: usize, op: &Op) -> Value {
        self.resolve_depth(k, op, 0)
    }

    fn resolve_depth(&self, k: usize, op: &Op, depth: usize) -> Value {
        let Op::Reg(r) = op else {
            return match imm_value(op) {
                Some(v) => Value { kind: Kind::Imm(v), neg: false },
                None => Value { kind: Kind::Unknown, neg: false },
            };
        };
        let ds = match self.reach.get(&(k, *r)) {
            Some(ds) if ds.len() == 1 => ds[0],
            _ => return Value { kind: Kind::Unknown, neg: false },
        };
        let d = self.alias.get(&ds).copied().unwrap_or(ds);
        if depth < 32 {
            if let Some((src, at, neg)) = self.copy_source(d) {
                let mut v = self.resolve_depth(at, src, depth + 1);
                if neg {
                    v.neg = !v.neg;
                    if let Kind::Imm(x) = v.kind {
                        v.kind = Kind::Imm(-x);
                    }
                }
                return v;
            }
        }
        Value { kind: Kind::Def(d), neg: false }
    }

    /// The definitions behind a register read at `k`, through copies (each gets a
    /// non-fusable use when the read is a join of several).
    fn defs_behind(&self, k: usize, r: usize, depth: usize, out: &mut Vec<usize>) {
        for &d in self.reach.get(&(k, r)).map(|v| v.as_slice()).unwrap_or(&[]) {
            match self.copy_source(d) {
                Some((Op::Reg(s), at, _)) if depth < 32 => self.defs_behind(at, *s, depth + 1, out),
                _ => out.push(d),
            }
        }
    }

    /// Instructions something needs: side effects, and what their operands read.
    fn live(&self) -> HashSet<usize> {
        let mut live = HashSet::new();
        let mut work: Vec<usize> = (0..self.f.body.len()).filter(|&k| instr(self.f, k).is_some_and(|i| !pure(i))).collect();
        while let Some(k) = work.pop() {
            if !live.insert(k) {
                continue;
            }
            for (_, r) in srcs(self.instr(k)) {
                for &d in self.reach.get(&(k, r)).map(|v| v.as_slice()).unwrap_or(&[]) {
                    if !live.contains(&d) {
                        work.push(d);
                    }
                }
            }
        }
        live
    }

    /// A multiply's operands as comparable keys (None if one is unknown).
    fn mul_operands(&self, m: usize) -> Option<Vec<VKey>> {
        let i = self.instr(m);
        let mut ks: Vec<VKey> = i.args[1..3].iter().map(|a| vkey(self.resolve(m, a))).collect::<Option<_>>()?;
        ks.sort();
        Some(ks)
    }

    /// `a*b` and `a*b` written twice.
    fn same_product(&self, m1: usize, m2: usize) -> bool {
        self.instr(m1).src.mods == self.instr(m2).src.mods && self.mul_operands(m1).is_some_and(|a| Some(a) == self.mul_operands(m2))
    }

    /// A constant operand SASS takes as an immediate or a constant-bank operand: an
    /// immediate, a kernel parameter at a fixed offset, `ld.const` of a fixed address.
    fn constant_operand(&self, v: Value) -> bool {
        match v.kind {
            Kind::Imm(_) => true,
            Kind::Def(d) => {
                let i = self.instr(d);
                i.src.op == "ld"
                    && matches!(i.args.get(1), Some(Op::Addr(AddrBase::Var(_) | AddrBase::None, _) | Op::Var(..)))
                    && (i.src.has(".const") || (i.src.has(".param") && self.is_entry))
            }
            Kind::Unknown => false,
        }
    }

    /// A multiply of one register by a constant operand: ptxas re-creates it at each use,
    /// so it fuses into adds of any region (§2.3, `imm_mul_*`; `x * x` is not one).
    fn by_constant(&self, m: usize) -> bool {
        let i = self.instr(m);
        i.args[1..3].iter().filter(|a| self.constant_operand(self.resolve(m, a))).count() == 1
    }
}

/// Term of a sum for value numbering: (key, sign).
type Term = (VKey, bool);

/// Value-numbering key of an add/sub (fused with `m` or not): `sub(a, b)` read as
/// `add(a, -b)`, negations folded into signs, f32/f64 sums commutative (half sums are
/// merged only when written in the same order, §2.6).
fn sum_key(fl: &Flow, a: usize, m: Option<usize>, vals: &HashMap<(usize, i32), Value>) -> Option<SumKey> {
    let i = fl.instr(a);
    if i.guard.is_some() {
        return None;
    }
    let mut terms: Vec<(Term, Value)> = Vec::with_capacity(2);
    for pos in 0..2 {
        let v = *vals.get(&(a, pos))?;
        let sign = v.neg ^ (i.src.op == "sub" && pos == 1);
        let t = match v.kind {
            Kind::Imm(x) => (VKey::Imm(x.abs().to_bits()), if x != 0.0 { sign ^ (x < 0.0) } else { sign }),
            Kind::Def(d) => (VKey::Def(d, false), sign),
            Kind::Unknown => return None,
        };
        terms.push((t, v));
    }
    let mods = i.src.mods.clone();
    if let Some(m) = m {
        let mk = (fl.instr(m).src.op.clone(), fl.instr(m).src.mods.clone(), fl.mul_operands(m)?);
        let mt = terms.iter().position(|(_, v)| v.kind == Kind::Def(m))?;
        let ot = terms[1 - mt].0;
        return Some(SumKey::Fma(mods, mk, terms[mt].0 .1, ot));
    }
    if matches!(ty(i), Some(Ty::F32 | Ty::F64)) {
        terms.sort_by_key(|(t, _)| t.0);
    }
    Some(SumKey::Add(mods, [terms[0].0, terms[1].0]))
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum SumKey {
    Add(Vec<String>, [Term; 2]),
    Fma(Vec<String>, (String, Vec<String>, Vec<VKey>), bool, Term),
    Mul(String, Vec<String>, Vec<VKey>),
}

/// The multiplies by 2^±k that ptxas folds into the FMUL of a product (§2.6).
fn scale_name(v: f64) -> Option<&'static str> {
    Some(match v {
        2.0 => "M2",
        4.0 => "M4",
        8.0 => "M8",
        0.5 => "D2",
        0.25 => "D4",
        0.125 => "D8",
        _ => return None,
    })
}

/// The fusions ptxas makes in `f` at optimisation level `opt` (0..=3; the driver JIT's
/// default is [`DEFAULT_OPT_LEVEL`]).
pub fn fusions(f: &Func, g: &Cfg, opt: u8) -> Fusions {
    let mut out = Fusions::default();
    if f.body.is_empty() {
        return out;
    }
    let mut fl = Flow::new(f, g);
    let mut live = fl.live();
    let n = f.body.len();
    out.removed = (0..n).filter(|k| instr(f, *k).is_some() && !live.contains(k)).collect();
    if opt == 0 {
        // -O0 contracts nothing (§2.0).
        for k in 0..n {
            if instr(f, k).is_some_and(|i| mul_like(i) && i.guard.is_none()) && live.contains(&k) {
                out.materialized.insert(k, true);
            }
        }
        return out;
    }
    if opt >= 2 {
        early_cse(&mut fl, &live);
        out.repeats = fl.alias.clone();
        live.retain(|k| !fl.alias.contains_key(k));
    }
    let fl = fl;

    // Every non-copy use of every definition, through copies (§2.2).
    let mut forwarded = HashSet::new();
    for k in 0..n {
        if instr(f, k).is_some_and(|i| i.src.op == "ld") {
            if let Some((_, at, _)) = fl.copy_source(k) {
                forwarded.insert(at);
            }
        }
    }
    let mut consumers: HashMap<usize, Vec<(usize, i32)>> = HashMap::new();
    let mut vals: HashMap<(usize, i32), Value> = HashMap::new();
    for k in 0..n {
        if !live.contains(&k) || forwarded.contains(&k) || fl.copy_source(k).is_some() {
            continue;
        }
        for (pos, r) in srcs(fl.instr(k)) {
            let v = fl.resolve(k, &Op::Reg(r));
            vals.insert((k, pos), v);
            match v.kind {
                Kind::Def(d) => consumers.entry(d).or_default().push((k, pos)),
                _ => {
                    let mut ds = Vec::new();
                    fl.defs_behind(k, r, 0, &mut ds);
                    for d in ds {
                        consumers.entry(d).or_default().push((k, -2));
                    }
                }
            }
        }
    }

    // Contractable multiplies (§2.1).
    let muls: HashSet<usize> = (0..n)
        .filter(|&k| {
            let Some(i) = instr(f, k) else { return false };
            if !live.contains(&k) || !mul_like(i) || i.guard.is_some() || i.args.len() != 3 || i.src.has(".sat") {
                return false;
            }
            if rounding(i) || fl.copy_source(k).is_some() {
                return false;
            }
            // const * const is folded (rounded) first.
            !(matches!(fl.resolve(k, &i.args[1]).kind, Kind::Imm(_)) && matches!(fl.resolve(k, &i.args[2]).kind, Kind::Imm(_)))
        })
        .collect();
    let empty = Vec::new();
    let uses = |m: usize| consumers.get(&m).unwrap_or(&empty);

    // M is A's candidate at `pos` (§2.5).
    let candidate = |a: usize, pos: i32| -> Option<usize> {
        let ai = fl.instr(a);
        if !contractable_add(ai) || !(0..2).contains(&pos) {
            return None;
        }
        let v = vals.get(&(a, pos))?;
        let Kind::Def(m) = v.kind else { return None };
        if !muls.contains(&m) {
            return None;
        }
        let mi = fl.instr(m);
        if ty(mi) != ty(ai) || mi.src.has(".ftz") != ai.src.has(".ftz") {
            return None;
        }
        if fl.region[m] != fl.region[a] && !fl.by_constant(m) {
            return None;
        }
        if let Some(o) = vals.get(&(a, 1 - pos)) {
            if let Kind::Def(om) = o.kind {
                if om == m {
                    return None; // add p, p
                }
                if muls.contains(&om) && fl.same_product(m, om) {
                    // a*b + a*b written as two multiplies: FADD p, p; a*b - a*b is fused.
                    let sub = ai.src.op == "sub";
                    let sv = v.neg ^ (sub && pos == 1);
                    let so = o.neg ^ (sub && pos == 0);
                    if sv == so {
                        return None;
                    }
                }
            }
        }
        Some(m)
    };

    let adds: Vec<usize> = (0..n).filter(|k| live.contains(k) && instr(f, *k).is_some_and(contractable_add)).collect();
    let mut fused: HashMap<usize, (usize, i32)> = HashMap::new();
    // Stage 1: single-use products, first operand first.
    for &a in &adds {
        for pos in 0..2 {
            if let Some(m) = candidate(a, pos) {
                if uses(m).len() == 1 {
                    fused.insert(a, (m, pos));
                    break;
                }
            }
        }
    }
    // Stage 2: a product all of whose remaining uses can still absorb it; of two, the one
    // with fewer uses, then the first operand.
    for &a in &adds {
        if fused.contains_key(&a) {
            continue;
        }
        let eligible = |m: usize, fused: &HashMap<usize, (usize, i32)>| {
            uses(m).iter().all(|&(c, k)| match fused.get(&c) {
                Some(&(fm, _)) => fm == m,
                None => candidate(c, k) == Some(m),
            })
        };
        let c: Vec<(usize, i32)> =
            (0..2).filter_map(|pos| candidate(a, pos).map(|m| (m, pos))).filter(|&(m, _)| eligible(m, &fused)).collect();
        let pick = match c.as_slice() {
            [] => continue,
            [x] => *x,
            [x, y] => {
                if uses(y.0).len() < uses(x.0).len() {
                    *y
                } else {
                    *x
                }
            }
            _ => unreachable!(),
        };
        fused.insert(a, pick);
    }

    for (&a, &(m, pos)) in &fused {
        out.into.insert(a, Fused { mul: m, operand: pos as usize + 1, neg: vals[&(a, pos)].neg });
        out.absorbed.insert(m);
    }
    // A repeat of a fused add computes the same FMA (its own operands hold the same values).
    for (&r, &a) in &fl.alias {
        if let Some(&(m, _)) = fused.get(&a) {
            let ri = fl.instr(r);
            for pos in 0..2 {
                let v = fl.resolve(r, &ri.args[pos + 1]);
                if v.kind == Kind::Def(m) {
                    out.into.insert(r, Fused { mul: m, operand: pos + 1, neg: v.neg });
                    break;
                }
            }
        }
    }
    let mut mat: HashMap<usize, bool> =
        muls.iter().map(|&m| (m, uses(m).iter().any(|&(c, _)| fused.get(&c).map(|x| x.0) != Some(m)))).collect();
    for &m in &muls {
        if out.absorbed.contains(&m) && !mat[&m] {
            out.dead.insert(m);
        }
    }

    // FMUL.M2..D8: a kept f32 product whose only use is a multiply by 2^±k (§2.6).
    let mut sorted_muls: Vec<usize> = muls.iter().copied().collect();
    sorted_muls.sort_unstable();
    for &m in &sorted_muls {
        if !mat[&m] || ty(fl.instr(m)) != Some(Ty::F32) || uses(m).len() != 1 {
            continue;
        }
        let (c, k) = uses(m)[0];
        let q = fl.instr(c);
        if q.src.op != "mul" || ty(q) != Some(Ty::F32) || q.guard.is_some() || [".rz", ".rm", ".rp", ".rna"].iter().any(|r| q.src.has(r)) {
            continue;
        }
        if mat.get(&c) == Some(&false) || !(0..2).contains(&k) || q.args.len() != 3 {
            continue;
        }
        let other = fl.resolve(c, &q.args[(2 - k) as usize]);
        if let (Kind::Imm(x), true) = (other.kind, fl.region[c] == fl.region[m]) {
            if let Some(s) = scale_name(x) {
                out.scaled.insert(m, (c, s));
                mat.insert(m, false);
            }
        }
    }
    for &m in &muls {
        out.materialized.insert(m, mat[&m]);
    }

    // Identical adds, FMAs and kept multiplies of one region merge after contracting.
    let mut seen: HashMap<(usize, SumKey), usize> = HashMap::new();
    for k in 0..n {
        let Some(i) = instr(f, k) else { continue };
        let key = if muls.contains(&k) && mat[&k] && !out.scaled.contains_key(&k) {
            if i.guard.is_some() {
                None
            } else {
                fl.mul_operands(k).map(|ks| SumKey::Mul(i.src.op.clone(), i.src.mods.clone(), ks))
            }
        } else if contractable_add(i) {
            sum_key(&fl, k, fused.get(&k).map(|x| x.0), &vals)
        } else {
            None
        };
        let Some(key) = key else { continue };
        match seen.get(&(fl.region[k], key.clone())) {
            Some(&first) => {
                out.merged.insert(k, first);
            }
            None => {
                seen.insert((fl.region[k], key), k);
            }
        }
    }

    // Loop-carried products (README §3): flagged.
    for &m in &sorted_muls {
        if let Some(&(c, _)) = uses(m).iter().find(|&&(c, _)| c <= m && fl.block[c] != fl.block[m]) {
            out.notes.push(format!(
                "PTX line {}: product reaches line {} around a loop; ptxas's unrolling may fuse it in some iterations",
                fl.instr(m).src.line,
                fl.instr(c).src.line
            ));
        }
    }
    out
}

/// -O2/-O3: an add/sub repeating one of a different region that dominates it is
/// replaced by that one before contracting (§2.4). Multiplies are not merged this way.
fn early_cse(fl: &mut Flow, live: &HashSet<usize>) {
    let mut first: HashMap<SumKey, usize> = HashMap::new();
    for k in 0..fl.f.body.len() {
        let Some(i) = instr(fl.f, k) else { continue };
        if !live.contains(&k) || !contractable_add(i) || i.guard.is_some() {
            continue;
        }
        let mut vals = HashMap::new();
        for pos in 0..2 {
            vals.insert((k, pos as i32), fl.resolve(k, &i.args[pos + 1]));
        }
        let Some(key) = sum_key(fl, k, None, &vals) else { continue };
        match first.get(&key) {
            Some(&j) => {
                if fl.region[j] != fl.region[k] && fl.dominates(j, k) {
                    fl.alias.insert(k, j);
                }
            }
            None => {
                first.insert(key, k);
            }
        }
    }
}
