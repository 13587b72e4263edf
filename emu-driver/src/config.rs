//! The environment contract (docs/driver.md): the one reader of `EMU_CUDA_*`, parsed once
//! per process. Bad values and variables whose feature is not built yet are refused
//! with a message: cuInit then fails and every later call answers
//! CUDA_ERROR_NOT_INITIALIZED. The logger and the counters file read their settings
//! from here too (before cuInit as well).

use crate::cu::*;
use std::path::PathBuf;

#[derive(Clone, Debug)]
pub struct Config {
    /// EMU_CUDA_KERNELS: directories (scanned for *.simtwin.json) or manifest files.
    pub kernels: Vec<PathBuf>,
    /// EMU_CUDA_COUNTS: counters file, `%p` already replaced by the process id.
    pub counts: Option<String>,
    /// EMU_CUDA_DEVICE: device profile name.
    pub device: String,
    pub hazards: HazardMode,
    /// EMU_CUDA_STACK: bytes of stack per CUDA thread fiber.
    pub stack_size: usize,
    pub log: LogLevel,
    /// EMU_CUDA_FAIL: (entry point, 1-based call) pairs that fail.
    pub fail: Vec<(String, u64)>,
    /// EMU_CUDA_REAL: the real libcuda.so.1 every call is forwarded to (pass-through).
    pub real: Option<PathBuf>,
    /// EMU_CUDA_ASYNC=deferred: asynchronous work runs only when something forces it.
    pub deferred: bool,
    /// EMU_CUDA_WORKERS: OS threads running blocks.
    pub workers: usize,
    /// EMU_CUDA_BLOCK_ORDER.
    pub block_order: BlockOrder,
    /// EMU_CUDA_WATCHDOG: a launch without progress for this long ends with 702.
    pub watchdog: std::time::Duration,
    /// EMU_CUDA_CHECKS: the opt-in checking modes.
    pub checks: Checks,
    /// EMU_CUDA_PREEMPT: the time slice after which a thread spinning in kernel code
    /// is preempted (zero: never).
    pub preempt: std::time::Duration,
    /// EMU_CUDA_EXEC: how a module's kernels run (host twins or the image's PTX).
    pub exec: ExecMode,
    /// EMU_CUDA_THREAD_LOOPS: whether PTX mode runs a barrier-uniform kernel's threads as
    /// loops between barriers.
    pub thread_loops: ThreadLoops,
    /// EMU_CUDA_SEGMENT_VECTORS: which loop-path kernels run their first segment a warp
    /// at a time as two vectors of 16 lanes (simtwin-ptx `SegmentVectors`).
    pub segment_vectors: simtwin_ptx::SegmentVectors,
    /// EMU_CUDA_TRACE and its EMU_CUDA_TRACE_* limits: the launch trace (see `trace`).
    pub trace: Option<TraceConfig>,
    /// CUDA's own CUDA_MODULE_LOADING=EAGER (any case): a PTX-mode kernel the device's
    /// driver cannot compile fails its module's load, not its cuModuleGetFunction.
    pub eager_loading: bool,
}

/// EMU_CUDA_TRACE=PATH (`%p` = process id) and the limits that go with it.
#[derive(Clone, Debug, Default)]
pub struct TraceConfig {
    /// The trace file (`%p` replaced); buffer dumps go to `PATH.dump`.
    pub path: String,
    /// EMU_CUDA_TRACE_FRAMES=N or A-B: only these frames (0-based, inclusive).
    pub frames: Option<(u64, u64)>,
    /// EMU_CUDA_TRACE_KERNELS: only launches of kernels matching one of these
    /// (`*` wildcards).
    pub kernels: Vec<String>,
    /// EMU_CUDA_TRACE_DUMP: launch numbers (`n`) whose written buffers are dumped
    /// whole, and copy numbers (`cN`) whose bytes are; `all` dumps everything.
    pub dump_launches: Vec<u64>,
    pub dump_copies: Vec<u64>,
    pub dump_all: bool,
    /// EMU_CUDA_TRACE_FRAME_START=PATTERN: a launch of a matching kernel starts a
    /// frame (instead of the device-to-host rule).
    pub frame_start: Option<String>,
    /// The raw settings, for the trace's header.
    pub raw: Vec<(String, String)>,
}

