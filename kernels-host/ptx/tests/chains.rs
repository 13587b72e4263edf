//! Chains of shuffles (simtwin-ptx `emit/chains.rs`): which runs of a warp's shuffles
//! become one chain for its 32 lanes, and which stay link by link.

use simtwin_ptx::{translate, Options};

/// The translation's C++ and the kernel's note.
fn emitted(body: &str) -> (String, String) {
    let src = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 out)\n{{\n    .reg .b32 %r<40>;\n    .reg .b64 %rd<200>;\n    .reg .pred %p<4>;\n    ld.param.u64 %rd1, [out];\n    mov.u32 %r1, %tid.x;\n    mul.wide.u32 %rd3, %r1, 4;\n    add.u64 %rd4, %rd1, %rd3;\n    ld.global.u32 %r2, [%rd4];\n{body}    st.global.u32 [%rd4], %r2;\n    ret;\n}}\n"
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
    assert!(why.ends_with("; 4 shuffles in 1 chain run for a warp's lanes at once (`chains`)"), "{why}");
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
    assert!(why.ends_with("; 2 shuffles in 1 chain run for a warp's lanes at once (`chains`)"), "{why}");
}

#[test]
fn a_chain_that_carries_too_much_runs_link_by_link() {
    // Seventy 64-bit values updated in every link (from the sum so far): 70 * 8 bytes for
    // each of 32 lanes is more than a chain's arrays may take on a fiber's stack.
    let links = SUM.replace("    shfl", &format!("    cvt.u64.u32 %rd2, %r2;\n{BUMP}    shfl"));
    let (code, why) = emitted(&format!("{CARRY}{links}{USE}"));
    assert!(!code.contains(" links"), "{why}");
    assert!(!why.contains("`chains`"), "{why}");
    // Ten of them fit.
    let ten: String = BUMP.lines().take(10).map(|l| format!("{l}\n")).collect();
    let links = SUM.replace("    shfl", &format!("    cvt.u64.u32 %rd2, %r2;\n{ten}    shfl"));
    let (code, _) = emitted(&format!("{CARRY}{links}{USE}"));
    assert!(code.contains("// 4 links"), "{code}");
}

const CARRY: &str = r#"    add.u64 %rd100, %rd1, 0;
    add.u64 %rd101, %rd1, 1;
    add.u64 %rd102, %rd1, 2;
    add.u64 %rd103, %rd1, 3;
    add.u64 %rd104, %rd1, 4;
    add.u64 %rd105, %rd1, 5;
    add.u64 %rd106, %rd1, 6;
    add.u64 %rd107, %rd1, 7;
    add.u64 %rd108, %rd1, 8;
    add.u64 %rd109, %rd1, 9;
    add.u64 %rd110, %rd1, 10;
    add.u64 %rd111, %rd1, 11;
    add.u64 %rd112, %rd1, 12;
    add.u64 %rd113, %rd1, 13;
    add.u64 %rd114, %rd1, 14;
    add.u64 %rd115, %rd1, 15;
    add.u64 %rd116, %rd1, 16;
    add.u64 %rd117, %rd1, 17;
    add.u64 %rd118, %rd1, 18;
    add.u64 %rd119, %rd1, 19;
    add.u64 %rd120, %rd1, 20;
    add.u64 %rd121, %rd1, 21;
    add.u64 %rd122, %rd1, 22;
    add.u64 %rd123, %rd1, 23;
    add.u64 %rd124, %rd1, 24;
    add.u64 %rd125, %rd1, 25;
    add.u64 %rd126, %rd1, 26;
    add.u64 %rd127, %rd1, 27;
    add.u64 %rd128, %rd1, 28;
    add.u64 %rd129, %rd1, 29;
    add.u64 %rd130, %rd1, 30;
    add.u64 %rd131, %rd1, 31;
    add.u64 %rd132, %rd1, 32;
    add.u64 %rd133, %rd1, 33;
    add.u64 %rd134, %rd1, 34;
    add.u64 %rd135, %rd1, 35;
    add.u64 %rd136, %rd1, 36;
    add.u64 %rd137, %rd1, 37;
    add.u64 %rd138, %rd1, 38;
    add.u64 %rd139, %rd1, 39;
    add.u64 %rd140, %rd1, 40;
    add.u64 %rd141, %rd1, 41;
    add.u64 %rd142, %rd1, 42;
    add.u64 %rd143, %rd1, 43;
    add.u64 %rd144, %rd1, 44;
    add.u64 %rd145, %rd1, 45;
    add.u64 %rd146, %rd1, 46;
    add.u64 %rd147, %rd1, 47;
    add.u64 %rd148, %rd1, 48;
    add.u64 %rd149, %rd1, 49;
    add.u64 %rd150, %rd1, 50;
    add.u64 %rd151, %rd1, 51;
    add.u64 %rd152, %rd1, 52;
    add.u64 %rd153, %rd1, 53;
    add.u64 %rd154, %rd1, 54;
    add.u64 %rd155, %rd1, 55;
    add.u64 %rd156, %rd1, 56;
    add.u64 %rd157, %rd1, 57;
    add.u64 %rd158, %rd1, 58;
    add.u64 %rd159, %rd1, 59;
    add.u64 %rd160, %rd1, 60;
    add.u64 %rd161, %rd1, 61;
    add.u64 %rd162, %rd1, 62;
    add.u64 %rd163, %rd1, 63;
    add.u64 %rd164, %rd1, 64;
    add.u64 %rd165, %rd1, 65;
    add.u64 %rd166, %rd1, 66;
    add.u64 %rd167, %rd1, 67;
    add.u64 %rd168, %rd1, 68;
    add.u64 %rd169, %rd1, 69;
