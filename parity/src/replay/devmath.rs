//! `parity replay --device-math`: twins' math (libdevice translated by simtwin-ptx over the
//! H200's special-function-unit models, exactly as kernels-host builds it for a twin)
//! replayed over every input and compared with the H200's recorded results.
//!
//! The H200's results are too big to keep (16 GiB a function), so the record
//! (`reports/device-math/h200-record/RELEASE-SET/`, made by
//! `scripts/device-math/record.cu`) holds, per function, a hash of the device's results per
//! block of inputs, and the results themselves on one window of 4096 inputs. A block's
//! hash is the XOR over its inputs v of mix(v << 32 | result) (splitmix64's finaliser),
//! truncated to the record's width. The replay computes the same hashes from the twin's
//! results: a differing block is a block where the twin differs from the device on at
//! least one input (the hash cannot say which: the count of differing inputs is exact only
//! inside the window); equal hashes mean equal results up to a 2^-32 (2^-64) chance per
//! block.
//!
//! Input index v of a one-operand function is the float with bits v; of a two-operand
//! function, the pair (grid(v >> 16), grid(v & 0xffff)) of `record.cu`.

use super::args::ReplayArgs;
use anyhow::{bail, Context, Result};
use rayon::prelude::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Inputs per window of recorded results.
pub const WINDOW: usize = 4096;

/// The record's default directory (relative to the repository root).
pub const DEFAULT_RECORD: &str = "reports/device-math/h200-record/13.5-ftz0-div1-sqrt1-fmad1";

/// The grid of two-operand functions: 65536 values per operand, every sign, exponent and
/// top mantissa bits; the low 16 bits zero for even h, a hash of h for odd h.
pub fn grid(h: u32) -> u32 {
    let mut m = h.wrapping_mul(0x9e37);
    m ^= m >> 7;
    m = m.wrapping_mul(0x2f6b);
    (h << 16) | if h & 1 == 1 { m & 0xffff } else { 0 }
}

/// splitmix64's finaliser (the record's per-input hash).
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The 64-bit hash of results `out` of the inputs from index `start`.
pub fn hash(start: u32, out: &[u32]) -> u64 {
    out.iter().enumerate().fold(0u64, |h, (k, r)| h ^ mix(((start as u64 + k as u64) << 32) | *r as u64))
}

/// One function of a record.
#[derive(Clone, Debug)]
pub struct RecordFn {
    /// libdevice's name (`expf`, `__fdividef`).
    pub name: String,
    /// 1 (every bit pattern) or 2 (the grid).
    pub args: u8,
    /// log2 of the inputs per block.
    pub block_shift: u32,
    /// 32 or 64: the kept low bits of each block's hash.
    pub hash_bits: u32,
    /// The XOR of all blocks' 64-bit hashes (libdevice_verify.cu's "device-hash").
    pub total: u64,
    /// The blocks' hashes.
    pub blocks: Vec<u64>,
    /// The device's results on WINDOW inputs from an index.
    pub window: Option<(u32, Vec<u32>)>,
}

impl RecordFn {
    /// Inputs per block.
    pub fn block_len(&self) -> u64 {
        1u64 << self.block_shift
    }
    fn mask(&self) -> u64 {
        if self.hash_bits == 64 {
            u64::MAX
        } else {
            (1u64 << self.hash_bits) - 1
        }
    }
}

/// A record directory: `manifest.txt` and each function's `NAME.blocks` / `NAME.window`.
#[derive(Clone, Debug)]
pub struct Record {
    /// The directory.
    pub dir: PathBuf,
    /// nvcc release of the device build (`13.5`), from the directory's name.
    pub release: String,
    /// Flag set (`ftz0-div1-sqrt1-fmad1`, `fast`), from the directory's name.
    pub set: String,
    /// The manifest's first line (device, driver, program).
    pub provenance: String,
    /// The functions, in manifest order.
    pub functions: Vec<RecordFn>,
}

fn le_words(bytes: &[u8], width: usize) -> Vec<u64> {
    bytes.chunks_exact(width).map(|c| c.iter().rev().fold(0u64, |a, b| (a << 8) | *b as u64)).collect()
}

