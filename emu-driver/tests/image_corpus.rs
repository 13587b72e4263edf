//! Parses every sample image in tests/corpus/image/ (made by tests/cu/images/build.sh with
//! nvcc 13.5) and checks names, parameter layouts, attributes and entry selection against
//! what the sources declare and what `ptxas -v` reported when the cubins were built.

use std::collections::BTreeMap;
use std::path::PathBuf;

use cuda::image::{
    cubin_globals, parse_bytes, ptx_globals, Compression, EntryKind, GlobalInfo, Image, ImageError, ImageKind, ParamInfo, Target,
};

const H200: Target = Target { sm: 90 };

fn corpus(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/image").join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn parse(name: &str, target: Target) -> Result<Image, ImageError> {
    parse_bytes(&corpus(name), target)
}

fn params(v: &[(u32, u32)]) -> Option<Vec<ParamInfo>> {
    Some(v.iter().map(|&(offset, size)| ParamInfo { offset, size }).collect())
}

/// Per kernel: (registers, static shared bytes, stack frame bytes) from `ptxas -v` output.
fn ptxas_report(name: &str) -> BTreeMap<String, (u32, u32, u32)> {
    let text = String::from_utf8(corpus(name)).unwrap();
    let mut out = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut frame = 0;
    for line in text.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            current = Some(rest.split('\'').next().unwrap().to_string());
        } else if let Some(f) = line.trim().strip_suffix(" bytes spill loads") {
            frame = f.split_whitespace().next().unwrap().parse().unwrap();
        } else if let Some(rest) = line.split("Used ").nth(1) {
            let regs: u32 = rest.split_whitespace().next().unwrap().parse().unwrap();
            let smem = rest
                .split(", ")
                .find(|p| p.ends_with("bytes smem"))
                .map(|p| p.split_whitespace().next().unwrap().parse().unwrap())
                .unwrap_or(0);
            out.insert(current.take().expect("Used before Compiling"), (regs, smem, frame));
        }
    }
    assert!(!out.is_empty(), "{name}: no ptxas report lines");
    out
}

fn names(img: &Image) -> Vec<&str> {
    let mut v: Vec<&str> = img.kernels.iter().map(|k| k.name.as_str()).collect();
    v.sort();
    v
}

fn sorted_globals(mut g: Vec<GlobalInfo>) -> Vec<GlobalInfo> {
    g.sort_by(|a, b| a.name.cmp(&b.name));
    g
}

const FEATURE_KERNELS: [&str; 5] =
    ["_Z12scale_kernelIdLi3EEvPT_S0_i", "_Z12scale_kernelIfLi2EEvPT_S0_i", "bounded", "feature_sum", "histogram"];

fn check_feature_params(img: &Image) {
    let k = |n: &str| img.kernel(n).unwrap_or_else(|| panic!("{n} missing in {}", img.chosen));
    assert_eq!(k("feature_sum").params, params(&[(0, 8), (8, 16), (24, 8)]));
    assert_eq!(k("histogram").params, params(&[(0, 8), (8, 4), (12, 4)]));
    assert_eq!(k("_Z12scale_kernelIfLi2EEvPT_S0_i").params, params(&[(0, 8), (8, 4), (12, 4)]));
    assert_eq!(k("_Z12scale_kernelIdLi3EEvPT_S0_i").params, params(&[(0, 8), (8, 8), (16, 4)]));
    assert_eq!(k("bounded").params, params(&[(0, 8)]));
    assert_eq!(k("feature_sum").param_bytes(), Some(32));
    assert_eq!(k("feature_sum").bounds.maxntid, Some([256, 1, 1]));
    assert_eq!(k("bounded").bounds.maxntid, Some([128, 1, 1]));
    assert_eq!(k("histogram").bounds.maxntid, None);
}

fn check_feature_globals(g: Vec<GlobalInfo>) {
    let g = sorted_globals(g);
    let want = [("c_lut", 256, true), ("c_weights", 64, true), ("d_hist", 1024, false), ("d_total", 8, false)];
    assert_eq!(g.len(), want.len(), "{g:?}");
    for (g, (n, s, c)) in g.iter().zip(want) {
        assert_eq!((g.name.as_str(), g.size, g.constant), (n, Some(s), c));
    }
}

