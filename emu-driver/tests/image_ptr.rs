//! `parse_ptr`: images given only by address (cuModuleLoadData). Each image is placed so
//! that it ends exactly at an inaccessible page: reading one byte more than the headers
//! allow would fault, so passing tests show the length really comes from the headers.

use std::path::PathBuf;

mod image_support;

use cuda::image::{checked_reads, parse_bytes, parse_ptr, ImageError, Target};
use image_support::Guarded;

const H200: Target = Target { sm: 90 };

fn corpus(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/image").join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn checked_reads_work_on_linux() {
    // The sandbox this project runs in allows process_vm_readv on oneself; if it stops
    // doing so the guard-page tests below lose their point, so say it loudly.
    assert!(checked_reads() || std::env::var_os("SIMTWIN_NO_VM_READV").is_some());
}

#[test]
fn every_corpus_image_by_pointer_matches_by_bytes() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/image");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !["fatbin", "cubin", "ptx"].contains(&ext) {
            continue;
        }
        let mut b = std::fs::read(&path).unwrap();
        if ext == "ptx" {
            b.push(0); // cuModuleLoadData needs the NUL
        }
        let by_bytes = parse_bytes(&b, H200);
        let by_ptr = Guarded::new(&b).parse(H200);
        assert_eq!(by_ptr, by_bytes, "{}", path.display());
        n += 1;
    }
    assert!(n >= 10, "only {n} images");
}

#[test]
fn ptx_without_nul_before_the_guard_is_an_error() {
    if !checked_reads() {
        eprintln!("SKIPPED: process_vm_readv is refused here, unreadable memory would fault");
        return;
    }
    let mut b = corpus("reqntid.ptx");
    let g = Guarded::new(&b);
    let e = g.parse(H200).unwrap_err();
    assert!(matches!(e, ImageError::Unreadable(_)), "{e}");
    b.push(0);
    assert!(Guarded::new(&b).parse(H200).is_ok());
}

#[test]
fn headers_claiming_more_than_is_there() {
    if !checked_reads() {
        eprintln!("SKIPPED: process_vm_readv is refused here, unreadable memory would fault");
        return;
    }
    // A fatbin whose size field is one byte more than the buffer.
    let mut b = corpus("vmaf9.fatbin");
    let fat = u64::from_le_bytes(b[8..16].try_into().unwrap());
    b[8..16].copy_from_slice(&(fat + 1).to_le_bytes());
    let e = Guarded::new(&b).parse(H200).unwrap_err();
    assert_eq!(e.cu_result(), 200, "{e}");
    // Over the limit: refused before any read.
    b[8..16].copy_from_slice(&(u64::MAX - 8).to_le_bytes());
    assert!(Guarded::new(&b).parse(H200).is_err());
    // A cubin whose section header table is said to lie past the end.
    let mut c = corpus("features_sm90.cubin");
    let shnum = u16::from_le_bytes([c[0x3c], c[0x3d]]);
    c[0x3c..0x3e].copy_from_slice(&(shnum + 10).to_le_bytes());
    assert!(Guarded::new(&c).parse(H200).is_err());
    // A section whose contents are said to run past the end.
    let mut c = corpus("features_sm90.cubin");
    let shoff = u64::from_le_bytes(c[0x28..0x30].try_into().unwrap()) as usize;
    let h = shoff + 64 * 4 + 32; // .debug_frame size
    c[h..h + 8].copy_from_slice(&(1u64 << 20).to_le_bytes());
    assert!(Guarded::new(&c).parse(H200).is_err());
}

#[test]
fn fatbin_wrapper_struct() {
    let fat = corpus("vmaf9.fatbin");
    let g = Guarded::new(&fat);
    let name = b"vmaf_like.cu\0";
    let mut w = Vec::new();
    w.extend_from_slice(&0x466243B1u32.to_le_bytes());
    w.extend_from_slice(&1u32.to_le_bytes());
    w.extend_from_slice(&(g.start as u64).to_le_bytes());
    w.extend_from_slice(&(name.as_ptr() as u64).to_le_bytes());
    let wg = Guarded::new(&w);
    let img = wg.parse(H200).unwrap();
    assert_eq!(img, parse_bytes(&fat, H200).unwrap());

    // Version 3, a null data pointer, data that is not a fatbin, a wrapper of a wrapper.
    let mut bad = w.clone();
    bad[4] = 3;
    assert_eq!(Guarded::new(&bad).parse(H200).unwrap_err().cu_result(), 200);
    let mut bad = w.clone();
    bad[8..16].copy_from_slice(&0u64.to_le_bytes());
    assert_eq!(Guarded::new(&bad).parse(H200).unwrap_err().cu_result(), 200);
    let ptx = Guarded::new(b".version 8.0\n.target sm_80\n\0");
    let mut bad = w.clone();
    bad[8..16].copy_from_slice(&(ptx.start as u64).to_le_bytes());
    assert_eq!(Guarded::new(&bad).parse(H200).unwrap_err().cu_result(), 200);
    let mut bad = w.clone();
    bad[8..16].copy_from_slice(&(wg.start as u64).to_le_bytes());
    assert_eq!(Guarded::new(&bad).parse(H200).unwrap_err().cu_result(), 200);
}

#[test]
fn wild_and_null_pointers() {
    if !checked_reads() {
        eprintln!("SKIPPED: process_vm_readv is refused here, unreadable memory would fault");
        return;
    }
    // SAFETY: parse_ptr must reject these without dereferencing them unchecked.
    unsafe {
        assert_eq!(parse_ptr(std::ptr::null(), H200), Err(ImageError::NullPointer));
        assert_eq!(parse_ptr(std::ptr::null(), H200).unwrap_err().cu_result(), 1);
    }
    // A pointer into the guard page itself, and a fatbin wrapper pointing at it.
    let g = Guarded::new(&[0u8; 16]);
    // SAFETY: the checked copy reports the unreadable page instead of faulting.
    let e = unsafe { parse_ptr(g.start.add(16), H200) }.unwrap_err();
    assert!(matches!(e, ImageError::Unreadable(_)), "{e}");
    let mut w = Vec::new();
    w.extend_from_slice(&0x466243B1u32.to_le_bytes());
    w.extend_from_slice(&2u32.to_le_bytes());
    w.extend_from_slice(&(g.start as u64 + 16).to_le_bytes());
    w.extend_from_slice(&0u64.to_le_bytes());
    assert!(Guarded::new(&w).parse(H200).is_err());
}
