//! Reading a launch trace (`simtwin-trace/1`, `simtwin_abi::trace`) with errors that
//! name the file and the line, and its dump file for element-level differences.

use anyhow::{bail, Result};
use simtwin_abi::trace::{self as fmt, Dump, End, Header, Record};
use std::path::{Path, PathBuf};

/// One event of a trace: a launch or a device-to-host copy.
#[derive(Debug, Clone)]
pub enum Event {
    Launch(fmt::Launch),
    Copy(fmt::Copy),
}

impl Event {
    /// What alignment compares: the kernel of a launch, the size of a copy.
    pub fn key(&self) -> String {
        match self {
            Event::Launch(l) => format!("launch {}", l.kernel),
            Event::Copy(c) => format!("copy of {} bytes", c.bytes),
        }
    }
    pub fn frame(&self) -> u64 {
        match self {
            Event::Launch(l) => l.frame,
            Event::Copy(c) => c.frame,
        }
    }
    /// `launch #N kernel` or `DtoH copy #N (bytes from SRC)`.
    pub fn describe(&self) -> String {
        match self {
            Event::Launch(l) => format!("launch #{} {}", l.n, l.kernel),
            Event::Copy(c) => format!("device-to-host copy #{} ({} bytes from {})", c.n, c.bytes, c.src),
        }
    }
}

/// A trace read whole.
#[derive(Debug, Clone)]
pub struct Trace {
    pub path: PathBuf,
    pub header: Header,
    pub events: Vec<Event>,
    /// None: the trace was cut short (no end record).
    pub end: Option<End>,
}

impl Trace {
    /// Reads and checks a trace file.
    pub fn load(path: &Path) -> Result<Trace> {
        Trace::parse(&crate::input::read_text(path, "trace")?, path)
    }

    /// Checks the text of a trace read from `path` (errors name it).
    pub fn parse(text: &str, path: &Path) -> Result<Trace> {
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let Some((_, first)) = lines.next() else {
            bail!("{}: empty file, not a simtwin trace (was EMU_CUDA_TRACE set and did the program make a CUDA call?)", path.display())
        };
        let header: Header =
            serde_json::from_str(first).map_err(|e| anyhow::anyhow!("{}: line 1 is not a simtwin trace header ({e})", path.display()))?;
        if header.schema != fmt::SCHEMA {
            bail!("{}: schema {:?}, this parity reads {:?}", path.display(), header.schema, fmt::SCHEMA);
        }
        if header.hash != fmt::HASH_NAME {
            bail!("{}: hash {:?}, this parity compares {:?}", path.display(), header.hash, fmt::HASH_NAME);
        }
        let mut events = Vec::new();
        let mut end = None;
        for (i, line) in lines {
            if end.is_some() {
                bail!("{}: line {}: a record after the end record", path.display(), i + 1);
            }
            let r: Record = match serde_json::from_str(line) {
                Ok(r) => r,
                Err(e) => {
                    // A process killed mid-write leaves a partial last line: say so.
                    let last = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()).last().map(|(k, _)| k) == Some(i);
                    bail!(
                        "{}: line {}: not a trace record ({e}){}",
                        path.display(),
                        i + 1,
                        if last { "; the last line is cut short (the traced process was killed while writing?)" } else { "" }
                    );
                }
            };
            match r {
                Record::Launch(l) => {
                    if fmt::from_hex(&l.args).is_none() {
                        bail!("{}: line {}: launch #{}: arguments are not hex", path.display(), i + 1, l.n);
                    }
                    events.push(Event::Launch(l))
                }
                Record::Copy(c) => events.push(Event::Copy(c)),
                Record::End(e) => end = Some(e),
            }
        }
        Ok(Trace { path: path.to_path_buf(), header, events, end })
    }

    /// The dump file beside the trace (`PATH.dump`).
    pub fn dump_path(&self) -> PathBuf {
        let mut p = self.path.clone().into_os_string();
        p.push(".dump");
        PathBuf::from(p)
    }

    /// Bytes of a dump range.
    pub fn read_dump(&self, d: &Dump) -> Result<Vec<u8>> {
        crate::input::read_range(&self.dump_path(), "dump file", d.offset, d.len)
    }
}
