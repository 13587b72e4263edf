//! Reading extractor outputs: VMAF's JSON, XML and CSV logs (format detected from the
//! content, not the file name). VMAF prints `nan`/`inf` tokens that strict JSON parsers
//! reject, so JSON is read by a small tolerant parser that also keeps each number's
//! text (needed to know the printed precision).

use crate::num::{is_plain_integer, parse_number, significant_digits};
use anyhow::{anyhow, bail, Context, Result};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Xml,
    Csv,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Xml => "xml",
            Format::Csv => "csv",
        }
    }
}

/// One metric value as printed.
#[derive(Debug, Clone)]
pub struct Value {
    pub v: f64,
    pub text: String,
}

#[derive(Debug, Clone)]
pub struct Frame {
    pub num: u64,
    pub metrics: BTreeMap<String, Value>,
}

/// The per-frame metrics of one extractor output.
#[derive(Debug, Clone)]
pub struct Table {
    pub source: String,
    pub format: Format,
    pub frames: Vec<Frame>,
    /// Metric names in first-seen order.
    pub names: Vec<String>,
}

impl Table {
    /// Largest number of significant digits printed for any finite, non-zero value.
    pub fn max_digits(&self) -> u32 {
        self.frames.iter().flat_map(|f| f.metrics.values()).filter_map(|v| significant_digits(&v.text)).max().unwrap_or(0)
    }

    /// True when the printed values are exact: some value shows 17 significant digits
    /// (the output was written with `%.17g`, which drops trailing zeros), or every
    /// value is an integer written without a fraction.
    pub fn full_precision(&self) -> bool {
        let mut any = false;
        let mut all_int = true;
        for v in self.frames.iter().flat_map(|f| f.metrics.values()) {
            if !v.v.is_finite() {
                continue;
            }
            any = true;
            if !is_plain_integer(&v.text) {
                all_int = false;
            }
        }
        self.max_digits() >= 17 || !any || all_int
    }
}

pub fn read_file(path: &Path) -> Result<Table> {
    let bytes = crate::input::read(path, "output file")?;
    let text = String::from_utf8(bytes).map_err(|_| anyhow!("{}: output is not UTF-8 text", path.display()))?;
    parse(&text, &path.display().to_string())
}

pub fn detect(text: &str) -> Option<Format> {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    match t.bytes().next()? {
        b'{' => Some(Format::Json),
        b'<' => Some(Format::Xml),
        _ => {
            let first = t.lines().next().unwrap_or("");
            let head = first.split(',').next().unwrap_or("").trim().trim_matches('"');
            if first.contains(',') && head.eq_ignore_ascii_case("frame") {
                Some(Format::Csv)
            } else {
                None
            }
        }
    }
}

pub fn parse(text: &str, source: &str) -> Result<Table> {
    let fmt = detect(text).ok_or_else(|| {
        anyhow!(
            "{source}: unrecognised output format (expected VMAF JSON, XML or CSV){}",
            if text.is_empty() {
                "; the file is empty".to_string()
            } else if text.trim().is_empty() {
                format!("; the file holds only whitespace ({} bytes)", text.len())
            } else {
                String::new()
            }
        )
    })?;
    let frames = match fmt {
        Format::Json => parse_json(text),
        Format::Xml => parse_xml(text),
        Format::Csv => parse_csv(text),
    }
    .with_context(|| format!("{source}: malformed VMAF {} output", fmt.name()))?;
    if frames.is_empty() {
        bail!("{source}: the output holds no frames");
    }
    let mut names: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for f in &frames {
        for k in f.metrics.keys() {
            if seen.insert(k.clone()) {
                names.push(k.clone());
            }
        }
    }
    for w in frames.windows(2) {
        if w[1].num <= w[0].num {
            bail!("{source}: frame numbers are not increasing ({} after {})", w[1].num, w[0].num);
        }
    }
    Ok(Table { source: source.to_string(), format: fmt, frames, names })
}

// ---------------------------------------------------------------- JSON

