//! Where CUDA extractors run: the emulated driver (LD_LIBRARY_PATH swapped to simtwin's
//! driver directory) or the real device, reached through simtwin's pass-through (the
//! same directory first, EMU_CUDA_REAL naming the system's driver: every call goes to
//! the device and is counted in the emulated driver's counters schema); driver probing
//! (which libcuda.so.1 would load, whether it is simtwin's emulated driver, how many
//! devices it sees).

use crate::exit::Skip;
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The symbol simtwin's emulated driver exports so that tools can recognise it.
pub const MARKER: &str = "simtwin_emulated_driver";

/// `--device` of frames, transfers and bench.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DeviceMode {
    /// simtwin's emulated driver (no GPU needed)
    Emulated,
    /// the system's driver and a real GPU, through simtwin's pass-through (exit 77 when none is present)
    Real,
    /// both, side by side (frames: columns cpu, cuda-emulated, cuda-real)
    Both,
}

impl DeviceMode {
    pub(crate) fn emulated(self) -> bool {
        matches!(self, DeviceMode::Emulated | DeviceMode::Both)
    }
    pub(crate) fn real(self) -> bool {
        matches!(self, DeviceMode::Real | DeviceMode::Both)
    }
    pub(crate) fn name(self) -> &'static str {
        match self {
            DeviceMode::Emulated => "emulated",
            DeviceMode::Real => "real",
            DeviceMode::Both => "both",
        }
    }
}

/// Locates simtwin's build or install layout (lib/libcuda.so.1, bin/, include/):
/// `--simtwin DIR`, else $SIMTWIN_DIR, else the install the running binary belongs to
/// (`<prefix>/bin/parity` beside `<prefix>/lib/libcuda.so.1`: an unpacked package or
/// target/simtwin), else `target/simtwin` in the current directory or a parent.
pub fn find_simtwin(explicit: Option<&Path>) -> Result<PathBuf> {
    let p = find_simtwin_raw(explicit)?;
    Ok(std::fs::canonicalize(&p).unwrap_or(p))
}

fn find_simtwin_raw(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        if !p.is_dir() {
            bail!("--simtwin {}: no such directory (build it with scripts/build)", p.display());
        }
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("SIMTWIN_DIR").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        if !p.is_dir() {
            bail!("SIMTWIN_DIR={}: no such directory", p.display());
        }
        return Ok(p);
    }
    if let Some(root) = install_of_this_binary() {
        return Ok(root);
    }
    if let Ok(cwd) = std::env::current_dir() {
        for d in cwd.ancestors() {
            let c = d.join("target/simtwin");
            if c.join("lib").is_dir() || c.join("bin").is_dir() {
                return Ok(c);
            }
        }
    }
    bail!("cannot find simtwin's build (target/simtwin) or install: run scripts/build, or pass --simtwin DIR / set SIMTWIN_DIR")
}

/// `<prefix>` when the running binary is `<prefix>/bin/NAME` and `<prefix>/lib/libcuda.so.1` exists.
fn install_of_this_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?;
    let root = bin.parent()?;
    (bin.file_name()? == "bin" && root.join("lib/libcuda.so.1").exists()).then(|| root.to_path_buf())
}

/// The kernel libraries of a CUDA run (EMU_CUDA_KERNELS): `--kernels`, else what the
/// environment already names (e.g. set by `simtwin run --kernels` or `simtwin env`),
/// else the fixtures' `<simtwin>/kernels`. Each directory of the list must exist.
pub(crate) fn resolve_kernels(simtwin: &Path, explicit: Option<&Path>) -> Result<String> {
    let (list, from) = match (explicit, std::env::var("EMU_CUDA_KERNELS").ok().filter(|v| !v.is_empty())) {
        (Some(k), _) => (k.display().to_string(), "--kernels"),
        (None, Some(v)) => (v, "EMU_CUDA_KERNELS"),
        (None, None) => (simtwin.join("kernels").display().to_string(), "the default"),
    };
    for d in list.split(':').filter(|d| !d.is_empty()) {
        if !Path::new(d).exists() {
            bail!("kernel directory {d} ({from}) does not exist: run scripts/build (or pass --kernels DIR)");
        }
    }
    Ok(list)
}

