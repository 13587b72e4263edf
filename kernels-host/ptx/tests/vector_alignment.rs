//! The device needs a vector access aligned to the whole vector when ptxas keeps it whole
//! (716 otherwise): a store of every lane, a load whose every lane is used. A load with
//! unused lanes may be narrowed by ptxas (measured on the H200: `misaligned_load16_at8`
//! runs), so only its elements' alignment is checked; kernel parameters are exempt.

use simtwin_ptx::{translate, Options};

fn cpp(body: &str) -> String {
    let src = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p, .param .align 16 .b8 s[16])\n{{\n\
         .reg .b64 %rd<4>;\n.reg .b32 %r<12>;\n.reg .f64 %fd<4>;\nld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd2, %rd1;\n{body}\nret;\n}}\n"
    );
    let t = translate(&[&src], &Options { units: 1, ..Options::default() }).expect("translates");
    t.units.join("\n")
}

fn checks(cpp: &str) -> Vec<String> {
    cpp.match_indices("align_check(").map(|(i, _)| cpp[i..].split(')').next().unwrap().to_string()).collect()
}

#[test]
fn whole_vector_stores_and_fully_used_loads_check_the_vector_alignment() {
    let c = cpp("mov.u32 %r1, 7;\nst.global.v4.u32 [%rd2], {%r1, %r1, %r1, %r1};\nst.global.v2.u32 [%rd2+8], {%r1, %r1};");
    let v = checks(&c);
    assert_eq!(v.len(), 2, "{v:?}");
    assert!(v[0].ends_with(", 16") && v[1].ends_with(", 8"), "{v:?}");

    let c = cpp("ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd2];\nadd.u32 %r5, %r1, %r2;\nadd.u32 %r6, %r3, %r4;\nadd.u32 %r7, %r5, %r6;\nst.global.u32 [%rd2], %r7;");
    assert_eq!(checks(&c).iter().filter(|s| s.ends_with(", 16")).count(), 1, "{:?}", checks(&c));

    let c = cpp("ld.global.v2.f64 {%fd1, %fd2}, [%rd2];\nadd.f64 %fd3, %fd1, %fd2;\nst.global.f64 [%rd2], %fd3;");
    assert_eq!(checks(&c).iter().filter(|s| s.ends_with(", 16")).count(), 1, "{:?}", checks(&c));
}

#[test]
fn loads_with_unused_lanes_sinks_and_parameters_check_only_elements() {
    // Lanes 1 and 2 never read (as nvcc writes `v.x ^ v.w` of an int4).
    let c = cpp("ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd2];\nxor.b32 %r5, %r1, %r4;\nst.global.u32 [%rd2], %r5;");
    assert!(checks(&c).is_empty(), "{:?}", checks(&c));
    // A store with a sink lane writes only some lanes.
    let c = cpp("mov.u32 %r1, 7;\nst.global.v4.u32 [%rd2], {%r1, _, %r1, %r1};");
    assert!(checks(&c).is_empty(), "{:?}", checks(&c));
    // A by-value struct parameter read as a vector.
    let c = cpp("ld.param.v4.u32 {%r1, %r2, %r3, %r4}, [s];\nadd.u32 %r5, %r1, %r2;\nadd.u32 %r6, %r3, %r4;\nadd.u32 %r7, %r5, %r6;\nst.global.u32 [%rd2], %r7;");
    assert!(checks(&c).is_empty(), "{:?}", checks(&c));
}
