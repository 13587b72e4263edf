//! Load-time compilation: a translation's C++ into a kernel library, cached.
//!
//! The library is `<cache>/ptx/<key>.so`, where the key hashes the translator version,
//! the generated C++, the runtime sources, the compiler's identity and the flags (the
//! target CPU included: the code is built for the machine it runs on). Concurrent
//! processes are safe: each builds in a private temporary directory and publishes with
//! an atomic rename, so a reader sees a whole library or none. Support files (the
//! runtime objects, libsimtwin-tls.so.2) are cached the same way under their own keys.
//!
//! The key needs the translation, which took most of a warm start (VMAF's three modules:
//! ~210 of ~330 ms). So a translation index, `<cache>/ptx/<input key>.idx`, keyed by what
//! goes in (the translator's own sources, the PTX, the options, the compiler), names the
//! library and holds what the driver binds (kernels, globals, notes): a warm start reads
//! it and translates nothing. An index that does not read back whole is ignored.

use crate::uniform::Path as ThreadPath;
use crate::{GlobalInfo, KernelInfo, Options, Translation};
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
    /// Whether the translation came from the index (`translation.units` is then empty:
    /// the library was built from them before).
    pub indexed: bool,
    /// Milliseconds spent translating (reading the index, where it answered).
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
    let cid = compiler_id(&jit.cxx)?;
    let ptx_dir = jit.cache_dir.join("ptx");
    std::fs::create_dir_all(&ptx_dir).map_err(|e| JitError::Io(format!("the PTX cache {}: {e}", ptx_dir.display())))?;
    let index = ptx_dir.join(format!("{}.idx", &input_key(sources, opts, &cid)[..40]));
    if let Some((key, translation)) = std::fs::read(&index).ok().and_then(|b| index_read(&b)) {
        let library = ptx_dir.join(format!("{}.so", &key[..40]));
        if library.is_file() {
            let translate_ms = t0.elapsed().as_secs_f64() * 1e3;
            return Ok(Built { library, translation, cached: true, indexed: true, translate_ms, compile_ms: 0.0, key });
        }
    }
    let translation = crate::translate(sources, opts).map_err(JitError::Translate)?;
    let translate_ms = t0.elapsed().as_secs_f64() * 1e3;
    let mut h = Sha256::new();
    h.update(crate::TRANSLATOR_VERSION.as_bytes());
    for u in &translation.units {
        h.update(u.as_bytes());
    }
    h.update(PTX_RT_H.as_bytes());
    hash_toolchain(&mut h, cid.as_str());
    let key = hex(h.finalize());
    let library = ptx_dir.join(format!("{}.so", &key[..40]));
    if library.is_file() {
        index_write(&ptx_dir, &index, &key, &translation);
        return Ok(Built { library, translation, cached: true, indexed: false, translate_ms, compile_ms: 0.0, key });
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
    index_write(&ptx_dir, &index, &key, &translation);
    Ok(Built { library, translation, cached: false, indexed: false, translate_ms, compile_ms, key })
}

/// The translation index's key: everything the translation and the library depend on,
/// known before translating (the translator by a hash of its sources, `build.rs`).
fn input_key(sources: &[&str], opts: &Options, cid: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"simtwin-ptx index 1\0");
    h.update(crate::TRANSLATOR_VERSION.as_bytes());
    h.update(env!("SIMTWIN_PTX_SOURCE_HASH").as_bytes());
    let Options { contract, opt_level, sm_count, name, units, segment_vectors } = opts;
    h.update(format!("\0{contract}\0{opt_level}\0{sm_count}\0{units}\0{segment_vectors:?}\0{}:{name}", name.len()).as_bytes());
    for s in sources {
        h.update(format!("\0{}:", s.len()).as_bytes());
        h.update(s.as_bytes());
    }
    h.update(PTX_RT_H.as_bytes());
    hash_toolchain(&mut h, cid);
    hex(h.finalize())
}

/// What both keys hash beside their own inputs: the compiler's identity, the flags and the
/// runtime sources compiled with every library.
fn hash_toolchain(h: &mut Sha256, cid: &str) {
    h.update(cid.as_bytes());
    for f in cxx_flags() {
        h.update(f.as_bytes());
    }
    for s in [RUNTIME_CPP, SFU_CPP, TLS_CPP, ABI_H, SFU_H, DEVICE_VALUES_H] {
        h.update(s.as_bytes());
    }
}

