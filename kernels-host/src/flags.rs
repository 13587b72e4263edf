//! The nvcc flags a user gives after `--`: what of them applies to host compilation
//! (-D, -U, -I, -include, the C++ standard) and what changes device results
//! (FMA contraction, fast math, flush-to-zero), which the manifest reports.

/// What kernels-host takes from nvcc flags.
#[derive(Debug, Default, Clone)]
pub struct NvccFlags {
    pub defines: Vec<String>,
    pub undefines: Vec<String>,
    pub include_dirs: Vec<String>,
    pub system_include_dirs: Vec<String>,
    pub force_includes: Vec<String>,
    pub std: Option<String>,
    pub fmad: bool,
    pub fast_math: bool,
    pub ftz: bool,
    pub prec_div_false: bool,
    pub prec_sqrt_false: bool,
    /// nvcc flags that change how a source parses, given to nvcc again for the
    /// cross-check (`--expt-relaxed-constexpr`, `--extended-lambda`, `-Xcompiler X`, ...).
    pub passthrough: Vec<String>,
}

/// nvcc flags (and whether they take a value) that change what the front end accepts;
/// everything else selects outputs or device code generation.
const PASSTHROUGH: [(&str, bool); 14] = [
    ("--expt-relaxed-constexpr", false),
    ("-expt-relaxed-constexpr", false),
    ("--extended-lambda", false),
    ("-extended-lambda", false),
    ("--expt-extended-lambda", false),
    ("-expt-extended-lambda", false),
    ("-Xcompiler", true),
    ("--compiler-options", true),
    ("-ccbin", true),
    ("--compiler-bindir", true),
    ("-rdc", true),
    ("--relocatable-device-code", true),
    ("--default-stream", true),
    ("-allow-unsupported-compiler", false),
];

