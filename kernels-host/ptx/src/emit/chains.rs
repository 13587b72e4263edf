//! Chains: a warp's run of shuffles joined by register arithmetic, done for its 32 lanes
//! at once (`KC<fi>`).
//!
//! A warp reduction is a chain of shuffles with a few instructions of register arithmetic
//! between them (`v += __shfl_down_sync(~0u, v, 16)`, then 8, 4, 2, 1). The loop path runs
//! each link as a batch of the warp's lanes (`LP`: each lane's segment on the lane's
//! frame) and then an exchange over the 32 frames: ~5 cycles per lane per link, most of a
//! psnr-like kernel's time. Where every link qualifies, the chain runs here on the warp's
//! values held as arrays (one per register the links pass through the frame): one gather
//! from the frames, per link a loop over the 32 lanes (the segment's own statements, its
//! frame accesses bound to the arrays) and an exchange between arrays, one scatter back.
//! Nothing in such links shows the lanes' order (`LP`), and the runner leaves the state the
//! links one by one would have left (ptx_rt.h `run_warps`), so both paths stay equal.
//!
//! A link qualifies where its segment is `LP` (register arithmetic alone, ending at a
//! collective), that collective is a shuffle with literal lane operand and clamp, and no
//! kept multiply operand (`contract`) or carry flag crosses its ends. A chain starts at a
//! resume point no qualifying link ends at (the runner has just exchanged its shuffle on
//! the frames) and has at least two links.

use super::func::{ctype, frame_loads, sync_kind, Segment, SYNC_SHFL_IDX, SYNC_SHFL_UP};
use crate::resolve::{Func, Node};
use crate::uniform::Plan;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;

/// What `body_loops` knows of a kernel that a chain's code needs.
pub(super) struct Kernel<'a> {
    pub fi: usize,
    /// The kernel's index (its frame is `FR<k>`).
    pub k: usize,
    pub f: &'a Func,
    pub plan: &'a Plan,
    /// `LP`, by resume point.
    pub pure: &'a [u8],
    /// Per split point, the stores (at it) and loads (at its resume point) of kept
    /// multiply operands.
    pub save_kept: &'a [String],
    pub load_kept: &'a [String],
    /// Some function of the module uses the carry flag (it goes through the frame).
    pub carry: bool,
    /// The frame's `ga`/`gr` length (`waves`' largest fused shuffle).
    pub group: usize,
    /// Declarations a segment's code needs (`FnEmitter::decls`).
    pub decls: &'a str,
}

/// The chains of a kernel: `KC<fi>(T, P0, w, at, budget, steps)` runs the chain starting
/// at resume point `at` for warp frames `w[0..32)` when it has at most `budget` links,
/// returning the split point it ends at (its last exchange done) with its number of links
/// in `steps`; 0 where no chain starts there. Also how many chains and links it holds, and
/// the links by resume point (`LN<fi>`: the split point each ends at, `CHAIN_HEAD` set at
/// a chain's start; 0 elsewhere), which the runner books without running where other warps
/// are queued between the links (ptx_rt.h `run_warps`).
pub(super) fn emit(kn: &Kernel, segments: &[Segment], points: usize) -> (String, usize, usize, Vec<u32>) {
    let (fi, k) = (kn.fi, kn.k);
    let mut out = format!(
        "static inline __attribute__((always_inline)) uint32_t KC{fi}(Thread &T, const uint8_t *P0, FR{k} *w, uint32_t at, uint32_t budget, uint32_t &steps) {{\n  (void)T; (void)P0; (void)w; (void)budget; (void)steps;\n  switch (at) {{\n"
    );
    // The qualifying links, by the resume point they start at.
    let links: HashMap<usize, &Segment> =
        if kn.carry { HashMap::new() } else { segments.iter().filter(|s| qualifies(kn, s)).map(|s| (s.from, s)).collect() };
    let ends: BTreeSet<usize> = links.values().map(|s| s.to).collect();
    let mut heads: Vec<usize> = links.keys().copied().filter(|from| !ends.contains(from)).collect();
    heads.sort_unstable();
    let (mut chains, mut total) = (0, 0);
    let mut table = vec![0u32; points];
    for head in heads {
        let mut chain: Vec<&Segment> = Vec::new();
        let mut at = head;
        while let Some(s) = links.get(&at) {
            chain.push(s);
            at = s.to;
        }
        if chain.len() < 2 {
            continue;
        }
        let (gather, stored) = passed(kn, &chain);
        let held: BTreeSet<usize> = gather.union(&stored).copied().collect();
        let bytes = held_bytes(kn, &held);
        if bytes > MAX_HELD_BYTES {
            continue;
        }
        chains += 1;
        total += chain.len();
        for (j, s) in chain.iter().enumerate() {
            table[s.from] = s.to as u32 | if j == 0 { CHAIN_HEAD } else { 0 };
        }
        emit_chain(kn, &chain, Held { gather, stored, held, bytes }, &mut out);
    }
    let _ = writeln!(out, "  default: return 0u;\n  }}\n}}");
    (out, chains, total, table)
}

