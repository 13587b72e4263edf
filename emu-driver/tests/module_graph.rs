//! The module graph of every crate of the workspace: every `use` (and every path naming a
//! module: `crate::a::b`, `super::x`, a child module's `x::y`; and every invocation of a
//! crate's own macro) is an edge between source files. Inside an inline module
//! (`mod tests { use super::*; }`), `super` is the file's own module.
//!
//! - No crate has an import cycle (a cycle is reported with its files).
//! - Each crate's modules are listed in layers, top to bottom ([`LAYERS`]); a module uses
//!   only modules of its own layer or of layers below it. An upward edge is reported
//!   with the file and the path that makes it; a module missing from the list fails too.
//! - The layer diagrams in the crates' doc comments and READMEs are rendered from the
//!   same lists, so what they say is what this test checks.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Crate roots: (source directory, root files).
const CRATES: &[(&str, &[&str])] = &[
    ("emu-driver/src", &["lib.rs"]),
    ("abi/src", &["lib.rs"]),
    ("emu-driver/conformance/src", &["main.rs"]),
    ("kernels-host/src", &["lib.rs", "main.rs"]),
    ("parity/src", &["lib.rs", "main.rs"]),
    ("crlibm-preload/src", &["lib.rs"]),
    ("nvjitlink/src", &["lib.rs"]),
    ("cudart/src", &["lib.rs"]),
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
    /// `macro_rules!` defined here.
    macros: BTreeSet<String>,
}

/// Every module file of a crate, by module path.
fn modules(dir: &Path, root: &str) -> Vec<Module> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.join(root), Vec::<String>::new())];
    while let Some((file, path)) = stack.pop() {
        let raw = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let text = code_only(&raw);
        let paths = path_attributes(&raw);
        let mut children = BTreeSet::new();
        let base = if file.file_name().map(|n| n == "mod.rs" || n == "lib.rs" || n == "main.rs").unwrap_or(false) {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        let words: Vec<&str> =
            text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ';' || c == '{')).filter(|w| !w.is_empty()).collect();
        for w in words.windows(2) {
            if w[0] == "mod" {
                let name = w[1].trim_end_matches(';');
                if w[1].ends_with(';') && !name.is_empty() {
                    let a = base.join(format!("{name}.rs"));
                    let b = base.join(name).join("mod.rs");
                    let f = match paths.get(name) {
                        Some(p) => file.parent().unwrap().join(p),
                        None if a.exists() => a,
                        None => b,
                    };
                    if f.exists() {
                        let mut p = path.clone();
                        p.push(name.to_string());
                        stack.push((f, p));
                        children.insert(name.to_string());
                    }
                }
            }
        }
        let macros = words.windows(2).filter(|w| w[0] == "macro_rules").map(|w| w[1].trim_end_matches(['{', ';']).to_string()).collect();
        out.push(Module { file, path, children, macros });
    }
    out
}

/// `#[path = "FILE"] mod NAME;` declarations: NAME -> FILE (relative to the declaring
/// file's folder).
fn path_attributes(raw: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let lines: Vec<&str> = raw.lines().map(str::trim).collect();
    for (i, l) in lines.iter().enumerate() {
        let Some(rest) = l.strip_prefix("#[path = \"") else { continue };
        let Some(file) = rest.split('"').next() else { continue };
        if let Some(decl) = lines[i + 1..].iter().find(|l| !l.starts_with("#[")) {
            let name =
                decl.trim_start_matches("pub(crate) ").trim_start_matches("pub ").strip_prefix("mod ").map(|n| n.trim_end_matches(';'));
            if let Some(name) = name {
                out.insert(name.to_string(), file.to_string());
            }
        }
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
        let p = if prefix.is_empty() {
            head.to_string()
        } else if head.is_empty() {
            prefix.to_string()
        } else {
            format!("{prefix}::{head}")
        };
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

/// The inline modules (`mod name { ... }`) of a file's code: the byte range of each
/// one's braces.
fn inline_modules(text: &str) -> Vec<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for (at, _) in text.match_indices("mod") {
        if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
            continue;
        }
        let after = &text[at + 3..];
        let name_start = after.len() - after.trim_start().len();
        if name_start == 0 {
            continue;
        }
        let name_len = after[name_start..].find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(after.len() - name_start);
        let tail = &after[name_start + name_len..];
        if name_len == 0 || !tail.trim_start().starts_with('{') {
            continue;
        }
        let open = at + 3 + name_start + name_len + (tail.len() - tail.trim_start().len());
        let mut depth = 0usize;
        let close = (open..b.len()).find(|&k| {
            match b[k] {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                _ => {}
            }
            depth == 0
        });
        out.push(open..close.unwrap_or(b.len()));
    }
    out
}

