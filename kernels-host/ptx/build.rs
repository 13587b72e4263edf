//! The translator's identity for the translation index (`jit.rs`): a hash of its own
//! sources, so that a warm cache never answers with what an older translator made of a
//! module.

use std::path::Path;

fn visit(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            visit(&p, files);
        } else {
            files.push(p);
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for d in ["src", "runtime"] {
        println!("cargo:rerun-if-changed={d}");
        visit(&root.join(d), &mut files);
    }
    files.sort();
    // FNV-1a, 64 bits, twice (two offsets): a change detector, not a defence.
    let (mut a, mut b) = (0xcbf2_9ce4_8422_2325u64, 0x6c62_272e_07bb_0142u64);
    for f in &files {
        let name = f.strip_prefix(root).unwrap_or(f).to_string_lossy().into_owned();
        let data = std::fs::read(f).unwrap_or_default();
        for &x in name.as_bytes().iter().chain([0u8].iter()).chain(data.iter()).chain([0u8].iter()) {
            a = (a ^ u64::from(x)).wrapping_mul(0x100_0000_01b3);
            b = (b ^ u64::from(x)).wrapping_mul(0x100_0000_01b3).rotate_left(7);
        }
    }
    println!("cargo:rustc-env=SIMTWIN_PTX_SOURCE_HASH={a:016x}{b:016x}");
}