/// `LN<fi>`'s mark of a chain's first link (ptx_rt.h `LOOP_CHAIN_HEAD`).
const CHAIN_HEAD: u32 = 0x8000_0000;

/// The most a chain's arrays may take (beyond `STACK_HELD_BYTES` they are the runner
/// thread's, not on its stack); a chain that would need more runs link by link.
const MAX_HELD_BYTES: usize = 256 * 1024;
/// The most a chain's arrays may take on the runner's stack.
const STACK_HELD_BYTES: usize = 8 * 1024;

/// The registers a chain's links pass through the frame: those loaded at a link's start
/// and those stored at its end.
fn passed(kn: &Kernel, chain: &[&Segment]) -> (BTreeSet<usize>, BTreeSet<usize>) {
    let (mut loaded, mut stored) = (BTreeSet::new(), BTreeSet::new());
    for s in chain {
        loaded.extend(kn.plan.load[s.from - 1].iter().copied());
        stored.extend(kn.plan.save[s.to - 1].iter().copied());
    }
    (loaded, stored)
}

/// The bytes of a chain's arrays (`V`) holding registers `held`, and its exchanges' (a
/// word, a predicate and the fused words of each lane).
fn held_bytes(kn: &Kernel, held: &BTreeSet<usize>) -> usize {
    let regs: usize = held.iter().map(|&r| kn.f.regs[r].ty.size() as usize).sum();
    32 * (regs + 4 + 4 + 1 + 8 * kn.group)
}

/// Whether segment `s` may be a link of a chain.
fn qualifies(kn: &Kernel, s: &Segment) -> bool {
    if s.from == 0 || kn.pure.get(s.from) != Some(&1) || s.to == 0 {
        return false;
    }
    let n = kn.plan.syncs[s.to - 1];
    let shuffle = matches!(&kn.f.body[n], Node::Instr(i) if (SYNC_SHFL_UP..=SYNC_SHFL_IDX).contains(&sync_kind(i)));
    shuffle && kn.plan.literal.contains_key(&n) && kn.save_kept[s.to - 1].is_empty() && kn.load_kept[s.from - 1].is_empty()
}

/// A chain's registers (`passed`): those its links load come from the frames once (a
/// copy loaded before it is stored in the chain is the frame's: nothing between stores
/// it); those stored and live across the last split point go back.
struct Held {
    gather: BTreeSet<usize>,
    stored: BTreeSet<usize>,
    held: BTreeSet<usize>,
    bytes: usize,
}

