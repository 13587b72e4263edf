//! SIMD: a barrier-free kernel's threads as explicit vectors of 16 lanes.
//!
//! `lanes` leaves to the host compiler the vectorising of a straight-line kernel's loop
//! over threads; it cannot do more (a loop inside the thread's code, a mirrored index, a
//! store it cannot prove apart from the loads), and a plain-path kernel with a loop runs
//! its threads one after another. This pass decides whether a plain-path kernel can run
//! 16 consecutive threads of a row as one call (`V<fi>`, ptx_rt.h `simd`) in which every
//! register is one of: the same for all 16 lanes (a scalar, computed once, by the
//! thread's own statement), 16 32-bit lanes (a vector; 16-bit values zero-extended), a
//! 64-bit address held as a scalar base plus 16 signed 32-bit offsets (an access whose
//! lanes are one after another is one vector load or store; one whose lanes are scattered
//! makes the chunk bail, as inserting lanes one by one cost more than the threads' own
//! code: VMAF adm's `dwt_s123_combined_hori` ran 2.6x slower that way), or 16 64-bit
//! lanes for the other 64-bit values (sums of wide products).
//!
//! The chunk must give what its 16 threads one after another give, so the form runs all
//! lanes through the same instructions: a branch whose predicate differs between lanes is
//! taken by all of them or none, else the chunk undoes its stores and answers false, and
//! its runner runs the 16 threads one at a time (the same for an offset that does not
//! fit, a scattered or misaligned access, and a store whose bytes meet what another lane
//! loads or another store writes, which the chunk checks before it returns); after a run
//! of such chunks the runner backs off, trying vectors again later. A backward branch
//! whose predicate differs between lanes is taken the same way (every lane or none) where
//! the predicate does not come from lanes' loaded values, at most `LOOP_PASSES` times
//! (past them the chunk bails: the runner, which can preempt a thread, runs a loop that
//! does not end or spins on memory another thread writes); a store inside a loop logs
//! each pass under its own site id, at most `STORE_PASSES` (a block's cooperative fill of
//! a shared tile). Anything else (another instruction on lanes that differ, a loop that
//! lanes' loaded values decide, local memory, atomics, calls, `%laneid`) keeps the kernel
//! one thread at a time; its module note says which instruction. Shared memory only a
//! loop-path segment's form takes (`segment`: one host thread runs the block, and its
//! loads and stores are tracked and undone like global ones).

use crate::ast::{Space, Ty};
use crate::resolve::{AddrBase, Func, Instr, Node, Op, VarRef};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// Threads per chunk (ptx_rt.h `simd::L`).
pub const LANES: u32 = 16;

/// How a register is held in a kernel's vector form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// The same in every lane: one scalar.
    Uniform,
    /// 16 32-bit lanes (a predicate: 16 masks of 0 or -1).
    Vector,
    /// A 64-bit value as a scalar base plus 16 signed 32-bit offsets.
    Split,
    /// 16 64-bit lanes (two halves of 8), where no base plus offsets can hold it.
    Wide,
}

/// A kernel's vector form: each register's class, and the loads and stores the chunk
/// tracks (a load site's range, a store's undo entries).
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// By register.
    pub class: Vec<Class>,
    /// Global load sites (by node) and their index among the chunk's ranges.
    pub load_site: HashMap<usize, usize>,
    /// Global store sites (by node) and their index.
    pub store_site: HashMap<usize, usize>,
    /// The undo log's entries (16 per store: its lanes' bytes are one run, or scattered).
    pub undo_entries: u32,
    /// The undo log's bytes.
    pub undo_bytes: u32,
    /// Nodes run as a loop over the 16 lanes, each lane the thread's own statement (an
    /// instruction no vector expression takes: floating point, a lane predicate's guard,
    /// anything under a mask): exactly what the threads compute, one lane at a time.
    pub lane_loop: BTreeSet<usize>,
    /// Branches the lanes may take apart that the form runs both ways under masks (each
    /// to its join, the label every path from it reaches first): by branch node, the join.
    pub masked: BTreeMap<usize, usize>,
    /// By node: between a masked branch and its join (run under the lanes' mask).
    pub in_mask: Vec<bool>,
    /// f32/f64 arithmetic ptxas contracts (a multiply an add absorbs, and that add:
    /// `contract`'s `Fusions::held`):
    /// the threads' own statements run it (their kept operands), never a vector expression.
    pub held: HashSet<usize>,
    /// Store sites inside a loop (by node): each pass over the lanes logs under its own site
    /// id (`STORE_PASSES` of them from the site's), so that the commit checks one pass's
    /// bytes against another's; a half that passes once more bails.
    pub loop_store: BTreeSet<usize>,
    /// Backward branches whose predicate differs between lanes (by node): every lane takes
    /// them or none (else the chunk bails), at most `LOOP_PASSES` times per half.
    pub lane_loop_back: BTreeSet<usize>,
    /// The store site ids the plan uses (a loop's store site counts `STORE_PASSES`).
    pub store_ids: usize,
}

impl Plan {
    /// The load ranges a chunk tracks (at least one).
    pub fn load_ranges(&self) -> usize {
        self.load_site.values().max().map_or(1, |&k| k + 1)
    }

    /// The class of an operand (literals, block values and variable addresses are
    /// uniform; `%tid.x` is the one special register that varies).
    pub fn of(&self, op: &Op) -> Class {
        match op {
            Op::Reg(r) => self.class[*r],
            Op::Special(s) if s == "%tid.x" => Class::Vector,
            Op::Addr(AddrBase::Reg(r), _) => self.class[*r],
            Op::Vector(v) => v.iter().map(|o| self.of(o)).find(|c| *c != Class::Uniform).unwrap_or(Class::Uniform),
            Op::Not(a) => self.of(a),
            _ => Class::Uniform,
        }
    }

    /// Whether node `n` lies between a masked branch and its join.
    pub fn under_mask(&self, n: usize) -> bool {
        self.in_mask.get(n).copied().unwrap_or(false)
    }

    /// Whether instruction `i` runs once per chunk, as the thread's own statement.
    pub fn uniform(&self, i: &Instr) -> bool {
        let data_load = tracked_access(i, "ld");
        !matches!(i.src.op.as_str(), "bra" | "ret" | "exit" | "st")
            && !data_load
            && i.guard.is_none_or(|(_, p)| self.class[p] == Class::Uniform)
            && i.args.iter().all(|o| self.of(o) == Class::Uniform)
    }
}

/// Whether `i` is `op` (`ld` or `st`) of the memory the forms read and write: global, or
/// generic where `admit` took it (the function has no local memory).
pub fn data_access(i: &Instr, op: &str) -> bool {
    i.src.op == op && matches!(Space::of_access(&i.src.mods), Some(Space::Global) | None)
}

/// Whether `i` is `op` (`ld` or `st`) of the block's shared memory (a loop-path segment's
/// form takes it: one host thread runs the block).
pub fn shared_access(i: &Instr, op: &str) -> bool {
    i.src.op == op && Space::of_access(&i.src.mods) == Some(Space::Shared)
}

/// Whether `i` is `op` of memory whose ranges a form tracks (global, generic or shared).
pub fn tracked_access(i: &Instr, op: &str) -> bool {
    data_access(i, op) || shared_access(i, op)
}

