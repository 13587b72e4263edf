//! The build: .cu -> preprocessed -> rewritten + registry -> g++ -> OUT_DIR/<stem>.so,
//! then dlopen to read the descriptor and the exported symbol names, then the manifest.

use crate::manifest::{self, DeviceMath, Entry, Global, Manifest};
use crate::module::LoadedModule;
use crate::{
    checks_cxx_flags, flags, host_cxx_flags, include_dir, nvcc_check, ptx, rewrite, runtime_cxx_flags, toolkit, CHECKS_SOURCE,
    RUNTIME_SOURCE, TLS_LIBRARY, TLS_SOURCE,
};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What to build and how.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// Where the libraries, manifests and `libsimtwin-tls.so.2` are written (created if
    /// missing; intermediate files go to its `.simtwin-build/`).
    pub out_dir: PathBuf,
    /// `-I` directories for the preprocessor, in order.
    pub include_dirs: Vec<PathBuf>,
    /// `NAME` or `NAME=VALUE`.
    pub defines: Vec<String>,
    /// Emulated architecture: `__CUDA_ARCH__` = arch * 10 (90 -> 900).
    pub arch: u32,
    /// The nvcc flags the user's real build uses (recorded in the manifest).
    pub nvcc_flags: Vec<String>,
    /// The `.cu` files; each becomes its own library (names from `output_names`).
    pub sources: Vec<PathBuf>,
    /// The host C++ compiler (default `g++`, or $SIMTWIN_CXX).
    pub cxx: String,
    /// Cross-check the kernel list and parameter sizes against nvcc's PTX of the same
    /// file (default on; see `nvcc_check`).
    pub nvcc_check: bool,
    /// The nvcc to use (default: found as `toolkit::find_nvcc` says).
    pub nvcc: Option<PathBuf>,
    /// Also build the checking variant `<stem>.checks.so` (ThreadSanitizer-instrumented,
    /// with debug info; see `runtime/simtwin_checks.cpp`), named in the manifest's
    /// `checks_library`: what the driver loads under `EMU_CUDA_CHECKS=race`.
    pub checks: bool,
    /// The device whose math the twin computes (`libdevice::PROFILES`; default `h200`):
    /// libdevice's functions, translated, with that device's special-function unit. Any
    /// other name keeps the host's libm, and the manifest says the math is not
    /// device-exact.
    pub device_profile: String,
    /// The nvcc release whose libdevice the twins take (`13.5`); default: the release of
    /// the nvcc found (the user's), else the newest kernels-host has data for.
    pub libdevice_release: Option<String>,
}

impl BuildOptions {
    /// Defaults for building `sources` into `out_dir`: sm_90, no includes, defines or
    /// nvcc flags, `$SIMTWIN_CXX` or `g++`, nvcc cross-check on, no checking variant.
    pub fn new(out_dir: impl Into<PathBuf>, sources: Vec<PathBuf>) -> Self {
        BuildOptions {
            out_dir: out_dir.into(),
            include_dirs: vec![],
            defines: vec![],
            arch: 90,
            nvcc_flags: vec![],
            sources,
            cxx: std::env::var("SIMTWIN_CXX").unwrap_or_else(|_| "g++".to_string()),
            nvcc_check: true,
            nvcc: None,
            checks: false,
            device_profile: "h200".to_string(),
            libdevice_release: None,
        }
    }
}

/// One built library.
#[derive(Debug, Clone)]
pub struct Built {
    /// The kernel library, `OUT_DIR/<name>.so`.
    pub library: PathBuf,
    /// Its manifest, `OUT_DIR/<name>.simtwin.json`.
    pub manifest_path: PathBuf,
    /// The manifest as written there.
    pub manifest: Manifest,
}

/// Why a build failed; the CLI's exit code follows from the variant.
#[derive(Debug)]
pub enum BuildError {
    /// Bad arguments or unreadable input (CLI exit code 2).
    Usage(String),
    /// The source does not compile for the host (CLI exit code 1); the text holds
    /// g++'s messages or the rewriter's, with file and line.
    Compile(String),
}

impl BuildError {
    /// The CLI exit code: 2 for [`BuildError::Usage`], 1 for [`BuildError::Compile`].
    pub fn exit_code(&self) -> i32 {
        match self {
            BuildError::Usage(_) => 2,
            BuildError::Compile(_) => 1,
        }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Usage(m) | BuildError::Compile(m) => f.write_str(m),
        }
    }
}
impl std::error::Error for BuildError {}

/// Writes one of the runtime's C++ sources into the work directory as `<stem>.cpp` and
/// compiles it with the runtime's flags into `<stem>.o`; returns the object.
fn compile_runtime_part(cxx: &str, work: &Path, stem: &str, source: &str, what: &str) -> Result<PathBuf, BuildError> {
    let src = work.join(format!("{stem}.cpp"));
    std::fs::write(&src, source).map_err(|e| BuildError::Usage(format!("{}: {e}", src.display())))?;
    let obj = work.join(format!("{stem}.o"));
    run_tool(
        Command::new(cxx).args(runtime_cxx_flags()).arg("-std=c++17").arg("-I").arg(include_dir()).arg("-c").arg(&src).arg("-o").arg(&obj),
        what,
    )?;
    Ok(obj)
}

