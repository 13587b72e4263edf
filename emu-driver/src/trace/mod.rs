//! The launch trace (EMU_CUDA_TRACE=PATH): per kernel launch, in the order launches
//! complete, the kernel, grid, block, argument bytes and a hash of every buffer the
//! launch could have written, taken after it completed; per device-to-host copy, the
//! hash of the bytes that arrived. `parity bisect` aligns two traces and names the
//! first launch whose written buffers differ. Format: `simtwin_abi::trace` and
//! `emu-driver/TRACE_FORMAT.md`.
//!
//! What a launch "could have written" (hashing is incremental: nothing else is read):
//! every tracked allocation that one of its arguments points into — each parameter of 8
//! bytes or more is read as 8-byte-aligned words, so pointers inside structs passed by
//! value count — and every global of the launched kernel's module. Missed: memory
//! reached through a pointer the kernel loads from memory (a pointer table in a device
//! buffer or a global) or computes from integers, and globals of other modules.
//!
//! This module holds the writer, the names and the frame rule; `emulated` and
//! `passthrough` hook it into the two drivers' launch and copy paths.

pub mod emulated;
pub mod passthrough;

use crate::config::TraceConfig;
use simtwin_abi::trace::{self as fmt, Dump, Record};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::Mutex;
use std::time::Instant;

/// The trace's settings when EMU_CUDA_TRACE is set (and the configuration is valid).
pub fn settings() -> Option<&'static TraceConfig> {
    crate::config::get().ok().and_then(|c| c.trace.as_ref())
}

/// Whether tracing is on.
pub fn enabled() -> bool {
    settings().is_some()
}

/// The writer and what it needs to name things and tell frames apart.
struct Tracer {
    cfg: &'static TraceConfig,
    out: Option<BufWriter<File>>,
    dump: Option<BufWriter<File>>,
    dump_len: u64,
    /// Launches seen (traced or not), device-to-host copies seen.
    launches: u64,
    copies: u64,
    traced_launches: u64,
    traced_copies: u64,
    frame: u64,
    /// A device-to-host copy happened since the frame began (rule `htod-after-dtoh`).
    after_d2h: bool,
    /// Whether the current frame has had a launch (rule `kernel:`).
    frame_has_launch: bool,
    /// Allocation base -> its number in allocation order.
    ordinals: HashMap<u64, u64>,
    next_ordinal: u64,
    /// Module key -> its number in the order the trace first saw it launched.
    modules: HashMap<u64, u64>,
    hashed: u64,
    trace_ns: u64,
    copy_back_ns: u64,
    ended: bool,
}

static TRACER: Mutex<Option<Tracer>> = Mutex::new(None);

/// Runs `f` on the tracer (opened at first use: the header is written then); None
/// when tracing is off or its file cannot be written (said once on stderr).
fn with<R>(f: impl FnOnce(&mut Tracer) -> R) -> Option<R> {
    let cfg = settings()?;
    let mut g = TRACER.lock().unwrap_or_else(|e| e.into_inner());
    let t = g.get_or_insert_with(|| Tracer::open(cfg));
    if t.out.is_none() || t.ended {
        return None;
    }
    Some(f(t))
}

impl Tracer {
    fn open(cfg: &'static TraceConfig) -> Tracer {
        let mut t = Tracer {
            cfg,
            out: None,
            dump: None,
            dump_len: 0,
            launches: 0,
            copies: 0,
            traced_launches: 0,
            traced_copies: 0,
            frame: 0,
            after_d2h: false,
            frame_has_launch: false,
            ordinals: HashMap::new(),
            next_ordinal: 0,
            modules: HashMap::new(),
            hashed: 0,
            trace_ns: 0,
            copy_back_ns: 0,
            ended: false,
        };
        match create_regular(&cfg.path) {
            Ok(f) => t.out = Some(BufWriter::with_capacity(1 << 16, f)),
            Err(e) => {
                crate::log_error!("EMU_CUDA_TRACE={}: cannot create the trace file: {e}; no trace is written", cfg.path);
                return t;
            }
        }
        let mut settings: std::collections::BTreeMap<String, String> = cfg.raw.iter().cloned().collect();
        for name in ["EMU_CUDA_EXEC", "EMU_CUDA_BLOCK_ORDER", "EMU_CUDA_WORKERS", "EMU_CUDA_KERNELS"] {
            if let Ok(v) = std::env::var(name) {
                settings.insert(name.into(), v);
            }
        }
        let header = fmt::Header {
            schema: fmt::SCHEMA.into(),
            driver: match crate::config::get().ok().and_then(|c| c.real.as_ref()) {
                Some(p) => format!("pass-through {}", p.display()),
                None => "emulated".into(),
            },
            hash: fmt::HASH_NAME.into(),
            pid: std::process::id(),
            frame_rule: match &cfg.frame_start {
                Some(p) => format!("kernel:{p}"),
                None => "htod-after-dtoh".into(),
            },
            settings,
        };
        t.line(&serde_json::to_string(&header).unwrap_or_default());
        t
    }