/// Whether register type `t` can be held as 16 32-bit lanes (16-bit values zero-extended).
fn lane_type(t: Ty) -> bool {
    matches!(t, Ty::U32 | Ty::S32 | Ty::B32 | Ty::Pred) || half(t)
}

fn half(t: Ty) -> bool {
    matches!(t, Ty::U16 | Ty::S16 | Ty::B16)
}

fn wide_type(t: Ty) -> bool {
    matches!(t, Ty::U64 | Ty::S64 | Ty::B64)
}

/// Whether a register of type `t` can be one of 16 32-bit lanes in a lane loop (an f32
/// register's bits as they are).
fn bits32(t: Ty) -> bool {
    lane_type(t) || t == Ty::F32
}

/// The same for 64-bit lanes (an f64 register's bits).
fn bits64(t: Ty) -> bool {
    wide_type(t) || t == Ty::F64
}

/// Whether `i` is f32 arithmetic a vector expression runs on 32-bit lanes that hold the
/// values' bits (ptx_rt.h `simd::fadd` and the rest, each the thread's own rules on 16
/// lanes): add, sub, mul and fma rounding to nearest, abs, neg, copysign, mov, selp, a
/// comparison, a conversion from a 32-bit integer to nearest, or to an integral value or a
/// 32-bit integer by an integer rounding; add and sub rounding otherwise too. None with
/// .ftz or .sat (a lane loop runs those as the threads' own statements).
pub fn float_lanes(i: &Instr) -> bool {
    let has = |m: &str| i.src.has(m);
    let directed = [".rz", ".rm", ".rp"].iter().any(|m| has(m));
    if has(".ftz") || has(".sat") {
        return false;
    }
    let int_round = [".rni", ".rzi", ".rpi", ".rmi"].iter().any(|m| has(m));
    match (i.src.op.as_str(), i.src.tys().as_slice()) {
        ("add" | "sub", [Ty::F32]) => true,
        _ if directed => false,
        ("mul" | "abs" | "neg" | "copysign" | "mov" | "selp", [Ty::F32]) => true,
        ("fma", [Ty::F32]) => has(".rn"),
        ("setp", [Ty::F32]) => i.args.len() == 3 && !matches!(i.args.first(), Some(Op::Pair(..))),
        ("cvt", [Ty::F32, Ty::U32 | Ty::S32 | Ty::U16]) => has(".rn"),
        ("cvt", [Ty::F32 | Ty::U32 | Ty::S32, Ty::F32]) => int_round,
        _ => false,
    }
}

/// Whether `i` is f64 arithmetic a vector expression runs on 64-bit lanes that hold the
/// values' bits (ptx_rt.h `simd::darith` and the rest: the host's operations where no lane
/// holds a NaN or a value past a conversion's range, the scalar rules otherwise): add, sub,
/// mul, div and fma to nearest, min, max, abs, neg, mov, selp, a comparison, conversions from
/// 32-bit integers and to integers by an integer rounding. None with .ftz or .sat.
pub fn double_lanes(i: &Instr) -> bool {
    let has = |m: &str| i.src.has(m);
    if has(".ftz") || has(".sat") || has(".NaN") || [".rz", ".rm", ".rp"].iter().any(|m| has(m)) {
        return false;
    }
    let int_round = [".rni", ".rzi", ".rpi", ".rmi"].iter().any(|m| has(m));
    match (i.src.op.as_str(), i.src.tys().as_slice()) {
        ("add" | "sub" | "mul" | "min" | "max" | "abs" | "neg" | "mov" | "selp", [Ty::F64]) => true,
        ("div" | "fma", [Ty::F64]) => has(".rn"),
        ("setp", [Ty::F64]) => i.args.len() == 3 && !matches!(i.args.first(), Some(Op::Pair(..))),
        ("cvt", [Ty::F64, Ty::U32 | Ty::S32]) => has(".rn") || !int_round,
        ("cvt", [Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64, Ty::F64]) => int_round,
        _ => false,
    }
}

/// Instructions a form may run as a loop over its lanes, each lane the thread's own
/// statement: pure, touching nothing but registers (no carry flag, no thread state).
const LANE_LOOP: &[&str] = &[
    "mov", "add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max", "abs", "neg", "copysign", "cvt", "setp", "set", "selp", "slct",
    "clz", "popc", "brev", "bfe", "bfi", "bfind", "shl", "shr", "shf", "and", "or", "xor", "not", "cnot", "lop3", "prmt", "sqrt", "rcp",
    "rsqrt", "sin", "cos", "lg2", "ex2", "tanh", "testp", "mul24", "mad24", "sad", "dp2a", "dp4a",
];

/// The class of `i`'s result as a loop over the lanes, where it can be one: a register
/// of 32 bits or fewer (lanes) or of 64 (64-bit lanes, never an address), from registers
/// of such types, literals and values the same for every lane (`%tid.x` aside).
fn lane_loop_class(i: &Instr, p: &Plan, f: &Func, addresses: &[bool]) -> Option<(usize, Class)> {
    if !LANE_LOOP.contains(&i.src.op.as_str()) || i.src.has(".cc") || tracked_access(i, "ld") {
        return None;
    }
    let Some(Op::Reg(d)) = i.args.first() else { return None };
    fn operand(o: &Op, p: &Plan, f: &Func) -> bool {
        match o {
            Op::Reg(r) => bits32(f.regs[*r].ty) || bits64(f.regs[*r].ty),
            Op::Int(_) | Op::Float(_) => true,
            Op::Special(s) => s != "%tid.x",
            Op::Not(a) => operand(a, p, f),
            Op::Var(..) | Op::Addr(..) => p.of(o) == Class::Uniform,
            _ => false,
        }
    }
    if !i.args[1..].iter().all(|o| operand(o, p, f)) {
        return None;
    }
    let t = f.regs[*d].ty;
    if bits32(t) {
        Some((*d, Class::Vector))
    } else if bits64(t) && !addresses[*d] {
        Some((*d, Class::Wide))
    } else {
        None
    }
}

/// The most instructions between two lane loops of a block that join them (`fill_lane_gaps`):
/// a longer run of vector expressions costs more one lane at a time (16 scalar statements
/// each) than the lane loops' registers cost to go through memory twice.
const MAX_LANE_GAP: usize = 2;

/// Lane loops between lane loops: up to `MAX_LANE_GAP` instructions a vector expression
/// takes (or the same for every lane) between two lane loops of one block join them, where
/// a lane loop can run them with their registers in the classes they have, so that the
/// block is one loop over the lanes, its values in the lanes' own registers throughout, not
/// one per instruction through memory.
fn fill_lane_gaps(f: &Func, region: &Region, p: &mut Plan, addresses: &[bool]) {
    let fits = |n: usize, p: &Plan| match &f.body[n] {
        Node::Instr(i) if !tracked_access(i, "ld") && !p.masked.contains_key(&n) => {
            if p.uniform(i) {
                LANE_LOOP.contains(&i.src.op.as_str()) && !i.src.has(".cc") && matches!(i.args.first(), Some(Op::Reg(_)))
            } else {
                lane_loop_class(i, p, f, addresses).is_some_and(|(d, c)| p.class[d] == c)
            }
        }
        _ => false,
    };
    let mut n = 0;
    while n < f.body.len() {
        // A run of instructions in one block: no label, branch, exit or stop between.
        let straight = |m: usize| {
            region.nodes[m]
                && !region.stops.contains_key(&m)
                && matches!(&f.body[m], Node::Instr(i) if !matches!(i.src.op.as_str(), "bra" | "ret" | "exit"))
        };
        if !straight(n) {
            n += 1;
            continue;
        }
        let start = n;
        while n < f.body.len() && straight(n) {
            n += 1;
        }
        let mut last: Option<usize> = None;
        for m in start..n {
            if p.lane_loop.contains(&m) {
                if let Some(l) = last {
                    if m > l + 1 && m - l - 1 <= MAX_LANE_GAP && (l + 1..m).all(|k| fits(k, p) && p.under_mask(k) == p.under_mask(m)) {
                        (l + 1..m).for_each(|k| {
                            p.lane_loop.insert(k);
                        });
                    }
                }
                last = Some(m);
            }
        }
    }
}

