//! Generator of the tables in fixtures/twin/include/crlog2.h (the fixtures' correctly
//! rounded log2): the 256-bin reduction table and the polynomial constants, computed
//! with MPFR, and the hard-case table found by the replay.
//!
//! The header holds the generated text between `BEGIN GENERATED: <what>` and
//! `END GENERATED: <what>` comments; [`regenerate`] replaces those regions, and the test
//! suite checks that the checked-in header equals its regeneration.

use anyhow::{bail, Context, Result};
use rug::float::Round;
use rug::Float;
use std::fmt::Write as _;
use std::path::Path;

const PREC: u32 = 256;
/// Offset of the reduction: z in [OFF, OFF + 2^23) in bit space, [0.69921875, 1.3984375).
pub const OFF: u32 = 0x3f33_0000;
/// Bins of the reduction (index = 8 bits of tmp above bit 15).
pub const BINS: usize = 256;

/// Rounds an MPFR value to a float with `bits` significant bits (to nearest).
fn round_bits(v: &Float, bits: u32) -> f32 {
    let mut f = Float::with_val(bits, v);
    f.set_prec_round(bits, Round::Nearest);
    f.to_f32()
}

/// A float pair (hi, lo) with hi = RN(v), lo = RN(v - hi).
pub fn pair(v: &Float) -> (f32, f32) {
    let hi = v.to_f32();
    let rest = Float::with_val(PREC, v - hi);
    (hi, rest.to_f32())
}

/// One bin: reciprocal r (12 significant bits) and T = -log2(r) as a pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bin {
    /// The reciprocal r of the bin centre, rounded to 12 significant bits.
    pub r: f32,
    /// High part of -log2(r).
    pub th: f32,
    /// Low part of -log2(r) (-log2(r) - th, rounded).
    pub tl: f32,
}

/// The index of the two bins that touch 1.0 (r = 1, T = 0 there).
pub fn unit_bins() -> [usize; 2] {
    let i1 = ((0x3f80_0000u32 - OFF) >> 15) as usize;
    [i1 - 1, i1]
}

/// The [`BINS`] bins of the reduction, by index (the two [`unit_bins`] are r = 1, T = 0).
pub fn reduction_table() -> Vec<Bin> {
    let unit = unit_bins();
    (0..BINS)
        .map(|i| {
            if unit.contains(&i) {
                return Bin { r: 1.0, th: 0.0, tl: 0.0 };
            }
            let lo = f32::from_bits(OFF + ((i as u32) << 15)) as f64;
            let hi = f32::from_bits(OFF + ((i as u32 + 1) << 15)) as f64;
            let c = Float::with_val(PREC, lo + hi) / 2u32;
            let inv = Float::with_val(PREC, 1u32) / &c;
            let r = round_bits(&inv, 12);
            let mut t = Float::with_val(PREC, r);
            t.log2_round(Round::Nearest);
            t = -t;
            let (th, tl) = pair(&t);
            Bin { r, th, tl }
        })
        .collect()
}

/// Polynomial constants: (L_hi, L_lo), (C2_hi, C2_lo), (C3_hi, C3_lo), C4..C7.
pub(crate) struct Coeffs {
    pub l: (f32, f32),
    pub c2: (f32, f32),
    pub c3: (f32, f32),
    pub tail: [f32; 4],
}

/// L = 1/ln 2 and C_k = (-1)^(k+1) L / k from MPFR at 256 bits.
pub(crate) fn coefficients() -> Coeffs {
    let ln2 = Float::with_val(PREC, rug::float::Constant::Log2);
    let l = Float::with_val(PREC, 1u32) / &ln2;
    let ck = |k: u32| {
        let v = Float::with_val(PREC, &l / k);
        if k.is_multiple_of(2) {
            -v
        } else {
            v
        }
    };
    Coeffs { l: pair(&l), c2: pair(&ck(2)), c3: pair(&ck(3)), tail: [ck(4).to_f32(), ck(5).to_f32(), ck(6).to_f32(), ck(7).to_f32()] }
}