fn run_tool(cmd: &mut Command, what: &str) -> Result<Vec<u8>, BuildError> {
    let out = cmd.output().map_err(|e| BuildError::Usage(format!("cannot run {:?} ({what}): {e}", cmd.get_program())))?;
    if !out.status.success() {
        return Err(BuildError::Compile(format!("{what} failed:\n{}", String::from_utf8_lossy(&out.stderr))));
    }
    Ok(out.stdout)
}

fn c_string_literal(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\{:03o}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// The nvcc run of the cross-check, going on while the host build runs; ended (killed)
/// if the build stops before it is waited for. nvcc runs in a process group of its own
/// (its cicc and cudafe++ die with it) with a temporary directory of its own, removed
/// after: a killed nvcc leaves its `tmpxft_*` files behind.
struct NvccRun {
    child: Option<std::process::Child>,
    ptx: PathBuf,
    log: PathBuf,
    line: String,
    tmp: PathBuf,
}

impl NvccRun {
    /// Waits for nvcc; its PTX, or an error with its messages.
    fn finish(mut self) -> Result<String, BuildError> {
        let mut child = self.child.take().expect("waited once");
        let status = child.wait().map_err(|e| BuildError::Usage(format!("nvcc: {e}")));
        let _ = std::fs::remove_dir_all(&self.tmp);
        let status = status?;
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        if !status.success() {
            return Err(BuildError::Compile(format!(
                "nvcc (run to cross-check the kernel list) failed: {}\n{}\n\
                 (build without the check: --no-nvcc-check)",
                self.line,
                log.trim_end()
            )));
        }
        std::fs::read_to_string(&self.ptx).map_err(|e| BuildError::Compile(format!("{}: {e}", self.ptx.display())))
    }
}

impl Drop for NvccRun {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            // SAFETY: kill(2) of the child's own process group (it leads it: process_group(0)).
            unsafe { libc::kill(-(c.id() as libc::pid_t), libc::SIGKILL) };
            let _ = c.kill();
            let _ = c.wait();
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }
}

/// A command as a shell line, for messages.
fn cmd_line(c: &Command) -> String {
    std::iter::once(c.get_program()).chain(c.get_args()).map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
}

/// The module descriptor tail appended to the rewritten source. Everything it defines is
/// in namespace `__simtwin` (reserved to the implementation), so no user name collides.
fn registry_tail(rw: &rewrite::Rewritten, source: &str, hash: &str, build_id: &str) -> String {
    let mut t = String::from("\n# 1 \"<simtwin registry>\"\nnamespace __simtwin {\n");
    t.push_str("const simtwin_runtime_t *rt = nullptr;\n");
    t.push_str("static void registry_bind(const simtwin_runtime_t *__simtwin_r) { rt = __simtwin_r; }\n");
    t.push_str("static simtwin_thread_ctx_t **registry_ctx_slot() { return &tls_ctx; }\n");
    t.push_str("static const detail::kernel_reg_fn registry_kernels[] = {");
    for k in &rw.kernels {
        t.push_str(&format!(" &{},", k.reg_fn));
    }
    t.push_str(" nullptr };\nstatic const detail::global_reg_fn registry_globals[] = {");
    for g in &rw.globals {
        t.push_str(&format!(" &{},", g.reg_fn));
    }
    t.push_str(" nullptr };\n} // namespace __simtwin\n");
    t.push_str(&format!(
        "extern \"C\" __attribute__((visibility(\"default\"))) const ::__simtwin::simtwin_module_t *simtwin_module_v2() {{\n\
         \x20   static const ::__simtwin::simtwin_module_t *__simtwin_m = ::__simtwin::detail::build_module(\n\
         \x20       ::__simtwin::registry_kernels, {nk}u, ::__simtwin::registry_globals, {ng}u, {src}, {hash}, {build_id},\n\
         \x20       &::__simtwin::registry_bind, &::__simtwin::registry_ctx_slot);\n\
         \x20   return __simtwin_m;\n}}\n",
        nk = rw.kernels.len(),
        ng = rw.globals.len(),
        src = c_string_literal(source),
        hash = c_string_literal(hash),
        build_id = c_string_literal(build_id)
    ));
    t
}

/// Warnings about flags whose device behaviour host compilation does not reproduce.
fn flag_warnings(f: &flags::NvccFlags) -> Vec<String> {
    let mut w = Vec::new();
    if f.fmad {
        w.push(
            "nvcc contracts a*b+c into FMA by default (no --fmad=false given); the host build does not \
             (-ffp-contract=off), so expressions outside __fmaf_rn/__fmul_rn/__fadd_rn can round differently"
                .to_string(),
        );
    }
    if f.fast_math {
        w.push(
            "--use_fast_math: the device uses approximate division and sqrt and flushes subnormals in the \
             kernel's own arithmetic; the host build computes IEEE results there (math functions and \
             intrinsics are libdevice's fast-math variants when the device profile has models)"
                .to_string(),
        );
    }
    if f.ftz && !f.fast_math {
        w.push("--ftz=true: the device flushes subnormal floats to zero in the kernel's own arithmetic; the host build does not (math functions are libdevice's flush-to-zero variants when the device profile has models)".to_string());
    }
    if f.prec_div_false || f.prec_sqrt_false {
        w.push("--prec-div/--prec-sqrt=false: the device uses approximate division/sqrt for the kernel's own `/` and sqrtf; the host build is IEEE there".to_string());
    }
    w
}

