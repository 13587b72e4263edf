//! `lanes`: which barrier-free kernels get a vector-lanes instantiation (`K<fi><A, W>`,
//! run by `lanes_row`), what it computes in 64 bits, the row's no-wrap check, and what
//! keeps a kernel off it (anything that reads the thread's context, calls out, loops,
//! or touches memory other than parameters and proven-aligned global accesses).

use simtwin_ptx::{translate, Options};

/// The translation of kernel `k(a, b, n)` with `body` after `%rd1`/`%rd2` = the global
/// addresses of `a` and `b` and `%r5` = ctaid.x * ntid.x + tid.x.
fn cpp(body: &str) -> String {
    translation(body).units.join("\n")
}

fn translation(body: &str) -> simtwin_ptx::Translation {
    let src = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 a, .param .u64 b, .param .u32 n)\n{{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<16>;\n.reg .f32 %f<8>;\n.reg .b64 %rd<16>;\n\
         ld.param.u64 %rd10, [a];\nld.param.u64 %rd11, [b];\nld.param.u32 %r1, [n];\ncvta.to.global.u64 %rd1, %rd10;\ncvta.to.global.u64 %rd2, %rd11;\n\
         mov.u32 %r2, %ctaid.x;\nmov.u32 %r3, %ntid.x;\nmov.u32 %r4, %tid.x;\nmad.lo.s32 %r5, %r2, %r3, %r4;\n{body}\nret;\n}}\n"
    );
    translate(&[&src], &Options { units: 1, ..Options::default() }).expect("translates")
}

/// Why the kernel's threads take the path they do (its module's note).
fn why(body: &str) -> String {
    translation(body).kernels[0].threads_why.clone()
}

const COPY: &str =
    "setp.ge.u32 %p1, %r5, %r1;\n@%p1 bra END;\nmul.wide.u32 %rd3, %r5, 4;\nadd.s64 %rd4, %rd1, %rd3;\nadd.s64 %rd5, %rd2, %rd3;\n\
                    ld.global.f32 %f1, [%rd4];\nadd.f32 %f2, %f1, %f1;\nst.global.f32 [%rd5], %f2;\nEND:";

fn has_lanes(c: &str) -> bool {
    c.contains("template <bool A, bool W>") && c.contains("lanes_row(")
}

#[test]
fn an_affine_index_is_computed_in_64_bits_and_checked_once_per_row() {
    let c = cpp(COPY);
    assert!(has_lanes(&c), "{c}");
    // %r5: its value at tid.x = 0 plus the lanes' 64-bit counter; r5 itself from that.
    assert!(
        c.contains("= (uint64_t)(uint32_t)((uint32_t)((uint32_t)((uint32_t)T.bidx.x * (uint32_t)T.bdim.x) + 0u)) + 1ull * TX; r"),
        "{c}"
    );
    // The widening multiplies the 64-bit value: affine in the counter for the compiler.
    assert!(c.contains("(w") && c.contains(" * (uint64_t)4u);"), "{c}");
    // The row runs as lanes only where every affine register stays below 2^31.
    assert!(c.contains("1ull * (uint64_t)(xe - 1u) < 0x80000000ull) lanes_row("), "{c}");
    assert!(c.contains("else plain_row("), "{c}");
    // The executor's one-at-a-time request and a failing alignment check both skip it.
    assert!(c.contains("== 0 && ctx->lanes == 0) for_each_row("), "{c}");
    assert!(c.contains("K0<false, false>"), "{c}");
    assert!(c.contains("__attribute__((optimize(\"vect-cost-model=dynamic\"))) void R0("), "{c}");
}

#[test]
fn strides_and_signed_widenings_are_kept_exact() {
    // i * 3 + (n >> 1): stride 3, uniform offset; widened signed by a literal (the
    // address) and by a register (a value).
    let c = cpp(&format!(
        "shr.u32 %r6, %r1, 1;\nmad.lo.s32 %r7, %r5, 3, %r6;\nmul.wide.s32 %rd6, %r7, 4;\nadd.s64 %rd7, %rd2, %rd6;\n\
         mul.wide.s32 %rd8, %r7, %r1;\ncvt.u32.u64 %r10, %rd8;\nst.global.u32 [%rd7], %r10;\n{COPY}"
    ));
    assert!(has_lanes(&c), "{c}");
    assert!(c.contains("+ 3ull * TX;"), "{c}");
    assert!(c.contains("((int64_t)w") && c.contains(" * (int64_t)(int32_t)r"), "{c}");
    assert!(c.contains("3ull * (uint64_t)(xe - 1u) < 0x80000000ull"), "{c}");
}

