//! The emulated driver's settings as command-line options, shared by parity's commands
//! (`--block-order`, `--workers`, `--async`, `--checks`) and by the `simtwin` front door,
//! which adds the rest of the `EMU_CUDA_*` contract (docs/driver.md).
//! Each option becomes one environment variable; values are checked here where the
//! contract is a closed list, and by the driver's cuInit otherwise.

use anyhow::{bail, Context, Result};
use std::path::PathBuf;

/// The settings parity's extractor commands accept.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct EmuSettings {
    /// Block order on the emulated driver: forward, reverse, shuffle:SEED (EMU_CUDA_BLOCK_ORDER)
    #[arg(long)]
    pub block_order: Option<String>,
    /// Worker threads of the emulated driver (EMU_CUDA_WORKERS)
    #[arg(long)]
    pub workers: Option<u32>,
    /// When asynchronous work runs on the emulated driver (EMU_CUDA_ASYNC): eager (at the
    /// call) or deferred (only when the program synchronises: shows reads of results
    /// before synchronisation), e.g. --async deferred
    #[arg(long = "async", value_name = "eager|deferred", value_parser = ["eager", "deferred"])]
    pub async_mode: Option<String>,
    /// Checking modes of the emulated driver (EMU_CUDA_CHECKS), comma separated: race
    /// (report shared-memory races: needs kernels built with `kernels-host build
    /// --checks`), poison (fill shared memory with 0xFF bytes at each block start),
    /// pointers (device memory out of host code's reach: a host dereference of a device
    /// pointer kills the program with a report); a race report is a hazard, e.g. --checks race
    #[arg(long, value_name = "race,poison,pointers", value_parser = parse_checks)]
    pub checks: Option<String>,
}

impl EmuSettings {
    /// The environment these settings give (only what was set).
    pub fn env(&self) -> Vec<(String, String)> {
        let mut e = Vec::new();
        if let Some(o) = &self.block_order {
            e.push(("EMU_CUDA_BLOCK_ORDER".into(), o.clone()));
        }
        if let Some(w) = self.workers {
            e.push(("EMU_CUDA_WORKERS".into(), w.to_string()));
        }
        if let Some(a) = &self.async_mode {
            e.push(("EMU_CUDA_ASYNC".into(), a.clone()));
        }
        if let Some(c) = &self.checks {
            e.push(("EMU_CUDA_CHECKS".into(), c.clone()));
        }
        e
    }
}

/// `--checks`: `race`, `poison`, `pointers`, comma separated.
pub fn parse_checks(s: &str) -> std::result::Result<String, String> {
    let items: Vec<&str> = s.split(',').map(str::trim).collect();
    if items.is_empty() || items.iter().any(|i| !matches!(*i, "race" | "poison" | "pointers")) {
        return Err(format!("'{s}': expected a comma-separated list of race, poison, pointers"));
    }
    Ok(items.join(","))
}

/// Every setting of the driver, for `simtwin run` and `simtwin env`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct DriverSettings {
    /// Host kernel libraries: a directory of `kernels-host build` output or a manifest
    /// file (repeatable; EMU_CUDA_KERNELS, put before the directories it already names)
    #[arg(long, short = 'k', value_name = "DIR")]
    pub kernels: Vec<PathBuf>,
    /// Hazards (divergent barriers, shuffles from exited lanes, races, ...): warn (report,
    /// go on) or error (the launch fails with 719 as on a device that traps; simtwin then
    /// exits 81 even if the program ignored the error) (EMU_CUDA_HAZARDS)
    #[arg(long, value_name = "warn|error", value_parser = ["warn", "error"])]
    pub hazards: Option<String>,
    /// Which code runs a module's kernels (EMU_CUDA_EXEC): auto (a host twin when one
    /// matches, else the image's PTX), ptx (always the PTX), twin (only twins)
    #[arg(long = "exec", value_name = "auto|ptx|twin", value_parser = ["auto", "ptx", "twin"])]
    pub exec: Option<String>,
    /// The settings parity's extractor commands share.
    #[command(flatten)]
    pub emu: EmuSettings,
    /// Device profile (EMU_CUDA_DEVICE), e.g. h200
    #[arg(long, value_name = "PROFILE")]
    pub device: Option<String>,
    /// Stack per CUDA-thread fiber, 16K..64M (EMU_CUDA_STACK), e.g. 1M
    #[arg(long, value_name = "SIZE")]
    pub stack: Option<String>,
    /// Seconds a launch may go without progress before it ends with 702; 0 disables it
    /// (EMU_CUDA_WATCHDOG)
    #[arg(long, value_name = "SECONDS")]
    pub watchdog: Option<String>,
    /// The driver's log level on stderr (EMU_CUDA_LOG)
    #[arg(long, value_name = "LEVEL", value_parser = ["off", "error", "warn", "info", "calls"])]
    pub log: Option<String>,
    /// Fault injection: the K-th call of entry point NAME fails (EMU_CUDA_FAIL), e.g. cuMemAlloc_v2:3
    #[arg(long, value_name = "NAME:K,...")]
    pub fail: Option<String>,
    /// Pass-through to a real driver: every call goes to this libcuda.so.1 and is counted
    /// in the same counters (EMU_CUDA_REAL)
    #[arg(long, value_name = "LIBCUDA")]
    pub real: Option<PathBuf>,
    /// Any other driver setting, EMU_CUDA_NAME=VALUE (repeatable), e.g. --set EMU_CUDA_TRACE=1
    #[arg(long = "set", value_name = "EMU_CUDA_NAME=VALUE")]
    pub set: Vec<String>,
}

