//! The `uniform` pass's decisions on the kernels of emu-driver/tests/thread_loops
//! (barrier shapes the loop path must take, and shapes that must keep fibers), and the
//! loop-path code it makes the emitter write.

use simtwin_ptx::uniform::Path;
use simtwin_ptx::{translate, KernelInfo, Options};

fn kernels() -> (Vec<KernelInfo>, String) {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../emu-driver/tests/thread_loops/loops.ptx")).unwrap();
    let t = translate(&[&src], &Options { units: 1, ..Options::default() }).unwrap();
    (t.kernels, t.units.concat())
}

fn path_of<'a>(k: &'a [KernelInfo], name: &str) -> (&'a Path, &'a str) {
    let k = k.iter().find(|k| k.name == name).unwrap_or_else(|| panic!("no kernel {name}"));
    (&k.threads, &k.threads_why)
}

#[test]
fn uniform_barriers_take_the_loop_path() {
    let (k, _) = kernels();
    for name in ["tree_sum", "early_exit", "ping_pong", "join_then_bar", "data_loop", "leave_loop_early"] {
        let (p, why) = path_of(&k, name);
        assert_eq!(*p, Path::Loops, "{name}: {why}");
        assert!(why.contains("reached by every thread together"), "{name}: {why}");
    }
    assert!(path_of(&k, "ping_pong").1.starts_with("2 barriers"), "{}", path_of(&k, "ping_pong").1);
}

#[test]
fn full_mask_collectives_every_thread_reaches_take_the_loop_path() {
    let (k, src) = kernels();
    let cases = [
        ("shuffle", "1 barrier and 1 warp collective"),
        ("warp_ops", "1 barrier and 11 warp collectives"),
        ("warp_sums", "1 barrier and 5 warp collectives"),
        ("warp_tickets", "1 barrier and 4 warp collectives"),
        ("reg_mask", "2 warp collectives"),
        ("warp_more", "11 warp collectives"),
        ("shfl_after_exit", "1 warp collective reached by every thread together (lanes that exit before the first are left out of their warp's shuffles)"),
        ("shfl_exit_part", "1 barrier and 6 warp collectives reached by every thread together (lanes that exit before the first are left out of"),
        ("shfl_exit_elided", "1 barrier and 3 warp collectives reached by every thread together (lanes that exit before the first are left out of their warp's shuffles); 3 more"),
        ("shfl_exit_40", "1 barrier and 2 warp collectives reached by every thread together (early exits probed per block"),
        ("shfl_exit_64", "1 barrier and 2 warp collectives reached by every thread together (early exits probed per block"),
        ("shfl_exit_dirty", "1 warp collective reached by every thread together (lanes that exit, before the first or after it, are left out"),
        ("shfl_exit_late", "1 barrier and 5 warp collectives reached by every thread together (lanes that exit, before the first or after it, are left out of their warp's shuffles); 1 more shuffle of a literal or repeating an earlier one, done without an exchange only where no lane can have exited: they are exchanges; 1 more shuffle rides in the exchange of an independent one (`waves`)"),
    ];
    for (name, why) in cases {
        let (p, w) = path_of(&k, name);
        assert_eq!(*p, Path::Loops, "{name}: {w}");
        assert!(w.starts_with(why), "{name}: {w}");
    }
    // warp_tickets' split points in body order: bfly (3), down (2), barrier (0),
    // ballot (5), any (6), the shuffles' lane operand and clamp literals (+128) and their
    // predicate results unread (+64); its frame
    // holds the exchange; its runner refuses partial warps.
    let i = k.iter().position(|k| k.name == "warp_tickets").unwrap();
    assert!(src.contains(&format!("static const uint8_t LK{i}[] = {{195,194,0,5,6,0}};")), "LK{i}");
    let frame = src.split(&format!("struct FR{i} {{")).nth(1).unwrap().split("\n};").next().unwrap().to_string();
    assert!(frame.contains("uint64_t xa; uint32_t xb, xc, xr; bool xp;") && frame.contains("collectives = true"), "{frame}");
    let runner = src.split(&format!("void RL{i}(")).nth(1).unwrap().split("\n}").next().unwrap().to_string();
    assert!(runner.contains("|| all % 32u != 0"), "{runner}");
    // Lanes may exit after a split point (`Plan::late`): every block of shfl_exit_late
    // takes its elided shuffles as exchanges, with no probe.
    let l = k.iter().position(|k| k.name == "shfl_exit_late").unwrap();
    let runner = src.split(&format!("void RL{l}(")).nth(1).unwrap().split("\n}").next().unwrap().to_string();
    assert!(runner.contains("T.partial = 1u;") && !runner.contains("whole_warp_exits"), "{runner}");
    // A barrier-only kernel's runner takes any block.
    let j = k.iter().position(|k| k.name == "tree_sum").unwrap();
    let runner = src.split(&format!("void RL{j}(")).nth(1).unwrap().split("\n}").next().unwrap().to_string();
    assert!(!runner.contains("% 32u"), "{runner}");
}