/// Reads a record directory, checking every file's size against the manifest.
pub fn read_record(dir: &Path) -> Result<Record> {
    let base = dir.file_name().and_then(|n| n.to_str()).context("record directory has no name")?;
    let (release, set) = base.split_once('-').with_context(|| format!("record directory {base:?} is not named RELEASE-SET"))?;
    let manifest_path = dir.join("manifest.txt");
    let manifest = std::fs::read_to_string(&manifest_path).with_context(|| format!("device-math record {}", manifest_path.display()))?;
    let first = manifest.lines().next().unwrap_or("").trim_start_matches('#').trim();
    let provenance = first.trim_start_matches("parity replay --device-math record:").trim().to_string();
    let mut functions = Vec::new();
    for (no, line) in manifest.lines().enumerate().filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty()) {
        let bad = || format!("{}:{}: expected NAME ARGS BLOCK_SHIFT HASH_BITS TOTAL [WINDOW_START 4096]", manifest_path.display(), no + 1);
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() != 5 && w.len() != 7 {
            bail!(bad());
        }
        let args: u8 = w[1].parse().ok().filter(|a| *a == 1 || *a == 2).with_context(bad)?;
        let block_shift: u32 = w[2].parse().ok().filter(|s| (16..=32).contains(s)).with_context(bad)?;
        let hash_bits: u32 = w[3].parse().ok().filter(|b| *b == 32 || *b == 64).with_context(bad)?;
        let total = u64::from_str_radix(w[4], 16).ok().with_context(bad)?;
        let name = w[0].to_string();
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            bail!(bad());
        }
        let path = dir.join(format!("{name}.blocks"));
        let bytes = std::fs::read(&path).with_context(|| format!("device-math record {}", path.display()))?;
        let nblocks = 1usize << (32 - block_shift);
        let width = hash_bits as usize / 8;
        if bytes.len() != nblocks * width {
            bail!("{}: {} bytes, the manifest says {} blocks of {} bytes", path.display(), bytes.len(), nblocks, width);
        }
        let blocks = le_words(&bytes, width);
        let window = if w.len() == 7 {
            let start = u32::from_str_radix(w[5], 16).ok().with_context(bad)?;
            if w[6] != WINDOW.to_string() || start as u64 + WINDOW as u64 > 1 << 32 {
                bail!(bad());
            }
            let path = dir.join(format!("{name}.window"));
            let bytes = std::fs::read(&path).with_context(|| format!("device-math record {}", path.display()))?;
            if bytes.len() != WINDOW * 4 {
                bail!("{}: {} bytes, expected {}", path.display(), bytes.len(), WINDOW * 4);
            }
            Some((start, le_words(&bytes, 4).into_iter().map(|v| v as u32).collect()))
        } else {
            None
        };
        let mask = if hash_bits == 64 { u64::MAX } else { (1u64 << hash_bits) - 1 };
        if blocks.iter().fold(0, |a, b| a ^ b) != total & mask {
            bail!("{}: the blocks' hashes do not add up to the manifest's total {total:016x}", path.display());
        }
        functions.push(RecordFn { name, args, block_shift, hash_bits, total, blocks, window });
    }
    if functions.is_empty() {
        bail!("{}: no functions", manifest_path.display());
    }
    Ok(Record { dir: dir.to_path_buf(), release: release.into(), set: set.into(), provenance, functions })
}

/// What computes a function's results for a range of input indices.
pub trait Model: Sync {
    /// Results of `f` for input indices `start..start + out.len()`.
    fn eval(&self, f: &RecordFn, start: u32, out: &mut [u32]);
    /// What it is, for the report.
    fn describe(&self) -> String;
}

/// Twins' math: kernels-host's libdevice library of the record's release and flag set,
/// linked into a shared object with an evaluation entry point per function.
pub struct TwinMath {
    _lib: libloading::Library,
    eval: unsafe extern "C" fn(*const u8, u32, u32, *mut u32) -> i32,
    what: String,
}

