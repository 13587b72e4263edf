//! `simd`: which plain-path kernels run 16 threads of a row as explicit vectors
//! (`V<fi>`, run by `simd_row`), how each register is held, and what keeps a kernel off
//! the form (the module note names the instruction). Results of the form against one
//! thread at a time: emu-driver's thread_loops (`simd_*` kernels).

use simtwin_ptx::simd::{plan, Class};
use simtwin_ptx::{translate, Options, SegmentVectors};

/// Kernel `k(a, b, n)` with `body` after `%rd1`/`%rd2` = the global addresses of `a` and
/// `b` and `%r5` = ctaid.x * ntid.x + tid.x, and a counted loop over `%r9` (so that
/// `lanes`, which takes no loop, leaves it) around `body`; `after` follows the loop.
fn source_after(body: &str, after: &str) -> String {
    format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 a, .param .u64 b, .param .u32 n)\n{{\n\
         .reg .pred %p<6>;\n.reg .b32 %r<16>;\n.reg .b16 %rs<4>;\n.reg .f32 %f<4>;\n.reg .b64 %rd<16>;\n\
         ld.param.u64 %rd10, [a];\nld.param.u64 %rd11, [b];\nld.param.u32 %r1, [n];\ncvta.to.global.u64 %rd1, %rd10;\ncvta.to.global.u64 %rd2, %rd11;\n\
         mov.u32 %r2, %ctaid.x;\nmov.u32 %r3, %ntid.x;\nmov.u32 %r4, %tid.x;\nmad.lo.s32 %r5, %r2, %r3, %r4;\nmov.u32 %r9, 0;\n\
         LOOP:\n{body}\nadd.s32 %r9, %r9, 1;\nsetp.lt.u32 %p5, %r9, 4;\n@%p5 bra LOOP;\n{after}\nret;\n}}\n"
    )
}

fn translation(body: &str) -> simtwin_ptx::Translation {
    translation_after(body, "")
}

fn translation_after(body: &str, after: &str) -> simtwin_ptx::Translation {
    translate(&[&source_after(body, after)], &Options { units: 1, ..Options::default() }).expect("translates")
}

fn why(body: &str) -> String {
    translation(body).kernels[0].threads_why.clone()
}

/// The plan of the kernel (its one entry), by register name.
fn classes(body: &str, after: &str) -> Result<Vec<(String, Class)>, String> {
    let m = simtwin_ptx::resolve::resolve(simtwin_ptx::parse::parse(&source_after(body, after)).unwrap()).unwrap();
    let f = m.funcs.iter().find(|f| f.decl.entry).unwrap();
    let p = plan(f, &[(8, 0), (8, 8), (4, 16)], &Default::default())?;
    Ok(f.regs.iter().zip(&p.class).map(|(r, c)| (r.name.clone(), *c)).collect())
}

fn class(cs: &[(String, Class)], name: &str) -> Class {
    cs.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no register {name}")).1
}

const GATHER: &str = "mul.wide.s32 %rd3, %r5, 4;\nadd.s64 %rd4, %rd1, %rd3;\nld.global.u32 %r6, [%rd4];\nadd.s32 %r7, %r6, %r9;\n\
                      cvt.u64.u32 %rd5, %r9;\nadd.s64 %rd6, %rd2, %rd5;\nld.global.u8 %r8, [%rd6];\n";