/// The join of a branch at node `b` the lanes may take apart, where the form can run both
/// ways under masks: the first label after `b` every branch between them reaches at most,
/// with nothing between them but pure register instructions (parameter loads among
/// them) and forward branches, and no branch from elsewhere into them. None otherwise.
fn mask_join(f: &Func, region: &Region, labels: &HashMap<usize, usize>, b: usize) -> Option<usize> {
    let target = |i: &Instr| match i.args.first() {
        Some(Op::Label(l)) => labels.get(l).copied(),
        _ => None,
    };
    let Node::Instr(bi) = &f.body[b] else { return None };
    let mut hi = target(bi).filter(|&t| t > b)?;
    let mut k = b + 1;
    while k < hi {
        if !region.nodes[k] {
            return None;
        }
        if let Node::Instr(i) = &f.body[k] {
            let op = i.src.op.as_str();
            match op {
                "bra" => hi = hi.max(target(i).filter(|&t| t > k)?),
                "ld" if i.src.has(".param") => {}
                _ if LANE_LOOP.contains(&op) && !i.src.has(".cc") && matches!(i.args.first(), Some(Op::Reg(_))) => {}
                _ => return None,
            }
        }
        k += 1;
    }
    if !region.nodes.get(hi).copied().unwrap_or(false) || !matches!(f.body[hi], Node::Label(_)) {
        return None;
    }
    // Nothing outside enters between the branch and its join.
    let inside = |t: usize| t > b && t < hi;
    let enters = f.body.iter().enumerate().any(|(m, node)| match node {
        Node::Instr(i) if (m < b || m > hi) && i.src.op == "bra" => target(i).is_some_and(inside),
        _ => false,
    });
    (!enters).then_some(hi)
}

/// Special registers a chunk knows: its threads differ only in `%tid.x`.
fn special_ok(s: &str) -> bool {
    ["%tid.", "%ntid.", "%ctaid.", "%nctaid."].iter().any(|p| s.starts_with(p))
}

/// Pure instructions a chunk may run on uniform operands as the thread's own statement
/// (no memory but what `plan` admits, nothing that names a thread: no integer division,
/// whose zero divisor is reported with the thread).
const PURE: &[&str] = &[
    "mov", "add", "sub", "mul", "mad", "fma", "mul24", "mad24", "sad", "shl", "shr", "shf", "and", "or", "xor", "not", "cnot", "lop3",
    "bfe", "bfi", "prmt", "popc", "clz", "brev", "cvt", "cvta", "setp", "set", "selp", "slct", "min", "max", "abs", "neg", "copysign",
    "testp", "sqrt", "rcp", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh", "dp2a", "dp4a",
];

/// The vector form of entry `f`, or why it has none (for the module note). `params`: the
/// kernel's parameters as (bytes, offset in the buffer); `held`: `Plan::held`.
pub fn plan(f: &Func, params: &[(u64, u64)], held: &HashSet<usize>) -> Result<Plan, String> {
    let region = Region { nodes: vec![true; f.body.len()], stops: BTreeMap::new() };
    plan_in(f, params, &region, None, held).map_err(|(_, why)| why)
}

/// What a loop-path segment's vector form runs: the nodes from its resume point that it
/// reaches without passing a stop, and the stops it reaches (split points, where the lanes
/// then are where the threads one at a time would be, and cuts, nodes the form does not
/// run: the lanes go on one at a time from there).
#[derive(Clone, Debug, Default)]
pub struct Region {
    /// By node: the form runs it.
    pub nodes: Vec<bool>,
    /// The stops the form reaches, by node, and what each is.
    pub stops: BTreeMap<usize, Stop>,
}

/// Where a segment's vector form stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Split point `k` (the loop path's numbering: the `k-1`th of `uniform::Plan::syncs`).
    Split(usize),
    /// The `k`th cut of the kernel: the lanes continue one at a time from there.
    Cut(usize),
}

/// The most cuts a segment's vector form may have (each is a resume point of the thread's
/// step): past it the segment has no vector form.
pub const MAX_CUTS: usize = 8;

/// Where a segment's vector form starts: the kernel's start, just after a shuffle that an
/// earlier stretch of the form performed for the whole warp (`seed`: every register's
/// class as that stretch leaves it, those it did not leave live uniform), or at a
/// barrier's resume point (`resumed`: the registers come from the lanes' frames in the
/// seed's classes, checked as they are read). After a shuffle a branch whose predicate may
/// differ between lanes, and an exit, are cuts: there the lanes go on one at a time in the
/// order the fibers would run them (the lane that completed the shuffle first), which a
/// lane-0 tail needs, where undoing the whole form would waste it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Entry<'a> {
    /// The node the form starts at.
    pub start: usize,
    /// After a shuffle or a barrier: the registers' classes there (None: the start, all
    /// uniform).
    pub seed: Option<&'a [Class]>,
    /// At a barrier's resume point (nothing performed before it: a branch the lanes take
    /// apart, or an exit some take, undoes the form as at the start).
    pub resumed: bool,
    /// The loop path's shuffles done without an exchange (`uniform::Plan::elide`): those
    /// the region holds (not split points in any block) the form computes as its lanes do.
    pub elided: Option<&'a HashMap<usize, crate::uniform::Elided>>,
    /// `Plan::held` (None: nothing contracted).
    pub held: Option<&'a HashSet<usize>>,
}

impl Entry<'_> {
    /// Whether the form starts after a shuffle an earlier stretch performed.
    fn after_shuffle(&self) -> bool {
        self.seed.is_some() && !self.resumed
    }
}

/// The classes a form at a barrier's resume point reads the registers `live` there from
/// the lanes' frames in: as the start's form gives those it writes (`guess`: its classes
/// and which it writes), else 32-bit lanes, or for 64-bit registers a base plus offsets
/// where the kernel uses them as an address and 64-bit lanes otherwise. The form checks
/// each as it reads it (a register guessed uniform whose lanes differ, or offsets past 32
/// bits, undo the warp's form). None where a live register is of a type no class holds.
pub fn resume_seed(f: &Func, live: &[usize], guess: Option<(&[Class], &[bool])>) -> Option<Vec<Class>> {
    let addresses = address_regs(f, &vec![true; f.body.len()]);
    let mut seed = vec![Class::Uniform; f.regs.len()];
    for &r in live {
        let t = f.regs[r].ty;
        seed[r] = match guess {
            Some((classes, written)) if written[r] => classes[r],
            _ if lane_type(t) => Class::Vector,
            _ if wide_type(t) && addresses[r] => Class::Split,
            _ if wide_type(t) => Class::Wide,
            _ => return None,
        };
        let fits = match seed[r] {
            Class::Uniform => lane_type(t) || wide_type(t),
            Class::Vector => lane_type(t),
            Class::Split | Class::Wide => wide_type(t),
        };
        if !fits {
            return None;
        }
    }
    Some(seed)
}