impl TwinMath {
    /// Builds (in `work`) and loads the library for `names` of `release`/`set`.
    pub fn build(release: &str, set: &str, names: &[(String, u8)], work: &Path) -> Result<TwinMath> {
        std::fs::create_dir_all(work)?;
        let cxx = super::host::cxx();
        let lib = kernels_host::libdevice::library(&cxx, release, set, work).map_err(|e| anyhow::anyhow!("twins' libdevice: {e}"))?;
        let known = kernels_host::libdevice::functions();
        let mut src = String::from(
            "// generated by parity replay --device-math\n#include <stdint.h>\n#include <string.h>\n\
             namespace __simtwin { struct simtwin_runtime_t; const simtwin_runtime_t *rt = nullptr; }\n\
             static inline uint32_t grid(uint32_t h) { uint32_t m = h * 0x9e37u; m ^= m >> 7; m *= 0x2f6bu; return (h << 16) | ((h & 1) ? (m & 0xffffu) : 0u); }\n\
             static inline float bf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }\n\
             static inline uint32_t fb(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }\n",
        );
        let mut body = String::new();
        for (name, args) in names {
            let sig = kernels_host::libdevice::Sig::Scalar { wide: false, args: *args };
            if !known.iter().any(|(n, s)| n == name && *s == sig) {
                bail!("{name}: not a float function of {} arguments in kernels-host's libdevice", args);
            }
            if *args == 1 {
                src.push_str(&format!("extern \"C\" float __simtwin_ld_{name}(float);\n"));
                body.push_str(&format!(
                    "  if (!strcmp(name, \"{name}\")) {{ for (uint32_t i = 0; i < n; ++i) out[i] = fb(__simtwin_ld_{name}(bf(start + i))); return 0; }}\n"
                ));
            } else {
                src.push_str(&format!("extern \"C\" float __simtwin_ld_{name}(float, float);\n"));
                body.push_str(&format!(
                    "  if (!strcmp(name, \"{name}\")) {{ for (uint32_t i = 0; i < n; ++i) {{ uint32_t v = start + i; \
                     out[i] = fb(__simtwin_ld_{name}(bf(grid(v >> 16)), bf(grid(v & 0xffffu)))); }} return 0; }}\n"
                ));
            }
        }
        src.push_str("extern \"C\" __attribute__((visibility(\"default\"))) int devmath_eval(const char *name, uint32_t start, uint32_t n, uint32_t *out) {\n");
        src.push_str(&body);
        src.push_str("  return -1;\n}\n");
        let cpp = work.join("devmath.cpp");
        std::fs::write(&cpp, src)?;
        let so = work.join("libdevmath.so");
        let mut cmd = Command::new(&cxx);
        cmd.args(["-O2", "-fPIC", "-shared", "-o"]).arg(&so).arg(&cpp).args(&lib.objects).arg(&lib.runtime).arg("-lm");
        let o = cmd.output().with_context(|| format!("running {cxx}"))?;
        if !o.status.success() {
            bail!("linking twins' libdevice ({:?}) failed:\n{}", cmd, String::from_utf8_lossy(&o.stderr));
        }
        type Eval = unsafe extern "C" fn(*const u8, u32, u32, *mut u32) -> i32;
        // SAFETY: the library was just built from the source above; devmath_eval has the
        // Eval signature and is kept with the library that holds it.
        let (l, eval) = unsafe {
            let l = libloading::Library::new(&so).with_context(|| format!("dlopen {}", so.display()))?;
            let f: Eval = *l.get::<Eval>(b"devmath_eval\0").context("devmath_eval not exported")?;
            (l, f)
        };
        Ok(TwinMath {
            _lib: l,
            eval,
            what: format!("twins' libdevice (nvcc {release}, {set}; simtwin-ptx over the H200's SFU models, as kernels-host builds it)"),
        })
    }
}

impl Model for TwinMath {
    fn eval(&self, f: &RecordFn, start: u32, out: &mut [u32]) {
        let name = std::ffi::CString::new(f.name.as_str()).expect("record names are alphanumeric");
        // SAFETY: `out` holds out.len() elements; the name is NUL-terminated; build()
        // generated an entry for every function it was given (checked at build).
        let rc = unsafe { (self.eval)(name.as_ptr() as *const u8, start, out.len() as u32, out.as_mut_ptr()) };
        assert_eq!(rc, 0, "{}: not built into the replay library", f.name);
    }
    fn describe(&self) -> String {
        self.what.clone()
    }
}