/// Writes the index (atomically; a failure only costs the next start a translation).
fn index_write(ptx_dir: &Path, index: &Path, key: &str, t: &Translation) {
    let body = index_text(key, t);
    let Ok(tmp) = temp_dir(ptx_dir) else { return };
    let f = tmp.0.join("index");
    if std::fs::write(&f, body).is_ok() {
        let _ = publish(&f, index);
    }
}

/// Fields as `<length>:<text>`, the whole followed by its SHA-256.
fn index_text(key: &str, t: &Translation) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let put = |o: &mut String, v: &str| {
        let _ = write!(o, "{}:{v}", v.len());
    };
    put(&mut o, key);
    put(&mut o, &t.kernels.len().to_string());
    for k in &t.kernels {
        put(&mut o, &k.name);
        put(&mut o, &k.params.iter().map(|(s, off)| format!("{s},{off}")).collect::<Vec<_>>().join(" "));
        put(&mut o, &format!("{} {} {}", k.static_smem, k.max_threads, k.min_blocks));
        put(&mut o, &k.reqntid.map_or(String::new(), |r| format!("{} {} {}", r[0], r[1], r[2])));
        put(&mut o, &k.inexact_sfu.len().to_string());
        k.inexact_sfu.iter().for_each(|x| put(&mut o, x));
        put(
            &mut o,
            match k.threads {
                ThreadPath::Plain => "plain",
                ThreadPath::Loops => "loops",
                ThreadPath::Fibers => "fibers",
            },
        );
        put(&mut o, &k.threads_why);
        match &k.refused {
            Some((code, msg)) => {
                put(&mut o, &code.to_string());
                put(&mut o, msg);
            }
            None => put(&mut o, "-"),
        }
    }
    put(&mut o, &t.globals.len().to_string());
    for g in &t.globals {
        put(&mut o, &g.name);
        put(&mut o, &format!("{} {}", g.size, u8::from(g.constant)));
    }
    put(&mut o, &t.notes.len().to_string());
    t.notes.iter().for_each(|n| put(&mut o, n));
    let sum = hex(Sha256::digest(o.as_bytes()));
    o + &sum
}