/// What every library of one build shares: the work directory, the compiled runtime, and
/// the CUDA toolkit found (nvcc for the cross-check, the type headers).
pub(crate) struct Session {
    pub work: PathBuf,
    rt_obj: PathBuf,
    /// The checking hooks' object (`simtwin_checks.cpp`), when checking variants are built.
    checks_obj: Option<PathBuf>,
    /// nvcc, when the cross-check is on.
    pub nvcc: Option<PathBuf>,
    /// The directory of symlinks to the toolkit's type headers (`toolkit`), if found.
    pub cuda_headers: Option<PathBuf>,
    /// kernels-host's GCC plugin for the device's results, or why there is none.
    pub plugin: Result<PathBuf, String>,
    /// The release of the nvcc found (the user's, whose libdevice twins compute), if one
    /// was found.
    pub nvcc_release: Option<Result<String, String>>,
}

impl Session {
    /// Prepares `out_dir`: its work directory, the runtime object, the toolkit. With the
    /// cross-check on, a missing nvcc is an error that says how to go without it.
    pub fn new(out_dir: &Path, cxx: &str, nvcc_check: bool, nvcc: Option<&Path>, checks: bool) -> Result<Session, BuildError> {
        std::fs::create_dir_all(out_dir).map_err(|e| BuildError::Usage(format!("cannot create {}: {e}", out_dir.display())))?;
        let work = out_dir.join(".simtwin-build");
        std::fs::create_dir_all(&work).map_err(|e| BuildError::Usage(format!("cannot create {}: {e}", work.display())))?;
        let found = toolkit::find_nvcc(nvcc);
        let nvcc = match (nvcc_check, found.as_ref()) {
            (true, Ok(p)) => Some(p.clone()),
            (true, Err(e)) => {
                return Err(BuildError::Usage(format!(
                    "{e}: kernels-host runs nvcc to cross-check the kernels it builds against nvcc's own \
                     (set NVCC=/path/to/nvcc or pass --nvcc PATH; or build without the check: --no-nvcc-check)"
                )))
            }
            (false, _) => None,
        };
        let cuda_headers = match toolkit::find_include(found.as_ref().ok().map(|p| p.as_path())).ok() {
            Some(inc) => {
                let dir = work.join("cuda-include");
                toolkit::make_header_dir(&inc, &dir).map_err(|e| BuildError::Usage(format!("{}: {e}", dir.display())))?;
                Some(dir)
            }
            None => None,
        };
        // The runtime (and the checking hooks): compiled once per build, with its own flags.
        let rt_obj = compile_runtime_part(cxx, &work, "simtwin_runtime", RUNTIME_SOURCE, "compiling the simtwin runtime")?;
        let checks_obj = if checks {
            Some(compile_runtime_part(cxx, &work, "simtwin_checks", CHECKS_SOURCE, "compiling the simtwin checking hooks")?)
        } else {
            None
        };
        // The context slot's library, in the output directory (where kernel libraries
        // find it) and in the work directory (where they are loaded before publishing).
        let tls_src = work.join("simtwin_tls.cpp");
        std::fs::write(&tls_src, TLS_SOURCE).map_err(|e| BuildError::Usage(format!("{}: {e}", tls_src.display())))?;
        let tls_tmp = work.join(format!("{TLS_LIBRARY}.tmp"));
        run_tool(
            Command::new(cxx)
                .args(["-O2", "-fPIC", "-shared", &format!("-Wl,-soname,{TLS_LIBRARY}")])
                .arg(&tls_src)
                .arg("-o")
                .arg(&tls_tmp),
            "compiling the simtwin context slot library",
        )?;
        let bytes = std::fs::read(&tls_tmp).map_err(|e| BuildError::Usage(format!("{}: {e}", tls_tmp.display())))?;
        for dir in [out_dir, work.as_path()] {
            let dest = dir.join(TLS_LIBRARY);
            // Unchanged: keep the file (and its inode, which running processes may map).
            if std::fs::read(&dest).ok().as_deref() != Some(&bytes[..]) {
                let tmp = dir.join(format!("{TLS_LIBRARY}.{}.tmp", std::process::id()));
                std::fs::write(&tmp, &bytes).map_err(|e| BuildError::Usage(format!("{}: {e}", tmp.display())))?;
                std::fs::rename(&tmp, &dest).map_err(|e| BuildError::Usage(format!("{}: {e}", dest.display())))?;
            }
        }
        let plugin = crate::plugin::get(cxx, &work);
        let nvcc_release = found.as_ref().ok().map(|p| crate::libdevice::nvcc_release(p));
        Ok(Session { work, rt_obj, checks_obj, nvcc, cuda_headers, plugin, nvcc_release })
    }
}

