//! Corrupt, truncated and hostile images: every header field of the fatbin container, its
//! entries and the cubin ELF is damaged in turn. Each case must give an error (with the
//! documented CUresult), never a panic, a hang or an out-of-bounds read.

use std::path::PathBuf;

use cuda::image::{parse_bytes, Image, ImageError, Target};

const H200: Target = Target { sm: 90 };

fn corpus(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/image").join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn parse(b: &[u8]) -> Result<Image, ImageError> {
    parse_bytes(b, H200)
}

fn put_u16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_le_bytes());
}
fn put_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}
fn put_u64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_le_bytes());
}
fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().unwrap())
}

/// Offsets of each entry header of a (well-formed) fatbin.
fn entry_offsets(b: &[u8]) -> Vec<usize> {
    let end = 16 + u64_at(b, 8) as usize;
    let mut p = 16;
    let mut v = Vec::new();
    while p < end {
        v.push(p);
        p += u32_at(b, p + 4) as usize + u64_at(b, p + 8) as usize;
    }
    v
}

/// The entry of `b` that sm_90 picks (an image's entries, by offset).
fn chosen_offset(b: &[u8]) -> usize {
    let img = parse(b).unwrap();
    let d = img.chosen.clone();
    img.entries.iter().find(|e| e.describe() == d).unwrap().offset as usize
}

fn assert_invalid(r: Result<Image, ImageError>, what: &str) {
    match r {
        Err(e) => assert_eq!(e.cu_result(), 200, "{what}: {e}"),
        Ok(i) => panic!("{what}: parsed as {}", i.chosen),
    }
}

const BINARIES: [&str; 6] =
    ["vmaf9.fatbin", "features_zstd.fatbin", "features_lz4.fatbin", "features_ptx_lz4.fatbin", "features_sm90.cubin", "reqntid_sm90.cubin"];

#[test]
fn every_truncation_is_an_error() {
    for f in BINARIES {
        let b = corpus(f);
        assert!(parse(&b).is_ok(), "{f} itself parses");
        // Every length within the first 4 KiB and around every entry header, a stride
        // elsewhere: all must be refused (the container or ELF says it is longer).
        let mut lens: Vec<usize> = (0..b.len().min(4096)).collect();
        if b.starts_with(&0xBA55ED50u32.to_le_bytes()) {
            for e in entry_offsets(&b) {
                lens.extend(e.saturating_sub(8)..(e + 200).min(b.len()));
            }
        }
        lens.extend((0..b.len()).step_by(61));
        lens.push(b.len() - 1);
        for l in lens {
            let r = parse(&b[..l]);
            assert!(r.is_err(), "{f} truncated to {l} bytes parsed");
        }
    }
}

#[test]
fn flipped_header_bytes_never_panic() {
    for f in BINARIES {
        let b = corpus(f);
        let mut offsets: Vec<usize> = (0..b.len().min(512)).collect();
        if b.starts_with(b"\x7fELF") {
            let shoff = u64_at(&b, 0x28) as usize;
            offsets.extend(shoff..b.len().min(shoff + 64 * 40));
        } else {
            for e in entry_offsets(&b) {
                offsets.extend(e..e + 128);
            }
        }
        for off in offsets {
            for x in [0xff, 0x01, 0x80, 0x10] {
                let mut m = b.clone();
                m[off] ^= x;
                let _ = parse(&m);
            }
        }
    }
}

#[test]
fn fatbin_container_fields() {
    let b = corpus("vmaf9.fatbin");
    let mut m = b.clone();
    m[0] ^= 1;
    assert_invalid(parse(&m), "magic");
    for v in [0u16, 2, 0xffff] {
        let mut m = b.clone();
        put_u16(&mut m, 4, v);
        assert_invalid(parse(&m), "version");
    }
    for hs in [0u16, 8, 15, 5000, 0xffff] {
        let mut m = b.clone();
        put_u16(&mut m, 6, hs);
        assert_invalid(parse(&m), "container header size");
    }
    for fat in [u64_at(&b, 8) + 1, u64::MAX, u64::MAX - 15, 1 << 40] {
        let mut m = b.clone();
        put_u64(&mut m, 8, fat);
        assert_invalid(parse(&m), "container size");
    }
    // An empty container: valid, but nothing runs.
    let mut m = b[..16].to_vec();
    put_u64(&mut m, 8, 0);
    assert!(matches!(parse(&m), Err(ImageError::NoBinaryForGpu(_))));
    // A fatbin wrapper holds a pointer: not loadable from bytes.
    let mut w = vec![0u8; 24];
    put_u32(&mut w, 0, 0x466243B1);
    put_u32(&mut w, 4, 1);
    assert_invalid(parse(&w), "wrapper from bytes");
}