/// What `parity driver-info` reports about the libcuda.so.1 a process would load.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DriverInfo {
    /// libcuda.so.1 could be loaded.
    pub loaded: bool,
    /// The file the dynamic loader picked.
    pub path: Option<String>,
    /// It exports `simtwin_emulated_driver`.
    pub emulated: bool,
    /// cuInit(0)'s result (not called for the emulated driver).
    pub init: Option<i32>,
    /// cuDeviceGetCount's answer.
    pub devices: Option<i32>,
    /// Why loading or a driver call failed, if one did.
    pub error: Option<String>,
}

/// Loads libcuda.so.1 in this process (with this process's LD_LIBRARY_PATH) and reports
/// what it is. Used by `parity driver-info`, which the other commands run as a child
/// process with the extractor's environment. cuInit is called on a real driver when
/// `init`, on the emulated one only when `init_emulated` (to see whether it accepts
/// the EMU_CUDA_* settings of a run).
pub fn driver_info_here(init: bool, init_emulated: bool) -> DriverInfo {
    let mut info = DriverInfo::default();
    // SAFETY: loading the CUDA driver runs its initialisers; this is what any CUDA
    // program does, and it happens in a short-lived probe process.
    let lib = match unsafe { libloading::Library::new("libcuda.so.1") } {
        Ok(l) => l,
        Err(e) => {
            info.error = Some(format!("cannot load libcuda.so.1: {e}"));
            return info;
        }
    };
    info.loaded = true;
    // SAFETY: symbols of the libcuda.so.1 just loaded: the marker is a static byte, cuInit
    // has the driver API's signature; `lib` outlives every use.
    unsafe {
        let marker = lib.get::<*const u8>(MARKER.as_bytes()).ok().map(|s| *s);
        info.emulated = marker.is_some();
        let cu_init = lib.get::<unsafe extern "C" fn(u32) -> i32>(b"cuInit").ok();
        let addr: Option<*const libc::c_void> = match (&cu_init, marker) {
            (Some(f), _) => Some(**f as *const libc::c_void),
            (None, Some(m)) => Some(m as *const libc::c_void),
            _ => None,
        };
        if let Some(a) = addr {
            let mut dl: libc::Dl_info = std::mem::zeroed();
            if libc::dladdr(a, &mut dl) != 0 && !dl.dli_fname.is_null() {
                let p = std::ffi::CStr::from_ptr(dl.dli_fname).to_string_lossy().into_owned();
                info.path = Some(std::fs::canonicalize(&p).map(|c| c.display().to_string()).unwrap_or(p));
            }
        }
        if (init && !info.emulated) || (init_emulated && info.emulated) {
            match cu_init {
                None => info.error = Some("libcuda.so.1 has no cuInit".into()),
                Some(f) => {
                    let rc = f(0);
                    info.init = Some(rc);
                    if rc == 0 {
                        if let Ok(count) = lib.get::<unsafe extern "C" fn(*mut i32) -> i32>(b"cuDeviceGetCount") {
                            let mut n = 0i32;
                            let rc2 = count(&mut n);
                            info.devices = Some(if rc2 == 0 { n } else { 0 });
                            if rc2 != 0 {
                                info.error = Some(format!("cuDeviceGetCount failed with CUDA error {rc2}"));
                            }
                        }
                    } else {
                        info.error = Some(format!(
                            "cuInit(0) failed with CUDA error {rc}{}",
                            if rc == 100 { " (CUDA_ERROR_NO_DEVICE)" } else { "" }
                        ));
                    }
                }
            }
        }
    }
    // Keep the driver loaded until exit: unloading a driver with live threads is unsafe.
    std::mem::forget(lib);
    info
}

/// The arguments of `driver-info` (parity's command, simtwin's hidden one: the probe
/// runs whichever binary it is in).
#[derive(clap::Args, Debug, Clone)]
pub struct DriverInfoArgs {
    /// Print one JSON line
    #[arg(long)]
    pub json: bool,
    /// Call cuInit on simtwin's emulated driver too (does it accept the EMU_CUDA_* settings?)
    #[arg(long, hide = true)]
    pub init_emulated: bool,
}

