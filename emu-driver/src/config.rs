//! The environment contract (DESIGN.md §7), read once at cuInit. Bad values and
//! variables whose feature is not built yet are refused with a message: cuInit then
//! fails and every later call answers CUDA_ERROR_NOT_INITIALIZED.

use crate::cu::*;
use crate::exec::HazardMode;
use std::path::PathBuf;

#[derive(Clone, Debug)]
pub struct Config {
    /// EMU_CUDA_KERNELS: directories (scanned for *.simtwin.json) or manifest files.
    pub kernels: Vec<PathBuf>,
    /// EMU_CUDA_COUNTS: counters file, `%p` replaced by the process id.
    pub counts: Option<String>,
    /// EMU_CUDA_DEVICE: device profile name.
    pub device: String,
    pub hazards: HazardMode,
    /// EMU_CUDA_STACK: bytes of stack per CUDA thread fiber.
    pub stack_size: usize,
    pub log: LogLevel,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Off,
    Error,
    Warn,
    Info,
    Calls,
}

pub const DEFAULT_STACK: usize = 256 * 1024;

/// A refusal: the message printed, and the code cuInit answers.
pub struct Refusal {
    pub code: CUresult,
    pub message: String,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn not_built(name: &str, value: &str, what: &str) -> Refusal {
    Refusal {
        code: CUDA_ERROR_NOT_SUPPORTED,
        message: format!("{name}={value}: {what} is not built yet in this simtwin; unset {name}"),
    }
}

fn bad(name: &str, value: &str, expected: &str) -> Refusal {
    Refusal { code: CUDA_ERROR_INVALID_VALUE, message: format!("{name}={value}: expected {expected}") }
}

pub fn parse_size(text: &str) -> Option<usize> {
    let t = text.trim();
    let (num, mul) = match t.chars().last()? {
        'k' | 'K' => (&t[..t.len() - 1], 1024),
        'm' | 'M' => (&t[..t.len() - 1], 1024 * 1024),
        _ => (t, 1),
    };
    num.parse::<usize>().ok()?.checked_mul(mul)
}

impl Config {
    pub fn from_env() -> Result<Config, Refusal> {
        let kernels = var("EMU_CUDA_KERNELS")
            .map(|v| v.split(':').filter(|s| !s.is_empty()).map(PathBuf::from).collect())
            .unwrap_or_default();
        let counts = var("EMU_CUDA_COUNTS");
        let device = var("EMU_CUDA_DEVICE").unwrap_or_else(|| "h200".into());
        if crate::profile::by_name(&device).is_none() {
            return Err(bad("EMU_CUDA_DEVICE", &device, &format!("one of: {}", crate::profile::names().join(", "))));
        }
        if let Some(w) = var("EMU_CUDA_WORKERS") {
            match w.parse::<u32>() {
                Ok(1) => {}
                Ok(n) if n > 1 => return Err(not_built("EMU_CUDA_WORKERS", &w, "running blocks on several workers")),
                _ => return Err(bad("EMU_CUDA_WORKERS", &w, "a positive integer")),
            }
        }
        if let Some(o) = var("EMU_CUDA_BLOCK_ORDER") {
            match o.as_str() {
                "forward" => {}
                "reverse" => return Err(not_built("EMU_CUDA_BLOCK_ORDER", &o, "running blocks in reverse order")),
                s if s.starts_with("shuffle") => {
                    return Err(not_built("EMU_CUDA_BLOCK_ORDER", &o, "running blocks in shuffled order"))
                }
                _ => return Err(bad("EMU_CUDA_BLOCK_ORDER", &o, "forward, reverse or shuffle:SEED")),
            }
        }
        let hazards = match var("EMU_CUDA_HAZARDS").as_deref() {
            None | Some("warn") => HazardMode::Warn,
            Some("error") => HazardMode::Error,
            Some(v) => return Err(bad("EMU_CUDA_HAZARDS", v, "warn or error")),
        };
        let stack_size = match var("EMU_CUDA_STACK") {
            None => DEFAULT_STACK,
            Some(v) => match parse_size(&v) {
                Some(n) if n >= 16 * 1024 && n <= 64 * 1024 * 1024 => n,
                _ => return Err(bad("EMU_CUDA_STACK", &v, "a size between 16K and 64M (e.g. 256K)")),
            },
        };
        if let Some(v) = var("EMU_CUDA_REAL") {
            return Err(not_built("EMU_CUDA_REAL", &v, "pass-through to a real driver"));
        }
        if let Some(v) = var("EMU_CUDA_FAIL") {
            return Err(not_built("EMU_CUDA_FAIL", &v, "fault injection"));
        }
        let log = log_level_from_env().map_err(|v| bad("EMU_CUDA_LOG", &v, "off, error, warn, info or calls"))?;
        Ok(Config { kernels, counts, device, hazards, stack_size, log })
    }
}

/// EMU_CUDA_LOG is read on its own too, so that messages before cuInit honour it.
pub fn log_level_from_env() -> Result<LogLevel, String> {
    match var("EMU_CUDA_LOG").as_deref() {
        None | Some("warn") => Ok(LogLevel::Warn),
        Some("off") => Ok(LogLevel::Off),
        Some("error") => Ok(LogLevel::Error),
        Some("info") => Ok(LogLevel::Info),
        Some("calls") => Ok(LogLevel::Calls),
        Some(v) => Err(v.to_string()),
    }
}
