//! Device-defined results where C++ leaves them undefined, against the H200's answers
//! (tests/data/h200-device-defined.txt, every cvt, intrinsic, division and shift case of
//! it): plain float/double-to-integer conversions (explicit and implicit, every width),
//! the conversion intrinsics, division and remainder by zero and of MIN by -1, shifts by
//! at least the width. Each undefined case is also reported (runtime->report, with the
//! user's file and line); defined cases are not.

mod common;
use common::*;
use kernels_host::build::{build, BuildOptions, Built};
use kernels_host::module::LoadedModule;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// One line of the table: its case name and key=value pairs (values as bit patterns).
/// Only the kernels-host cases (cvt, intrin, idiv, shift); the warp cases are the
/// executor's.
struct Case {
    name: String,
    values: Vec<(String, u64)>,
}

fn table() -> Vec<Case> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/h200-device-defined.txt")).unwrap();
    let mut out = Vec::new();
    let ours = ["devres_cvt_", "devres_intrin_", "devres_idiv_", "devres_shift_"];
    for line in text.lines().filter(|l| ours.iter().any(|p| l.starts_with(p))) {
        let (name, rest) = line.split_once(':').unwrap();
        let values = rest
            .split_whitespace()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), u64::from_str_radix(v, 16).unwrap_or_else(|_| panic!("{name}: {v}"))))
            .collect();
        out.push(Case { name: name.to_string(), values });
    }
    out
}

/// An input of the cvt/intrinsic cases: `nan`, `-nan`, `snan`, `inf`, `1e30`, `-0`,
/// `2^31-128`, `-2^63-2^40`, `2^31-0.5`, ... exactly as a double.
fn input(key: &str) -> f64 {
    match key {
        "nan" => return f64::NAN,
        "-nan" => return -f64::NAN,
        "snan" => return f64::from_bits(0x7ff4_0000_0000_0000),
        "inf" => return f64::INFINITY,
        "-inf" => return f64::NEG_INFINITY,
        "-0" => return -0.0,
        _ => {}
    }
    // Terms joined by + and -, each a decimal or 2^k.
    let mut total = 0.0f64;
    let mut sign = 1.0;
    let mut term = String::new();
    let flush = |term: &str, sign: f64, total: &mut f64| {
        if term.is_empty() {
            return;
        }
        let v = match term.strip_prefix("2^") {
            Some(k) => 2f64.powi(k.parse().unwrap()),
            None => term.parse::<f64>().unwrap(),
        };
        *total += sign * v;
    };
    let b = key.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        let exp_sign = i > 0 && (b[i - 1] == b'e' || b[i - 1] == b'E') && !term.starts_with("2^");
        if (c == b'-' || c == b'+') && !exp_sign {
            flush(&term, sign, &mut total);
            term.clear();
            sign = if c == b'-' { -1.0 } else { 1.0 };
        } else {
            term.push(c as char);
        }
    }
    flush(&term, sign, &mut total);
    total
}

fn lib() -> &'static (std::path::PathBuf, Built) {
    static LIB: OnceLock<(std::path::PathBuf, Built)> = OnceLock::new();
    LIB.get_or_init(|| {
        let (dir, lock) = shared_build_dir("dd", &["device_defined.cu"], &[]);
        let built = if lock.is_some() {
            let b = build(&BuildOptions::new(&dir, vec![cu("device_defined.cu")])).unwrap_or_else(|e| panic!("{e}")).remove(0);
            std::fs::write(dir.join("done"), b"").unwrap();
            b
        } else {
            let manifest_path = dir.join("device_defined.simtwin.json");
            let manifest = kernels_host::manifest::Manifest::parse(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
            Built { library: dir.join("device_defined.so"), manifest_path, manifest }
        };
        drop(lock);
        (dir, built)
    })
}

fn open_dd() -> LoadedModule {
    let m = LoadedModule::open(&lib().1.library).unwrap();
    unsafe { m.bind(&RUNTIME) };
    m
}

