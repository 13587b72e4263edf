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

/// scripts/nvcc-path, the workspace's one toolkit finder (the search orders for nvcc and
/// for the include directory are written there and nowhere else), compiled in: an
/// installed kernels-host runs it as the scripts do, without the repository.
pub const FINDER: &str = include_str!("../../scripts/nvcc-path");

/// Runs [`FINDER`] with `args` under bash; `nvcc`, when given, as its `$NVCC`. Its one line
/// of output, or its complaint.
fn run_finder(args: &[&str], nvcc: Option<&Path>) -> Result<PathBuf, String> {
    let mut c = Command::new("bash");
    c.arg("-c").arg(FINDER).arg("nvcc-path").args(args);
    if let Some(p) = nvcc {
        c.env("NVCC", p);
    }
    let out = c.output().map_err(|e| format!("cannot run bash to look for the CUDA toolkit: {e}"))?;
    let said = |b: &[u8]| String::from_utf8_lossy(b).trim().to_string();
    if out.status.success() {
        Ok(PathBuf::from(said(&out.stdout)))
    } else {
        Err(said(&out.stderr))
    }
}

/// Finds nvcc as scripts/nvcc-path does (`$NVCC`, `$SIMTWIN_NVCC`, the nvidia-cuda-nvcc
/// Python package, PATH, /usr/local/cuda/bin); `explicit` comes first. A path or variable
/// naming no executable is an error, not a reason to look further.
pub fn find_nvcc(explicit: Option<&Path>) -> Result<PathBuf, String> {
    // `explicit` travels as the finder's $NVCC; a refusal names the path alone, as the
    // caller passed it (`--nvcc`), not the variable.
    run_finder(&[], explicit).map_err(|e| match explicit {
        Some(_) => e.strip_prefix("$NVCC = ").map_or(e.clone(), str::to_string),
        None => e,
    })
}

/// The toolkit's include directory (the one holding cuda.h), as `scripts/nvcc-path
/// --include` finds it (`$SIMTWIN_CUDA_INCLUDE`, beside `nvcc`'s `bin/`, the Python
/// package's, /usr/local/cuda's).
pub fn find_include(nvcc: Option<&Path>) -> Result<PathBuf, String> {
    run_finder(&["--include"], nvcc)
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