/// Parses the EMU_CUDA_TRACE_* variables (given EMU_CUDA_TRACE itself).
fn parse_trace(path: String) -> Result<TraceConfig, Refusal> {
    let mut t = TraceConfig { path: path.replace("%p", &std::process::id().to_string()), ..TraceConfig::default() };
    for name in ["EMU_CUDA_TRACE_FRAMES", "EMU_CUDA_TRACE_KERNELS", "EMU_CUDA_TRACE_DUMP", "EMU_CUDA_TRACE_FRAME_START"] {
        if let Some(v) = var(name) {
            t.raw.push((name.to_string(), v));
        }
    }
    if let Some(v) = var("EMU_CUDA_TRACE_FRAMES") {
        let range = match v.split_once('-') {
            Some((a, b)) => a.trim().parse::<u64>().ok().zip(b.trim().parse::<u64>().ok()).filter(|(a, b)| a <= b),
            None => v.trim().parse::<u64>().ok().filter(|&n| n > 0).map(|n| (0, n - 1)),
        };
        t.frames =
            Some(range.ok_or_else(|| bad("EMU_CUDA_TRACE_FRAMES", &v, "N (the first N frames, N >= 1) or A-B (frames A to B, 0-based)"))?);
    }
    if let Some(v) = var("EMU_CUDA_TRACE_KERNELS") {
        t.kernels = v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect();
        if t.kernels.is_empty() {
            return Err(bad("EMU_CUDA_TRACE_KERNELS", &v, "a comma-separated list of kernel names (`*` wildcards)"));
        }
    }
    if let Some(v) = var("EMU_CUDA_TRACE_DUMP") {
        for w in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if w == "all" {
                t.dump_all = true;
            } else if let Some(Ok(n)) = w.strip_prefix('c').map(str::parse::<u64>) {
                t.dump_copies.push(n);
            } else if let Ok(n) = w.parse::<u64>() {
                t.dump_launches.push(n);
            } else {
                return Err(bad("EMU_CUDA_TRACE_DUMP", &v, "a comma-separated list of launch numbers, cN copy numbers, or all"));
            }
        }
    }
    t.frame_start = var("EMU_CUDA_TRACE_FRAME_START");
    Ok(t)
}

/// EMU_CUDA_EXEC: which code runs a module's kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecMode {
    /// A host twin when one matches the module (EMU_CUDA_KERNELS), else the image's PTX.
    Auto,
    /// Always the image's PTX, translated and compiled at load.
    Ptx,
    /// Only host twins (a module without one fails to load).
    Twin,
}

/// EMU_CUDA_THREAD_LOOPS: PTX mode's loop path (simtwin-ptx `uniform`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadLoops {
    /// The loop path for every kernel the translator proved barrier-uniform (default).
    Auto,
    /// Fibers for every kernel.
    Off,
    /// As `auto`, and each kernel that keeps fibers is reported (warn) at load, with why.
    On,
}

/// EMU_CUDA_CHECKS: a comma-separated list of checking modes, each off unless named.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checks {
    /// `pointers`: device memory in an arena host code cannot touch (see `arena`).
    pub pointers: bool,
    /// `race`: shared-memory race detection (kernels run from their checking libraries,
    /// `kernels-host build --checks`; see `exec::race`).
    pub race: bool,
    /// `poison`: shared memory filled with 0xFF bytes at each block start.
    pub poison: bool,
}

/// The words EMU_CUDA_CHECKS accepts (`off` alone turns everything off).
pub const CHECK_WORDS: &[&str] = &["pointers", "race", "poison"];

