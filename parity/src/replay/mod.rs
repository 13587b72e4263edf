//! `parity replay` and `parity libm`: exhaustive binary32 replay against a correctly
//! rounded reference (binary64 libm behind a 2^-40 filter, MPFR for the rest).
//!
//! * [`run_replay`]: a `__device__ float f(float)` from a .cu file, host-compiled with
//!   kernels-host's shim (or, with `--device real`, compiled by nvcc and run on a GPU
//!   through cudarc), replayed over a range of inputs (default: every positive finite
//!   float, 0x00000001..0x7f800000) and checked.
//! * [`run_libm`]: the same for a host libm function (glibc by default, or any shared
//!   library exporting it, e.g. the simtwin_crlibm preload library).
//!
//! Both write `DIR/summary.json` (`inputs`, `misrounded`, `mpfr_decided`, `seconds`, ...)
//! and `DIR/misrounded.csv`.

pub mod args;
pub mod bounds;
pub mod crlog2gen;
pub mod device;
pub mod devmath;
pub mod engine;
pub mod host;
pub mod reference;

use anyhow::{bail, Context, Result};
pub use args::{DeviceMathArgs, LibmArgs, ReplayArgs};
pub use bounds::parse_bound;
use bounds::range;
use engine::{pool, BatchFn, Options, Outcome};
use reference::RefFn;
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Groups misrounded inputs by mantissa (the 23 fraction bits), largest families first.
pub fn families(list: &[engine::Misround], cap: usize) -> serde_json::Value {
    let mut m: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for e in list {
        m.entry(e.input & 0x7f_ffff).or_default().push(e.input);
    }
    let mut v: Vec<(u32, Vec<u32>)> = m.into_iter().collect();
    v.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    let total = v.len();
    let groups: Vec<serde_json::Value> = v
        .into_iter()
        .take(cap)
        .map(|(mant, ins)| {
            let exps: Vec<i32> = ins.iter().map(|x| ((x >> 23) & 0xff) as i32 - 127).collect();
            json!({
                "mantissa": format!("0x{mant:06x}"),
                "count": ins.len(),
                "exponents": exps,
                "inputs": ins.iter().take(16).map(|x| format!("0x{x:08x}")).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({"count": total, "listed": groups.len(), "groups": groups})
}

/// misrounded.csv text.
pub fn misrounded_csv(list: &[engine::Misround]) -> String {
    let mut s = String::from("input,input_value,got,got_value,expected,expected_value,ulp_error,ulp_distance\n");
    for m in list {
        let _ = writeln!(
            s,
            "0x{:08x},{:e},0x{:08x},{:e},0x{:08x},{:e},{:.6},{}",
            m.input,
            f32::from_bits(m.input),
            m.got,
            f32::from_bits(m.got),
            m.expected,
            f32::from_bits(m.expected),
            m.ulp_error,
            m.ulp_distance
        );
    }
    s
}

/// The summary object shared by replay and libm.
pub fn summary(o: &Outcome, from: u32, to: u64, extra: serde_json::Value) -> serde_json::Value {
    let mut v = json!({
        "inputs": o.inputs,
        "misrounded": o.misrounded,
        "misrounded_fraction": if o.inputs > 0 { o.misrounded as f64 / o.inputs as f64 } else { 0.0 },
        "mpfr_decided": o.mpfr_decided,
        "seconds": o.seconds,
        "inputs_per_second": if o.seconds > 0.0 { o.inputs as f64 / o.seconds } else { 0.0 },
        "from": format!("0x{from:08x}"),
        "to": format!("0x{to:08x}"),
        "from_value": f32::from_bits(from),
        "to_value": if to <= u32::MAX as u64 { f32::from_bits(to as u32) as f64 } else { f64::NAN },
        "max_ulp_error": o.max_ulp_error,
        "max_ulp_error_input": o.max_ulp_error_input.map(|x| format!("0x{x:08x}")),
        "listed": o.list.len(),
        "list_truncated": o.list_truncated,
        "correctly_rounded": o.misrounded == 0,
        "reference_method": "binary64 host libm, accepted when farther than 2^-40 relative from a binary32 rounding boundary; else MPFR at 24 bits, RN, binary32 exponent range",
        "families": families(&o.list, 256),
    });
    if let (Some(obj), serde_json::Value::Object(e)) = (v.as_object_mut(), extra) {
        for (k, val) in e {
            obj.insert(k, val);
        }
    }
    v
}

/// Writes summary.json and misrounded.csv into `dir`.
pub fn write_reports(dir: &Path, summary: &serde_json::Value, o: &Outcome) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(dir.join("summary.json"), serde_json::to_string_pretty(summary)? + "\n")?;
    let _ = std::fs::remove_file(dir.join(crate::shard::FILE));
    std::fs::write(dir.join("misrounded.csv"), misrounded_csv(&o.list))?;
    let tool = summary["tool"].as_str().unwrap_or("parity replay");
    let suite = crate::junit::Suite {
        name: tool.to_string(),
        cases: crate::junit::replay_cases(tool.trim_start_matches("parity "), summary),
        time: None,
    };
    crate::junit::write(&dir.join("junit.xml"), tool, &[suite])
}

/// Result of checking one hard-case table entry.
#[derive(Clone, Debug)]
pub struct TableEntryCheck {
    /// The entry's input (binary32 bits).
    pub input: u32,
    /// The result the table lists for it (binary32 bits).
    pub listed: u32,
    /// The correctly rounded result per MPFR (binary32 bits).
    pub correct: u32,
    /// Distance of the exact result from the nearest rounding midpoint, in ulps (0.5 = on a
    /// float, 0 = on a midpoint), from MPFR at 128 bits.
    pub midpoint_distance_ulps: f64,
}

/// Recomputes every entry of a hard-case table with MPFR.
pub fn check_table(reference: &RefFn, cases: &[(u32, u32)]) -> Vec<TableEntryCheck> {
    use rayon::prelude::*;
    cases
        .par_iter()
        .map(|&(x, y)| {
            let xf = f32::from_bits(x);
            let correct = reference.mpfr_f32(xf);
            let hi = reference.mpfr_high(xf, 128);
            let d = if hi.is_finite() && correct.is_finite() {
                let ulp = reference::ulp_f32(correct as f64);
                let diff = rug::Float::with_val(128, &hi - correct).abs();
                let r = (diff / ulp).to_f64();
                (0.5 - r).abs()
            } else {
                f64::NAN
            };
            TableEntryCheck { input: x, listed: y, correct: correct.to_bits(), midpoint_distance_ulps: d }
        })
        .collect()
}

fn default_out(kind: &str, name: &str) -> PathBuf {
    let clean: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '.' { c } else { '_' }).collect();
    PathBuf::from("reports").join(kind).join(clean)
}

/// `parity replay`.
pub fn run_replay(args: &ReplayArgs) -> Result<i32> {
    if args.device_math.device_math {
        return devmath::run(args);
    }
    if args.reference.is_empty() {
        bail!("--reference is required (or --device-math)");
    }
    let reference = RefFn::parse(&args.reference)?;
    let (from, to) = range(&args.from, &args.to)?;
    let pool = pool(args.threads)?;
    let mut exit = 0;
    let mut table_json = serde_json::Value::Null;
    if let Some(t) = &args.table {
        let cases = crlog2gen::read_cases_csv(t)?;
        let checks = pool.install(|| check_table(&reference, &cases));
        let wrong: Vec<&TableEntryCheck> = checks.iter().filter(|c| c.listed != c.correct).collect();
        for w in &wrong {
            eprintln!("table entry 0x{:08x}: listed 0x{:08x}, correctly rounded 0x{:08x}", w.input, w.listed, w.correct);
        }
        let hardest = checks.iter().map(|c| c.midpoint_distance_ulps).fold(f64::INFINITY, f64::min);
        eprintln!("table {}: {} entries, {} wrong (closest to a midpoint: {:.3e} ulp)", t.display(), checks.len(), wrong.len(), hardest);
        table_json = json!({
            "file": t.display().to_string(),
            "entries": checks.len(),
            "wrong": wrong.len(),
            "wrong_inputs": wrong.iter().map(|w| format!("0x{:08x}", w.input)).collect::<Vec<_>>(),
            "min_midpoint_distance_ulps": hardest,
        });
        if !wrong.is_empty() {
            exit = 1;
        }
        if args.source.is_none() && args.builtin.is_none() {
            if let Some(out) = &args.out {
                std::fs::create_dir_all(out)?;
                std::fs::write(out.join("table_check.json"), serde_json::to_string_pretty(&table_json)? + "\n")?;
            }
            return Ok(exit);
        }
    }

    let name =
        args.function.clone().or_else(|| args.builtin.clone()).context("--function NAME (or --builtin with --device real) is required")?;
    let whole = (from, to);
    let (from, to) = sharded(args.shard, from, to);
    let out = args.out.clone().unwrap_or_else(|| default_out("replay", &name));
    let mut opts = Options { max_list: args.max_list, progress: !args.quiet, track_max_error: args.track_max_error, ..Default::default() };

    let (outcome, extra) = match args.device.as_str() {
        "host" => {
            if args.emit_image.is_some() || args.image.is_some() || args.builtin.is_some() {
                bail!("--emit-image, --image and --builtin need --device real");
            }
            let source = args.source.as_ref().context("--source FILE.cu is required")?;
            if let Some(c) = args.chunk {
                opts.chunk = c;
            }
            let work = std::env::temp_dir().join(format!("parity-replay-{}", std::process::id()));
            let lib = host::compile(source, &name, &args.defines, &args.includes, &work)?;
            let f = host::HostBatch::load(&lib)?;
            let o = pool.install(|| engine::replay(&f, &reference, from, to, &opts, &name));
            let _ = std::fs::remove_dir_all(&work);
            (
                o,
                json!({
                    "tool": "parity replay",
                    "device": "host",
                    "device_faithful": "host-compiled with kernels-host's shim (-O2 -ffp-contract=off -fno-fast-math)",
                    "source": source.display().to_string(),
                    "function": name,
                    "defines": args.defines,
                }),
            )
        }
        "real" => {
            let (o, e) = device::run(args, &reference, &name, from, to, &opts, &pool)?;
            match o {
                Some(o) => (o, e),
                None => return Ok(e.get("exit").and_then(|v| v.as_i64()).unwrap_or(0) as i32),
            }
        }
        d => bail!("--device must be host or real, not {d:?}"),
    };
    let mut extra = extra;
    if let serde_json::Value::Object(m) = &mut extra {
        m.insert("reference".into(), json!(reference.name()));
        m.insert("require_correct_rounding".into(), json!(args.require_correct_rounding));
        m.insert("threads".into(), json!(pool.current_num_threads()));
        if !table_json.is_null() {
            m.insert("table_check".into(), table_json);
        }
    }
    let s = summary(&outcome, from, to, extra);
    write_reports(&out, &s, &outcome)?;
    print_outcome(&name, &outcome, &out);
    if let Some(sh) = args.shard {
        let source_hash = args.source.as_ref().map(|p| file_hash(p)).transpose()?;
        let table_hash = args.table.as_ref().map(|p| file_hash(p)).transpose()?;
        let plan = json!({"function": name, "reference": reference.name(), "from": whole.0, "to": whole.1, "device": args.device, "source": args.source,
                          "source_sha256": source_hash, "builtin": args.builtin, "image": args.image, "defines": args.defines, "includes": args.includes,
                          "nvcc_flags": args.nvcc_flags, "arch": args.arch, "table_sha256": table_hash, "max_list": args.max_list,
                          "track_max_error": args.track_max_error, "require_correct_rounding": args.require_correct_rounding});
        write_shard("replay", plan, sh, &out)?;
    }
    if outcome.misrounded > 0 && args.require_correct_rounding {
        exit = 1;
    }
    Ok(exit)
}

/// The part of [from, to) that `--shard` gives this process (all of it without).
fn sharded(shard: Option<crate::shard::Shard>, from: u32, to: u64) -> (u32, u64) {
    match shard {
        None => (from, to),
        Some(s) => {
            let (a, b) = s.range(from as u64, to);
            (a as u32, b)
        }
    }
}

/// SHA-256 of a file (a shard's plan names its inputs by content).
fn file_hash(p: &Path) -> Result<String> {
    use sha2::{Digest, Sha256};
    let bytes = crate::input::read(p, "replay input")?;
    Ok(format!("{:x}", Sha256::digest(&bytes)))
}

/// A replay or libm shard: one unit, its range.
fn write_shard(command: &str, plan: serde_json::Value, sh: crate::shard::Shard, out: &Path) -> Result<()> {
    let rec = crate::shard::Record::new(command, plan, sh, sh.count as usize, vec![format!("range {sh}")]);
    rec.write(out)?;
    println!("shard {sh} of parity {command} run {}: merge the shards' directories with `parity merge`", rec.run_key);
    Ok(())
}

/// The keys [`summary`] computes from an outcome (the rest of a shard's summary is the
/// run's description, the same in every shard).
const COMPUTED: &[&str] = &[
    "inputs",
    "misrounded",
    "misrounded_fraction",
    "mpfr_decided",
    "seconds",
    "inputs_per_second",
    "from",
    "to",
    "from_value",
    "to_value",
    "max_ulp_error",
    "max_ulp_error_input",
    "listed",
    "list_truncated",
    "correctly_rounded",
    "reference_method",
    "families",
];

/// Reads `misrounded.csv` back (the inputs, results and errors as written).
fn read_misrounded(path: &Path) -> Result<Vec<engine::Misround>> {
    parse_misrounded(&crate::input::read_text(path, "misrounded list")?, path)
}

/// The text of a `misrounded.csv` read from `path` (errors name it).
pub(crate) fn parse_misrounded(text: &str, path: &Path) -> Result<Vec<engine::Misround>> {
    let hex = |s: &str| u32::from_str_radix(s.trim_start_matches("0x"), 16).with_context(|| format!("{}: bad hex {s:?}", path.display()));
    let mut v = Vec::new();
    for line in text.lines().skip(1).filter(|l| !l.is_empty()) {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 8 {
            bail!("{}: malformed line {line:?}", path.display());
        }
        v.push(engine::Misround {
            input: hex(f[0])?,
            got: hex(f[2])?,
            expected: hex(f[4])?,
            ulp_error: f[6].parse().with_context(|| format!("{}: bad ulp error {:?}", path.display(), f[6]))?,
            ulp_distance: f[7].parse().with_context(|| format!("{}: bad ulp distance {:?}", path.display(), f[7]))?,
        });
    }
    Ok(v)
}

/// `parity merge` of replay or libm shards: the outcomes of the parts of the range
/// summed into the whole range's report.
pub(crate) fn merge(shards: &[(PathBuf, crate::shard::Record)], out: &Path) -> Result<i32> {
    let plan = &shards[0].1.plan;
    let (from, to) = (plan["from"].as_u64().context("plan without from")? as u32, plan["to"].as_u64().context("plan without to")?);
    let max_list = plan["max_list"].as_u64().unwrap_or(1_000_000) as usize;
    let mut o = Outcome::default();
    let mut first: Option<serde_json::Value> = None;
    for (dir, _) in shards {
        let s: serde_json::Value = serde_json::from_str(&crate::input::read_text(&dir.join("summary.json"), "shard summary")?)?;
        let list = read_misrounded(&dir.join("misrounded.csv"))?;
        let n = |k: &str| s[k].as_u64().unwrap_or(0);
        o.inputs += n("inputs");
        o.misrounded += n("misrounded");
        o.mpfr_decided += n("mpfr_decided");
        o.seconds += s["seconds"].as_f64().unwrap_or(0.0);
        let at = s["max_ulp_error_input"].as_str().map(|x| u32::from_str_radix(x.trim_start_matches("0x"), 16)).transpose()?;
        if let Some(x) =
            at.filter(|x| engine::worse(s["max_ulp_error"].as_f64().unwrap_or(0.0), *x, o.max_ulp_error, o.max_ulp_error_input))
        {
            o.max_ulp_error = s["max_ulp_error"].as_f64().unwrap_or(0.0);
            o.max_ulp_error_input = Some(x);
        }
        o.list_truncated |= s["list_truncated"].as_bool().unwrap_or(false);
        o.list.extend(list);
        first.get_or_insert(s);
    }
    o.list.sort_by_key(|m| m.input);
    o.list_truncated |= o.list.len() > max_list;
    o.list.truncate(max_list);
    let mut extra = first.unwrap_or_default();
    if let Some(m) = extra.as_object_mut() {
        for k in COMPUTED {
            m.remove(*k);
        }
    }
    let require = plan["require_correct_rounding"].as_bool().unwrap_or(false);
    let table_wrong = extra["table_check"]["wrong"].as_u64().unwrap_or(0) > 0;
    let s = summary(&o, from, to, extra);
    write_reports(out, &s, &o)?;
    print_outcome(s["function"].as_str().unwrap_or("?"), &o, out);
    Ok(if (o.misrounded > 0 && require) || table_wrong { 1 } else { 0 })
}

fn print_outcome(name: &str, o: &Outcome, out: &Path) {
    println!(
        "{name}: {} inputs, {} misrounded ({:.3e}), {} decided by MPFR, max ulp error {:.4}, {:.2} s ({:.3e} inputs/s); reports in {}",
        o.inputs,
        o.misrounded,
        if o.inputs > 0 { o.misrounded as f64 / o.inputs as f64 } else { 0.0 },
        o.mpfr_decided,
        o.max_ulp_error,
        o.seconds,
        if o.seconds > 0.0 { o.inputs as f64 / o.seconds } else { 0.0 },
        out.display()
    );
}

/// The reference of a libm function name (log2f -> log2, powf:2 -> pow:2).
pub fn libm_reference(function: &str) -> Result<(String, RefFn, Option<f32>)> {
    if let Some(p) = function.strip_prefix("powf:") {
        let r = RefFn::parse(function)?;
        let e = match r {
            RefFn::Pow(e) => e,
            _ => unreachable!(),
        };
        let _ = p;
        return Ok(("powf".into(), r, Some(e)));
    }
    let base = function.strip_suffix('f').with_context(|| format!("{function:?}: expected a float function name such as log2f"))?;
    Ok((function.to_string(), RefFn::parse(base)?, None))
}

/// `parity libm`.
pub fn run_libm(args: &LibmArgs) -> Result<i32> {
    let (symbol, reference, exponent) = libm_reference(&args.function)?;
    let whole = range(&args.from, &args.to)?;
    let (from, to) = sharded(args.shard, whole.0, whole.1);
    let pool = pool(args.threads)?;
    let f: Box<dyn BatchFn> = match exponent {
        Some(e) => Box::new(host::LibPow::load(&args.library, &symbol, e)?),
        None => Box::new(host::LibFn::load(&args.library, &symbol)?),
    };
    let mut opts = Options { max_list: args.max_list, progress: !args.quiet, track_max_error: true, ..Default::default() };
    if let Some(c) = args.chunk {
        opts.chunk = c;
    }
    let o = pool.install(|| engine::replay(f.as_ref(), &reference, from, to, &opts, &args.function));
    let out = args.out.clone().unwrap_or_else(|| default_out("libm", &args.function));
    let s = summary(
        &o,
        from,
        to,
        json!({
            "tool": "parity libm",
            "function": args.function,
            "library": args.library,
            "library_path": resolved_path(&args.library, &symbol),
            "reference": reference.name(),
            "require_correct_rounding": args.require_correct_rounding,
            "threads": pool.current_num_threads(),
        }),
    );
    write_reports(&out, &s, &o)?;
    print_outcome(&args.function, &o, &out);
    if let Some(sh) = args.shard {
        let plan = json!({"function": args.function, "library": args.library, "from": whole.0, "to": whole.1, "max_list": args.max_list,
                          "require_correct_rounding": args.require_correct_rounding});
        write_shard("libm", plan, sh, &out)?;
    }
    Ok(if o.misrounded > 0 && args.require_correct_rounding { 1 } else { 0 })
}

/// The file a symbol resolves to (dladdr), for the report.
fn resolved_path(lib: &str, symbol: &str) -> Option<String> {
    // SAFETY: dlopen/dlsym/dladdr on a library the user named; the symbol's address is
    // only passed to dladdr, never called, and the strings dladdr returns are copied.
    unsafe {
        let l = libloading::os::unix::Library::new(lib).ok()?;
        let mut name = symbol.as_bytes().to_vec();
        name.push(0);
        let s: libloading::os::unix::Symbol<*const libc::c_void> = l.get(&*name).ok()?;
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(*s, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        Some(std::ffi::CStr::from_ptr(info.dli_fname).to_string_lossy().into_owned())
    }
}