#[test]
fn registers_are_uniform_lanes_or_a_base_plus_offsets() {
    let st = "mul.wide.u32 %rd7, %r5, 4;\nadd.s64 %rd8, %rd2, %rd7;\nst.global.u32 [%rd8], %r7;";
    let cs = classes(GATHER, st).unwrap();
    // The loop counter, the block's values and a load every lane makes at one address.
    for r in ["%r1", "%r2", "%r3", "%r9", "%rd1", "%rd5", "%rd6", "%r8", "%p5"] {
        assert_eq!(class(&cs, r), Class::Uniform, "{r}");
    }
    // What depends on %tid.x: 32-bit lanes, and its addresses as a base plus offsets.
    for r in ["%r4", "%r5", "%r6", "%r7"] {
        assert_eq!(class(&cs, r), Class::Vector, "{r}");
    }
    for r in ["%rd3", "%rd4", "%rd7", "%rd8"] {
        assert_eq!(class(&cs, r), Class::Split, "{r}");
    }
    let t = translation_after(GATHER, st);
    let c = t.units.join("\n");
    assert!(c.contains("bool V0(Thread &T") && c.contains("simd_row(ctx, t, TI, xe"), "{c}");
    assert!(c.contains("ptx::simd::ld<uint32_t, 1, true>(") && c.contains("ptx::simd::st<uint32_t, 1>(UNDO, 0,"), "{c}");
    assert!(t.kernels[0]
        .threads_why
        .ends_with("as vectors of 16 threads (`simd`: its loops end alike for every lane, none waits for another)"));
}

#[test]
fn a_branch_the_lanes_may_take_apart_is_taken_by_all_or_none() {
    // A forward branch on a lane's value: the chunk goes on where its lanes agree.
    let body = format!("{GATHER}setp.lt.u32 %p1, %r6, 9;\n@%p1 bra SKIP;\nadd.s32 %r7, %r7, 1;\nSKIP:\n");
    let c = translation(&body).units.join("\n");
    assert!(c.contains("ptx::simd::all_or_none(ptx::simd::M(r"), "{c}");
    // A loop whose exit differs between lanes by their registers runs while every lane
    // goes on (all or none again), at most `LOOP_PASSES` times per chunk.
    let c = translation("setp.lt.u32 %p1, %r5, %r9;\n@%p1 bra LOOP;").units.join("\n");
    assert!(c.contains("bool V0(Thread &T") && c.contains("_ == 65536u) { PTX_BAILED(); goto BAIL; } goto B0; }"), "{c}");
    // One whose exit differs as loaded values do is refused: its lanes could wait for
    // another thread's store.
    let w = why(&format!("{GATHER}setp.lt.u32 %p1, %r6, %r9;\n@%p1 bra LOOP;"));
    assert!(
        w.contains("nor as vectors of 16 threads: bra (PTX line ")
            && w.ends_with(": a loop whose exit differs between lanes as loaded values do"),
        "{w}"
    );
}

#[test]
fn a_store_inside_a_loop_logs_each_pass_under_its_own_site() {
    // Four passes of 16 lanes' words reserved (entries and bytes), a pass past them bails.
    let c = translation("mul.wide.u32 %rd7, %r5, 4;\nadd.s64 %rd8, %rd2, %rd7;\nst.global.u32 [%rd8], %r5;").units.join("\n");
    assert!(c.contains("ptx::simd::Undo<64, 256> UNDO;"), "{c}");
    assert!(c.contains("_ == 4u) { PTX_BAILED(); goto BAIL; }") && c.contains("ptx::simd::st<uint32_t, 1>(UNDO, 0u + PS"), "{c}");
}

#[test]
fn a_row_times_a_pitch_plus_a_column_is_a_base_plus_offsets() {
    // Rows and columns that differ between lanes (a 2-D tile's mirrored indices): the
    // 64-bit products by a pitch the same for every lane and the sums of two such offsets
    // stay a base plus offsets (the offsets' sum checked to fit 32 signed bits).
    let body = "cvt.s64.s32 %rd3, %r5;\nmul.lo.s64 %rd4, %rd3, 96;\nadd.s32 %r6, %r5, 7;\ncvt.s64.s32 %rd5, %r6;\n\
                add.s64 %rd6, %rd4, %rd5;\nadd.s64 %rd7, %rd1, %rd6;\nld.global.u8 %r7, [%rd7];\n\
                mad.lo.s64 %rd8, %rd3, 96, %rd5;\nadd.s64 %rd9, %rd1, %rd8;\nld.global.u8 %r8, [%rd9];\n\
                mad.lo.s64 %rd12, %rd3, 96, %rd1;\nld.global.u8 %r10, [%rd12];\n";
    let cs = classes(body, "").unwrap();
    for r in ["%rd3", "%rd4", "%rd5", "%rd6", "%rd7", "%rd8", "%rd9", "%rd12"] {
        assert_eq!(class(&cs, r), Class::Split, "{r}");
    }
    let c = translation(body).units.join("\n");
    let pitch = "ptx::simd::mad_off((uint64_t)(((uint64_t)96ull)), o";
    assert!(c.contains(pitch) && c.contains("ptx::simd::mad_off(1, o") && c.contains(", (ptx::simd::vi){}, o"), "{c}");
}