#[test]
fn fatbin_entry_fields() {
    let b = corpus("vmaf9.fatbin");
    let e = chosen_offset(&b);
    let ehs = u32_at(&b, e + 4);
    for v in [0u32, 16, 63, 4097, u32::MAX, (b.len() - e) as u32] {
        let mut m = b.clone();
        put_u32(&mut m, e + 4, v);
        assert!(parse(&m).is_err(), "entry header size {v}");
    }
    for v in [u64::MAX, (b.len() - e) as u64, u64_at(&b, e + 8) + 8] {
        let mut m = b.clone();
        put_u64(&mut m, e + 8, v);
        assert!(parse(&m).is_err(), "entry payload size {v}");
    }
    // Payload shorter than the ELF inside it: the cubin is truncated.
    let mut m = b.clone();
    put_u64(&mut m, e + 8, u64_at(&b, e + 8) / 2);
    assert!(parse(&m).is_err());
    // The architecture decides the choice: another major is skipped.
    let mut m = b.clone();
    put_u32(&mut m, e + 28, 91);
    assert_eq!(parse(&m).unwrap().chosen, "compute_80 ptx (zstd)", "sm_89 is another major");
    // Unknown kind: listed and skipped.
    let mut m = b.clone();
    put_u16(&mut m, e, 0x40);
    let img = parse(&m).unwrap();
    assert_eq!(img.chosen, "compute_80 ptx (zstd)");
    assert!(img.entries.iter().any(|x| x.describe().contains("unknown kind 0x40")));
    // Both compression flags.
    let mut m = b.clone();
    put_u64(&mut m, e + 40, u64_at(&b, e + 40) | 0xA000);
    assert!(matches!(parse(&m), Err(ImageError::UnsupportedCompression(_))));
    // Claims compression over plain ELF bytes.
    for flag in [0x8000u64, 0x2000] {
        let mut m = b.clone();
        put_u64(&mut m, e + 40, u64_at(&b, e + 40) | flag);
        put_u32(&mut m, e + 16, 100);
        put_u64(&mut m, e + 56, 15000);
        assert_invalid(parse(&m), "plain bytes flagged compressed");
    }
    assert_eq!(ehs, 64);
}

#[test]
fn compressed_entry_sizes() {
    for f in ["features_zstd.fatbin", "features_lz4.fatbin"] {
        let b = corpus(f);
        let e = chosen_offset(&b);
        let csize = u32_at(&b, e + 16);
        let usize_ = u64_at(&b, e + 56);
        let cases: [(u32, u64, &str); 7] = [
            (0, usize_, "no compressed bytes"),
            (u32::MAX, usize_, "compressed size past the payload"),
            (csize / 2, usize_, "compressed data cut"),
            (csize, 0, "decompressed size 0"),
            (csize, usize_ - 1, "decompressed size one short"),
            (csize, usize_ + 1, "decompressed size one long"),
            (csize, u64::MAX, "decompressed size huge"),
        ];
        for (c, u, what) in cases {
            let mut m = b.clone();
            put_u32(&mut m, e + 16, c);
            put_u64(&mut m, e + 56, u);
            assert_invalid(parse(&m), &format!("{f}: {what}"));
        }
        // A decompression bomb claim stays bounded and fails fast.
        let mut m = b.clone();
        put_u64(&mut m, e + 56, 1 << 30);
        assert_invalid(parse(&m), &format!("{f}: 1 GiB claim"));
        // Corrupt compressed bytes.
        let data = e + u32_at(&b, e + 4) as usize;
        for k in [0usize, 5, 40, csize as usize / 2] {
            let mut m = b.clone();
            for x in &mut m[data + k..data + k + 8] {
                *x ^= 0x5a;
            }
            if let Ok(img) = parse(&m) {
                // Damage inside LZ4 literals can still decode; the result is then still a
                // cubin with the same entry list.
                assert!(!img.kernels.is_empty(), "{f}: corrupted at {k}");
            }
        }
    }
}

