//! The targets: every parser of input simtwin does not make itself. A target runs each
//! input through all the parsers of its group (each rejects what is not its format early).
//!
//! | target | parsers |
//! |---|---|
//! | `image` | the module-image loader (fatbin, ELF cubin, PTX text, linked images) for sm_90, sm_80, sm_120; `cubin_globals` |
//! | `image_ptr` | the pointer-only loader (cuModuleLoadData without a size) on bytes that end at an inaccessible page |
//! | `ptx` | the PTX translator's whole pipeline (lex, parse, link, resolve, cfg, contract, layout, emit; several modules when the input holds NULs), the driver's PTX scanner |
//! | `abi` | counters files, kernel-library manifests, hex of traces |
//! | `parity` | extractor outputs (JSON, XML, CSV), tolerance tables, clip lists, shard records, counters files (parity's reader), replay tables, launch traces, types files and the symbol demangler, `--shard` |
//! | `planted` | not run by default: a crash behind an 8-byte magic compared byte by byte (`scripts/fuzz` checks that it is found) |

use simtwin_abi::counters::{Counters, Dir};
use simtwin_abi::manifest::{Entry, Global, Manifest};
use simtwin_fuzz::Target;

/// Every target, in the order `scripts/fuzz` runs them.
pub const TARGETS: &[Target] = &[
    Target {
        name: "image",
        about: "module images: fatbin, cubin, PTX, linked (cuModuleLoadData with a size, cuModuleLoad)",
        run: image,
        seed_paths: &["emu-driver/tests/corpus/image", "kernels-host/ptx-corpus/contraction/add_chain.ptx"],
        seeds: no_seeds,
        dict: IMAGE_DICT,
        hidden: false,
    },
    Target {
        name: "image_ptr",
        about: "module images through the pointer-only loader, ending at an inaccessible page",
        run: image_ptr,
        seed_paths: &["emu-driver/tests/corpus/image"],
        seeds: no_seeds,
        dict: IMAGE_DICT,
        hidden: false,
    },
    Target {
        name: "ptx",
        about: "PTX text through the translator's passes and the driver's PTX scanner",
        run: ptx,
        seed_paths: &[
            "kernels-host/ptx-corpus",
            "emu-driver/tests/ptx_mode",
            "emu-driver/tests/ptx_regress/regress.ptx",
            "emu-driver/tests/corpus/image/features_compute80.ptx",
            "emu-driver/tests/corpus/image/reqntid.ptx",
        ],
        seeds: no_seeds,
        dict: PTX_DICT,
        hidden: false,
    },
    Target {
        name: "abi",
        about: "the driver's counters files, kernel-library manifests, trace hex",
        run: abi,
        seed_paths: &[],
        seeds: abi_seeds,
        dict: JSON_DICT,
        hidden: false,
    },
    Target {
        name: "parity",
        about:
            "parity's inputs: extractor outputs, tolerance tables, clip lists, shard records, counters, replay tables, traces, types files",
        run: parity::untrusted::read_all,
        seed_paths: &["fuzz/seeds/parity"],
        seeds: parity_seeds,
        dict: PARITY_DICT,
        hidden: false,
    },
    Target {
        name: "planted",
        about: "a planted crash behind an 8-byte magic (the fuzzer's own check)",
        run: planted,
        seed_paths: &[],
        seeds: no_seeds,
        dict: &[],
        hidden: true,
    },
];

