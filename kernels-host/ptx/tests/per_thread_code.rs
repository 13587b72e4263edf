//! What the emitter makes of a thread's code so that a runner's loop over the threads
//! keeps per-block values in registers: barrier-free kernels inlined into their runner,
//! the block's special registers and the kernel's own parameters read without an escaping
//! address, and f32 NaN canonicalisation only where a result's bits can be seen
//! (`nan_blind`). The results themselves are checked on the H200 by emu-driver's
//! conformance, ptx_suite and ptx_regress tests.

use simtwin_ptx::{translate, Options};

fn unit(ptx: &str) -> String {
    let src = format!(".version 8.0\n.target sm_90\n.address_size 64\n{ptx}");
    translate(&[&src], &Options { units: 1, ..Options::default() }).unwrap().units.concat()
}

/// The emitted body of function `K<fi>` (its definition up to the closing brace).
fn body(src: &str, fi: usize) -> String {
    // (A kernel with a lanes instantiation takes the lanes' counter too: `lanes`.)
    let sig = format!("void K{fi}(Thread &T, const uint8_t *P0, const simtwin_dim3_t &TI");
    src.split(&sig)
        .nth(1)
        .map(|rest| rest.split_once(") {\n").map_or(rest, |(_, b)| b))
        .unwrap_or_else(|| panic!("no definition of K{fi}:\n{src}"))
        .split("\n}\n")
        .next()
        .unwrap()
        .to_string()
}

const AXPY: &str = r#"
.visible .entry axpy(.param .u64 px, .param .u64 py, .param .u32 pn)
{
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	.reg .f32 %f<4>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [px];
	ld.param.u64 %rd2, [py];
	ld.param.u32 %r1, [pn];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	setp.ge.u32 %p1, %r5, %r1;
	@%p1 bra DONE;
	mul.wide.u32 %rd3, %r5, 4;
	add.s64 %rd4, %rd1, %rd3;
	add.s64 %rd5, %rd2, %rd3;
	ld.global.f32 %f1, [%rd4];
	ld.global.f32 %f2, [%rd5];
	mul.f32 %f3, %f1, 0f3FC00000;
	add.f32 %f2, %f3, %f2;
	st.global.f32 [%rd5], %f2;
DONE:
	ret;
}
"#;

#[test]
fn a_barrier_free_kernel_is_inlined_into_its_runner_with_block_values_and_parameters_read_directly() {
    let src = unit(AXPY);
    assert!(
        src.contains("static inline __attribute__((always_inline)) void K0(Thread &T, const uint8_t *P0, const simtwin_dim3_t &TI"),
        "{src}"
    );
    assert!(
        !src.contains("void K0(Thread &T, const uint8_t *P0, const simtwin_dim3_t &TI);"),
        "an inlined kernel has no declaration elsewhere:\n{src}"
    );
    let k = body(&src, 0);
    for want in ["pload<uint64_t>(P0, 0)", "pload<uint64_t>(P0, 8)", "pload<uint32_t>(P0, 16)", "T.bidx.x", "T.bdim.x"] {
        assert!(k.contains(want), "{want}:\n{k}");
    }
    assert!(!k.contains("T.ctx->block_idx") && !k.contains("T.ctx->block_dim"), "{k}");
    // The runner copies the block's values into Thread once.
    assert!(src.contains("0, ctx->block_idx, ctx->block_dim, ctx->grid_dim};"), "{src}");
    // The product feeds only the add (which ptxas contracts with it into an fma, pass
    // `contract`): not canonicalised; the stored fma is.
    assert!(k.contains("farith<float, false>(OP_MUL"), "{k}");
    assert!(k.contains("farith<float>(OP_FMA, RN"), "{k}");
}

#[test]
fn a_kernel_whose_address_is_taken_keeps_its_out_of_line_definition() {
    let src = unit(&format!(
        "{AXPY}\n.visible .entry taker(.param .u64 pout)\n{{\n\t.reg .b64 %rd<4>;\n\tld.param.u64 %rd1, [pout];\n\tmov.u64 %rd2, axpy;\n\tst.global.u64 [%rd1], %rd2;\n\tret;\n}}\n"
    ));
    assert!(src.contains("void K0(Thread &T, const uint8_t *P0, const simtwin_dim3_t &TI);"), "{src}");
    assert!(!src.contains("always_inline)) void K0("), "{src}");
    // The kernel that takes no other's address is inlined as before.
    assert!(src.contains("static inline __attribute__((always_inline)) void K1("), "{src}");
}

#[test]
fn a_parameter_read_at_an_unaligned_offset_or_through_its_address_keeps_the_checked_load() {
    let src = unit(
        r#"
.visible .entry odd(.param .align 8 .b8 ps[16], .param .u64 pout)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	ld.param.u32 %r1, [ps+2];
	ld.param.u32 %r2, [ps+4];
	ld.param.u64 %rd1, [pout];
	st.global.u32 [%rd1], %r1;
	st.global.u32 [%rd1+4], %r2;
	ret;
}
"#,
    );
    let k = body(&src, 0);
    assert!(
        k.contains("load<uint32_t>(((uint64_t)(uintptr_t)(P0 + 0) + (uint64_t)2ll))"),
        "misaligned: the checked load (and its trap):\n{k}"
    );
    assert!(k.contains("pload<uint32_t>(P0, 4)"), "{k}");
}

#[test]
fn an_f32_result_read_as_bits_or_stored_is_canonicalised_and_one_only_arithmetic_reads_is_not() {
    let src = unit(
        r#"
.visible .entry chains(.param .u64 pin, .param .u64 pout)
{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	.reg .f32 %f<12>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [pin];
	ld.param.u64 %rd2, [pout];
	ld.global.f32 %f1, [%rd1];
	ld.global.f32 %f2, [%rd1+4];
	add.f32 %f3, %f1, %f2;
	fma.rn.f32 %f4, %f3, %f2, %f1;
	sub.f32 %f5, %f1, %f2;
	mov.b32 %r1, %f5;
	mul.f32 %f6, %f1, %f2;
	setp.gtu.f32 %p1, %f6, 0f00000000;
	selp.u32 %r2, 1, 0, %p1;
	div.rn.f32 %f7, %f1, %f2;
	add.f32 %f8, %f7, %f7;
	st.global.f32 [%rd2], %f4;
	st.global.u32 [%rd2+4], %r1;
	st.global.u32 [%rd2+8], %r2;
	st.global.f32 [%rd2+12], %f8;
	ret;
}
"#,
    );
    let k = body(&src, 0);
    let line = |n: u32| k.lines().find(|l| l.ends_with(&format!("// {n}"))).unwrap_or_else(|| panic!("line {n}:\n{k}")).to_string();
    // PTX lines (the module's first is .version): add -> fma only; fma stored; sub read by
    // mov; mul read by setp only; div's quotient read by an add (its own form is
    // canonicalised in its routine either way); that add stored.
    assert!(line(15).contains("farith<float, false>(OP_ADD"), "{}", line(15));
    assert!(line(16).contains("farith<float>(OP_FMA"), "{}", line(16));
    assert!(line(17).contains("farith<float>(OP_SUB"), "{}", line(17));
    assert!(line(19).contains("farith<float, false>(OP_MUL"), "{}", line(19));
    assert!(line(23).contains("farith<float>(OP_ADD"), "{}", line(23));
}