"#;
const BUMP: &str = r#"    add.u64 %rd100, %rd100, %rd2;
    add.u64 %rd101, %rd101, %rd2;
    add.u64 %rd102, %rd102, %rd2;
    add.u64 %rd103, %rd103, %rd2;
    add.u64 %rd104, %rd104, %rd2;
    add.u64 %rd105, %rd105, %rd2;
    add.u64 %rd106, %rd106, %rd2;
    add.u64 %rd107, %rd107, %rd2;
    add.u64 %rd108, %rd108, %rd2;
    add.u64 %rd109, %rd109, %rd2;
    add.u64 %rd110, %rd110, %rd2;
    add.u64 %rd111, %rd111, %rd2;
    add.u64 %rd112, %rd112, %rd2;
    add.u64 %rd113, %rd113, %rd2;
    add.u64 %rd114, %rd114, %rd2;
    add.u64 %rd115, %rd115, %rd2;
    add.u64 %rd116, %rd116, %rd2;
    add.u64 %rd117, %rd117, %rd2;
    add.u64 %rd118, %rd118, %rd2;
    add.u64 %rd119, %rd119, %rd2;
    add.u64 %rd120, %rd120, %rd2;
    add.u64 %rd121, %rd121, %rd2;
    add.u64 %rd122, %rd122, %rd2;
    add.u64 %rd123, %rd123, %rd2;
    add.u64 %rd124, %rd124, %rd2;
    add.u64 %rd125, %rd125, %rd2;
    add.u64 %rd126, %rd126, %rd2;
    add.u64 %rd127, %rd127, %rd2;
    add.u64 %rd128, %rd128, %rd2;
    add.u64 %rd129, %rd129, %rd2;
    add.u64 %rd130, %rd130, %rd2;
    add.u64 %rd131, %rd131, %rd2;
    add.u64 %rd132, %rd132, %rd2;
    add.u64 %rd133, %rd133, %rd2;
    add.u64 %rd134, %rd134, %rd2;
    add.u64 %rd135, %rd135, %rd2;
    add.u64 %rd136, %rd136, %rd2;
    add.u64 %rd137, %rd137, %rd2;
    add.u64 %rd138, %rd138, %rd2;
    add.u64 %rd139, %rd139, %rd2;
    add.u64 %rd140, %rd140, %rd2;
    add.u64 %rd141, %rd141, %rd2;
    add.u64 %rd142, %rd142, %rd2;
    add.u64 %rd143, %rd143, %rd2;
    add.u64 %rd144, %rd144, %rd2;
    add.u64 %rd145, %rd145, %rd2;
    add.u64 %rd146, %rd146, %rd2;
    add.u64 %rd147, %rd147, %rd2;
    add.u64 %rd148, %rd148, %rd2;
    add.u64 %rd149, %rd149, %rd2;
    add.u64 %rd150, %rd150, %rd2;
    add.u64 %rd151, %rd151, %rd2;
    add.u64 %rd152, %rd152, %rd2;
    add.u64 %rd153, %rd153, %rd2;
    add.u64 %rd154, %rd154, %rd2;
    add.u64 %rd155, %rd155, %rd2;
    add.u64 %rd156, %rd156, %rd2;
    add.u64 %rd157, %rd157, %rd2;
    add.u64 %rd158, %rd158, %rd2;
    add.u64 %rd159, %rd159, %rd2;
    add.u64 %rd160, %rd160, %rd2;
    add.u64 %rd161, %rd161, %rd2;
    add.u64 %rd162, %rd162, %rd2;
    add.u64 %rd163, %rd163, %rd2;
    add.u64 %rd164, %rd164, %rd2;
    add.u64 %rd165, %rd165, %rd2;
    add.u64 %rd166, %rd166, %rd2;
    add.u64 %rd167, %rd167, %rd2;
    add.u64 %rd168, %rd168, %rd2;
    add.u64 %rd169, %rd169, %rd2;