fn bool_value(v: &str) -> Option<bool> {
    match v {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

/// nvcc's own environment: `NVCC_PREPEND_FLAGS` goes before a command's flags and
/// `NVCC_APPEND_FLAGS` after them, for every nvcc call (a build that sets
/// `NVCC_APPEND_FLAGS=--fmad=false` compiles every kernel without contraction, and its twins
/// must know). Split on whitespace, as nvcc does.
pub fn with_nvcc_env(flags: &[String]) -> Vec<String> {
    let var = |k: &str| std::env::var(k).unwrap_or_default().split_whitespace().map(String::from).collect::<Vec<_>>();
    let mut all = var("NVCC_PREPEND_FLAGS");
    all.extend(flags.iter().cloned());
    all.extend(var("NVCC_APPEND_FLAGS"));
    all
}

/// Parses a command's flags as nvcc sees them (with [`with_nvcc_env`]). The pass-through
/// flags stay the command's own: nvcc, run again for the cross-check, reads the
/// environment itself.
pub fn parse_as_nvcc(flags: &[String]) -> Result<NvccFlags, String> {
    let mut f = parse(&with_nvcc_env(flags)).map_err(|e| env_note(flags, e))?;
    f.passthrough = parse(flags)?.passthrough;
    Ok(f)
}

fn env_note(flags: &[String], e: String) -> String {
    if with_nvcc_env(flags).len() != flags.len() {
        format!("{e} (with NVCC_PREPEND_FLAGS/NVCC_APPEND_FLAGS)")
    } else {
        e
    }
}

/// Parses nvcc flags. Unknown flags are ignored (they select device code generation).
pub fn parse(flags: &[String]) -> Result<NvccFlags, String> {
    let mut f = NvccFlags { fmad: true, ..Default::default() };
    let mut i = 0;
    // Splits `-Xvalue`, `-X value`, `--long=value`, `--long value`.
    let value = |i: &mut usize, arg: &str, names: &[&str]| -> Option<Result<String, String>> {
        for n in names {
            if arg == *n {
                *i += 1;
                return Some(flags.get(*i).cloned().ok_or_else(|| format!("nvcc flag {n} needs a value")));
            }
            if let Some(v) = arg.strip_prefix(&format!("{n}=")) {
                return Some(Ok(v.to_string()));
            }
            if n.len() == 2 && !n.starts_with("--") {
                if let Some(v) = arg.strip_prefix(n) {
                    if !v.is_empty() {
                        return Some(Ok(v.to_string()));
                    }
                }
            }
        }
        None
    };
    while i < flags.len() {
        let a = flags[i].as_str();
        if let Some(v) = value(&mut i, a, &["-D", "--define-macro"]) {
            f.defines.push(v?);
        } else if let Some(v) = value(&mut i, a, &["-U", "--undefine-macro"]) {
            f.undefines.push(v?);
        } else if let Some(v) = value(&mut i, a, &["-I", "--include-path"]) {
            f.include_dirs.push(v?);
        } else if let Some(v) = value(&mut i, a, &["-isystem", "--system-include"]) {
            f.system_include_dirs.push(v?);
        } else if let Some(d) = a.strip_prefix("-isystem").filter(|d| !d.is_empty() && !d.starts_with('=')) {
            f.system_include_dirs.push(d.to_string());
        } else if let Some(v) = value(&mut i, a, &["-include", "--pre-include"]) {
            f.force_includes.push(v?);
        } else if let Some(v) = value(&mut i, a, &["-std", "--std"]) {
            let v = v?;
            if !v.starts_with("c++") {
                return Err(format!("unsupported C++ standard `{v}` (expected c++11..c++20)"));
            }
            f.std = Some(v);
        } else if let Some(v) = value(&mut i, a, &["-fmad", "--fmad"]) {
            f.fmad = bool_value(&v?).ok_or("--fmad takes true or false")?;
        } else if let Some(v) = value(&mut i, a, &["-ftz", "--ftz"]) {
            f.ftz = bool_value(&v?).ok_or("--ftz takes true or false")?;
        } else if let Some(v) = value(&mut i, a, &["-prec-div", "--prec-div"]) {
            f.prec_div_false = !bool_value(&v?).ok_or("--prec-div takes true or false")?;
        } else if let Some(v) = value(&mut i, a, &["-prec-sqrt", "--prec-sqrt"]) {
            f.prec_sqrt_false = !bool_value(&v?).ok_or("--prec-sqrt takes true or false")?;
        } else if a == "-use_fast_math" || a == "--use_fast_math" {
            f.fast_math = true;
        } else if let Some(&(name, takes)) = PASSTHROUGH.iter().find(|(n, _)| a == *n || a.starts_with(&format!("{n}="))) {
            f.passthrough.push(a.to_string());
            if takes && a == name {
                i += 1;
                f.passthrough.push(flags.get(i).cloned().ok_or_else(|| format!("nvcc flag {name} needs a value"))?);
            }
        }
        i += 1;
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }
    #[test]
    fn nvccs_environment_flags_apply_as_nvcc_applies_them() {
        // Only this test sets these variables in this test binary.
        std::env::set_var("NVCC_PREPEND_FLAGS", "-DFROM_ENV --fmad=true");
        std::env::set_var("NVCC_APPEND_FLAGS", " --fmad=false  -Xcompiler -Wall ");
        let f = parse_as_nvcc(&v(&["-DX", "--fmad=true", "--expt-relaxed-constexpr"])).unwrap();
        std::env::remove_var("NVCC_PREPEND_FLAGS");
        std::env::remove_var("NVCC_APPEND_FLAGS");
        // Appended flags come last and win; prepended ones apply too.
        assert!(!f.fmad);
        assert_eq!(f.defines, v(&["FROM_ENV", "X"]));
        // nvcc reads the environment itself in the cross-check: not passed twice.
        assert_eq!(f.passthrough, v(&["--expt-relaxed-constexpr"]));
        assert!(parse_as_nvcc(&v(&["--fmad=false"])).map(|f| !f.fmad).unwrap());
    }
    #[test]
    fn parses_the_forms_real_builds_use() {
        let f = parse(&v(&["--std", "c++20", "-DDEVICE_CODE", "-D", "X=2", "-Iinc", "--fmad=false", "-arch=sm_90"])).unwrap();
        assert_eq!(f.std.as_deref(), Some("c++20"));
        assert_eq!(f.defines, v(&["DEVICE_CODE", "X=2"]));
        assert_eq!(f.include_dirs, v(&["inc"]));
        assert!(!f.fmad && !f.fast_math);
        let g = parse(&v(&["-std=c++17", "--use_fast_math"])).unwrap();
        assert!(g.fmad && g.fast_math && g.std.as_deref() == Some("c++17"));
        assert!(parse(&v(&["--std"])).is_err());
        let h = parse(&v(&[
            "-isystem",
            "/s",
            "-isystem/t",
            "--expt-relaxed-constexpr",
            "-Xcompiler",
            "-fopenmp",
            "-rdc=true",
            "--fatbin",
            "-gencode",
            "arch=compute_90,code=sm_90",
        ]))
        .unwrap();
        assert_eq!(h.system_include_dirs, v(&["/s", "/t"]));
        assert_eq!(h.passthrough, v(&["--expt-relaxed-constexpr", "-Xcompiler", "-fopenmp", "-rdc=true"]));
        assert!(parse(&v(&["--fmad=maybe"])).is_err());
    }
}