/// The target named `name`.
pub fn find(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

fn no_seeds() -> Vec<Vec<u8>> {
    Vec::new()
}

const IMAGE_DICT: &[&[u8]] = &[
    &[0x50, 0xed, 0x55, 0xba], // fatbin container magic 0xBA55ED50
    &[0xb1, 0x43, 0x62, 0x46], // fatbin wrapper magic 0x466243B1
    &[0x01, 0x00, 0x10, 0x00], // container version 1, header size 16
    &[0x01, 0x00],             // entry kind PTX
    &[0x02, 0x00],             // entry kind ELF
    &[0x01, 0x01],             // entry version
    &[0x00, 0x20, 0x00, 0x00], // flag LZ4
    &[0x00, 0x80, 0x00, 0x00], // flag zstd
    &[0x00, 0x00, 0x10, 0x00], // flag arch-specific
    &[0x5a, 0x00, 0x00, 0x00], // sm 90
    &[0x28, 0xb5, 0x2f, 0xfd], // zstd frame magic
    b"\x7fELF\x02\x01\x01",    // ELF64 little-endian
    &[0xbe, 0x00],             // EM_CUDA
    b"SLNK",                   // simtwin's linked image
    b".nv.info",
    b".nv.constant0",
    b".text.",
    b".version 8.0\n",
    b".target sm_90\n",
    b".address_size 64\n",
    b".visible .entry ",
    b".param .u64 ",
    b".global .align 4 .b8 ",
];

const PTX_DICT: &[&[u8]] = &[
    b".version 8.5\n",
    b".target sm_90a\n",
    b".address_size 64\n",
    b".visible .entry k(\n",
    b".func ",
    b".extern ",
    b".weak ",
    b".param .u64 p",
    b".param .align 8 .b8 s[16]",
    b".reg .pred %p<4>;",
    b".reg .b32 %r<9>;",
    b".reg .f32 %f<5>;",
    b".reg .b64 %rd<4>;",
    b".shared .align 16 .b8 sm[1024];",
    b".global .u32 g;",
    b".const .f32 c[4] = {1.0, 2.0, 3.0, 4.0};",
    b".local .b8 l[8];",
    b".maxntid 256, 1, 1",
    b".reqntid 32",
    b".minnctapersm 2",
    b"ld.param.u64 %rd1, [p];",
    b"cvta.to.global.u64 %rd2, %rd1;",
    b"ld.global.f32 %f1, [%rd2];",
    b"st.global.v4.f32 [%rd2+16], {%f1, %f2, %f3, %f4};",
    b"mad.lo.s32 %r1, %r2, %r3, %r4;",
    b"fma.rn.f32 %f1, %f2, %f3, %f4;",
    b"setp.lt.u32 %p1, %r1, %r2;",
    b"@%p1 bra $L__BB0_2;",
    b"$L__BB0_2:",
    b"bar.sync 0;",
    b"shfl.sync.bfly.b32 %r1, %r2, 16, 31, -1;",
    b"atom.global.add.u32 %r1, [%rd1], 1;",
    b"mov.u32 %r1, %tid.x;",
    b"ret;",
    b"call.uni (r), f, (a);",
    b"{\n",
    b"}\n",
    b"(\n",
    b")\n",
    b"0f3F800000",
    b"0d3FF0000000000000",
    b"// comment\n",
    b"/* block */",
    b".loc 1 10 2\n",
    b".file 1 \"k.cu\"\n",
    b"tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [t, {%f5, %f6}];",
    b"cp.async.ca.shared.global [%r1], [%rd1], 16;",
    b"wmma.",
    b"mma.sync.",
    b".pragma \"nounroll\";",
];

const JSON_DICT: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b":",
    b",",
    b"null",
    b"true",
    b"false",
    b"-0",
    b"1e308",
    b"18446744073709551615",
    b"-9223372036854775808",
    b"\"schema\":",
    b"\"simtwin-counts/2\"",
    b"\"simtwin-kernels/2\"",
    b"\"simtwin-trace/1\"",
    b"\\u0000",
    b"\\ud800",
];

const PARITY_DICT: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b":",
    b",",
    b"\n",
    b"null",
    b"NaN",
    b"inf",
    b"-inf",
    b"nan",
    b"1e308",
    b"-0",
    b"0x7fc00000",
    b"18446744073709551615",
    b"frame,",
    b"Frame,",
    b"<frame frameNum=\"0\" ",
    b"<VMAF ",
    b"</frames>",
    b"\"frames\": [",
    b"\"frameNum\": 0",
    b"\"metrics\": {",
    b"exact",
    b"abs=",
    b"rel=",
    b"ulp=",
    b"nan-any",
    b"*",
    b"#",
    b"name,reference,distorted,width,height,bitdepth,pixfmt,frames\n",
    b"420",
    b"444",
    b"10",
    b"\"schema\":",
    b"\"simtwin-shard/1\"",
    b"\"simtwin-counts/2\"",
    b"\"simtwin-trace/1\"",
    b"\"st64\"",
    b"\"t\":\"launch\"",
    b"\"t\":\"copy\"",
    b"\"t\":\"end\"",
    b"input,output\n",
    b"0x3f800000,",
    b"_Z6kernelPfPKfii",
    b"_ZN2ns1kILi3EEEvPT_",
    b"(const float *x, int n)",
    b"1/2",
    b"2/2",
];

/// Every loader path of a module image with a known size.
fn image(d: &[u8]) {
    use cuda::image::{cubin_globals, parse_bytes, Target};
    for sm in [90, 80, 120] {
        let _ = parse_bytes(d, Target { sm });
    }
    let _ = cubin_globals(d);
}