    fn line(&mut self, text: &str) {
        let Some(out) = self.out.as_mut() else { return };
        if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.write_all(b"\n")) {
            crate::log_error!("EMU_CUDA_TRACE={}: cannot write: {e}; tracing stops", self.cfg.path);
            self.out = None;
        }
    }

    fn record(&mut self, r: &Record) {
        match serde_json::to_string(r) {
            Ok(s) => self.line(&s),
            Err(e) => crate::log_error!("EMU_CUDA_TRACE: cannot encode a record: {e}"),
        }
    }

    /// Appends bytes to the dump file (`PATH.dump`, created at the first dump).
    fn dump(&mut self, bytes: &[u8]) -> Option<Dump> {
        if self.dump.is_none() {
            let path = format!("{}.dump", self.cfg.path);
            match create_regular(&path) {
                Ok(f) => self.dump = Some(BufWriter::new(f)),
                Err(e) => {
                    crate::log_error!("EMU_CUDA_TRACE_DUMP: cannot create {path}: {e}");
                    return None;
                }
            }
        }
        let d = self.dump.as_mut()?;
        d.write_all(bytes).ok()?;
        let at = Dump { offset: self.dump_len, len: bytes.len() as u64 };
        self.dump_len += bytes.len() as u64;
        Some(at)
    }

    fn in_frames(&self) -> bool {
        self.cfg.frames.is_none_or(|(a, b)| (a..=b).contains(&self.frame))
    }

    /// A launch of `symbol` is about to be recorded (or skipped): advances the frame
    /// (rule `kernel:`) and the launch number; returns (its number, whether it is
    /// traced).
    fn next_launch(&mut self, symbol: &str) -> (u64, bool) {
        if self.cfg.frame_start.as_deref().is_some_and(|p| glob(p, symbol)) && self.frame_has_launch {
            self.frame += 1;
            self.frame_has_launch = false;
        }
        self.frame_has_launch = true;
        let n = self.launches;
        self.launches += 1;
        let traced = self.in_frames() && (self.cfg.kernels.is_empty() || self.cfg.kernels.iter().any(|p| glob(p, symbol)));
        (n, traced)
    }

    fn new_frame_after_d2h(&mut self) {
        if self.after_d2h {
            self.frame += 1;
            self.after_d2h = false;
        }
    }

    /// A host-to-device copy happened (rule `htod-after-dtoh`: the first one after a
    /// device-to-host copy starts a frame: the next picture's upload after the
    /// previous results came back).
    fn htod(&mut self) {
        if self.cfg.frame_start.is_none() {
            self.new_frame_after_d2h();
        }
    }

    /// A device-to-host copy: (its number, whether it is traced).
    fn next_copy(&mut self) -> (u64, bool) {
        let n = self.copies;
        self.copies += 1;
        let traced = self.in_frames();
        if self.cfg.frame_start.is_none() {
            self.after_d2h = true;
        }
        (n, traced)
    }

    fn dump_launch(&self, n: u64) -> bool {
        self.cfg.dump_all || self.cfg.dump_launches.contains(&n)
    }

    fn dump_copy(&self, n: u64) -> bool {
        self.cfg.dump_all || self.cfg.dump_copies.contains(&n)
    }

    /// The name of the allocation at `base` (see `simtwin_abi::trace::Buffer::name`).
    fn alloc_name(&self, base: u64, kind: &str, size: u64) -> String {
        match self.ordinals.get(&base) {
            Some(o) => format!("a{o}"),
            None => format!("{}:{size}", kind.replace(' ', "-")),
        }
    }

    fn module_ordinal(&mut self, key: u64) -> u64 {
        let next = self.modules.len() as u64;
        *self.modules.entry(key).or_insert(next)
    }

    fn end(&mut self) {
        if self.ended {
            return;
        }
        let e = fmt::End {
            launches: self.launches,
            traced_launches: self.traced_launches,
            copies: self.traced_copies,
            frames: self.frame + 1,
            hashed_bytes: self.hashed,
            trace_us: self.trace_ns / 1000,
            copy_back_us: self.copy_back_ns / 1000,
        };
        self.record(&Record::End(e));
        self.flush();
        self.ended = true;
    }

    fn flush(&mut self) {
        if let Some(d) = self.dump.as_mut() {
            let _ = d.flush();
        }
        if let Some(o) = self.out.as_mut() {
            if let Err(e) = o.flush() {
                crate::log_error!("EMU_CUDA_TRACE={}: cannot write: {e}; tracing stops", self.cfg.path);
                self.out = None;
            }
        }
    }
}

/// Creates (truncates) `path` for writing, which must be a regular file: opened without
/// blocking, so that a FIFO (whose open would wait for a reader forever) or a device is
/// refused at once instead of hanging or flooding the program.
fn create_regular(path: &str) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new().write(true).create(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path).map_err(
        |e| match e.raw_os_error() {
            Some(libc::ENXIO) => std::io::Error::other("it is a FIFO (named pipe) with no reader: give a regular file"),
            _ => e,
        },
    )?;
    let ft = f.metadata()?.file_type();
    if !ft.is_file() {
        return Err(std::io::Error::other(format!("it is {}: give a regular file", simtwin_abi::files::kind_of(ft))));
    }
    f.set_len(0)?;
    Ok(f)
}