#[derive(Debug)]
enum J {
    Null,
    Bool,
    Num(f64, String),
    Str,
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

struct P<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> P<'a> {
    fn pos(&self) -> String {
        let before = &self.s[..self.i.min(self.s.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = self.i - before.iter().rposition(|&b| b == b'\n').map(|p| p + 1).unwrap_or(0) + 1;
        format!("line {line}, column {col}")
    }
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn expect(&mut self, c: u8) -> Result<()> {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            bail!("expected '{}' at {}", c as char, self.pos())
        }
    }
    fn value(&mut self, depth: u32) -> Result<J> {
        if depth > 64 {
            bail!("nesting too deep at {}", self.pos());
        }
        self.ws();
        match self.peek() {
            None => bail!("unexpected end of input (truncated output?)"),
            Some(b'{') => {
                self.i += 1;
                let mut v = Vec::new();
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(J::Obj(v));
                }
                loop {
                    self.ws();
                    if self.peek() != Some(b'"') {
                        bail!("expected a key string at {}", self.pos());
                    }
                    let k = self.string()?;
                    self.expect(b':')?;
                    let val = self.value(depth + 1)?;
                    v.push((k, val));
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(J::Obj(v));
                        }
                        None => bail!("unexpected end of input inside an object (truncated output?)"),
                        _ => bail!("expected ',' or '}}' at {}", self.pos()),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut v = Vec::new();
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Ok(J::Arr(v));
                }
                loop {
                    v.push(self.value(depth + 1)?);
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(J::Arr(v));
                        }
                        None => bail!("unexpected end of input inside an array (truncated output?)"),
                        _ => bail!("expected ',' or ']' at {}", self.pos()),
                    }
                }
            }
            Some(b'"') => {
                self.string()?;
                Ok(J::Str)
            }
            Some(_) => {
                let start = self.i;
                while self.i < self.s.len()
                    && (self.s[self.i].is_ascii_alphanumeric() || matches!(self.s[self.i], b'+' | b'-' | b'.' | b'(' | b')' | b'_'))
                {
                    self.i += 1;
                }
                let tok = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
                if tok.is_empty() {
                    bail!("unexpected character '{}' at {}", self.s[start] as char, self.pos());
                }
                match tok {
                    "true" | "false" => Ok(J::Bool),
                    "null" => Ok(J::Null),
                    _ => match parse_number(tok) {
                        Some(v) => Ok(J::Num(v, tok.to_string())),
                        None => {
                            self.i = start;
                            bail!("invalid number or token '{tok}' at {}", self.pos())
                        }
                    },
                }
            }
        }
    }
    fn string(&mut self) -> Result<String> {
        self.i += 1; // opening quote
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => bail!("unterminated string (truncated output?)"),
                Some(b'"') => {
                    self.i += 1;
                    break;
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = self.peek().ok_or_else(|| anyhow!("unterminated escape"))?;
                    self.i += 1;
                    match c {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let hex = self.s.get(self.i..self.i + 4).ok_or_else(|| anyhow!("bad \\u escape"))?;
                            let cp = u32::from_str_radix(std::str::from_utf8(hex)?, 16)?;
                            self.i += 4;
                            let ch = char::from_u32(cp).unwrap_or('\u{fffd}');
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        other => out.push(other),
                    }
                }
                Some(c) => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
}