/// Paths a file refers to: `use` trees and inline `crate::`/`super::`/`self::`/child paths,
/// each with the number of inline modules around it (their `super` is the file's module).
fn references(text: &str) -> Vec<(String, usize)> {
    let inline = inline_modules(text);
    let depth = |at: usize| inline.iter().filter(|r| r.contains(&at)).count();
    let mut refs = Vec::new();
    let mut at = 0;
    while let Some(i) = text[at..].find("use ").map(|i| at + i) {
        let before_ok = i == 0 || !text.as_bytes()[i - 1].is_ascii_alphanumeric() && text.as_bytes()[i - 1] != b'_';
        let tail = &text[i + 4..];
        let end = tail.find(';').unwrap_or(tail.len());
        if before_ok {
            let mut paths = Vec::new();
            expand("", &tail[..end], &mut paths);
            refs.extend(paths.into_iter().map(|p| (p, depth(i))));
        }
        at = i + 4 + end;
    }
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if (bytes[i].is_ascii_alphabetic() || bytes[i] == b'_')
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':'))
        {
            let mut j = i;
            while j < bytes.len()
                && (bytes[j].is_ascii_alphanumeric()
                    || bytes[j] == b'_'
                    || (bytes[j] == b':' && bytes.get(j + 1) == Some(&b':'))
                    || (bytes[j] == b':' && j > 0 && bytes[j - 1] == b':'))
            {
                j += 1;
            }
            let p = &text[i..j];
            // `a::{...}` and `a::*` are use trees, read above.
            if p.contains("::") && !p.ends_with("::") {
                refs.push((p.to_string(), depth(i)));
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    refs
}

/// Invocations (`name!`) of the crate's own macros, with the module defining each.
fn macro_calls<'a>(text: &str, macros: &BTreeMap<&'a str, usize>) -> Vec<(&'a str, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for (at, _) in text.match_indices('!') {
        let start = text[..at].rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |k| k + 1);
        if let Some((&name, &t)) = macros.get_key_value(&text[start..at]) {
            if b.get(at + 1) != Some(&b'=') && !text[..start].trim_end().ends_with("macro_rules") {
                out.push((name, t));
            }
        }
    }
    out
}