/// `driver-info` of parity and simtwin (the probe runs it in a child process): prints
/// what [`driver_info_here`] found, as one JSON line with `json`; returns the exit code
/// (0 a driver with a device or the emulated driver, 77 none).
pub fn print_driver_info(json: bool, init_emulated: bool) -> i32 {
    let info = driver_info_here(true, init_emulated);
    if json {
        println!("{}", serde_json::to_string(&info).unwrap_or_default());
    } else {
        println!("libcuda.so.1: {}", info.path.as_deref().unwrap_or(if info.loaded { "(loaded, path unknown)" } else { "not found" }));
        println!("simtwin emulated driver: {}", if info.emulated { "yes" } else { "no" });
        if let Some(i) = info.init {
            println!("cuInit: {i}");
        }
        if let Some(d) = info.devices {
            println!("devices: {d}");
        }
        if let Some(e) = &info.error {
            println!("note: {e}");
        }
    }
    if info.emulated || info.devices.unwrap_or(0) > 0 {
        0
    } else {
        77
    }
}

/// Time limit of the driver probe (loading a driver and cuInit take well under a second).
const PROBE_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Runs `parity driver-info --json` as a child with the given environment changes.
pub fn probe(env: &[(String, String)]) -> Result<DriverInfo> {
    probe_with(env, false).map(|(i, _)| i)
}

/// The probe, optionally calling cuInit on the emulated driver too; also returns the
/// probe's stderr (where the driver explains a refusal).
fn probe_with(env: &[(String, String)], init_emulated: bool) -> Result<(DriverInfo, String)> {
    let exe = std::env::current_exe().context("cannot locate the parity binary for the driver probe")?;
    let mut cmd = Command::new(exe);
    cmd.args(["driver-info", "--json"]);
    if init_emulated {
        cmd.arg("--init-emulated");
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.env_remove("EMU_CUDA_COUNTS");
    let out = crate::run::output_limited(&mut cmd, "the driver probe (parity driver-info)", PROBE_LIMIT)?;
    let text = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    let line = text
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .ok_or_else(|| anyhow!("the driver probe printed no result (exit status {:?}); stderr: {stderr}", out.status.code()))?;
    Ok((serde_json::from_str(line)?, stderr))
}

/// The name of a CUDA error code parity reports: cuda.h's name from the workspace's one
/// list of result codes (`simtwin_abi::cuda::RESULTS`), "CUDA error" for a code it lacks.
pub fn cuda_error_name(rc: i32) -> &'static str {
    simtwin_abi::cuda::RESULTS.iter().find(|r| i64::from(r.0) == i64::from(rc)).map_or("CUDA error", |r| r.1.trim_end_matches('\0'))
}