#[test]
fn a_16_bit_literal_of_a_lane_is_its_low_16_bits() {
    // nvcc's division of a 16-bit index by 20: mul.wide.u16 by -13107 (0xcccd).
    let c = translation("cvt.u16.u32 %rs1, %r5;\nmul.wide.u16 %r6, %rs1, -13107;\nshr.u32 %r7, %r6, 20;\nmul.wide.u32 %rd7, %r5, 4;\nadd.s64 %rd8, %rd2, %rd7;\nst.global.u32 [%rd8], %r7;").units.join("\n");
    let v = &c[c.find("bool V0(").expect("a vector form")..];
    assert!(v.contains("ptx::simd::V((uint32_t)52429u)"), "{v}");
}

#[test]
fn what_keeps_a_kernel_one_thread_at_a_time_is_named() {
    let no = |body: &str, instr: &str, want: &str| {
        let w = why(body);
        let said = w.split("nor as vectors of 16 threads: ").nth(1).unwrap_or_default();
        assert!(said.starts_with(&format!("{instr} (PTX line ")) && said.ends_with(want), "{body}: {w}");
    };
    no("atom.global.add.u32 %r6, [%rd1], 1;", "atom.global.add.u32", ")");
    no("mov.u32 %r6, %laneid;", "mov.u32", ") reads %laneid");
    no("cvt.rz.f32.u32 %f1, %r5;", "cvt.rz.f32.u32", ": on values that differ between lanes");
    no("cvt.rn.f32.u32 %f1, %r5;\nadd.ftz.f32 %f2, %f1, 0f3F800000;", "add.ftz.f32", ": on values that differ between lanes");
    no("mul.hi.u32 %r6, %r5, %r1;", "mul.hi.u32", ": on values that differ between lanes");
    no("setp.eq.u32 %p1, %r5, 3;\n@%p1 add.s32 %r6, %r6, 1;", "add.s32", ": under a predicate that differs between lanes");
    no("ld.global.u64 %rd3, [%rd1];", "ld.global.u64", ": not a load or store of 32-bit-or-narrower integers or f32");
    no("div.u32 %r6, %r1, 3;", "div.u32", ")");
}

#[test]
fn a_parameter_load_into_a_register_that_becomes_an_address_is_spread() {
    // The fuzzer's find: `ld.param` into %rd1, later `add.s64 %rd1, %rd1, <lane offset>`,
    // so %rd1 is a base plus offsets while the parameter load is the same for every lane
    // (the emitter looked the load up among the tracked global loads and panicked).
    let src = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 in, .param .u64 out)\n{\n\
               .reg .f32 %f<4>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n\
               ld.param.u64 %rd1, [in];\ncvta.to.global.u64 %rd1, %rd1;\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd3, %r1, 256;\n\
               add.s64 %rd1, %rd1, %rd3;\nmov.f32 %f1, 0f3DCCCCCD;\nret;\n}\n";
    let t = translate(&[src], &Options { units: 1, ..Options::default() }).expect("translates");
    let c = t.units.join("\n");
    assert!(c.contains("bool V0(Thread &T"), "{c}");
    // The load runs once, into a scalar, spread into the base (offsets zero).
    assert!(c.contains("uint64_t t_ = 0; { auto &r"), "{c}");
}

