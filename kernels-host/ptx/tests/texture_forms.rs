//! How the translator takes the texture forms of issue 19 apart: `.f16`/`.f16x2`
//! results, the depth-compare operand (never mistaken for a texel offset), the
//! multi-sample geometries, and a `txq` the device's driver cannot compile (that kernel
//! alone refused, the module still translated). The values are checked on the H200 by
//! emu-driver's conformance (`ptx_texh_*`, `ptx_texdc_*`, `ptx_texms_*`, `ptx_txq_lazy`).

use simtwin_ptx::{translate, Error, Options};

fn module(body: &str) -> String {
    format!(".version 7.8\n.target sm_90\n.address_size 64\n{body}")
}

fn kernel(instr: &str) -> String {
    module(&format!(
        ".visible .entry k(.param .u64 t, .param .u64 o)\n{{\n\t.reg .b32 %r<16>;\n\t.reg .f32 %f<16>;\n\t.reg .b16 %h<8>;\n\t.reg .b64 %rd<4>;\n\
         \tld.param.u64 %rd1, [t];\n\tld.param.u64 %rd2, [o];\n\tmov.f32 %f1, 0f3F000000;\n\tmov.f32 %f3, 0f3E800000;\n\tmov.b32 %r1, 1;\n\
         \t{instr}\n\tst.global.f32 [%rd2], %f5;\n\tret;\n}}\n"
    ))
}

fn unit(src: &str) -> String {
    translate(&[src], &Options { units: 1, ..Options::default() }).unwrap_or_else(|e| panic!("{e}")).units.concat()
}

#[test]
fn a_scalar_after_the_coordinates_is_the_depth_compare_value_not_an_offset() {
    let plain = unit(&kernel("tex.2d.v4.f32.f32 {%f5, %f6, %f7, %f8}, [%rd1, {%f1, %f1}], %f3;"));
    assert!(!plain.contains(".offset["), "a depth-compare value taken as an offset:\n{plain}");
    let both = unit(&kernel("tex.2d.v4.f32.f32 {%f5, %f6, %f7, %f8}, [%rd1, {%f1, %f1}], {%r1, %r1}, %f3;"));
    assert!(both.contains(".offset[0] = (int8_t)") && both.contains(".offset[1] = (int8_t)"), "{both}");
    let gather = unit(&kernel("tld4.r.2d.v4.f32.f32 {%f5, %f6, %f7, %f8}, [%rd1, {%f1, %f1}], %f3;"));
    assert!(!gather.contains(".offset["), "{gather}");
}

#[test]
fn half_results_ask_the_driver_for_packed_halves() {
    let v4 = unit(&kernel("tex.2d.v4.f16.f32 {%h1, %h2, %h3, %h4}, [%rd1, {%f1, %f1}];"));
    assert!(v4.contains(".result = 3u;"), "{v4}");
    assert!(v4.contains(".data[1] >> 16)"), "the fourth half is data[1]'s high half:\n{v4}");
    let x2 = unit(&kernel("tex.2d.v2.f16x2.f32 {%r2, %r3}, [%rd1, {%f1, %f1}];"));
    assert!(x2.contains(".result = 3u;"), "{x2}");
}

#[test]
fn multisample_fetches_read_sample_zero_at_integer_coordinates() {
    let ms = unit(&kernel("tex.2dms.v4.f32.s32 {%f5, %f6, %f7, %f8}, [%rd1, {%r1, %r2, %r3, %r4}];"));
    assert!(ms.contains(".flags = SIMTWIN_TEX_INT_COORDS;") && ms.contains("== 0) tex_call("), "{ms}");
    let ams = unit(&kernel("tex.a2dms.v4.f32.s32 {%f5, %f6, %f7, %f8}, [%rd1, {%r1, %r2, %r3, %r4}];"));
    assert!(ams.contains(".icoord[3] = ") && ams.contains(".geometry = 4u;"), "{ams}");
}

