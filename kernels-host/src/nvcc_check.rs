//! The cross-check that makes a silent drop impossible: the user's nvcc compiles the same
//! .cu with the same defines, include directories and language flags to PTX (`nvcc -ptx
//! -arch=compute_NN`), and the kernels it emits (`.entry` names, parameter sizes in
//! order) must be exactly the kernels of the library kernels-host built. Any difference
//! fails the build, naming each kernel and what differs.
//!
//! Names are compared as mangled symbols. Kernels in an anonymous namespace are the one
//! place where the two compilers' names differ by design (g++ `_GLOBAL__N_1`, nvcc
//! `_GLOBAL__N__<hash>_<file>`): both are reduced to one form first.

use crate::ptx::PtxEntry;
use std::path::Path;
use std::process::Command;

/// `s` with every anonymous-namespace component (`<len>_GLOBAL__N_...`) written as g++
/// writes it (`12_GLOBAL__N_1`).
pub fn normalize_symbol(s: &str) -> String {
    const MARK: &str = "_GLOBAL__N_";
    let mut out = String::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < s.len() {
        if b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_digit()) {
            let digits = s[i..].bytes().take_while(|c| c.is_ascii_digit()).count();
            let after = i + digits;
            if s[after..].starts_with(MARK) {
                if let Ok(len) = s[i..after].parse::<usize>() {
                    if after + len <= s.len() {
                        out.push_str("12_GLOBAL__N_1");
                        i = after + len;
                        continue;
                    }
                }
            }
            out.push_str(&s[i..after]);
            i = after;
            continue;
        }
        let c = s[i..].chars().next().unwrap();
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// A kernel of the library kernels-host built, as the check sees it.
#[derive(Debug, Clone)]
pub struct HostKernel {
    /// The name as written in the source (for messages).
    pub name: String,
    /// Its symbol (exported or local); `None` if the library has none at its address.
    pub symbol: Option<String>,
    pub param_sizes: Vec<u32>,
}

/// The part of a mangled function name before its parameter types: `_Z5sizes` of
/// `_Z5sizesPii`, `_ZN2ns1kIiEE` of `_ZN2ns1kIiEEvPT_`; the whole string if it is not an
/// Itanium mangled name (extern "C").
fn name_part(s: &str) -> &str {
    let b = s.as_bytes();
    if !s.starts_with("_Z") {
        return s;
    }
    let mut i = 2;
    let nested = b.get(i) == Some(&b'N');
    if nested {
        i += 1;
    }
    loop {
        let digits = s[i..].bytes().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            break;
        }
        let len: usize = s[i..i + digits].parse().unwrap_or(0);
        i = (i + digits + len).min(s.len());
        if b.get(i) == Some(&b'I') {
            // Template arguments: up to the matching E (I, N, L and X open, E closes).
            let mut depth = 0;
            while i < b.len() {
                match b[i] {
                    b'I' | b'N' | b'L' | b'X' => depth += 1,
                    b'E' => depth -= 1,
                    _ => {}
                }
                i += 1;
                if depth == 0 {
                    break;
                }
            }
        }
        if !nested {
            break;
        }
    }
    if nested && b.get(i) == Some(&b'E') {
        i += 1;
    }
    &s[..i]
}

/// Every difference between nvcc's entries and the host library's kernels, one line
/// each; empty when they agree.
pub fn compare(host: &[HostKernel], nvcc: &[PtxEntry]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut by_symbol = std::collections::HashMap::new();
    for (i, h) in host.iter().enumerate() {
        match &h.symbol {
            Some(s) => {
                by_symbol.insert(normalize_symbol(s), i);
            }
            None => problems.push(format!("kernel {}: the built library has no symbol at its address", h.name)),
        }
    }
    let mut seen = vec![false; host.len()];
    let mut missing = Vec::new();
    for e in nvcc {
        match by_symbol.get(&normalize_symbol(&e.name)) {
            None => missing.push(e),
            Some(&i) => {
                seen[i] = true;
                let h = &host[i];
                let host_sizes: Vec<u64> = h.param_sizes.iter().map(|&s| s as u64).collect();
                if host_sizes != e.param_sizes {
                    problems.push(format!(
                        "kernel {} ({}): parameter sizes differ: nvcc {:?}, kernels-host {:?}",
                        h.name, e.name, e.param_sizes, host_sizes
                    ));
                }
            }
        }
    }
    let extra: Vec<usize> = (0..host.len()).filter(|&i| !seen[i] && host[i].symbol.is_some()).collect();
    // The same function name with other parameter types: one kernel whose signature
    // differs between the two builds.
    let mut paired = vec![false; host.len()];
    for e in missing {
        let prefix = name_part(&normalize_symbol(&e.name)).to_string();
        let same_name: Vec<usize> = extra
            .iter()
            .copied()
            .filter(|&i| !paired[i] && name_part(&normalize_symbol(host[i].symbol.as_deref().unwrap_or(""))) == prefix)
            .collect();
        if let [i] = same_name[..] {
            paired[i] = true;
            let h = &host[i];
            let host_sizes: Vec<u64> = h.param_sizes.iter().map(|&s| s as u64).collect();
            problems.push(format!(
                "kernel {}: parameter types differ: nvcc .entry {} (sizes {:?}), kernels-host {} (sizes {:?})",
                h.name,
                e.name,
                e.param_sizes,
                h.symbol.as_deref().unwrap_or(""),
                host_sizes
            ));
        } else {
            problems.push(format!(
                "kernel {}: nvcc compiles it (.entry {}) but kernels-host did not build it (its source rewriter \
                 missed the definition, or the host build's preprocessing hides it)",
                e.name, e.name
            ));
        }
    }
    for i in extra {
        if !paired[i] {
            let h = &host[i];
            problems.push(format!(
                "kernel {} ({}): kernels-host built it but nvcc's PTX has no such .entry",
                h.name,
                h.symbol.as_deref().unwrap_or("")
            ));
        }
    }
    problems
}

