//! Pass `uniform`: whether a kernel's threads can run as loops over the block instead of
//! one fiber each, and what the loop path needs to know (its barriers, and the registers
//! live across each).
//!
//! A kernel takes the loop path when every block barrier in it is reached by all the
//! threads of the block that have not exited, together: then the code between two
//! barriers can run for thread 0, 1, ... in turn, each thread's registers saved at the
//! barrier and restored after it. The proof is conservative; whatever it cannot show
//! keeps fibers, with the reason:
//!
//! - Uniform values: derived only from `%ntid`, `%ctaid`, `%nctaid` (and the other
//!   per-block special registers), the kernel's parameters, `.const` loads at uniform
//!   addresses and literals, by instructions whose result depends on their operands
//!   only, outside code that only some threads run. Everything else (`%tid`, any load
//!   from memory a thread can write, atomics, calls) is per thread.
//! - Barriers: `bar.sync 0` / `barrier.sync 0` in the kernel itself, without a thread
//!   count, not guarded. For every branch on a per-thread condition, the next barriers
//!   reachable on its sides must be one and the same barrier, or none (threads that
//!   leave never reach another barrier: an early exit, which the executor still reports
//!   as the barrier-divergence-exit hazard when a barrier completes without them).
//! - Warp collectives: an unguarded full-mask `shfl.sync`, `vote.sync` (ballot, any,
//!   all, uni), `match.sync`, integer `redux.sync` or `bar.warp.sync`, or `activemask`,
//!   in the kernel itself, is a split point like a barrier, proved reached by every
//!   thread together the same way; the runner performs it over each warp's 32
//!   saved operands. Blocks that are not whole warps run on fibers. A lane missing
//!   from a collective because it exited is the fiber path's `warp-lane-exited` case:
//!   where every collective is a shuffle, the runner leaves lanes that exited out of
//!   their warp's shuffles (they read 0, as measured), wherever they exit. With other
//!   collectives, early exits are taken only before the first split point, through
//!   code a probe can run (no memory but the parameters, nothing that can fault or
//!   report: `probe_allowed`); before a block runs, the probe runs each thread's start
//!   to learn which threads exit there, and a block where a warp would lose only some
//!   of its lanes runs on fibers. Other early exits keep fibers.
//!   A collective completes per warp, not per block, so such a kernel's runner
//!   (`run_warps` in runtime/ptx_rt.h) does not sweep the block between split points:
//!   it runs each thread to its next split point in the order the executor runs fibers
//!   (run queue, unstarted range, fairness streak), so that what the order shows
//!   (atomics' results, printf, the thread a fault names) is the same on both paths.
//! - Not handled (fibers): other warp collectives (`elect`, float `redux`, partial
//!   masks, collectives in device functions), `nanosleep`, `mbarrier` (any of its
//!   operations, `cp.async.mbarrier.arrive` too), barriers with counts,
//!   `bar.red`/`bar.arrive`, named barriers, barriers in device functions, `exit` in a
//!   device function, `isspacep`, and loops whose exit depends on memory they read
//!   (a thread could be spinning on a flag another thread of the block sets).

use crate::cfg::Cfg;
pub(crate) use crate::resolve::{effects, read_anywhere, write_counts, writes, PURE};
use crate::resolve::{AddrBase, Func, Instr, Module, Node, Op, VarRef};
use crate::waves::{literal_at, literal_regs, order_visible};
use std::collections::{BTreeSet, HashMap, HashSet};

/// How a kernel's threads run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Path {
    /// No barrier: the threads run one after another (a range run), as they always have.
    Plain,
    /// Loops over the block's threads between barriers.
    Loops,
    /// One fiber per thread.
    Fibers,
}

/// The decision for one kernel.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Which path.
    pub path: Path,
    /// Why (for the manifest and `EMU_CUDA_LOG=info`).
    pub why: String,
    /// Loop path: the body nodes of the barriers, in body order (barrier `k` has resume
    /// point `k + 1`).
    pub syncs: Vec<usize>,
    /// Loop path: the registers live across each barrier.
    pub live: Vec<Vec<usize>>,
    /// Loop path: the registers split point `k` stores into the thread's frame (those of
    /// `live[k]` whose frame copy may be stale there: written since the thread resumed,
    /// or on a path from its start), `frame_traffic`.
    pub save: Vec<Vec<usize>>,
    /// Loop path: the registers resume point `k + 1` loads from the frame (those read
    /// before the next split point, or stored by it, on some path).
    pub load: Vec<Vec<usize>>,
    /// Loop path with warp collectives and early exits: before a block runs, each
    /// thread's start is run as a probe (`probe_allowed` instructions only) to learn
    /// which threads exit before the first split point; a block where a warp would lose
    /// only some of its lanes runs on fibers.
    pub probe: bool,
    /// Loop path, every collective a shuffle, early exits: blocks whose warps lose some
    /// of their lanes run the loop path too, leaving them out of the warp's shuffles (the
    /// runner's `T.partial`, from the probe where `elide` has shuffles: those are split
    /// points there, passed through in blocks of whole warps).
    pub partial: bool,
    /// Loop path, every collective a shuffle: lanes may also exit after a split point,
    /// where no probe can see it: the runner takes every block as `partial` (its elided
    /// shuffles are split points, `T.partial` set), and the lanes that exit are left out
    /// of the shuffles after their exit.
    pub late: bool,
    /// Plain path: what lets a thread wait or spin (a loop, a fence, ... and where), for
    /// the notes; None where nothing does ([`Plan::calm`]).
    pub restless: Option<String>,
    /// Loop path: full-mask shuffles performed without an exchange (not split points),
    /// by body node.
    pub elide: HashMap<usize, Elided>,
    /// Loop path: the shuffle split points whose lane operand and clamp hold the same
    /// literal in every lane (`literal_at`), with those literals: the runner takes them
    /// from a table, and the lanes pass only the value (the operands are not read there).
    pub literal: HashMap<usize, (u32, u32)>,
    /// Loop path: the shuffle split points whose predicate result nothing reads (the
    /// runner does not write it: `LOOP_NOPRED`).
    pub pred_unread: HashSet<usize>,
    /// Loop path, per resume point (0: the start, `k + 1`: after split point `k`): whether
    /// the code a thread runs from there to its next split point calls a function (which
    /// reads `%tid` from `ctx`; the loop path's own code reads the runner's table): the
    /// runner writes the thread's index into `ctx` only there.
    pub tid_reads: Vec<bool>,
}

/// How the loop path performs a shuffle whose result needs no other lane (`elided_shuffles`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Elided {
    /// Every lane shuffles the same literal: every lane's result is that value.
    Value(u64),
    /// The same shuffle of the same operands earlier in its block, the register holding
    /// its result unchanged since: every lane's result is that register.
    Repeat(usize),
}

