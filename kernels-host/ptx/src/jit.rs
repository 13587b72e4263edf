//! Load-time compilation: a translation's C++ into a kernel library, cached.
//!
//! The library is `<cache>/ptx/<key>.so`, where the key hashes the translator version,
//! the generated C++, the runtime sources, the compiler's identity and the flags (the
//! target CPU included: the code is built for the machine it runs on). Concurrent
//! processes are safe: each builds in a private temporary directory and publishes with
//! an atomic rename, so a reader sees a whole library or none. Support files (the
//! runtime objects, libsimtwin-tls.so.2) are cached the same way under their own keys.

use crate::{Options, Translation};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;

/// The instruction semantics header the generated code includes.
pub const PTX_RT_H: &str = include_str!("../runtime/ptx_rt.h");
const ABI_H: &str = include_str!("../../include/simtwin/abi.h");
const SFU_H: &str = include_str!("../../include/simtwin/sfu.h");
const DEVICE_VALUES_H: &str = include_str!("../../include/simtwin/device_values.h");
const RUNTIME_CPP: &str = include_str!("../../runtime/simtwin_runtime.cpp");
const SFU_CPP: &str = include_str!("../../runtime/simtwin_sfu.cpp");
const TLS_CPP: &str = include_str!("../../runtime/simtwin_tls.cpp");

/// Flags of the generated code: IEEE float semantics (no contraction: the translator
/// decides every fusion), two's complement wrap-around, code for this machine.
pub const CXX_FLAGS: &[&str] = &[
    "-O2",
    "-std=c++17",
    "-fPIC",
    "-ffp-contract=off",
    "-fno-fast-math",
    "-fno-strict-aliasing",
    "-fwrapv",
    "-fno-semantic-interposition",
];

fn cxx_flags() -> Vec<&'static str> {
    let mut v: Vec<&str> = CXX_FLAGS.to_vec();
    v.push("-march=native");
    v.push("-w");
    v
}

/// Flags of the runtime objects (directed rounding switches the host's mode).
const RT_FLAGS: &[&str] = &["-O2", "-std=c++17", "-fPIC", "-frounding-math", "-fno-fast-math", "-ffp-contract=off"];

/// Why a library could not be built.
#[derive(Debug, Clone)]
pub enum JitError {
    /// The PTX cannot be translated (invalid, or an instruction simtwin cannot run
    /// faithfully).
    Translate(crate::Error),
    /// No C++ compiler could be run.
    NoCompiler(String),
    /// The compiler rejected the generated code (a translator bug: the message says so).
    Compile(String),
    /// The cache could not be written.
    Io(String),
}

impl std::fmt::Display for JitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JitError::Translate(e) => write!(f, "{e}"),
            JitError::NoCompiler(m) | JitError::Io(m) => f.write_str(m),
            JitError::Compile(m) => {
                write!(f, "{m}\n(simtwin's translator produced C++ the compiler rejects: a simtwin bug; please report it with the PTX)")
            }
        }
    }
}
impl std::error::Error for JitError {}

/// Where and with what to compile.
#[derive(Clone, Debug)]
pub struct JitOptions {
    /// The cache directory (`ptx/` is made inside).
    pub cache_dir: PathBuf,
    /// The C++ compiler.
    pub cxx: String,
}

impl JitOptions {
    /// `$SIMTWIN_CACHE_DIR`, else `$XDG_CACHE_HOME/simtwin`, else `~/.cache/simtwin`, else
    /// the temporary directory; the compiler is `$SIMTWIN_CXX` or `g++`.
    pub fn from_env() -> JitOptions {
        let cache_dir = std::env::var_os("SIMTWIN_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("simtwin")))
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("simtwin")))
            .unwrap_or_else(|| std::env::temp_dir().join("simtwin-cache"));
        let cxx = std::env::var("SIMTWIN_CXX").unwrap_or_else(|_| "g++".into());
        JitOptions { cache_dir, cxx }
    }
}

/// A built library.
#[derive(Clone, Debug)]
pub struct Built {
    /// The library (in the cache).
    pub library: PathBuf,
    /// What the translator produced (kernels, globals, notes).
    pub translation: Translation,
    /// Whether the library came from the cache.
    pub cached: bool,
    /// Milliseconds spent translating.
    pub translate_ms: f64,
    /// Milliseconds spent compiling (0 when cached).
    pub compile_ms: f64,
    /// The cache key.
    pub key: String,
}

