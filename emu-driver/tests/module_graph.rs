//! No import cycle in any crate of the workspace: every `use` (and every path naming a
//! module: `crate::a::b`, `super::x`, a child module's `x::y`) is an edge between source
//! files; the graph of each crate must be acyclic. A cycle is reported with its files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Crate roots: (source directory, root files).
const CRATES: &[(&str, &[&str])] = &[
    ("emu-driver/src", &["lib.rs"]),
    ("emu-driver/abi/src", &["lib.rs"]),
    ("emu-driver/conformance/src", &["main.rs"]),
    ("kernels-host/src", &["lib.rs", "main.rs"]),
    ("parity/src", &["lib.rs", "main.rs"]),
    ("parity/preload/src", &["lib.rs"]),
    ("fixtures/src", &["lib.rs", "main.rs"]),
    ("fuzz/src", &["lib.rs", "main.rs"]),
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Source text without comments, string and char literals.
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'r' if b.get(i + 1) == Some(&b'"') || (b.get(i + 1) == Some(&b'#') && !b[i.saturating_sub(1)].is_ascii_alphanumeric()) => {
                // raw string r"..." / r#"..."#
                let mut j = i + 1;
                let mut hashes = 0;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) != Some(&b'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                j += 1;
                'raw: while j < b.len() {
                    if b[j] == b'"' && (0..hashes).all(|h| b.get(j + 1 + h) == Some(&b'#')) {
                        j += 1 + hashes;
                        break 'raw;
                    }
                    j += 1;
                }
                out.push_str("\"\"");
                i = j;
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                out.push_str("\"\"");
            }
            b'\'' => {
                // a char literal ('x', '\n', '\u{..}') or a lifetime ('a)
                let end = if b.get(i + 1) == Some(&b'\\') {
                    (i + 2..b.len()).find(|&k| b[k] == b'\'')
                } else if b.get(i + 2) == Some(&b'\'') {
                    Some(i + 2)
                } else {
                    None
                };
                match end {
                    Some(e) => {
                        out.push_str("' '");
                        i = e + 1;
                    }
                    None => {
                        out.push('\'');
                        i += 1;
                    }
                }
            }
            c => {
                out.push(c as char);
                i += 1;
            }
        }
    }
    out
}

struct Module {
    file: PathBuf,
    path: Vec<String>,
    children: BTreeSet<String>,
}

/// Every module file of a crate, by module path.
fn modules(dir: &Path, root: &str) -> Vec<Module> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.join(root), Vec::<String>::new())];
    while let Some((file, path)) = stack.pop() {
        let text = code_only(&std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display())));
        let mut children = BTreeSet::new();
        let base = if file.file_name().map(|n| n == "mod.rs" || n == "lib.rs" || n == "main.rs").unwrap_or(false) {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        let words: Vec<&str> = text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ';' || c == '{')).filter(|w| !w.is_empty()).collect();
        for w in words.windows(2) {
            if w[0] == "mod" {
                let name = w[1].trim_end_matches(';');
                if w[1].ends_with(';') && !name.is_empty() {
                    let a = base.join(format!("{name}.rs"));
                    let b = base.join(name).join("mod.rs");
                    let f = if a.exists() { a } else { b };
                    if f.exists() {
                        let mut p = path.clone();
                        p.push(name.to_string());
                        stack.push((f, p));
                        children.insert(name.to_string());
                    }
                }
            }
        }
        out.push(Module { file, path, children });
    }
    out
}

/// Expands `use` trees (`a::{b, c::d}`) into paths.
fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim().trim_end_matches("::");
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let mut depth = 0;
        let mut start = 0;
        let p = if prefix.is_empty() { head.to_string() } else if head.is_empty() { prefix.to_string() } else { format!("{prefix}::{head}") };
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&p, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(&p, &inner[start..], out);
    } else if !tree.is_empty() {
        let t = tree.split(" as ").next().unwrap().trim();
        out.push(if prefix.is_empty() { t.to_string() } else { format!("{prefix}::{t}") });
    }
}

/// Paths a file refers to: `use` trees and inline `crate::`/`super::`/`self::`/child paths.
fn references(text: &str) -> Vec<String> {
    let mut refs = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("use ") {
        let before_ok = i == 0 || !rest.as_bytes()[i - 1].is_ascii_alphanumeric() && rest.as_bytes()[i - 1] != b'_';
        let tail = &rest[i + 4..];
        let end = tail.find(';').unwrap_or(tail.len());
        if before_ok {
            expand("", &tail[..end], &mut refs);
        }
        rest = &tail[end.min(tail.len())..];
    }
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if (bytes[i].is_ascii_alphabetic() || bytes[i] == b'_') && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':')) {
            let mut j = i;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_' || (bytes[j] == b':' && bytes.get(j + 1) == Some(&b':')) || (bytes[j] == b':' && j > 0 && bytes[j - 1] == b':')) {
                j += 1;
            }
            let p = &text[i..j];
            // `a::{...}` and `a::*` are use trees, read above.
            if p.contains("::") && !p.ends_with("::") {
                refs.push(p.to_string());
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    refs
}

fn resolve(from: &[String], children: &BTreeSet<String>, path: &str, known: &BTreeMap<Vec<String>, usize>) -> Option<Vec<String>> {
    let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let (mut cur, rest): (Vec<String>, &[&str]) = match segs.first()? {
        &"crate" => (vec![], &segs[1..]),
        &"self" => (from.to_vec(), &segs[1..]),
        &"super" => {
            let mut c = from.to_vec();
            let mut k = 0;
            while segs.get(k) == Some(&"super") {
                c.pop();
                k += 1;
            }
            (c, &segs[k..])
        }
        first if children.contains(*first) => (from.to_vec(), &segs[..]),
        _ => return None,
    };
    for s in rest {
        let mut next = cur.clone();
        next.push(s.to_string());
        if known.contains_key(&next) {
            cur = next;
        } else {
            break;
        }
    }
    Some(cur)
}