#[test]
fn what_the_analysis_cannot_prove_keeps_fibers_with_the_reason() {
    let (k, _) = kernels();
    let cases = [
        ("divergent_bar", "depends on the thread and leads to different barriers"),
        ("spin", "possibly a spin-wait"),
        ("bar_in_thread_loop", "depends on the thread and leads to different barriers"),
        ("shfl_half_mask", "a warp collective other than an unguarded full-mask `shfl`, `vote`, `match`, `redux`, `bar.warp.sync` or `activemask` (`shfl.sync.bfly.b32"),
        ("vote_exit_late", "an early exit (the branch at PTX line"),
        ("reg_mask_maybe", "a warp collective other than an unguarded full-mask `shfl`, `vote`, `match`, `redux`, `bar.warp.sync` or `activemask` (`shfl.sync.bfly.b32"),
    ];
    for (name, why) in cases {
        let (p, w) = path_of(&k, name);
        assert_eq!(*p, Path::Fibers, "{name}: {w}");
        assert!(w.contains(why), "{name}: {w}");
    }
}

#[test]
fn the_loop_path_saves_only_what_lives_across_a_barrier_and_exports_its_runners() {
    let (k, src) = kernels();
    // One runner per loop-path kernel, null for the others, in kernel order.
    let table = src.split("const loop_run_t LOOPS[] = {").nth(1).unwrap().split("};").next().unwrap().to_string();
    let want: Vec<String> =
        k.iter().enumerate().map(|(i, k)| if k.threads == Path::Loops { format!("&RL{i}") } else { "nullptr".into() }).collect();
    assert_eq!(table.split(", ").filter(|s| !s.trim().is_empty()).map(|s| s.trim().to_string()).take(k.len()).collect::<Vec<_>>(), want);
    assert!(src.contains("simtwin_ptx_loops_v1"));
    // ping_pong has 44 registers; across its barriers live only the round's value and
    // counter, the two shared addresses, the output address and the float chain (7),
    // plus the operands of the multiply that ptxas's contraction fuses with the add on
    // the other side of the second barrier, and the carry flag.
    let i = k.iter().position(|k| k.name == "ping_pong").unwrap();
    let frame = src.split(&format!("struct FR{i} {{")).nth(1).unwrap().split("\n};").next().unwrap().to_string();
    let regs = frame.split(" r").skip(1).filter(|t| t.split(';').next().is_some_and(|n| n.parse::<u32>().is_ok())).count();
    assert_eq!(regs, 7, "{frame}");
    assert!(frame.contains("float m") && frame.contains("uint32_t cc;"), "{frame}");
    // Registers never live across the same barrier share a slot (an anonymous union):
    // the float chain's value before and after the second barrier, here.
    let slots = frame
        .lines()
        .filter(|l| l.trim_start().starts_with("uint") || l.trim_start().starts_with("float") || l.trim_start().starts_with("union"))
        .filter(|l| l.contains(" r"))
        .count();
    assert!(slots < regs && frame.contains("union {"), "{frame}");
}