/// The emulated driver refused a setting of the run at cuInit (`code`: what cuInit
/// answered, 801 CUDA_ERROR_NOT_SUPPORTED for a feature this driver does not have).
#[derive(Debug)]
pub(crate) struct Refused {
    pub code: i32,
    pub message: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Refused {}

/// CUDA_ERROR_NOT_SUPPORTED: what the driver answers for a feature it does not have.
pub const NOT_SUPPORTED: i32 = simtwin_abi::cuda::CUDA_ERROR_NOT_SUPPORTED as i32;

/// Checks that the emulated driver accepts the settings in `env` (e.g.
/// EMU_CUDA_BLOCK_ORDER=reverse, EMU_CUDA_FAIL=...) by calling its cuInit in a probe
/// process: a driver without the feature refuses it there, and the run would fail (or,
/// worse, a program that falls back to the CPU would pass) for that reason alone.
pub(crate) fn check_emulated_accepts(emu: &EmulatedEnv, env: &[(String, String)]) -> Result<()> {
    let mut vars: Vec<(String, String)> = emu.vars.iter().filter(|(k, _)| k != "EMU_CUDA_COUNTS").cloned().collect();
    vars.extend(env.iter().cloned());
    let (info, stderr) = probe_with(&vars, true)?;
    let settings = env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ");
    match info.init {
        Some(0) => Ok(()),
        Some(rc) => {
            let why: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
            let what = if settings.is_empty() { "does not initialise".to_string() } else { format!("refuses {settings}") };
            let message = format!(
                "the emulated driver {} {what}: cuInit answered {rc} ({}){}",
                emu.driver_path,
                cuda_error_name(rc),
                if why.is_empty() { String::new() } else { format!(": {}", why.join("; ")) }
            );
            Err(Refused { code: rc, message }.into())
        }
        None => bail!(
            "cannot check whether the emulated driver accepts {settings}: {}",
            info.error.unwrap_or_else(|| "cuInit was not called".into())
        ),
    }
}

/// `dir` prepended to the `:`-separated list in the environment variable `var` (the
/// list's other entries kept in their order, a copy of `dir` among them dropped).
pub(crate) fn prepend_path(dir: &Path, var: &str) -> String {
    let d = dir.display().to_string();
    let old = std::env::var(var).unwrap_or_default();
    std::iter::once(d.as_str()).chain(old.split(':').filter(|x| !x.is_empty() && *x != d)).collect::<Vec<_>>().join(":")
}

/// Environment for a CUDA extractor on the emulated driver.
pub(crate) struct EmulatedEnv {
    pub vars: Vec<(String, String)>,
    pub lib_dir: PathBuf,
    pub driver_path: String,
}

/// The environment of a CUDA run on the emulated driver in `simtwin`'s build, with
/// `kernels` (default: its `kernels/`) and the counters file pattern; checks that the
/// loader really picks simtwin's driver there.
pub(crate) fn emulated_env(simtwin: &Path, kernels: Option<&Path>, counts_pattern: &Path) -> Result<EmulatedEnv> {
    let kernels = resolve_kernels(simtwin, kernels)?;
    driver_env(simtwin, Some(kernels), counts_pattern)
}

/// The environment that puts `simtwin`'s driver first on LD_LIBRARY_PATH (keeping the
/// entries already there), with the kernel list (None: the environment's own, if any)
/// and the counters file pattern; checks that the loader really picks simtwin's driver.
pub(crate) fn driver_env(simtwin: &Path, kernels: Option<String>, counts_pattern: &Path) -> Result<EmulatedEnv> {
    let lib_dir = simtwin.join("lib");
    let driver = lib_dir.join("libcuda.so.1");
    if !driver.exists() {
        bail!("the emulated driver {} does not exist: run scripts/build (or pass --simtwin DIR)", driver.display());
    }
    let mut vars = vec![("LD_LIBRARY_PATH".to_string(), prepend_path(&lib_dir, "LD_LIBRARY_PATH"))];
    if let Some(k) = kernels {
        vars.push(("EMU_CUDA_KERNELS".to_string(), k));
    }
    vars.push(("EMU_CUDA_COUNTS".to_string(), counts_pattern.display().to_string()));
    let info = probe(&vars[..1])?;
    if !info.loaded {
        bail!("the emulated driver in {} cannot be loaded: {}", lib_dir.display(), info.error.unwrap_or_default());
    }
    let path = info.path.clone().unwrap_or_default();
    if !info.emulated {
        bail!(
            "with LD_LIBRARY_PATH={} the loader picks {path}, which is not simtwin's emulated driver (no {MARKER} symbol)",
            lib_dir.display()
        );
    }
    Ok(EmulatedEnv { vars, lib_dir, driver_path: path })
}

/// Checks that a real device is present on the system driver, refusing simtwin's own
/// emulated driver. No driver or no device is a skip (exit 77).
pub fn check_real() -> Result<DriverInfo> {
    let info = probe(&[])?;
    if !info.loaded {
        return Err(Skip(format!("no CUDA driver: {}", info.error.clone().unwrap_or_else(|| "libcuda.so.1 not found".into()))).into());
    }
    if info.emulated {
        bail!(
            "refusing --device real: the libcuda.so.1 the loader picks ({}) is simtwin's emulated driver (it exports {MARKER}); remove its directory from LD_LIBRARY_PATH",
            info.path.clone().unwrap_or_default()
        );
    }
    if info.init != Some(0) {
        return Err(Skip(format!("no usable CUDA device: {}", info.error.clone().unwrap_or_else(|| "cuInit failed".into()))).into());
    }
    if info.devices.unwrap_or(0) <= 0 {
        return Err(Skip("no CUDA device present (cuDeviceGetCount = 0)".into()).into());
    }
    Ok(info)
}

/// Settings that exist only on the emulated driver. A run on the real device does not
/// get them: simtwin's pass-through would refuse a block order it cannot choose, and the
/// others change nothing on a device.
pub const EMULATION_ONLY: &[&str] = &[
    "EMU_CUDA_BLOCK_ORDER",
    "EMU_CUDA_WORKERS",
    "EMU_CUDA_ASYNC",
    "EMU_CUDA_HAZARDS",
    "EMU_CUDA_STACK",
    "EMU_CUDA_DEVICE",
    "EMU_CUDA_WATCHDOG",
    "EMU_CUDA_CHECKS",
];

/// Splits extra environment for a real-device run into what it gets and what it does
/// not (the emulation-only settings, for the report).
pub fn for_real_device(extra: &[(String, String)]) -> (Vec<(String, String)>, Vec<String>) {
    let (dropped, kept): (Vec<_>, Vec<_>) = extra.iter().cloned().partition(|(k, _)| EMULATION_ONLY.contains(&k.as_str()));
    (kept, dropped.into_iter().map(|(k, v)| format!("{k}={v}")).collect())
}

/// The real device: the system's libcuda.so.1 (as the dynamic loader finds it in this
/// process's environment) with at least one device.
#[derive(Debug, Clone)]
pub(crate) struct RealDevice {
    /// The driver file (canonical path), handed to the pass-through as EMU_CUDA_REAL.
    pub path: String,
    pub devices: i32,
}

impl RealDevice {
    /// Finds the real driver and a device on it: no driver or no device is a skip
    /// (exit 77); simtwin's own driver is refused.
    pub fn find() -> Result<RealDevice> {
        let info = check_real()?;
        let path = info.path.ok_or_else(|| {
            anyhow!(
                "the real driver loaded, but its file cannot be located (dladdr gave no path), so the pass-through cannot be pointed at it"
            )
        })?;
        Ok(RealDevice { path, devices: info.devices.unwrap_or(0) })
    }

