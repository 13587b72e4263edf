//! kernels-host: CUDA C++ compiled as host code.
//!
//! An unmodified `.cu` file is preprocessed with the shim headers of `include/`
//! (force-included, as nvcc force-includes cuda_runtime.h), rewritten (see
//! [`rewrite`]), compiled with g++ into its own shared library together with the
//! per-library runtime (directed rounding, printf/assert/trap routing), and described by
//! a manifest. The emulated driver dlopens the library and talks to it only through
//! `include/simtwin/abi.h`.

pub mod build;
pub mod compdb;
pub mod flags;
pub mod lex;
pub mod manifest;
pub mod module;
pub mod nvcc_check;
pub mod ptx;
pub mod rewrite;
pub mod toolkit;

use std::path::PathBuf;

/// The shim include directory: `SIMTWIN_KERNELS_HOST_INCLUDE`, else `<exe dir>/../include`
/// if it exists (an installed layout), else this crate's `include/`.
pub fn include_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("SIMTWIN_KERNELS_HOST_INCLUDE") {
        return PathBuf::from(p);
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(dir) = exe.parent().and_then(|d| d.parent()) {
            let inc = dir.join("include");
            if inc.join("simtwin").join("prelude.h").is_file() {
                return inc;
            }
        }
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/include"))
}

/// The g++ flags every kernel translation unit is compiled with.
///
/// -ffp-contract=off / -fno-fast-math: IEEE operations as written (nvcc would contract
/// a*b+c into FMA by default; the manifest records that difference).
/// -fsanitize=integer-divide-by-zero,shift-exponent,float-cast-overflow with our own
/// handlers: a division by zero, an over-wide shift or a float-to-int cast of NaN or an
/// out-of-range value (where host and device disagree) ends the launch with an error
/// naming file and line instead of crashing or computing something else.
/// -fno-ipa-icf: identical kernels keep distinct addresses, so each resolves to its own
/// symbol.
/// -fno-semantic-interposition: an exported kernel cannot be replaced by another
/// library's (the library is linked -Bsymbolic anyway), so g++ may inline its body into
/// the generated runner while the kernel keeps its exported symbol for the manifest.
pub fn host_cxx_flags() -> Vec<String> {
    [
        "-O2",
        "-ffp-contract=off",
        "-fno-fast-math",
        "-fPIC",
        "-fno-ipa-icf",
        "-fno-semantic-interposition",
        "-fsanitize=integer-divide-by-zero,shift-exponent,float-cast-overflow",
        "-fno-sanitize-recover=all",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Flags for the per-library runtime (simtwin_runtime.cpp).
pub fn runtime_cxx_flags() -> Vec<String> {
    ["-O2", "-fPIC", "-frounding-math", "-fno-fast-math", "-ffp-contract=off"].iter().map(|s| s.to_string()).collect()
}

/// Source of the per-library runtime, built into every kernel library.
pub const RUNTIME_SOURCE: &str = include_str!("../runtime/simtwin_runtime.cpp");

/// Source of libsimtwin-tls.so.2, the context slot's library (see that file).
pub const TLS_SOURCE: &str = include_str!("../runtime/simtwin_tls.cpp");

/// File name (and SONAME) of the context slot's library, written beside the kernel
/// libraries of every output directory.
pub const TLS_LIBRARY: &str = "libsimtwin-tls.so.2";
