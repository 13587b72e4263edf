//! The build: .cu -> preprocessed -> rewritten + registry -> g++ -> OUT_DIR/<stem>.so,
//! then dlopen to read the descriptor and the exported symbol names, then the manifest.

use crate::manifest::{self, Entry, Global, Manifest};
use crate::module::LoadedModule;
use crate::{flags, host_cxx_flags, include_dir, rewrite, runtime_cxx_flags, RUNTIME_SOURCE};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What to build and how.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    pub out_dir: PathBuf,
    pub include_dirs: Vec<PathBuf>,
    /// `NAME` or `NAME=VALUE`.
    pub defines: Vec<String>,
    /// Emulated architecture: `__CUDA_ARCH__` = arch * 10 (90 -> 900).
    pub arch: u32,
    /// The nvcc flags the user's real build uses (recorded in the manifest).
    pub nvcc_flags: Vec<String>,
    pub sources: Vec<PathBuf>,
    /// The host C++ compiler (default `g++`, or $SIMTWIN_CXX).
    pub cxx: String,
}

impl BuildOptions {
    pub fn new(out_dir: impl Into<PathBuf>, sources: Vec<PathBuf>) -> Self {
        BuildOptions {
            out_dir: out_dir.into(),
            include_dirs: vec![],
            defines: vec![],
            arch: 90,
            nvcc_flags: vec![],
            sources,
            cxx: std::env::var("SIMTWIN_CXX").unwrap_or_else(|_| "g++".to_string()),
        }
    }
}

/// One built library.
#[derive(Debug, Clone)]
pub struct Built {
    pub library: PathBuf,
    pub manifest_path: PathBuf,
    pub manifest: Manifest,
}

#[derive(Debug)]
pub enum BuildError {
    /// Bad arguments or unreadable input (CLI exit code 2).
    Usage(String),
    /// The source does not compile for the host (CLI exit code 1); the text holds
    /// g++'s messages or the rewriter's, with file and line.
    Compile(String),
}

impl BuildError {
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

fn run_tool(cmd: &mut Command, what: &str) -> Result<Vec<u8>, BuildError> {
    let out = cmd
        .output()
        .map_err(|e| BuildError::Usage(format!("cannot run {:?} ({what}): {e}", cmd.get_program())))?;
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

/// The module descriptor tail appended to the rewritten source. Everything it defines is
/// in namespace `__simtwin` (reserved to the implementation), so no user name collides.
fn registry_tail(rw: &rewrite::Rewritten, source: &str, hash: &str, build_id: &str) -> String {
    let mut t = String::from("\n# 1 \"<simtwin registry>\"\nnamespace __simtwin {\n");
    // The definition repeats the declaration's initial-exec model (the prelude's
    // __SIMTWIN_TLS_CTX_ATTRS; macros are gone by now): threadIdx & co. are a
    // %fs-relative load, never a __tls_get_addr call.
    t.push_str(
        "__thread simtwin_thread_ctx_t *tls_ctx \
         __attribute__((tls_model(\"initial-exec\"), visibility(\"hidden\"))) = nullptr;\n",
    );
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
            "--use_fast_math: the device uses approximate division, sqrt and transcendental intrinsics \
             and flushes subnormals; the host build computes IEEE results"
                .to_string(),
        );
    }
    if f.ftz && !f.fast_math {
        w.push("--ftz=true: the device flushes subnormal floats to zero; the host build does not".to_string());
    }
    if f.prec_div_false || f.prec_sqrt_false {
        w.push("--prec-div/--prec-sqrt=false: the device uses approximate division/sqrt; the host build is IEEE".to_string());
    }
    w
}

/// Builds every source of `opts`. Stops at the first failure.
pub fn build(opts: &BuildOptions) -> Result<Vec<Built>, BuildError> {
    if opts.sources.is_empty() {
        return Err(BuildError::Usage("no .cu files given".into()));
    }
    if !(10..=200).contains(&opts.arch) {
        return Err(BuildError::Usage(format!("unsupported architecture sm_{}", opts.arch)));
    }
    let nv = flags::parse(&opts.nvcc_flags).map_err(BuildError::Usage)?;
    let mut stems = std::collections::HashSet::new();
    for s in &opts.sources {
        let stem = s.file_stem().map(|x| x.to_string_lossy().into_owned()).unwrap_or_default();
        if !stems.insert(stem.clone()) {
            return Err(BuildError::Usage(format!("two sources would both build {stem}.so")));
        }
    }
    std::fs::create_dir_all(&opts.out_dir)
        .map_err(|e| BuildError::Usage(format!("cannot create {}: {e}", opts.out_dir.display())))?;
    let work = opts.out_dir.join(".simtwin-build");
    std::fs::create_dir_all(&work).map_err(|e| BuildError::Usage(format!("cannot create {}: {e}", work.display())))?;
    let std_flag = format!("-std={}", nv.std.clone().unwrap_or_else(|| "c++17".to_string()));
    // The runtime: compiled once per build, with its own flags.
    let rt_src = work.join("simtwin_runtime.cpp");
    std::fs::write(&rt_src, RUNTIME_SOURCE).map_err(|e| BuildError::Usage(format!("{}: {e}", rt_src.display())))?;
    let rt_obj = work.join("simtwin_runtime.o");
    run_tool(
        Command::new(&opts.cxx)
            .args(runtime_cxx_flags())
            .arg("-std=c++17")
            .arg("-I")
            .arg(include_dir())
            .arg("-c")
            .arg(&rt_src)
            .arg("-o")
            .arg(&rt_obj),
        "compiling the simtwin runtime",
    )?;
    opts.sources.iter().map(|s| build_one(opts, &nv, &std_flag, &work, &rt_obj, s)).collect()
}