/// Output names (`<name>.so`, `<name>.simtwin.json`) for `sources`: the file stem; where
/// different files share a stem, the stem prefixed with as many parent directory names as
/// make the names distinct (`src/a/k.cu` and `src/b/k.cu` give `a-k` and `b-k`), else with
/// a hash of the path; the same file listed again (built with other flags) numbered
/// `-2`, `-3`, ... in order.
pub(crate) fn output_names(sources: &[PathBuf]) -> Vec<String> {
    let stem = |p: &Path| p.file_stem().map(|x| x.to_string_lossy().into_owned()).unwrap_or_default();
    let mut unique: Vec<&PathBuf> = Vec::new();
    for s in sources {
        if !unique.contains(&s) {
            unique.push(s);
        }
    }
    let with_parents = |p: &Path, depth: usize| {
        let mut parts: Vec<String> = p
            .parent()
            .map(|d| {
                d.components()
                    .rev()
                    .take(depth)
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .filter(|c| c != "/" && !c.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        parts.reverse();
        parts.push(stem(p));
        parts.join("-")
    };
    let mut names: Vec<String> = unique.iter().map(|p| stem(p)).collect();
    let clashing =
        |names: &[String]| -> Vec<usize> { (0..names.len()).filter(|&i| names.iter().filter(|n| **n == names[i]).count() > 1).collect() };
    for depth in 1..=16 {
        let clash = clashing(&names);
        if clash.is_empty() {
            break;
        }
        for i in clash {
            names[i] = with_parents(unique[i], depth);
        }
    }
    for i in clashing(&names) {
        let h = format!("{:x}", Sha256::digest(unique[i].to_string_lossy().as_bytes()));
        names[i] = format!("{}-{}", stem(unique[i]), &h[..8]);
    }
    let mut times = vec![0usize; unique.len()];
    sources
        .iter()
        .map(|s| {
            let u = unique.iter().position(|p| *p == s).unwrap();
            times[u] += 1;
            if times[u] == 1 {
                names[u].clone()
            } else {
                format!("{}-{}", names[u], times[u])
            }
        })
        .collect()
}

/// Builds every source of `opts`. Stops at the first failure.
pub fn build(opts: &BuildOptions) -> Result<Vec<Built>, BuildError> {
    if opts.sources.is_empty() {
        return Err(BuildError::Usage("no .cu files given".into()));
    }
    let nv = check_options(opts)?;
    let session = Session::new(&opts.out_dir, &opts.cxx, opts.nvcc_check, opts.nvcc.as_deref(), opts.checks)?;
    let abs: Vec<PathBuf> = opts
        .sources
        .iter()
        .map(|s| std::fs::canonicalize(s).map_err(|e| BuildError::Usage(format!("{}: {e}", s.display()))))
        .collect::<Result<_, _>>()?;
    let names = output_names(&abs);
    let jobs: Vec<(&PathBuf, &String)> = abs.iter().zip(names.iter()).collect();
    parallel_map(&jobs, |(s, n)| build_one(opts, &nv, &session, s, n)).into_iter().collect()
}

/// `f` over `items` on up to `available_parallelism` threads (every source of a build is
/// independent: its own files, g++ and nvcc runs); results in `items`' order.
fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(items.len()).max(1);
    if workers == 1 {
        return items.iter().map(&f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<R>>> = items.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|sc| {
        for _ in 0..workers {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= items.len() {
                    break;
                }
                let r = f(&items[i]);
                *results[i].lock().unwrap() = Some(r);
            });
        }
    });
    results.into_iter().map(|m| m.into_inner().unwrap().expect("every item ran")).collect()
}

/// The result of building a compile database: what was built, what failed (with why),
/// and how many entries were not CUDA.
pub struct DatabaseBuild {
    /// One entry per CUDA entry that built.
    pub built: Vec<Built>,
    /// Each CUDA entry that did not build: its source and the error.
    pub failed: Vec<(PathBuf, BuildError)>,
    /// Entries of the database that are not CUDA compilations.
    pub skipped: usize,
}

/// Builds a host twin for every CUDA entry of the compile database `db` (see `compdb`),
/// each with its own command's flags, into `opts.out_dir` (`opts` gives the
/// architecture, compiler and cross-check; its sources, include directories, defines and
/// nvcc flags are not used). Every entry is tried; failures are collected.
pub fn build_compile_commands(opts: &BuildOptions, db: &Path) -> Result<DatabaseBuild, BuildError> {
    let db = crate::compdb::read(db).map_err(BuildError::Usage)?;
    if !(10..=200).contains(&opts.arch) {
        return Err(BuildError::Usage(format!("unsupported architecture sm_{}", opts.arch)));
    }
    let session = Session::new(&opts.out_dir, &opts.cxx, opts.nvcc_check, opts.nvcc.as_deref(), opts.checks)?;
    let sources: Vec<PathBuf> = db.cuda.iter().map(|e| e.source.clone()).collect();
    let names = output_names(&sources);
    let mut out = DatabaseBuild { built: Vec::new(), failed: Vec::new(), skipped: db.skipped };
    let jobs: Vec<(&crate::compdb::CudaEntry, &String)> = db.cuda.iter().zip(names.iter()).collect();
    let results = parallel_map(&jobs, |(e, name)| {
        let mut o = opts.clone();
        o.sources = vec![e.source.clone()];
        o.include_dirs = Vec::new();
        o.defines = Vec::new();
        o.nvcc_flags = e.flags.clone();
        build_one(&o, &e.parsed, &session, &e.source, name)
    });
    for ((e, _), r) in jobs.iter().zip(results) {
        match r {
            Ok(b) => out.built.push(b),
            Err(err) => out.failed.push((e.source.clone(), err)),
        }
    }
    Ok(out)
}

/// Validates the options shared by all sources and parses the nvcc flags.
pub(crate) fn check_options(opts: &BuildOptions) -> Result<flags::NvccFlags, BuildError> {
    if !(10..=200).contains(&opts.arch) {
        return Err(BuildError::Usage(format!("unsupported architecture sm_{}", opts.arch)));
    }
    flags::parse_as_nvcc(&opts.nvcc_flags).map_err(BuildError::Usage)
}

/// Builds one source into `<name>.so` and `<name>.simtwin.json` of `opts.out_dir`: the
/// steps below, in order; nothing is published unless every one succeeds.
pub(crate) fn build_one(
    opts: &BuildOptions,
    nv: &flags::NvccFlags,
    session: &Session,
    source: &Path,
    name: &str,
) -> Result<Built, BuildError> {
    let abs = std::fs::canonicalize(source).map_err(|e| BuildError::Usage(format!("{}: {e}", source.display())))?;
    let bytes = std::fs::read(&abs).map_err(|e| BuildError::Usage(format!("{}: {e}", abs.display())))?;
    let hash = format!("{:x}", Sha256::digest(&bytes));
    let stem = name.to_string();
    let work = session.work.as_path();
    let std_flag = format!("-std={}", nv.std.clone().unwrap_or_else(|| "c++17".to_string()));
    let std_flag = std_flag.as_str();

    let nvcc_run = start_nvcc_ptx(opts, nv, session, &abs, &stem)?;
    let math = device_math(opts, nv, session)?;
    let pre = preprocess(opts, nv, session, &abs, std_flag, math.is_ok())?;
    let unit = rewrite_unit(opts, nv, session, &math, &pre, &abs, &hash, std_flag)?;
    let math_objects: Vec<PathBuf> = math.as_ref().map(|m| m.objects.clone()).unwrap_or_default();
    let ii = work.join(format!("{stem}.ii"));
    std::fs::write(&ii, &unit.text).map_err(|e| BuildError::Usage(format!("{}: {e}", ii.display())))?;
    let tmp_lib = compile_and_link(opts, session, &unit.checked, &math_objects, std_flag, &ii, &stem, &abs)?;
    let lib = opts.out_dir.join(format!("{stem}.so"));
    // The checking variant: the same translation unit, instrumented.
    let checks_lib = match &session.checks_obj {
        Some(hooks) => Some(build_checks_variant(
            opts,
            session,
            hooks,
            &unit.checked,
            &math_objects,
            std_flag,
            &ii,
            &stem,
            &abs,
            (unit.rw.kernels.len(), unit.rw.globals.len()),
        )?),
        None => None,
    };
    let m = load_descriptor(&tmp_lib, &unit.rw, &abs)?;
    if let Some(run) = nvcc_run {
        let problems = compare_with_nvcc(run, &m, &abs)?;
        if !problems.is_empty() {
            let _ = std::fs::remove_file(&tmp_lib);
            if let Some(c) = &checks_lib {
                let _ = std::fs::remove_file(c);
            }
            return Err(BuildError::Compile(format!(
                "{}: the kernels kernels-host built differ from nvcc's ({} problem{}):\n  {}\n\
                 (nvcc's PTX: {}; build without this check: --no-nvcc-check)",
                abs.display(),
                problems.len(),
                if problems.len() == 1 { "" } else { "s" },
                problems.join("\n  "),
                work.join(format!("{stem}.nvcc.ptx")).display()
            )));
        }
    }
    let Unit { rw, build_id, mut warnings, device_math, .. } = unit;
    let (entries, globals) = manifest_entries(&m, &rw, &mut warnings);
    let manifest = Manifest {
        schema: manifest::SCHEMA.to_string(),
        library: format!("{stem}.so"),
        source: abs.to_string_lossy().into_owned(),
        source_hash: hash,
        build_id,
        nvcc_flags: flags::with_nvcc_env(&opts.nvcc_flags),
        fma_contraction_differs: nv.fmad,
        entries,
        globals,
        warnings,
        checks_library: checks_lib.as_ref().map(|_| format!("{stem}{CHECKS_SUFFIX}")),
        device_math: Some(device_math),
    };
    drop(m);
    let manifest_path = publish(opts, &stem, &tmp_lib, &lib, checks_lib.as_deref(), &manifest)?;
    Ok(Built { library: lib, manifest_path, manifest })
}

/// Step 0: nvcc's PTX of the same file, made while the host build runs (when the
/// cross-check is on).
fn start_nvcc_ptx(
    opts: &BuildOptions,
    nv: &flags::NvccFlags,
    session: &Session,
    abs: &Path,
    stem: &str,
) -> Result<Option<NvccRun>, BuildError> {
    let work = session.work.as_path();
    Ok(match &session.nvcc {
        Some(nvcc) => {
            let ptx = work.join(format!("{stem}.nvcc.ptx"));
            let log = work.join(format!("{stem}.nvcc.log"));
            let _ = std::fs::remove_file(&ptx);
            let flags = nvcc_check::CheckFlags {
                defines: opts.defines.iter().chain(nv.defines.iter()).cloned().collect(),
                undefines: nv.undefines.clone(),
                include_dirs: opts
                    .include_dirs
                    .iter()
                    .map(|d| d.to_string_lossy().into_owned())
                    .chain(nv.include_dirs.iter().cloned())
                    .collect(),
                system_include_dirs: nv.system_include_dirs.clone(),
                force_includes: nv.force_includes.clone(),
                std: nv.std.clone(),
                passthrough: nv.passthrough.clone(),
            };
            let mut cmd = nvcc_check::command(nvcc, opts.arch, &flags, abs, &ptx);
            let logf = std::fs::File::create(&log).map_err(|e| BuildError::Usage(format!("{}: {e}", log.display())))?;
            cmd.stdout(logf.try_clone().map_err(|e| BuildError::Usage(e.to_string()))?).stderr(logf);
            let tmp = work.join(format!("{stem}.nvcc-tmp"));
            std::fs::create_dir_all(&tmp).map_err(|e| BuildError::Usage(format!("{}: {e}", tmp.display())))?;
            std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
            cmd.env("TMPDIR", &tmp);
            let line = cmd_line(&cmd);
            let child = match cmd.spawn() {
                Ok(c) => c,
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&tmp);
                    return Err(BuildError::Usage(format!("cannot run {}: {e}", nvcc.display())));
                }
            };
            Some(NvccRun { child: Some(child), ptx, log, line, tmp })
        }
        None => None,
    })
}