/// The library key and the translation (no units) of an index, or None where it does not
/// read back whole (its checksum, its fields).
fn index_read(b: &[u8]) -> Option<(String, Translation)> {
    let text = std::str::from_utf8(b).ok()?;
    let (body, sum) = text.split_at(text.len().checked_sub(64)?);
    if hex(Sha256::digest(body.as_bytes())) != sum {
        return None;
    }
    let mut rest = body;
    let mut next = || -> Option<&str> {
        let (len, tail) = rest.split_once(':')?;
        let len: usize = len.parse().ok()?;
        let v = tail.get(..len)?;
        rest = &tail[len..];
        Some(v)
    };
    let nums = |s: &str| -> Option<Vec<u64>> { s.split_whitespace().map(|x| x.parse().ok()).collect() };
    let key = next()?.to_string();
    if key.len() != 64 {
        return None;
    }
    let mut kernels = Vec::new();
    for _ in 0..next()?.parse::<usize>().ok()? {
        let name = next()?.to_string();
        let params = next()?
            .split_whitespace()
            .map(|p| {
                let (a, b) = p.split_once(',')?;
                Some((a.parse().ok()?, b.parse().ok()?))
            })
            .collect::<Option<Vec<(u32, u32)>>>()?;
        let [static_smem, max_threads, min_blocks] = <[u64; 3]>::try_from(nums(next()?)?).ok()?.map(|x| x as u32);
        let r = nums(next()?)?;
        let reqntid = match r.len() {
            0 => None,
            3 => Some([r[0] as u32, r[1] as u32, r[2] as u32]),
            _ => return None,
        };
        let inexact_sfu = (0..next()?.parse::<usize>().ok()?).map(|_| next().map(str::to_string)).collect::<Option<Vec<_>>>()?;
        let threads = match next()? {
            "plain" => ThreadPath::Plain,
            "loops" => ThreadPath::Loops,
            "fibers" => ThreadPath::Fibers,
            _ => return None,
        };
        let threads_why = next()?.to_string();
        let refused = match next()? {
            "-" => None,
            code => Some((code.parse().ok()?, next()?.to_string())),
        };
        kernels.push(KernelInfo {
            name,
            params,
            static_smem,
            max_threads,
            min_blocks,
            reqntid,
            inexact_sfu,
            threads,
            threads_why,
            refused,
        });
    }
    let mut globals = Vec::new();
    for _ in 0..next()?.parse::<usize>().ok()? {
        let name = next()?.to_string();
        let [size, constant] = <[u64; 2]>::try_from(nums(next()?)?).ok()?;
        globals.push(GlobalInfo { name, size, constant: constant != 0 });
    }
    let notes = (0..next()?.parse::<usize>().ok()?).map(|_| next().map(str::to_string)).collect::<Option<Vec<_>>>()?;
    (rest.is_empty()).then_some((key, Translation { units: Vec::new(), kernels, globals, notes }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.global .align 4 .u32 counter;
.visible .entry add_one(.param .u64 p, .param .u32 n) .reqntid 64, 1, 1
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u32 %r3, [%rd3];
    add.u32 %r3, %r3, 1;
    st.global.u32 [%rd3], %r3;
DONE:
    ret;
}
"#;

    fn same(a: &Translation, b: &Translation) {
        assert_eq!(a.kernels, b.kernels);
        assert_eq!(a.globals, b.globals);
        assert_eq!(a.notes, b.notes);
    }

    #[test]
    fn a_warm_start_reads_the_index_and_translates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let jit = JitOptions { cache_dir: dir.path().to_path_buf(), cxx: "g++".into() };
        let opts = Options { name: "index test".into(), ..Options::default() };
        let cold = build(&[PTX], &opts, &jit).unwrap();
        assert!(!cold.cached && !cold.indexed && !cold.translation.units.is_empty());
        assert_eq!(cold.translation.kernels[0].reqntid, Some([64, 1, 1]));
        let warm = build(&[PTX], &opts, &jit).unwrap();
        assert!(warm.cached && warm.indexed && warm.translation.units.is_empty());
        assert_eq!((&warm.library, &warm.key), (&cold.library, &cold.key));
        same(&warm.translation, &cold.translation);
        // A damaged index is not read: the module is translated again (the library from
        // the cache) and the index written anew.
        let idx: Vec<_> = std::fs::read_dir(dir.path().join("ptx"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "idx"))
            .collect();
        assert_eq!(idx.len(), 1);
        let mut b = std::fs::read(&idx[0]).unwrap();
        b[10] ^= 1;
        std::fs::write(&idx[0], &b).unwrap();
        let again = build(&[PTX], &opts, &jit).unwrap();
        assert!(again.cached && !again.indexed && !again.translation.units.is_empty());
        assert!(build(&[PTX], &opts, &jit).unwrap().indexed);
        // Other options are another index.
        let other = build(&[PTX], &Options { opt_level: 0, ..opts.clone() }, &jit).unwrap();
        assert!(!other.indexed);
        // An index whose library is gone is not enough.
        std::fs::remove_file(&cold.library).unwrap();
        let rebuilt = build(&[PTX], &opts, &jit).unwrap();
        assert!(!rebuilt.cached && !rebuilt.indexed && rebuilt.library.is_file());
    }

    #[test]
    fn the_index_holds_every_field_the_driver_binds() {
        let k = |name: &str, refused: Option<(u32, String)>, threads| KernelInfo {
            name: name.into(),
            params: vec![(8, 0), (4, 8), (12, 16)],
            static_smem: 1680,
            max_threads: 256,
            min_blocks: 8,
            reqntid: if refused.is_some() { None } else { Some([16, 16, 1]) },
            inexact_sfu: vec!["ex2.approx.ftz.f32".into(), "a: b\nc".into()],
            threads,
            threads_why: "loops over threads: 1 barrier; 12:34".into(),
            refused,
        };
        let t = Translation {
            units: vec!["int x;".into()],
            kernels: vec![
                k("a", None, ThreadPath::Loops),
                k("b:c", Some((218, "refused: 3:4\nline".into())), ThreadPath::Fibers),
                k("", None, ThreadPath::Plain),
            ],
            globals: vec![
                GlobalInfo { name: "g".into(), size: 1 << 40, constant: true },
                GlobalInfo { name: "h".into(), size: 4, constant: false },
            ],
            notes: vec!["note 1".into(), String::new(), "ünïcode: 5:6".into()],
        };
        let key = "0123456789abcdef".repeat(4);
        let text = index_text(&key, &t);
        let (k2, back) = index_read(text.as_bytes()).expect("the index reads back");
        assert_eq!(k2, key);
        same(&back, &t);
        assert!(back.units.is_empty());
        // Cut anywhere, or a field changed under its checksum, it does not read.
        for cut in [0, 1, text.len() / 2, text.len() - 1] {
            assert!(index_read(&text.as_bytes()[..cut]).is_none(), "cut at {cut}");
        }
        let forged = text.replacen("1680", "1681", 1);
        assert!(index_read(forged.as_bytes()).is_none());
    }
}