fn build_one(
    opts: &BuildOptions,
    nv: &flags::NvccFlags,
    std_flag: &str,
    work: &Path,
    rt_obj: &Path,
    source: &Path,
) -> Result<Built, BuildError> {
    let abs = std::fs::canonicalize(source)
        .map_err(|e| BuildError::Usage(format!("{}: {e}", source.display())))?;
    let bytes = std::fs::read(&abs).map_err(|e| BuildError::Usage(format!("{}: {e}", abs.display())))?;
    let hash = format!("{:x}", Sha256::digest(&bytes));
    let stem = abs.file_stem().unwrap().to_string_lossy().into_owned();
    let src_dir = abs.parent().unwrap_or(Path::new("/")).to_path_buf();

    // 1. Preprocess with the shim first on the include path, as nvcc would see the file.
    let mut pp = Command::new(&opts.cxx);
    pp.arg("-E").arg("-x").arg("c++").arg(std_flag);
    pp.arg(format!("-D__CUDA_ARCH__={}", opts.arch * 10));
    pp.args(["-D__CUDACC__", "-D__NVCC__", "-D__SIMTWIN__"]);
    pp.arg("-I").arg(include_dir());
    pp.arg("-I").arg(&src_dir);
    for d in &opts.include_dirs {
        pp.arg("-I").arg(d);
    }
    for d in &nv.include_dirs {
        pp.arg("-I").arg(d);
    }
    for d in opts.defines.iter().chain(nv.defines.iter()) {
        pp.arg(format!("-D{d}"));
    }
    for u in &nv.undefines {
        pp.arg(format!("-U{u}"));
    }
    pp.arg("-include").arg("simtwin/prelude.h");
    for f in &nv.force_includes {
        pp.arg("-include").arg(f);
    }
    pp.arg(&abs);
    let pre = run_tool(&mut pp, &format!("preprocessing {}", abs.display()))?;
    let pre = String::from_utf8(pre)
        .map_err(|_| BuildError::Compile(format!("{}: the preprocessed source is not UTF-8", abs.display())))?;

    // 2. Rewrite and append the registry.
    let rw = rewrite::rewrite(&pre).map_err(|errs| BuildError::Compile(errs.join("\n")))?;
    let mut warnings = flag_warnings(nv);
    warnings.extend(rw.warnings.iter().cloned());
    let mut text = rw.text.clone();
    // The build id binds library and manifest: a hash of everything that went into the
    // translation unit (the rewritten source, the host flags and the runtime's source).
    let build_id = {
        let mut h = Sha256::new();
        h.update(text.as_bytes());
        h.update(host_cxx_flags().join(" ").as_bytes());
        h.update(std_flag.as_bytes());
        h.update(RUNTIME_SOURCE.as_bytes());
        format!("{:x}", h.finalize())
    };
    text.push_str(&registry_tail(&rw, &abs.to_string_lossy(), &hash, &build_id));
    let ii = work.join(format!("{stem}.ii"));
    std::fs::write(&ii, &text).map_err(|e| BuildError::Usage(format!("{}: {e}", ii.display())))?;

    // 3. Compile and link. No undefined symbols toward the driver (-z defs).
    let obj = work.join(format!("{stem}.o"));
    run_tool(
        Command::new(&opts.cxx)
            .args(host_cxx_flags())
            .arg(std_flag)
            // always_inline on kernels that are not `inline` (see rewrite.rs) is not news.
            .arg("-Wno-attributes")
            .args(["-x", "c++", "-c"])
            .arg(&ii)
            .arg("-o")
            .arg(&obj),
        &format!("compiling {}", abs.display()),
    )?;
    let lib = opts.out_dir.join(format!("{stem}.so"));
    let tmp_lib = work.join(format!("{stem}.so.tmp"));
    run_tool(
        Command::new(&opts.cxx)
            .args(["-shared", "-fPIC", "-Wl,-Bsymbolic", "-Wl,-z,defs"])
            .arg(&obj)
            .arg(rt_obj)
            .arg("-o")
            .arg(&tmp_lib)
            .arg("-lm"),
        &format!("linking {}", lib.display()),
    )?;
    // A fresh inode, so a process that has the old library mapped keeps it intact.
    std::fs::rename(&tmp_lib, &lib).map_err(|e| BuildError::Usage(format!("{}: {e}", lib.display())))?;

    // 4. Read the descriptor back and name every entry by its exported symbol.
    let m = LoadedModule::open(&lib).map_err(BuildError::Compile)?;
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
    let manifest = Manifest {
        schema: manifest::SCHEMA.to_string(),
        library: format!("{stem}.so"),
        source: abs.to_string_lossy().into_owned(),
        source_hash: hash,
        build_id,
        nvcc_flags: opts.nvcc_flags.clone(),
        fma_contraction_differs: nv.fmad,
        entries,
        globals,
        warnings,
    };
    let manifest_path = opts.out_dir.join(Manifest::file_name(&stem));
    std::fs::write(&manifest_path, manifest.to_text())
        .map_err(|e| BuildError::Usage(format!("{}: {e}", manifest_path.display())))?;
    Ok(Built { library: lib, manifest_path, manifest })
}
