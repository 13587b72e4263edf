//! Compile databases: `compile_commands.json` as CMake writes it, and `ninja -t compdb`'s
//! output (which also lists the commands of meson's `custom_target`s, where projects such
//! as VMAF run nvcc; meson's own compile_commands.json leaves those out).
//!
//! Every entry whose command runs nvcc (or clang in CUDA mode) on a .cu file becomes one
//! host build with that command's flags; other entries are skipped and counted. Entries
//! have `directory`, `file` and either `command` (one shell string) or `arguments` (a
//! list). Commands may be wrapped in launchers (`ccache`, `env VAR=value`, meson's
//! `--internal exe ... --`) and may read arguments from response files (`@file`,
//! nvcc's `--options-file file`).

use crate::flags::{self, NvccFlags};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
struct RawEntry {
    directory: String,
    file: String,
    command: Option<String>,
    arguments: Option<Vec<String>>,
}

/// One CUDA compilation of the database.
#[derive(Debug, Clone)]
pub struct CudaEntry {
    /// The .cu file, absolute.
    pub source: PathBuf,
    /// The compiler's arguments without the compiler itself, the source and `-o FILE`
    /// (what the manifest records as `nvcc_flags`).
    pub flags: Vec<String>,
    /// The flags as kernels-host uses them, relative paths made absolute.
    pub parsed: NvccFlags,
}

/// The CUDA entries of a database and what was left out.
#[derive(Debug, Default)]
pub struct Database {
    pub cuda: Vec<CudaEntry>,
    /// Entries that do not compile CUDA (C/C++ compilations, links, other tools).
    pub skipped: usize,
}

/// Splits a command line as a POSIX shell would (quotes and backslashes; no expansions).
pub fn split_command(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err(format!("unterminated ' in: {s}")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => cur.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                cur.push('\\');
                                cur.push(c);
                            }
                            None => return Err(format!("unterminated \" in: {s}")),
                        },
                        Some(c) => cur.push(c),
                        None => return Err(format!("unterminated \" in: {s}")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') => {}
                    Some(c) => cur.push(c),
                    None => cur.push('\\'),
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

fn base_name(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// The command itself, without launchers: `ccache`/`sccache`/`distcc`, `env [VAR=value]...`,
/// meson's `meson --internal exe [options] -- command...`.
fn strip_launchers(mut args: Vec<String>) -> Vec<String> {
    loop {
        let Some(first) = args.first() else { return args };
        let b = base_name(first);
        if matches!(b, "ccache" | "sccache" | "distcc" | "icecc") {
            args.remove(0);
        } else if b == "env" {
            args.remove(0);
            while args.first().map(|a| a.contains('=') && !a.starts_with('-')).unwrap_or(false) {
                args.remove(0);
            }
        } else if b.starts_with("meson") && args.get(1).map(|a| a == "--internal").unwrap_or(false) {
            match args.iter().position(|a| a == "--") {
                Some(p) => {
                    args.drain(..=p);
                }
                None => return Vec::new(), // a pickled command: nothing to read
            }
        } else {
            return args;
        }
    }
}

/// Replaces `@file` and nvcc's `--options-file file` / `-optf file` by the file's
/// arguments (relative to `dir`).
fn expand_response_files(args: Vec<String>, dir: &Path) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let file = if let Some(f) = a.strip_prefix('@').filter(|f| !f.is_empty()) {
            Some(f.to_string())
        } else if a == "--options-file" || a == "-optf" {
            Some(it.next().ok_or_else(|| format!("{a} needs a file"))?)
        } else {
            a.strip_prefix("--options-file=").map(|f| f.to_string())
        };
        match file {
            Some(f) => {
                let p = dir.join(&f);
                let text = std::fs::read_to_string(&p).map_err(|e| format!("response file {}: {e}", p.display()))?;
                out.extend(split_command(&text)?);
            }
            None => out.push(a),
        }
    }
    Ok(out)
}

/// Whether `args` (compiler first) compile CUDA device code from `file`.
fn is_cuda(args: &[String], file: &str) -> bool {
    let Some(cc) = args.first() else { return false };
    let cc = base_name(cc);
    let cu_file = file.ends_with(".cu");
    if cc.contains("nvcc") {
        return cu_file || args.windows(2).any(|w| w[0] == "-x" && w[1] == "cu") || args.iter().any(|a| a == "-xcu");
    }
    if cc.starts_with("clang") {
        let cuda_mode = args.windows(2).any(|w| w[0] == "-x" && w[1] == "cuda")
            || args.iter().any(|a| a == "-xcuda" || a.starts_with("--cuda-gpu-arch") || a == "--cuda-device-only");
        return cuda_mode && !args.iter().any(|a| a == "--cuda-host-only");
    }
    false
}