#[test]
fn a_guard_the_same_for_every_lane_keeps_its_instruction_conditional() {
    // `@%p1 add` on lanes (%p1 from the kernel's parameter): the add must stay under its
    // guard in the vector form (it was written unconditionally).
    let body = "setp.eq.u32 %p1, %r1, 7;\n@%p1 add.s32 %r6, %r5, 1;\n";
    let cs = classes(body, "").unwrap();
    assert_eq!((class(&cs, "%p1"), class(&cs, "%r6")), (Class::Uniform, Class::Vector));
    let c = translation(body).units.join("\n");
    let v = &c[c.find("bool V0(").expect("a vector form")..];
    let add = v.lines().find(|l| l.contains(" + ptx::simd::V((uint32_t)1u);")).expect("the add");
    assert!(add.trim_start().starts_with("if (r"), "{add}");
}

/// A loop-path kernel: loads, a branch on a loaded word, then a warp shuffle.
const SEGMENT: &str = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry s(.param .u64 a, .param .u64 b, .param .u32 n)\n{\n\
    .reg .pred %p<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<16>;\n\
    ld.param.u64 %rd10, [a];\nld.param.u64 %rd11, [b];\ncvta.to.global.u64 %rd1, %rd10;\ncvta.to.global.u64 %rd2, %rd11;\n\
    mov.u32 %r2, %ctaid.x;\nmov.u32 %r3, %ntid.x;\nmov.u32 %r4, %tid.x;\nmad.lo.s32 %r5, %r2, %r3, %r4;\n\
    mul.wide.u32 %rd3, %r5, 4;\nadd.s64 %rd4, %rd1, %rd3;\nld.global.u32 %r6, [%rd4];\nadd.s32 %r7, %r6, %r5;\n\
    and.b32 %r8, %r6, 1;\nsetp.eq.u32 %p1, %r8, 0;\n@%p1 bra EVEN;\nadd.s32 %r7, %r7, 3;\nEVEN:\n\
    shfl.sync.down.b32 %r9, %r7, 1, 31, -1;\nadd.s64 %rd5, %rd2, %rd3;\nst.global.u32 [%rd5], %r9;\nret;\n}\n";

/// SEGMENT-like kernel `f`'s form from its start (`entry`), its shuffle split point 1.
fn segment_of(f: &simtwin_ptx::resolve::Func, entry: &simtwin_ptx::simd::Entry) -> (simtwin_ptx::simd::Plan, simtwin_ptx::simd::Region) {
    let shfl = f.body.iter().position(|n| matches!(n, simtwin_ptx::resolve::Node::Instr(i) if i.src.op == "shfl")).unwrap();
    simtwin_ptx::simd::segment(f, &[(8, 0), (8, 8), (4, 16)], &[(shfl, 1)], &[], entry, 2, 0).expect("a form")
}

/// SEGMENT with a store on the branch's side: not registers only, so no masks.
fn segment_storing() -> String {
    SEGMENT.replace("add.s32 %r7, %r7, 3;\nEVEN:", "add.s32 %r7, %r7, 3;\nst.global.u32 [%rd4], %r7;\nEVEN:")
}

