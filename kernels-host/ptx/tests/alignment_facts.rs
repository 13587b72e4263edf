//! `align`: which accesses of a barrier-free kernel its runner checks once for every
//! thread (`load<T, A>` / `store<T, A>` in `K<fi><A>`, the checks in the runner), and
//! which keep their check at every access because the value the access sees may not be
//! the one a fact describes.

use simtwin_ptx::{translate, Options};

/// The translation of a kernel with pointer parameters `a`, `b` (the body after
/// `%rd1`/`%rd2` = their global addresses and `%rd3` = 4 * %tid.x).
fn cpp(body: &str) -> String {
    let src = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 a, .param .u64 b, .param .u32 n)\n{{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<12>;\n.reg .f32 %f<8>;\n.reg .b64 %rd<16>;\n\
         ld.param.u64 %rd10, [a];\nld.param.u64 %rd11, [b];\ncvta.to.global.u64 %rd1, %rd10;\ncvta.to.global.u64 %rd2, %rd11;\n\
         mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd3, %r1, 4;\n{body}\nret;\n}}\n"
    );
    translate(&[&src], &Options { units: 1, ..Options::default() }).expect("translates").units.join("\n")
}

/// The runner's checks, as written (`(param + offset) & mask`).
fn runner_checks(c: &str) -> Vec<String> {
    let Some(line) =
        c.lines().find(|l| l.trim_start().starts_with("if ((") && (l.contains("for_each_thread") || l.contains("for_each_row")))
    else {
        return Vec::new();
    };
    line.match_indices("((pload<uint64_t>(P0, ")
        .map(|(i, _)| {
            let rest = &line[i..];
            let end = rest.find(" & ").and_then(|a| rest[a..].find("u)").map(|b| a + b + 2)).unwrap_or(rest.len());
            rest[..end].to_string()
        })
        .collect()
}

#[test]
fn parameter_plus_a_multiple_of_the_size_is_checked_once_by_the_runner() {
    let c = cpp("add.s64 %rd4, %rd1, %rd3;\nadd.s64 %rd5, %rd2, %rd3;\nld.global.f32 %f1, [%rd4];\nst.global.f32 [%rd5+8], %f1;");
    assert!(c.contains("template <bool A"), "{c}");
    assert!(c.contains("load<float, A>(") && c.contains("store<float, A>("), "{c}");
    assert_eq!(runner_checks(&c), ["((pload<uint64_t>(P0, 0) + 0ull) & 3u)", "((pload<uint64_t>(P0, 8) + 0ull) & 3u)"], "{c}");
    // (`K0<true, ...>` where the kernel also has a lanes instantiation.)
    assert!(c.contains("K0<true") && c.contains("K0<false"), "{c}");
    // An offset that is not a multiple of the size: checked once too (the runner then
    // runs the checked code, which traps at the first thread as the device does).
    let c = cpp("add.s64 %rd4, %rd1, %rd3;\nld.global.u32 %r2, [%rd4+6];\nst.global.u32 [%rd4], %r2;");
    assert_eq!(runner_checks(&c), ["((pload<uint64_t>(P0, 0) + 0ull) & 3u)", "((pload<uint64_t>(P0, 0) + 2ull) & 3u)"], "{c}");
}

#[test]
fn what_a_fact_cannot_describe_keeps_its_check_at_every_access() {
    // `access`: the one access of the body that must keep its check.
    let checked = |body: &str, access: &str| {
        let c = cpp(body);
        assert!(c.contains(&format!("{access}(")) && !c.contains(&format!("{}, A>(", access.trim_end_matches('>'))), "{body}\n{c}");
    };
    // A stride that is not a multiple of the access's size.
    checked("mul.wide.u32 %rd4, %r1, 2;\nadd.s64 %rd5, %rd1, %rd4;\nld.global.f32 %f1, [%rd5];\nst.global.f32 [%rd2], %f1;", "load<float>");
    // A register written twice.
    checked("add.s64 %rd4, %rd1, %rd3;\nld.global.f32 %f1, [%rd2];\nadd.s64 %rd4, %rd4, 2;\nst.global.f32 [%rd4], %f1;", "store<float>");
    // A guarded definition (it may not run: the register keeps its earlier value).
    checked(
        "setp.eq.u32 %p1, %r1, 0;\n@%p1 add.s64 %rd4, %rd1, %rd3;\nld.global.f32 %f1, [%rd4];\nst.global.f32 [%rd2], %f1;",
        "load<float>",
    );
    // Defined in a block that does not run before every use.
    checked(
        "setp.eq.u32 %p1, %r1, 0;\n@%p1 bra L1;\nadd.s64 %rd4, %rd1, %rd3;\nL1:\nld.global.f32 %f1, [%rd4];\nst.global.f32 [%rd2], %f1;",
        "load<float>",
    );
    // An index from a value the kernel loads (no fact about its low bits).
    checked("ld.global.u32 %r2, [%rd1];\ncvt.u64.u32 %rd4, %r2;\nadd.s64 %rd5, %rd1, %rd4;\nst.global.u16 [%rd5], %r2;", "store<uint16_t>");
}

#[test]
fn kernels_with_barriers_keep_their_checks() {
    let c = cpp("add.s64 %rd4, %rd1, %rd3;\nld.global.f32 %f1, [%rd4];\nbar.sync 0;\nst.global.f32 [%rd4], %f1;");
    assert!(!c.contains("template <bool A>") && !c.contains(", A>("), "{c}");
}