fn parse_json(text: &str) -> Result<Vec<Frame>> {
    let t = text.trim_start_matches('\u{feff}');
    let mut p = P { s: t.as_bytes(), i: 0 };
    let root = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        bail!("trailing data after the JSON document at {}", p.pos());
    }
    let J::Obj(root) = root else { bail!("the document is not a JSON object") };
    let frames = root
        .into_iter()
        .find(|(k, _)| k == "frames")
        .map(|(_, v)| v)
        .ok_or_else(|| anyhow!("no \"frames\" array (not a VMAF JSON log)"))?;
    let J::Arr(frames) = frames else { bail!("\"frames\" is not an array") };
    let mut out = Vec::new();
    for (idx, f) in frames.into_iter().enumerate() {
        let J::Obj(fields) = f else { bail!("frames[{idx}] is not an object") };
        let mut num = None;
        let mut metrics = BTreeMap::new();
        let mut have_metrics = false;
        for (k, v) in fields {
            match (k.as_str(), v) {
                ("frameNum", J::Num(n, t)) => {
                    if n < 0.0 || n.fract() != 0.0 || !n.is_finite() {
                        bail!("frames[{idx}].frameNum is not a frame number: {t}");
                    }
                    num = Some(n as u64)
                }
                ("frameNum", _) => bail!("frames[{idx}].frameNum is not a number"),
                ("metrics", J::Obj(ms)) => {
                    have_metrics = true;
                    for (name, mv) in ms {
                        match mv {
                            J::Num(v, text) => {
                                metrics.insert(name, Value { v, text });
                            }
                            J::Null => {
                                metrics.insert(name, Value { v: f64::NAN, text: "null".into() });
                            }
                            _ => bail!("frames[{idx}].metrics.{name} is not a number"),
                        }
                    }
                }
                ("metrics", _) => bail!("frames[{idx}].metrics is not an object"),
                _ => {}
            }
        }
        if !have_metrics {
            bail!("frames[{idx}] has no \"metrics\" object");
        }
        out.push(Frame { num: num.unwrap_or(idx as u64), metrics });
    }
    Ok(out)
}

// ---------------------------------------------------------------- XML

fn xml_unescape(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&apos;", "'").replace("&amp;", "&")
}

/// Parses `name="value"` pairs of one tag body.
fn xml_attrs(body: &str) -> Result<Vec<(String, String)>> {
    let b = body.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() || b[i] == b'/' {
            break;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'=' {
            i += 1;
        }
        let name = &body[start..i];
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() || b[i] != b'=' {
            bail!("attribute '{name}' has no value");
        }
        i += 1;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let q = *b.get(i).ok_or_else(|| anyhow!("attribute '{name}' has no value"))?;
        if q != b'"' && q != b'\'' {
            bail!("attribute '{name}' value is not quoted");
        }
        i += 1;
        let vs = i;
        while i < b.len() && b[i] != q {
            i += 1;
        }
        if i >= b.len() {
            bail!("attribute '{name}' value is not terminated");
        }
        out.push((name.to_string(), xml_unescape(&body[vs..i])));
        i += 1;
    }
    Ok(out)
}

fn parse_xml(text: &str) -> Result<Vec<Frame>> {
    let start = text.find("<frames").ok_or_else(|| anyhow!("no <frames> element (not a VMAF XML log)"))?;
    let rest = &text[start..];
    let open_end = rest.find('>').ok_or_else(|| anyhow!("unterminated <frames> tag"))?;
    if rest[..open_end].ends_with('/') {
        return Ok(Vec::new());
    }
    // After the opening tag's end (`<frames</frames>>` has one before it).
    let region_end = rest[open_end..]
        .find("</frames>")
        .map(|k| open_end + k)
        .ok_or_else(|| anyhow!("no </frames> after <frames> (truncated output?)"))?;
    let region = &rest[open_end + 1..region_end];
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(off) = region[pos..].find("<frame") {
        let tag_start = pos + off + "<frame".len();
        let next = region[tag_start..].chars().next().unwrap_or(' ');
        if !(next.is_whitespace() || next == '/' || next == '>') {
            pos = tag_start;
            continue;
        }
        let end = region[tag_start..].find('>').ok_or_else(|| anyhow!("unterminated <frame> tag"))?;
        let body = &region[tag_start..tag_start + end];
        pos = tag_start + end + 1;
        let idx = out.len();
        let mut num = None;
        let mut metrics = BTreeMap::new();
        for (k, v) in xml_attrs(body).with_context(|| format!("frame element #{idx}"))? {
            let val = parse_number(&v).ok_or_else(|| anyhow!("frame element #{idx}: {k}=\"{v}\" is not a number"))?;
            if k == "frameNum" {
                if val < 0.0 || val.fract() != 0.0 || !val.is_finite() {
                    bail!("frame element #{idx}: frameNum=\"{v}\" is not a frame number");
                }
                num = Some(val as u64);
            } else {
                metrics.insert(k, Value { v: val, text: v });
            }
        }
        let num = num.ok_or_else(|| anyhow!("frame element #{idx} has no frameNum"))?;
        out.push(Frame { num, metrics });
    }
    Ok(out)
}