/// Parses EMU_CUDA_CHECKS (comma-separated words of [`CHECK_WORDS`], blanks around
/// words ignored; `off` or `none` alone for nothing).
pub fn parse_checks(text: &str) -> Result<Checks, String> {
    let mut c = Checks::default();
    if matches!(text.trim(), "off" | "none") {
        return Ok(c);
    }
    for word in text.split(',').map(str::trim) {
        match word {
            "pointers" => c.pointers = true,
            "race" => c.race = true,
            "poison" => c.poison = true,
            w => return Err(format!("unknown check {w:?}")),
        }
    }
    Ok(c)
}

// The executor's settings are defined here, at the bottom, and re-exported by `exec`:
// the environment contract is read before anything runs (the logger needs it), so it
// cannot depend on the executor.

/// The order blocks run in (`EMU_CUDA_BLOCK_ORDER`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BlockOrder {
    /// Linear block index order, x fastest (the default).
    #[default]
    Forward,
    /// The last block first.
    Reverse,
    /// A permutation determined by the seed.
    Shuffle(u64),
}

/// What `EMU_CUDA_HAZARDS` selects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HazardMode {
    /// Report and go on as a device would (the default).
    #[default]
    Warn,
    /// The first hazard fails the launch with `exec::HAZARD_ERROR_CODE`.
    Error,
}

/// Default fiber stack size (EMU_CUDA_STACK unset).
pub const DEFAULT_STACK_SIZE: usize = 256 * 1024;
/// Smaller requests are raised to this.
pub const MIN_STACK_SIZE: usize = 16 * 1024;
/// Default watchdog: a launch in which no thread finishes or starts for this long ends
/// with CUDA_ERROR_LAUNCH_TIMEOUT.
pub const DEFAULT_WATCHDOG: std::time::Duration = std::time::Duration::from_secs(10);
/// Default time slice: a thread that runs kernel code this long without a runtime call
/// (a spin-wait on a flag another thread sets) is preempted, so that others run.
pub const DEFAULT_PREEMPT: std::time::Duration = std::time::Duration::from_millis(2);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Off,
    Error,
    Warn,
    Info,
    Calls,
}

/// Most EMU_CUDA_WORKERS accepted.
pub const MAX_WORKERS: usize = 256;

/// Largest EMU_CUDA_STACK accepted.
pub const MAX_STACK_SIZE: usize = 64 * 1024 * 1024;