/// Step 1: preprocess with the shim first on the include path, as nvcc would see the file.
fn preprocess(
    opts: &BuildOptions,
    nv: &flags::NvccFlags,
    session: &Session,
    abs: &Path,
    std_flag: &str,
    device_math: bool,
) -> Result<String, BuildError> {
    let src_dir = abs.parent().unwrap_or(Path::new("/")).to_path_buf();
    let mut pp = Command::new(&opts.cxx);
    pp.arg("-E").arg("-x").arg("c++").arg(std_flag);
    pp.arg(format!("-D__CUDA_ARCH__={}", opts.arch * 10));
    pp.args(["-D__CUDACC__", "-D__NVCC__", "-D__SIMTWIN__", "-D__SIMTWIN_BUILTINS_REWRITTEN", "-D__SIMTWIN_KERNELS_HOST"]);
    if device_math {
        pp.arg("-D__SIMTWIN_DEVICE_MATH=1");
    }
    pp.arg("-I").arg(include_dir());
    pp.arg("-I").arg(&src_dir);
    for d in &opts.include_dirs {
        pp.arg("-I").arg(d);
    }
    for d in &nv.include_dirs {
        pp.arg("-I").arg(d);
    }
    for d in &nv.system_include_dirs {
        pp.arg("-isystem").arg(d);
    }
    if let Some(h) = &session.cuda_headers {
        // The toolkit's type headers, after every other directory (nvcc puts its own
        // include directory after the user's too).
        // -fno-canonical-system-headers: the quoted includes inside them resolve beside the
        // symlinks (then in the shim), not beside the files they point to.
        pp.arg("-idirafter").arg(h).arg("-D__SIMTWIN_CUDA_TOOLKIT").arg("-fno-canonical-system-headers");
    }
    for d in opts.defines.iter().chain(nv.defines.iter()) {
        pp.arg(format!("-D{d}"));
    }
    for u in &nv.undefines {
        pp.arg(format!("-U{u}"));
    }
    // nvcc force-includes cuda_runtime.h: the shim's brings the device prelude and the
    // runtime API's types.
    pp.arg("-include").arg("cuda_runtime.h");
    for f in &nv.force_includes {
        pp.arg("-include").arg(f);
    }
    pp.arg(abs);
    let pre = run_tool(&mut pp, &format!("preprocessing {}", abs.display()))?;
    String::from_utf8(pre).map_err(|_| BuildError::Compile(format!("{}: the preprocessed source is not UTF-8", abs.display())))
}