#[test]
fn what_reads_the_thread_context_or_leaves_plain_memory_keeps_one_thread_at_a_time() {
    let off = |extra: &str, reason: &str| {
        let c = cpp(&format!("{extra}\n{COPY}"));
        assert!(!has_lanes(&c) && !c.contains("bool W"), "{reason}:\n{c}");
    };
    // The note names the instruction that keeps the kernel off.
    let w = why("mov.u32 %r8, %laneid;\nst.global.u32 [%rd1], %r8;");
    assert!(w.contains("not as vector lanes: mov.u32 reads %laneid (PTX line"), "{w}");
    assert!(why(COPY).contains("; as vector lanes (a row's affine indices below 2^31)"), "{}", why(COPY));
    off(
        "mov.u32 %r8, %laneid;\nmul.wide.u32 %rd8, %r8, 4;\nadd.s64 %rd9, %rd2, %rd8;\nst.global.u32 [%rd9], %r8;",
        "%laneid reads linear_tid",
    );
    off("atom.global.add.u32 %r8, [%rd1], 1;", "an atomic");
    off(".shared .align 4 .b8 sm[64];\nst.shared.u32 [sm], %r5;", "shared memory");
    off("ld.global.u64 %rd8, [%rd1];\nld.global.u32 %r8, [%rd8];", "an access at a loaded address");
    off("st.volatile.global.u32 [%rd1], %r5;", "a volatile store");
    off("LOOP:\nadd.s32 %r9, %r9, 1;\nsetp.lt.u32 %p2, %r9, %r1;\n@%p2 bra LOOP;", "a loop");
    off("trap;", "a trap");
    off("mov.u32 %r8, %clock;\nst.global.u32 [%rd1], %r8;", "%clock");
}

#[test]
fn a_kernel_without_an_affine_widening_gets_no_lanes() {
    // Its only global access is at a uniform address: nothing for the vectoriser.
    let c = cpp("st.global.u32 [%rd1], %r1;");
    assert!(!has_lanes(&c), "{c}");
    let w = why("st.global.u32 [%rd1], %r1;");
    assert!(w.contains("not as vector lanes: no address from an index affine in %tid.x; "), "{w}");
    // Nor as vectors of 16 threads: every lane would store at the same address.
    assert!(w.ends_with("nor as vectors of 16 threads: st.global.u32 (PTX line 19): a store not at a per-lane address"), "{w}");
    // An index written twice is not affine: its widening is the 32-bit code's.
    let c = cpp("add.s32 %r5, %r5, 1;\nmul.wide.u32 %rd3, %r5, 4;\nadd.s64 %rd4, %rd1, %rd3;\nst.global.u32 [%rd4], %r5;");
    assert!(!has_lanes(&c), "{c}");
}

#[test]
fn an_index_written_after_the_bounds_check_byte_and_read_only_loads_take_lanes() {
    // nvcc's 2-D shape: y * w + x written after the branch, from first-block values;
    // a read-only (.nc) load and byte loads need no alignment check.
    let c = cpp(
        "mov.u32 %r6, %tid.y;\nsetp.ge.u32 %p1, %r5, %r1;\n@%p1 bra END;\nmad.lo.s32 %r7, %r6, %r1, %r5;\nmul.wide.s32 %rd3, %r7, 4;\n\
         add.s64 %rd4, %rd1, %rd3;\nld.global.nc.f32 %f1, [%rd4];\ncvt.s64.s32 %rd6, %r7;\nadd.s64 %rd7, %rd2, %rd6;\nld.global.u8 %r9, [%rd7];\n\
         cvt.rn.f32.u32 %f2, %r9;\nadd.f32 %f3, %f1, %f2;\nst.global.f32 [%rd4], %f3;\nEND:",
    );
    assert!(has_lanes(&c), "{c}");
    assert!(c.contains("(uint32_t)TI.y"), "the row's y is part of the index's uniform part:\n{c}");
    // Two widenings of the index written after the branch.
    assert_eq!(c.matches("if constexpr (W) { r").count(), 2, "{c}");
}