const TWO_KERNELS: &str = "
.visible .entry ok(.param .u64 o)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [o];
	mov.b32 %r1, 7;
	st.global.u32 [%rd1], %r1;
	ret;
}
.visible .entry q(.param .u64 t, .param .u64 o)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [t];
	ld.param.u64 %rd2, [o];
	txq.channel_data_type.b32 %r1, [%rd1];
	st.global.u32 [%rd2], %r1;
	ret;
}
";

#[test]
fn a_txq_the_device_cannot_compile_refuses_that_kernel_only() {
    let t = translate(&[&module(TWO_KERNELS)], &Options { units: 1, ..Options::default() }).unwrap();
    let by_name = |n: &str| t.kernels.iter().find(|k| k.name == n).unwrap().refused.clone();
    assert_eq!(by_name("ok"), None);
    let (code, why) = by_name("q").expect("q refused");
    assert_eq!(code, 500);
    assert!(why.contains("txq.channel_data_type"), "{why}");
}

/// H200, ptx_txq_lazy_func: a txq the device cannot compile, in a device function two
/// kernels call, fails each of those kernels (500 from cuModuleGetFunction under lazy
/// loading) and leaves the module's other kernel, and the load, alone.
#[test]
fn a_txq_the_device_cannot_compile_in_a_device_function_refuses_the_kernels_that_call_it() {
    let caller = |name: &str| {
        format!(
            ".visible .entry {name}(.param .u64 t, .param .u64 o)\n{{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\
             \tld.param.u64 %rd1, [t];\n\tld.param.u64 %rd2, [o];\n\tcall (%r1), f, (%rd1);\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}}\n"
        )
    };
    let src = module(&format!(
        ".func (.reg .b32 r) f(.reg .b64 t)\n{{\n\ttxq.filter_mode.b32 r, [t];\n\tret;\n}}\n\
         .func (.reg .b32 r) g(.reg .b64 t)\n{{\n\tcall (r), f, (t);\n\tret;\n}}\n\
         {}{}\
         .visible .entry ok(.param .u64 o)\n{{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n\tld.param.u64 %rd1, [o];\n\
         \tmov.b32 %r1, 7;\n\tst.global.u32 [%rd1], %r1;\n\tret;\n}}\n",
        caller("q"),
        caller("q2").replace("call (%r1), f,", "call (%r1), g,"),
    ));
    let t = translate(&[&src], &Options { units: 1, ..Options::default() }).expect("the module translates");
    let refused: Vec<(&str, Option<u32>)> = t.kernels.iter().map(|k| (k.name.as_str(), k.refused.as_ref().map(|r| r.0))).collect();
    assert_eq!(refused, [("q", Some(500)), ("q2", Some(500)), ("ok", None)]);
    // An indirect call could reach it from any kernel: the whole module, as eager loading.
    let indirect = module(
        ".func (.param .b32 r) h(.param .b64 t)\n{\n\t.reg .b32 %x;\n\t.reg .b64 %y;\n\tld.param.b64 %y, [t];\n\
         \ttxq.filter_mode.b32 %x, [%y];\n\tst.param.b32 [r], %x;\n\tret;\n}\n\
         .visible .entry k(.param .u64 o)\n{\n\t.reg .b64 %rd<3>;\n\t.reg .b32 %r<2>;\n\tld.param.u64 %rd1, [o];\n\tmov.u64 %rd2, h;\n\
         \t{\n\t.param .b64 a;\n\t.param .b32 b;\n\tst.param.b64 [a], %rd1;\n\
         \tP: .callprototype (.param .b32 _) _ (.param .b64 _);\n\tcall (b), %rd2, (a), P;\n\tld.param.b32 %r1, [b];\n\t}\n\
         \tst.global.u32 [%rd1], %r1;\n\tret;\n}\n",
    );
    match translate(&[&indirect], &Options { units: 1, ..Options::default() }) {
        Err(Error::DeviceRefuses { code: 500, .. }) => {}
        other => panic!("expected the module refused with 500, got {:?}", other.map(|t| t.kernels)),
    }
}
