//! kernels-host's GCC plugin (`plugin/simtwin_gcc_plugin.cpp`): built on first use for
//! the C++ compiler in use, against that compiler's plugin headers (Debian:
//! gcc-12-plugin-dev), and kept in a cache directory keyed by the plugin's source and the
//! compiler's version, since a plugin only loads into the GCC it was built for.
//!
//! Cache: `$SIMTWIN_CACHE_DIR`, else `$XDG_CACHE_HOME/simtwin`, else `~/.cache/simtwin`.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The plugin's source, built into every kernels-host.
pub const SOURCE: &str = include_str!("../plugin/simtwin_gcc_plugin.cpp");

/// The plugin's base name (GCC derives `-fplugin-arg-<name>-...` from it).
pub const NAME: &str = "simtwin_gcc_plugin";

pub(crate) fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("SIMTWIN_CACHE_DIR").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(d).join("simtwin"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/simtwin"))
}

fn output(cxx: &str, args: &[&str]) -> Result<String, String> {
    let o = Command::new(cxx).args(args).output().map_err(|e| format!("cannot run {cxx}: {e}"))?;
    if !o.status.success() {
        return Err(format!("{cxx} {}: {}", args.join(" "), String::from_utf8_lossy(&o.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// The plugin for `cxx`, built if the cache does not hold it yet (`fallback_dir` when no
/// cache directory is writable). An error says why it cannot be built (no plugin
/// headers, not GCC, ...).
pub fn get(cxx: &str, fallback_dir: &Path) -> Result<PathBuf, String> {
    let version = output(cxx, &["-dumpfullversion"])?;
    let machine = output(cxx, &["-dumpmachine"])?;
    let plugin_dir = output(cxx, &["-print-file-name=plugin"])?;
    let headers = Path::new(&plugin_dir).join("include");
    if !headers.join("gcc-plugin.h").is_file() {
        return Err(format!(
            "{cxx} {version} has no plugin headers in {} (Debian: apt-get install gcc-{}-plugin-dev)",
            headers.display(),
            version.split('.').next().unwrap_or("12")
        ));
    }
    let mut h = Sha256::new();
    h.update(SOURCE.as_bytes());
    h.update(format!("{cxx}|{version}|{machine}|{plugin_dir}").as_bytes());
    let key = format!("{:x}", h.finalize());
    let dirs = cache_dir().into_iter().chain(std::iter::once(fallback_dir.to_path_buf()));
    let mut last_err = String::new();
    for base in dirs {
        let dir = base.join(format!("gcc-plugin-{}", &key[..16]));
        let so = dir.join(format!("{NAME}.so"));
        if so.is_file() {
            return Ok(so);
        }
        if let Err(e) = std::fs::create_dir_all(&dir) {
            last_err = format!("{}: {e}", dir.display());
            continue;
        }
        let src = dir.join(format!("{NAME}.{}.cpp", std::process::id()));
        let tmp = dir.join(format!("{NAME}.{}.so", std::process::id()));
        if let Err(e) = std::fs::write(&src, SOURCE) {
            last_err = format!("{}: {e}", src.display());
            continue;
        }
        let o = Command::new(cxx)
            .args(["-shared", "-fPIC", "-fno-rtti", "-O2", "-std=gnu++17"])
            .arg("-I")
            .arg(&headers)
            .arg(&src)
            .arg("-o")
            .arg(&tmp)
            .output()
            .map_err(|e| format!("cannot run {cxx}: {e}"))?;
        let _ = std::fs::remove_file(&src);
        if !o.status.success() {
            let _ = std::fs::remove_file(&tmp);
            return Err(format!("building the GCC plugin failed:\n{}", String::from_utf8_lossy(&o.stderr)));
        }
        // Another build may have won the race: either file is the same plugin.
        std::fs::rename(&tmp, &so).map_err(|e| format!("{}: {e}", so.display()))?;
        return Ok(so);
    }
    Err(format!("no writable directory for the GCC plugin ({last_err})"))
}