#[test]
fn a_loop_path_segment_stops_before_a_branch_on_loaded_data() {
    let storing = segment_storing();
    let m = simtwin_ptx::resolve::resolve(simtwin_ptx::parse::parse(&storing).unwrap()).unwrap();
    let f = m.funcs.iter().find(|f| f.decl.entry).unwrap();
    let shfl = f.body.iter().position(|n| matches!(n, simtwin_ptx::resolve::Node::Instr(i) if i.src.op == "shfl")).unwrap();
    let (p, region) = segment_of(f, &simtwin_ptx::simd::Entry::default());
    // The form stops at the branch on the loaded word (a cut, resume point 2), before the
    // shuffle: the lanes go on one at a time from there (a store on its side: no masks).
    let stops: Vec<_> = region.stops.iter().map(|(&n, s)| (n, *s)).collect();
    assert_eq!(stops.len(), 1, "{stops:?}");
    let (cut, stop) = stops[0];
    assert_eq!(stop, simtwin_ptx::simd::Stop::Cut(2));
    assert!(matches!(&f.body[cut], simtwin_ptx::resolve::Node::Instr(i) if i.src.op == "bra"), "{:?}", f.body[cut]);
    assert!(!region.nodes[shfl] && !region.nodes[cut]);
    assert_eq!(p.load_site.len(), 1);
    assert!(p.masked.is_empty());
    // Without the branch on loaded data, the form reaches the shuffle: split point 1.
    let plain = SEGMENT.replace("@%p1 bra EVEN;\n", "");
    let m = simtwin_ptx::resolve::resolve(simtwin_ptx::parse::parse(&plain).unwrap()).unwrap();
    let f = m.funcs.iter().find(|f| f.decl.entry).unwrap();
    let (_, region) = segment_of(f, &simtwin_ptx::simd::Entry::default());
    assert_eq!(region.stops.values().copied().collect::<Vec<_>>(), vec![simtwin_ptx::simd::Stop::Split(1)]);
    // With the translator's option the loop path's note names the form and its cut.
    let t = translate(&[&storing], &Options { units: 1, segment_vectors: SegmentVectors::All, ..Options::default() }).expect("translates");
    assert!(
        t.kernels[0].threads_why.contains("; from its start a warp's lanes as two vectors of 16 (`simd`), one lane at a time after 1 cut"),
        "{}",
        t.kernels[0].threads_why
    );
    assert!(t.units[0].contains("ptx::simd::warp_segment<") && t.units[0].contains("goto M2;"), "the hook and the cut's resume");
    // By default only a form with enough per-lane work to pay for scattering its registers:
    // this one has a dozen instructions.
    let t = translate(&[&storing], &Options { units: 1, ..Options::default() }).expect("translates");
    assert!(!t.units[0].contains("warp_segment<"), "too little work");
    assert!(
        t.kernels[0].threads_why.contains("; not as vectors from its start: 8 per-lane instructions before its stops, too few to pay"),
        "{}",
        t.kernels[0].threads_why
    );
    let t = translate(&[&storing], &Options { units: 1, segment_vectors: SegmentVectors::Off, ..Options::default() }).expect("translates");
    assert!(!t.units[0].contains("warp_segment<") && !t.kernels[0].threads_why.contains("vectors from its start"), "off");
}

#[test]
fn a_branch_on_loaded_data_whose_side_is_registers_only_runs_both_ways_under_masks() {
    // SEGMENT's branch on the loaded word guards one add: both ways under masks, the form
    // on to the shuffle (split point 1), the add inside the branch's span and a lane of
    // the mask's; the same with a store on its side stays a cut (above), and so does one
    // whose side a branch from outside enters.
    let m = simtwin_ptx::resolve::resolve(simtwin_ptx::parse::parse(SEGMENT).unwrap()).unwrap();
    let f = m.funcs.iter().find(|f| f.decl.entry).unwrap();
    let node = |op: &str| f.body.iter().position(|n| matches!(n, simtwin_ptx::resolve::Node::Instr(i) if i.src.op == op)).unwrap();
    let (shfl, bra) = (node("shfl"), node("bra"));
    let entry = simtwin_ptx::simd::Entry::default();
    let (p, region) = segment_of(f, &entry);
    assert_eq!(region.stops.values().copied().collect::<Vec<_>>(), vec![simtwin_ptx::simd::Stop::Split(1)]);
    let join = p.masked.get(&bra).copied().expect("the branch under masks");
    assert!(matches!(&f.body[join], simtwin_ptx::resolve::Node::Label(_)) && join == shfl - 1, "its join is EVEN");
    assert!(p.under_mask(bra + 1) && !p.under_mask(bra) && !p.under_mask(join));
    assert!(!p.lane_loop.contains(&(bra + 1)), "the add under the mask is a vector expression, blended");
    let t = translate(&[SEGMENT], &Options { units: 1, segment_vectors: SegmentVectors::All, ..Options::default() }).expect("translates");
    assert!(
        t.kernels[0].threads_why.contains("(`simd`), 1 branch its lanes take apart both ways under masks, through 1 shuffle of its own"),
        "{}",
        t.kernels[0].threads_why
    );
    assert!(t.units[0].contains("em_ &= ~c_") && t.units[0].contains("ptx::simd::blend(em_, r"), "the masks");
    // A branch from before the load into the add's side: no masks, the cut again.
    let entered = SEGMENT
        .replace("add.s32 %r7, %r6, %r5;\n", "add.s32 %r7, %r6, %r5;\nsetp.eq.u32 %p2, %r5, 7;\n@%p2 bra INTO;\n")
        .replace("@%p1 bra EVEN;\nadd.s32 %r7, %r7, 3;\n", "@%p1 bra EVEN;\nINTO:\nadd.s32 %r7, %r7, 3;\n");
    let m = simtwin_ptx::resolve::resolve(simtwin_ptx::parse::parse(&entered).unwrap()).unwrap();
    let f = m.funcs.iter().find(|f| f.decl.entry).unwrap();
    let (p, region) = segment_of(f, &entry);
    assert!(p.masked.is_empty() && region.stops.values().any(|s| matches!(s, simtwin_ptx::simd::Stop::Cut(_))), "{:?}", region.stops);
}