impl Plan {
    /// Plain path, and no thread of the kernel can wait or spin: its runner neither polls
    /// for a hand-off nor offers its threads for preemption.
    pub fn calm(&self) -> bool {
        self.path == Path::Plain && self.restless.is_none()
    }

    fn fibers(why: String) -> Plan {
        Plan {
            path: Path::Fibers,
            why,
            syncs: Vec::new(),
            live: Vec::new(),
            save: Vec::new(),
            load: Vec::new(),
            probe: false,
            partial: false,
            late: false,
            restless: None,
            elide: HashMap::new(),
            literal: HashMap::new(),
            pred_unread: HashSet::new(),
            tid_reads: Vec::new(),
        }
    }
}

/// Opcodes that are warp collectives (or need them).
const COLLECTIVES: &[&str] = &["shfl", "vote", "match", "redux", "activemask", "elect"];

/// A warp collective the loop path performs itself (as a split point, like a barrier),
/// unguarded and over the full mask (the literal, or a register `full(r)` shows to hold
/// it there: nvcc's form, `mov.u32 %r49, -1;` before the shuffles): `shfl.sync` (any
/// mode), `vote.sync` (ballot, any, all, uni), `match.sync` (any, all; 32 and 64 bits),
/// integer `redux.sync`, `bar.warp.sync`, and `activemask` (no mask: all the lanes of a
/// warp reaching it together are its result). With every thread of the block reaching it
/// together (proved as for barriers), no early exit before it (`uniform_barriers`) and
/// whole warps (the runner checks), each of its groups is exactly the 32 lanes of a
/// warp: no lane is missing, exited or outside the mask, so none of the fiber path's
/// hazards can arise.
pub fn loop_collective(i: &Instr, full: impl Fn(usize) -> bool) -> bool {
    let op = i.src.op.as_str();
    let int = || !i.src.has(".f32") && !i.src.has(".f16") && !i.src.has(".bf16") && !i.src.has(".f64");
    let mask_at = match op {
        "shfl" => 4,
        "vote" if [".ballot", ".any", ".all", ".uni"].iter().any(|m| i.src.has(m)) => 2,
        "match" if (i.src.has(".any") || i.src.has(".all")) && (i.src.has(".b32") || i.src.has(".b64")) => 2,
        "redux" if int() && [".add", ".min", ".max", ".and", ".or", ".xor"].iter().any(|m| i.src.has(m)) => 2,
        "bar" | "barrier" if i.src.has(".warp") => 0,
        "activemask" => return i.guard.is_none() && i.args.len() == 1,
        _ => return false,
    };
    let is_full = match i.args.get(mask_at) {
        Some(Op::Int(v)) => *v == 0xffff_ffff || *v == u64::MAX,
        Some(Op::Reg(r)) => full(*r),
        _ => false,
    };
    i.src.has(".sync") && i.guard.is_none() && is_full && i.args.len() == mask_at + 1
}

/// Whether an instruction sets a register to all ones in its low 32 bits: an unguarded
/// 32- or 64-bit integer `mov` of such a literal.
fn sets_full_mask(i: &Instr) -> bool {
    let wide = [".b32", ".u32", ".s32", ".b64", ".u64", ".s64"].iter().any(|t| i.src.has(t));
    i.src.op == "mov" && i.guard.is_none() && wide && i.args.len() == 2 && matches!(i.args[1], Op::Int(v) if v & 0xffff_ffff == 0xffff_ffff)
}

/// The registers of `f` that hold the full warp mask (low 32 bits all ones) at each node:
/// `full[k][r]`, for registers of at least 32 bits whose every write is a `mov` of the
/// mask (`sets_full_mask`) and one of which is on every path from the entry to node `k`.
/// (A register read before any write would read 0 on the fiber path: not full.)
fn full_masks(f: &Func, cfg: &Cfg) -> Vec<Vec<bool>> {
    let nr = f.regs.len();
    let nb = cfg.blocks.len();
    let mut cand: Vec<bool> = f.regs.iter().map(|r| r.ty.size() >= 4 && !r.ty.float()).collect();
    let mut written = vec![false; nr];
    for node in &f.body {
        let Node::Instr(i) = node else { continue };
        let full = sets_full_mask(i);
        for r in writes(i) {
            written[r] = true;
            if !full {
                cand[r] = false;
            }
        }
    }
    for r in 0..nr {
        cand[r] &= written[r];
    }
    // Definitely written on every path (a must-analysis: in = the meet of the
    // predecessors' out, the entry's in empty; unvisited blocks start full).
    let preds = cfg.preds();
    let gen = |b: usize, upto: usize, into: &mut Vec<bool>| {
        for node in &f.body[cfg.blocks[b].start..upto] {
            if let Node::Instr(i) = node {
                for r in writes(i) {
                    if cand[r] {
                        into[r] = true;
                    }
                }
            }
        }
    };
    let mut ins: Vec<Vec<bool>> = vec![cand.clone(); nb];
    if nb > 0 {
        ins[0] = vec![false; nr];
    }
    fixpoint(&mut ins, 0..nb, |b, ins| {
        let mut inb = if b == 0 { vec![false; nr] } else { cand.clone() };
        if b != 0 {
            for &p in &preds[b] {
                let mut out = ins[p].clone();
                gen(p, cfg.blocks[p].end, &mut out);
                for r in 0..nr {
                    inb[r] &= out[r];
                }
            }
        }
        inb
    });
    (0..f.body.len())
        .map(|k| {
            let b = cfg.block_of[k];
            let mut at = ins[b].clone();
            gen(b, k, &mut at);
            at
        })
        .collect()
}