#[test]
fn no_crate_has_an_import_cycle() {
    let ws = workspace();
    let mut report = Vec::new();
    for (dir, roots) in CRATES {
        for root in *roots {
            let dirp = ws.join(dir);
            if !dirp.join(root).exists() {
                continue;
            }
            let mods = modules(&dirp, root);
            let known: BTreeMap<Vec<String>, usize> = mods.iter().enumerate().map(|(i, m)| (m.path.clone(), i)).collect();
            let mut edges: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); mods.len()];
            for (i, m) in mods.iter().enumerate() {
                let text = code_only(&std::fs::read_to_string(&m.file).unwrap());
                for r in references(&text) {
                    if let Some(target) = resolve(&m.path, &m.children, &r, &known) {
                        let t = known[&target];
                        // A module's path to itself, or to an ancestor that only declares
                        // it (`mod x;`), is not a dependency.
                        if t != i && !(m.path.starts_with(&target) && mods[t].children.is_empty()) {
                            edges[i].insert(t);
                        }
                    }
                }
            }
            for scc in cyclic_components(&edges) {
                let cycle = find_cycle_within(&edges, &scc);
                let names: Vec<String> = cycle.iter().map(|&k| mods[k].file.strip_prefix(&ws).unwrap().display().to_string()).collect();
                let all: Vec<String> = scc.iter().map(|&k| mods[k].file.strip_prefix(&ws).unwrap().display().to_string()).collect();
                report.push(format!("{dir} ({root}): {} files in a cycle ({}), e.g. {}", scc.len(), all.join(", "), names.join(" -> ")));
            }
        }
    }
    assert!(report.is_empty(), "import cycles:\n{}", report.join("\n"));
}

/// The strongly connected components with more than one node (Kosaraju).
fn cyclic_components(edges: &[BTreeSet<usize>]) -> Vec<BTreeSet<usize>> {
    let n = edges.len();
    let mut order = Vec::new();
    let mut seen = vec![false; n];
    for s in 0..n {
        if seen[s] {
            continue;
        }
        let mut stack = vec![(s, edges[s].iter().copied().collect::<Vec<_>>())];
        seen[s] = true;
        while let Some((v, mut rest)) = stack.pop() {
            if let Some(w) = rest.pop() {
                stack.push((v, rest));
                if !seen[w] {
                    seen[w] = true;
                    stack.push((w, edges[w].iter().copied().collect()));
                }
            } else {
                order.push(v);
            }
        }
    }
    let mut rev = vec![Vec::new(); n];
    for (v, es) in edges.iter().enumerate() {
        for &w in es {
            rev[w].push(v);
        }
    }
    let mut comp = vec![usize::MAX; n];
    let mut out = Vec::new();
    for &s in order.iter().rev() {
        if comp[s] != usize::MAX {
            continue;
        }
        let mut c = BTreeSet::new();
        let mut stack = vec![s];
        comp[s] = s;
        while let Some(v) = stack.pop() {
            c.insert(v);
            for &w in &rev[v] {
                if comp[w] == usize::MAX {
                    comp[w] = s;
                    stack.push(w);
                }
            }
        }
        if c.len() > 1 {
            out.push(c);
        }
    }
    out
}

/// One cycle through the nodes of a strongly connected component.
fn find_cycle_within(edges: &[BTreeSet<usize>], scc: &BTreeSet<usize>) -> Vec<usize> {
    let sub: Vec<BTreeSet<usize>> =
        edges.iter().enumerate().map(|(v, e)| if scc.contains(&v) { e.intersection(scc).copied().collect() } else { BTreeSet::new() }).collect();
    find_cycle(&sub).unwrap_or_default()
}

/// A cycle of the graph (as node indices, first repeated at the end), if any.
fn find_cycle(edges: &[BTreeSet<usize>]) -> Option<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum C {
        White,
        Grey,
        Black,
    }
    fn dfs(n: usize, e: &[BTreeSet<usize>], col: &mut [C], stack: &mut Vec<usize>) -> Option<Vec<usize>> {
        col[n] = C::Grey;
        stack.push(n);
        for &m in &e[n] {
            if col[m] == C::Grey {
                let start = stack.iter().position(|&x| x == m).unwrap();
                let mut c = stack[start..].to_vec();
                c.push(m);
                return Some(c);
            }
            if col[m] == C::White {
                if let Some(c) = dfs(m, e, col, stack) {
                    return Some(c);
                }
            }
        }
        stack.pop();
        col[n] = C::Black;
        None
    }
    let mut col = vec![C::White; edges.len()];
    for n in 0..edges.len() {
        if col[n] == C::White {
            if let Some(c) = dfs(n, edges, &mut col, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_checker_sees_a_cycle() {
    // a -> b -> a
    let e = vec![BTreeSet::from([1]), BTreeSet::from([0])];
    assert_eq!(find_cycle(&e), Some(vec![0, 1, 0]));
    assert_eq!(find_cycle(&[BTreeSet::from([1]), BTreeSet::new()]), None);
    let g = vec![BTreeSet::from([1]), BTreeSet::from([2]), BTreeSet::from([1]), BTreeSet::new()];
    assert_eq!(cyclic_components(&g), vec![BTreeSet::from([1, 2])]);
    let mut out = Vec::new();
    expand("", "crate::{a, b::{c, d as e}}", &mut out);
    assert_eq!(out, vec!["crate::a", "crate::b::c", "crate::b::d"]);
    assert_eq!(code_only("a // x\n\"crate::y\" /* crate::z */ b"), "a \n\"\"  b");
}