/// A loop-path kernel whose first segment sums `taps` words per lane in a loop of `trips`
/// (each tap an address, a load and an add per lane) before a shuffle; after its store a
/// division (which the form does not take: a cut) and another shuffle, or (`exits`) the exit.
fn taps_kernel(taps: usize, exits: bool) -> String {
    let after =
        if exits { "" } else { "div.u32 %r11, %r9, 3;\nshfl.sync.down.b32 %r12, %r11, 1, 31, -1;\nst.global.u32 [%rd4+4], %r12;\n" };
    let mut body = String::new();
    for k in 0..taps {
        body += &format!("ld.global.u32 %r10, [%rd4+{}];\nadd.s32 %r7, %r7, %r10;\nxor.b32 %r7, %r7, %r5;\n", 4 * k);
    }
    format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry t(.param .u64 a, .param .u32 n)\n{{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<16>;\n\
         ld.param.u64 %rd10, [a];\nld.param.u32 %r1, [n];\ncvta.to.global.u64 %rd1, %rd10;\n\
         mov.u32 %r2, %ctaid.x;\nmov.u32 %r3, %ntid.x;\nmov.u32 %r4, %tid.x;\nmad.lo.s32 %r5, %r2, %r3, %r4;\n\
         mov.u32 %r7, 0;\nmov.u32 %r8, 0;\nLOOP:\nmul.wide.u32 %rd3, %r5, 4;\nadd.s64 %rd4, %rd1, %rd3;\n{body}\
         add.s32 %r8, %r8, 1;\nsetp.lt.u32 %p1, %r8, %r1;\n@%p1 bra LOOP;\n\
         shfl.sync.down.b32 %r9, %r7, 1, 31, -1;\nst.global.u32 [%rd4], %r9;\n{after}ret;\n}}\n"
    )
}

#[test]
fn by_default_a_segment_runs_as_warp_vectors_only_where_its_per_lane_work_pays() {
    // Inside the loop each per-lane instruction counts 8 times (3 per tap, the address's 2
    // and the branch: 8 x 21 = 168 with 6 taps), besides the lane's index and the sum's
    // start outside it (3), the store after the shuffle (1) and the shuffle, which the form
    // performs (`SHUFFLE_WORK`, 64): 6 taps fall short of 256 (236), 7 pay (260). Where the
    // code from the cut reaches only the exit (its lanes go on in the form's batch), the form
    // is whole and 64 pay (`MIN_WHOLE_WORK`): 6 taps too.
    for (taps, exits, pays) in [(7, false, true), (6, false, false), (6, true, true)] {
        let t = translate(&[&taps_kernel(taps, exits)], &Options { units: 1, ..Options::default() }).expect("translates");
        let why = &t.kernels[0].threads_why;
        assert_eq!(t.units[0].contains("warp_segment<"), pays, "{taps} taps: {why}");
        assert_eq!(why.contains("236 per-lane instructions before its stops, too few"), !pays, "{taps} taps: {why}");
        assert_eq!(why.contains("from its start a warp's lanes as two vectors of 16"), pays, "{why}");
    }
}