impl DriverSettings {
    /// The settings as environment variables, EMU_CUDA_KERNELS first (with the
    /// directories the environment already names after the new ones). Kernel paths are
    /// made absolute: the program may change directory.
    pub fn env(&self) -> Result<Vec<(String, String)>> {
        let mut e = Vec::new();
        if !self.kernels.is_empty() {
            let mut dirs = Vec::new();
            for k in &self.kernels {
                let abs = if k.is_absolute() { k.clone() } else { std::env::current_dir()?.join(k) };
                if !abs.exists() {
                    eprintln!("simtwin: warning: --kernels {}: does not exist (yet); the driver scans it when a module loads", k.display());
                }
                dirs.push(abs.display().to_string());
            }
            if let Ok(old) = std::env::var("EMU_CUDA_KERNELS") {
                dirs.extend(old.split(':').filter(|d| !d.is_empty()).map(String::from));
            }
            e.push(("EMU_CUDA_KERNELS".into(), dirs.join(":")));
        }
        let mut put = |k: &str, v: &Option<String>| {
            if let Some(v) = v {
                e.push((k.to_string(), v.clone()));
            }
        };
        put("EMU_CUDA_HAZARDS", &self.hazards);
        put("EMU_CUDA_EXEC", &self.exec);
        put("EMU_CUDA_DEVICE", &self.device);
        put("EMU_CUDA_STACK", &self.stack);
        put("EMU_CUDA_WATCHDOG", &self.watchdog);
        put("EMU_CUDA_LOG", &self.log);
        put("EMU_CUDA_FAIL", &self.fail);
        put("EMU_CUDA_REAL", &self.real.as_ref().map(|p| p.display().to_string()));
        e.extend(self.emu.env());
        for kv in &self.set {
            let (k, v) = kv.split_once('=').with_context(|| format!("--set {kv}: expected EMU_CUDA_NAME=VALUE"))?;
            if !k.starts_with("EMU_CUDA_")
                || k.len() == "EMU_CUDA_".len()
                || !k.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
            {
                bail!("--set {kv}: {k:?} is not a driver setting (EMU_CUDA_ and capitals, e.g. EMU_CUDA_EXEC)");
            }
            if k == "EMU_CUDA_COUNTS" {
                bail!("--set {kv}: simtwin gives every process its own counters file itself (see --report)");
            }
            e.retain(|(x, _)| x != k);
            e.push((k.to_string(), v.to_string()));
        }
        Ok(e)
    }
}

/// The value a variable will have in the program's environment: `env` (what simtwin
/// sets) over the inherited environment.
pub fn effective(env: &[(String, String)], key: &str) -> Option<String> {
    env.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.clone()).or_else(|| std::env::var(key).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_become_variables_and_bad_ones_are_refused() {
        let s = DriverSettings {
            hazards: Some("error".into()),
            emu: EmuSettings { workers: Some(2), ..Default::default() },
            set: vec!["EMU_CUDA_EXEC=ptx".into(), "EMU_CUDA_HAZARDS=warn".into()],
            ..Default::default()
        };
        let e = s.env().unwrap();
        assert!(e.contains(&("EMU_CUDA_WORKERS".into(), "2".into())), "{e:?}");
        assert!(e.contains(&("EMU_CUDA_EXEC".into(), "ptx".into())), "{e:?}");
        // --set comes last and replaces an option's value
        assert_eq!(effective(&e, "EMU_CUDA_HAZARDS").as_deref(), Some("warn"));
        for bad in ["PATH=/x", "EMU_CUDA_=1", "EMU_CUDA_counts=1", "EMU_CUDA_COUNTS=/tmp/x", "nothing"] {
            let s = DriverSettings { set: vec![bad.into()], ..Default::default() };
            assert!(s.env().is_err(), "{bad}");
        }
        assert!(parse_checks("race,poison").is_ok() && parse_checks("race,nope").is_err());
    }
}
