//! Chains of shuffles (simtwin-ptx `emit/chains.rs`): which runs of a warp's shuffles
//! become one chain for its 32 lanes, and which stay link by link.

use simtwin_ptx::{translate, Options};

/// The translation's C++ and the kernel's note.
fn emitted(body: &str) -> (String, String) {
    let src = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 out)\n{{\n    .reg .b32 %r<40>;\n    .reg .b64 %rd<2000>;\n    .reg .pred %p<4>;\n    ld.param.u64 %rd1, [out];\n    mov.u32 %r1, %tid.x;\n    mul.wide.u32 %rd3, %r1, 4;\n    add.u64 %rd4, %rd1, %rd3;\n    ld.global.u32 %r2, [%rd4];\n{body}    st.global.u32 [%rd4], %r2;\n    ret;\n}}\n"
    );
    let t = translate(&[&src], &Options { units: 1, ..Options::default() }).unwrap();
    (t.units.concat(), t.kernels[0].threads_why.clone())
}

/// A warp sum: five shuffles down, an add after each.
const SUM: &str = "    shfl.sync.down.b32 %r3, %r2, 16, 31, -1;\n    add.u32 %r2, %r2, %r3;\n    shfl.sync.down.b32 %r4, %r2, 8, 31, -1;\n    add.u32 %r2, %r2, %r4;\n    shfl.sync.down.b32 %r5, %r2, 4, 31, -1;\n    add.u32 %r2, %r2, %r5;\n    shfl.sync.down.b32 %r6, %r2, 2, 31, -1;\n    add.u32 %r2, %r2, %r6;\n    shfl.sync.down.b32 %r7, %r2, 1, 31, -1;\n    add.u32 %r2, %r2, %r7;\n";

#[test]
fn a_warp_sum_is_one_chain() {
    let (code, why) = emitted(SUM);
    // The first shuffle is reached from the loads (the frames' exchange); the four after it
    // are the chain's links.
    assert!(code.contains("case 1u: { // 4 links"), "{code}");
    assert_eq!(code.matches("ptx::chain_shfl<1, ").count(), 4);
    assert!(why.contains("; 4 shuffles in 1 chain run for a warp's lanes at once (`chains`)"), "{why}");
}

#[test]
fn memory_between_shuffles_splits_the_chain() {
    // A global load between the third and fourth shuffles: that link touches memory, so
    // the chain is the two links before it; the last link alone is no chain.
    let body =
        SUM.replace("    shfl.sync.down.b32 %r6", "    ld.global.u32 %r9, [%rd4];\n    add.u32 %r2, %r2, %r9;\n    shfl.sync.down.b32 %r6");
    let (code, why) = emitted(&body);
    assert!(code.contains("case 1u: { // 2 links"), "{code}");
    assert!(code.contains("// 2 links") && !code.contains("// 3 links") && !code.contains("// 4 links"));
    assert!(why.contains("; 2 shuffles in 1 chain run for a warp's lanes at once (`chains`)"), "{why}");
}

/// `n` 64-bit values set before the sum, each updated in every link (from the sum so far)
/// and summed after it: the chain's links carry them all.
fn carried(n: usize) -> String {
    let carry: String = (0..n).map(|k| format!("    add.u64 %rd{}, %rd1, {k};\n", 100 + k)).collect();
    let bump: String = (0..n).map(|k| format!("    add.u64 %rd{0}, %rd{0}, %rd2;\n", 100 + k)).collect();
    let sum: String = (0..n).map(|k| format!("    add.u64 %rd2, %rd2, %rd{};\n", 100 + k)).collect();
    let links = SUM.replace("    shfl", &format!("    cvt.u64.u32 %rd2, %r2;\n{bump}    shfl"));
    format!("{carry}{links}{sum}    cvt.u32.u64 %r2, %rd2;\n")
}

#[test]
fn a_chain_that_carries_too_much_runs_link_by_link() {
    // 1100 values: 1100 * 8 bytes for each of 32 lanes is more than a chain's arrays may
    // take (256 KiB); seventy fit.
    let (code, why) = emitted(&carried(1100));
    assert!(!code.contains(" links"), "{why}");
    assert!(!why.contains("`chains`"), "{why}");
    let (code, why) = emitted(&carried(70));
    assert!(code.contains("// 4 links"), "{why}");
}
