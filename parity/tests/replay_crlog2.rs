//! The fixtures' correctly rounded log2 (fixtures/twin/include/crlog2.h): its tables
//! equal the MPFR generator's output, its hard-case table is right (MPFR), the table
//! entries misround without the table and are right with it, C and CUDA-path builds agree.

use parity::replay::crlog2gen;
use parity::replay::engine::{self, BatchFn, Options};
use parity::replay::host;
use parity::replay::reference::RefFn;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}
fn header() -> PathBuf {
    root().join("fixtures/twin/include/crlog2.h")
}
fn cases() -> Vec<(u32, u32)> {
    crlog2gen::read_cases_csv(&root().join("fixtures/data/log2_hard_cases.csv")).unwrap()
}
fn build(defines: &[&str], dir: &std::path::Path) -> host::HostBatch {
    let d: Vec<String> = defines.iter().map(|s| s.to_string()).collect();
    let lib = host::compile(&root().join("fixtures/cuda/crlog2_device.cu"), "crlog2_device", &d, &[], dir).unwrap();
    host::HostBatch::load(&lib).unwrap()
}

#[test]
fn header_tables_are_the_generators_output() {
    let text = std::fs::read_to_string(header()).unwrap();
    let regen = crlog2gen::regenerate(&text, &cases()).unwrap();
    assert!(regen == text, "crlog2.h differs from its regeneration: run `cargo run -p parity --example replay_cli -- gen-crlog2`");
    // spot checks of the generator itself against MPFR-independent facts
    let t = crlog2gen::reduction_table();
    for i in crlog2gen::unit_bins() {
        assert_eq!((t[i].r, t[i].th, t[i].tl), (1.0, 0.0, 0.0));
    }
    for b in &t {
        // 12-bit reciprocals, T = -log2 r to within 2^-60 of the float pair
        assert_eq!(b.r.to_bits() & 0xfff, 0);
        let t64 = -(b.r as f64).log2();
        assert!((t64 - (b.th as f64 + b.tl as f64)).abs() < 1e-15, "{b:?}");
    }
    assert_eq!(crlog2gen::hexf(1.5), "0x1.800000p+0f");
    assert_eq!(crlog2gen::parse_hexf("-0x1.715476p-1f"), Some(-0.7213475));
}

#[test]
fn hard_case_table_is_correct_per_mpfr() {
    let c = cases();
    let checks = parity::replay::check_table(&RefFn::Log2, &c);
    for ch in &checks {
        assert_eq!(ch.listed, ch.correct, "table entry 0x{:08x}", ch.input);
        assert!(
            ch.midpoint_distance_ulps < 1e-3,
            "0x{:08x} is not a hard case ({} ulp from a midpoint)",
            ch.input,
            ch.midpoint_distance_ulps
        );
    }
}

#[test]
fn table_entries_misround_without_the_table_and_not_with_it() {
    let d = tempfile::tempdir().unwrap();
    let with = build(&[], &d.path().join("with"));
    let without = build(&["SIMTWIN_CRLOG2_NO_TABLE"], &d.path().join("without"));
    let c = cases();
    let inputs: Vec<u32> = c.iter().map(|p| p.0).collect();
    let mut out_with = vec![0u32; inputs.len()];
    let mut out_without = vec![0u32; inputs.len()];
    with.eval(&inputs, &mut out_with);
    without.eval(&inputs, &mut out_without);
    for (k, &(x, y)) in c.iter().enumerate() {
        assert_eq!(out_with[k], y, "with table, 0x{x:08x}");
        assert_ne!(out_without[k], y, "without table, 0x{x:08x} is listed but rounds correctly");
    }
    let o = engine::replay_list(&without, &RefFn::Log2, &inputs, &Options::default());
    assert_eq!(o.misrounded as usize, c.len());
    let o = engine::replay_list(&with, &RefFn::Log2, &inputs, &Options::default());
    assert_eq!(o.misrounded, 0);
}

