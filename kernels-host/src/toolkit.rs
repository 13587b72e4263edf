//! The user's CUDA toolkit: the nvcc that builds the real module images (run for the
//! kernel-list cross-check, see `nvcc_check.rs`) and the toolkit's type headers,
//! which device code sees through `<cuda.h>` and `<cuda_runtime_api.h>` as it does with
//! nvcc.
//!
//! The headers are not put on the include path wholesale: most of the toolkit's headers
//! are device-function implementations for nvcc's own front end. A build gets a directory
//! of symlinks to the type headers only ([`TYPE_HEADERS`]), placed after every other
//! include directory (`-idirafter`); the shim's `cuda.h` reaches the real one with
//! `#include_next`, and the quoted includes inside the real headers resolve in that
//! directory first, then in the shim (its own `crt/host_defines.h` and `vector_types.h`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The toolkit headers kernels-host reads: types, enums and declarations of the driver
/// and runtime APIs, nothing that implements device functions.
pub const TYPE_HEADERS: [&str; 14] = [
    "cuda.h",
    "cudaTypedefs.h",
    "cudaProfiler.h",
    "cudaProfilerTypedefs.h",
    "driver_types.h",
    "driver_functions.h",
    "cuda_runtime_api.h",
    "cuda_device_runtime_api.h",
    "builtin_types.h",
    "device_types.h",
    "surface_types.h",
    "texture_types.h",
    "library_types.h",
    "cuComplex.h",
];

fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

/// The PyPI CUDA package's directory (`nvidia/cu13`), if Python has it.
fn pypi_cuda_dir() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args(["-c", "import nvidia.cu13, os; print(list(nvidia.cu13.__path__)[0])"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    dir.is_dir().then_some(dir)
}

/// Finds nvcc: `explicit`, else `$NVCC`, else `$SIMTWIN_NVCC`, else the PyPI package's
/// (`nvidia-cuda-nvcc`, as scripts/setup installs it), else `nvcc` on PATH, else
/// /usr/local/cuda/bin/nvcc. The one order of the workspace: scripts/nvcc-path, which
/// every script calls, follows it (tests/nvcc_finder.rs checks they agree). A variable
/// naming no executable is an error, not a reason to look further.
pub fn find_nvcc(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = explicit {
        return if executable(p) { Ok(p.to_path_buf()) } else { Err(format!("{}: not an executable nvcc", p.display())) };
    }
    for var in ["NVCC", "SIMTWIN_NVCC"] {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            let p = PathBuf::from(v);
            return if executable(&p) { Ok(p) } else { Err(format!("${var} = {}: not an executable nvcc", p.display())) };
        }
    }
    if let Some(d) = pypi_cuda_dir() {
        let p = d.join("bin/nvcc");
        if executable(&p) {
            return Ok(p);
        }
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path).filter(|d| !d.as_os_str().is_empty()).chain([PathBuf::from("/usr/local/cuda/bin")]) {
        let p = dir.join("nvcc");
        if executable(&p) {
            return Ok(p);
        }
    }
    Err("nvcc not found (looked at $NVCC, $SIMTWIN_NVCC, the nvidia-cuda-nvcc Python package, PATH and /usr/local/cuda/bin): run scripts/setup or set NVCC".into())
}

/// The toolkit's include directory (the one holding cuda.h): `$SIMTWIN_CUDA_INCLUDE`,
/// else `include/` beside nvcc's `bin/`, else the PyPI package's, else /usr/local/cuda's.
pub fn find_include(nvcc: Option<&Path>) -> Option<PathBuf> {
    if let Some(v) = std::env::var_os("SIMTWIN_CUDA_INCLUDE").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(v));
    }
    let mut candidates = Vec::new();
    if let Some(bin) = nvcc.and_then(|n| n.parent()) {
        candidates.push(bin.join("../include"));
        candidates.push(bin.join("../targets/x86_64-linux/include"));
    }
    if let Some(d) = pypi_cuda_dir() {
        candidates.push(d.join("include"));
    }
    candidates.push(PathBuf::from("/usr/local/cuda/include"));
    candidates.into_iter().find(|d| d.join("cuda.h").is_file()).map(|d| std::fs::canonicalize(&d).unwrap_or(d))
}

/// Fills `dest` with symlinks to the [`TYPE_HEADERS`] of `include` that exist (replacing
/// what was there). Returns how many it made.
pub fn make_header_dir(include: &Path, dest: &Path) -> std::io::Result<usize> {
    if dest.exists() {
        std::fs::remove_dir_all(dest)?;
    }
    std::fs::create_dir_all(dest)?;
    let mut n = 0;
    for h in TYPE_HEADERS {
        let src = include.join(h);
        if src.is_file() {
            std::os::unix::fs::symlink(&src, dest.join(h))?;
            n += 1;
        }
    }
    Ok(n)
}