fn emit_chain(kn: &Kernel, chain: &[&Segment], regs: Held, out: &mut String) {
    let (f, plan) = (kn.f, kn.plan);
    let head = chain[0].from;
    let z = chain[chain.len() - 1].to;
    let Held { gather, stored, held, bytes } = regs;
    let scatter: Vec<usize> = stored.iter().copied().filter(|r| plan.live[z - 1].contains(r)).collect();
    let g = kn.group;
    let _ = writeln!(out, "  case {head}u: {{ // {} links", chain.len());
    let _ = writeln!(out, "    if (budget < {}u) return 0u;", chain.len());
    // The warp's values: one array per register, the exchange's fields.
    out.push_str("    struct VT {");
    for &r in &held {
        let _ = write!(out, " {} r{r}[32];", ctype(f.regs[r].ty));
    }
    out.push_str(" uint32_t xa[32]; uint32_t xr[32]; bool xp[32];");
    if g > 0 {
        let _ = write!(out, " uint32_t ga[{g}][32]; uint32_t gr[{g}][32];");
    }
    // On the runner's stack where small (the compiler then drops the stores nothing reads:
    // float_moment's chains ran 10% slower with their arrays elsewhere), else the
    // thread's (a fiber's stack may be as small as 16 KiB).
    if bytes <= STACK_HELD_BYTES {
        out.push_str(" } V;\n");
    } else {
        out.push_str(" };\n    static thread_local VT V_tls;\n    VT &V = *ptx::tls_once(V_tls);\n");
    }
    // The gather: the registers and the head's exchange result.
    out.push_str("    for (uint32_t l = 0; l < 32; ++l) {\n");
    for &r in &gather {
        let _ = write!(out, " V.r{r}[l] = w[l].r{r};");
    }
    out.push_str(" V.xr[l] = w[l].xr; V.xp[l] = w[l].xp;");
    if g > 0 {
        let _ = write!(out, " for (uint32_t j = 0; j < {g}u; ++j) V.gr[j][l] = w[l].gr[j];");
    }
    out.push_str("\n    }\n");
    // A lane's view: the frame fields the segment's code names, bound to its arrays.
    let mut view = String::from("struct {");
    let mut init = Vec::new();
    for &r in &held {
        let _ = write!(view, " {} &r{r};", ctype(f.regs[r].ty));
        init.push(format!("V.r{r}[l]"));
    }
    view.push_str(" uint32_t &xa; uint32_t &xr; bool &xp;");
    init.extend(["V.xa[l]".to_string(), "V.xr[l]".into(), "V.xp[l]".into()]);
    if g > 0 {
        // A fused shuffle's other words (`S.ga[j]`): lane `l` of word `j`'s array.
        view.push_str(" ptx::ChainWords ga; ptx::ChainWords gr;");
        init.extend(["{&V.ga[0][0], l}".to_string(), "{&V.gr[0][0], l}".into()]);
    }
    let _ = write!(view, " }} S{{{}}};", init.join(", "));
    for s in chain {
        let _ = writeln!(out, "    for (uint32_t l = 0; l < 32; ++l) {{\n      {view}");
        out.push_str(&s.locals(f, kn.decls));
        let _ = writeln!(out, "      {}", frame_loads(&plan.load[s.from - 1]));
        out.push_str(&s.text);
        out.push_str("    }\n");
        // The exchange of the link's shuffle.
        let n = plan.syncs[s.to - 1];
        let Node::Instr(i) = &f.body[n] else { unreachable!("a chain's split point is an instruction") };
        let mode = sync_kind(i) - SYNC_SHFL_UP;
        let (b, c) = plan.literal[&n];
        let more = crate::waves::riders(&f.body[n]);
        let _ = writeln!(out, "    ptx::chain_shfl<{mode}, {b}u, {c}u>(V.xa, V.xr, V.xp);");
        for j in 0..more {
            let _ = writeln!(out, "    ptx::chain_shfl<{mode}, {b}u, {c}u>(V.ga[{j}], V.gr[{j}], nullptr);");
        }
    }
    // The scatter: what the links stored that is live on, and the last exchange's result.
    let more_z = crate::waves::riders(&f.body[plan.syncs[z - 1]]);
    out.push_str("    for (uint32_t l = 0; l < 32; ++l) {\n");
    for &r in &scatter {
        let _ = write!(out, " w[l].r{r} = V.r{r}[l];");
    }
    out.push_str(" w[l].xr = V.xr[l]; w[l].xp = V.xp[l];");
    if more_z > 0 {
        let _ = write!(out, " for (uint32_t j = 0; j < {more_z}u; ++j) w[l].gr[j] = V.gr[j][l];");
    }
    out.push_str("\n    }\n");
    let _ = writeln!(out, "    steps = {}u;\n    return {z}u;\n  }}", chain.len());
}