#[test]
fn correctly_rounded_on_sample_ranges_and_specials() {
    let d = tempfile::tempdir().unwrap();
    let f = build(&[], d.path());
    let opts = Options { chunk: 8192, ..Default::default() };
    for (a, b) in [
        (0x0000_0001u32, 0x0000_8000u64), // subnormals
        (0x0080_0000, 0x0080_8000),       // smallest normals
        (0x3f7f_0000, 0x3f81_0000),       // around 1
        (0x3f30_0000, 0x3f38_0000),       // around the reduction offset
        (0x7f7f_0000, 0x7f80_0000),       // largest
    ] {
        let o = engine::replay(&f, &RefFn::Log2, a, b, &opts, "crlog2");
        assert_eq!(o.misrounded, 0, "[0x{a:08x}, 0x{b:08x})");
    }
    let specials = [0u32, 0x8000_0000, 0x7f80_0000, 0xff80_0000, 0xbf80_0000, 0x7fc0_0000, 0x3f80_0000, 0x4000_0000, 0x0000_0001];
    let mut out = vec![0u32; specials.len()];
    f.eval(&specials, &mut out);
    let o: Vec<f32> = out.iter().map(|b| f32::from_bits(*b)).collect();
    assert_eq!(o[0], f32::NEG_INFINITY);
    assert_eq!(o[1], f32::NEG_INFINITY);
    assert_eq!(o[2], f32::INFINITY);
    assert!(o[3].is_nan() && o[4].is_nan() && o[5].is_nan());
    assert_eq!(out[6], 0); // +0
    assert_eq!(o[7], 1.0);
    assert_eq!(o[8], -149.0);
}

#[test]
fn plain_c_build_matches_the_cuda_path_build() {
    // The header compiled as C (plain float operators) and through the CUDA shim
    // (__fadd_rn & co.) gives the same bits.
    let d = tempfile::tempdir().unwrap();
    let c_src = d.path().join("dump.c");
    std::fs::write(
        &c_src,
        "#include <stdio.h>\n#include <string.h>\n#include \"crlog2.h\"\n\
         int main(void){ unsigned int s = 0x3f000000u, h = 0; for (unsigned int i = 0; i < (1u<<20); i++) { \
         unsigned int b = s + i * 37u; float x; memcpy(&x, &b, 4); float y = simtwin_cr_log2f(x); unsigned int u; memcpy(&u, &y, 4); \
         h = h * 31u + u; } printf(\"%u\\n\", h); return 0; }\n",
    )
    .unwrap();
    let exe = d.path().join("dump");
    let st = std::process::Command::new("gcc")
        .args(["-std=c99", "-O2", "-ffp-contract=off", "-fno-fast-math", "-I"])
        .arg(root().join("fixtures/twin/include"))
        .arg("-o")
        .arg(&exe)
        .arg(&c_src)
        .status()
        .unwrap();
    assert!(st.success());
    let c_hash: u32 = String::from_utf8(std::process::Command::new(&exe).output().unwrap().stdout).unwrap().trim().parse().unwrap();
    let f = build(&[], &d.path().join("cuda"));
    let inputs: Vec<u32> = (0..1u32 << 20).map(|i| 0x3f00_0000u32.wrapping_add(i.wrapping_mul(37))).collect();
    let mut out = vec![0u32; inputs.len()];
    f.eval(&inputs, &mut out);
    let h = out.iter().fold(0u32, |h, u| h.wrapping_mul(31).wrapping_add(*u));
    assert_eq!(h, c_hash);
}

/// The whole positive finite range without the table finds exactly the table's inputs,
/// and with the table nothing misrounds. Run: cargo test -p parity --release --test
/// replay_crlog2 -- --ignored (about 2 x 1-2 minutes on 2 idle cores).
#[test]
#[ignore]
fn exhaustive_replay_matches_the_table() {
    let d = tempfile::tempdir().unwrap();
    let opts = Options { progress: true, ..Default::default() };
    let without = build(&["SIMTWIN_CRLOG2_NO_TABLE"], &d.path().join("without"));
    let o = engine::replay(&without, &RefFn::Log2, 1, 0x7f80_0000, &opts, "crlog2 no table");
    let found: Vec<(u32, u32)> = o.list.iter().map(|m| (m.input, m.expected)).collect();
    assert_eq!(found, cases());
    let with = build(&[], &d.path().join("with"));
    let o = engine::replay(&with, &RefFn::Log2, 1, 0x7f80_0000, &opts, "crlog2");
    assert_eq!(o.misrounded, 0);
}