"#;
const USE: &str = r#"    add.u64 %rd2, %rd2, %rd100;
    add.u64 %rd2, %rd2, %rd101;
    add.u64 %rd2, %rd2, %rd102;
    add.u64 %rd2, %rd2, %rd103;
    add.u64 %rd2, %rd2, %rd104;
    add.u64 %rd2, %rd2, %rd105;
    add.u64 %rd2, %rd2, %rd106;
    add.u64 %rd2, %rd2, %rd107;
    add.u64 %rd2, %rd2, %rd108;
    add.u64 %rd2, %rd2, %rd109;
    add.u64 %rd2, %rd2, %rd110;
    add.u64 %rd2, %rd2, %rd111;
    add.u64 %rd2, %rd2, %rd112;
    add.u64 %rd2, %rd2, %rd113;
    add.u64 %rd2, %rd2, %rd114;
    add.u64 %rd2, %rd2, %rd115;
    add.u64 %rd2, %rd2, %rd116;
    add.u64 %rd2, %rd2, %rd117;
    add.u64 %rd2, %rd2, %rd118;
    add.u64 %rd2, %rd2, %rd119;
    add.u64 %rd2, %rd2, %rd120;
    add.u64 %rd2, %rd2, %rd121;
    add.u64 %rd2, %rd2, %rd122;
    add.u64 %rd2, %rd2, %rd123;
    add.u64 %rd2, %rd2, %rd124;
    add.u64 %rd2, %rd2, %rd125;
    add.u64 %rd2, %rd2, %rd126;
    add.u64 %rd2, %rd2, %rd127;
    add.u64 %rd2, %rd2, %rd128;
    add.u64 %rd2, %rd2, %rd129;
    add.u64 %rd2, %rd2, %rd130;
    add.u64 %rd2, %rd2, %rd131;
    add.u64 %rd2, %rd2, %rd132;
    add.u64 %rd2, %rd2, %rd133;
    add.u64 %rd2, %rd2, %rd134;
    add.u64 %rd2, %rd2, %rd135;
    add.u64 %rd2, %rd2, %rd136;
    add.u64 %rd2, %rd2, %rd137;
    add.u64 %rd2, %rd2, %rd138;
    add.u64 %rd2, %rd2, %rd139;
    add.u64 %rd2, %rd2, %rd140;
    add.u64 %rd2, %rd2, %rd141;
    add.u64 %rd2, %rd2, %rd142;
    add.u64 %rd2, %rd2, %rd143;
    add.u64 %rd2, %rd2, %rd144;
    add.u64 %rd2, %rd2, %rd145;
    add.u64 %rd2, %rd2, %rd146;
    add.u64 %rd2, %rd2, %rd147;
    add.u64 %rd2, %rd2, %rd148;
    add.u64 %rd2, %rd2, %rd149;
    add.u64 %rd2, %rd2, %rd150;
    add.u64 %rd2, %rd2, %rd151;
    add.u64 %rd2, %rd2, %rd152;
    add.u64 %rd2, %rd2, %rd153;
    add.u64 %rd2, %rd2, %rd154;
    add.u64 %rd2, %rd2, %rd155;
    add.u64 %rd2, %rd2, %rd156;
    add.u64 %rd2, %rd2, %rd157;
    add.u64 %rd2, %rd2, %rd158;
    add.u64 %rd2, %rd2, %rd159;
    add.u64 %rd2, %rd2, %rd160;
    add.u64 %rd2, %rd2, %rd161;
    add.u64 %rd2, %rd2, %rd162;
    add.u64 %rd2, %rd2, %rd163;
    add.u64 %rd2, %rd2, %rd164;
    add.u64 %rd2, %rd2, %rd165;
    add.u64 %rd2, %rd2, %rd166;
    add.u64 %rd2, %rd2, %rd167;
    add.u64 %rd2, %rd2, %rd168;
    add.u64 %rd2, %rd2, %rd169;
"#;
