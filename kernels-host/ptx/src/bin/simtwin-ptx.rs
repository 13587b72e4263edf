//! `simtwin-ptx`: translate PTX to C++ (to inspect what PTX mode runs) or build the kernel
//! library the driver would load.
//!
//! ```text
//! simtwin-ptx translate FILE.ptx... [-o OUT.cpp] [--no-contract]
//! simtwin-ptx build FILE.ptx... [--no-contract]     # prints the cached library's path
//! ```
//! Exit codes: 0 ok, 1 the PTX cannot be translated or compiled (the message names the
//! line), 2 usage or input error.

use simtwin_ptx::{jit, Options};
use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!("usage: simtwin-ptx translate|build FILE.ptx... [-o OUT.cpp] [--no-contract]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = args.first().cloned() else { return usage() };
    let mut files = Vec::new();
    let mut out = None;
    let mut opts = Options::default();
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "-o" => {
                i += 1;
                out = args.get(i).cloned();
            }
            "--no-contract" => opts.contract = false,
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
        "translate" => match simtwin_ptx::translate(&refs, &opts) {
            Ok(t) => {
                for n in &t.notes {
                    eprintln!("simtwin-ptx: note: {n}");
                }
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
                for n in &b.translation.notes {
                    eprintln!("simtwin-ptx: note: {n}");
                }
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