/// The sm_90 cubin's attributes agree with ptxas -v, whichever container carries it.
fn check_feature_attrs(img: &Image) {
    let report = ptxas_report("features_sm90.ptxas.txt");
    assert_eq!(report.len(), 5);
    for (name, (regs, smem, frame)) in report {
        let a = img.kernel(&name).unwrap().attrs.unwrap_or_else(|| panic!("{name}: no attrs"));
        assert_eq!(a.num_regs, regs, "{name} registers");
        assert_eq!(a.shared_size_bytes, smem, "{name} shared");
        assert_eq!(a.shared_section_bytes, smem + 1024, "{name} shared window with sm_90 reserve");
        assert_eq!(a.local_size_bytes, frame, "{name} frame");
        assert_eq!(a.binary_version, 90);
        assert_eq!(a.ptx_version, Some(90));
        assert_eq!(a.const_size_bytes, 320, "64 + 256 bytes of __constant__");
        assert_eq!(a.max_dynamic_shared, None);
    }
    let a = |n: &str| img.kernel(n).unwrap().attrs.unwrap();
    assert_eq!(a("feature_sum").max_threads_per_block, Some(256));
    assert_eq!(a("bounded").max_threads_per_block, Some(128));
    assert_eq!(a("histogram").max_threads_per_block, None);
    assert_eq!(a("feature_sum").param_bytes, Some(32));
    assert_eq!(a("bounded").reqntid, None);
}

#[test]
fn bare_sm90_cubin() {
    let img = parse("features_sm90.cubin", H200).unwrap();
    assert_eq!(img.kind, ImageKind::Cubin);
    assert_eq!(img.chosen, "sm_90 cubin");
    assert_eq!(names(&img), FEATURE_KERNELS);
    assert!(img.entries.is_empty());
    check_feature_params(&img);
    check_feature_attrs(&img);
    check_feature_globals(img.globals.clone());
    check_feature_globals(cubin_globals(&corpus("features_sm90.cubin")).unwrap());
}

#[test]
fn bare_cubin_for_other_major_is_no_binary() {
    for sm in [80, 86, 89, 100, 120] {
        let e = parse("features_sm90.cubin", Target { sm }).unwrap_err();
        assert!(matches!(e, ImageError::NoBinaryForGpu(_)), "sm_{sm}: {e}");
        assert_eq!(e.cu_result(), 209);
    }
}

#[test]
fn plain_ptx() {
    let img = parse("features_compute80.ptx", H200).unwrap();
    assert_eq!(img.kind, ImageKind::Ptx);
    assert_eq!(img.chosen, "compute_80 ptx");
    assert_eq!(names(&img), FEATURE_KERNELS);
    check_feature_params(&img);
    assert!(img.kernels.iter().all(|k| k.attrs.is_none()), "PTX carries no register counts");
    assert_eq!(img.kernel("bounded").unwrap().bounds.minnctapersm, Some(4));
    check_feature_globals(img.globals.clone());
    let text = String::from_utf8(corpus("features_compute80.ptx")).unwrap();
    check_feature_globals(ptx_globals(&text).unwrap());
    // The JIT refuses a .target above the device.
    let e = parse("features_compute80.ptx", Target { sm: 75 }).unwrap_err();
    assert_eq!(e.cu_result(), 218, "{e}");
}

#[test]
fn ptx_with_reqntid_and_initialised_arrays() {
    let img = parse("reqntid.ptx", H200).unwrap();
    let k = img.kernel("fixed_block").unwrap();
    assert_eq!(k.params, params(&[(0, 8), (8, 1), (16, 24), (40, 2)]));
    assert_eq!(k.bounds.reqntid, Some([32, 4, 1]));
    assert_eq!(k.bounds.minnctapersm, Some(2));
    assert_eq!(img.kernel("no_params").unwrap().params, Some(vec![]));
    let g = sorted_globals(img.globals.clone());
    let got: Vec<(&str, Option<u64>, bool)> = g.iter().map(|g| (g.name.as_str(), g.size, g.constant)).collect();
    let want = vec![("c_vec", Some(16), true), ("g_a", Some(4), false), ("g_b", Some(12), false), ("g_table", Some(20), false)];
    assert_eq!(got, want);

    // The same module assembled by ptxas: the layout agrees, the cubin adds attributes.
    let cub = parse("reqntid_sm90.cubin", H200).unwrap();
    assert_eq!(cub.kernel("fixed_block").unwrap().params, k.params);
    let a = cub.kernel("fixed_block").unwrap().attrs.unwrap();
    assert_eq!(a.reqntid, Some([32, 4, 1]));
    assert_eq!(a.max_threads_per_block, Some(128));
    assert_eq!(a.param_bytes, Some(42));
    assert_eq!(sorted_globals(cub.globals.clone()), g);
    for (name, (regs, smem, _)) in ptxas_report("reqntid_sm90.ptxas.txt") {
        let a = cub.kernel(&name).unwrap().attrs.unwrap();
        assert_eq!((a.num_regs, a.shared_size_bytes), (regs, smem), "{name}");
    }
}

