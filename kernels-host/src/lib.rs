//! kernels-host: CUDA C++ compiled as host code.
//!
//! An unmodified `.cu` file is preprocessed with the shim headers of `include/`
//! (force-included, as nvcc force-includes cuda_runtime.h), rewritten (see
//! `rewrite.rs`), compiled with g++ into its own shared library together with the
//! per-library runtime (directed rounding, printf/assert/trap routing), and described by
//! a manifest. The emulated driver dlopens the library and talks to it only through
//! `include/simtwin/abi.h`.

#![warn(missing_docs)]

pub mod build;
pub(crate) mod compdb;
pub(crate) mod flags;
pub(crate) mod lex;
pub mod libdevice;
pub mod manifest;
pub mod module;
pub(crate) mod nvcc_check;
pub(crate) mod plugin;
pub(crate) mod ptx;
pub(crate) mod rewrite;
pub mod sass;
pub mod toolkit;

use std::path::PathBuf;

/// The shim include directory: `SIMTWIN_KERNELS_HOST_INCLUDE`, else `<exe dir>/../include`
/// if it exists (an installed layout: a package, target/simtwin), else the source tree's
/// `kernels-host/include` above the running binary (target/release/kernels-host and the
/// test binaries in target/release/deps). No path of the build machine is compiled in:
/// a package works wherever it is unpacked. When none is found, the install layout's
/// path is returned, and the compiler names it when a header is missing.
pub fn include_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("SIMTWIN_KERNELS_HOST_INCLUDE") {
        return PathBuf::from(p);
    }
    let has_prelude = |d: &std::path::Path| d.join("simtwin").join("prelude.h").is_file();
    let exe = std::env::current_exe().ok();
    let installed = exe.as_deref().and_then(|e| e.parent()).and_then(|d| d.parent()).map(|d| d.join("include"));
    if let Some(inc) = installed.as_ref().filter(|i| has_prelude(i)) {
        return inc.clone();
    }
    if let Some(e) = &exe {
        if let Some(src) = e.ancestors().skip(1).map(|a| a.join("kernels-host").join("include")).find(|i| has_prelude(i)) {
            return src;
        }
    }
    installed.unwrap_or_else(|| PathBuf::from("include"))
}

/// The g++ flags every kernel translation unit is compiled with (besides the device-
/// defined results' plugin, see [`checked_results_flags`]).
///
/// -ffp-contract=off / -fno-fast-math: IEEE operations as written (nvcc would contract
/// a*b+c into FMA by default; the manifest records that difference).
/// -fno-ipa-icf: identical kernels keep distinct addresses, so each resolves to its own
/// symbol.
/// -fno-semantic-interposition: an exported kernel cannot be replaced by another
/// library's (the library is linked -Bsymbolic anyway), so g++ may inline its body into
/// the generated runner while the kernel keeps its exported symbol for the manifest.
/// -fno-strict-aliasing: CUDA code type-puns freely (a uint2 load read back through a
/// uint16_t pointer, a uint32_t array stored as uint2) and nvcc's device code reads the
/// bytes stored; g++ -O2 would drop such reads as undefined (it made a VMAF fork's
/// vif_cuda score 1.0 at scales 1-3 where the H200 and the CPU give 0.9957).
pub fn host_cxx_flags() -> Vec<String> {
    ["-O2", "-ffp-contract=off", "-fno-fast-math", "-fPIC", "-fno-ipa-icf", "-fno-semantic-interposition", "-fno-strict-aliasing"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// How a kernel library gets the device's results where C++ leaves them undefined
/// (float-to-integer conversions of NaN or out-of-range values, integer division by zero,
/// over-wide shifts): with kernels-host's GCC plugin (`plugin`), which calls the shim's
/// emulating helpers; without it (a compiler without plugin headers), GCC's
/// -fsanitize checks with the runtime's handlers, which end the launch with an error
/// naming file and line instead.
pub fn checked_results_flags(plugin: Option<&std::path::Path>) -> Vec<String> {
    match plugin {
        Some(p) => vec![format!("-fplugin={}", p.display()), format!("-fplugin-arg-{}-skip={}", plugin::NAME, include_dir().display())],
        None => vec![
            "-fsanitize=integer-divide-by-zero,shift-exponent,float-cast-overflow".to_string(),
            "-fno-sanitize-recover=all".to_string(),
        ],
    }
}

/// The extra g++ flags of a library's checking variant (`build --checks`): GCC's
/// ThreadSanitizer instrumentation without function entry/exit hooks (every load, store
/// and atomic of kernel code calls a `__tsan_*` hook, defined by
/// `runtime/simtwin_checks.cpp`, not libtsan), and debug info, from which the driver
/// names the file:line of each access it reports.
pub fn checks_cxx_flags() -> Vec<String> {
    ["-fsanitize=thread", "--param", "tsan-instrument-func-entry-exit=0", "-g"].iter().map(|s| s.to_string()).collect()
}

/// Flags for the per-library runtime (simtwin_runtime.cpp).
pub fn runtime_cxx_flags() -> Vec<String> {
    ["-O2", "-fPIC", "-frounding-math", "-fno-fast-math", "-ffp-contract=off", "-fno-math-errno"].iter().map(|s| s.to_string()).collect()
}

/// Source of the per-library runtime, built into every kernel library.
pub const RUNTIME_SOURCE: &str = include_str!("../runtime/simtwin_runtime.cpp");

/// Source of the checking hooks linked into checking variants (`build --checks`).
pub const CHECKS_SOURCE: &str = include_str!("../runtime/simtwin_checks.cpp");

/// Source of libsimtwin-tls.so.2, the context slot's library (see that file).
pub const TLS_SOURCE: &str = include_str!("../runtime/simtwin_tls.cpp");

/// File name (and SONAME) of the context slot's library, written beside the kernel
/// libraries of every output directory.
pub const TLS_LIBRARY: &str = "libsimtwin-tls.so.2";