/// The pointer-only loader: the input is placed right before a page the process cannot
/// read, so that a read past what the headers allow faults (and is reported).
fn image_ptr(d: &[u8]) {
    const PAGE: usize = 4096;
    let pages = d.len().div_ceil(PAGE).max(1);
    let len = (pages + 1) * PAGE;
    // SAFETY: a fresh private mapping of `len` bytes; the last page is made inaccessible;
    // the input is copied to end right before it; unmapped after the parse.
    unsafe {
        let m = libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        assert_ne!(m, libc::MAP_FAILED, "mmap for the guard page");
        let base = m as *mut u8;
        libc::mprotect(base.add(pages * PAGE).cast(), PAGE, libc::PROT_NONE);
        let start = base.add(pages * PAGE - d.len());
        std::ptr::copy_nonoverlapping(d.as_ptr(), start, d.len());
        let _ = cuda::image::parse_ptr(start, cuda::image::Target { sm: 90 });
        libc::munmap(m, len);
    }
}

/// The translator (no host compiler run): NULs separate modules for the linker.
fn ptx(d: &[u8]) {
    let Ok(s) = std::str::from_utf8(d) else { return };
    let _ = cuda::image::ptx_globals(s);
    let modules: Vec<&str> = s.split('\0').filter(|m| !m.trim().is_empty()).collect();
    if modules.is_empty() {
        return;
    }
    // The loop path's warp vectors too (`simd::segment`; the rest translates as by default).
    let opts = simtwin_ptx::Options { units: 1, segment_vectors: simtwin_ptx::SegmentVectors::All, ..simtwin_ptx::Options::default() };
    let _ = simtwin_ptx::translate(&modules, &opts);
}

fn abi(d: &[u8]) {
    let Ok(s) = std::str::from_utf8(d) else { return };
    let _ = Counters::parse(s);
    let _ = Manifest::parse(s);
    for w in s.split(['"', ',', ' ', '\n']).take(256) {
        let _ = simtwin_abi::trace::from_hex(w);
    }
}

/// A counters file and a manifest as the driver and kernels-host write them.
fn abi_seeds() -> Vec<Vec<u8>> {
    let mut c = Counters::new("emulated");
    c.copies.dir_mut(Dir::HtoD).add(4096);
    c.copies.dir_mut(Dir::DtoH).add(1 << 20);
    c.calls.insert("cuMemcpyHtoD_v2".into(), 1);
    c.synchronizations = 3;
    let m = Manifest {
        schema: simtwin_abi::manifest::SCHEMA.into(),
        library: "libk.so".into(),
        source: "/src/k.cu".into(),
        source_hash: "00".repeat(32),
        build_id: "b1".into(),
        nvcc_flags: vec!["-O3".into()],
        fma_contraction_differs: false,
        entries: vec![Entry {
            name: "k".into(),
            symbol: "_Z1kPfi".into(),
            param_sizes: vec![8, 4],
            param_aligns: vec![8, 4],
            max_threads: 256,
            min_blocks: 0,
        }],
        globals: vec![Global { name: "g".into(), symbol: "g".into(), size: 16, constant: true }],
        warnings: vec![],
        checks_library: None,
        device_math: Some(simtwin_abi::manifest::DeviceMath {
            profile: "h200".into(),
            exact: true,
            library: "libdevice of nvcc 13.5 (ftz0-div1-sqrt1-fmad1)".into(),
            note: None,
        }),
    };
    vec![Counters::new("emulated").to_text().into_bytes(), c.to_text().into_bytes(), m.to_text().into_bytes()]
}

/// Counters files (parity reads them too) and shard records as parity writes them.
fn parity_seeds() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = abi_seeds().into_iter().take(2).collect();
    let plan = serde_json::json!({"clips": ["a", "b"], "frames": 3, "features": null});
    for k in ["1/2", "2/2"] {
        let sh = parity::shard::parse(k).expect("a valid shard");
        let r = parity::shard::Record::new("frames", plan.clone(), sh, 2, vec![format!("cell {k}")]);
        v.push(serde_json::to_vec_pretty(&r).expect("a record serializes"));
    }
    v
}

/// The planted crash: found only by a fuzzer that learns from coverage or comparisons
/// (eight nested byte tests: 2^-64 for a blind guess).
fn planted(d: &[u8]) {
    if d.len() >= 8
        && d[0] == b'S'
        && d[1] == b'I'
        && d[2] == b'M'
        && d[3] == b'T'
        && d[4] == b'W'
        && d[5] == b'I'
        && d[6] == b'N'
        && d[7] == b'!'
    {
        panic!("the planted crash: the input starts with SIMTWIN!");
    }
}
