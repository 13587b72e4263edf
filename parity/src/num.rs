//! Number text handling: `%.17g`-style formatting, tolerant parsing of the tokens VMAF
//! prints (`nan`, `-nan`, `inf`, `-inf`, `Infinity`, `null`), significant-digit counting
//! (for the "identical at the printed precision" caveat), and ULP distance.

/// Formats like C's `printf("%.17g", v)`: 17 significant digits, trailing zeros removed,
/// exponent form when the decimal exponent is < -4 or >= 17. NaN prints as `nan` (`-nan`
/// with the sign bit set), infinities as `inf` / `-inf`, negative zero as `-0`.
pub fn g17(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan".into() } else { "nan".into() };
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf".into() } else { "inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    // 17 significant digits in scientific form: d.dddddddddddddddde±X
    let sci = format!("{:.16e}", v);
    let (mant, exp) = sci.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("exponent");
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if !(-4..17).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let rest = rest.trim_end_matches('0');
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.abs()));
    } else if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(digits.trim_end_matches('0'));
    } else {
        let split = (exp + 1) as usize;
        let (int, frac) = digits.split_at(split);
        out.push_str(int);
        let frac = frac.trim_end_matches('0');
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
    }
    out
}

/// Parses one printed number, accepting what C printf and JSON writers emit:
/// decimal and exponent forms, `nan`/`-nan`/`nan(...)`, `inf`/`-inf`/`infinity`,
/// `Infinity`, and `null` (read as NaN). Returns None for anything else.
pub fn parse_number(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    let (neg, body) = match t.as_bytes()[0] {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = body.to_ascii_lowercase();
    let lower = lower.as_str();
    if lower == "nan" || (lower.starts_with("nan(") && lower.ends_with(')')) || lower == "null" {
        if lower == "null" && t.len() != body.len() {
            return None;
        }
        let n = f64::NAN;
        return Some(if neg { -n } else { n.copysign(1.0) });
    }
    if lower == "inf" || lower == "infinity" {
        return Some(if neg { f64::NEG_INFINITY } else { f64::INFINITY });
    }
    // Only plain decimal syntax from here on.
    let ok = body.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    if !ok || !body.bytes().next().is_some_and(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let v: f64 = body.parse().ok()?;
    Some(if neg { -v } else { v })
}

/// Significant digits shown in a printed number, counting trailing zeros as printed
/// (`0.900000` has 6, `12345` has 5). None for non-finite tokens and for zero.
pub fn significant_digits(text: &str) -> Option<u32> {
    let t = text.trim().trim_start_matches(['-', '+']);
    let mant = t.split(['e', 'E']).next().unwrap_or("");
    if mant.is_empty() || !mant.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let sig = digits.trim_start_matches('0');
    if sig.is_empty() {
        None
    } else {
        Some(sig.len() as u32)
    }
}

/// True when the text is an integer written without a fraction or exponent (such a
/// value is exact whatever the digit count).
pub fn is_plain_integer(text: &str) -> bool {
    let t = text.trim().trim_start_matches(['-', '+']);
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
}

fn ordered_key(v: f64) -> i128 {
    let bits = v.to_bits();
    let mag = (bits & 0x7fff_ffff_ffff_ffff) as i128;
    if bits >> 63 == 1 {
        -mag
    } else {
        mag
    }
}

/// Distance in units in the last place between two non-NaN doubles: the number of
/// representable doubles between them (+0 and -0 are 0 apart; that case is reported
/// separately as a signed-zero difference).
pub fn ulp_distance(a: f64, b: f64) -> Option<u64> {
    if a.is_nan() || b.is_nan() {
        return None;
    }
    Some((ordered_key(a) - ordered_key(b)).unsigned_abs() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g17_matches_printf() {
        assert_eq!(g17(0.1), "0.10000000000000001");
        assert_eq!(g17(0.5), "0.5");
        assert_eq!(g17(12345.0), "12345");
        assert_eq!(g17(1e17), "1e+17");
        assert_eq!(g17(1.5e-5), "1.5e-05");
        assert_eq!(g17(0.0001), "0.0001");
        assert_eq!(g17(-0.0), "-0");
        assert_eq!(g17(f64::NAN), "nan");
        assert_eq!(g17(f64::NEG_INFINITY), "-inf");
        assert_eq!(g17(123456789012345680.0), "1.2345678901234568e+17");
        assert_eq!(g17(3.0e-300), "3.0000000000000002e-300");
        assert_eq!(g17(0.3), "0.29999999999999999");
        for v in [0.1, 1.0 / 3.0, 2.0f64.sqrt(), 1e-310, 6.02e23, -7.25] {
            assert_eq!(g17(v).parse::<f64>().unwrap().to_bits(), v.to_bits());
        }
    }

    #[test]
    fn parses_vmaf_tokens() {
        assert!(parse_number("nan").unwrap().is_nan());
        assert!(parse_number("-nan").unwrap().is_sign_negative());
        assert!(parse_number("nan").unwrap().is_sign_positive());
        assert!(parse_number("-nan(ind)").unwrap().is_nan());
        assert_eq!(parse_number("-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_number("Infinity"), Some(f64::INFINITY));
        assert_eq!(parse_number("1e3"), Some(1000.0));
        assert!(parse_number("-0").unwrap().is_sign_negative());
        assert_eq!(parse_number("abc"), None);
        assert_eq!(parse_number("0x10"), None);
        assert_eq!(parse_number(""), None);
    }

    #[test]
    fn digits_and_ulps() {
        assert_eq!(significant_digits("0.900000"), Some(6));
        assert_eq!(significant_digits("0.10000000000000001"), Some(17));
        assert_eq!(significant_digits("-1.5e-05"), Some(2));
        assert_eq!(significant_digits("0"), None);
        assert_eq!(significant_digits("nan"), None);
        assert_eq!(ulp_distance(1.0, 1.0 + f64::EPSILON), Some(1));
        assert_eq!(ulp_distance(-0.0, 0.0), Some(0));
        assert_eq!(ulp_distance(-f64::from_bits(1), f64::from_bits(1)), Some(2));
        assert_eq!(ulp_distance(f64::NAN, 1.0), None);
    }
}