/// The host's libm (glibc through Rust's float methods): what twins computed before device
/// math, kept as a known-wrong model so that the replay shows it can fail.
pub struct HostLibm;

fn host_fn(name: &str, x: f32, y: f32) -> Option<f32> {
    Some(match name {
        "expf" | "__expf" => x.exp(),
        "exp2f" => x.exp2(),
        "logf" | "__logf" => x.ln(),
        "log2f" | "__log2f" => x.log2(),
        "log10f" => x.log10(),
        "sinf" | "__sinf" => x.sin(),
        "cosf" | "__cosf" => x.cos(),
        "tanf" | "__tanf" => x.tan(),
        "rsqrtf" => 1.0 / x.sqrt(),
        "sqrtf" => x.sqrt(),
        "powf" | "__powf" => x.powf(y),
        "__fdividef" => x / y,
        _ => return None,
    })
}

impl HostLibm {
    /// Whether the host model has `name`.
    pub fn has(name: &str) -> bool {
        host_fn(name, 1.0, 1.0).is_some()
    }
}

impl Model for HostLibm {
    fn eval(&self, f: &RecordFn, start: u32, out: &mut [u32]) {
        for (i, o) in out.iter_mut().enumerate() {
            let v = start.wrapping_add(i as u32);
            let (x, y) =
                if f.args == 1 { (f32::from_bits(v), 0.0) } else { (f32::from_bits(grid(v >> 16)), f32::from_bits(grid(v & 0xffff))) };
            *o = host_fn(&f.name, x, y).expect("checked by has()").to_bits();
        }
    }
    fn describe(&self) -> String {
        "the host's libm (glibc via Rust's f32 methods): a planted wrong model".into()
    }
}

/// One differing input of a window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputDiff {
    /// Input index (a float's bits, or grid index for two operands).
    pub index: u32,
    /// The device's result bits.
    pub device: u32,
    /// The model's result bits.
    pub emulated: u32,
}

/// The comparison of one function.
#[derive(Clone, Debug, Default)]
pub struct FnOutcome {
    /// Blocks compared.
    pub blocks: u64,
    /// Inputs those blocks hold.
    pub inputs: u64,
    /// Blocks whose hash differs.
    pub differing_blocks: u64,
    /// The first differing blocks (index).
    pub first_blocks: Vec<u64>,
    /// Inputs of the window compared (0 without a window).
    pub window_inputs: u64,
    /// Inputs of the window whose results differ.
    pub window_differing: u64,
    /// The first of them.
    pub first_inputs: Vec<InputDiff>,
    /// Whole-range hash matched (exhaustive runs only).
    pub total_matches: Option<bool>,
}

/// Which blocks a run compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocks {
    /// The window's block (or the block of 1.0's bits without a window).
    Sample,
    /// Every block: 2^32 inputs.
    All,
    /// Blocks overlapping input indices [from, to).
    Range(u32, u64),
}

/// The block indices `sel` gives for `f`.
pub fn block_list(f: &RecordFn, sel: Blocks) -> Vec<u64> {
    let n = 1u64 << (32 - f.block_shift);
    match sel {
        Blocks::All => (0..n).collect(),
        Blocks::Sample => vec![f.window.as_ref().map(|w| w.0).unwrap_or(0x3f80_0000) as u64 >> f.block_shift],
        Blocks::Range(a, b) => ((a as u64 >> f.block_shift)..b.div_ceil(f.block_len()).min(n)).collect(),
    }
}