/// Decides the path of kernel `fi`, given the functions it reaches (itself included).
pub fn analyse(m: &Module, fi: usize, reach: &BTreeSet<usize>, cfgs: &[Cfg]) -> Plan {
    let f = &m.funcs[fi];
    // What keeps fibers anywhere in the kernel's reach.
    let mut syncs = Vec::new();
    let mut collectives = 0;
    // The registers that hold the full warp mask, where the kernel has a collective.
    let full =
        f.body.iter().any(|n| matches!(n, Node::Instr(i) if COLLECTIVES.contains(&i.src.op.as_str()))).then(|| full_masks(f, &cfgs[fi]));
    for &g in reach {
        let h = &m.funcs[g];
        for (k, node) in h.body.iter().enumerate() {
            let Node::Instr(i) = node else { continue };
            let op = i.src.op.as_str();
            let at = |what: &str| {
                format!(
                    "{what} (`{}`, PTX line {}{})",
                    i.src.text(),
                    i.src.line,
                    if g == fi { String::new() } else { format!(" in {}", h.decl.name) }
                )
            };
            if g == fi && loop_collective(i, |r| full.as_ref().is_some_and(|m: &Vec<Vec<bool>>| m[k][r])) {
                syncs.push(k);
                collectives += 1;
                continue;
            }
            if COLLECTIVES.contains(&op) || (matches!(op, "bar" | "barrier") && i.src.has(".warp")) {
                return Plan::fibers(at(if g == fi {
                    "a warp collective other than an unguarded full-mask `shfl`, `vote`, `match`, `redux`, `bar.warp.sync` or `activemask`"
                } else {
                    "a warp collective inside a device function"
                }));
            }
            if op == "nanosleep" {
                return Plan::fibers(at("a spin-wait hint"));
            }
            if polling_load(i) {
                return Plan::fibers(at("a polling load (an acquire load at device or system scope, as a grid sync spins on)"));
            }
            if op == "mbarrier" || (op == "cp" && i.src.has(".mbarrier")) {
                return Plan::fibers(at("an mbarrier (its waits are rendezvous of threads)"));
            }
            if op == "isspacep" {
                return Plan::fibers(at("a test of the local window"));
            }
            if op == "exit" && g != fi {
                return Plan::fibers(at("exit inside a device function"));
            }
            if matches!(op, "bar" | "barrier") {
                if g != fi {
                    return Plan::fibers(at("a barrier inside a device function"));
                }
                let plain =
                    !i.src.has(".red") && !i.src.has(".arrive") && i.guard.is_none() && i.args.len() == 1 && i.args[0] == Op::Int(0);
                if !plain {
                    return Plan::fibers(at("a barrier other than an unguarded `bar.sync 0`"));
                }
                syncs.push(k);
            }
        }
        if let Some(why) = spin(h, &cfgs[g]) {
            return Plan::fibers(format!("{why}{}", if g == fi { String::new() } else { format!(" in {}", h.decl.name) }));
        }
    }
    if syncs.is_empty() {
        let restless = restless(m, reach, cfgs);
        let why = match &restless {
            None => "no barrier or warp collective: threads run one after another (no loop, call cycle, fence or clock read: none can wait or spin)".to_string(),
            Some(what) => format!("no barrier or warp collective: threads run one after another (one may wait or spin in {what}: its runner lets it hand the rest on)"),
        };
        return Plan {
            path: Path::Plain,
            why,
            syncs,
            live: Vec::new(),
            save: Vec::new(),
            load: Vec::new(),
            probe: false,
            partial: false,
            late: false,
            restless,
            elide: HashMap::new(),
            literal: HashMap::new(),
            pred_unread: HashSet::new(),
            tid_reads: Vec::new(),
        };
    }
    let cfg = &cfgs[fi];
    // A kernel whose collectives are all shuffles needs no probe: its runner leaves the
    // lanes that exited out of their warp's shuffles, as the fibers do (ptx_rt.h
    // `run_warps`), wherever they exit; the others run such blocks on fibers.
    let shuffles_only = syncs.iter().all(|&n| match &f.body[n] {
        Node::Instr(i) => i.src.op == "shfl" || (matches!(i.src.op.as_str(), "bar" | "barrier") && !i.src.has(".warp")),
        Node::Label(_) => true,
    });
    let exits = match uniform_barriers(f, cfg, &syncs, collectives > 0, shuffles_only) {
        Ok(e) => e,
        Err(why) => return Plan::fibers(why),
    };
    let (probe, late) = (exits != Exits::None, exits == Exits::Late);
    let partial = probe && shuffles_only;
    // Shuffles whose result needs no exchange stop being split points, once the proof
    // above (and the probe, which still stops at them) has seen them as collectives.
    // Where lanes may have exited (`partial`) they stay split points that blocks of whole
    // warps pass through (a lane reading an exited lane gets 0, and each shuffle reports
    // the exit as the fibers' does): the probe tells the runner which blocks.
    let read = read_anywhere(f);
    let elide = if order_visible(f, &read) { HashMap::new() } else { elided_shuffles(f, cfg, &syncs, &read) };
    // Lanes that exit after a split point: no probe can tell beforehand, so every block
    // takes the elided shuffles as split points (`Plan::late`).
    let probe = if partial { !elide.is_empty() && !late } else { probe };
    if !partial {
        syncs.retain(|n| !elide.contains_key(n));
    }
    let collectives = collectives - elide.len();
    let lit = literal_regs(f);
    let literal: HashMap<usize, (u32, u32)> = syncs
        .iter()
        .filter_map(|&n| match &f.body[n] {
            Node::Instr(i) if i.src.op == "shfl" && i.args.len() == 5 => {
                let b = literal_at(f, cfg, &lit, n, &i.args[2])?;
                let c = literal_at(f, cfg, &lit, n, &i.args[3])?;
                Some((n, (b as u32, c as u32)))
            }
            _ => None,
        })
        .collect();
    let pred_unread = syncs
        .iter()
        .copied()
        .filter(|&n| match &f.body[n] {
            Node::Instr(i) if i.src.op == "shfl" => match i.args.first() {
                Some(Op::Pair(_, p)) => matches!(**p, Op::Reg(q) if !read[q]),
                _ => true,
            },
            _ => false,
        })
        .collect();
    let live = liveness(f, cfg, &syncs, &literal);
    let (save, load) = frame_traffic(f, cfg, &syncs, &live, &literal);
    let bars = syncs.len() - collectives - if partial { elide.len() } else { 0 };
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let what = match (bars, collectives) {
        (b, 0) => format!("{b} barrier{}", plural(b)),
        (0, c) => format!("{c} warp collective{}", plural(c)),
        (b, c) => format!("{b} barrier{} and {c} warp collective{}", plural(b), plural(c)),
    };
    let mut why = if late {
        format!("{what} reached by every thread together (lanes that exit, before the first or after it, are left out of their warp's shuffles)")
    } else if partial {
        format!("{what} reached by every thread together (lanes that exit before the first are left out of their warp's shuffles)")
    } else if probe {
        format!("{what} reached by every thread together (early exits probed per block: whole warps)")
    } else {
        format!("{what} reached by every thread together")
    };
    if !elide.is_empty() {
        let n = elide.len();
        let whole = if late {
            " only where no lane can have exited: they are exchanges"
        } else if partial {
            " in blocks whose warps lose no lanes"
        } else {
            ""
        };
        why.push_str(&format!("; {n} more shuffle{} of a literal or repeating an earlier one, done without an exchange{whole}", plural(n)));
    }
    let fused: usize = syncs.iter().map(|&n| crate::waves::riders(&f.body[n])).sum();
    if fused > 0 {
        why.push_str(&format!(
            "; {fused} more shuffle{} ride{} in the exchange of an independent one (`waves`)",
            plural(fused),
            if fused == 1 { "s" } else { "" }
        ));
    }
    let tid_reads = tid_reads(f, cfg, &syncs);
    Plan { path: Path::Loops, why, syncs, live, save, load, probe, partial, late, restless: None, elide, literal, pred_unread, tid_reads }
}