/// C99 hexadecimal float literal of a finite normal or zero f32 (exact).
pub fn hexf(v: f32) -> String {
    if v == 0.0 {
        return if v.is_sign_negative() { "-0.0f".into() } else { "0.0f".into() };
    }
    let b = v.to_bits();
    let sign = if b >> 31 != 0 { "-" } else { "" };
    let e = ((b >> 23) & 0xff) as i32;
    assert!(e != 0 && e != 255, "hexf: only normal values");
    let m = (b & 0x7f_ffff) << 1; // 24 bits = 6 hex digits
    format!("{sign}0x1.{m:06x}p{:+}f", e - 127)
}

/// Parses a C99 hex float literal as written by [`hexf`] (or a plain decimal).
pub fn parse_hexf(s: &str) -> Option<f32> {
    let s = s.trim().trim_end_matches('f').trim_end_matches('F');
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        let (mant, exp) = h.split_once(['p', 'P'])?;
        let exp: i32 = exp.parse().ok()?;
        let (ip, fp) = mant.split_once('.').unwrap_or((mant, ""));
        let mut m: u64 = u64::from_str_radix(if ip.is_empty() { "0" } else { ip }, 16).ok()?;
        for c in fp.chars() {
            m = m * 16 + c.to_digit(16)? as u64;
        }
        (m as f64) * 2f64.powi(exp - 4 * fp.len() as i32)
    } else {
        s.parse::<f64>().ok()?
    };
    let v = v as f32;
    Some(if neg { -v } else { v })
}

/// The text of the `reduction table` region: coefficient macros and the bin arrays.
pub(crate) fn table_region() -> String {
    let t = reduction_table();
    let c = coefficients();
    let mut s = String::new();
    let _ = writeln!(s, "/* log2(1+t) coefficients: L = 1/ln 2, C_k = (-1)^(k+1) L / k (pairs: hi + lo) */");
    let _ = writeln!(s, "#define SIMTWIN_CRL_LH {}", hexf(c.l.0));
    let _ = writeln!(s, "#define SIMTWIN_CRL_LL {}", hexf(c.l.1));
    let _ = writeln!(s, "#define SIMTWIN_CRL_C2H {}", hexf(c.c2.0));
    let _ = writeln!(s, "#define SIMTWIN_CRL_C2L {}", hexf(c.c2.1));
    let _ = writeln!(s, "#define SIMTWIN_CRL_C3H {}", hexf(c.c3.0));
    let _ = writeln!(s, "#define SIMTWIN_CRL_C3L {}", hexf(c.c3.1));
    for (k, v) in c.tail.iter().enumerate() {
        let _ = writeln!(s, "#define SIMTWIN_CRL_C{} {}", k + 4, hexf(*v));
    }
    let _ = writeln!(s, "/* bin i: r = 12-bit reciprocal of the bin centre; T = -log2(r) = th + tl */");
    for (name, f) in [("r", 0usize), ("th", 1), ("tl", 2)] {
        let _ = writeln!(s, "SIMTWIN_CRL_DATA float simtwin_crl_{name}[{BINS}] = {{");
        for chunk in t.chunks(4) {
            let vals: Vec<String> = chunk
                .iter()
                .map(|b| {
                    hexf(match f {
                        0 => b.r,
                        1 => b.th,
                        _ => b.tl,
                    })
                })
                .collect();
            let _ = writeln!(s, "    {},", vals.join(", "));
        }
        let _ = writeln!(s, "}};");
    }
    s
}