fn cubin_section_headers(b: &[u8]) -> (usize, usize) {
    (u64_at(b, 0x28) as usize, u16::from_le_bytes([b[0x3c], b[0x3d]]) as usize)
}

#[test]
fn cubin_header_fields() {
    let b = corpus("features_sm90.cubin");
    let mut m = b.clone();
    m[4] = 1;
    assert_invalid(parse(&m), "32-bit ELF");
    let mut m = b.clone();
    m[5] = 2;
    assert_invalid(parse(&m), "big-endian ELF");
    let mut m = b.clone();
    put_u16(&mut m, 0x12, 62);
    assert_invalid(parse(&m), "x86-64 ELF");
    let mut m = b.clone();
    put_u32(&mut m, 0x30, 0);
    assert_invalid(parse(&m), "no architecture");
    for shoff in [u64::MAX, b.len() as u64, b.len() as u64 - 10, 1 << 40] {
        let mut m = b.clone();
        put_u64(&mut m, 0x28, shoff);
        assert_invalid(parse(&m), "section header offset");
    }
    for shnum in [0xffffu16, 1000] {
        let mut m = b.clone();
        put_u16(&mut m, 0x3c, shnum);
        assert_invalid(parse(&m), "section count");
    }
    for ent in [0u16, 40, 0xffff] {
        let mut m = b.clone();
        put_u16(&mut m, 0x3a, ent);
        assert_invalid(parse(&m), "section header entry size");
    }
    let mut m = b.clone();
    put_u16(&mut m, 0x3e, 0x7fff);
    let _ = parse(&m); // No string table: names are empty, must not panic.
    for phnum in [0xffffu16, 100] {
        let mut m = b.clone();
        put_u16(&mut m, 0x38, phnum);
        assert_invalid(parse(&m), "program header count");
    }
    // Extended section numbering with a huge count in section 0.
    let (shoff, _) = cubin_section_headers(&b);
    let mut m = b.clone();
    put_u16(&mut m, 0x3c, 0);
    put_u64(&mut m, shoff + 32, u64::MAX);
    assert_invalid(parse(&m), "extended section count");
}

#[test]
fn cubin_section_fields() {
    let b = corpus("features_sm90.cubin");
    let (shoff, shnum) = cubin_section_headers(&b);
    for i in 1..shnum {
        let h = shoff + 64 * i;
        for (field, vals) in [(24usize, vec![u64::MAX, b.len() as u64, 1 << 33]), (32usize, vec![u64::MAX, b.len() as u64 + 1, 1 << 33])] {
            for v in vals {
                let mut m = b.clone();
                put_u64(&mut m, h + field, v);
                // Sections 1-3 (.shstrtab, .strtab, .symtab) are always read: a bad
                // extent must fail. Others must at least not panic.
                let r = parse(&m);
                if i <= 3 {
                    assert_invalid(r, &format!("section {i} field {field} = {v:#x}"));
                }
            }
        }
        // Name offsets past the string table.
        let mut m = b.clone();
        put_u32(&mut m, h, u32::MAX);
        assert_invalid(parse(&m), &format!("section {i} name offset"));
    }
}