#[test]
fn vmaf_shaped_fatbin_entries_and_choice() {
    let img = parse("vmaf9.fatbin", H200).unwrap();
    assert_eq!(img.kind, ImageKind::Fatbin);
    assert_eq!(img.chosen, "sm_90 cubin");
    let seen: Vec<String> = img.entries.iter().map(|e| e.describe()).collect();
    assert_eq!(
        seen,
        [
            "sm_75 cubin",
            "sm_80 cubin",
            "compute_80 ptx (zstd)",
            "sm_86 cubin",
            "sm_89 cubin",
            "sm_90 cubin",
            "sm_100 cubin",
            "sm_120 cubin",
            "compute_120 ptx (zstd)"
        ]
    );
    for e in &img.entries {
        let want = if e.kind == EntryKind::Ptx { Compression::Zstd } else { Compression::None };
        assert_eq!(e.compression, want);
        assert!(e.size > 0 && e.stored_size > 0);
    }
    let k = img.kernel("calculate_motion_score_kernel_8bpc").unwrap();
    assert_eq!(k.params, params(&[(0, 8), (8, 8), (16, 4), (24, 8)]));
    let a = k.attrs.unwrap();
    assert_eq!(a.binary_version, 90);
    assert!(a.num_regs > 0 && a.num_regs <= 255);
    assert_eq!(a.const_size_bytes, 10);
    assert_eq!(img.globals, vec![GlobalInfo { name: "c_gauss".into(), size: Some(10), constant: true }]);
}

#[test]
fn names_and_params_agree_whichever_entry_is_chosen() {
    let base = parse("vmaf9.fatbin", H200).unwrap();
    let cases = [
        (75, "sm_75 cubin"),
        (80, "sm_80 cubin"),
        (86, "sm_86 cubin"),
        (87, "sm_86 cubin"),
        (89, "sm_89 cubin"),
        (100, "sm_100 cubin"),
        (103, "sm_100 cubin"),
        (120, "sm_120 cubin"),
        (110, "compute_80 ptx (zstd)"),
        (130, "compute_120 ptx (zstd)"),
    ];
    for (sm, chosen) in cases {
        let img = parse("vmaf9.fatbin", Target { sm }).unwrap();
        assert_eq!(img.chosen, chosen, "sm_{sm}");
        assert_eq!(names(&img), names(&base), "sm_{sm}");
        for k in &base.kernels {
            assert_eq!(img.kernel(&k.name).unwrap().params, k.params, "sm_{sm} {}", k.name);
        }
        assert_eq!(img.globals, base.globals, "sm_{sm}");
        let from_cubin = chosen.contains("cubin");
        assert!(img.kernels.iter().all(|k| k.attrs.is_some() == from_cubin));
    }
    let e = parse("vmaf9.fatbin", Target { sm: 70 }).unwrap_err();
    assert!(matches!(e, ImageError::NoBinaryForGpu(_)), "{e}");
}

#[test]
fn selection_rule_no_binary_and_ptx_only() {
    let e = parse("no_sm90.fatbin", H200).unwrap_err();
    assert!(matches!(e, ImageError::NoBinaryForGpu(_)), "{e}");
    assert_eq!(e.cu_result(), 209);
    assert!(e.message().contains("sm_80 cubin") && e.message().contains("compute_120 ptx"), "{e}");
    assert_eq!(parse("no_sm90.fatbin", Target { sm: 86 }).unwrap().chosen, "sm_80 cubin");
    assert_eq!(parse("no_sm90.fatbin", Target { sm: 120 }).unwrap().chosen, "sm_120 cubin");

    let img = parse("ptx80_only.fatbin", H200).unwrap();
    assert_eq!(img.chosen, "compute_80 ptx (zstd)");
    assert_eq!(names(&img), ["calculate_motion_score_kernel_16bpc", "calculate_motion_score_kernel_8bpc"]);
    assert!(matches!(parse("ptx80_only.fatbin", Target { sm: 75 }), Err(ImageError::NoBinaryForGpu(_))));

    let a = parse("vmaf_sm90a.fatbin", H200).unwrap();
    assert_eq!(a.chosen, "sm_90a cubin");
    assert_eq!(a.entries[0].variant, Some('a'));
}

#[test]
fn compressed_cubins_zstd_and_lz4() {
    let bare = parse("features_sm90.cubin", H200).unwrap();
    for (file, chosen, scheme) in
        [("features_zstd.fatbin", "sm_90 cubin (zstd)", Compression::Zstd), ("features_lz4.fatbin", "sm_90 cubin (lz4)", Compression::Lz4)]
    {
        let img = parse(file, H200).unwrap();
        assert_eq!(img.chosen, chosen);
        assert!(img.entries.iter().all(|e| e.compression == scheme), "{file}");
        assert_eq!(img.entries.len(), 2);
        assert_eq!(img.entries[0].size, corpus("features_sm90.cubin").len() as u64);
        assert_eq!(img.kernels, bare.kernels, "{file}: same cubin inside");
        assert_eq!(img.globals, bare.globals);
        check_feature_attrs(&img);
        // Its PTX entry, chosen for a device with no sm_9x cubin (a hypothetical sm_95
        // still takes the cubin; force PTX by asking for a major without one).
        let ptx = parse(file, Target { sm: 100 }).unwrap();
        assert!(ptx.chosen.starts_with("compute_90 ptx"), "{}", ptx.chosen);
        assert_eq!(names(&ptx), FEATURE_KERNELS);
    }
    let img = parse("features_ptx_lz4.fatbin", H200).unwrap();
    assert_eq!(img.chosen, "compute_90 ptx (lz4)");
    assert_eq!(names(&img), FEATURE_KERNELS);
    check_feature_params(&img);
}

