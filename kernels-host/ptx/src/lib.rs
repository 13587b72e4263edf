//! simtwin-ptx: PTX mode. A module image's own PTX, translated to host C++ and compiled
//! into a kernel library of simtwin's device runtime ABI (`kernels-host/include/simtwin/
//! abi.h`), so that the emulated driver runs the code the device runs, with no source and
//! no twin.
//!
//! The translator is a pipeline of named passes, one module each:
//!
//! ```text
//! lex, parse   PTX text (ISA up to 9.x; nvcc's and clang's output) -> ast::Module
//! link         several modules (the JIT linker's inputs) -> one, externs bound
//! resolve      names -> registers, variables, labels; bodies flattened
//! params       loads through a register holding a parameter's address -> the parameter
//! cfg          basic blocks and successors of every function
//! contract     ptxas's fusion of unmodified mul/add pairs into FMA (the device's arithmetic)
//! layout       module variables, per-kernel shared-memory windows, parameter buffers
//! uniform      per kernel: do all live threads reach every barrier together (then
//!              the block runs as loops over its threads between barriers), or fibers
//! emit         C++ for the host compiler: one function per .entry/.func, the ABI descriptor;
//!              with it `align` (alignment checked once per runner call), `constants`
//!              (initialized `.const` loads as literals, checked once per runner call)
//!              and `lanes` (a row of threads as vector lanes)
//! ```
//!
//! then [`jit`] compiles the C++ (g++ -O2, cached by content) into a library the driver
//! opens like a twin. Every instruction's semantics are in `runtime/ptx_rt.h`, written
//! from the PTX ISA with the device's answers where it leaves them to the machine. An
//! instruction that cannot be translated faithfully is an [`Error`] naming it, its
//! function and its PTX line: never a silent wrong result.

#![warn(missing_docs)]

pub mod align;
pub mod ast;
pub mod cfg;
pub mod constants;
pub mod contract;
pub mod depot;
pub mod emit;
pub mod jit;
pub mod lanes;
pub mod layout;
pub mod lex;
pub mod link;
pub mod params;
pub mod parse;
pub mod resolve;
pub mod sfu;
pub mod simd;
pub mod uniform;
pub mod waves;

use std::fmt;

/// Version of the translator: part of every cache key (bump on any change of output).
pub const TRANSLATOR_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+ptx.4");

/// A translation failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The text is not valid PTX (line, message).
    Parse(u32, String),
    /// An instruction simtwin cannot translate faithfully.
    Unsupported {
        /// The instruction as written (opcode and modifiers).
        instr: String,
        /// The function it is in.
        function: String,
        /// Its PTX line.
        line: u32,
        /// Why.
        why: String,
    },
    /// A module-level problem (linking, layout).
    Module(String),
    /// A form the device's own driver refuses (measured on the H200), with the CUDA error
    /// it answers, so the emulated driver answers the same.
    DeviceRefuses {
        /// The instruction or declaration as written.
        what: String,
        /// The function it is in (empty at module scope).
        function: String,
        /// Its PTX line.
        line: u32,
        /// The H200's answer (a CUresult).
        code: u32,
        /// What was measured.
        why: String,
    },
    /// A form the device's driver cannot compile into a kernel: under the default lazy
    /// loading the module loads and cuModuleGetFunction of the kernel answers `code`
    /// (its other kernels work); under CUDA_MODULE_LOADING=EAGER the load answers it.
    /// [`translate`] turns it into the kernel's [`KernelInfo::refused`] when it is in a
    /// kernel's own body, into [`Error::DeviceRefuses`] otherwise.
    KernelRefused {
        /// The instruction as written.
        what: String,
        /// The function it is in.
        function: String,
        /// Its PTX line.
        line: u32,
        /// The H200's answer (a CUresult).
        code: u32,
        /// What was measured.
        why: String,
    },
}

impl Error {
    /// A parse error at `line`.
    pub fn parse(line: u32, msg: impl Into<String>) -> Error {
        Error::Parse(line, msg.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Parse(line, m) => write!(f, "PTX line {line}: {m}"),
            Error::Unsupported { instr, function, line, why } => {
                write!(f, "PTX line {line}: `{instr}` in {function} cannot be translated: {why}")
            }
            Error::Module(m) => write!(f, "{m}"),
            Error::DeviceRefuses { what, function, line, code, why } | Error::KernelRefused { what, function, line, code, why } => {
                let at = if function.is_empty() { String::new() } else { format!(" in {function}") };
                write!(f, "PTX line {line}: `{what}`{at}: {why} (the H200's driver answers {code})")
            }
        }
    }
}