#[test]
fn stretches_after_two_shuffles_share_the_resume_point_of_the_cut_they_both_reach() {
    // A uniform branch picks one of two shuffles; the stretches after each reach the same
    // atomic add, a cut of both: one resume point, whose label the step defines (a second
    // id for the same node left `goto M<id>` without its label, a module that does not
    // compile).
    let src = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 a, .param .u32 n)\n{\n\
        .reg .pred %p<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<8>;\n\
        ld.param.u64 %rd1, [a];\nld.param.u32 %r9, [n];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\n\
        ld.global.u32 %r2, [%rd3];\nsetp.eq.u32 %p1, %r9, 0;\n@%p1 bra OTHER;\nshfl.sync.down.b32 %r3, %r2, 1, 31, -1;\nbra JOIN;\n\
        OTHER:\nshfl.sync.down.b32 %r3, %r2, 2, 31, -1;\nJOIN:\nadd.u32 %r2, %r2, %r3;\natom.global.add.u32 %r4, [%rd3], %r2;\nret;\n}\n";
    let t = translate(&[src], &Options { units: 1, segment_vectors: SegmentVectors::All, ..Options::default() }).expect("translates");
    let why = &t.kernels[0].threads_why;
    assert!(
        why.contains(
            "from its start a warp's lanes as two vectors of 16 (`simd`), through 2 shuffles of its own, one lane at a time after 1 cut"
        ),
        "{why}"
    );
    let code = &t.units[0];
    let mut jumps = 0;
    for (at, _) in code.match_indices("goto M") {
        let id: String = code[at + 6..].chars().take_while(char::is_ascii_digit).collect();
        assert!(code.contains(&format!("M{id}:;")), "goto M{id} without its label");
        jumps += 1;
    }
    assert_eq!(jumps, 1, "one resume point for the cut");
    // From the cut (the atomic) the code reaches only the exit: the lanes go on there in
    // the form's own batch.
    assert!(why.contains("one lane at a time after 1 cut (1 on to the exit in the same batch)"), "{why}");
    assert!(code.contains("return ptx::tail_lanes(T, ids, idx, ptx::simd::passed, "), "the cut's lanes on to the exit in the batch");
}

#[test]
fn a_cut_whose_code_reaches_a_shuffle_or_a_loop_hands_its_lanes_back_to_the_runner() {
    // After the atomic (the cut): a shuffle, or a loop back; either way a lane from the cut
    // does not run alone to its exit, and the runner steps the lanes.
    let kernel = |after: &str| {
        format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 a, .param .u32 n)\n{{\n\
            .reg .pred %p<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<8>;\n\
            ld.param.u64 %rd1, [a];\nld.param.u32 %r9, [n];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\n\
            ld.global.u32 %r2, [%rd3];\nshfl.sync.down.b32 %r3, %r2, 1, 31, -1;\nadd.u32 %r2, %r2, %r3;\n\
            AGAIN:\natom.global.add.u32 %r4, [%rd3], %r2;\n{after}ret;\n}}\n"
        )
    };
    for (after, what) in [
        ("shfl.sync.down.b32 %r5, %r4, 1, 31, -1;\nst.global.u32 [%rd3+4], %r5;\n", "a shuffle"),
        ("sub.u32 %r9, %r9, 1;\nsetp.ne.u32 %p2, %r9, 0;\n@%p2 bra AGAIN;\n", "a loop"),
    ] {
        let t = translate(&[&kernel(after)], &Options { units: 1, segment_vectors: SegmentVectors::All, ..Options::default() })
            .expect("translates");
        let why = &t.kernels[0].threads_why;
        assert!(why.contains("through 1 shuffle of its own, one lane at a time after 1 cut"), "{what}: {why}");
        assert!(!why.contains("on to the exit") && !t.units[0].contains("tail_lanes(T"), "{what}: {why}");
    }
}