/// A refusal: the message printed, and the code cuInit answers.
#[derive(Clone, Debug)]
pub struct Refusal {
    pub code: CUresult,
    pub message: String,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
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
        let kernels =
            var("EMU_CUDA_KERNELS").map(|v| v.split(':').filter(|s| !s.is_empty()).map(PathBuf::from).collect()).unwrap_or_default();
        let counts = var("EMU_CUDA_COUNTS").map(|t| t.replace("%p", &std::process::id().to_string()));
        let device = var("EMU_CUDA_DEVICE").unwrap_or_else(|| "h200".into());
        if crate::profile::by_name(&device).is_none() {
            return Err(bad("EMU_CUDA_DEVICE", &device, &format!("one of: {}", crate::profile::names().join(", "))));
        }
        let workers = match var("EMU_CUDA_WORKERS") {
            None => 1,
            Some(w) => match w.parse::<usize>() {
                Ok(n) if (1..=MAX_WORKERS).contains(&n) => n,
                _ => return Err(bad("EMU_CUDA_WORKERS", &w, &format!("an integer from 1 to {MAX_WORKERS}"))),
            },
        };
        let block_order = match var("EMU_CUDA_BLOCK_ORDER").as_deref() {
            None | Some("forward") => BlockOrder::Forward,
            Some("reverse") => BlockOrder::Reverse,
            Some(o) => match o.strip_prefix("shuffle:").map(|seed| seed.parse::<u64>()) {
                Some(Ok(seed)) => BlockOrder::Shuffle(seed),
                _ => return Err(bad("EMU_CUDA_BLOCK_ORDER", o, "forward, reverse or shuffle:SEED (SEED an unsigned integer)")),
            },
        };
        let watchdog = match var("EMU_CUDA_WATCHDOG") {
            None => DEFAULT_WATCHDOG,
            Some(v) => match v.parse::<f64>() {
                Ok(s) if (0.0..=86_400.0).contains(&s) => std::time::Duration::from_secs_f64(s),
                _ => return Err(bad("EMU_CUDA_WATCHDOG", &v, "seconds (0 disables it), e.g. 30")),
            },
        };
        let preempt = match var("EMU_CUDA_PREEMPT") {
            None => DEFAULT_PREEMPT,
            Some(v) => match v.parse::<f64>() {
                Ok(ms) if ms == 0.0 || (0.1..=10_000.0).contains(&ms) => std::time::Duration::from_secs_f64(ms / 1000.0),
                _ => return Err(bad("EMU_CUDA_PREEMPT", &v, "milliseconds between 0.1 and 10000 (0: never preempt), e.g. 2")),
            },
        };
        let hazards = match var("EMU_CUDA_HAZARDS").as_deref() {
            None | Some("warn") => HazardMode::Warn,
            Some("error") => HazardMode::Error,
            Some(v) => return Err(bad("EMU_CUDA_HAZARDS", v, "warn or error")),
        };
        let stack_size = match var("EMU_CUDA_STACK") {
            None => DEFAULT_STACK_SIZE,
            Some(v) => match parse_size(&v) {
                Some(n) if (MIN_STACK_SIZE..=MAX_STACK_SIZE).contains(&n) => n,
                _ => return Err(bad("EMU_CUDA_STACK", &v, "a size between 16K and 64M (e.g. 256K)")),
            },
        };
        let real = var("EMU_CUDA_REAL").map(PathBuf::from);
        if let Some(r) = &real {
            if !r.is_file() {
                return Err(bad("EMU_CUDA_REAL", &r.display().to_string(), "the path of a real libcuda.so.1"));
            }
        }
        let deferred = match var("EMU_CUDA_ASYNC").as_deref() {
            None | Some("eager") => false,
            Some("deferred") => true,
            Some(v) => return Err(bad("EMU_CUDA_ASYNC", v, "eager or deferred")),
        };
        let fail = match var("EMU_CUDA_FAIL") {
            None => Vec::new(),
            Some(v) => crate::inject::parse(&v).map_err(|e| bad("EMU_CUDA_FAIL", &v, &format!("NAME:K[,NAME:K...] ({e})")))?,
        };
        let checks = match var("EMU_CUDA_CHECKS") {
            None => Checks::default(),
            Some(v) => parse_checks(&v)
                .map_err(|e| bad("EMU_CUDA_CHECKS", &v, &format!("a comma-separated list of: {} ({e})", CHECK_WORDS.join(", "))))?,
        };
        if checks.pointers && real.is_some() {
            return Err(Refusal {
                code: CUDA_ERROR_INVALID_VALUE,
                message: "EMU_CUDA_CHECKS=pointers cannot be combined with EMU_CUDA_REAL: in pass-through, device memory is the real device's and already out of host code's reach".into(),
            });
        }
        let log = log_level_from_env().map_err(|v| bad("EMU_CUDA_LOG", &v, "off, error, warn, info or calls"))?;
        if (checks.race || checks.poison) && real.is_some() {
            return Err(Refusal {
                code: CUDA_ERROR_INVALID_VALUE,
                message: "EMU_CUDA_CHECKS: the shared-memory checks (race, poison) run in the emulated executor; with EMU_CUDA_REAL the kernels run on the real device (use compute-sanitizer there)".into(),
            });
        }
        let exec = match var("EMU_CUDA_EXEC").as_deref() {
            None | Some("auto") => ExecMode::Auto,
            Some("ptx") => ExecMode::Ptx,
            Some("twin") => ExecMode::Twin,
            Some(other) => return Err(bad("EMU_CUDA_EXEC", other, "auto, ptx or twin")),
        };
        if exec == ExecMode::Ptx && checks.race {
            return Err(Refusal {
                code: CUDA_ERROR_INVALID_VALUE,
                message:
                    "EMU_CUDA_CHECKS=race needs host twins built with `kernels-host build --checks`; it cannot run with EMU_CUDA_EXEC=ptx"
                        .into(),
            });
        }
        let thread_loops = match var("EMU_CUDA_THREAD_LOOPS").as_deref() {
            None | Some("auto") => ThreadLoops::Auto,
            Some("off") => ThreadLoops::Off,
            Some("on") => ThreadLoops::On,
            Some(other) => return Err(bad("EMU_CUDA_THREAD_LOOPS", other, "auto, off or on")),
        };
        let segment_vectors = match var("EMU_CUDA_SEGMENT_VECTORS").as_deref() {
            None | Some("on") => simtwin_ptx::SegmentVectors::Paying,
            Some("off") => simtwin_ptx::SegmentVectors::Off,
            Some("all") => simtwin_ptx::SegmentVectors::All,
            Some(other) => return Err(bad("EMU_CUDA_SEGMENT_VECTORS", other, "on, off or all")),
        };
        let trace = match var("EMU_CUDA_TRACE") {
            Some(p) => Some(parse_trace(p)?),
            None => {
                if let Some(n) = ["EMU_CUDA_TRACE_FRAMES", "EMU_CUDA_TRACE_KERNELS", "EMU_CUDA_TRACE_DUMP", "EMU_CUDA_TRACE_FRAME_START"]
                    .iter()
                    .find(|n| var(n).is_some())
                {
                    return Err(Refusal {
                        code: CUDA_ERROR_INVALID_VALUE,
                        message: format!("{n} limits the launch trace, but EMU_CUDA_TRACE (the trace file) is not set"),
                    });
                }
                None
            }
        };
        let eager_loading = var("CUDA_MODULE_LOADING").is_some_and(|v| v.eq_ignore_ascii_case("EAGER"));
        Ok(Config {
            eager_loading,
            kernels,
            counts,
            device,
            hazards,
            stack_size,
            log,
            fail,
            real,
            deferred,
            workers,
            block_order,
            watchdog,
            checks,
            preempt,
            exec,
            thread_loops,
            segment_vectors,
            trace,
        })
    }
}