impl std::error::Error for Error {}

/// A kernel of a translated module, as the driver binds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    /// The `.entry` name.
    pub name: String,
    /// Parameter sizes and offsets in the parameter buffer.
    pub params: Vec<(u32, u32)>,
    /// Bytes of static shared memory the kernel uses (its window before dynamic memory).
    pub static_smem: u32,
    /// `.maxntid` (product), 0 if none.
    pub max_threads: u32,
    /// `.minnctapersm`, 0 if none.
    pub min_blocks: u32,
    /// `.reqntid`, if any.
    pub reqntid: Option<[u32; 3]>,
    /// SFU instruction forms the kernel (or a function it calls) uses that are not yet
    /// modelled bit for bit.
    pub inexact_sfu: Vec<String>,
    /// How its threads run (`uniform`): the loop path, plain range runs (no barrier),
    /// or fibers.
    pub threads: uniform::Path,
    /// Why.
    pub threads_why: String,
    /// The device's driver cannot compile this kernel ([`Error::KernelRefused`]): its
    /// answer (a CUresult) and the message. The kernel's body is left out (it runs
    /// nothing); the driver answers the code where the device does.
    pub refused: Option<(u32, String)>,
}

/// A module variable visible to the driver (cuModuleGetGlobal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalInfo {
    /// Name.
    pub name: String,
    /// Bytes.
    pub size: u64,
    /// `.const` rather than `.global`.
    pub constant: bool,
}

/// The translator's output for one module.
#[derive(Clone, Debug)]
pub struct Translation {
    /// The C++ translation units (unit 0 holds the descriptor): built in parallel and
    /// linked into one library.
    pub units: Vec<String>,
    /// Kernels, in descriptor order.
    pub kernels: Vec<KernelInfo>,
    /// Globals, in descriptor order.
    pub globals: Vec<GlobalInfo>,
    /// Notes for the user (e.g. fused multiply-adds modelled, SFU placeholders).
    pub notes: Vec<String>,
}

/// How to translate.
#[derive(Clone, Debug)]
pub struct Options {
    /// Model ptxas's contraction of unmodified mul/add pairs into FMA (on by default: it
    /// is what the device runs).
    pub contract: bool,
    /// ptxas's optimisation level the device code is assumed to be built with (the
    /// driver JIT's CU_JIT_OPTIMIZATION_LEVEL, default 3): 0 contracts nothing, 1..=3
    /// the rule (`contract`).
    pub opt_level: u8,
    /// Number of streaming multiprocessors of the emulated device (%nsmid, %smid).
    pub sm_count: u32,
    /// A name for the module in reports and call sites (e.g. "module 3 (vmaf adm)").
    pub name: String,
    /// Translation units to spread the functions over (0: by size and the machine's
    /// cores; 1 for a single file to read).
    pub units: usize,
    /// Which loop-path kernels run their first segment a warp at a time as two vectors of
    /// 16 lanes (`simd::segment`).
    pub segment_vectors: SegmentVectors,
}

/// Which loop-path kernels' first segments run as warp vectors (`simd::segment`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SegmentVectors {
    /// None: every lane stepped one at a time.
    Off,
    /// Those whose form covers enough per-lane work to pay for scattering its registers
    /// into the lanes' frames (`simd::MIN_LANE_WORK`): motion_cuda's blur ran 30% faster
    /// so, adm's kernels whose forms loaded a few words before a cut ran slower.
    #[default]
    Paying,
    /// Every one that has a form (the tests' small kernels; fuzzing).
    All,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            contract: true,
            opt_level: contract::DEFAULT_OPT_LEVEL,
            sm_count: 132,
            name: "ptx".into(),
            units: 0,
            segment_vectors: SegmentVectors::Paying,
        }
    }
}