/// Whether every thread that resumes at node `from` runs on to its exit without another
/// thread: the code reachable from there has no split point (`syncs`), shuffle, vote,
/// barrier, call or loop. A warp's lanes then go on from a form's cut there one after
/// another inside the lane segment itself (ptx_rt.h `tail_lanes`), each to its exit, as
/// the runner would step them, without the runner's dispatch and bookkeeping per lane.
pub fn closed_tail(f: &Func, cfg: &crate::cfg::Cfg, syncs: &[usize], elide: &HashMap<usize, crate::uniform::Elided>, from: usize) -> bool {
    let Some(&b0) = cfg.block_of.get(from) else { return false };
    // Depth-first over the blocks: 1 on the walk's path, 2 done (a path back is a loop).
    let mut state = vec![0u8; cfg.blocks.len()];
    let mut stack = vec![(b0, 0usize)];
    state[b0] = 1;
    let open = |n: usize| match &f.body[n] {
        Node::Label(_) => true,
        Node::Instr(i) => {
            !syncs.contains(&n)
                && !elide.contains_key(&n)
                && !matches!(
                    i.src.op.as_str(),
                    "shfl" | "vote" | "bar" | "barrier" | "call" | "match" | "redux" | "activemask" | "mbarrier"
                )
        }
    };
    if !(from..cfg.blocks[b0].end).all(open) {
        return false;
    }
    while let Some(&mut (b, ref mut next)) = stack.last_mut() {
        let Some(&s) = cfg.blocks[b].succs.get(*next) else {
            state[b] = 2;
            stack.pop();
            continue;
        };
        *next += 1;
        match state[s] {
            1 => return false,
            2 => continue,
            _ => {}
        }
        if !(cfg.blocks[s].start..cfg.blocks[s].end).all(open) {
            return false;
        }
        state[s] = 1;
        stack.push((s, 0));
    }
    true
}

/// The module note's reason for a form that covers too little work (per-lane
/// instructions, and `SHUFFLE_WORK` for each shuffle it performs).
pub fn too_little(work: usize) -> String {
    format!("{work} per-lane instructions before its stops, too few to pay for scattering its registers")
}

/// The vector form of the loop-path segment from `entry` (the start, or just after a
/// shuffle the form performed) of kernel `f`, whose split points are the nodes `syncs`: as much of the segment
/// as the form can run, up to its split points or up to cuts before what it cannot (an
/// instruction it does not take, a branch on loaded data, whose lanes would rarely go
/// alike). Its cuts are numbered from `first_cut`. Err: why there is none.
/// `splits`: the split points' nodes and numbers; `forced`: nodes that are cuts whatever
/// the form could do there (split points only some blocks take); `min_work`: the least
/// per-lane work (`lane_work`) a form must cover (`MIN_LANE_WORK`, or 0 for any).
pub fn segment(
    f: &Func,
    params: &[(u64, u64)],
    splits: &[(usize, usize)],
    forced: &[usize],
    entry: &Entry,
    first_cut: usize,
    min_work: usize,
) -> Result<(Plan, Region), String> {
    let none = HashSet::new();
    let held = entry.held.unwrap_or(&none);
    let start = entry.start;
    let mut cuts: Vec<usize> = forced.to_vec();
    loop {
        let mut stops: BTreeMap<usize, Stop> = splits.iter().map(|&(n, id)| (n, Stop::Split(id))).collect();
        for (k, &n) in cuts.iter().enumerate() {
            stops.insert(n, Stop::Cut(first_cut + k));
        }
        let region = reach(f, start, &stops);
        match plan_in(f, params, &region, Some(entry), held) {
            Ok(p) => {
                let work = lane_work(f, &p, &region);
                if work < min_work {
                    return Err(too_little(work));
                }
                // The cuts it reaches numbered from `first_cut` without gaps (the runner's
                // tables are indexed by resume point).
                let mut region = region;
                let mut next = first_cut;
                for s in region.stops.values_mut() {
                    if let Stop::Cut(id) = s {
                        *id = next;
                        next += 1;
                    }
                }
                return Ok((p, region));
            }
            // A cut before the node that keeps the form off, and try again.
            Err((n, _)) if n != start && cuts.len() < forced.len() + MAX_CUTS && !cuts.contains(&n) && !stops.contains_key(&n) => {
                cuts.push(n)
            }
            Err((_, why)) => return Err(why),
        }
    }
}

/// Passes over the lanes a store site inside a loop may log per half (its undo entries
/// and site ids are reserved for them): a block's cooperative fill of a shared tile (`for
/// (i = tid; i < tile; i += threads)`) passes once or twice per lane; a longer loop bails
/// and its lanes run one at a time.
pub const STORE_PASSES: u32 = 4;

/// Times a half may take a backward branch whose predicate differs between lanes (one
/// that lanes' loaded values decide is refused): past this the form bails, so that the
/// lanes' own code, whose runner can preempt them, runs a loop that does not end or spins
/// on a word (loaded the same for every lane) that another thread writes.
pub const LOOP_PASSES: u32 = 1 << 16;

/// The per-lane work a segment's form must cover to pay for itself: at its stops it
/// scatters its live registers into 32 frames (motion_cuda's blur covers thousands; an adm
/// kernel whose form loaded one word before its cut ran slower with it).
pub const MIN_LANE_WORK: usize = 256;

/// The same for a form without cuts: it replaces the lanes' own run to the segment's end
/// (their frames are written there either way), so it pays much sooner (upstream VMAF
/// adm's `adm_dwt2_8_vert_hori`: 120 per-lane instructions to its barrier, its kernel 3.1
/// -> 2.0 ms per frame at 576x324; forms of 113 and 39 before a cut made theirs slower).
pub const MIN_WHOLE_WORK: usize = 64;

/// What a shuffle the form performs itself counts for against `MIN_LANE_WORK`: it saves
/// the exchange of the warp's values through its 32 frames and the registers' scatter
/// before it (the fork's psnr_cuda, 53 per-lane instructions and 5 shuffles: 1.6x faster
/// with the form than with its lanes one at a time).
pub const SHUFFLE_WORK: usize = 64;

/// The instructions of `region` that run per lane (not once per half-warp), those inside
/// a loop counted 8 times: an estimate of what the form runs as vectors.
pub fn lane_work(f: &Func, p: &Plan, region: &Region) -> usize {
    let cfg = crate::cfg::build(f);
    let cyclic = loop_blocks(f, &cfg, region);
    f.body
        .iter()
        .enumerate()
        .filter(|(n, _)| region.nodes[*n])
        .map(|(n, node)| match node {
            Node::Instr(i) if !p.uniform(i) => {
                if cyclic[cfg.block_of[n]] {
                    8
                } else {
                    1
                }
            }
            _ => 0,
        })
        .sum()
}