// ---- operands and effects ---------------------------------------------------------

/// Special registers that are the same for every thread of a block.
fn uniform_special(name: &str) -> bool {
    let base = name.split('.').next().unwrap_or(name);
    matches!(
        base,
        "%ntid"
            | "%ctaid"
            | "%nctaid"
            | "%clusterid"
            | "%nclusterid"
            | "%cluster_ctaid"
            | "%cluster_ctarank"
            | "%cluster_nctaid"
            | "%cluster_nctarank"
            | "%is_explicit_cluster"
            | "%nsmid"
            | "%smid"
            | "%gridid"
            | "%nwarpid"
            | "%dynamic_smem_size"
            | "%total_smem_size"
            | "%aggr_smem_size"
    )
}

/// Whether an operand (not a register) has the same value in every thread.
fn uniform_operand(op: &Op) -> bool {
    match op {
        Op::Special(n) => uniform_special(n),
        Op::Var(VarRef::Frame(_), _) => false,
        Op::Addr(AddrBase::Var(VarRef::Frame(_)), _) => false,
        Op::Vector(v) | Op::List(v) | Op::Bracket(v) => v.iter().all(uniform_operand),
        Op::Pair(a, b) => uniform_operand(a) && uniform_operand(b),
        Op::Not(p) => uniform_operand(p),
        _ => true,
    }
}

/// Whether instruction `i` computes the same result in every thread given uniform
/// register operands.
fn uniform_kind(i: &Instr) -> bool {
    let op = i.src.op.as_str();
    if PURE.contains(&op) {
        return !i.src.has(".cc") && !matches!(op, "addc" | "subc" | "madc");
    }
    if op == "ld" || op == "ldu" {
        // The kernel's own parameters and constant memory: no thread writes them.
        return match i.args.get(1) {
            Some(Op::Addr(AddrBase::Var(VarRef::Param(_)), _)) => i.src.has(".param") || i.src.has(".param::entry"),
            Some(Op::Addr(_, _)) => i.src.has(".const"),
            _ => false,
        };
    }
    false
}

// ---- shuffles without an exchange -------------------------------------------------

/// The loop path's full-mask `shfl.sync` split points whose result every lane can compute
/// alone (whose predicate result, if any, nothing reads): a shuffle of a value that is
/// the same literal in every lane (a literal operand, or a register every write of which
/// is an unguarded `mov` of that literal and which is written earlier in the block), and
/// a shuffle repeating one earlier in its block with the same operands, none of them nor
/// the earlier result written between. nvcc's 64-bit warp reductions in VMAF's vif
/// filters shuffle a zero high word and the high word twice: half their shuffles.
fn elided_shuffles(f: &Func, cfg: &Cfg, syncs: &[usize], read: &[bool]) -> HashMap<usize, Elided> {
    let mut out = HashMap::new();
    let lit = literal_regs(f);
    for &n in syncs {
        let Node::Instr(i) = &f.body[n] else { continue };
        if i.src.op != "shfl" || i.args.len() != 5 {
            continue;
        }
        match &i.args[0] {
            Op::Reg(_) => {}
            Op::Pair(d, p) if matches!(**d, Op::Reg(_)) && matches!(**p, Op::Reg(q) if !read[q]) => {}
            _ => continue,
        }
        let b = cfg.block_of[n];
        let start = cfg.blocks[b].start;
        let written_since = |from: usize, r: usize| f.body[from..n].iter().any(|m| matches!(m, Node::Instr(j) if writes(j).contains(&r)));
        // A literal in every lane.
        let value = literal_at(f, cfg, &lit, n, &i.args[1]);
        if let Some(v) = value {
            out.insert(n, Elided::Value(v & 0xffff_ffff));
            continue;
        }
        // The same shuffle earlier in the block.
        let mut srcs = Vec::new();
        for a in &i.args[1..] {
            a.regs(&mut srcs);
        }
        for j in (start..n).rev() {
            let Node::Instr(e) = &f.body[j] else { break };
            if e.src.op != "shfl" || e.src.mods != i.src.mods || e.args.len() != 5 || e.args[1..] != i.args[1..] || e.guard.is_some() {
                continue;
            }
            let res = match &e.args[0] {
                Op::Reg(r) => *r,
                Op::Pair(d, _) => match **d {
                    Op::Reg(r) => r,
                    _ => break,
                },
                _ => break,
            };
            if !written_since(j + 1, res) && srcs.iter().all(|&r| !written_since(j, r)) {
                out.insert(n, Elided::Repeat(res));
            }
            break;
        }
    }
    out
}

// ---- spin-waits -------------------------------------------------------------------

/// An acquire load at device (`.gpu`) or system scope: how a thread polls a flag another
/// block sets (cooperative_groups' grid sync spins on one). The emitter puts a spin-wait
/// hint (the runtime's `yield_now`) before it, and its kernel keeps fibers.
pub fn polling_load(i: &Instr) -> bool {
    matches!(i.src.op.as_str(), "ld" | "ldu") && i.src.has(".acquire") && (i.src.has(".gpu") || i.src.has(".sys"))
}