    /// How reports name a run on it.
    pub fn label(&self) -> String {
        format!("pass-through to {} ({} device(s))", self.path, self.devices)
    }

    /// Environment of one run on the real device: simtwin's driver directory first on
    /// LD_LIBRARY_PATH, EMU_CUDA_REAL = the real driver, the counters to
    /// `counts_pattern` (EMU_CUDA_KERNELS too: the real driver ignores it). Refuses a
    /// "real" driver that is simtwin's own file.
    pub fn env(&self, simtwin: &Path, kernels: Option<&Path>, counts_pattern: &Path) -> Result<EmulatedEnv> {
        let mut emu = emulated_env(simtwin, kernels, counts_pattern)?;
        let same = |a: &str, b: &str| std::fs::canonicalize(a).ok().zip(std::fs::canonicalize(b).ok()).is_some_and(|(x, y)| x == y);
        if same(&self.path, &emu.driver_path) {
            bail!("refusing the real device: the driver found ({}) is simtwin's emulated driver itself", self.path);
        }
        emu.vars.push(("EMU_CUDA_REAL".to_string(), self.path.clone()));
        Ok(emu)
    }

    /// Checks, once before the runs, that simtwin's pass-through reaches the real driver:
    /// cuInit and cuDeviceGetCount through it in a probe process.
    pub fn check_passthrough(&self, simtwin: &Path, kernels: Option<&Path>) -> Result<()> {
        let tmp = std::env::temp_dir().join("parity-probe-%p.json");
        let emu = self.env(simtwin, kernels, &tmp)?;
        let vars: Vec<(String, String)> = emu.vars.iter().filter(|(k, _)| k != "EMU_CUDA_COUNTS").cloned().collect();
        let (info, stderr) = probe_with(&vars, true)?;
        let why = || {
            if stderr.is_empty() {
                String::new()
            } else {
                format!(": {}", stderr.lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join("; "))
            }
        };
        if !info.emulated {
            bail!(
                "the pass-through probe did not load simtwin's driver from {} (it loaded {})",
                emu.lib_dir.display(),
                info.path.unwrap_or_default()
            );
        }
        match info.init {
            Some(0) if info.devices.unwrap_or(0) > 0 => Ok(()),
            Some(0) => bail!("through simtwin's pass-through ({}) the real driver {} sees no device{}", emu.driver_path, self.path, why()),
            Some(rc) => bail!(
                "simtwin's pass-through ({}) to the real driver {} fails: cuInit answered {rc} ({}){}",
                emu.driver_path,
                self.path,
                cuda_error_name(rc),
                why()
            ),
            None => bail!(
                "cannot check simtwin's pass-through to {}: {}",
                self.path,
                info.error.unwrap_or_else(|| "cuInit was not called".into())
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_names_come_from_the_one_list_of_result_codes() {
        assert_eq!(cuda_error_name(0), "CUDA_SUCCESS");
        assert_eq!(cuda_error_name(NOT_SUPPORTED), "CUDA_ERROR_NOT_SUPPORTED");
        assert_eq!(cuda_error_name(719), "CUDA_ERROR_LAUNCH_FAILED");
        assert_eq!(cuda_error_name(12345), "CUDA error");
        assert_eq!(cuda_error_name(-1), "CUDA error");
    }
}
