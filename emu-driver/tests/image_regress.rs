//! Inputs kept from fuzzing the image parsers (emu-driver/fuzz): every crash found (now
//! fixed) and a spread of seeds. The file name says what must happen for an sm_90 device:
//! `ok-*` parses, `err<CODE>-*` fails with that CUresult. Each is also loaded by pointer
//! from a buffer that ends at an inaccessible page, and must give the same answer.

use std::path::PathBuf;

mod image_support;

use cuda::image::{checked_reads, parse_bytes, Target};
use image_support::Guarded;

/// Runs `parse_ptr` on `data` placed flush against a PROT_NONE page.
fn parse_guarded(data: &[u8]) -> Result<cuda::image::Image, cuda::image::ImageError> {
    Guarded::new(data).parse(Target { sm: 90 })
}

#[test]
fn regression_inputs() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/image/regress");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files.retain(|p| p.extension().and_then(|e| e.to_str()) == Some("bin"));
    assert!(files.len() >= 12, "only {} regression inputs in {}", files.len(), dir.display());
    for path in files {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let data = std::fs::read(&path).unwrap();
        let r = parse_bytes(&data, Target { sm: 90 });
        let (want, _) = name.split_once('-').expect("name is <expect>-<what>.bin");
        if want == "ok" {
            assert!(r.is_ok(), "{name}: {:?}", r.err());
        } else {
            let code: u32 = want.strip_prefix("err").and_then(|c| c.parse().ok()).expect(&name);
            assert_eq!(r.as_ref().err().map(|e| e.cu_result()), Some(code), "{name}: {r:?}");
        }
        for sm in [75, 80, 86, 100, 120] {
            let _ = parse_bytes(&data, Target { sm });
        }
        if checked_reads() {
            let p = parse_guarded(&data);
            // By pointer, text needs its NUL and a buffer-length claim can only be checked
            // against readable memory: the answer may differ only in those two ways.
            match (&r, &p) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{name}"),
                (Err(_), Err(_)) => {}
                (Ok(_), Err(e)) => {
                    assert!(!data.contains(&0) || matches!(e, cuda::image::ImageError::Unreadable(_)), "{name}: by pointer {e}")
                }
                (Err(_), Ok(_)) => {}
            }
        }
    }
}

/// Tooling, not a check: copies the inputs in $SIMTWIN_IMAGE_KEEP (e.g. a minimised fuzz
/// corpus) into regress/ named by their outcome. Run with `--ignored keep_inputs`.
#[test]
#[ignore]
fn keep_inputs() {
    let Some(src) = std::env::var_os("SIMTWIN_IMAGE_KEEP") else {
        eprintln!("set SIMTWIN_IMAGE_KEEP to a folder of inputs");
        return;
    };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/image/regress");
    for e in std::fs::read_dir(src).unwrap() {
        let path = e.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let tag = match parse_bytes(&data, Target { sm: 90 }) {
            Ok(_) => "ok".to_string(),
            Err(e) => format!("err{}", e.cu_result()),
        };
        let stem = path.file_name().unwrap().to_str().unwrap();
        let short: String = stem.chars().filter(|c| c.is_ascii_alphanumeric()).take(16).collect();
        std::fs::write(dir.join(format!("{tag}-{short}.bin")), &data).unwrap();
    }
}