// ---------------------------------------------------------------- CSV

fn parse_csv(text: &str) -> Result<Vec<Frame>> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.trim_start_matches('\u{feff}').as_bytes());
    let headers: Vec<String> = rdr.headers()?.iter().map(|s| s.to_string()).collect();
    let mut out = Vec::new();
    for (idx, rec) in rdr.records().enumerate() {
        let rec = rec.with_context(|| format!("CSV row {}", idx + 2))?;
        if rec.iter().all(|f| f.is_empty()) {
            continue;
        }
        let first = rec.get(0).unwrap_or("");
        let num: u64 = first.parse().map_err(|_| anyhow!("CSV row {}: frame number '{first}' is not an integer", idx + 2))?;
        let mut metrics = BTreeMap::new();
        for (col, field) in rec.iter().enumerate().skip(1) {
            let name = headers.get(col).map(|s| s.as_str()).unwrap_or("");
            if name.is_empty() {
                if field.is_empty() {
                    continue; // trailing comma
                }
                bail!("CSV row {}: value '{field}' in column {} has no header", idx + 2, col + 1);
            }
            if field.is_empty() {
                continue;
            }
            let v = parse_number(field).ok_or_else(|| anyhow!("CSV row {}: {name}='{field}' is not a number", idx + 2))?;
            metrics.insert(name.to_string(), Value { v, text: field.to_string() });
        }
        out.push(Frame { num, metrics });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by `scripts/fuzz` (target parity): a closing tag inside the opening one.
    #[test]
    fn a_closing_frames_tag_inside_the_opening_one_is_an_error() {
        let e = format!("{:#}", parse("<VMAF><frames</frames>>\n<frame frameNum=\"0\" a=\"1\" />\n</VMAF>", "x").unwrap_err());
        assert!(e.contains("no </frames> after <frames>"), "{e}");
    }

    #[test]
    fn json_with_nan_tokens() {
        let t = r#"{"version":"x","frames":[{"frameNum":0,"metrics":{"a":nan,"b":-inf,"c":0.10000000000000001}},
            {"frameNum":1,"metrics":{"a":-0,"b":1e300,"c":null}}],"pooled_metrics":{"a":{"mean":nan}}}"#;
        let tab = parse(t, "t").unwrap();
        assert_eq!(tab.format, Format::Json);
        assert_eq!(tab.frames.len(), 2);
        assert!(tab.frames[0].metrics["a"].v.is_nan());
        assert_eq!(tab.frames[0].metrics["b"].v, f64::NEG_INFINITY);
        assert!(tab.frames[1].metrics["a"].v.is_sign_negative());
        assert!(tab.full_precision());
        assert_eq!(tab.names, vec!["a", "b", "c"]);
    }

    #[test]
    fn json_truncated_is_an_error() {
        let e = parse(r#"{"frames":[{"frameNum":0,"metrics":{"a":1"#, "t").unwrap_err();
        assert!(format!("{e:#}").contains("truncated"), "{e:#}");
    }

    #[test]
    fn xml_and_csv() {
        let x = r#"<?xml version="1.0"?><VMAF version="3"><params/><frames>
            <frame frameNum="0" psnr_y="30.5" adm2="nan" />
            <frame frameNum="1" psnr_y="31.25" adm2="0.9" /></frames>
            <pooled_metrics><metric name="psnr_y" mean="1"/></pooled_metrics></VMAF>"#;
        let t = parse(x, "x").unwrap();
        assert_eq!(t.format, Format::Xml);
        assert_eq!(t.frames[1].metrics["psnr_y"].v, 31.25);
        assert!(t.frames[0].metrics["adm2"].v.is_nan());
        let c = "Frame,psnr_y,adm2,\n0,30.500000,0.900000,\n1,31.250000,-nan,\n";
        let t = parse(c, "c").unwrap();
        assert_eq!(t.format, Format::Csv);
        assert_eq!(t.frames.len(), 2);
        assert!(!t.full_precision());
        assert_eq!(t.max_digits(), 8);
        assert!(parse("hello world", "h").is_err());
    }
}
