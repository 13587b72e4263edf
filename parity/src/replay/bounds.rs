//! The range of inputs a replay covers: `--from`/`--to` bounds (bit patterns or float
//! values) and the default, every positive finite float.

use super::crlog2gen;
use anyhow::{bail, Context, Result};

/// Default range: every positive finite float.
pub(crate) const DEFAULT_FROM: u32 = 0x0000_0001;
/// End of the default range (exclusive): +inf's bits.
pub(crate) const DEFAULT_TO: u64 = 0x7f80_0000;

/// Parses a range bound: `0x7f800000` (bits) or a float value (`1.0`, `1024`, `0x1p-3`, `inf`).
pub fn parse_bound(s: &str) -> Result<u64> {
    let t = s.trim();
    let is_bits = (t.starts_with("0x") || t.starts_with("0X")) && !t.contains(['p', 'P', '.']) && t.len() > 2;
    if is_bits {
        return u64::from_str_radix(&t[2..], 16).ok().filter(|v| *v <= 1 << 32).with_context(|| format!("bad bound {s:?}"));
    }
    let v: f32 = if t.starts_with("0x") || t.starts_with("-0x") {
        crlog2gen::parse_hexf(t).with_context(|| format!("bad bound {s:?}"))?
    } else {
        t.parse().map_err(|e| anyhow::anyhow!("bad bound {s:?}: {e}"))?
    };
    Ok(v.to_bits() as u64)
}

pub(crate) fn range(from: &Option<String>, to: &Option<String>) -> Result<(u32, u64)> {
    let f = match from {
        Some(s) => parse_bound(s)?,
        None => DEFAULT_FROM as u64,
    };
    let t = match to {
        Some(s) => parse_bound(s)?,
        None => DEFAULT_TO,
    };
    if f > u32::MAX as u64 {
        bail!("--from out of range");
    }
    if t < f {
        bail!("empty range: --to (0x{t:08x}) is below --from (0x{f:08x}) (bounds are bit patterns; negative floats order backwards)");
    }
    Ok((f as u32, t))
}