/// The loop path's frame slots (`frame_slots`): VMAF vif's horizontal filter keeps ~250
/// registers across its split points, but few at any one: they share slots, and the
/// frame stays small (a warp's frames in the first-level cache).
#[test]
fn registers_never_live_across_the_same_split_point_share_a_frame_slot() {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../emu-driver/tests/thread_loops/loops.ptx")).unwrap();
    let t = translate(&[&src], &Options { units: 1, ..Options::default() }).unwrap();
    let src = t.units.concat();
    for (i, k) in t.kernels.iter().enumerate().filter(|(_, k)| k.threads == Path::Loops) {
        let frame = src.split(&format!("struct FR{i} {{")).nth(1).unwrap().split("\n};").next().unwrap().to_string();
        // No register twice, and no two registers of one slot live across one split
        // point: each slot's registers are checked against the split points' saves
        // (every split point stores only what it keeps live, `S.r<n> = r<n>`).
        let mut seen = std::collections::HashSet::new();
        for l in frame.lines() {
            let names: Vec<&str> = l.split(" r").skip(1).filter_map(|t| t.split(';').next()).filter(|n| n.parse::<u32>().is_ok()).collect();
            for n in &names {
                assert!(seen.insert(n.to_string()), "{}: r{n} in two slots\n{frame}", k.name);
            }
            if names.len() > 1 {
                // The kernel's step (`KL<fi>(..., FR<i> &S, ...)`): its split points.
                let step = src.split(&format!("FR{i} &S, uint32_t at")).nth(1).unwrap().split("\n}\n").next().unwrap();
                for stmt in step.lines().filter(|s| s.contains("return ") && s.contains("S.r")) {
                    let stored = names.iter().filter(|n| stmt.contains(&format!("S.r{n} = r{n};"))).count();
                    assert!(stored <= 1, "{}: one split point stores two registers of a slot: {stmt}", k.name);
                }
            }
        }
    }
}

#[test]
fn a_split_point_stores_only_the_live_registers_that_changed() {
    let (_, src) = kernels();
    // tree_sum's loop barrier (PTX line 48): of the six registers live across it (the
    // halving step, the thread index, its shared address, the shared base, the output
    // address, its input), only the step changed since the thread resumed (the others
    // are in its frame since the first barrier, line 34, which stores all six).
    let stmt = |line: u32| {
        let s =
            src.lines().find(|l| l.ends_with(&format!("}} // {line}")) && l.contains("return ")).unwrap_or_else(|| panic!("line {line}"));
        s.matches("S.r").count()
    };
    assert_eq!(stmt(34), 6, "{src}");
    assert_eq!(stmt(48), 1, "{src}");
    // No carry flag in a module that uses none.
    assert!(!src.contains("S.cc = T.cc"), "{src}");
}

