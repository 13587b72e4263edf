//! Every file parity reads goes through here: extractor outputs, `diff` inputs, tolerance
//! tables, counters files, extractor logs, replay images and tables. Each read has
//!
//! - a type check: a regular file, after symbolic links (a FIFO would block forever,
//!   `/dev/zero` never ends, a directory is not an output);
//! - a size limit: [`Limits::max_bytes`], checked on the size the file reports and again
//!   while reading (a file that grows, or reports 0 like those of /proc);
//! - a time limit: [`Limits::timeout`] for the whole read, which runs on a helper thread
//!   (a file on a hung network mount fails the command instead of hanging it).
//!
//! The limits are `--max-input SIZE` and `--input-timeout SECONDS` (any command), or
//! the environment's `PARITY_MAX_INPUT` and `PARITY_INPUT_TIMEOUT`; defaults 512 MiB and
//! 60 s. Errors name the file, what it is for, and the option that raises the limit.

use anyhow::{anyhow, bail, Context, Result};
use simtwin_abi::files::kind_of;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

/// Default size limit of one input file.
pub const DEFAULT_MAX_BYTES: u64 = 512 << 20;
/// Default time limit of one read.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The limits every read obeys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest file, in bytes.
    pub max_bytes: u64,
    /// Longest read of one file.
    pub timeout: Duration,
}

static LIMITS: OnceLock<Limits> = OnceLock::new();

/// Sets the process's limits (main, from the command line); the first call wins.
pub fn set_limits(l: Limits) {
    let _ = LIMITS.set(l);
}

/// The process's limits: as set, else from the environment, else the defaults. A bad
/// environment value is reported by [`limits_from_env`] at start-up (main).
pub fn limits() -> Limits {
    *LIMITS.get_or_init(|| limits_from_env().unwrap_or(Limits { max_bytes: DEFAULT_MAX_BYTES, timeout: DEFAULT_TIMEOUT }))
}

/// The limits from `PARITY_MAX_INPUT` and `PARITY_INPUT_TIMEOUT` (defaults where unset).
pub fn limits_from_env() -> Result<Limits> {
    let max_bytes = match std::env::var("PARITY_MAX_INPUT") {
        Ok(v) => parse_size(&v).map_err(|e| anyhow!("PARITY_MAX_INPUT={v}: {e}"))?,
        Err(_) => DEFAULT_MAX_BYTES,
    };
    let timeout = match std::env::var("PARITY_INPUT_TIMEOUT") {
        Ok(v) => parse_timeout(&v).map(Duration::from_secs_f64).map_err(|e| anyhow!("PARITY_INPUT_TIMEOUT={v}: {e}"))?,
        Err(_) => DEFAULT_TIMEOUT,
    };
    Ok(Limits { max_bytes, timeout })
}

/// `--max-input`: bytes, with an optional K, M or G suffix (powers of 1024), at least 1.
pub fn parse_size(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'K' | 'k')) => (&t[..i], 1u64 << 10),
        Some((i, 'M' | 'm')) => (&t[..i], 1 << 20),
        Some((i, 'G' | 'g')) => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    match num.parse::<u64>().ok().and_then(|n| n.checked_mul(mult)) {
        Some(n) if n > 0 => Ok(n),
        _ => Err(format!("'{s}' is not a size in bytes (e.g. 512M, 2G)")),
    }
}

/// `--input-timeout`: positive seconds.
pub fn parse_timeout(s: &str) -> std::result::Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x <= 1e6 => Ok(x),
        _ => Err(format!("'{s}' is not a positive number of seconds")),
    }
}

fn human(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// Opens `path` for reading without blocking (a FIFO opens at once) and checks that it
/// is a regular file of at most `max` bytes; returns it and its size.
fn open_checked(path: &Path, what: &str, max: u64) -> Result<(std::fs::File, u64)> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .with_context(|| format!("cannot read {what} {}", path.display()))?;
    let md = f.metadata().with_context(|| format!("cannot read {what} {}", path.display()))?;
    if !md.file_type().is_file() {
        bail!("{what} {} is {}: parity reads only regular files", path.display(), kind_of(md.file_type()));
    }
    if md.len() > max {
        bail!(
            "{what} {} is {} bytes, over the input size limit of {} (raise it with --max-input SIZE or PARITY_MAX_INPUT)",
            path.display(),
            md.len(),
            human(max)
        );
    }
    Ok((f, md.len()))
}

/// Runs `op` on a helper thread, at most `limit`; on time-out the thread is left to
/// finish (or not) on its own and the read fails.
fn with_time_limit<T: Send + 'static>(
    path: &Path,
    what: &str,
    limit: Duration,
    op: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("parity-read".into())
        .spawn(move || {
            let _ = tx.send(op());
        })
        .context("cannot start a reader thread")?;
    match rx.recv_timeout(limit) {
        Ok(r) => r,
        Err(_) => bail!(
            "reading {what} {} did not finish within {} s (raise the limit with --input-timeout SECONDS or PARITY_INPUT_TIMEOUT)",
            path.display(),
            limit.as_secs_f64()
        ),
    }
}