/// What nvcc is given for the check besides the source: the host build's defines,
/// undefines, include directories, forced includes and C++ standard, and the nvcc flags
/// that change how the source parses.
#[derive(Debug, Clone, Default)]
pub struct CheckFlags {
    pub defines: Vec<String>,
    pub undefines: Vec<String>,
    pub include_dirs: Vec<String>,
    pub system_include_dirs: Vec<String>,
    pub force_includes: Vec<String>,
    pub std: Option<String>,
    pub passthrough: Vec<String>,
}

/// The nvcc command that writes `ptx` for `source` for architecture `arch` (90 = sm_90).
pub fn command(nvcc: &Path, arch: u32, f: &CheckFlags, source: &Path, ptx: &Path) -> Command {
    let mut c = Command::new(nvcc);
    c.arg("-ptx").arg(format!("-arch=compute_{arch}"));
    if let Some(s) = &f.std {
        c.arg(format!("-std={s}"));
    }
    for d in &f.defines {
        c.arg(format!("-D{d}"));
    }
    for u in &f.undefines {
        c.arg(format!("-U{u}"));
    }
    for d in &f.include_dirs {
        c.arg("-I").arg(d);
    }
    for d in &f.system_include_dirs {
        c.arg("-isystem").arg(d);
    }
    for i in &f.force_includes {
        c.arg("-include").arg(i);
    }
    c.args(&f.passthrough);
    c.arg("-o").arg(ptx).arg(source);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anonymous_namespaces_compare_equal() {
        assert_eq!(
            normalize_symbol("_ZN2ns36_GLOBAL__N__9b914f75_4_a_cu_a36029bf2k2EPics"),
            normalize_symbol("_ZN2ns12_GLOBAL__N_12k2EPics")
        );
        assert_eq!(normalize_symbol("_Z4fillIfLi128EEvPT_S0_i"), "_Z4fillIfLi128EEvPT_S0_i");
        assert_eq!(normalize_symbol("k"), "k");
    }

    #[test]
    fn every_difference_is_named() {
        let host = vec![
            HostKernel { name: "a".into(), symbol: Some("a".into()), param_sizes: vec![8, 4] },
            HostKernel { name: "extra".into(), symbol: Some("_Z5extrav".into()), param_sizes: vec![] },
        ];
        let nvcc =
            vec![PtxEntry { name: "a".into(), param_sizes: vec![8, 8] }, PtxEntry { name: "_Z7droppedPi".into(), param_sizes: vec![8] }];
        let p = compare(&host, &nvcc);
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(p[0].contains("kernel a (a): parameter sizes differ: nvcc [8, 8], kernels-host [8, 4]"), "{}", p[0]);
        assert!(p[1].contains("kernel _Z7droppedPi") && p[1].contains("did not build it"), "{}", p[1]);
        assert!(p[2].contains("kernel extra (_Z5extrav)") && p[2].contains("no such .entry"), "{}", p[2]);
        assert!(compare(&host[..1], &[PtxEntry { name: "a".into(), param_sizes: vec![8, 4] }]).is_empty());
        // Same name, other parameter types: one line for the pair.
        let host = vec![HostKernel { name: "sizes".into(), symbol: Some("_Z5sizesPix".into()), param_sizes: vec![8, 8] }];
        let p = compare(&host, &[PtxEntry { name: "_Z5sizesPii".into(), param_sizes: vec![8, 4] }]);
        assert_eq!(
            p,
            ["kernel sizes: parameter types differ: nvcc .entry _Z5sizesPii (sizes [8, 4]), kernels-host _Z5sizesPix (sizes [8, 8])"]
        );
    }

    #[test]
    fn name_parts_of_mangled_names() {
        assert_eq!(name_part("_Z5sizesPii"), "_Z5sizes");
        assert_eq!(name_part("_ZN4feat6detail3vecEP6float4PK6uchar24dim36__half"), "_ZN4feat6detail3vecE");
        assert_eq!(name_part("_Z4fillIfLi128EEvPT_S0_i"), "_Z4fillIfLi128EE");
        assert_eq!(name_part("c_after_all"), "c_after_all");
    }
}