/// A plain kernel whose threads can neither wait nor spin gets a runner that does not
/// poll the executor's `range_stop` (`for_each_thread<false>`); a loop, a fence, a clock
/// read or recursion anywhere it reaches keeps the polling runner.
#[test]
fn plain_kernels_that_cannot_wait_or_spin_do_not_poll_for_hand_offs() {
    let src = r#"
.version 8.0
.target sm_90
.address_size 64
.func (.reg .b32 r) rec(.reg .b32 a)
{
    .reg .pred p;
    .reg .b32 t;
    setp.eq.u32 p, a, 0;
    @p bra done;
    sub.u32 t, a, 1;
    call (t), rec, (t);
done:
    mov.u32 r, a;
    ret;
}
.func (.reg .b32 r) twice(.reg .b32 a)
{
    add.u32 r, a, a;
    ret;
}
.visible .entry straight(.param .u64 out)
{
    .reg .b32 t;
    .reg .b64 a;
    .reg .pred p;
    ld.param.u64 a, [out];
    mov.u32 t, %tid.x;
    setp.gt.u32 p, t, 7;
    @p bra skip;
    call (t), twice, (t);
    st.global.u32 [a], t;
skip:
    ret;
}
.visible .entry looping(.param .u64 out)
{
    .reg .b32 t;
    .reg .b64 a;
    .reg .pred p;
    ld.param.u64 a, [out];
    mov.u32 t, %tid.x;
again:
    add.u32 t, t, 1;
    setp.lt.u32 p, t, 100;
    @p bra again;
    st.global.u32 [a], t;
    ret;
}
.visible .entry fencing(.param .u64 out)
{
    .reg .b64 a;
    ld.param.u64 a, [out];
    st.global.u32 [a], 1;
    membar.gl;
    ret;
}
.visible .entry clocked(.param .u64 out)
{
    .reg .b32 t;
    .reg .b64 a;
    ld.param.u64 a, [out];
    mov.u32 t, %clock;
    st.global.u32 [a], t;
    ret;
}
.visible .entry recursive(.param .u64 out)
{
    .reg .b32 t;
    .reg .b64 a;
    ld.param.u64 a, [out];
    mov.u32 t, %tid.x;
    call (t), rec, (t);
    st.global.u32 [a], t;
    ret;
}
"#;
    let t = translate(&[src], &Options { units: 1, ..Options::default() }).unwrap();
    let code = t.units.concat();
    let runner = |name: &str| {
        let i = t.kernels.iter().position(|k| k.name == name).unwrap_or_else(|| panic!("no kernel {name}"));
        assert_eq!(t.kernels[i].threads, Path::Plain, "{name}: {}", t.kernels[i].threads_why);
        let def = format!("void R{i}(void *const *params, simtwin_thread_ctx_t *ctx, uint32_t first, uint32_t n) {{");
        let r = code.split(&def).nth(1).unwrap_or_else(|| panic!("no runner R{i}")).split("\n}").next().unwrap().to_string();
        (r, t.kernels[i].threads_why.clone())
    };
    // (The second flag: the kernel calls a function, which reads the thread's index from
    // `ctx`, so the runner writes it there; the kernel's own code reads `TI`.)
    let (r, why) = runner("straight");
    assert!(r.contains("for_each_thread<false, true>("), "{r}");
    assert!(why.contains("none can wait or spin"), "{why}");
    // Each note names what lets a thread wait or spin, and where (PTX lines of `src`).
    let line = |text: &str| src.lines().position(|l| l.trim() == text).map(|i| i + 1).unwrap();
    let loop_at = format!("a loop, PTX line {}", line("add.u32 t, t, 1;"));
    let fence_at = format!("a fence (`membar.gl`, PTX line {})", line("membar.gl;"));
    let clock_at = format!("a clock read (`mov.u32`, PTX line {})", line("mov.u32 t, %clock;"));
    for (name, calls, what) in [
        ("looping", false, loop_at.as_str()),
        ("fencing", false, &fence_at),
        ("clocked", false, &clock_at),
        ("recursive", true, "a call cycle (rec)"),
    ] {
        let (r, why) = runner(name);
        assert!(r.contains(&format!("for_each_thread<true, {calls}>(")), "{name}: {r}");
        assert!(!why.contains("none can wait or spin"), "{name}: {why}");
        assert!(why.contains(&format!("one may wait or spin in {what}: its runner lets it hand the rest on")), "{name}: {why}");
        assert!(why.contains(&format!("not as vector lanes: its threads may wait or spin in {what}")), "{name}: {why}");
    }
}