/// What lets a thread of a plain-path kernel wait or spin, or None where nothing does
/// (`calm`): a cycle in the control flow of a function it reaches (a loop, counted or
/// not: this does not tell them apart), a call cycle or an indirect call, a fence or a
/// clock read (the runtime may preempt a thread at those calls). A calm kernel's runner
/// runs each thread to its end: nothing can hand the rest of its range on (the
/// executor's `range_stop`) and nothing needs preempting. (A barrier, collective or
/// `nanosleep` never reaches here: they keep the kernel off the plain path.)
fn restless(m: &Module, reach: &BTreeSet<usize>, cfgs: &[Cfg]) -> Option<String> {
    let mut callees: Vec<(usize, Vec<usize>)> = Vec::new();
    for &g in reach {
        let f = &m.funcs[g];
        let within = if reach.len() > 1 { format!(" of {}", f.decl.name) } else { String::new() };
        let line = |node: usize| match f.body.get(node) {
            Some(Node::Instr(i)) => format!(", PTX line {}", i.src.line),
            _ => String::new(),
        };
        if let Some(c) = cycles(&cfgs[g]).first() {
            // Its first block in body order: where the loop begins.
            let head = c.iter().map(|&b| cfgs[g].blocks[b].start).min().unwrap_or(0);
            let first = (head..f.body.len()).find(|&n| matches!(f.body[n], Node::Instr(_))).unwrap_or(head);
            return Some(format!("a loop{within}{}", line(first)));
        }
        let mut out = Vec::new();
        for (n, node) in f.body.iter().enumerate() {
            let Node::Instr(i) = node else { continue };
            let op = i.src.op.as_str();
            let what = |w: &str| Some(format!("{w} (`{}`{within}{})", i.src.text(), line(n)));
            if matches!(op, "membar" | "fence") {
                return what("a fence");
            }
            if op == "nanosleep" || matches!(op, "bar" | "barrier") || COLLECTIVES.contains(&op) {
                return what("a sleep, barrier or warp collective");
            }
            if i.args.iter().any(|a| matches!(a, Op::Special(n) if n.starts_with("%clock") || n.starts_with("%globaltimer"))) {
                return what("a clock read");
            }
            if op == "call" {
                for a in &i.args {
                    match a {
                        Op::Func(h) => out.push(*h),
                        Op::Reg(_) => return what("an indirect call"),
                        _ => {}
                    }
                }
            }
        }
        callees.push((g, out));
    }
    // A call cycle: repeatedly drop the functions that call nothing left.
    let mut left: BTreeSet<usize> = reach.clone();
    loop {
        let leaves: Vec<usize> =
            callees.iter().filter(|(g, c)| left.contains(g) && c.iter().all(|h| !left.contains(h))).map(|(g, _)| *g).collect();
        if leaves.is_empty() {
            if left.is_empty() {
                return None;
            }
            // Name the functions on the cycle: also drop those nothing left calls (the
            // kernel above a recursive function).
            loop {
                let called: BTreeSet<usize> =
                    callees.iter().filter(|(g, _)| left.contains(g)).flat_map(|(_, c)| c.iter().copied()).collect();
                let roots: Vec<usize> = left.iter().copied().filter(|g| !called.contains(g)).collect();
                if roots.is_empty() {
                    break;
                }
                for g in roots {
                    left.remove(&g);
                }
            }
            return Some(format!("a call cycle ({})", left.iter().map(|&g| m.funcs[g].decl.name.as_str()).collect::<Vec<_>>().join(", ")));
        }
        for g in leaves {
            left.remove(&g);
        }
    }
}