#[test]
fn f32_arithmetic_runs_as_vector_expressions_unless_ptxas_contracts_it() {
    // Conversions, a fused multiply-add, an unordered comparison, a select and a
    // saturating conversion back: f32 bits in 32-bit lanes, each the runtime's vector form
    // of the thread's own rule (results against the fibers: emu-driver's thread_loops).
    let body = "cvt.rn.f32.u32 %f1, %r5;\nfma.rn.f32 %f2, %f1, 0f3F000000, %f1;\nsetp.gtu.f32 %p1, %f2, 0f41200000;\n\
                selp.f32 %f3, %f2, %f1, %p1;\ncvt.rzi.u32.f32 %r6, %f3;\nabs.f32 %f1, %f3;\n";
    let st = "mul.wide.u32 %rd7, %r5, 4;\nadd.s64 %rd8, %rd2, %rd7;\nst.global.u32 [%rd8], %r6;";
    let cs = classes(body, st).unwrap();
    for r in ["%f1", "%f2", "%f3", "%p1", "%r6"] {
        assert_eq!(class(&cs, r), Class::Vector, "{r}");
    }
    let t = translation_after(body, st);
    let c = t.units.join("\n");
    for e in ["ptx::simd::fcvt_u(", "ptx::simd::ffma(", "ptx::simd::fcmp<GTU>(", "ptx::simd::f2u<1>(", "ptx::simd::fabs_v("] {
        assert!(c.contains(e), "{e}: {c}");
    }
    assert!(t.kernels[0]
        .threads_why
        .ends_with("as vectors of 16 threads (`simd`: its loops end alike for every lane, none waits for another)"));
    // A multiply ptxas fuses into the add after it: the threads' own statements (their
    // kept operands), which a kernel's vector form has no loop over lanes for.
    let fused = "cvt.rn.f32.u32 %f1, %r5;\nmul.f32 %f2, %f1, %f1;\nadd.f32 %f3, %f2, %f1;\nmov.b32 %r6, %f3;\n";
    let t = translation_after(fused, st);
    let w = &t.kernels[0].threads_why;
    assert!(w.contains("nor as vectors of 16 threads: mul.f32 (PTX line ") && w.ends_with(": on values that differ between lanes"), "{w}");
}

#[test]
fn f64_arithmetic_runs_in_64_bit_lanes() {
    // From a lane's 32-bit value to f64 and back: 64-bit lanes of the values' bits, the
    // comparison a 32-bit mask, the conversion back 32-bit lanes.
    let body = "cvt.rn.f64.u32 %rd12, %r5;\ndiv.rn.f64 %rd13, %rd12, 0d4008000000000000;\nmin.f64 %rd14, %rd13, %rd12;\n\
                setp.lt.f64 %p1, %rd14, 0d4024000000000000;\nselp.f64 %rd15, %rd14, %rd13, %p1;\ncvt.rzi.s32.f64 %r6, %rd15;\n";
    let st = "mul.wide.u32 %rd7, %r5, 4;\nadd.s64 %rd8, %rd2, %rd7;\nst.global.u32 [%rd8], %r6;";
    let cs = classes(body, st).unwrap();
    for r in ["%rd12", "%rd13", "%rd14", "%rd15"] {
        assert_eq!(class(&cs, r), Class::Wide, "{r}");
    }
    for r in ["%p1", "%r6"] {
        assert_eq!(class(&cs, r), Class::Vector, "{r}");
    }
    let c = translation_after(body, st).units.join("\n");
    for e in [
        "ptx::simd::dcvt_u(",
        "ptx::simd::darith<OP_DIV>(",
        "ptx::simd::dminmax<false>(",
        "ptx::simd::dcmp<LT>(",
        "ptx::simd::d2i<int32_t, 1>(",
    ] {
        assert!(c.contains(e), "{e}: {c}");
    }
}