/// Compares `model` with the record of `f` over `blocks` (and its window), listing at most
/// `max_list` differing blocks and inputs.
pub fn compare(f: &RecordFn, model: &dyn Model, blocks: &[u64], max_list: usize) -> FnOutcome {
    const STEP: usize = 1 << 16;
    let mask = f.mask();
    let results: Vec<(u64, bool, u64)> = blocks
        .par_iter()
        .map(|&b| {
            let start = b << f.block_shift;
            let mut buf = vec![0u32; STEP];
            let mut h = 0u64;
            let mut s = start;
            while s < start + f.block_len() {
                model.eval(f, s as u32, &mut buf);
                h ^= hash(s as u32, &buf);
                s += STEP as u64;
            }
            (b, h & mask == f.blocks[b as usize], h)
        })
        .collect();
    let mut o = FnOutcome { blocks: blocks.len() as u64, inputs: blocks.len() as u64 * f.block_len(), ..Default::default() };
    for (b, same, _) in &results {
        if !same {
            o.differing_blocks += 1;
            if o.first_blocks.len() < max_list {
                o.first_blocks.push(*b);
            }
        }
    }
    if blocks.len() as u64 == 1u64 << (32 - f.block_shift) {
        o.total_matches = Some(results.iter().fold(0, |a, r| a ^ r.2) == f.total);
    }
    if let Some((start, dev)) = &f.window {
        let mut got = vec![0u32; WINDOW];
        model.eval(f, *start, &mut got);
        o.window_inputs = WINDOW as u64;
        for (k, (d, g)) in dev.iter().zip(&got).enumerate() {
            if d != g {
                o.window_differing += 1;
                if o.first_inputs.len() < max_list {
                    o.first_inputs.push(InputDiff { index: start + k as u32, device: *d, emulated: *g });
                }
            }
        }
    }
    o
}

fn input_text(f: &RecordFn, v: u32) -> String {
    if f.args == 1 {
        format!("0x{v:08x} ({:e})", f32::from_bits(v))
    } else {
        let (x, y) = (grid(v >> 16), grid(v & 0xffff));
        format!("(0x{x:08x}, 0x{y:08x}) ({:e}, {:e})", f32::from_bits(x), f32::from_bits(y))
    }
}