/// The rewritten translation unit, its registry appended.
struct Unit {
    rw: rewrite::Rewritten,
    /// The source g++ compiles.
    text: String,
    /// Binds library and manifest: a hash of everything that went into the unit.
    build_id: String,
    warnings: Vec<String>,
    /// The checked-results flags (the GCC plugin's, or the sanitizers').
    checked: Vec<String>,
    /// Whose math the twin computes (libdevice's through the device profile, or libm).
    device_math: DeviceMath,
}

/// Step 2: rewrite the preprocessed source and append the registry.
#[allow(clippy::too_many_arguments)]
fn rewrite_unit(
    opts: &BuildOptions,
    nv: &flags::NvccFlags,
    session: &Session,
    math: &Result<crate::libdevice::Library, String>,
    pre: &str,
    abs: &Path,
    hash: &str,
    std_flag: &str,
) -> Result<Unit, BuildError> {
    let rw = rewrite::rewrite(pre).map_err(|errs| BuildError::Compile(errs.join("\n")))?;
    let mut warnings = flag_warnings(nv);
    warnings.extend(rw.warnings.iter().cloned());
    let device_math = match math {
        Ok(lib) => DeviceMath {
            profile: opts.device_profile.clone(),
            exact: true,
            library: format!("libdevice of nvcc {} ({})", lib.release, lib.set),
            note: None,
        },
        Err(e) => {
            let why = format!("not device-exact: {e}; math functions and fast intrinsics use the host's libm");
            warnings.push(why.clone());
            DeviceMath { profile: opts.device_profile.clone(), exact: false, library: "host libm".into(), note: Some(why) }
        }
    };
    let checked = crate::checked_results_flags(session.plugin.as_ref().ok().map(|p| p.as_path()));
    if let Err(why) = &session.plugin {
        warnings.push(format!(
            "float-to-integer conversions of NaN or out-of-range values, integer division by zero and \
             over-wide shifts end the launch with an error instead of giving the device's result: {why}"
        ));
    }
    let mut text = rw.text.clone();
    // The build id binds library and manifest: a hash of everything that went into the
    // translation unit (the rewritten source, the host flags and the runtime's source).
    let build_id = {
        let mut h = Sha256::new();
        h.update(text.as_bytes());
        h.update(host_cxx_flags().join(" ").as_bytes());
        h.update(if session.plugin.is_ok() { crate::plugin::SOURCE } else { "sanitizers" }.as_bytes());
        h.update(std_flag.as_bytes());
        h.update(RUNTIME_SOURCE.as_bytes());
        h.update(TLS_SOURCE.as_bytes());
        h.update(device_math.library.as_bytes());
        if let Ok(lib) = math {
            h.update(format!("{:?}", lib.objects).as_bytes());
        }
        format!("{:x}", h.finalize())
    };
    text.push_str(&registry_tail(&rw, &abs.to_string_lossy(), hash, &build_id));
    Ok(Unit { rw, text, build_id, warnings, checked, device_math })
}