/// By block of `cfg`: whether it lies on a cycle among the blocks of `region`'s nodes.
fn loop_blocks(f: &Func, cfg: &crate::cfg::Cfg, region: &Region) -> Vec<bool> {
    let within: std::collections::HashSet<usize> = (0..f.body.len()).filter(|&n| region.nodes[n]).map(|n| cfg.block_of[n]).collect();
    let mut cyclic = vec![false; cfg.blocks.len()];
    for b in crate::uniform::cycles_within(cfg, &within, &Default::default()).into_iter().flatten() {
        cyclic[b] = true;
    }
    cyclic
}

/// The region from node `start` to the stops it reaches (a branch goes to its label, a
/// jump without a guard and an exit do not fall through).
fn reach(f: &Func, start: usize, stops: &BTreeMap<usize, Stop>) -> Region {
    let labels = crate::resolve::label_positions(f);
    let mut nodes = vec![false; f.body.len()];
    let mut reached = BTreeMap::new();
    let mut work = vec![start];
    while let Some(n) = work.pop() {
        if n >= f.body.len() || nodes[n] || reached.contains_key(&n) {
            continue;
        }
        if let Some(s) = stops.get(&n) {
            reached.insert(n, *s);
            continue;
        }
        nodes[n] = true;
        let Node::Instr(i) = &f.body[n] else {
            work.push(n + 1);
            continue;
        };
        let falls = i.guard.is_some() || !matches!(i.src.op.as_str(), "bra" | "ret" | "exit" | "brx");
        if falls {
            work.push(n + 1);
        }
        if let (true, Some(Op::Label(l))) = (i.src.op == "bra", i.args.first()) {
            if let Some(&t) = labels.get(l) {
                work.push(t);
            }
        }
    }
    Region { nodes, stops: reached }
}

/// The vector form of the nodes of `region`; Err: the node that keeps it off and why.
/// `entry`: a loop-path segment's (None: a barrier-free kernel's whole body), where a
/// branch on a value loaded from memory ends the form too (a segment's form stops before
/// it: its lanes would rarely go the same way), as do, after a shuffle, a branch the
/// lanes may take apart and an exit (`Entry`).
fn plan_in(
    f: &Func,
    params: &[(u64, u64)],
    region: &Region,
    entry: Option<&Entry>,
    held: &HashSet<usize>,
) -> Result<Plan, (usize, String)> {
    let loaded = entry.is_some();
    let seed = entry.and_then(|e| e.seed);
    let after_shuffle = entry.is_some_and(Entry::after_shuffle);
    let mut p =
        Plan { class: seed.map_or_else(|| vec![Class::Uniform; f.regs.len()], <[Class]>::to_vec), held: held.clone(), ..Plan::default() };
    let at = |n: usize, i: &Instr, why: &str| (n, format!("{} (PTX line {}){why}", i.src.text(), i.src.line));
    let instrs = || {
        f.body.iter().enumerate().filter(|(n, _)| region.nodes[*n]).filter_map(|(n, node)| match node {
            Node::Instr(i) => Some((n, i)),
            Node::Label(_) => None,
        })
    };
    // Admission of each instruction whatever its operands' classes.
    // Without local memory a generic address reaches what a global one does (the host's
    // memory, shared memory's window included), never a lane's own frame.
    let generic = !f.frame.iter().any(|v| v.space == Space::Local);
    let elided = |n: usize| entry.and_then(|e| e.elided).and_then(|m| m.get(&n));
    for (n, i) in instrs().filter(|(n, _)| elided(*n).is_none()) {
        admit(i, params, generic, loaded).map_err(|why| at(n, i, &why))?;
    }
    // A segment's registers hold an address as a base plus offsets wherever the kernel uses
    // them as one (a stretch after a shuffle may store through what an earlier one made).
    let whole = vec![true; f.body.len()];
    let addresses = address_regs(f, if entry.is_some() { &whole } else { &region.nodes });
    // Classes grow from uniform to vector or split until nothing changes; with them, what
    // holds a loaded value.
    // What an earlier stretch left in lanes may have been loaded (registers read from the
    // frames at a barrier's resume point are taken as not: `%tid`'s tests come there).
    let resumed = entry.is_some_and(|e| e.resumed);
    let mut data: Vec<bool> = p.class.iter().map(|c| *c != Class::Uniform && !resumed).collect();
    let labels = crate::resolve::label_positions(f);
    loop {
        loop {
            let mut changed = false;
            for (n, i) in instrs() {
                if let Some(how) = elided(n) {
                    // Its result: the literal (the same for every lane) or the register.
                    let Some(d) = shuffle_dest(i) else { return Err(at(n, i, ": a shuffle without a result register")) };
                    let (c, tainted) = match how {
                        crate::uniform::Elided::Value(_) => (Class::Uniform, false),
                        crate::uniform::Elided::Repeat(r) => (p.class[*r], data[*r]),
                    };
                    if tainted && !std::mem::replace(&mut data[d], true) {
                        changed = true;
                    }
                    if p.class[d] != c && c != Class::Uniform {
                        if p.class[d] != Class::Uniform {
                            return Err(at(n, i, ": a register both 32-bit lanes and 64-bit ones"));
                        }
                        p.class[d] = c;
                        changed = true;
                    }
                    continue;
                }
                let outs = match vector_load(i, &p) {
                    Some(v) => v,
                    None => result(n, i, &p, f, &addresses, loaded).map_err(|why| at(n, i, &why))?.0.into_iter().collect(),
                };
                let tainted = tracked_access(i, "ld") || {
                    let mut rs = Vec::new();
                    i.args.iter().skip(1).for_each(|o| o.regs(&mut rs));
                    rs.iter().any(|&r| data[r])
                };
                for (d, c) in outs {
                    if tainted && c != Class::Uniform && !std::mem::replace(&mut data[d], true) {
                        changed = true;
                    }
                    // Uniform < vector; uniform < split < wide (a base plus offsets is a
                    // 64-bit lane value too).
                    match (p.class[d], c) {
                        (old, new) if old == new || new == Class::Uniform || (old, new) == (Class::Wide, Class::Split) => {}
                        (Class::Uniform, new) | (Class::Split, new @ Class::Wide) => {
                            p.class[d] = new;
                            changed = true;
                        }
                        _ => return Err(at(n, i, ": a register both 32-bit lanes and 64-bit ones")),
                    }
                }
            }
            if !changed {
                break;
            }
        }
        // A segment's branch on loaded values (its lanes would rarely go alike) or, after a
        // shuffle, one its lanes may take apart: both ways under masks where its code up to
        // the join is registers only; its results then differ between lanes (classes again).
        if !loaded {
            break;
        }
        let mut added = false;
        for (n, i) in instrs() {
            let apart = i.guard.is_some_and(|(_, g)| p.class[g] != Class::Uniform && (data[g] || after_shuffle));
            if i.src.op != "bra" || !apart || p.under_mask(n) || p.masked.contains_key(&n) {
                continue;
            }
            if let Some(j) = mask_join(f, region, &labels, n) {
                if p.in_mask.is_empty() {
                    p.in_mask = vec![false; f.body.len()];
                }
                p.in_mask[n + 1..j].iter_mut().for_each(|m| *m = true);
                p.masked.retain(|&b, _| b < n || b > j);
                p.masked.insert(n, j);
                added = true;
            }
        }
        if !added {
            break;
        }
    }
    // Every class fits its register: lanes of 32 bits, addresses of 64.
    for (n, i) in instrs() {
        let mut ds = Vec::new();
        match i.args.first() {
            Some(Op::Reg(d)) => ds.push(*d),
            Some(Op::Vector(v)) => v.iter().for_each(|o| o.regs(&mut ds)),
            _ => {}
        }
        for r in ds {
            let (c, t) = (p.class[r], f.regs[r].ty);
            if (c == Class::Vector && !bits32(t)) || (c == Class::Split && !wide_type(t)) || (c == Class::Wide && !bits64(t)) {
                return Err(at(n, i, &format!(": {} (a {}-bit register) differs between lanes", f.regs[r].name, t.size() * 8)));
            }
        }
    }
    if !p.class.contains(&Class::Vector) {
        let first = instrs().next();
        return Err((first.map_or(0, |(n, _)| n), "nothing in it differs between a row's threads".into()));
    }
    // A loop whose exit differs between lanes runs while every lane goes on (not on lanes'
    // loaded values; `LOOP_PASSES` bounds the rest); a store inside a loop logs each pass
    // under its own site id.
    let cfg = crate::cfg::build(f);
    let cyclic = loop_blocks(f, &cfg, region);
    for (n, i) in instrs() {
        let masked = p.masked.contains_key(&n) || p.under_mask(n);
        if i.src.op == "bra" {
            let back = matches!(i.args.first(), Some(Op::Label(l)) if labels.get(l).is_some_and(|&t| t <= n));
            if let (true, Some((_, g))) = (back, i.guard.filter(|(_, g)| p.class[*g] != Class::Uniform)) {
                if data[g] || masked || after_shuffle {
                    return Err(at(n, i, ": a loop whose exit differs between lanes as loaded values do"));
                }
                p.lane_loop_back.insert(n);
            }
            if masked {
                continue;
            }
            if loaded && i.guard.is_some_and(|(_, g)| p.class[g] != Class::Uniform && data[g]) {
                return Err(at(n, i, ": a branch on loaded values"));
            }
            if after_shuffle && i.guard.is_some_and(|(_, g)| p.class[g] != Class::Uniform) {
                return Err(at(n, i, ": a branch the lanes may take apart after a shuffle"));
            }
        }
        if after_shuffle && matches!(i.src.op.as_str(), "ret" | "exit") {
            return Err(at(n, i, ": an exit after a shuffle"));
        }
        if i.src.op == "st" {
            let passes = if cyclic[cfg.block_of[n]] {
                p.loop_store.insert(n);
                STORE_PASSES
            } else {
                1
            };
            p.store_site.insert(n, p.store_ids);
            p.store_ids += passes as usize;
            let bytes = i.src.access_bytes().unwrap_or(0);
            // One entry for the lanes' run, or one per lane where they are scattered.
            p.undo_entries += LANES * passes;
            p.undo_bytes += LANES * bytes * passes;
        }
        if tracked_access(i, "ld") {
            let k = p.load_site.len();
            p.load_site.insert(n, k);
        }
    }
    // The ranges and the undo log live on the thread's fiber stack (16 KiB at least):
    // past 64 load sites, one range holds them all (a store inside it bails more often).
    if p.undo_bytes > 4096 {
        let first = instrs().next();
        return Err((first.map_or(0, |(n, _)| n), "too many stores to undo per chunk".into()));
    }
    if p.load_site.len() > 64 {
        p.load_site.values_mut().for_each(|k| *k = 0);
    }
    if loaded {
        for (n, i) in instrs().filter(|(n, _)| elided(*n).is_none()) {
            if vector_load(i, &p).is_none() && matches!(result(n, i, &p, f, &addresses, true), Ok((_, true))) {
                p.lane_loop.insert(n);
            }
        }
        fill_lane_gaps(f, region, &mut p, &addresses);
    }
    Ok(p)
}