/// The module file a path written in module `from` names, `inline` modules deep inside
/// that file (an inline module's `self` and `super` stay in the file until they climb
/// out of it).
fn resolve(
    from: &[String],
    inline: usize,
    children: &BTreeSet<String>,
    path: &str,
    known: &BTreeMap<Vec<String>, usize>,
) -> Option<Vec<String>> {
    let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let (mut cur, rest): (Vec<String>, &[&str]) = match segs.first()? {
        &"crate" => (vec![], &segs[1..]),
        &"self" | &"super" => {
            // Climb from the innermost inline module: `self` stays, `super` goes up one.
            let mut c = from.to_vec();
            let mut up_inline = inline;
            let mut k = usize::from(segs[0] == "self");
            while segs.get(k) == Some(&"super") {
                if up_inline > 0 {
                    up_inline -= 1;
                } else {
                    c.pop();
                }
                k += 1;
            }
            if up_inline > 0 {
                // Still inside an inline module of this file: whatever follows is in it.
                return Some(from.to_vec());
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

/// The module graph of one crate root: its module files and, for each, the modules it
/// refers to, with one example path per edge (for the failure messages).
struct Graph {
    mods: Vec<Module>,
    edges: Vec<BTreeMap<usize, String>>,
}

fn graph(dir: &Path, root: &str) -> Graph {
    let mods = modules(dir, root);
    let known: BTreeMap<Vec<String>, usize> = mods.iter().enumerate().map(|(i, m)| (m.path.clone(), i)).collect();
    let mut edges: Vec<BTreeMap<usize, String>> = vec![BTreeMap::new(); mods.len()];
    let macros: BTreeMap<&str, usize> = mods.iter().enumerate().flat_map(|(i, m)| m.macros.iter().map(move |n| (n.as_str(), i))).collect();
    for (i, m) in mods.iter().enumerate() {
        let text = code_only(&std::fs::read_to_string(&m.file).unwrap());
        for (r, inline) in references(&text) {
            if let Some(target) = resolve(&m.path, inline, &m.children, &r, &known) {
                let t = known[&target];
                // A module's path to itself, or to an ancestor that only declares
                // it (`mod x;`), is not a dependency.
                if t != i && !(m.path.starts_with(&target) && mods[t].children.is_empty()) {
                    edges[i].entry(t).or_insert(r);
                }
            }
        }
        // A macro of another module (`crate::log_warn!` is defined in log.rs).
        for (name, t) in macro_calls(&text, &macros) {
            if t != i {
                edges[i].entry(t).or_insert(format!("{name}!"));
            }
        }
    }
    Graph { mods, edges }
}

#[test]
fn no_crate_has_an_import_cycle() {
    let ws = workspace();
    let mut report = Vec::new();
    for (dir, roots) in CRATES {
        for root in *roots {
            let dirp = ws.join(dir);
            assert!(dirp.join(root).exists(), "{dir}/{root} is listed in CRATES but does not exist");
            let Graph { mods, edges } = graph(&dirp, root);
            let edges: Vec<BTreeSet<usize>> = edges.iter().map(|e| e.keys().copied().collect()).collect();
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

/// One layer of a crate: its modules (top-level names, or `a::b` for a submodule that
/// sits in another layer than its parent) and what they hold, for the diagrams.
type Layer = (&'static [&'static str], &'static str);

/// A crate's layers, top to bottom, and the files whose ```text diagram (the first one
/// after a line containing `Layering`) is rendered from them.
struct Layers {
    dir: &'static str,
    root: &'static str,
    /// The module whose submodules these layers order (empty: the crate's top level).
    within: &'static [&'static str],
    layers: &'static [Layer],
    diagrams: &'static [&'static str],
}

/// Every crate's layers. A module uses only modules of its own layer or below.
const LAYERS: &[Layers] = &[
    Layers {
        dir: "emu-driver/src",
        root: "lib.rs",
        within: &[],
        diagrams: &["emu-driver/src/lib.rs", "emu-driver/README.md"],
        layers: &[
            (&["teardown"], "end of the process (ELF destructor): leaks at exit, the final counters"),
            (&["exports"], "every exported entry point, one table (C ABI, counting, EMU_CUDA_FAIL, cuGetProcAddress)"),
            (&["api"], "safe implementations, one module per API family"),
            (&["signals"], "fatal signals and the driver's own SIGSEGVs: report, counters file"),
            (&["counters_file"], "EMU_CUDA_COUNTS: the counters file, written whole, checkpoints"),
            (&["passthrough"], "EMU_CUDA_REAL: every entry forwarded to a real libcuda.so.1"),
            (&["queue"], "asynchronous work and when it runs (EMU_CUDA_ASYNC)"),
            (&["launch"], "validation and the run of a kernel on the executor"),
            (&["module::load", "module::choose", "module::ptx"], "binding images to kernel libraries: host twins or PTX mode"),
            (&["memory"], "allocations, copies, memsets on the tracker"),
            (&["trace"], "EMU_CUDA_TRACE: per launch, the hashes of what it could write"),
            (&["arena"], "EMU_CUDA_CHECKS=pointers: device memory out of host reach"),
            (&["state"], "contexts, handles, the tracker, context resolution"),
            (&["module"], "modules and functions as the driver keeps them (the data)"),
            (&["vmm"], "the virtual-memory API's memfds, reservations, mappings"),
            (&["callbacks"], "host functions of streams, on a driver thread of their own"),
            (&["boundary"], "typed views of C arguments (the crate's unsafe FFI edge)"),
            (&["exec"], "the SIMT executor (fibers, barriers, warp collectives)"),
            (&["texture"], "texture and surface objects and the sampler kernels call"),
            (&["image", "registry"], "module-image parsers, kernel-library manifests"),
            (&["fork"], "what a forked child may do (atfork handlers, the child's flag)"),
            (&["counters", "inject", "log", "config", "profile", "errors", "symbols"], "leaves: what everything writes to or reads"),
        ],
    },
    Layers {
        dir: "emu-driver/src",
        root: "lib.rs",
        within: &["exec"],
        diagrams: &[],
        layers: &[
            (&["parallel"], "several workers on several OS threads"),
            (&["runtime"], "the extern \"C\" table kernel code calls"),
            (&["loops"], "the loop path's barrier: counts it, reports threads that exited before it"),
            (&["scheduler"], "a worker: its blocks, their fibers; the signal target"),
            (&["watchdog"], "forward progress"),
            (&["turns"], "spinning blocks take turns on the cores"),
            (&["fault"], "signal handling"),
            (&["current"], "the running fiber as kernel code finds it"),
            (&["fibers"], "the fiber pool and the stack switches"),
            (&["stacks"], "fiber stacks, mapped a chunk at a time"),
            (&["race"], "the shared-memory checks of a worker"),
            (&["deadlock"], "a block where nothing can run"),
            (&["block"], "a block's rendezvous put together"),
            (&["barrier", "warp", "convergence"], "each rendezvous kind"),
            (&["threads"], "a block's thread table"),
            (&["types"], "what a launch is given and gives back"),
            (&["hazard", "order", "warp_ops", "device_defined", "smem"], "reports, block order, collective arithmetic, device-defined results, shared memory"),
        ],
    },
    Layers {
        dir: "abi/src",
        root: "lib.rs",
        within: &[],
        diagrams: &["abi/README.md"],
        layers: &[
            (&["kernel", "manifest", "counters", "trace", "linked", "devrt"], "the contracts between processes, one module each; devrt: static-library links (libcudadevrt.a)"),
            (&["cuda"], "cuda.h's result codes, types and structs"),
            (&["ffi", "files"], "the helpers every crate needs (C strings, dladdr, file kinds)"),
        ],
    },
    Layers {
        dir: "cudart/src",
        root: "lib.rs",
        within: &[],
        diagrams: &["cudart/README.md"],
        layers: &[
            (&["exports"], "the C entry points (cuda_runtime_api.h, nvcc's __cuda* calls): out-parameters, last error"),
            (&["launch", "memory", "stream", "device", "texture", "graph"], "one runtime area each, on the driver's calls"),
            (&["registry"], "what nvcc's code registers (fatbins, kernels, variables); modules per device"),
            (&["state"], "cuInit, the thread's device, primary contexts made current lazily"),
            (&["error", "error_table"], "cudaError_t: names, strings, the CUresult mapping, the last error"),
            (&["driver"], "libcuda.so.1 through dlopen + cuGetProcAddress_v2: the function table"),
        ],
    },
    Layers {
        dir: "kernels-host/src",
        root: "lib.rs",
        within: &[],
        diagrams: &["kernels-host/README.md"],
        layers: &[
            (&["build"], "`kernels-host build`: one .cu file into a kernel library and its manifest"),
            (&["compdb", "nvcc_check", "rewrite", "ptx", "sass", "plugin", "module", "libdevice"], "compile databases, the nvcc cross-check, the source rewrite, PTX entries, SASS listings, the GCC plugin, loading a built library"),
            (&["flags", "lex", "manifest", "toolkit"], "leaves: nvcc flags, a C++ tokenizer, the manifest, the CUDA toolkit (nvcc)"),
        ],
    },
    Layers {
        dir: "kernels-host/ptx/src",
        root: "lib.rs",
        within: &[],
        diagrams: &["kernels-host/ptx/README.md"],
        layers: &[
            (&["jit"], "g++ over the emitted C++, cached by content"),
            (&["emit"], "C++ for the host compiler"),
            (&["lanes", "simd"], "barrier-free kernels whose threads run as vector lanes or as vectors of 16"),
            (&["align", "constants"], "checked once per runner call: accesses aligned alike, constants unwritten"),
            (&["uniform"], "per kernel: do all live threads reach every barrier together"),
            (&["waves"], "independent warp shuffles side by side, fused into one exchange"),
            (&["contract", "layout"], "ptxas's mul/add fusion; variables, shared windows, parameters"),
            (&["cfg"], "basic blocks and successors"),
            (&["params", "depot"], "structure parameters read through their address or a copy, read directly"),
            (&["resolve", "link"], "names bound, bodies flattened; several modules into one"),
            (&["parse"], "PTX text into the syntax tree"),
            (&["lex", "ast", "sfu"], "leaves: tokens, the syntax tree, the special functions' exact forms"),
        ],
    },
    Layers {
        dir: "parity/src",
        root: "lib.rs",
        within: &[],
        diagrams: &["parity/README.md"],
        layers: &[
            (&["untrusted"], "every reader of untrusted input, for the fuzzer"),
            (&["command_line"], "the command line: every command's arguments and report directory"),
            (&["video"], "`frames --video`: raw video compared plane by plane"),
            (&["frames", "diff", "transfers", "bench", "faults", "bisect", "demo", "merge", "replay", "wrap"], "the commands, one module each"),
            (&["common", "matrix", "orders", "fidelity", "shard", "run_summary"], "what several commands share"),
            (&["report", "compare", "device", "run", "counts", "junit", "output", "tolerance"], "reports, comparison, running extractors, reading outputs"),
            (&["atomic_write", "exit", "input", "num", "settings", "template"], "leaves"),
        ],
    },
    Layers {
        dir: "fixtures/src",
        root: "lib.rs",
        within: &[],
        diagrams: &["fixtures/README.md"],
        layers: &[(&["set", "twin"], "the named clip set; the twin's features and planted defects"), (&["clip"], "the clip generators")],
    },
    Layers {
        dir: "emu-driver/conformance/src",
        root: "main.rs",
        within: &[],
        diagrams: &[],
        layers: &[
            (&["cases"], "the cases, by API family"),
            (&["cx"], "what a case is given"),
            (&["api", "cuda", "opts"], "the driver API through dlopen, cuda.h's codes and structs (abi/src/cuda.rs), options"),
        ],
    },
];

/// The layer of each module file (the longest listed prefix of its path), or why not.
fn layer_of(l: &Layers, path: &[String]) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for (k, (names, _)) in l.layers.iter().enumerate() {
        for n in *names {
            let p: Vec<&str> = n.split("::").collect();
            if path.len() >= p.len() && path.iter().zip(&p).all(|(a, b)| a == b) && best.is_none_or(|(len, _)| p.len() > len) {
                best = Some((p.len(), k));
            }
        }
    }
    best.map(|(_, k)| k)
}

/// Upward edges and unlisted modules of one crate.
fn layering_problems(ws: &Path, l: &Layers) -> Vec<String> {
    let Graph { mods, edges } = graph(&ws.join(l.dir), l.root);
    let name = |k: usize| mods[k].file.strip_prefix(ws).unwrap_or(&mods[k].file).display().to_string();
    // Module paths relative to `within`; None: outside it, or `within` itself.
    let rel: Vec<Option<&[String]>> = mods
        .iter()
        .map(|m| {
            let inside = m.path.len() > l.within.len() && m.path.iter().zip(l.within).all(|(a, b)| a == b);
            inside.then(|| &m.path[l.within.len()..])
        })
        .collect();
    let mut out = Vec::new();
    for (names, _) in l.layers {
        for n in *names {
            let p: Vec<String> = n.split("::").map(String::from).collect();
            if !rel.iter().any(|r| r.is_some_and(|r| r == p.as_slice())) {
                out.push(format!(
                    "{}: {n} is listed in a layer but is no module of {}",
                    l.dir,
                    if l.within.is_empty() { "the crate".to_string() } else { l.within.join("::") }
                ));
            }
        }
    }
    let layer: Vec<Option<usize>> = rel.iter().map(|r| r.and_then(|r| layer_of(l, r))).collect();
    for (i, r) in rel.iter().enumerate() {
        if let (Some(r), None) = (r, layer[i]) {
            out.push(format!("{}: module {} is in no layer (add it to LAYERS in emu-driver/tests/module_graph.rs)", name(i), r.join("::")));
        }
    }
    for (i, es) in edges.iter().enumerate() {
        for (&t, r) in es {
            if let (Some(a), Some(b)) = (layer[i], layer[t]) {
                if b < a {
                    out.push(format!(
                        "{} (layer {}: {}) uses {} (layer {}: {}) above it: `{r}`",
                        name(i),
                        a + 1,
                        l.layers[a].0.join(", "),
                        name(t),
                        b + 1,
                        l.layers[b].0.join(", ")
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn no_module_uses_a_layer_above_it() {
    let ws = workspace();
    let report: Vec<String> = LAYERS.iter().flat_map(|l| layering_problems(&ws, l)).collect();
    assert!(report.is_empty(), "layering:\n{}", report.join("\n"));
}

/// The diagram of a crate's layers, as its doc comment and README show it.
fn render(l: &Layers) -> Vec<String> {
    let width = l.layers.iter().map(|(n, _)| n.join(", ").len()).filter(|&w| w <= 24).max().unwrap_or(0) + 2;
    let mut out = Vec::new();
    for (names, what) in l.layers {
        let n = names.join(", ");
        if n.len() + 2 > width {
            out.push(n);
            out.push(format!("{:width$}{what}", ""));
        } else {
            out.push(format!("{n:width$}{what}"));
        }
    }
    out
}

/// The lines of the ```text block after the first line containing `Layering` (a doc
/// comment's `//! ` prefix removed).
fn diagram_in(text: &str) -> Option<Vec<String>> {
    let lines: Vec<&str> = text.lines().map(|l| l.strip_prefix("//!").map(|r| r.strip_prefix(' ').unwrap_or(r)).unwrap_or(l)).collect();
    let start = lines.iter().position(|l| l.contains("Layering"))?;
    let open = start + lines[start..].iter().position(|l| l.trim() == "```text")?;
    let close = open + 1 + lines[open + 1..].iter().position(|l| l.trim() == "```")?;
    Some(lines[open + 1..close].iter().map(|l| l.trim_end().to_string()).collect())
}

#[test]
fn the_layer_diagrams_are_the_checked_lists() {
    let ws = workspace();
    let mut report = Vec::new();
    for l in LAYERS {
        let want = render(l);
        for f in l.diagrams {
            let text = std::fs::read_to_string(ws.join(f)).unwrap_or_else(|e| format!("{f}: {e}"));
            match diagram_in(&text) {
                Some(got) if got == want => {}
                Some(_) => {
                    report.push(format!("{f}: the layer diagram differs from LAYERS; it should read:\n```text\n{}\n```", want.join("\n")))
                }
                None => report.push(format!("{f}: no ```text block after a line containing `Layering`")),
            }
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// The README's PTX pipeline (`lex -> parse -> ... -> jit.rs` in its layout section) and
/// docs/architecture.md's run in the order of simtwin-ptx's layers, bottom to top: a pass
/// only uses the passes before it.
#[test]
fn the_ptx_pipeline_in_the_docs_follows_the_layers() {
    let ws = workspace();
    let l = LAYERS.iter().find(|l| l.dir == "kernels-host/ptx/src").unwrap();
    let layer = |name: &str| l.layers.iter().position(|(names, _)| names.contains(&name));
    // README: the stages between arrows, parenthesised remarks and line breaks left out.
    let readme = std::fs::read_to_string(ws.join("README.md")).unwrap();
    let from = readme.find("lex ->").expect("README.md: the PTX pipeline `lex -> ...`");
    let to = from + readme[from..].find("jit.rs").expect("README.md: the pipeline ends at jit.rs") + "jit.rs".len();
    let mut flat = String::new();
    let mut depth = 0;
    for c in readme[from..to].chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth == 0 => flat.push(c),
            _ => {}
        }
    }
    let readme_stages: Vec<String> = flat.split("->").map(|s| s.trim().trim_end_matches('/').trim_end_matches(".rs").to_string()).collect();
    // docs/architecture.md: the backticked module names of its simtwin-ptx section, in order.
    let arch = std::fs::read_to_string(ws.join("docs/architecture.md")).unwrap();
    let sec = &arch[arch.find("## simtwin-ptx").expect("docs/architecture.md: a simtwin-ptx section")..];
    let sec = &sec[..sec[3..].find("\n## ").map_or(sec.len(), |k| k + 3)];
    let arch_stages: Vec<String> =
        sec.split('`').skip(1).step_by(2).map(|w| w.trim_end_matches(".rs").to_string()).filter(|w| layer(w).is_some()).collect();
    for (doc, stages) in [("README.md", &readme_stages), ("docs/architecture.md", &arch_stages)] {
        let mut prev = usize::MAX;
        for s in stages {
            let k = layer(s).unwrap_or_else(|| panic!("{doc}: PTX stage `{s}` is no module of kernels-host/ptx/src's layers"));
            assert!(k <= prev, "{doc}: stage `{s}` (layer {}) comes after a stage of a higher layer: {stages:?}", k + 1);
            prev = k;
        }
        // Every pass is a stage; the leaves (the syntax tree, the special functions) are not.
        for (names, _) in l.layers {
            for n in *names {
                assert!(["ast", "sfu"].contains(n) || stages.iter().any(|s| s == n), "{doc}: the PTX pipeline leaves out `{n}`");
            }
        }
    }
}

#[test]
fn the_checker_sees_an_upward_edge_and_an_unlisted_module() {
    let dir = std::env::temp_dir().join(format!("simtwin-layers-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("low")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod high;\nmod low;\nmod stray;\n").unwrap();
    std::fs::write(dir.join("stray.rs"), "").unwrap();
    // low/mod.rs reaches up through a macro of `high`.
    std::fs::write(dir.join("high.rs"), "use crate::low::f;\n#[macro_export]\nmacro_rules! shout { () => {} }\n").unwrap();
    std::fs::write(dir.join("low/mod.rs"), "pub fn f() { crate::shout!(); }\n").unwrap();
    let dir_s: &'static str = Box::leak(dir.display().to_string().into_boxed_str());
    let l = Layers { dir: dir_s, root: "lib.rs", within: &[], layers: &[(&["high"], "top"), (&["low", "gone"], "bottom")], diagrams: &[] };
    let got = layering_problems(Path::new("/"), &l);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(got.len(), 3, "{got:#?}");
    assert!(got[0].ends_with("gone is listed in a layer but is no module of the crate"), "{}", got[0]);
    assert!(got[1].contains("module stray is in no layer"), "{}", got[1]);
    assert!(
        got[2].contains("low/mod.rs (layer 2: low, gone) uses") && got[2].ends_with("high.rs (layer 1: high) above it: `shout!`"),
        "{}",
        got[2]
    );
    assert_eq!(render(&l), vec!["high       top", "low, gone  bottom"]);
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
    let sub: Vec<BTreeSet<usize>> = edges
        .iter()
        .enumerate()
        .map(|(v, e)| if scc.contains(&v) { e.intersection(scc).copied().collect() } else { BTreeSet::new() })
        .collect();
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

#[test]
fn the_checker_reads_super_in_an_inline_module_as_the_file() {
    let dir = std::env::temp_dir().join(format!("simtwin-inline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod a;\nmod b;\npub fn top() {}\n").unwrap();
    // `super` in a's test module is a itself (no edge to lib.rs, so no cycle); two
    // levels up from it is the crate, so `super::super::b` is a -> b.
    std::fs::write(
        dir.join("a.rs"),
        "pub fn f() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n    mod inner { use super::super::f; }\n    fn t() { super::super::b::g(); }\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("b.rs"), "pub fn g() { super::top(); }\n").unwrap();
    let Graph { mods, edges } = graph(&dir, "lib.rs");
    std::fs::remove_dir_all(&dir).unwrap();
    let file = |name: &str| mods.iter().position(|m| m.file.ends_with(name)).unwrap();
    let (lib, a, b) = (file("lib.rs"), file("a.rs"), file("b.rs"));
    assert_eq!(edges[a], BTreeMap::from([(b, "super::super::b::g".to_string())]));
    // Outside an inline module, `super` is still the parent.
    assert_eq!(edges[b], BTreeMap::from([(lib, "super::top".to_string())]));
    let plain: Vec<BTreeSet<usize>> = edges.iter().map(|e| e.keys().copied().collect()).collect();
    assert_eq!(cyclic_components(&plain), Vec::<BTreeSet<usize>>::new());
}