/// Step 3: compile and link into the work directory (no undefined symbols toward the
/// driver: -z defs); returns the unpublished library.
#[allow(clippy::too_many_arguments)]
fn compile_and_link(
    opts: &BuildOptions,
    session: &Session,
    checked: &[String],
    math_objects: &[PathBuf],
    std_flag: &str,
    ii: &Path,
    stem: &str,
    abs: &Path,
) -> Result<PathBuf, BuildError> {
    let work = session.work.as_path();
    let obj = work.join(format!("{stem}.o"));
    run_tool(
        Command::new(&opts.cxx)
            .args(host_cxx_flags())
            .args(checked)
            .args(if math_objects.is_empty() { Vec::new() } else { crate::libdevice::no_builtin_flags() })
            .arg(std_flag)
            // always_inline on kernels that are not `inline` (see rewrite.rs) is not news.
            .arg("-Wno-attributes")
            .args(["-x", "c++", "-c"])
            .arg(ii)
            .arg("-o")
            .arg(&obj),
        &format!("compiling {}", abs.display()),
    )?;
    let tmp_lib = work.join(format!("{stem}.so.tmp"));
    run_tool(
        Command::new(&opts.cxx)
            .args(["-shared", "-fPIC", "-Wl,-Bsymbolic", "-Wl,-z,defs", "-Wl,-rpath,$ORIGIN"])
            .arg(&obj)
            .arg(&session.rt_obj)
            .args(math_objects)
            .arg(work.join(TLS_LIBRARY))
            .arg("-o")
            .arg(&tmp_lib)
            .arg("-lm"),
        &format!("linking {}", opts.out_dir.join(format!("{stem}.so")).display()),
    )?;
    Ok(tmp_lib)
}

/// Step 4: read the library's descriptor back; it must hold what the rewriter registered.
fn load_descriptor(tmp_lib: &Path, rw: &rewrite::Rewritten, abs: &Path) -> Result<LoadedModule, BuildError> {
    let m = LoadedModule::open(tmp_lib).map_err(BuildError::Compile)?;
    if m.kernels.len() != rw.kernels.len() || m.globals.len() != rw.globals.len() {
        return Err(BuildError::Compile(format!(
            "{}: the library's descriptor has {} kernels and {} globals, the rewriter registered {} and {}",
            abs.display(),
            m.kernels.len(),
            m.globals.len(),
            rw.kernels.len(),
            rw.globals.len()
        )));
    }
    Ok(m)
}

/// Step 5: nvcc's kernels against the library's (names, symbols, parameter sizes); the
/// problems found, none when they agree.
fn compare_with_nvcc(run: NvccRun, m: &LoadedModule, abs: &Path) -> Result<Vec<String>, BuildError> {
    let ptx_text = run.finish()?;
    let nvcc_entries = ptx::entries(&ptx_text).map_err(|e| BuildError::Compile(format!("{}: nvcc's PTX: {e}", abs.display())))?;
    let symbols = m.kernel_symbols_with_locals().map_err(BuildError::Compile)?;
    let host: Vec<nvcc_check::HostKernel> = m
        .kernels
        .iter()
        .zip(symbols)
        .map(|(k, symbol)| nvcc_check::HostKernel { name: k.name.clone(), symbol, param_sizes: k.param_sizes.clone() })
        .collect();
    Ok(nvcc_check::compare(&host, &nvcc_entries))
}

/// Step 6: the manifest's entries and globals, each named by its exported symbol (a
/// warning where there is none).
fn manifest_entries(m: &LoadedModule, rw: &rewrite::Rewritten, warnings: &mut Vec<String>) -> (Vec<Entry>, Vec<Global>) {
    let mut entries = Vec::new();
    for (k, rec) in m.kernels.iter().zip(rw.kernels.iter()) {
        let symbol = match &k.symbol {
            Some(s) => s.clone(),
            None => {
                warnings.push(format!(
                    "{}: kernel {} has no exported symbol{}; recorded under its source name",
                    rec.location,
                    k.name,
                    if rec.anonymous_namespace { " (anonymous namespace: nvcc gives it a per-file name)" } else { "" }
                ));
                k.name.clone()
            }
        };
        if rec.anonymous_namespace && k.symbol.is_some() {
            warnings.push(format!(
                "{}: kernel {} is in an anonymous namespace; nvcc names it with a per-file hash, not {}",
                rec.location, k.name, symbol
            ));
        }
        entries.push(Entry {
            name: k.name.clone(),
            symbol,
            param_sizes: k.param_sizes.clone(),
            param_aligns: k.param_aligns.clone(),
            max_threads: k.max_threads,
            min_blocks: k.min_blocks,
        });
    }
    let mut globals = Vec::new();
    for (g, rec) in m.globals.iter().zip(rw.globals.iter()) {
        let symbol = g.symbol.clone().unwrap_or_else(|| {
            warnings.push(format!("{}: {} has no exported symbol; recorded under its source name", rec.location, g.name));
            g.name.clone()
        });
        globals.push(Global { name: g.name.clone(), symbol, size: g.size, constant: g.constant });
    }
    (entries, globals)
}