/// A loop of `f` whose exit depends on memory read inside it (or on the clock): it may
/// wait for another thread, which a loop over threads would never run. Nested loops are
/// looked at one by one (a spin inside a counted loop, such as cooperative_groups' grid
/// sync inside a kernel's rounds, leaves only its own loop on a value it reads): each
/// loop's inner loops are the cycles left once the edges back to its entries are cut.
fn spin(f: &Func, cfg: &Cfg) -> Option<String> {
    let mut work = cycles(cfg);
    let mut cut: HashSet<(usize, usize)> = HashSet::new();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); cfg.blocks.len()];
    for (p, blk) in cfg.blocks.iter().enumerate() {
        for &t in &blk.succs {
            preds[t].push(p);
        }
    }
    while let Some(scc) = work.pop() {
        let inside: HashSet<usize> = scc.iter().copied().collect();
        // Its entries: block 0, or blocks reached from outside it.
        let entries: HashSet<usize> = scc.iter().copied().filter(|&b| b == 0 || preds[b].iter().any(|p| !inside.contains(p))).collect();
        let before = cut.len();
        for &b in &scc {
            for &t in &cfg.blocks[b].succs {
                if entries.contains(&t) {
                    cut.insert((b, t));
                }
            }
        }
        if cut.len() > before {
            work.extend(cycles_within(cfg, &inside, &cut));
        }
        let mut tainted = vec![false; f.regs.len()];
        loop {
            let mut changed = false;
            for &b in &scc {
                for node in &f.body[cfg.blocks[b].start..cfg.blocks[b].end] {
                    let Node::Instr(i) = node else { continue };
                    let op = i.src.op.as_str();
                    let reads_memory = (matches!(op, "ld" | "ldu" | "atom" | "call" | "tex" | "tld4" | "suld" | "txq" | "suq" | "cp")
                        && !uniform_kind(i))
                        || i.args.iter().any(|a| matches!(a, Op::Special(n) if n.starts_with("%clock") || n.starts_with("%globaltimer")));
                    let mut u = Vec::new();
                    for a in i.args.iter().skip(1) {
                        a.regs(&mut u);
                    }
                    let src = reads_memory || u.iter().any(|&r| tainted[r]) || i.guard.is_some_and(|(_, p)| tainted[p]);
                    if src {
                        for r in writes(i) {
                            if !tainted[r] {
                                tainted[r] = true;
                                changed = true;
                            }
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        for &b in &scc {
            let blk = &cfg.blocks[b];
            if blk.end == blk.start {
                continue;
            }
            let Node::Instr(i) = &f.body[blk.end - 1] else { continue };
            let leaves = blk.succs.iter().any(|s| !inside.contains(s)) || matches!(i.src.op.as_str(), "ret" | "exit");
            let cond = match i.src.op.as_str() {
                "bra" | "ret" | "exit" => i.guard.map(|(_, p)| tainted[p]).unwrap_or(false),
                "brx" => {
                    let mut u = Vec::new();
                    if let Some(a) = i.args.first() {
                        a.regs(&mut u);
                    }
                    u.iter().any(|&r| tainted[r])
                }
                _ => false,
            };
            if leaves && cond {
                return Some(format!("a loop whose exit depends on memory it reads (PTX line {}): possibly a spin-wait", i.src.line));
            }
        }
    }
    None
}

/// The cycles among the blocks `within`, leaving out the edges of `cut`.
pub(crate) fn cycles_within(cfg: &Cfg, within: &HashSet<usize>, cut: &HashSet<(usize, usize)>) -> Vec<Vec<usize>> {
    let succs: Vec<Vec<usize>> = (0..cfg.blocks.len())
        .map(|b| {
            if !within.contains(&b) {
                return Vec::new();
            }
            cfg.blocks[b].succs.iter().copied().filter(|t| within.contains(t) && !cut.contains(&(b, *t))).collect()
        })
        .collect();
    tarjan(&succs)
}

/// The strongly connected components of the graph that hold a cycle (Tarjan).
pub(crate) fn cycles(cfg: &Cfg) -> Vec<Vec<usize>> {
    let succs: Vec<Vec<usize>> = cfg.blocks.iter().map(|b| b.succs.clone()).collect();
    tarjan(&succs)
}

/// The strongly connected components holding a cycle of the graph `succs` (Tarjan).
fn tarjan(succs: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = succs.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on = vec![false; n];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut next = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        // Iterative DFS: (node, next successor position).
        let mut work = vec![(root, 0usize)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on[root] = true;
        while let Some(&mut (v, ref mut k)) = work.last_mut() {
            if let Some(&w) = succs[v].get(*k) {
                *k += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on[w] = true;
                    work.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                work.pop();
                if let Some(&(u, _)) = work.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    while let Some(w) = stack.pop() {
                        on[w] = false;
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    let cyclic = comp.len() > 1 || succs[v].contains(&v);
                    if cyclic {
                        comp.sort_unstable();
                        out.push(comp);
                    }
                }
            }
        }
    }
    out
}

// ---- barriers reached together ------------------------------------------------------

/// The branch that ends block `b`, if it is one: (its condition's registers, its line).
/// (A guarded `ret`/`exit` is one: its leaving side has no successor.)
fn branch_of(f: &Func, cfg: &Cfg, b: usize) -> Option<(Vec<usize>, u32)> {
    let blk = &cfg.blocks[b];
    if blk.end == blk.start {
        return None;
    }
    let Node::Instr(i) = &f.body[blk.end - 1] else { return None };
    match i.src.op.as_str() {
        "bra" | "ret" | "exit" => i.guard.map(|(_, p)| (vec![p], i.src.line)),
        "brx" => {
            let mut u = Vec::new();
            if let Some(a) = i.args.first() {
                a.regs(&mut u);
            }
            Some((u, i.src.line))
        }
        _ => None,
    }
}

/// Shows that every barrier is reached by all live threads together, or says why not,
/// and where threads may exit early. With `collectives`, a lane that exits could be
/// missing from a warp collective (the fiber path's `warp-lane-exited` case): where every
/// collective is a shuffle (`shuffles_only`) the runner leaves such lanes out wherever
/// they exit; otherwise an early exit is only taken before the first split point, where
/// a probe can tell which threads take it (`probe_exits`).
fn uniform_barriers(f: &Func, cfg: &Cfg, syncs: &[usize], collectives: bool, shuffles_only: bool) -> Result<Exits, String> {
    let mut probe = false;
    let mut late = false;
    let nb = cfg.blocks.len();
    let sync_id = |node: usize| syncs.iter().position(|&s| s == node);
    // The first barrier of each block, and the barriers reachable from each block's
    // start before another barrier (NS).
    let first: Vec<Option<usize>> = (0..nb).map(|b| (cfg.blocks[b].start..cfg.blocks[b].end).find_map(sync_id)).collect();
    let mut ns: Vec<BTreeSet<usize>> = first.iter().map(|s| s.iter().copied().collect()).collect();
    fixpoint(&mut ns, (0..nb).rev(), |b, ns| {
        let mut u = ns[b].clone();
        if first[b].is_none() {
            for &s in &cfg.blocks[b].succs {
                u.extend(ns[s].iter().copied());
            }
        }
        u
    });
    let ns_out = |b: usize| -> BTreeSet<usize> {
        let mut u = BTreeSet::new();
        for &s in &cfg.blocks[b].succs {
            u.extend(ns[s].iter().copied());
        }
        u
    };
    // Whether a barrier can follow node k (later in its block, or after the block).
    let relevant: Vec<bool> = (0..f.body.len())
        .map(|k| {
            let b = cfg.block_of[k];
            (k + 1..cfg.blocks[b].end).any(|j| sync_id(j).is_some()) || !ns_out(b).is_empty()
        })
        .collect();
    let mut nonuni = vec![false; f.regs.len()];
    let mut tainted = vec![false; f.body.len()];
    loop {
        // Per-thread registers, given the code only some threads run (`tainted`).
        loop {
            let mut changed = false;
            for (k, node) in f.body.iter().enumerate() {
                let Node::Instr(i) = node else { continue };
                if !relevant[k] {
                    continue;
                }
                let w = writes(i);
                if w.is_empty() || w.iter().all(|&r| nonuni[r]) {
                    continue;
                }
                let mut u = Vec::new();
                for a in i.args.iter().skip(1) {
                    a.regs(&mut u);
                }
                let per_thread = tainted[k]
                    || !uniform_kind(i)
                    || u.iter().any(|&r| nonuni[r])
                    || i.guard.is_some_and(|(_, p)| nonuni[p])
                    || !i.args.iter().skip(1).all(uniform_operand);
                if per_thread {
                    for r in w {
                        if !nonuni[r] {
                            nonuni[r] = true;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        // Branches on per-thread conditions: their sides must meet at one barrier (or
        // leave for good); the code between runs in only some threads.
        let mut grew = false;
        for b in 0..nb {
            let Some((cond, line)) = branch_of(f, cfg, b) else { continue };
            if !cond.iter().any(|&r| nonuni[r]) {
                continue;
            }
            let out = ns_out(b);
            if out.is_empty() {
                continue;
            }
            let sides: Vec<BTreeSet<usize>> = cfg.blocks[b].succs.iter().map(|&s| ns[s].clone()).filter(|s| !s.is_empty()).collect();
            if sides.len() == 1 {
                // The other sides reach no barrier (an early exit): the threads that go
                // on are the only ones that meet again, and they all took this side.
                if collectives {
                    if !after_split(cfg, syncs)[b] {
                        probe = true;
                    } else if shuffles_only {
                        late = true;
                    } else {
                        return Err(format!(
                            "an early exit (the branch at PTX line {line}) after a split point, before a warp collective other than a shuffle: lanes of a warp could be missing from it"
                        ));
                    }
                }
                continue;
            }
            if sides.iter().any(|s| *s != out) || out.len() > 1 {
                let names: Vec<String> = out.iter().map(|&s| format!("{}", line_of(f, syncs[s]))).collect();
                return Err(format!(
                    "the branch at PTX line {line} depends on the thread and leads to different barriers (PTX lines {})",
                    names.join(", ")
                ));
            }
            let target = syncs[*out.iter().next().expect("one barrier")];
            // Taint what lies between the branch and that barrier.
            let mut seen = vec![false; nb];
            let mut work: Vec<usize> = cfg.blocks[b].succs.clone();
            while let Some(x) = work.pop() {
                if std::mem::replace(&mut seen[x], true) {
                    continue;
                }
                let blk = &cfg.blocks[x];
                let mut stopped = false;
                for (k, t) in tainted.iter_mut().enumerate().take(blk.end).skip(blk.start) {
                    if k == target {
                        stopped = true;
                        break;
                    }
                    if !*t {
                        *t = true;
                        grew = true;
                    }
                }
                if !stopped {
                    work.extend(blk.succs.iter().copied());
                }
            }
        }
        if !grew {
            if late {
                return Ok(Exits::Late);
            }
            if probe {
                return match probe_exits(f, cfg, syncs) {
                    Ok(()) => Ok(Exits::Probed),
                    // Exits the probe cannot see: taken as exits after a split point.
                    Err(_) if shuffles_only => Ok(Exits::Late),
                    Err(why) => Err(why),
                };
            }
            return Ok(Exits::None);
        }
    }
}

/// Where the threads of a loop-path kernel with warp collectives may exit early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exits {
    /// Nowhere before the last split point.
    None,
    /// Only before the first split point, through code the probe runs.
    Probed,
    /// Also after a split point (every collective a shuffle).
    Late,
}

/// Blocks that a split point can reach (a split in the block itself included): code
/// that runs after the first split point.
fn after_split(cfg: &Cfg, syncs: &[usize]) -> Vec<bool> {
    let nb = cfg.blocks.len();
    let mut after = vec![false; nb];
    let mut work: Vec<usize> = syncs.iter().map(|&s| cfg.block_of[s]).collect();
    while let Some(b) = work.pop() {
        if std::mem::replace(&mut after[b], true) {
            continue;
        }
        work.extend(cfg.blocks[b].succs.iter().copied());
    }
    after
}

/// What the probe of a block's threads runs (`Plan::probe`): instructions whose effect
/// is their destination, computed from registers, special registers, literals and the
/// kernel's parameters, that can neither fault nor report (no division: by zero it
/// reports); branches. Anything else ends the probe: the thread does not exit first.
pub fn probe_allowed(i: &Instr) -> bool {
    let op = i.src.op.as_str();
    if matches!(op, "bra") {
        return true;
    }
    if matches!(op, "div" | "rem") {
        return false;
    }
    if op == "ld" {
        return matches!(i.args.get(1), Some(Op::Addr(AddrBase::Var(VarRef::Param(_)), _))) && i.src.has(".param");
    }
    PURE.contains(&op)
        && !i.src.has(".cc")
        && !i.args.iter().skip(1).any(|a| matches!(a, Op::Special(n) if n.starts_with("%clock") || n.starts_with("%globaltimer")))
}

/// The probe is exact: every `ret`/`exit` that a thread can reach before any split point
/// is reached only through `probe_allowed` instructions (so the probe, which stops at the
/// first other one, sees every such exit). Walks the paths from the entry that have passed
/// no split point, noting those that passed another instruction ("dirty").
fn probe_exits(f: &Func, cfg: &Cfg, syncs: &[usize]) -> Result<(), String> {
    let nb = cfg.blocks.len();
    // (clean, dirty) reachability at each block's start.
    let mut st = vec![(false, false); nb];
    if nb == 0 {
        return Ok(());
    }
    st[0].0 = true;
    let mut work = vec![0usize];
    while let Some(b) = work.pop() {
        let (mut clean, mut dirty) = st[b];
        let blk = &cfg.blocks[b];
        for k in blk.start..blk.end {
            let Node::Instr(i) = &f.body[k] else { continue };
            if syncs.contains(&k) {
                clean = false;
                dirty = false;
                break;
            }
            let op = i.src.op.as_str();
            if matches!(op, "ret" | "exit") {
                if dirty {
                    return Err(format!(
                        "an early exit (PTX line {}) after code a probe cannot run, before a warp collective: lanes of a warp could be missing from it",
                        i.src.line
                    ));
                }
                if i.guard.is_none() {
                    clean = false;
                }
                continue;
            }
            if !probe_allowed(i) {
                dirty |= clean;
                clean = false;
            }
        }
        for &s in &blk.succs {
            let (c, d) = st[s];
            let n = (c || clean, d || dirty);
            if n != (c, d) {
                st[s] = n;
                work.push(s);
            }
        }
    }
    Ok(())
}

fn line_of(f: &Func, node: usize) -> u32 {
    match &f.body[node] {
        Node::Instr(i) => i.src.line,
        Node::Label(_) => 0,
    }
}

// ---- frame traffic ----------------------------------------------------------------

/// An instruction's registers: those it may write, those it defines in full, those it
/// reads.
type Effects = (Vec<usize>, Vec<usize>, Vec<usize>);

/// Which registers each split point stores into the thread's frame and each resume point
/// loads from it (`Plan::save`, `Plan::load`), instead of every live register both ways.
///
/// Forward (must): the frame copy `S.r` of register r holds r's value ("in sync") after
/// resume point k for every r of `live[k]` (the split point stored it, or it was in
/// sync there), until the thread writes r; nothing is in sync at the thread's start.
/// A split point stores the registers of its `live` set not in sync on every path to it.
/// Backward: a resume point loads the registers read before the next split point on
/// some path (a split point's store of a register reads it too); a register it does not
/// load is not read there before it is written, and where it is live at the next split
/// point unwritten, its frame copy is still in sync (not stored again).
fn frame_traffic(
    f: &Func,
    cfg: &Cfg,
    syncs: &[usize],
    live: &[Vec<usize>],
    literal: &HashMap<usize, (u32, u32)>,
) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
    let nb = cfg.blocks.len();
    let nr = f.regs.len();
    let sync_id = |node: usize| syncs.iter().position(|&s| s == node);
    // Per node: registers it may write (whole or not, guarded or not), defined in full,
    // and read.
    let eff: Vec<Option<Effects>> = f
        .body
        .iter()
        .enumerate()
        .map(|(k, n)| match n {
            Node::Instr(i) => {
                let (d, u) = loop_effects(i, literal.contains_key(&k));
                let mut w = writes(i);
                w.extend(d.iter().copied());
                Some((w, d, u))
            }
            Node::Label(_) => None,
        })
        .collect();
    let live_set: Vec<Vec<bool>> = live
        .iter()
        .map(|l| {
            let mut v = vec![false; nr];
            l.iter().for_each(|&r| v[r] = true);
            v
        })
        .collect();
    let preds = cfg.preds();
    // Forward: in sync at each block's end (true = top, for the intersection).
    let mut scratch: Vec<Vec<bool>> = vec![vec![false; nr]; syncs.len()];
    let mut save: Vec<Vec<bool>> = vec![vec![false; nr]; syncs.len()];
    let through = |b: usize, v: &mut Vec<bool>, save: &mut Vec<Vec<bool>>| {
        let range = cfg.blocks[b].start..cfg.blocks[b].end;
        for (k, e) in eff.iter().enumerate().take(range.end).skip(range.start) {
            let Some((w, _, _)) = e else { continue };
            if let Some(id) = sync_id(k) {
                // Its result is written at the resume point: not stored.
                let mut keep = live_set[id].clone();
                w.iter().for_each(|&r| keep[r] = false);
                for r in 0..nr {
                    save[id][r] |= keep[r] && !v[r];
                }
                v.clone_from(&keep);
            }
            for &r in w {
                v[r] = false;
            }
        }
    };
    let sync_in = |b: usize, out: &[Vec<bool>]| -> Vec<bool> {
        let mut v = vec![b != 0; nr];
        for &p in &preds[b] {
            for r in 0..nr {
                v[r] &= out[p][r];
            }
        }
        v
    };
    let mut sync_out: Vec<Vec<bool>> = vec![vec![true; nr]; nb];
    fixpoint(&mut sync_out, 0..nb, |b, out| {
        let mut v = sync_in(b, out);
        through(b, &mut v, &mut scratch);
        v
    });
    for b in 0..nb {
        let mut v = sync_in(b, &sync_out);
        through(b, &mut v, &mut save);
    }
    // Backward: read before the next split point (its store included).
    let mut load: Vec<Vec<bool>> = vec![vec![false; nr]; syncs.len()];
    let back = |b: usize, u: &mut Vec<bool>, load: &mut Vec<Vec<bool>>| {
        for k in (cfg.blocks[b].start..cfg.blocks[b].end).rev() {
            let Some((_, d, us)) = &eff[k] else { continue };
            for &r in d {
                u[r] = false;
            }
            if let Some(id) = sync_id(k) {
                // After the split point: what its resume point must load (not its
                // result, written there).
                for r in 0..nr {
                    load[id][r] |= u[r] && live_set[id][r];
                }
                u.clone_from(&save[id]);
            }
            for &r in us {
                u[r] = true;
            }
        }
    };
    let used_out = |b: usize, used_in: &[Vec<bool>]| -> Vec<bool> {
        let mut u = vec![false; nr];
        for &s in &cfg.blocks[b].succs {
            for r in 0..nr {
                u[r] |= used_in[s][r];
            }
        }
        u
    };
    let mut used_in: Vec<Vec<bool>> = vec![vec![false; nr]; nb];
    fixpoint(&mut used_in, (0..nb).rev(), |b, used_in| {
        let mut u = used_out(b, used_in);
        back(b, &mut u, &mut scratch);
        u
    });
    for b in 0..nb {
        let mut u = used_out(b, &used_in);
        back(b, &mut u, &mut load);
    }
    let list = |v: Vec<Vec<bool>>| v.into_iter().map(|s| (0..nr).filter(|&r| s[r]).collect()).collect();
    (list(save), list(load))
}

/// `Plan::tid_reads`: from each resume point, a walk of the code to the split points it
/// reaches, looking for a call.
fn tid_reads(f: &Func, cfg: &Cfg, syncs: &[usize]) -> Vec<bool> {
    let reads = |i: &Instr| i.src.op == "call";
    let split: HashSet<usize> = syncs.iter().copied().collect();
    let starts = std::iter::once(0).chain(syncs.iter().map(|&n| n + 1));
    starts
        .map(|start| {
            let mut seen = vec![false; cfg.blocks.len()];
            let mut work = vec![start];
            while let Some(from) = work.pop() {
                if from >= f.body.len() {
                    continue;
                }
                let b = cfg.block_of[from];
                let mut stopped = false;
                for k in from..cfg.blocks[b].end {
                    if let Node::Instr(i) = &f.body[k] {
                        if reads(i) {
                            return true;
                        }
                    }
                    if split.contains(&k) {
                        stopped = true;
                        break;
                    }
                }
                if !stopped {
                    for &s in &cfg.blocks[b].succs {
                        if !seen[s] {
                            seen[s] = true;
                            work.push(cfg.blocks[s].start);
                        }
                    }
                }
            }
            false
        })
        .collect()
}

/// `effects` of an instruction as the loop path runs it: a shuffle whose lane operand and
/// clamp are literals (`Plan::literal`) reads only the value it shuffles (the runner has
/// the literals; the mask is proved full).
fn loop_effects(i: &Instr, literal: bool) -> (Vec<usize>, Vec<usize>) {
    let (d, mut u) = effects(i);
    if literal {
        u.clear();
        i.args[1].regs(&mut u);
    }
    (d, u)
}

/// A round-robin dataflow fixpoint: recomputes `state[b]` as `step(b, state)` for each
/// block `b` of `order`, pass after pass, until a pass changes nothing.
fn fixpoint<T: PartialEq, I: Iterator<Item = usize> + Clone>(state: &mut [T], order: I, mut step: impl FnMut(usize, &[T]) -> T) {
    loop {
        let mut changed = false;
        for b in order.clone() {
            let v = step(b, state);
            if v != state[b] {
                state[b] = v;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

// ---- liveness -------------------------------------------------------------------------

/// The registers live across each barrier (read on some path after it before being
/// written in full).
fn liveness(f: &Func, cfg: &Cfg, syncs: &[usize], literal: &HashMap<usize, (u32, u32)>) -> Vec<Vec<usize>> {
    live_at(f, cfg, syncs, literal, false)
}

/// The registers live just before each node of `nodes` (read on some path from it before
/// being written in full), as the loop path runs the code: a resume point there must load
/// them (the cuts of a segment's vector form, `simd::segment`).
pub(crate) fn live_before(f: &Func, cfg: &Cfg, nodes: &[usize], literal: &HashMap<usize, (u32, u32)>) -> Vec<Vec<usize>> {
    live_at(f, cfg, nodes, literal, true)
}

/// The registers live after each node of `nodes`, or before it (`before`).
fn live_at(f: &Func, cfg: &Cfg, nodes: &[usize], literal: &HashMap<usize, (u32, u32)>, before: bool) -> Vec<Vec<usize>> {
    let nb = cfg.blocks.len();
    let nr = f.regs.len();
    let eff: Vec<Option<(Vec<usize>, Vec<usize>)>> = f
        .body
        .iter()
        .enumerate()
        .map(|(k, n)| match n {
            Node::Instr(i) => Some(loop_effects(i, literal.contains_key(&k))),
            Node::Label(_) => None,
        })
        .collect();
    // Live-in of every block.
    let mut live_in: Vec<Vec<bool>> = vec![vec![false; nr]; nb];
    let transfer = |b: usize, out: &[bool]| -> Vec<bool> {
        let mut l = out.to_vec();
        for k in (cfg.blocks[b].start..cfg.blocks[b].end).rev() {
            if let Some((d, u)) = &eff[k] {
                for &r in d {
                    l[r] = false;
                }
                for &r in u {
                    l[r] = true;
                }
            }
        }
        l
    };
    loop {
        let mut changed = false;
        for b in (0..nb).rev() {
            let mut out = vec![false; nr];
            for &s in &cfg.blocks[b].succs {
                for r in 0..nr {
                    out[r] |= live_in[s][r];
                }
            }
            let l = transfer(b, &out);
            if l != live_in[b] {
                live_in[b] = l;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    nodes
        .iter()
        .map(|&node| {
            let b = cfg.block_of[node];
            let mut l = vec![false; nr];
            for &s in &cfg.blocks[b].succs {
                for r in 0..nr {
                    l[r] |= live_in[s][r];
                }
            }
            let from = if before { node } else { node + 1 };
            for k in (from..cfg.blocks[b].end).rev() {
                if let Some((d, u)) = &eff[k] {
                    for &r in d {
                        l[r] = false;
                    }
                    for &r in u {
                        l[r] = true;
                    }
                }
            }
            (0..nr).filter(|&r| l[r]).collect()
        })
        .collect()
}