/// Translates one or more PTX modules (several: the JIT linker's inputs, linked into one
/// library) into C++.
///
/// A kernel whose body holds an instruction the device's driver cannot compile
/// ([`Error::KernelRefused`]) is translated with an empty body and marked
/// [`KernelInfo::refused`]; the module's other kernels are translated as usual.
pub fn translate(sources: &[&str], opts: &Options) -> Result<Translation, Error> {
    let mut module = front(sources)?;
    let mut refused: Vec<(String, u32, String)> = Vec::new();
    loop {
        let a = analyse(module, opts)?;
        match emit::emit(&a.module, &a.layout, &a.fused, &a.plans, opts) {
            Ok(mut t) => {
                for k in &mut t.kernels {
                    if let Some((_, code, why)) = refused.iter().find(|r| r.0 == k.name) {
                        k.refused = Some((*code, why.clone()));
                    }
                }
                return Ok(t);
            }
            Err(Error::KernelRefused { what, function, line, code, why }) => {
                module = a.module;
                let kernel = module.funcs.iter().position(|f| f.decl.entry && f.decl.name == function && !f.body.is_empty());
                match kernel {
                    Some(fi) if !refused.iter().any(|r| r.0 == function) => {
                        let e = Error::KernelRefused { what, function: function.clone(), line, code, why };
                        module.funcs[fi].body.clear();
                        refused.push((function, code, e.to_string()));
                    }
                    // In a device function: every kernel that calls it, directly or
                    // through other functions, fails as its own body would (H200,
                    // ptx_txq_lazy_func: two kernels calling one function answer 500
                    // each, the module's other kernel runs). Where an indirect call could
                    // hide a caller: the whole module, as eager loading.
                    _ => match (kernel, layout::callers(&module, &function)) {
                        (None, Some((func, kernels))) => {
                            let e = Error::KernelRefused { what, function, line, code, why };
                            module.funcs[func].body.clear();
                            for k in kernels {
                                module.funcs[k].body.clear();
                                refused.push((module.funcs[k].decl.name.clone(), code, e.to_string()));
                            }
                        }
                        _ => return Err(Error::DeviceRefuses { what, function, line, code, why }),
                    },
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// Translates a module of device functions into a host library to link into other code
/// (kernels-host's libdevice functions): see [`emit::emit_library`]. `kernels` and
/// `globals` of the result are empty; `notes` name the functions that use an SFU form not
/// modelled exactly.
pub fn translate_library(sources: &[&str], opts: &Options) -> Result<Translation, Error> {
    let a = analyse(front(sources)?, opts)?;
    emit::emit_library(&a.module, &a.layout, &a.fused, &a.plans, opts)
}

/// What the passes between the front end and the emitter found.
struct Analysed {
    module: resolve::Module,
    /// Per function: the mul/add pairs ptxas fuses.
    fused: Vec<contract::Fusions>,
    layout: layout::Layout,
    /// Per kernel: the uniform pass's barrier plan.
    plans: Vec<uniform::Plan>,
}

/// The middle passes, in order: control flow, contraction, layout, uniform barriers.
fn analyse(module: resolve::Module, opts: &Options) -> Result<Analysed, Error> {
    let opt = if opts.contract { opts.opt_level } else { 0 };
    let cfgs: Vec<cfg::Cfg> = module.funcs.iter().map(cfg::build).collect();
    let fused: Vec<contract::Fusions> = module.funcs.iter().zip(&cfgs).map(|(f, g)| contract::fusions(f, g, opt)).collect();
    let layout = layout::layout(&module)?;
    let plans: Vec<uniform::Plan> = layout.kernels.iter().map(|k| uniform::analyse(&module, k.func, &k.reach, &cfgs)).collect();
    Ok(Analysed { module, fused, layout, plans })
}

/// Parses, links and resolves modules.
fn front(sources: &[&str]) -> Result<resolve::Module, Error> {
    let mut parsed = Vec::with_capacity(sources.len());
    for s in sources {
        parsed.push(parse::parse(s)?);
    }
    let mut m = resolve::resolve(link::link(parsed)?)?;
    params::forward(&mut m);
    depot::forward(&mut m);
    waves::fuse(&mut m);
    Ok(m)
}

/// One function's contraction decisions, for inspection (`simtwin-ptx --fusions`) and the
/// corpus test.
#[derive(Clone, Debug)]
pub struct FuncFusions {
    /// The resolved function (its body's nodes are what `fusions` indexes).
    pub func: resolve::Func,
    /// The decisions at the requested optimisation level.
    pub fusions: contract::Fusions,
}

/// The contraction decisions for every function with a body, at ptxas `-O{opt_level}`.
pub fn fusions(sources: &[&str], opt_level: u8) -> Result<Vec<FuncFusions>, Error> {
    let module = front(sources)?;
    Ok(module
        .funcs
        .into_iter()
        .filter(|f| f.decl.body.is_some())
        .map(|f| {
            let fusions = contract::fusions(&f, &cfg::build(&f), opt_level);
            FuncFusions { func: f, fusions }
        })
        .collect())
}