/// Step 7: publish the library under a fresh inode (a process that has the old one
/// mapped keeps it intact), its checking variant, then its manifest.
fn publish(
    opts: &BuildOptions,
    stem: &str,
    tmp_lib: &Path,
    lib: &Path,
    checks_lib: Option<&Path>,
    manifest: &Manifest,
) -> Result<PathBuf, BuildError> {
    if let Some(tmp) = checks_lib {
        let dest = opts.out_dir.join(format!("{stem}{CHECKS_SUFFIX}"));
        std::fs::rename(tmp, &dest).map_err(|e| BuildError::Usage(format!("{}: {e}", dest.display())))?;
    }
    std::fs::rename(tmp_lib, lib).map_err(|e| BuildError::Usage(format!("{}: {e}", lib.display())))?;
    let manifest_path = opts.out_dir.join(Manifest::file_name(stem));
    std::fs::write(&manifest_path, manifest.to_text()).map_err(|e| BuildError::Usage(format!("{}: {e}", manifest_path.display())))?;
    Ok(manifest_path)
}

/// The libdevice functions of the source's flag set and nvcc release when the device
/// profile has models, built once per machine, release and flag set (`libdevice::library`);
/// otherwise why not (the twin then keeps the host's libm). The release is that of the nvcc
/// the build found (the user's: libdevice differs between releases), else the newest
/// kernels-host has.
fn device_math(
    opts: &BuildOptions,
    nv: &flags::NvccFlags,
    session: &Session,
) -> Result<Result<crate::libdevice::Library, String>, BuildError> {
    if !crate::libdevice::PROFILES.contains(&opts.device_profile.as_str()) {
        return Ok(Err(format!(
            "no device-math models for the profile {:?} (modelled: {})",
            opts.device_profile,
            crate::libdevice::PROFILES.join(", ")
        )));
    }
    let release = match (&opts.libdevice_release, &session.nvcc_release) {
        (Some(r), _) => r.clone(),
        (None, Some(Ok(r))) => r.clone(),
        (None, Some(Err(e))) => return Ok(Err(e.clone())),
        (None, None) => crate::libdevice::newest_release().to_string(),
    };
    if let Err(e) = crate::libdevice::release_data(&release) {
        return Ok(Err(e));
    }
    crate::libdevice::library(&opts.cxx, &release, &crate::libdevice::set_name(nv), &session.work).map(Ok).map_err(BuildError::Compile)
}

/// File name suffix of a library's checking variant (`<stem>.checks.so`).
pub const CHECKS_SUFFIX: &str = ".checks.so";

/// Compiles the rewritten translation unit `ii` once more, instrumented (see
/// [`checks_cxx_flags`]), links it with the checking hooks, and checks that it loads and
/// describes the `expected` (kernels, globals) of its plain twin: the same source, so the
/// same descriptor order and build id. Returns the unpublished library (in the work
/// directory).
#[allow(clippy::too_many_arguments)]
fn build_checks_variant(
    opts: &BuildOptions,
    session: &Session,
    hooks: &Path,
    checked: &[String],
    math_objects: &[PathBuf],
    std_flag: &str,
    ii: &Path,
    stem: &str,
    abs: &Path,
    expected: (usize, usize),
) -> Result<PathBuf, BuildError> {
    let work = session.work.as_path();
    let obj = work.join(format!("{stem}.checks.o"));
    run_tool(
        Command::new(&opts.cxx)
            .args(host_cxx_flags())
            .args(checked)
            .args(if math_objects.is_empty() { Vec::new() } else { crate::libdevice::no_builtin_flags() })
            .args(checks_cxx_flags())
            .arg(std_flag)
            .arg("-Wno-attributes")
            .args(["-x", "c++", "-c"])
            .arg(ii)
            .arg("-o")
            .arg(&obj),
        &format!("compiling the checking variant of {}", abs.display()),
    )?;
    let tmp = work.join(format!("{stem}{CHECKS_SUFFIX}.tmp"));
    run_tool(
        Command::new(&opts.cxx)
            .args(["-shared", "-fPIC", "-Wl,-Bsymbolic", "-Wl,-z,defs", "-Wl,-rpath,$ORIGIN"])
            .arg(&obj)
            .arg(&session.rt_obj)
            .arg(hooks)
            .args(math_objects)
            .arg(work.join(TLS_LIBRARY))
            .arg("-o")
            .arg(&tmp)
            .arg("-lm"),
        &format!("linking the checking variant of {}", abs.display()),
    )?;
    let m = LoadedModule::open(&tmp).map_err(BuildError::Compile)?;
    if (m.kernels.len(), m.globals.len()) != expected {
        return Err(BuildError::Compile(format!(
            "{}: the checking variant describes {} kernels and {} globals, the rewriter registered {} and {}",
            abs.display(),
            m.kernels.len(),
            m.globals.len(),
            expected.0,
            expected.1
        )));
    }
    Ok(tmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_names_are_distinct_and_readable() {
        let p = |s: &str| PathBuf::from(s);
        let names = output_names(&[p("/v/src/a/k.cu"), p("/v/src/b/k.cu"), p("/v/src/m.cu"), p("/v/src/b/k.cu"), p("/w/x/a/k.cu")]);
        assert_eq!(names, ["src-a-k", "b-k", "m", "b-k-2", "x-a-k"]);
        assert_eq!(output_names(&[p("/s/a/k.cu"), p("/s/b/k.cu")]), ["a-k", "b-k"]);
    }
}