/// `parity replay --device-math`: exit 0 when every compared block and window input equals
/// the device, 1 otherwise.
pub fn run(args: &ReplayArgs) -> Result<i32> {
    let a = &args.device_math;
    let (functions, from, to, out, threads) = (args.function.as_deref(), &args.from, &args.to, args.out.as_deref(), args.threads);
    if args.source.is_some() || args.builtin.is_some() || args.table.is_some() || args.device != "host" {
        bail!("--device-math replays twins' libdevice against the record: give it without --source, --builtin, --table or --device real");
    }
    let dir = a.record.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_RECORD));
    let rec = read_record(&dir)?;
    let wanted: Vec<&str> = functions.map(|s| s.split(',').map(str::trim).filter(|s| !s.is_empty()).collect()).unwrap_or_default();
    for w in &wanted {
        if !rec.functions.iter().any(|f| f.name == *w) {
            bail!(
                "--function {w}: not in the record {} (it has {})",
                dir.display(),
                rec.functions.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", ")
            );
        }
    }
    let fns: Vec<&RecordFn> = rec.functions.iter().filter(|f| wanted.is_empty() || wanted.contains(&f.name.as_str())).collect();
    let sel = if a.exhaustive {
        if from.is_some() || to.is_some() {
            bail!("--exhaustive compares every block: give it without --from/--to");
        }
        Blocks::All
    } else if from.is_some() || to.is_some() {
        let (f, t) = super::bounds::range(from, to)?;
        Blocks::Range(f, t)
    } else {
        Blocks::Sample
    };
    let work = std::env::temp_dir().join(format!("parity-devmath-{}", std::process::id()));
    let model: Box<dyn Model> = match a.model.as_str() {
        "twin" => {
            let built = TwinMath::build(&rec.release, &rec.set, &fns.iter().map(|f| (f.name.clone(), f.args)).collect::<Vec<_>>(), &work);
            // The library is loaded (or failed to build): the scratch directory goes either way.
            let _ = std::fs::remove_dir_all(&work);
            Box::new(built?)
        }
        "host-libm" => {
            if let Some(f) = fns.iter().find(|f| !HostLibm::has(&f.name)) {
                bail!("--model host-libm has no {}", f.name);
            }
            Box::new(HostLibm)
        }
        m => bail!("--model must be twin or host-libm, not {m:?}"),
    };
    let pool = super::engine::pool(threads)?;
    let t0 = std::time::Instant::now();
    let mut rows = Vec::new();
    let mut any = false;
    println!("parity replay --device-math: {} against the record of {} ({})", model.describe(), rec.provenance, rec.dir.display());
    for f in &fns {
        let t = std::time::Instant::now();
        let blocks = block_list(f, sel);
        let o = pool.install(|| compare(f, model.as_ref(), &blocks, args.max_list));
        let differs = o.differing_blocks > 0 || o.window_differing > 0 || o.total_matches == Some(false);
        any |= differs;
        println!(
            "{:<12} {} blocks of 2^{} ({} inputs): {} differ; window {} inputs: {} differ{}  {:.1} s",
            f.name,
            o.blocks,
            f.block_shift,
            o.inputs,
            o.differing_blocks,
            o.window_inputs,
            o.window_differing,
            match o.total_matches {
                Some(true) => "; whole-range hash equal",
                Some(false) => "; whole-range hash DIFFERS",
                None => "",
            },
            t.elapsed().as_secs_f64()
        );
        for d in o.first_inputs.iter().take(8) {
            println!("  input {} device 0x{:08x} emulated 0x{:08x}", input_text(f, d.index), d.device, d.emulated);
        }
        for b in o.first_blocks.iter().take(8) {
            let s = b << f.block_shift;
            println!("  block {b}: inputs 0x{s:08x}..0x{:08x} differ on at least one input", s + f.block_len() - 1);
        }
        rows.push(json!({
            "function": f.name, "operands": f.args, "block_inputs": f.block_len(), "hash_bits": f.hash_bits,
            "blocks": o.blocks, "inputs": o.inputs, "differing_blocks": o.differing_blocks,
            "first_differing_blocks": o.first_blocks.iter().map(|b| json!({"block": b, "from": format!("0x{:08x}", b << f.block_shift),
                "to": format!("0x{:08x}", (b << f.block_shift) + f.block_len())})).collect::<Vec<_>>(),
            "window_from": f.window.as_ref().map(|w| format!("0x{:08x}", w.0)), "window_inputs": o.window_inputs,
            "window_differing_inputs": o.window_differing,
            "first_differing_inputs": o.first_inputs.iter().map(|d| json!({"input": format!("0x{:08x}", d.index),
                "device": format!("0x{:08x}", d.device), "emulated": format!("0x{:08x}", d.emulated)})).collect::<Vec<_>>(),
            "whole_range_hash_equal": o.total_matches,
        }));
    }
    let summary = json!({
        "tool": "parity replay --device-math",
        "record": rec.dir.display().to_string(), "release": rec.release, "flag_set": rec.set, "device": rec.provenance,
        "model": model.describe(), "selection": match sel { Blocks::All => "exhaustive".to_string(), Blocks::Sample => "sample".into(),
            Blocks::Range(a, b) => format!("0x{a:08x}..0x{b:08x}") },
        "functions": rows, "differences": any, "seconds": t0.elapsed().as_secs_f64(),
    });
    let out = out.map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("reports/replay/device-math"));
    std::fs::create_dir_all(&out).with_context(|| format!("{}", out.display()))?;
    std::fs::write(out.join("summary.json"), serde_json::to_string_pretty(&summary)? + "\n")?;
    println!(
        "{} ({})",
        if any { "DIFFERS from the device" } else { "equal to the device on everything compared" },
        out.join("summary.json").display()
    );
    Ok(i32::from(any))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_and_hash_follow_record_cu() {
        assert_eq!(grid(0x3f80), 0x3f80_0000);
        assert_eq!(grid(1) & 0xffff_0000, 0x0001_0000);
        assert_ne!(grid(1) & 0xffff, 0);
        // the hash is order-independent and sensitive to one bit of one result
        let a = [1u32, 2, 3, 4];
        assert_ne!(hash(0, &a), hash(0, &[1, 2, 3, 5]));
        assert_eq!(hash(0, &a[..2]) ^ hash(2, &a[2..]), hash(0, &a));
    }
}
