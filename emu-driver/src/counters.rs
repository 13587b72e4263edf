//! Counters (DESIGN.md §2): every entry point by exported name, copies by direction with
//! bytes, memsets, allocations, launches by symbol, synchronisations, hazards. Written as
//! JSON (schema "simtwin-counts/1") to EMU_CUDA_COUNTS when the process exits or the
//! library is unloaded, whichever comes first.

use crate::exports;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    HtoD = 0,
    DtoH = 1,
    DtoD = 2,
    HtoH = 3,
}

const DIR_NAMES: [&str; 4] = ["HtoD", "DtoH", "DtoD", "HtoH"];

#[derive(Default, Clone, Debug)]
pub struct LaunchCount {
    pub count: u64,
    pub threads: u64,
    pub blocks: u64,
}

pub struct Counters {
    calls: Vec<AtomicU64>,
    copies: [(AtomicU64, AtomicU64); 4],
    memsets: (AtomicU64, AtomicU64),
    allocations: (AtomicU64, AtomicU64),
    frees: AtomicU64,
    syncs: AtomicU64,
    export_table: AtomicU64,
    launches: Mutex<BTreeMap<String, LaunchCount>>,
    failed_launches: Mutex<BTreeMap<String, u64>>,
    hazards: Mutex<Vec<Value>>,
    leaks: Mutex<Vec<String>>,
}

fn pair() -> (AtomicU64, AtomicU64) {
    (AtomicU64::new(0), AtomicU64::new(0))
}

pub fn get() -> &'static Counters {
    static C: OnceLock<Counters> = OnceLock::new();
    C.get_or_init(|| Counters {
        calls: (0..exports::names().len()).map(|_| AtomicU64::new(0)).collect(),
        copies: [pair(), pair(), pair(), pair()],
        memsets: pair(),
        allocations: pair(),
        frees: AtomicU64::new(0),
        syncs: AtomicU64::new(0),
        export_table: AtomicU64::new(0),
        launches: Mutex::new(BTreeMap::new()),
        failed_launches: Mutex::new(BTreeMap::new()),
        hazards: Mutex::new(Vec::new()),
        leaks: Mutex::new(Vec::new()),
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Counters {
    pub fn call(&self, id: usize) -> u64 {
        self.calls[id].fetch_add(1, Relaxed)
    }
    pub fn copy(&self, dir: Dir, bytes: u64) {
        let c = &self.copies[dir as usize];
        c.0.fetch_add(1, Relaxed);
        c.1.fetch_add(bytes, Relaxed);
    }
    pub fn memset(&self, bytes: u64) {
        self.memsets.0.fetch_add(1, Relaxed);
        self.memsets.1.fetch_add(bytes, Relaxed);
    }
    pub fn alloc(&self, bytes: u64) {
        self.allocations.0.fetch_add(1, Relaxed);
        self.allocations.1.fetch_add(bytes, Relaxed);
    }
    pub fn export_table_call(&self) {
        self.export_table.fetch_add(1, Relaxed);
    }
    pub fn free(&self) {
        self.frees.fetch_add(1, Relaxed);
    }
    pub fn sync(&self) {
        self.syncs.fetch_add(1, Relaxed);
    }
    pub fn launch(&self, symbol: &str, threads: u64, blocks: u64) {
        let mut l = lock(&self.launches);
        let e = l.entry(symbol.to_string()).or_default();
        e.count += 1;
        e.threads += threads;
        e.blocks += blocks;
    }
    pub fn failed_launch(&self, symbol: &str) {
        *lock(&self.failed_launches).entry(symbol.to_string()).or_default() += 1;
    }
    pub fn hazard(&self, h: Value) {
        lock(&self.hazards).push(h);
    }
    pub fn leak(&self, what: String) {
        lock(&self.leaks).push(what);
    }
    pub fn launches_snapshot(&self) -> BTreeMap<String, LaunchCount> {
        lock(&self.launches).clone()
    }

    pub fn to_json(&self) -> Value {
        let names = exports::names();
        let mut calls = Map::new();
        let mut unsupported = Map::new();
        for (i, n) in self.calls.iter().enumerate() {
            let v = n.load(Relaxed);
            if v > 0 {
                calls.insert(names[i].to_string(), json!(v));
                if !exports::implemented(i) {
                    unsupported.insert(names[i].to_string(), json!(v));
                }
            }
        }
        let et = self.export_table.load(Relaxed);
        if et > 0 {
            calls.insert("cuGetExportTable".into(), json!(et));
            unsupported.insert("cuGetExportTable".into(), json!(et));
        }
        let mut copies = Map::new();
        for (i, d) in DIR_NAMES.iter().enumerate() {
            let c = &self.copies[i];
            copies.insert(d.to_string(), json!({"count": c.0.load(Relaxed), "bytes": c.1.load(Relaxed)}));
        }
        let launches: Map<String, Value> = lock(&self.launches)
            .iter()
            .map(|(k, v)| (k.clone(), json!({"count": v.count, "threads": v.threads, "blocks": v.blocks})))
            .collect();
        let failed: Map<String, Value> = lock(&self.failed_launches).iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        json!({
            "schema": "simtwin-counts/1",
            "pid": std::process::id(),
            "driver": "simtwin emulated libcuda.so.1",
            "calls": calls,
            "copies": copies,
            "memsets": {"count": self.memsets.0.load(Relaxed), "bytes": self.memsets.1.load(Relaxed)},
            "allocations": {"count": self.allocations.0.load(Relaxed), "bytes": self.allocations.1.load(Relaxed),
                            "frees": self.frees.load(Relaxed)},
            "launches": launches,
            "failed_launches": failed,
            "synchronizations": self.syncs.load(Relaxed),
            "hazards": Value::Array(lock(&self.hazards).clone()),
            "leaks": lock(&self.leaks).clone(),
            "unsupported": unsupported,
        })
    }
}

static WRITTEN: AtomicBool = AtomicBool::new(false);

/// The counts path with `%p` replaced by the process id.
pub fn counts_path(template: &str) -> String {
    template.replace("%p", &std::process::id().to_string())
}

/// Writes the counters file once (process exit or library unload).
pub fn write_at_exit() {
    if WRITTEN.swap(true, Relaxed) {
        return;
    }
    let Ok(template) = std::env::var("EMU_CUDA_COUNTS") else { return };
    if template.is_empty() {
        return;
    }
    crate::state::report_leaks_at_exit();
    let path = counts_path(&template);
    let text = serde_json::to_string_pretty(&get().to_json()).unwrap_or_default();
    // Write to a temporary name first so a reader never sees half a file.
    let tmp = format!("{path}.tmp{}", std::process::id());
    let result = std::fs::write(&tmp, text + "\n").and_then(|_| std::fs::rename(&tmp, &path));
    if let Err(e) = result {
        eprintln!("simtwin: cannot write counters to {path}: {e}");
    }
}

/// Runs when the process exits and when the library is dlclose'd (nv-codec-headers'
/// loader unloads libcuda.so.1 before exit): ELF destructors cover both.
extern "C" fn on_unload() {
    write_at_exit();
}

#[used]
#[link_section = ".fini_array"]
static FINI: extern "C" fn() = on_unload;