/// `*` wildcards (any run of characters); everything else literal.
pub fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

/// An allocation was made: it gets the next number in allocation order.
pub fn allocated(base: u64) {
    if !enabled() {
        return;
    }
    with(|t| {
        t.ordinals.insert(base, t.next_ordinal);
        t.next_ordinal += 1;
    });
}

/// An allocation was released: its number goes with it.
pub fn released(base: u64) {
    if !enabled() {
        return;
    }
    with(|t| t.ordinals.remove(&base));
}

/// A host-to-device copy (frames).
pub fn htod() {
    if !enabled() {
        return;
    }
    with(|t| t.htod());
}

/// A synchronisation: the trace on disk catches up (a killed program leaves its
/// trace up to here).
pub fn synchronized() {
    if !enabled() {
        return;
    }
    with(|t| t.flush());
}

/// At exit (or library unload): the end record and a flush.
pub fn at_exit() {
    if !enabled() {
        return;
    }
    let mut g = TRACER.lock().unwrap_or_else(|e| e.into_inner());
    let Some(cfg) = settings() else { return };
    let t = g.get_or_insert_with(|| Tracer::open(cfg));
    if t.out.is_some() {
        t.end();
    }
}

/// One buffer to hash: its name, kind, where its bytes are, its size, the parameters
/// pointing into it.
struct Target {
    pub name: String,
    pub kind: String,
    pub size: u64,
    pub params: Vec<u32>,
}

/// What a launch looked like, for its record.
struct LaunchFacts<'a> {
    pub symbol: &'a str,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: u32,
    /// (offset, size) per parameter; empty when unknown.
    pub params: Vec<[u32; 2]>,
    pub args: &'a [u8],
}

/// The 8-byte-aligned words of each parameter of 8 bytes or more, with the
/// parameter's index: the values that can be pointers.
fn pointer_words<'a>(params: &'a [[u32; 2]], args: &'a [u8]) -> impl Iterator<Item = (u32, u64)> + 'a {
    params.iter().enumerate().flat_map(move |(i, &[off, size])| {
        let (start, end) = (off as usize, off as usize + size as usize);
        (start.next_multiple_of(8)..end.saturating_sub(7)).step_by(8).filter_map(move |at| {
            let w = args.get(at..at + 8)?;
            Some((i as u32, u64::from_le_bytes(w.try_into().ok()?)))
        })
    })
}

/// Writes a launch record: `read` fills a buffer's bytes (the target's index, the
/// destination) and answers whether it could.
fn write_launch(
    t: &mut Tracer,
    n: u64,
    facts: &LaunchFacts,
    targets: Vec<Target>,
    result: &str,
    mut read: impl FnMut(usize, &mut Vec<u8>) -> bool,
) {
    let dump = t.dump_launch(n);
    let mut written = Vec::with_capacity(targets.len());
    let mut bytes = Vec::new();
    for (i, tg) in targets.into_iter().enumerate() {
        bytes.clear();
        let ok = read(i, &mut bytes);
        let (hash, at) = if ok {
            t.hashed += bytes.len() as u64;
            (fmt::hash(&bytes), if dump { t.dump(&bytes) } else { None })
        } else {
            ("unreadable".to_string(), None)
        };
        written.push(fmt::Buffer { name: tg.name, kind: tg.kind, size: tg.size, hash, params: tg.params, dump: at });
    }
    let rec = fmt::Launch {
        n,
        frame: t.frame,
        kernel: facts.symbol.to_string(),
        grid: facts.grid,
        block: facts.block,
        shared: facts.shared,
        params: facts.params.clone(),
        args: fmt::to_hex(facts.args),
        written,
        result: result.to_string(),
    };
    t.traced_launches += 1;
    t.record(&Record::Launch(rec));
}

/// Writes a device-to-host copy record of `bytes`.
fn write_copy(t: &mut Tracer, n: u64, src: String, bytes: &[u8]) {
    t.hashed += bytes.len() as u64;
    let dump = if t.dump_copy(n) { t.dump(bytes) } else { None };
    let rec = fmt::Copy { n, frame: t.frame, src, bytes: bytes.len() as u64, hash: fmt::hash(bytes), dump };
    t.traced_copies += 1;
    t.record(&Record::Copy(rec));
}

/// Times tracing work into the end record's `trace_us`.
struct Timer(Instant);

impl Timer {
    fn start() -> Timer {
        Timer(Instant::now())
    }
    fn stop(self, t: &mut Tracer) {
        t.trace_ns += self.0.elapsed().as_nanos() as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn globs_match_as_documented() {
        assert!(glob("band_*", "band_box"));
        assert!(glob("*box*", "band_box_clamp"));
        assert!(glob("band_box", "band_box"));
        assert!(!glob("band_box", "band_box_clamp"));
        assert!(!glob("a*b*c", "acb"));
        assert!(glob("*", ""));
    }
}