/// The compiler's flags without the compiler, the source file and `-o FILE`.
fn flags_of(args: &[String], file: &str, dir: &Path) -> Vec<String> {
    let abs = |p: &str| dir.join(p);
    let src = abs(file);
    let mut out = Vec::new();
    let mut i = 1;
    while i < args.len() {
        let a = &args[i];
        if a == "-o" || a == "--output-file" {
            i += 2;
            continue;
        }
        if a.starts_with("--output-file=") || (a.starts_with("-o") && a.len() > 2 && !a.starts_with("-odir")) {
            i += 1;
            continue;
        }
        if !a.starts_with('-') && (a == file || abs(a) == src) {
            i += 1;
            continue;
        }
        out.push(a.clone());
        i += 1;
    }
    out
}

/// `dir/p` with `.` and `..` resolved as text (the build directory need not exist
/// anymore for the sources and include directories it names to be found).
fn normalize(dir: &Path, p: &str) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in dir.join(p).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c.as_os_str()),
        }
    }
    out
}

fn absolute(dir: &Path, p: &str) -> String {
    normalize(dir, p).to_string_lossy().into_owned()
}

/// Reads a compile database.
pub fn read(path: &Path) -> Result<Database, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let raw: Vec<RawEntry> = serde_json::from_str(&text).map_err(|e| format!("{}: not a compile database: {e}", path.display()))?;
    let mut db = Database::default();
    for (n, e) in raw.into_iter().enumerate() {
        let at = || format!("{} entry {n} ({})", path.display(), e.file);
        let args = match (&e.arguments, &e.command) {
            (Some(a), _) => a.clone(),
            (None, Some(c)) => split_command(c).map_err(|m| format!("{}: {m}", at()))?,
            (None, None) => return Err(format!("{}: neither \"command\" nor \"arguments\"", at())),
        };
        let dir = PathBuf::from(&e.directory);
        let args = strip_launchers(args);
        if !is_cuda(&args, &e.file) {
            db.skipped += 1;
            continue;
        }
        let args = expand_response_files(args, &dir).map_err(|m| format!("{}: {m}", at()))?;
        let flags = flags_of(&args, &e.file, &dir);
        let mut parsed = flags::parse_as_nvcc(&flags).map_err(|m| format!("{}: {m}", at()))?;
        for d in parsed.include_dirs.iter_mut().chain(parsed.system_include_dirs.iter_mut()) {
            *d = absolute(&dir, d);
        }
        for f in parsed.force_includes.iter_mut() {
            if dir.join(&*f).is_file() {
                *f = absolute(&dir, f);
            }
        }
        let source = normalize(&dir, &e.file);
        let source = std::fs::canonicalize(&source).map_err(|err| format!("{}: {}: {err}", at(), source.display()))?;
        db.cuda.push(CudaEntry { source, flags, parsed });
    }
    Ok(db)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn shell_words() {
        assert_eq!(
            split_command(r#"nvcc -DA="x y" 'q r' a\ b "\"z\"" -I../src"#).unwrap(),
            v(&["nvcc", "-DA=x y", "q r", "a b", "\"z\"", "-I../src"])
        );
        assert!(split_command("nvcc 'open").is_err());
    }

    #[test]
    fn launchers_and_cuda_detection() {
        let a = strip_launchers(v(&["env", "FOO=bar", "/x/nvcc", "--fatbin", "k.cu"]));
        assert_eq!(a, v(&["/x/nvcc", "--fatbin", "k.cu"]));
        let a = strip_launchers(v(&["/usr/bin/meson", "--internal", "exe", "--capture", "o.c", "--", "/x/bin2c", "k.cu"]));
        assert_eq!(a, v(&["/x/bin2c", "k.cu"]));
        assert!(!is_cuda(&a, "k.cu"));
        assert!(is_cuda(&v(&["ccache", "nvcc"])[1..], "src/k.cu"));
        assert!(is_cuda(&v(&["clang++", "--cuda-gpu-arch=sm_75", "--cuda-device-only", "-S", "k.cu"]), "k.cu"));
        assert!(!is_cuda(&v(&["clang++", "-c", "k.cpp"]), "k.cpp"));
        assert!(!is_cuda(&v(&["cc", "-c", "k.cu"]), "k.cu"));
        assert_eq!(
            flags_of(&v(&["nvcc", "--fatbin", "../src/k.cu", "-o", "k.fatbin", "-I", "../src", "-ofoo"]), "../src/k.cu", Path::new("/b")),
            v(&["--fatbin", "-I", "../src"])
        );
    }
}