/// The whole of `path`, a regular file within the limits; `what` names it in errors
/// ("output file", "tolerance table", ...).
pub fn read(path: &Path, what: &str) -> Result<Vec<u8>> {
    let l = limits();
    let (p, w) = (path.to_path_buf(), what.to_string());
    with_time_limit(path, what, l.timeout, move || {
        let (f, size) = open_checked(&p, &w, l.max_bytes)?;
        let mut v = Vec::with_capacity(size as usize);
        f.take(l.max_bytes + 1).read_to_end(&mut v).with_context(|| format!("cannot read {w} {}", p.display()))?;
        if v.len() as u64 > l.max_bytes {
            bail!(
                "{w} {} grew past the input size limit of {} while it was read (raise it with --max-input SIZE or PARITY_MAX_INPUT)",
                p.display(),
                human(l.max_bytes)
            );
        }
        Ok(v)
    })
}

/// `len` bytes at `offset` of `path` (a dump file a trace names), a regular file that
/// holds them; `len` within the input size limit. Same type and time checks as [`read`].
pub fn read_range(path: &Path, what: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
    let l = limits();
    if len > l.max_bytes {
        bail!(
            "{what} {}: {len} bytes asked for, over the input size limit of {} (raise it with --max-input SIZE or PARITY_MAX_INPUT)",
            path.display(),
            human(l.max_bytes)
        );
    }
    let (p, w) = (path.to_path_buf(), what.to_string());
    with_time_limit(path, what, l.timeout, move || {
        let (mut f, size) = open_checked(&p, &w, u64::MAX)?;
        if offset.checked_add(len).is_none_or(|e| e > size) {
            bail!("{}: bytes {offset}..{} are asked for but the {w} has {size}", p.display(), offset.saturating_add(len));
        }
        f.seek(SeekFrom::Start(offset))?;
        let mut out = vec![0u8; len as usize];
        f.read_exact(&mut out).with_context(|| format!("cannot read {w} {}", p.display()))?;
        Ok(out)
    })
}

/// [`read`] as UTF-8 text.
pub fn read_text(path: &Path, what: &str) -> Result<String> {
    String::from_utf8(read(path, what)?).map_err(|_| anyhow!("{what} {} is not UTF-8 text", path.display()))
}

/// At most the last `bytes` bytes of `path` (a log), as text (invalid UTF-8 replaced);
/// "" when it cannot be read. Same type and time checks as [`read`]; any size.
pub fn read_tail(path: &Path, bytes: u64) -> String {
    let l = limits();
    let p = path.to_path_buf();
    with_time_limit(path, "log", l.timeout, move || {
        let (mut f, size) = open_checked(&p, "log", u64::MAX)?;
        if size > bytes {
            f.seek(SeekFrom::Start(size - bytes))?;
        }
        let mut v = Vec::new();
        f.take(bytes).read_to_end(&mut v)?;
        Ok(String::from_utf8_lossy(&v).into_owned())
    })
    .unwrap_or_default()
}

/// At most the first `bytes` bytes of `path` (a log), as text; "" when unreadable.
pub fn read_head(path: &Path, bytes: u64) -> String {
    let l = limits();
    let p = path.to_path_buf();
    with_time_limit(path, "log", l.timeout, move || {
        let (f, _) = open_checked(&p, "log", u64::MAX)?;
        let mut v = Vec::new();
        f.take(bytes).read_to_end(&mut v)?;
        Ok(String::from_utf8_lossy(&v).into_owned())
    })
    .unwrap_or_default()
}

/// Checks that `path` (a clip an extractor will read) is a regular file, and returns
/// its size. Nothing is read.
pub fn check_regular(path: &Path, what: &str) -> Result<u64> {
    let md = std::fs::metadata(path).with_context(|| format!("{what} not found: {}", path.display()))?;
    if !md.file_type().is_file() {
        bail!("{what} {} is {}: give a file (raw planar YUV)", path.display(), kind_of(md.file_type()));
    }
    Ok(md.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_timeouts_parse() {
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("2g"), Ok(2 << 30));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("0").is_err() && parse_size("-1").is_err() && parse_size("x").is_err() && parse_size("99999999999G").is_err());
        assert_eq!(parse_timeout("1.5"), Ok(1.5));
        assert!(parse_timeout("0").is_err() && parse_timeout("nan").is_err());
    }

    #[test]
    fn a_range_is_read_from_a_regular_file_that_holds_it_only() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("dump");
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(read_range(&f, "dump file", 2, 3).unwrap(), b"234");
        let past = format!("{:#}", read_range(&f, "dump file", 8, 3).unwrap_err());
        assert!(past.contains("bytes 8..11 are asked for but the dump file has 10"), "{past}");
        let huge = format!("{:#}", read_range(&f, "dump file", 0, u64::MAX).unwrap_err());
        assert!(huge.contains("over the input size limit"), "{huge}");
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let t0 = std::time::Instant::now();
        let e = format!("{:#}", read_range(&fifo, "dump file", 0, 1).unwrap_err());
        assert!(e.contains("is a FIFO (named pipe): parity reads only regular files"), "{e}");
        assert!(t0.elapsed() < Duration::from_secs(5));
        let z = format!("{:#}", read_range(Path::new("/dev/zero"), "dump file", 0, 1).unwrap_err());
        assert!(z.contains("is a character device"), "{z}");
    }
}