#[test]
fn bin2c_nul_padding_is_ignored() {
    for f in ["vmaf9.fatbin", "features_sm90.cubin", "features_compute80.ptx"] {
        let mut b = corpus(f);
        let plain = parse_bytes(&b, H200).unwrap();
        b.extend_from_slice(&[0u8; 13]);
        assert_eq!(parse_bytes(&b, H200).unwrap(), plain, "{f}");
    }
}

/// A fatbin assembled here from the documented layout (container header, 64-byte entry
/// headers, payloads padded to 8): uncompressed PTX, an LZ4 block and a zstd frame.
fn fatbin_of(entries: &[(u16, u32, u64, Vec<u8>, u64)]) -> Vec<u8> {
    let mut body = Vec::new();
    for (kind, arch, flags, data, size) in entries {
        let padded = data.len().div_ceil(8) * 8;
        let mut h = vec![0u8; 64];
        h[0..2].copy_from_slice(&kind.to_le_bytes());
        h[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
        h[4..8].copy_from_slice(&64u32.to_le_bytes());
        h[8..16].copy_from_slice(&(padded as u64).to_le_bytes());
        if flags & 0xA000 != 0 {
            h[16..20].copy_from_slice(&(data.len() as u32).to_le_bytes());
            h[56..64].copy_from_slice(&size.to_le_bytes());
        }
        h[28..32].copy_from_slice(&arch.to_le_bytes());
        h[40..48].copy_from_slice(&(flags | 0x11).to_le_bytes());
        body.extend_from_slice(&h);
        body.extend_from_slice(data);
        body.resize(body.len() + padded - data.len(), 0);
    }
    let mut out = Vec::new();
    out.extend_from_slice(&0xBA55ED50u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

#[test]
fn hand_built_fatbin_plain_lz4_and_zstd_entries() {
    let ptx = corpus("features_compute80.ptx");
    let cubin = corpus("features_sm90.cubin");
    let n = cubin.len() as u64;
    let lz4 = lz4_flex::block::compress(&cubin);
    let zst = zstd::bulk::compress(&cubin, 3).unwrap();
    let bare = parse("features_sm90.cubin", H200).unwrap();
    for (flag, data, desc) in [(0x2000u64, lz4, "sm_90 cubin (lz4)"), (0x8000, zst, "sm_90 cubin (zstd)")] {
        let f = fatbin_of(&[(1, 80, 0, ptx.clone(), 0), (2, 90, flag, data, n)]);
        let img = parse_bytes(&f, H200).unwrap();
        assert_eq!(img.chosen, desc);
        assert_eq!(img.kernels, bare.kernels);
        // Uncompressed PTX entry (NUL-padded to 8) for a device without an sm_9x cubin.
        let p = parse_bytes(&f, Target { sm: 100 }).unwrap();
        assert_eq!(p.chosen, "compute_80 ptx");
        assert_eq!(names(&p), FEATURE_KERNELS);
        check_feature_params(&p);
    }
}

#[test]
fn ptx_mode_takes_a_newer_ptx_when_the_image_has_no_other() {
    // Upstream VMAF built by nvcc 13 embeds sm_75..sm_120 cubins and compute_120 PTX only:
    // PTX mode runs that PTX (the H200 itself runs the sm_90 cubin); PTX the device
    // accepts is preferred when there is some.
    let text = corpus("features_compute80.ptx");
    let plain = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
    let cubin = corpus("features_sm90.cubin");
    let only_newer = fatbin_of(&[(2, 90, 0, cubin.clone(), 0), (1, 120, 0, text.clone(), 0)]);
    let img = parse_bytes(&only_newer, H200).unwrap();
    assert_eq!(img.chosen, "sm_90 cubin");
    assert_eq!(img.ptx, vec![plain(&text)]);
    let mut older = text.clone();
    older.extend_from_slice(b"\n// the compute_80 one\n");
    let both = fatbin_of(&[(1, 120, 0, text.clone(), 0), (2, 90, 0, cubin, 0), (1, 80, 0, older.clone(), 0)]);
    assert_eq!(parse_bytes(&both, H200).unwrap().ptx, vec![plain(&older)]);
}