/// A shuffle's result register (`d` or `d|p`).
pub fn shuffle_dest(i: &Instr) -> Option<usize> {
    match i.args.first()? {
        Op::Reg(d) => Some(*d),
        Op::Pair(d, _) => match **d {
            Op::Reg(d) => Some(d),
            _ => None,
        },
        _ => None,
    }
}

/// The 64-bit registers an address is made of: the base registers of global loads and
/// stores, and what their 64-bit definitions (moves, sums, scaled indices, conversions
/// from 32 bits) read, transitively.
fn address_regs(f: &Func, within: &[bool]) -> Vec<bool> {
    let mut addr = vec![false; f.regs.len()];
    for (_, node) in f.body.iter().enumerate().filter(|(n, _)| within[*n]) {
        let Node::Instr(i) = node else { continue };
        if tracked_access(i, "ld") || tracked_access(i, "st") {
            for o in &i.args {
                if let Op::Addr(AddrBase::Reg(r), _) = o {
                    addr[*r] = true;
                }
            }
        }
    }
    loop {
        let mut changed = false;
        for (_, node) in f.body.iter().enumerate().filter(|(n, _)| within[*n]) {
            let Node::Instr(i) = node else { continue };
            let Some(Op::Reg(d)) = i.args.first() else { continue };
            if !addr[*d] || !matches!(i.src.op.as_str(), "mov" | "cvta" | "add" | "sub" | "mad" | "shl" | "mul" | "cvt") {
                continue;
            }
            for o in &i.args[1..] {
                if let Op::Reg(r) = o {
                    if wide_type(f.regs[*r].ty) && !std::mem::replace(&mut addr[*r], true) {
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            return addr;
        }
    }
}

/// Whether a chunk can run instruction `i` at all (its operands' classes aside).
/// `generic`: accesses without a state space are taken as global ones; `shared`: shared
/// memory's too (a loop-path segment's form).
fn admit(i: &Instr, params: &[(u64, u64)], generic: bool, shared: bool) -> Result<(), String> {
    let op = i.src.op.as_str();
    let ordered = [".volatile", ".relaxed", ".acquire", ".release", ".mmio", ".cv"];
    if ordered.iter().any(|m| i.src.has(m)) {
        return Err(": an ordered access".into());
    }
    for o in &i.args {
        operand_ok(o)?;
    }
    let space = Space::of_access(&i.src.mods);
    match op {
        "ld" if i.src.has(".param") => {
            if let Some(Op::Addr(AddrBase::Var(VarRef::Param(_)), _)) = i.args.get(1) {
                if crate::layout::own_param_at(&i.args[1], params, i.src.access_bytes().unwrap_or(0)).is_none() {
                    return Err(": outside the kernel's parameters".into());
                }
            }
            Ok(())
        }
        "ld" if i.src.has(".const") => Ok(()),
        "ld" | "st" if space == Some(Space::Global) || (generic && space.is_none()) || (shared && space == Some(Space::Shared)) => {
            // f32 elements as their bits.
            match i.src.last_ty() {
                Some(t) if (!t.float() || t == Ty::F32) && t.size() <= 4 && i.src.vec_width() <= 4 => Ok(()),
                _ => Err(": not a load or store of 32-bit-or-narrower integers or f32".into()),
            }
        }
        "bra" if matches!(i.args.first(), Some(Op::Label(_))) => Ok(()),
        "ret" | "exit" => Ok(()),
        "div" | "rem" if i.src.last_ty().is_some_and(|t| t.float()) => Ok(()),
        _ if PURE.contains(&op) => Ok(()),
        _ => Err(String::new()),
    }
}

fn operand_ok(o: &Op) -> Result<(), String> {
    match o {
        Op::Special(s) if !special_ok(s) => Err(format!(" reads {s}")),
        Op::Func(_) | Op::Named(_) | Op::List(_) | Op::Bracket(_) => Err(String::new()),
        // A module variable's address is the same for every lane (its memory is reached
        // only through the loads and stores `admit` takes); a frame's is the thread's own.
        Op::Var(VarRef::Frame(_), _) | Op::Addr(AddrBase::Var(VarRef::Frame(_)), _) => Err(": the thread's local memory".into()),
        Op::Vector(v) => v.iter().try_for_each(operand_ok),
        Op::Pair(a, b) => operand_ok(a).and(operand_ok(b)),
        Op::Not(a) => operand_ok(a),
        _ => Ok(()),
    }
}

/// The registers a global vector load (`ld.global.v2/.v4`) or a 32-bit unpack (`mov.b32
/// {lo, hi}`) writes and their class: as its address's or source's (per-lane addresses
/// give lanes); None for any other instruction.
fn vector_load(i: &Instr, p: &Plan) -> Option<Vec<(usize, Class)>> {
    let Some(Op::Vector(parts)) = i.args.first() else { return None };
    // `mov.b32 {lo, hi}, r`: a lane's halves.
    // `mov.b64 {lo, hi}, rd`: a 64-bit lane's halves too.
    let unpack = i.src.op == "mov"
        && matches!(i.src.last_ty(), Some(Ty::B32 | Ty::B64))
        && i.guard.is_none()
        && matches!(parts.as_slice(), [Op::Reg(_) | Op::Sink, Op::Reg(_) | Op::Sink]);
    let data_load = tracked_access(i, "ld");
    if !data_load && !unpack {
        return None;
    }
    let c = match p.of(&i.args[1]) {
        Class::Uniform => Class::Uniform,
        _ => Class::Vector,
    };
    Some(
        parts
            .iter()
            // A per-lane element must be a 32-bit lane: `plan` refuses other registers.
            .filter_map(|o| match o {
                Op::Reg(r) => Some((*r, c)),
                _ => None,
            })
            .collect(),
    )
}

/// Whether `i` (a `bfi`) has a literal position and length.
fn literal_field(i: &Instr) -> bool {
    matches!((i.args.get(3), i.args.get(4)), (Some(Op::Int(_)), Some(Op::Int(_))))
}

/// The register instruction `i` writes and the class it gets, given the operands'.
/// The register instruction `i` (node `n`) writes, the class it gets, and whether the form
/// runs it as a loop over the lanes (`lanes`: a segment's form, which may): under a mask or
/// a lane predicate's guard, and where no vector expression takes it.
fn result(n: usize, i: &Instr, p: &Plan, f: &Func, addresses: &[bool], lanes: bool) -> Result<(Option<(usize, Class)>, bool), String> {
    if matches!(i.src.op.as_str(), "bra" | "ret" | "exit") || !lanes {
        return vector_result(n, i, p, f, addresses).map(|r| (r, false));
    }
    let lane_guard = i.guard.is_some_and(|(_, g)| p.class[g] != Class::Uniform);
    let as_loop = || lane_loop_class(i, p, f, addresses).map(|r| (Some(r), true));
    if lane_guard {
        return as_loop().ok_or_else(|| ": under a predicate that differs between lanes".into());
    }
    // Under a mask as elsewhere a vector expression where one takes it (blended with the
    // lanes the mask leaves out), a loop over the lanes otherwise.
    match vector_result(n, i, p, f, addresses) {
        // Under a mask a result the same for every lane still differs: lanes by its type.
        Ok(Some((d, Class::Uniform))) if p.under_mask(n) => {
            let t = f.regs[d].ty;
            match () {
                _ if bits32(t) => Ok((Some((d, Class::Vector)), false)),
                _ if bits64(t) && !addresses[d] => Ok((Some((d, Class::Wide)), false)),
                _ => Err(": a register of this type under a mask".into()),
            }
        }
        Ok(Some((_, Class::Split))) if p.under_mask(n) => as_loop().ok_or_else(|| ": an address under a mask".into()),
        Ok(r) => Ok((r, false)),
        Err(why) => as_loop().ok_or(why),
    }
}

/// The register instruction `i` writes as a vector expression and the class it gets, given
/// the operands'.
fn vector_result(n: usize, i: &Instr, p: &Plan, f: &Func, addresses: &[bool]) -> Result<Option<(usize, Class)>, String> {
    use Class::*;
    let op = i.src.op.as_str();
    let guard = i.guard.map_or(Uniform, |(_, g)| p.class[g]);
    if matches!(op, "bra" | "ret" | "exit") {
        return Ok(None);
    }
    if guard != Uniform {
        return Err(": under a predicate that differs between lanes".into());
    }
    let ty = |k: usize| match i.args.get(k) {
        Some(Op::Reg(r)) => Some(f.regs[*r].ty),
        _ => None,
    };
    let srcs: Vec<Class> = i.args.iter().skip(if op == "st" { 0 } else { 1 }).map(|o| p.of(o)).collect();
    if op == "st" {
        // A shared address: 32-bit lanes or a base plus offsets.
        let per_lane = match p.of(&i.args[0]) {
            Split => true,
            Vector => shared_access(i, "st"),
            _ => false,
        };
        if !per_lane {
            return Err(": a store not at a per-lane address".into());
        }
        return Ok(None);
    }
    let Some(Op::Reg(d)) = i.args.first() else {
        return if srcs.iter().all(|c| *c == Uniform) { Ok(None) } else { Err(String::new()) };
    };
    let d = *d;
    if shared_access(i, "ld") {
        return match p.of(&i.args[1]) {
            Uniform => Ok(Some((d, Uniform))),
            Split | Vector if ty(0).is_some_and(bits32) && ty(0) != Some(Ty::Pred) => Ok(Some((d, Vector))),
            _ => Err(": a shared load into a register that is not a 32-bit lane".into()),
        };
    }
    if data_access(i, "ld") {
        return match p.of(&i.args[1]) {
            Uniform => Ok(Some((d, Uniform))),
            Split if ty(0).is_some_and(bits32) && ty(0) != Some(Ty::Pred) => Ok(Some((d, Vector))),
            // A narrower load into a 64-bit register: extended into 64-bit lanes.
            Split if ty(0).is_some_and(wide_type) => Ok(Some((d, Wide))),
            _ => Err(": a load whose address is not a base plus per-lane offsets".into()),
        };
    }
    // `mov.b64 rd, {lo, hi}`: two 32-bit lanes joined.
    if op == "mov" && matches!(i.args.get(1), Some(Op::Vector(_))) {
        return match (i.src.last_ty(), p.of(&i.args[1])) {
            (_, Uniform) => Ok(Some((d, Uniform))),
            (Some(Ty::B64), Vector) if ty(0).is_some_and(wide_type) => Ok(Some((d, Wide))),
            _ => Err(": on values that differ between lanes".into()),
        };
    }
    if srcs.iter().all(|c| *c == Uniform) {
        return Ok(Some((d, Uniform)));
    }
    let dt = f.regs[d].ty;
    if double_lanes(i) && !p.held.contains(&n) {
        // f64 results in 64-bit lanes, comparisons and conversions to 32 bits in 32-bit ones.
        let to32 = matches!(op, "setp") || (op == "cvt" && i.src.tys().first().is_some_and(|t| t.size() <= 4));
        let from32 = op == "cvt" && i.src.tys().get(1).is_some_and(|t| t.size() <= 4);
        // (selp's predicate: a mask of 32-bit lanes.)
        let ok = srcs.iter().enumerate().all(|(k, c)| match c {
            Uniform => true,
            Vector => from32 || (op == "selp" && k == 2),
            Wide => !from32,
            Split => false,
        });
        return match (ok, to32) {
            (true, true) if bits32(dt) => Ok(Some((d, Vector))),
            (true, false) if bits64(dt) && !addresses[d] => Ok(Some((d, Wide))),
            _ => Err(": f64 arithmetic on values not held as 64-bit lanes".into()),
        };
    }
    if float_lanes(i) && !p.held.contains(&n) {
        return if srcs.iter().all(|c| matches!(c, Uniform | Vector)) && bits32(dt) {
            Ok(Some((d, Vector)))
        } else {
            Err(": f32 arithmetic on values not held as 32-bit lanes".into())
        };
    }
    let t = i.src.last_ty();
    let int32 = t.is_some_and(|t| matches!(t, Ty::U32 | Ty::S32 | Ty::B32));
    let has = |m: &str| i.src.has(m);
    let plain = !has(".cc") && !has(".sat") && !has(".hi") && !has(".wide") && !has(".ftz");
    let no_split = !srcs.contains(&Split) && !srcs.contains(&Wide);
    let pred_ops = t == Some(Ty::Pred) && matches!(op, "and" | "or" | "xor" | "not" | "mov");
    let lanes = match op {
        "mov" | "add" | "sub" | "and" | "or" | "xor" | "not" | "shl" | "shr" | "abs" | "neg" | "min" | "max" | "selp" if int32 => plain,
        "mul" | "mad" if int32 => has(".lo") && !has(".cc"),
        // A byte permute by a literal selector (nvcc's byte packing): shifts and masks.
        "prmt" => {
            i.src.mods.iter().all(|m| !matches!(m.as_str(), ".f4e" | ".b4e" | ".rc8" | ".ecl" | ".ecr" | ".rc16"))
                && matches!(i.args.get(3), Some(Op::Int(_)))
        }
        "dp2a" | "dp4a" => true,
        // Of a 64-bit lane: a count in a 32-bit one.
        "clz" | "popc" if t.is_some_and(wide_type) && srcs == [Wide] => return Ok(Some((d, Vector))),
        "clz" | "popc" => int32,
        // A field insert at a literal place (nvcc joins a 64-bit sum's shuffled halves so).
        "bfi" => literal_field(i),
        "setp" if t.is_some_and(wide_type) && !matches!(i.args.first(), Some(Op::Pair(..))) && i.args.len() == 3 => {
            return Ok(Some((d, Vector)));
        }
        "setp" => int32 && !matches!(i.args.first(), Some(Op::Pair(..))) && i.args.len() == 3,
        "mov" => t.is_some_and(half),
        "mul" => has(".wide") && t.is_some_and(half),
        // 16-bit arithmetic: lanes of the zero-extended value, wrapped to 16 bits.
        "add" | "sub" | "neg" | "abs" | "min" | "max" if t.is_some_and(half) => plain,
        _ => pred_ops,
    };
    if lanes && no_split && lane_type(dt) {
        return Ok(Some((d, Vector)));
    }
    // Conversions between 32-bit lanes and 64-bit addresses.
    let tys = i.src.tys();
    if op == "cvt" && tys.len() == 2 && i.src.mods.iter().all(|m| !m.starts_with(".r") && m != ".sat" && m != ".ftz") {
        match (Some(tys[0]), Some(tys[1]), srcs.first()) {
            (Some(Ty::U32 | Ty::S32 | Ty::B32), Some(Ty::U32 | Ty::S32 | Ty::B32), Some(Vector)) if lane_type(dt) => {
                return Ok(Some((d, Vector)))
            }
            (Some(a), Some(b), Some(Vector)) if (half(a) || half(b)) && lane_type(a) && lane_type(b) && lane_type(dt) => {
                return Ok(Some((d, Vector)))
            }
            (Some(Ty::U32 | Ty::S32), Some(Ty::U64 | Ty::S64), Some(Split | Wide)) if lane_type(dt) => return Ok(Some((d, Vector))),
            (Some(Ty::U64 | Ty::S64), Some(Ty::U32 | Ty::S32), Some(Vector)) if wide_type(dt) => {
                return Ok(Some((d, if addresses[d] { Split } else { Wide })))
            }
            // A 64-bit register's low half, extended (`(int64_t)(int32_t)(x >> s)`).
            (Some(Ty::U64 | Ty::S64), Some(Ty::U32 | Ty::S32), Some(Wide)) if wide_type(dt) && !addresses[d] => return Ok(Some((d, Wide))),
            _ => {}
        }
    }
    let wide64 = t.is_some_and(wide_type) && wide_type(dt) && !has(".cc");
    let split = match (op, srcs.as_slice()) {
        ("mov", [Split]) => wide64,
        ("cvta", [Split]) => has(".to") && has(".global"),
        ("add", [Uniform, Split] | [Split, Uniform] | [Split, Split]) => wide64,
        ("sub", [Split, Uniform]) => wide64,
        ("mad", [Uniform, Uniform, Split] | [Uniform, Split, Split | Uniform] | [Split, Uniform, Split | Uniform]) => wide64 && has(".lo"),
        ("shl", [Split, Uniform]) => wide_type(dt) && matches!(i.args.get(2), Some(Op::Int(c)) if (1..32).contains(c)),
        ("mul", [Vector, Uniform] | [Uniform, Vector]) => has(".wide") && matches!(t, Some(Ty::U32 | Ty::S32)) && wide_type(dt),
        ("mul", [Split, Uniform] | [Uniform, Split]) => wide64 && has(".lo"),
        _ => false,
    };
    // Only what makes an address is held as a base plus offsets (whose 32 bits may not
    // hold a value: the chunk would bail); other 64-bit values are 64-bit lanes.
    if split && addresses[d] {
        return Ok(Some((d, Split)));
    }
    // 64-bit values no base plus offsets holds: 16 64-bit lanes.
    let t64 = t.is_some_and(wide_type);
    let wide = wide_type(dt)
        && !has(".cc")
        && !has(".sat")
        && match op {
            "mov" | "add" | "sub" | "and" | "or" | "xor" | "not" | "neg" | "selp" => t64,
            "cvta" => has(".to") && has(".global"),
            "mul" | "mad" => (has(".lo") && t64) || (has(".wide") && matches!(t, Some(Ty::U32 | Ty::S32))),
            "shl" | "shr" => t64 && matches!(p.of(&i.args[2]), Uniform | Vector),
            "bfi" => t64 && literal_field(i),
            _ => false,
        };
    if wide {
        return Ok(Some((d, Wide)));
    }
    Err(": on values that differ between lanes".into())
}