#[test]
fn nv_info_records() {
    let b = corpus("features_sm90.cubin");
    // Find the .nv.info.feature_sum section via the section headers.
    let (shoff, shnum) = cubin_section_headers(&b);
    let strndx = u16::from_le_bytes([b[0x3e], b[0x3f]]) as usize;
    let stroff = u64_at(&b, shoff + 64 * strndx + 24) as usize;
    let name = |i: usize| {
        let o = stroff + u32_at(&b, shoff + 64 * i) as usize;
        let e = b[o..].iter().position(|&c| c == 0).unwrap();
        String::from_utf8(b[o..o + e].to_vec()).unwrap()
    };
    let i = (0..shnum).find(|&i| name(i) == ".nv.info.feature_sum").unwrap();
    let off = u64_at(&b, shoff + 64 * i + 24) as usize;
    let size = u64_at(&b, shoff + 64 * i + 32) as usize;
    // A bad format byte, an SVAL longer than the section, a KPARAM_INFO cut short.
    let mut m = b.clone();
    m[off] = 9;
    assert_invalid(parse(&m), "EIATTR format");
    let mut m = b.clone();
    put_u16(&mut m, off + 2, 0xffff);
    assert_invalid(parse(&m), "EIATTR length");
    let mut m = b.clone();
    put_u64(&mut m, shoff + 64 * i + 32, size as u64 - 3);
    assert_invalid(parse(&m), "EIATTR record cut");
    // Every byte of the section flipped: errors or other values, never a panic.
    for k in off..off + size {
        let mut m = b.clone();
        m[k] ^= 0xff;
        let _ = parse(&m);
    }
}

#[test]
fn older_cubin_abi_keeps_the_arch_in_the_low_byte() {
    let mut b = corpus("features_sm90.cubin");
    b[8] = 7;
    put_u32(&mut b, 0x30, 0x0050_0550); // EF_CUDA_SM80 with PTX sm_80, ABI 7 layout
    let img = parse_bytes(&b, Target { sm: 86 }).unwrap();
    assert_eq!(img.chosen, "sm_80 cubin");
    assert!(matches!(parse(&b), Err(ImageError::NoBinaryForGpu(_))));
}

#[test]
fn ptx_errors() {
    let ok = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u32 a) { ret; }\n";
    assert!(parse(ok.as_bytes()).is_ok());
    let bad = [
        ".version 8.0\n.target sm_80\n.visible .entry k(.param .u32 a) { ret; \n",
        ".version 8.0\n.target sm_80\n.visible .entry k(.param .u32 a { ret; }\n",
        ".version 8.0\n.target sm_80\n.visible .entry k(.param .q32 a) { ret; }\n",
        ".version 8.0\n.target sm_80\n.visible .entry (.param .u32 a) { ret; }\n",
        ".version 8.0\n.target sm_80\n.entry k .maxntid 99999999999, 1 { ret; }\n",
        ".version 8.0\n.target sm_80\n.global .u32 x[4\n",
        ".version 8.0\n.target sm_80\n.global .u32 x = {1, 2\n",
        ".version 8.0\n.target sm_80\n.global .u32 x; /* open comment\n",
        ".version 8.0\n.target sm_80\nstray tokens here;\n",
        ".version 8.0\n.target sm_80\n.global .align 3 .u32 x;\n",
        ".version 8.0\n.target sm_80\n.file 1 \"unterminated\n",
        ".version x.y\n.target sm_80\n",
        ".version 8.0\n.target vulkan\n",
        ".target sm_80\n.address_size 64\n",
        ".version 8.0\n.address_size 64\n",
        ".version 8.0\n.target sm_80\n.global .u32 \u{e9};\n",
    ];
    for t in bad {
        let e = parse(t.as_bytes()).unwrap_err();
        assert_eq!(e.cu_result(), 218, "{t:?}: {e}");
    }
    // Not PTX at all: an invalid image, not invalid PTX.
    for t in [&b"hello world"[..], b"", b"\x01\x02\x03\x04", b"\x7fELX", b".version 8.0\0garbage"] {
        let e = parse(t).unwrap_err();
        assert_eq!(e.cu_result(), 200, "{t:?}: {e}");
    }
    // Deep nesting and long inputs stay linear.
    let mut deep = String::from(".version 8.0\n.target sm_80\n.entry k() ");
    deep.push_str(&"{".repeat(100_000));
    deep.push_str(&"}".repeat(100_000));
    assert!(parse(deep.as_bytes()).is_ok());
    let mut deep = String::from(".version 8.0\n.target sm_80\n.global .u32 x[] = ");
    deep.push_str(&"{".repeat(50_000));
    deep.push('1');
    deep.push_str(&"}".repeat(50_000));
    deep.push(';');
    let img = parse(deep.as_bytes()).unwrap();
    assert_eq!(img.globals[0].size, Some(4));
}