fn hex(d: impl AsRef<[u8]>) -> String {
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// The compiler's identity: its version text and the CPU `-march=native` resolves to.
fn compiler_id(cxx: &str) -> Result<String, JitError> {
    static ID: OnceLock<Result<String, JitError>> = OnceLock::new();
    ID.get_or_init(|| {
        let v = Command::new(cxx)
            .arg("--version")
            .output()
            .map_err(|e| JitError::NoCompiler(format!("PTX mode needs a C++ compiler to build the translated kernels: `{cxx}` could not be run ({e}); install g++ or set SIMTWIN_CXX")))?;
        let march = Command::new(cxx).args(["-march=native", "-Q", "--help=target"]).output().map(|o| o.stdout).unwrap_or_default();
        let mut h = Sha256::new();
        h.update(&v.stdout);
        h.update(&march);
        Ok(hex(h.finalize()))
    })
    .clone()
}

fn run(cmd: &mut Command, what: &str) -> Result<(), JitError> {
    let out = cmd.output().map_err(|e| JitError::NoCompiler(format!("{what}: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let mut msg: String = err.lines().take(40).collect::<Vec<_>>().join("\n");
        if err.lines().count() > 40 {
            msg.push_str("\n...");
        }
        return Err(JitError::Compile(format!("{what} failed:\n{msg}")));
    }
    Ok(())
}

/// A private directory for one build, removed when dropped.
struct TempDir(PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
fn temp_dir(parent: &Path) -> Result<TempDir, JitError> {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = parent.join(format!(".build-{}-{n}-{}", std::process::id(), Instant::now().elapsed().as_nanos()));
    std::fs::create_dir_all(&d).map_err(|e| JitError::Io(format!("{}: {e}", d.display())))?;
    Ok(TempDir(d))
}
fn publish(from: &Path, to: &Path) -> Result<(), JitError> {
    std::fs::rename(from, to).map_err(|e| JitError::Io(format!("publishing {}: {e}", to.display())))
}

/// The headers the generated code and the runtime include, in `<dir>/include`.
fn write_headers(dir: &Path) -> Result<PathBuf, JitError> {
    let inc = dir.join("include");
    std::fs::create_dir_all(inc.join("simtwin")).map_err(|e| JitError::Io(format!("{}: {e}", inc.display())))?;
    for (name, text) in
        [("ptx_rt.h", PTX_RT_H), ("simtwin/abi.h", ABI_H), ("simtwin/sfu.h", SFU_H), ("simtwin/device_values.h", DEVICE_VALUES_H)]
    {
        std::fs::write(inc.join(name), text).map_err(|e| JitError::Io(format!("{name}: {e}")))?;
    }
    Ok(inc)
}

/// The support files shared by every library: runtime objects and the context slot's
/// library, built once per (sources, compiler).
struct Support {
    objects: Vec<PathBuf>,
    tls_dir: PathBuf,
}

fn support(ptx_dir: &Path, cxx: &str, cid: &str) -> Result<Support, JitError> {
    let mut h = Sha256::new();
    for s in [RUNTIME_CPP, SFU_CPP, TLS_CPP, ABI_H, SFU_H, DEVICE_VALUES_H] {
        h.update(s.as_bytes());
    }
    h.update(cid.as_bytes());
    for f in RT_FLAGS {
        h.update(f.as_bytes());
    }
    let key = hex(h.finalize());
    let dir = ptx_dir.join(format!("support-{}", &key[..24]));
    let objects = vec![dir.join("simtwin_runtime.o"), dir.join("simtwin_sfu.o")];
    let tls_dir = dir.clone();
    if dir.join("libsimtwin-tls.so.2").is_file() && objects.iter().all(|o| o.is_file()) {
        return Ok(Support { objects, tls_dir });
    }
    let tmp = temp_dir(ptx_dir)?;
    let inc = write_headers(&tmp.0)?;
    for (name, src) in [("simtwin_runtime", RUNTIME_CPP), ("simtwin_sfu", SFU_CPP)] {
        let c = tmp.0.join(format!("{name}.cpp"));
        std::fs::write(&c, src).map_err(|e| JitError::Io(format!("{}: {e}", c.display())))?;
        run(
            Command::new(cxx).args(RT_FLAGS).arg("-I").arg(&inc).arg("-c").arg(&c).arg("-o").arg(tmp.0.join(format!("{name}.o"))),
            &format!("compiling the PTX-mode runtime ({name})"),
        )?;
    }
    let tls = tmp.0.join("simtwin_tls.cpp");
    std::fs::write(&tls, TLS_CPP).map_err(|e| JitError::Io(format!("{}: {e}", tls.display())))?;
    run(
        Command::new(cxx)
            .args(["-O2", "-fPIC", "-shared", "-Wl,-soname,libsimtwin-tls.so.2"])
            .arg(&tls)
            .arg("-o")
            .arg(tmp.0.join("libsimtwin-tls.so.2")),
        "building libsimtwin-tls.so.2",
    )?;
    let _ = std::fs::remove_dir_all(tmp.0.join("include"));
    for f in ["simtwin_runtime.cpp", "simtwin_sfu.cpp", "simtwin_tls.cpp"] {
        let _ = std::fs::remove_file(tmp.0.join(f));
    }
    // Another process may have published it meanwhile: then keep theirs.
    if publish(&tmp.0, &dir).is_err() && !dir.join("libsimtwin-tls.so.2").is_file() {
        return Err(JitError::Io(format!("could not publish {}", dir.display())));
    }
    Ok(Support { objects, tls_dir })
}

/// Translates and compiles (or finds in the cache) a library for `sources`.
pub fn build(sources: &[&str], opts: &Options, jit: &JitOptions) -> Result<Built, JitError> {
    let t0 = Instant::now();
    let translation = crate::translate(sources, opts).map_err(JitError::Translate)?;
    let translate_ms = t0.elapsed().as_secs_f64() * 1e3;
    let cid = compiler_id(&jit.cxx)?;
    let mut h = Sha256::new();
    h.update(crate::TRANSLATOR_VERSION.as_bytes());
    for u in &translation.units {
        h.update(u.as_bytes());
    }
    h.update(PTX_RT_H.as_bytes());
    h.update(cid.as_bytes());
    for f in cxx_flags() {
        h.update(f.as_bytes());
    }
    for s in [RUNTIME_CPP, SFU_CPP, TLS_CPP, ABI_H, SFU_H, DEVICE_VALUES_H] {
        h.update(s.as_bytes());
    }
    let key = hex(h.finalize());
    let ptx_dir = jit.cache_dir.join("ptx");
    std::fs::create_dir_all(&ptx_dir).map_err(|e| JitError::Io(format!("the PTX cache {}: {e}", ptx_dir.display())))?;
    let library = ptx_dir.join(format!("{}.so", &key[..40]));
    if library.is_file() {
        return Ok(Built { library, translation, cached: true, translate_ms, compile_ms: 0.0, key });
    }
    let t1 = Instant::now();
    let sup = support(&ptx_dir, &jit.cxx, &cid)?;
    let tmp = temp_dir(&ptx_dir)?;
    let inc = write_headers(&tmp.0)?;
    // Each unit compiled on its own thread (the host compiler is the cost of a load).
    let build_id = format!("-DBUILD_ID=\"{}\"", &key[..40]);
    let mut objects = Vec::new();
    let mut jobs = Vec::new();
    for (k, unit) in translation.units.iter().enumerate() {
        let cpp = tmp.0.join(format!("module{k}.cpp"));
        std::fs::write(&cpp, unit).map_err(|e| JitError::Io(format!("{}: {e}", cpp.display())))?;
        let obj = tmp.0.join(format!("module{k}.o"));
        objects.push(obj.clone());
        let mut cmd = Command::new(&jit.cxx);
        cmd.args(cxx_flags()).arg(&build_id).arg("-I").arg(&inc).arg("-c").arg(&cpp).arg("-o").arg(&obj);
        let what = format!("compiling the translated PTX of {} (unit {k})", opts.name);
        jobs.push(std::thread::spawn(move || run(&mut cmd, &what)));
    }
    for j in jobs {
        j.join().map_err(|_| JitError::Io("a compile thread panicked".into()))??;
    }
    let so = tmp.0.join("module.so");
    let mut cmd = Command::new(&jit.cxx);
    cmd.arg("-shared")
        .args(&objects)
        .args(&sup.objects)
        .arg("-o")
        .arg(&so)
        .arg("-Wl,-Bsymbolic")
        .arg("-Wl,-z,defs")
        .arg(format!("-L{}", sup.tls_dir.display()))
        .arg("-l:libsimtwin-tls.so.2")
        .arg(format!("-Wl,-rpath,{}", sup.tls_dir.display()))
        .arg("-lm");
    run(&mut cmd, &format!("linking the translated PTX of {}", opts.name))?;
    // Keep the C++ beside the library for inspection (EMU_CUDA_LOG=info names it).
    let _ = std::fs::write(library.with_extension("cpp"), translation.units.join("\n// ---- next unit ----\n"));
    if publish(&so, &library).is_err() && !library.is_file() {
        return Err(JitError::Io(format!("could not publish {}", library.display())));
    }
    let compile_ms = t1.elapsed().as_secs_f64() * 1e3;
    Ok(Built { library, translation, cached: false, translate_ms, compile_ms, key })
}
