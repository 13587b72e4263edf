//! The documentation stays true to the tree: every relative link and every repository path
//! the README, docs/ and the crates' READMEs name exists, the README stays a front page (at
//! most 10 KiB), and every `EMU_CUDA_*` variable the driver reads is documented in
//! docs/driver.md.

use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("emu-driver has a parent").to_path_buf()
}

/// README.md, every docs/*.md and the crates' READMEs, with their text.
fn pages() -> Vec<(PathBuf, String)> {
    let root = repo_root();
    let mut files = vec![root.join("README.md")];
    for c in ["emu-driver", "abi", "kernels-host", "kernels-host/ptx", "parity", "fixtures", "crlibm-preload", "nvjitlink", "cudart"] {
        files.push(root.join(c).join("README.md"));
    }
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, text)
        })
        .collect()
}

/// Top-level folders whose paths, written in backticks, must exist in the repository.
const TRACKED_ROOTS: &[&str] = &[
    "emu-driver/",
    "kernels-host/",
    "parity/",
    "fixtures/",
    "fuzz/",
    "scripts/",
    "docs/",
    "examples/",
    "abi/",
    "crlibm-preload/",
    "nvjitlink/",
    "cudart/",
    "reports/reference/",
    "reports/device-math/",
    "reports/ptxas-contraction/",
];

/// Paths the docs name that exist only after a run (generated, git-ignored).
const GENERATED: &[&str] = &[];

/// Markdown link targets `](target)`, without anchors; external links skipped.
fn link_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split('#').next().unwrap_or("");
        if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
            out.push(target.to_string());
        }
    }
    out
}

/// Code spans that name a path in one of the tracked top-level folders.
fn code_paths(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(|span| span.trim_end_matches(['.', ',', ';', ':']))
        .filter(|span| !span.contains(char::is_whitespace))
        .filter(|span| TRACKED_ROOTS.iter().any(|r| span.starts_with(r)))
        .filter(|span| !span.contains(['<', '>', '*', '{', '}', '$', '|']))
        .map(|span| span.split(':').next().unwrap_or(span).to_string())
        .filter(|p| !GENERATED.contains(&p.as_str()))
        .collect()
}

#[test]
fn every_link_and_path_in_the_docs_exists() {
    let root = repo_root();
    let mut missing = Vec::new();
    for (page, text) in pages() {
        let dir = page.parent().expect("page has a folder");
        for target in link_targets(&text) {
            if !dir.join(&target).exists() {
                missing.push(format!("{}: link {target}", page.display()));
            }
        }
        for path in code_paths(&text) {
            if !root.join(&path).exists() {
                missing.push(format!("{}: path `{path}`", page.display()));
            }
        }
    }
    assert!(missing.is_empty(), "the docs name what does not exist:\n{}", missing.join("\n"));
}

#[test]
fn the_readme_is_a_front_page() {
    let size = std::fs::metadata(repo_root().join("README.md")).expect("README.md").len();
    assert!(size <= 10 * 1024, "README.md is {size} bytes; the manual belongs in docs/");
}

#[test]
fn every_environment_variable_the_driver_reads_is_documented() {
    let root = repo_root();
    let driver_doc = std::fs::read_to_string(root.join("docs/driver.md")).expect("docs/driver.md");
    let mut undocumented = Vec::new();
    let mut stack = vec![root.join("emu-driver/src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("source folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("source file");
            for piece in text.split("\"EMU_CUDA_").skip(1) {
                let name: String = piece.chars().take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_').collect();
                if !piece[name.len()..].starts_with('"') || name.is_empty() {
                    continue;
                }
                let var = format!("EMU_CUDA_{name}");
                if !driver_doc.contains(&var) && !undocumented.contains(&var) {
                    undocumented.push(var);
                }
            }
        }
    }
    assert!(undocumented.is_empty(), "not in docs/driver.md: {undocumented:?}");
}