/// The text of the `hard cases` region: the sorted inputs and their results, each array
/// ending in a sentinel.
pub(crate) fn hard_region(cases: &[(u32, u32)]) -> String {
    let mut cases = cases.to_vec();
    cases.sort();
    cases.dedup();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "/* {} inputs whose float-pair result misrounds (sorted; last entry a sentinel):\n   input bits -> correctly rounded log2 bits (fixtures/data/log2_hard_cases.csv) */",
        cases.len()
    );
    let _ = writeln!(s, "#define SIMTWIN_CRL_NHARD {}", cases.len());
    let _ = writeln!(s, "SIMTWIN_CRL_DATA unsigned int simtwin_crl_hard_x[{}] = {{", cases.len() + 1);
    for c in cases.chunks(6) {
        let v: Vec<String> = c.iter().map(|(x, _)| format!("0x{x:08x}u")).collect();
        let _ = writeln!(s, "    {},", v.join(", "));
    }
    let _ = writeln!(s, "    0xffffffffu\n}};");
    let _ = writeln!(s, "SIMTWIN_CRL_DATA unsigned int simtwin_crl_hard_y[{}] = {{", cases.len() + 1);
    for c in cases.chunks(6) {
        let v: Vec<String> = c.iter().map(|(_, y)| format!("0x{y:08x}u")).collect();
        let _ = writeln!(s, "    {},", v.join(", "));
    }
    let _ = writeln!(s, "    0x7fc00000u\n}};");
    s
}

fn replace_region(text: &str, what: &str, body: &str) -> Result<String> {
    let begin = format!("/* BEGIN GENERATED: {what}");
    let end = format!("/* END GENERATED: {what} */");
    let b = text.find(&begin).with_context(|| format!("no `{begin}` marker"))?;
    let b_line_end = b + text[b..].find('\n').context("marker line")? + 1;
    let e = text.find(&end).with_context(|| format!("no `{end}` marker"))?;
    if e < b_line_end {
        bail!("markers out of order for {what}");
    }
    Ok(format!("{}{}{}", &text[..b_line_end], body, &text[e..]))
}

/// Rewrites the generated regions of the header text.
pub fn regenerate(header: &str, cases: &[(u32, u32)]) -> Result<String> {
    let h = replace_region(header, "reduction table", &table_region())?;
    replace_region(&h, "hard cases", &hard_region(cases))
}

/// Reads `input,output` hex pairs (header line `input,output,...` allowed).
pub fn read_cases_csv(path: &Path) -> Result<Vec<(u32, u32)>> {
    let text = crate::input::read_text(path, "table")?;
    parse_cases(&text)
}

/// Parses 32-bit hex bits, with or without `0x`.
pub fn parse_hex(s: &str) -> Result<u32> {
    let s = s.trim();
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
    u32::from_str_radix(h, 16).with_context(|| format!("bad hex {s:?}"))
}

/// Parses the text of a hard-case CSV (see [`read_cases_csv`]); `#` lines are skipped.
pub(crate) fn parse_cases(text: &str) -> Result<Vec<(u32, u32)>> {
    let mut v = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with("input") {
            continue;
        }
        let mut it = line.split(',');
        let x = parse_hex(it.next().unwrap_or("")).with_context(|| format!("line {}", n + 1))?;
        let y = parse_hex(it.next().context("missing output column")?).with_context(|| format!("line {}", n + 1))?;
        v.push((x, y));
    }
    Ok(v)
}

/// Writes the hard-case CSV: input, output (hex bits) and both as decimal values.
pub fn cases_csv(cases: &[(u32, u32)]) -> String {
    let mut s = String::from("input,output,input_value,output_value\n");
    for (x, y) in cases {
        let _ = writeln!(s, "0x{x:08x},0x{y:08x},{:e},{:e}", f32::from_bits(*x), f32::from_bits(*y));
    }
    s
}

/// Reads (input, expected) from a replay's misrounded.csv.
pub fn read_misrounded_csv(path: &Path) -> Result<Vec<(u32, u32)>> {
    let text = crate::input::read_text(path, "table")?;
    let mut v = Vec::new();
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split(',').collect();
        if cols.len() < 5 {
            continue;
        }
        v.push((parse_hex(cols[0])?, parse_hex(cols[4])?));
    }
    Ok(v)
}
