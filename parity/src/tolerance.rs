//! The declared tolerance table. Default: exact (bit-identical) for every metric.
//!
//! File format (one rule per line, `#` starts a comment, first matching rule wins):
//!
//! ```text
//! # pattern    criteria
//! sse_*        exact
//! log_stat*    ulp=4
//! band_mask    abs=1e-12 rel=1e-15
//! *            exact
//! ```
//!
//! A pattern is a metric name where `*` matches any run of characters. Criteria:
//! `exact`, `abs=X`, `rel=X`, `ulp=N` (a difference within ANY given bound passes), and
//! `nan-any` (two NaNs with different sign or payload count as equal). A difference
//! between NaN and a number, between +0 and -0, or involving an infinity never passes.
//! A JSON file `{"pattern": {"abs": X, "rel": X, "ulp": N, "nan_any": true}}` is read too.

use anyhow::{anyhow, bail, Context, Result};
use std::path::Path;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tol {
    pub abs: Option<f64>,
    pub rel: Option<f64>,
    pub ulp: Option<u64>,
    pub nan_any: bool,
}

impl Tol {
    pub fn is_exact(&self) -> bool {
        self.abs.is_none() && self.rel.is_none() && self.ulp.is_none() && !self.nan_any
    }
    pub fn describe(&self) -> String {
        if self.is_exact() {
            return "exact".into();
        }
        let mut p = Vec::new();
        if let Some(a) = self.abs {
            p.push(format!("abs<={a:e}"));
        }
        if let Some(r) = self.rel {
            p.push(format!("rel<={r:e}"));
        }
        if let Some(u) = self.ulp {
            p.push(format!("ulp<={u}"));
        }
        if self.nan_any {
            p.push("nan-any".into());
        }
        p.join(" or ")
    }
}

#[derive(Debug, Clone, Default)]
pub struct Table {
    pub rules: Vec<(String, Tol)>,
    pub source: Option<String>,
}

pub fn glob(pat: &str, s: &str) -> bool {
    fn rec(p: &[u8], s: &[u8]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some(b'*') => (0..=s.len()).any(|i| rec(&p[1..], &s[i..])),
            Some(c) => s.first() == Some(c) && rec(&p[1..], &s[1..]),
        }
    }
    rec(pat.as_bytes(), s.as_bytes())
}

impl Table {
    pub fn exact() -> Self {
        Table::default()
    }

    pub fn for_metric(&self, metric: &str) -> Tol {
        self.rules.iter().find(|(p, _)| glob(p, metric)).map(|(_, t)| t.clone()).unwrap_or_default()
    }

    pub fn describe_source(&self) -> String {
        self.source.clone().unwrap_or_else(|| "default: exact".into())
    }

    pub fn load(path: &Path) -> Result<Self> {
        let text = crate::input::read_text(path, "tolerance table")?;
        let mut t = Self::parse(&text).with_context(|| format!("tolerance table {}", path.display()))?;
        t.source = Some(path.display().to_string());
        Ok(t)
    }

    pub fn parse(text: &str) -> Result<Self> {
        if text.trim_start().starts_with('{') {
            return Self::parse_json(text);
        }
        let mut rules = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let mut words = line.split_whitespace();
            let pat = words.next().unwrap().to_string();
            let mut tol = Tol::default();
            let mut any = false;
            for w in words {
                any = true;
                let err = || anyhow!("line {}: bad criterion '{w}' (use exact, abs=X, rel=X, ulp=N, nan-any)", n + 1);
                match w.split_once('=') {
                    None if w == "exact" => {}
                    None if w == "nan-any" => tol.nan_any = true,
                    Some(("abs", v)) => tol.abs = Some(parse_bound(v).ok_or_else(err)?),
                    Some(("rel", v)) => tol.rel = Some(parse_bound(v).ok_or_else(err)?),
                    Some(("ulp", v)) => tol.ulp = Some(v.parse().map_err(|_| err())?),
                    _ => return Err(err()),
                }
            }
            if !any {
                bail!("line {}: pattern '{pat}' has no criteria (write 'exact' for bit-identical)", n + 1);
            }
            rules.push((pat, tol));
        }
        Ok(Table { rules, source: None })
    }

    fn parse_json(text: &str) -> Result<Self> {
        let v: serde_json::Value = serde_json::from_str(text)?;
        let obj = v.as_object().ok_or_else(|| anyhow!("expected a JSON object"))?;
        let mut rules = Vec::new();
        for (pat, spec) in obj {
            let mut tol = Tol::default();
            if spec.as_str() == Some("exact") {
                rules.push((pat.clone(), tol));
                continue;
            }
            let s = spec.as_object().ok_or_else(|| anyhow!("{pat}: expected \"exact\" or an object"))?;
            for (k, v) in s {
                match k.as_str() {
                    "abs" => tol.abs = Some(v.as_f64().filter(|x| *x >= 0.0).ok_or_else(|| anyhow!("{pat}.abs: not a number >= 0"))?),
                    "rel" => tol.rel = Some(v.as_f64().filter(|x| *x >= 0.0).ok_or_else(|| anyhow!("{pat}.rel: not a number >= 0"))?),
                    "ulp" => tol.ulp = Some(v.as_u64().ok_or_else(|| anyhow!("{pat}.ulp: not an integer >= 0"))?),
                    "nan_any" => tol.nan_any = v.as_bool().ok_or_else(|| anyhow!("{pat}.nan_any: not a boolean"))?,
                    other => bail!("{pat}: unknown key '{other}' (abs, rel, ulp, nan_any)"),
                }
            }
            rules.push((pat.clone(), tol));
        }
        Ok(Table { rules, source: None })
    }
}

fn parse_bound(v: &str) -> Option<f64> {
    v.parse::<f64>().ok().filter(|x| x.is_finite() && *x >= 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn rules() {
        let t = Table::parse("# c\nsse_* exact\nlog* ulp=4 abs=1e-9\n* rel=1e-12\n").unwrap();
        assert!(t.for_metric("sse_y").is_exact());
        assert_eq!(t.for_metric("log_stat").ulp, Some(4));
        assert_eq!(t.for_metric("other").rel, Some(1e-12));
        assert!(Table::parse("x abs=-1").is_err());
        assert!(Table::parse("x").is_err());
        assert!(Table::exact().for_metric("q").is_exact());
        let j = Table::parse(r#"{"a*": {"ulp": 2}, "b": "exact"}"#).unwrap();
        assert_eq!(j.for_metric("ab").ulp, Some(2));
        assert!(glob("*_y", "sse_y") && !glob("*_y", "sse_u") && glob("a*b*c", "aXbYc"));
    }
}
