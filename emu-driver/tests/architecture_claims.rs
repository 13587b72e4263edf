//! The architecture claims of README.md and docs/architecture.md that are about where code
//! lives, checked on the source text (docs/architecture-claims.md lists every claim and
//! the test that keeps it). The layering claims are tests/module_graph.rs's.

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Every `.rs` file under `dir` (relative to the workspace), recursively, sorted.
fn rust_files(dir: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![workspace().join(dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A file's text without `//` comments (doc comments included), and without its
/// `#[cfg(test)]` module when `skip_tests` (the tail of the file from the first
/// `#[cfg(test)]` on: the unit tests sit at the end of every file).
fn code(p: &Path, skip_tests: bool) -> String {
    let text = std::fs::read_to_string(p).unwrap();
    let text = if skip_tests { text.split("#[cfg(test)]").next().unwrap().to_string() } else { text };
    text.lines().map(|l| l.split("//").next().unwrap()).collect::<Vec<_>>().join("\n")
}

/// Files under `dirs` whose code (tests left out) contains any of `needles`, relative to
/// the workspace.
fn files_containing(dirs: &[&str], needles: &[&str]) -> Vec<String> {
    let ws = workspace();
    dirs.iter()
        .flat_map(|d| rust_files(d))
        .filter(|p| {
            let c = code(p, true);
            needles.iter().any(|n| c.contains(n))
        })
        .map(|p| p.strip_prefix(&ws).unwrap().display().to_string())
        .collect()
}

const RUST_SOURCES: &[&str] = &[
    "emu-driver/src",
    "emu-driver/conformance/src",
    "abi/src",
    "kernels-host/src",
    "kernels-host/ptx/src",
    "parity/src",
    "fixtures/src",
    "fuzz/src",
    "crlibm-preload/src",
];

/// README and docs/architecture.md: the fibers' stack switch is the only code that moves
/// the stack pointer to another stack.
#[test]
fn only_the_fiber_switch_moves_to_another_stack() {
    let got = files_containing(RUST_SOURCES, &["mov rsp,", "xchg rsp", "lea rsp,"]);
    assert_eq!(got, ["emu-driver/src/exec/fibers.rs"], "code that loads rsp from elsewhere");
}

/// README and docs/architecture.md: `api/` is safe Rust; raw C arguments become typed views
/// before it (boundary.rs, exports.rs).
#[test]
fn the_api_modules_are_safe_rust() {
    let got = files_containing(&["emu-driver/src/api"], &["unsafe"]);
    assert!(got.is_empty(), "unsafe code in api/: {got:?}");
}

/// docs/architecture.md: config.rs reads the driver's environment; the two other readers
/// are named there (fork.rs: a forked child's counters file, with libc's lock-free getenv;
/// trace/: four settings recorded verbatim in the trace header).
#[test]
fn the_driver_reads_its_environment_in_config_rs() {
    let got = files_containing(&["emu-driver/src"], &["env::var", "getenv", "var_os(", "env::vars"]);
    assert_eq!(got, ["emu-driver/src/config.rs", "emu-driver/src/fork.rs", "emu-driver/src/trace/mod.rs"], "readers of the environment");
}

/// docs/architecture.md: parity reads files through input.rs (its limits), except the
/// /proc files of the processes it runs (run.rs) and the repository's device-math records
/// (replay/devmath.rs).
#[test]
fn parity_reads_files_through_input_rs() {
    let got = files_containing(&["parity/src"], &["fs::read(", "fs::read_to_string(", "File::open(", ".read(true)"]);
    assert_eq!(got, ["parity/src/input.rs", "parity/src/replay/devmath.rs", "parity/src/run.rs"], "readers of files");
}

/// docs/architecture.md: the contracts between processes are defined once, in abi/: no
/// other crate defines their types or their schemas (emu-driver's `counters::Counters` is
/// the driver's live tally, which it writes as abi's counters file).
#[test]
fn the_contracts_are_defined_only_in_abi() {
    let needles = [
        "struct Manifest ",
        "struct ThreadCtx ",
        "struct Runtime ",
        "SCHEMA: &str = \"simtwin-counts/",
        "SCHEMA: &str = \"simtwin-kernels/",
        "SCHEMA: &str = \"simtwin-trace/",
    ];
    let outside: Vec<&str> = RUST_SOURCES.iter().copied().filter(|d| *d != "abi/src").collect();
    let got = files_containing(&outside, &needles);
    assert!(got.is_empty(), "a contract defined outside abi/: {got:?}");
    assert_eq!(files_containing(&["abi/src"], &needles).len(), 4, "abi/src defines the four contracts (kernel, manifest, counters, trace)");
}

/// The README's layout section (its ```text block).
fn readme_layout() -> String {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let from = readme.find("## Layout").expect("README has a Layout section");
    let block = &readme[from..];
    let open = block.find("```text").expect("the layout is a ```text block") + 7;
    let close = open + block[open..].find("```").unwrap();
    block[open..close].to_string()
}

/// The README's layout reaches every entry point's implementation and every stage of the
/// PTX translator in one hop: it names each module of emu-driver's api/ (one per API
/// family; exports.rs maps each entry point to its function there) and each pass of
/// kernels-host/ptx/src.
#[test]
fn the_readme_layout_names_every_api_module_and_ptx_stage() {
    let layout = readme_layout();
    let words: Vec<&str> = layout.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '/')).collect();
    let mut missing = Vec::new();
    for e in std::fs::read_dir(workspace().join("emu-driver/src/api")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name != "mod.rs" && !words.contains(&name.as_str()) {
            missing.push(format!("emu-driver/src/api/{name}"));
        }
    }
    for e in std::fs::read_dir(workspace().join("kernels-host/ptx/src")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        let stem = name.trim_end_matches(".rs");
        // lib.rs is the crate root, bin/ its command-line tool, ast and sfu the leaves every
        // pass uses (the syntax tree, the special functions' exact forms).
        if ["lib", "bin", "ast", "sfu"].contains(&stem) {
            continue;
        }
        let dir = format!("{stem}/");
        if ![stem, name.as_str(), dir.as_str()].iter().any(|w| words.contains(w)) {
            missing.push(format!("kernels-host/ptx/src/{name}"));
        }
    }
    assert!(missing.is_empty(), "the README's layout does not name {missing:?}");
}

/// emu-driver/README.md's table of API families names every module of api/.
#[test]
fn the_driver_readme_maps_every_api_module() {
    let readme = std::fs::read_to_string(workspace().join("emu-driver/README.md")).unwrap();
    for e in std::fs::read_dir(workspace().join("emu-driver/src/api")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        let path = format!("`emu-driver/src/api/{name}`");
        assert!(name == "mod.rs" || readme.contains(&path), "emu-driver/README.md's API families leave out {path}");
    }
}

/// scripts/lib/gpu.sh: the scripts that share it (the GPU-machine scripts) keep their
/// Python in scripts/lib/*.py, not in `python3 -c` strings or heredocs; so does every
/// other script, except scripts/nvcc-path, which kernels-host compiles in and runs alone
/// (it asks python3 where the nvidia-cuda-nvcc package is).
#[test]
fn the_scripts_have_no_inline_python() {
    let ws = workspace();
    let mut stack = vec![ws.join("scripts"), ws.join("emu-driver/conformance"), ws.join("fixtures"), ws.join("examples")];
    let (mut gpu_users, mut inline) = (0, Vec::new());
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&p) else { continue };
            let rel = p.strip_prefix(&ws).unwrap().display().to_string();
            if rel == "scripts/nvcc-path" || p.extension().is_some_and(|x| x == "py" || x == "rs") {
                continue;
            }
            gpu_users += usize::from(text.contains("scripts/lib/gpu.sh") && !rel.ends_with("gpu.sh"));
            for (n, l) in text.lines().enumerate() {
                let code = l.split(" #").next().unwrap();
                if !code.trim_start().starts_with('#')
                    && (code.contains("python3 -c") || code.contains("python3 - ") || code.contains("python3 <<"))
                {
                    inline.push(format!("{rel}:{}", n + 1));
                }
            }
        }
    }
    assert!(gpu_users >= 10, "only {gpu_users} scripts source scripts/lib/gpu.sh");
    assert!(inline.is_empty(), "inline Python (put it in scripts/lib/*.py): {inline:?}");
}
