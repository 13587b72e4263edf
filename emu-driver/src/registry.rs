//! Kernel libraries found through EMU_CUDA_KERNELS: the manifests kernels-host writes
//! (`<stem>.simtwin.json` beside `<stem>.so`), and the rule that binds a module image to
//! exactly one of them.

use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[derive(Deserialize, Debug, Clone)]
pub struct ManifestEntry {
    pub name: String,
    pub symbol: String,
    #[serde(default)]
    pub param_sizes: Vec<u32>,
    #[serde(default)]
    pub param_aligns: Vec<u32>,
    #[serde(default)]
    pub max_threads: u32,
    #[serde(default)]
    pub min_blocks: u32,
}

#[derive(Deserialize, Debug, Clone)]
pub struct ManifestGlobal {
    pub name: String,
    pub symbol: String,
    pub size: u64,
    #[serde(default)]
    pub constant: bool,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Manifest {
    pub schema: String,
    pub library: String,
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub source_hash: String,
    #[serde(default)]
    pub nvcc_flags: Vec<String>,
    #[serde(default)]
    pub fma_contraction_differs: bool,
    pub entries: Vec<ManifestEntry>,
    #[serde(default)]
    pub globals: Vec<ManifestGlobal>,
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Where the manifest was read from (filled in by the scan).
    #[serde(skip)]
    pub manifest_path: PathBuf,
}

impl Manifest {
    pub fn library_path(&self) -> PathBuf {
        self.manifest_path.parent().unwrap_or(Path::new(".")).join(&self.library)
    }
    pub fn symbols(&self) -> BTreeSet<&str> {
        self.entries.iter().map(|e| e.symbol.as_str()).collect()
    }
}

pub struct Scan {
    pub manifests: Vec<Manifest>,
    /// Files that could not be read or parsed, with why: reported when nothing binds.
    pub problems: Vec<String>,
}

fn read_manifest(path: &Path, scan: &mut Scan) {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return scan.problems.push(format!("{}: {e}", path.display())),
    };
    match serde_json::from_str::<Manifest>(&text) {
        Ok(mut m) if m.schema == "simtwin-kernels/1" => {
            m.manifest_path = path.to_path_buf();
            scan.manifests.push(m);
        }
        Ok(m) => scan.problems.push(format!("{}: unknown schema {:?}", path.display(), m.schema)),
        Err(e) => scan.problems.push(format!("{}: not a kernels-host manifest: {e}", path.display())),
    }
}

/// Reads every manifest named by (or found in the directories of) EMU_CUDA_KERNELS.
pub fn scan(paths: &[PathBuf]) -> Scan {
    let mut scan = Scan { manifests: Vec::new(), problems: Vec::new() };
    for p in paths {
        if p.is_dir() {
            let mut files: Vec<PathBuf> = match std::fs::read_dir(p) {
                Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
                Err(e) => {
                    scan.problems.push(format!("{}: {e}", p.display()));
                    continue;
                }
            };
            files.sort();
            for f in files.iter().filter(|f| f.to_string_lossy().ends_with(".simtwin.json")) {
                read_manifest(f, &mut scan);
            }
        } else if p.is_file() {
            read_manifest(p, &mut scan);
        } else {
            scan.problems.push(format!("{}: no such file or directory", p.display()));
        }
    }
    scan
}

/// Picks the one library whose entry set equals the image's. Several equal candidates
/// are accepted only when they are builds of the same source (same hash).
pub fn select<'a>(scan: &'a Scan, image_symbols: &BTreeSet<String>, looked_in: &str) -> Result<&'a Manifest, String> {
    let wanted: BTreeSet<&str> = image_symbols.iter().map(|s| s.as_str()).collect();
    let exact: Vec<&Manifest> = scan.manifests.iter().filter(|m| m.symbols() == wanted).collect();
    match exact.len() {
        1 => return Ok(exact[0]),
        n if n > 1 => {
            let first = &exact[0].source_hash;
            if !first.is_empty() && exact.iter().all(|m| &m.source_hash == first) {
                return Ok(exact[0]);
            }
            let list: Vec<String> = exact.iter().map(|m| m.manifest_path.display().to_string()).collect();
            return Err(format!(
                "ambiguous host twin: {} kernel libraries built from different sources have the entries {:?}: {}",
                n, wanted, list.join(", ")
            ));
        }
        _ => {}
    }
    let mut partial = Vec::new();
    for m in &scan.manifests {
        let have = m.symbols();
        let common = have.intersection(&wanted).count();
        if common > 0 {
            let missing: Vec<&&str> = wanted.difference(&have).collect();
            let extra: Vec<&&str> = have.difference(&wanted).collect();
            partial.push(format!("{} (missing {:?}, extra {:?})", m.manifest_path.display(), missing, extra));
        }
    }
    let mut msg = format!("no host twin for the module's entries {:?}; looked in EMU_CUDA_KERNELS={looked_in}", wanted);
    if !partial.is_empty() {
        msg += &format!("; partial matches only: {}", partial.join("; "));
    } else if scan.manifests.is_empty() {
        msg += "; no kernels-host manifests found there (build them with `kernels-host build -o DIR FILE.cu`)";
    }
    if !scan.problems.is_empty() {
        msg += &format!("; unreadable: {}", scan.problems.join("; "));
    }
    Err(msg)
}
