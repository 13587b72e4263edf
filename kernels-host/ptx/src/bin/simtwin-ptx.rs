//! `simtwin-ptx`: translate PTX to C++ (to inspect what PTX mode runs) or build the kernel
//! library the driver would load.
//!
//! ```text
//! simtwin-ptx translate FILE.ptx... [-o OUT.cpp] [--no-contract] [--library] [--segment-vectors[=on|off|all]]
//! simtwin-ptx build FILE.ptx... [--no-contract] [--segment-vectors[=on|off|all]]     # prints the cached library's path
//! simtwin-ptx --fusions FILE.ptx... [-O N]           # ptxas's contraction as modelled
//! ```
//! `-O N` (0..=3, default 3) is the ptxas optimisation level assumed (`-O0` fuses nothing).
//! `--fusions` prints, per function, one `fused mul LINE add LINE` per fused pair (PTX
//! lines), `kept mul LINE` / `absorbed mul LINE` per contractable multiply, and the
//! merges, scale folds, instructions removed as dead, and notes of the model.
//! `--library` translates device functions into a library to link (no kernels, no
//! descriptor; a C entry point per `.visible .func`), as kernels-host does libdevice.
//! Exit codes: 0 ok, 1 the PTX cannot be translated or compiled (the message names the
//! line), 2 usage or input error.

use simtwin_ptx::{jit, Options};
use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!("usage: simtwin-ptx translate|build FILE.ptx... [-o OUT.cpp] [--no-contract] [--library] [--segment-vectors[=on|off|all]] [-O 0-3]\n       simtwin-ptx --fusions FILE.ptx... [-O 0-3]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = args.first().cloned() else { return usage() };
    let mut files = Vec::new();
    let mut out = None;
    let mut opts = Options::default();
    let mut library = false;
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "-o" => {
                i += 1;
                out = args.get(i).cloned();
            }
            "--no-contract" => opts.contract = false,
            // Bare: every segment that has a form (as the tests run them).
            "--segment-vectors" | "--segment-vectors=all" => opts.segment_vectors = simtwin_ptx::SegmentVectors::All,
            "--segment-vectors=on" => opts.segment_vectors = simtwin_ptx::SegmentVectors::Paying,
            "--segment-vectors=off" => opts.segment_vectors = simtwin_ptx::SegmentVectors::Off,
            "--library" => library = true,
            "-O" => {
                i += 1;
                match args.get(i).and_then(|v| v.parse::<u8>().ok()).filter(|v| *v <= 3) {
                    Some(v) => opts.opt_level = v,
                    None => {
                        eprintln!("simtwin-ptx: -O takes 0, 1, 2 or 3");
                        return ExitCode::from(2);
                    }
                }
            }
            "-h" | "--help" => return usage(),
            f => files.push(f.to_string()),
        }
        i += 1;
    }
    if files.is_empty() {
        return usage();
    }
    let mut texts = Vec::new();
    for f in &files {
        match std::fs::read(f) {
            Ok(b) => texts.push(String::from_utf8_lossy(&b).into_owned()),
            Err(e) => {
                eprintln!("simtwin-ptx: {f}: {e}");
                return ExitCode::from(2);
            }
        }
    }
    opts.name = std::path::Path::new(&files[0]).file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if cmd == "translate" {
        opts.units = 1;
    }
    let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
    match cmd.as_str() {
        "--fusions" | "fusions" => match simtwin_ptx::fusions(&refs, opts.opt_level) {
            Ok(fs) => {
                print!("{}", render_fusions(&fs));
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("simtwin-ptx: {}: {e}", files[0]);
                ExitCode::from(1)
            }
        },
        "translate" => match if library { simtwin_ptx::translate_library(&refs, &opts) } else { simtwin_ptx::translate(&refs, &opts) } {
            Ok(t) => {
                print_notes(&t);
                match out {
                    Some(o) => {
                        if let Err(e) = std::fs::write(&o, &t.units[0]) {
                            eprintln!("simtwin-ptx: {o}: {e}");
                            return ExitCode::from(2);
                        }
                    }
                    None => print!("{}", t.units[0]),
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("simtwin-ptx: {}: {e}", files[0]);
                ExitCode::from(1)
            }
        },
        "build" => match jit::build(&refs, &opts, &jit::JitOptions::from_env()) {
            Ok(b) => {
                print_notes(&b.translation);
                eprintln!(
                    "simtwin-ptx: {} kernels, translate {:.1} ms, compile {:.0} ms{}",
                    b.translation.kernels.len(),
                    b.translate_ms,
                    b.compile_ms,
                    if b.cached { " (cached)" } else { "" }
                );
                println!("{}", b.library.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("simtwin-ptx: {}: {e}", files[0]);
                ExitCode::from(1)
            }
        },
        _ => usage(),
    }
}

/// The text `--fusions` prints.
fn render_fusions(fs: &[simtwin_ptx::FuncFusions]) -> String {
    use simtwin_ptx::resolve::Node;
    use std::fmt::Write;
    let mut out = String::new();
    for ff in fs {
        let line = |k: usize| match &ff.func.body[k] {
            Node::Instr(i) => i.src.line,
            Node::Label(_) => 0,
        };
        let fu = &ff.fusions;
        let _ = writeln!(out, "function {}", ff.func.decl.name);
        for (m, a) in fu.pairs() {
            let _ = writeln!(out, "  fused mul {} add {}", line(m), line(a));
        }
        for (&m, &kept) in &fu.materialized {
            let _ = writeln!(out, "  {} mul {}", if kept { "kept" } else { "absorbed" }, line(m));
        }
        let mut merged: Vec<(u32, u32, &str)> = fu.repeats.iter().map(|(&a, &b)| (line(a), line(b), "repeat")).collect();
        merged.extend(fu.merged.iter().map(|(&a, &b)| (line(a), line(b), "merged")));
        merged.sort_unstable();
        for (a, b, why) in merged {
            let _ = writeln!(out, "  {why} {a} into {b}");
        }
        let mut scaled: Vec<(u32, u32, &str)> = fu.scaled.iter().map(|(&m, &(c, s))| (line(m), line(c), s)).collect();
        scaled.sort_unstable();
        for (m, c, s) in scaled {
            let _ = writeln!(out, "  scaled mul {m} into {c} FMUL.{s}");
        }
        let mut removed: Vec<u32> = fu.removed.iter().map(|&k| line(k)).collect();
        removed.sort_unstable();
        for l in removed {
            let _ = writeln!(out, "  removed {l}");
        }
        for n in &fu.notes {
            let _ = writeln!(out, "  note: {n}");
        }
    }
    out
}

/// The module's notes and, per kernel, how its threads run and why (what the driver logs
/// at `EMU_CUDA_LOG=info`).
fn print_notes(t: &simtwin_ptx::Translation) {
    for n in &t.notes {
        eprintln!("simtwin-ptx: note: {n}");
    }
    for k in &t.kernels {
        eprintln!("simtwin-ptx: {}: {:?}: {}", k.name, k.threads, k.threads_why);
    }
}
