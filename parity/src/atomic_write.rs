//! Report files are written whole or not at all: through a temporary file beside them
//! and a rename.

use anyhow::{Context, Result};
use serde_json::Value as Json;
use std::path::Path;

/// Writes `path` through a temporary file in the same directory and a rename, so that
/// a reader (or a parity that is killed) never leaves half a report.
pub fn write_atomic(path: &Path, contents: impl AsRef<[u8]>) -> Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    std::fs::write(&tmp, contents).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// Pretty JSON with a final newline, atomically.
pub fn write_json(path: &Path, v: &Json) -> Result<()> {
    write_atomic(path, serde_json::to_string_pretty(v)? + "\n")
}