fn mask(bits: u32) -> u64 {
    if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Whether C++ defines converting `x` to a `bits`-bit integer (signed or not).
fn defined_conversion(x: f64, bits: u32, signed: bool) -> bool {
    let t = x.trunc();
    if x.is_nan() || x.is_infinite() {
        return false;
    }
    if signed {
        t >= -(2f64.powi(bits as i32 - 1)) && t < 2f64.powi(bits as i32 - 1)
    } else {
        t >= 0.0 && t < 2f64.powi(bits as i32)
    }
}

#[test]
fn plain_conversions_match_the_h200_for_every_case() {
    let _s = serial();
    let m = open_dd();
    let mut checked = 0;
    for case in table().iter().filter(|c| c.name.starts_with("devres_cvt_")) {
        // devres_cvt_f32_s8 -> source f32, destination s8.
        let (src, dst) = case.name["devres_cvt_".len()..].split_once('_').unwrap();
        let bits: u32 = dst[1..].parse().unwrap();
        let signed = dst.starts_with('s');
        let kernel = format!("cvt_{}_{dst}", if src == "f32" { "float" } else { "double" });
        let keys: Vec<&(String, u64)> = case.values.iter().filter(|(k, _)| k != "0,0").collect();
        let xs: Vec<f64> = keys.iter().map(|(k, _)| input(k)).collect();
        let mut out = vec![0u64; 2 * xs.len()];
        let mut po = out.as_mut_ptr();
        let mut n = xs.len() as i32;
        REPORTS.lock().unwrap().clear();
        if src == "f32" {
            let fs: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
            // The powers-of-two inputs are exact floats (1e30 is the float nearest it, as
            // the device's kernel had it: out of every range either way).
            for ((k, _), (x, f)) in keys.iter().zip(xs.iter().zip(&fs)) {
                assert!(!k.contains('^') || *f as f64 == *x, "{}: input {k} is not a float", case.name);
            }
            let mut px = fs.as_ptr();
            launch(&m, &kernel, 1, &[arg(&mut px), arg(&mut po), arg(&mut n)], &mut []);
        } else {
            let mut px = xs.as_ptr();
            launch(&m, &kernel, 1, &[arg(&mut px), arg(&mut po), arg(&mut n)], &mut []);
        }
        let mut undefined = 0;
        for (i, (key, want)) in keys.iter().enumerate() {
            for (form, got) in [("explicit", out[2 * i]), ("implicit", out[2 * i + 1])] {
                assert_eq!(
                    got & mask(bits),
                    *want,
                    "{} {key} ({form} cast): got {:#x}, the H200 gives {want:#x}",
                    case.name,
                    got & mask(bits)
                );
            }
            if !defined_conversion(xs[i], bits, signed) {
                undefined += 2;
            }
            checked += 1;
        }
        let reports = REPORTS.lock().unwrap().clone();
        assert_eq!(reports.len(), undefined, "{}: one report per undefined conversion: {reports:?}", case.name);
        assert!(reports.iter().all(|(kind, msg)| *kind == 1 && msg.contains("conversion of")), "{reports:?}");
    }
    assert!(checked >= 16 * 40, "{checked} cases");
}

#[repr(C)]
#[derive(Default, Clone, Copy, Debug)]
struct FloatToInt {
    i: [i32; 4],
    u: [u32; 4],
    ll: [i64; 4],
    ull: [u64; 4],
}

#[test]
fn conversion_intrinsics_match_the_h200_for_every_case() {
    let m = open("convert");
    let mut checked = 0;
    for src in ["f32", "f64"] {
        // Every input of the source's cases, once.
        let mut keys: Vec<String> = Vec::new();
        let cases: Vec<Case> = table().into_iter().filter(|c| c.name.starts_with(&format!("devres_intrin_{src}."))).collect();
        for c in &cases {
            for (k, _) in &c.values {
                if !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
        }
        let xs: Vec<f64> = keys.iter().map(|k| input(k)).collect();
        let mut out = vec![FloatToInt::default(); xs.len()];
        let (mut po, mut n) = (out.as_mut_ptr(), xs.len() as i32);
        if src == "f32" {
            let fs: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
            let mut px = fs.as_ptr();
            launch(&m, "float_to_int", 1, &[arg(&mut px), arg(&mut po), arg(&mut n)], &mut []);
        } else {
            let mut px = xs.as_ptr();
            launch(&m, "double_to_int", 1, &[arg(&mut px), arg(&mut po), arg(&mut n)], &mut []);
        }
        let modes = ["rn", "rz", "ru", "rd"];
        for c in &cases {
            // devres_intrin_f32.int_rn
            let (kind, mode) = c.name.split_once('.').unwrap().1.split_once('_').unwrap();
            let j = modes.iter().position(|m| *m == mode).unwrap();
            for (k, want) in &c.values {
                let r = &out[keys.iter().position(|x| x == k).unwrap()];
                let got = match kind {
                    "int" => r.i[j] as u32 as u64,
                    "uint" => r.u[j] as u64,
                    "ll" => r.ll[j] as u64,
                    _ => r.ull[j],
                };
                assert_eq!(got, *want, "{} {k}: got {got:#x}, the H200 gives {want:#x}", c.name);
                checked += 1;
            }
        }
    }
    assert!(checked >= 32 * 40, "{checked} cases");
}

/// The operands of a division case (`7/0`, `min%-1`, ...) for a `bits`-bit type.
fn operand(s: &str, bits: u32) -> u64 {
    let v: i64 = match s {
        "min" => {
            if bits == 32 {
                i32::MIN as i64
            } else {
                i64::MIN
            }
        }
        _ => s.parse().unwrap(),
    };
    v as u64 & mask(bits)
}

#[test]
fn division_by_zero_and_overflow_match_the_h200() {
    let _s = serial();
    let m = open_dd();
    for case in table().iter().filter(|c| c.name.starts_with("devres_idiv_")) {
        let ty = &case.name["devres_idiv_".len()..];
        let bits: u32 = ty[1..].parse().unwrap();
        let signed = ty.starts_with('s');
        let cases: Vec<(u64, u64, bool, u64, &str)> = case
            .values
            .iter()
            .filter(|(k, _)| k != "0,0")
            .map(|(k, want)| {
                let op = if k.contains('/') { '/' } else { '%' };
                let (a, b) = k.split_once(op).unwrap();
                (operand(a, bits), operand(b, bits), op == '%', *want, k.as_str())
            })
            .collect();
        let n = cases.len();
        REPORTS.lock().unwrap().clear();
        let mut undefined = 0;
        let got: Vec<(u64, u64)> = if bits == 32 {
            let a: Vec<u32> = cases.iter().map(|c| c.0 as u32).collect();
            let b: Vec<u32> = cases.iter().map(|c| c.1 as u32).collect();
            let (mut q, mut r) = (vec![0u32; n], vec![0u32; n]);
            let (mut pa, mut pb, mut pq, mut pr, mut nn) = (a.as_ptr(), b.as_ptr(), q.as_mut_ptr(), r.as_mut_ptr(), n as i32);
            launch(&m, &format!("div_{ty}"), 1, &[arg(&mut pa), arg(&mut pb), arg(&mut pq), arg(&mut pr), arg(&mut nn)], &mut []);
            q.iter().zip(&r).map(|(q, r)| (*q as u64, *r as u64)).collect()
        } else {
            let a: Vec<u64> = cases.iter().map(|c| c.0).collect();
            let b: Vec<u64> = cases.iter().map(|c| c.1).collect();
            let (mut q, mut r) = (vec![0u64; n], vec![0u64; n]);
            let (mut pa, mut pb, mut pq, mut pr, mut nn) = (a.as_ptr(), b.as_ptr(), q.as_mut_ptr(), r.as_mut_ptr(), n as i32);
            launch(&m, &format!("div_{ty}"), 1, &[arg(&mut pa), arg(&mut pb), arg(&mut pq), arg(&mut pr), arg(&mut nn)], &mut []);
            q.into_iter().zip(r).collect()
        };
        for (c, (q, r)) in cases.iter().zip(&got) {
            let g = if c.2 { *r } else { *q };
            assert_eq!(g, c.3, "{} {}: got {g:#x}, the H200 gives {:#x}", case.name, c.4, c.3);
            let min = 1u64 << (bits - 1);
            if c.1 == 0 || (signed && c.0 == min && c.1 == mask(bits)) {
                undefined += 2; // the kernel computes both / and %
            }
        }
        let reports = REPORTS.lock().unwrap().clone();
        assert_eq!(reports.len(), undefined, "{}: {reports:?}", case.name);
        assert!(reports.iter().all(|(kind, _)| *kind == 2), "{reports:?}");
    }
}

#[test]
fn over_wide_shifts_match_the_h200() {
    let _s = serial();
    let m = open_dd();
    for case in table().iter().filter(|c| c.name.starts_with("devres_shift_")) {
        let ty = &case.name["devres_shift_".len()..];
        let bits: u32 = ty[1..].parse().unwrap();
        // The table shifts 0x87654321 (32-bit) and 0x8765432187654321 (64-bit).
        let x: u64 = if bits == 32 { 0x8765_4321 } else { 0x8765_4321_8765_4321 };
        let mut amounts: BTreeMap<i32, (Option<u64>, Option<u64>)> = BTreeMap::new();
        for (k, v) in case.values.iter().filter(|(k, _)| k != "0,0") {
            let (left, n) = if let Some(n) = k.strip_prefix("<<") { (true, n) } else { (false, &k[2..]) };
            let e = amounts.entry(n.parse().unwrap()).or_default();
            if left {
                e.0 = Some(*v)
            } else {
                e.1 = Some(*v)
            }
        }
        let ns: Vec<i32> = amounts.keys().copied().collect();
        let n = ns.len();
        REPORTS.lock().unwrap().clear();
        let mut pn = ns.as_ptr();
        let mut nn = n as i32;
        let got: Vec<(u64, u64)> = if bits == 32 {
            let (mut l, mut r) = (vec![0u32; n], vec![0u32; n]);
            let (mut px, mut pl, mut pr) = (x as u32, l.as_mut_ptr(), r.as_mut_ptr());
            launch(&m, &format!("shift_{ty}"), 1, &[arg(&mut px), arg(&mut pn), arg(&mut pl), arg(&mut pr), arg(&mut nn)], &mut []);
            l.iter().zip(&r).map(|(l, r)| (*l as u64, *r as u64)).collect()
        } else {
            let (mut l, mut r) = (vec![0u64; n], vec![0u64; n]);
            let (mut px, mut pl, mut pr) = (x, l.as_mut_ptr(), r.as_mut_ptr());
            launch(&m, &format!("shift_{ty}"), 1, &[arg(&mut px), arg(&mut pn), arg(&mut pl), arg(&mut pr), arg(&mut nn)], &mut []);
            l.into_iter().zip(r).collect()
        };
        let mut undefined = 0;
        for ((amount, (wl, wr)), (l, r)) in amounts.iter().zip(&got) {
            assert_eq!(Some(*l), *wl, "{} <<{amount}: got {l:#x}", case.name);
            assert_eq!(Some(*r), *wr, "{} >>{amount}: got {r:#x}", case.name);
            if *amount as u32 >= bits {
                undefined += 2;
            }
        }
        let reports = REPORTS.lock().unwrap().clone();
        assert_eq!(reports.len(), undefined, "{}: {reports:?}", case.name);
        assert!(reports.iter().all(|(kind, m)| *kind == 3 && m.contains("shift")), "{reports:?}");
    }
}

#[test]
fn defined_operations_are_exact_and_unreported() {
    let _s = serial();
    let m = open_dd();
    let xs = [-7.9f32, 200.5];
    let (mut px, mut a, mut b, mut s) = (xs.as_ptr(), -29i32, 4i32, 3i32);
    let mut out = [0i64; 7];
    let mut po = out.as_mut_ptr();
    REPORTS.lock().unwrap().clear();
    launch(&m, "defined_ops", 1, &[arg(&mut px), arg(&mut a), arg(&mut b), arg(&mut s), arg(&mut po)], &mut []);
    assert_eq!(out, [-7, -7, -1, -232, -4, 200, -7 + -4]);
    assert!(REPORTS.lock().unwrap().is_empty());
    // The division helpers are inlined: the kernel calls nothing but the cold paths.
    let lib = &lib().1.library;
    let dis = std::process::Command::new("objdump").args(["-d", "--no-show-raw-insn"]).arg(lib).output().unwrap();
    let text = String::from_utf8_lossy(&dis.stdout);
    let body = text.split("\n\n").find(|b| b.lines().next().map(|h| h.ends_with("<defined_ops>:")).unwrap_or(false)).unwrap();
    assert!(!body.contains("call") || body.lines().filter(|l| l.contains("call")).all(|l| l.contains("_slow")), "{body}");
}

#[test]
fn nanosleep_yields_with_its_call_site() {
    let _s = serial();
    let m = open_dd();
    let mut out = 0i32;
    let mut p = &mut out as *mut i32;
    SITES.lock().unwrap().clear();
    launch(&m, "sleepy", 1, &[arg(&mut p)], &mut []);
    assert_eq!(out, 1);
    let src = std::fs::read_to_string(cu("device_defined.cu")).unwrap();
    let line = src.lines().position(|l| l.contains("__nanosleep(100)")).unwrap() + 1;
    let sites: Vec<String> = SITES.lock().unwrap().iter().filter(|s| s.starts_with("device_defined.cu:")).cloned().collect();
    assert_eq!(sites, [format!("device_defined.cu:{line}")]);
}