/// The process's configuration, parsed at first use.
pub fn get() -> Result<&'static Config, &'static Refusal> {
    static CONFIG: std::sync::OnceLock<Result<Config, Refusal>> = std::sync::OnceLock::new();
    CONFIG.get_or_init(Config::from_env).as_ref()
}

/// The counters file's path (`%p` replaced), when EMU_CUDA_COUNTS asks for one. Read
/// even when the rest of the configuration was refused: the counters still say so.
pub fn counts_path() -> Option<String> {
    match get() {
        Ok(c) => c.counts.clone(),
        Err(_) => {
            static PATH: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
            PATH.get_or_init(|| var("EMU_CUDA_COUNTS").map(|t| t.replace("%p", &std::process::id().to_string()))).clone()
        }
    }
}

/// EMU_CUDA_LOG (a bad value falls back to `warn`; cuInit refuses it).
pub fn log_level() -> LogLevel {
    match get() {
        Ok(c) => c.log,
        Err(_) => log_level_from_env().unwrap_or(LogLevel::Warn),
    }
}

fn log_level_from_env() -> Result<LogLevel, String> {
    match var("EMU_CUDA_LOG").as_deref() {
        None | Some("warn") => Ok(LogLevel::Warn),
        Some("off") => Ok(LogLevel::Off),
        Some("error") => Ok(LogLevel::Error),
        Some("info") => Ok(LogLevel::Info),
        Some("calls") => Ok(LogLevel::Calls),
        Some(v) => Err(v.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{parse_checks, Checks};

    #[test]
    fn checks_parse_as_a_list() {
        assert_eq!(parse_checks("race").unwrap(), Checks { race: true, ..Checks::default() });
        assert_eq!(parse_checks("poison, race").unwrap(), Checks { race: true, poison: true, pointers: false });
        assert_eq!(parse_checks("pointers,race").unwrap(), Checks { race: true, poison: false, pointers: true });
        assert_eq!(parse_checks("off").unwrap(), Checks::default());
        assert!(parse_checks("races").unwrap_err().contains("unknown check \"races\""));
        assert!(parse_checks("race,off").is_err());
    }
}
