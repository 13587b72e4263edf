//! Kernel libraries found through EMU_CUDA_KERNELS: the manifests kernels-host writes
//! (`<stem>.simtwin.json` beside `<stem>.so`), and the rule that binds a module image to
//! exactly one of them.
//!
//! Scanning reads every manifest of every directory; the result is cached and reused
//! for as long as no directory and no manifest changed (their modification times and
//! sizes are compared on each use), and it runs outside the driver's lock.

use simtwin_abi::manifest::{Manifest, SUFFIX};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// A manifest and where it was read from.
#[derive(Debug, Clone)]
pub struct Found {
    pub manifest: Manifest,
    pub path: PathBuf,
}

impl Found {
    pub fn library_path(&self) -> PathBuf {
        self.manifest.library_path(&self.path)
    }
}

/// The manifests of EMU_CUDA_KERNELS.
#[derive(Debug, Default)]
pub struct Scan {
    pub manifests: Vec<Found>,
    /// Files that could not be read or parsed, with why: reported when nothing binds.
    pub problems: Vec<String>,
    /// (path, modified, len) of every directory and manifest read: the cache key.
    stamps: Vec<(PathBuf, Option<SystemTime>, u64)>,
}

fn stamp(p: &Path) -> (PathBuf, Option<SystemTime>, u64) {
    match std::fs::metadata(p) {
        Ok(m) => (p.to_path_buf(), m.modified().ok(), if m.is_dir() { 0 } else { m.len() }),
        Err(_) => (p.to_path_buf(), None, u64::MAX),
    }
}

fn read_manifest(path: &Path, scan: &mut Scan) {
    scan.stamps.push(stamp(path));
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return scan.problems.push(format!("{}: {e}", path.display())),
    };
    match Manifest::parse(&text) {
        Ok(manifest) => scan.manifests.push(Found { manifest, path: path.to_path_buf() }),
        Err(e) => scan.problems.push(format!("{}: {e}", path.display())),
    }
}

fn scan_now(paths: &[PathBuf]) -> Scan {
    let mut scan = Scan::default();
    for p in paths {
        if p.is_dir() {
            scan.stamps.push(stamp(p));
            let mut files: Vec<PathBuf> = match std::fs::read_dir(p) {
                Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
                Err(e) => {
                    scan.problems.push(format!("{}: {e}", p.display()));
                    continue;
                }
            };
            files.sort();
            for f in files.iter().filter(|f| f.to_string_lossy().ends_with(SUFFIX)) {
                read_manifest(f, &mut scan);
            }
        } else if p.is_file() {
            read_manifest(p, &mut scan);
        } else {
            scan.stamps.push(stamp(p));
            scan.problems.push(format!("{}: no such file or directory", p.display()));
        }
    }
    scan
}

/// Every manifest named by (or found in the directories of) `paths`, from the cache
/// when nothing changed since the last scan.
pub fn scan(paths: &[PathBuf]) -> Arc<Scan> {
    static CACHE: Mutex<Option<(Vec<PathBuf>, Arc<Scan>)>> = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((key, s)) = cache.as_ref() {
        if key.as_slice() == paths && s.stamps.iter().all(|(p, m, l)| stamp(p) == (p.clone(), *m, *l)) {
            return s.clone();
        }
    }
    let s = Arc::new(scan_now(paths));
    *cache = Some((paths.to_vec(), s.clone()));
    s
}

/// What a module image asks for: its kernel entries and its variables.
pub struct Wanted<'a> {
    pub kernels: &'a BTreeSet<String>,
    pub globals: &'a BTreeSet<String>,
}

/// Whether any library of the scan has one of the wanted kernels (or, for an image
/// without kernels, one of its variables): EMU_CUDA_EXEC=auto runs the image's PTX only
/// when no twin is even a partial match.
pub fn shares_any(scan: &Scan, want: &Wanted) -> bool {
    scan.manifests.iter().any(|m| {
        if want.kernels.is_empty() {
            m.manifest.globals.iter().any(|g| want.globals.contains(&g.symbol))
        } else {
            m.manifest.entries.iter().any(|e| want.kernels.contains(&e.symbol))
        }
    })
}

/// At most ten names, then how many more.
fn some_names<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let all: Vec<&str> = names.collect();
    let mut s = all.iter().take(10).copied().collect::<Vec<_>>().join(", ");
    if all.len() > 10 {
        s += &format!(" and {} more", all.len() - 10);
    }
    s
}

/// Picks the one library whose entry set equals the image's (for an image without
/// kernels: a library without kernels whose variables the image has). Several equal
/// candidates are accepted only when they are builds of the same source (same hash).
pub fn select<'a>(scan: &'a Scan, want: &Wanted, looked_in: &str) -> Result<&'a Found, String> {
    let wanted: BTreeSet<&str> = want.kernels.iter().map(|s| s.as_str()).collect();
    let mut exact: Vec<&Found> = scan.manifests.iter().filter(|m| m.manifest.symbols() == wanted).collect();
    if wanted.is_empty() {
        exact.retain(|m| !m.manifest.globals.is_empty() && m.manifest.globals.iter().all(|g| want.globals.contains(&g.symbol)));
    }
    match exact.len() {
        1 => return Ok(exact[0]),
        n if n > 1 => {
            let first = &exact[0].manifest.source_hash;
            if !first.is_empty() && exact.iter().all(|m| &m.manifest.source_hash == first) {
                return Ok(exact[0]);
            }
            let list: Vec<String> = exact.iter().map(|m| m.path.display().to_string()).collect();
            return Err(format!(
                "ambiguous host twin: {n} kernel libraries built from different sources have the entries {}: {}",
                some_names(wanted.iter().copied()),
                list.join(", ")
            ));
        }
        _ => {}
    }
    let what = if wanted.is_empty() {
        format!("variables {}", some_names(want.globals.iter().map(|s| s.as_str())))
    } else {
        format!("{} entries {}", wanted.len(), some_names(wanted.iter().copied()))
    };
    let mut msg = format!("no host twin for the module's {what}; looked in EMU_CUDA_KERNELS={looked_in}");
    let mut partial = Vec::new();
    for m in &scan.manifests {
        let have = m.manifest.symbols();
        if have.intersection(&wanted).count() > 0 {
            partial.push(format!(
                "{} (missing {}; extra {})",
                m.path.display(),
                some_names(wanted.difference(&have).copied()),
                some_names(have.difference(&wanted).copied())
            ));
        }
    }
    if !partial.is_empty() {
        msg += &format!("; partial matches only: {}", partial.join("; "));
    } else if scan.manifests.is_empty() {
        msg += "; no kernels-host manifests found there";
    }
    if !scan.problems.is_empty() {
        msg += &format!("; unreadable: {}", scan.problems.join("; "));
    }
    msg += ". Build host twins with `kernels-host build -o DIR FILE.cu` (or, for a whole project, \
            `kernels-host build -o DIR --compile-commands BUILD/compile_commands.json`) and add DIR to EMU_CUDA_KERNELS";
    Err(msg)
}