/// The code from a resume point to the next split point runs as one loop over a batch's
/// lanes (`KS`) where it is straight-line or branches only forward inside it: a loop, a
/// call or an exit keeps the per-lane step. A segment that touches memory or reads the thread's identity gives each lane
/// its index in `ctx` first (a fault names the thread); register arithmetic does not.
#[test]
fn straight_line_code_between_split_points_runs_as_lane_segments() {
    let (k, src) = kernels();
    // (from, to, whether the lanes' index is set) of each segment.
    let segments = |name: &str| -> Vec<(u32, u32, bool)> {
        let i = k.iter().position(|k| k.name == name).unwrap();
        let ks = src.split(&format!("uint32_t KS{i}(Thread &T")).nth(1).unwrap().split("\n}\n").next().unwrap().to_string();
        // A forward branch inside a segment goes to the segment's own copy of its label.
        for g in ks.split("goto ").skip(1) {
            let label = g.split(';').next().unwrap();
            assert!(label.contains("_s") && ks.contains(&format!("{label}:;")), "{name}: a branch out of a lane segment\n{ks}");
        }
        let mut out = Vec::new();
        for case in ks.split("  case ").skip(1) {
            let from: u32 = case.split('u').next().unwrap().parse().unwrap();
            let to: u32 = case.split("    return ").nth(1).unwrap().split('u').next().unwrap().parse().unwrap();
            let thread = case.contains("T.ctx->linear_tid = ids[j];");
            let memory = ["load<", "store<", "atom", "T.ctx->thread_idx.x)"]
                .iter()
                .any(|w| case.split("thread_idx = idx").last().unwrap().contains(w));
            assert!(thread || !memory, "{name}: segment {from} touches memory without the lane's index\n{case}");
            out.push((from, to, thread));
        }
        out
    };
    // warp_sums: split points lo shuffle (1), hi shuffle (2), barrier (3), lo (4), hi (5),
    // idx (6). From the start: loads, to the first shuffle; after each lo shuffle only a
    // move to the hi one; after each hi shuffle the loop's branch; after the barrier a
    // branch around a shared load (forward, meeting again before the lo shuffle: a
    // segment); after the idx shuffle the exit.
    assert_eq!(segments("warp_sums"), vec![(0, 1, true), (1, 2, false), (3, 4, true), (4, 5, false)]);
    // shuffle: the arithmetic after its shuffle leads straight to the barrier.
    assert_eq!(segments("shuffle"), vec![(0, 1, true), (1, 2, false)]);
    // A barrier-only kernel's sweeps take them too; a loop between barriers does not.
    assert_eq!(segments("tree_sum"), vec![(0, 1, true)]);
    assert_eq!(segments("data_loop"), vec![]);
    // The faulting load of warp_fault runs in a segment, with the lane's index set.
    assert_eq!(segments("warp_fault"), vec![(0, 1, true)]);
}

/// A shuffle's lane operand and clamp in registers that hold one literal in every lane
/// (nvcc's `mov.u32 %r48, 16;` in the shuffle's block) flag it `LOOP_LITERAL` (+128) as
/// literal operands do, with the literals in the runner's table `LO`; a register with two literals, or written only in an earlier block
/// (a path may reach the shuffle without the write), does not.
#[test]
fn shuffle_operands_in_literal_registers_are_literal() {
    let src = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry lits(.param .u64 out, .param .u32 n)
{
    .reg .b32 v, w, lane, clamp, two, mask, k;
    .reg .b64 a;
    .reg .pred p;
    ld.param.u64 a, [out];
    ld.param.u32 k, [n];
    mov.u32 v, %tid.x;
    mov.u32 two, 3;
    mov.u32 two, 4;
    mov.u32 clamp, 31;
    setp.eq.u32 p, k, 0;
    @p bra next;
next:
    mov.u32 lane, 16;
    mov.u32 mask, -1;
    shfl.sync.down.b32 w, v, lane, 31, mask;
    shfl.sync.down.b32 w, w, 8, 31, mask;
    shfl.sync.down.b32 w, w, two, 31, mask;
    shfl.sync.down.b32 w, w, lane, clamp, mask;
    mov.u32 clamp, 31;
    shfl.sync.down.b32 w, w, lane, clamp, mask;
    st.global.u32 [a], w;
    ret;
}
"#;
    let t = translate(&[src], &Options { units: 1, ..Options::default() }).unwrap();
    let (p, why) = path_of(&t.kernels, "lits");
    assert_eq!(*p, Path::Loops, "{why}");
    let src = t.units.concat();
    // (+64: none of them has a predicate result to write.)
    assert!(src.contains("static const uint8_t LK0[] = {194,194,66,66,194,0};"), "{src}");
    // The runner takes a literal shuffle's lane operand and clamp from the table; its lanes
    // store only the value shuffled (the two others store all three operands).
    assert!(src.contains("static const uint32_t LO0[] = {16u,31u,0u,8u,31u,0u,0u,0u,0u,0u,0u,0u,16u,31u,0u,0u};"), "{src}");
    let gives: Vec<&str> = src.lines().filter(|l| l.contains("S.xa = ")).collect();
    assert!(!gives.is_empty() && gives.iter().filter(|l| l.contains("S.xb = ")).count() < gives.len(), "{gives:?}");
}
