//! PTX text: the module-level structure only (not the instructions): `.version`,
//! `.target`, kernel entries with their parameter lists and block-size directives, and the
//! `.global` / `.const` variables with their sizes.
//!
//! Kernel parameters are laid out as the CUDA ABI lays out the parameter buffer: each at
//! the next multiple of its alignment (`.align N` or the natural alignment of its type).

use super::types::{GlobalInfo, ImageError, KernelInfo, LaunchBounds, ParamInfo};

/// Longest dimension product / initializer accepted for one variable (bytes).
const MAX_VARIABLE_BYTES: u64 = 1 << 40;

/// A parsed PTX module.
pub(crate) struct PtxModule {
    /// The `.target` architecture, e.g. 80 for `sm_80`.
    pub target_sm: u32,
    /// The `.version` directive as (major, minor).
    pub version: (u32, u32),
    pub kernels: Vec<KernelInfo>,
    pub globals: Vec<GlobalInfo>,
}

fn bad(line: usize, msg: impl std::fmt::Display) -> ImageError {
    ImageError::InvalidPtx(format!("line {line}: {msg}"))
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Tok<'a> {
    s: &'a str,
    line: usize,
}

/// Splits PTX into tokens, dropping comments. Identifiers and directives may hold
/// letters, digits, `_ $ % .`; numbers may hold `.` and hex digits; quoted strings are
/// one token; every other character is a token of its own.
fn tokens(src: &str) -> Result<Vec<Tok<'_>>, ImageError> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line) = (0usize, 1usize);
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b' ' | b'\t' | b'\r' | b'\x0c' | b'\x0b' => i += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let start = line;
                i += 2;
                loop {
                    if i + 1 >= b.len() {
                        return Err(bad(start, "unterminated /* comment"));
                    }
                    if b[i] == b'*' && b[i + 1] == b'/' {
                        i += 2;
                        break;
                    }
                    if b[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\n' {
                        return Err(bad(line, "unterminated string"));
                    }
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if i >= b.len() {
                    return Err(bad(line, "unterminated string"));
                }
                i += 1;
                out.push(Tok { s: &src[start..i], line });
            }
            c if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'%' | b'.') => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'$' | b'%' | b'.')) {
                    i += 1;
                }
                out.push(Tok { s: &src[start..i], line });
            }
            c if c.is_ascii() && !c.is_ascii_control() => {
                out.push(Tok { s: &src[i..i + 1], line });
                i += 1;
            }
            _ => return Err(bad(line, format!("unexpected byte {c:#04x}"))),
        }
    }
    Ok(out)
}

/// True when the text starts (after comments and blank space) like a PTX module does.
pub(crate) fn looks_like_ptx(src: &str) -> bool {
    let mut rest = src;
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |n| &r[n..]);
        } else if let Some(r) = rest.strip_prefix("/*") {
            match r.find("*/") {
                Some(n) => rest = &r[n + 2..],
                None => return false,
            }
        } else {
            break;
        }
    }
    [".version", ".target", ".address_size"].iter().any(|d| rest.starts_with(d))
}

struct Parser<'a> {
    t: Vec<Tok<'a>>,
    i: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&'a str> {
        self.t.get(self.i).map(|t| t.s)
    }
    fn line(&self) -> usize {
        self.t.get(self.i).or(self.t.last()).map_or(1, |t| t.line)
    }
    fn next(&mut self) -> Result<&'a str, ImageError> {
        let t = self.t.get(self.i).ok_or_else(|| bad(self.line(), "unexpected end of PTX"))?;
        self.i += 1;
        Ok(t.s)
    }
    fn eat(&mut self, s: &str) -> bool {
        if self.peek() == Some(s) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, s: &str) -> Result<(), ImageError> {
        let line = self.line();
        let got = self.next()?;
        if got == s {
            Ok(())
        } else {
            Err(bad(line, format!("expected `{s}`, found `{got}`")))
        }
    }
    fn number(&mut self) -> Result<u64, ImageError> {
        let line = self.line();
        let s = self.next()?;
        parse_int(s).ok_or_else(|| bad(line, format!("expected a number, found `{s}`")))
    }
    /// Skips a balanced `{ ... }` group; the current token is its `{`.
    fn skip_braces(&mut self) -> Result<(), ImageError> {
        let line = self.line();
        let mut depth = 0usize;
        loop {
            let Some(t) = self.peek() else {
                return Err(bad(line, "unbalanced `{`"));
            };
            self.i += 1;
            match t {
                "{" => depth += 1,
                "}" => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
    }
    /// Skips to just after the next `;` at brace depth 0.
    fn skip_statement(&mut self) -> Result<(), ImageError> {
        loop {
            match self.peek() {
                None => return Err(bad(self.line(), "missing `;`")),
                Some("{") => self.skip_braces()?,
                Some(";") => {
                    self.i += 1;
                    return Ok(());
                }
                Some(_) => self.i += 1,
            }
        }
    }
}

fn parse_int(s: &str) -> Option<u64> {
    let s = s.strip_suffix('U').unwrap_or(s);
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$' || c == '%')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.'))
}

/// Size (and natural alignment) of a fundamental PTX type.
fn type_size(t: &str) -> Option<u64> {
    Some(match t {
        ".b8" | ".u8" | ".s8" | ".e4m3x2" | ".e5m2x2" | ".pred" => {
            if matches!(t, ".e4m3x2" | ".e5m2x2") {
                2
            } else {
                1
            }
        }
        ".b16" | ".u16" | ".s16" | ".f16" | ".bf16" => 2,
        ".b32" | ".u32" | ".s32" | ".f32" | ".f16x2" | ".bf16x2" | ".tf32" => 4,
        ".b64" | ".u64" | ".s64" | ".f64" => 8,
        ".b128" => 16,
        _ => return None,
    })
}

/// The target architecture of a `.target` list (`sm_90a, debug` -> 90).
fn target_arch(t: &str) -> Option<u32> {
    let n = t.strip_prefix("sm_")?;
    let digits: String = n.chars().take_while(|c| c.is_ascii_digit()).collect();
    let rest = &n[digits.len()..];
    if !(rest.is_empty() || rest == "a" || rest == "f") {
        return None;
    }
    digits.parse().ok()
}

/// A declarator's type information: alignment, element size, vector width.
struct Decl {
    align: Option<u64>,
    elem: Option<u64>,
    vec: u64,
    opaque: bool,
}

/// Reads `.align N`, `.vN`, `.ptr`, state spaces, `.attribute(...)` and the type of a
/// variable or parameter, up to its name.
fn decl_prefix(p: &mut Parser<'_>) -> Result<Decl, ImageError> {
    let mut d = Decl { align: None, elem: None, vec: 1, opaque: false };
    // After `.ptr`, a state space and `.align` describe the pointee, not the parameter.
    let mut pointee = false;
    loop {
        let line = p.line();
        let Some(t) = p.peek() else { return Err(bad(line, "unexpected end of PTX")) };
        if !t.starts_with('.') {
            return Ok(d);
        }
        p.i += 1;
        match t {
            ".align" => {
                let a = p.number()?;
                if a == 0 || !a.is_power_of_two() || a > 1 << 16 {
                    return Err(bad(line, format!(".align {a}")));
                }
                if !pointee {
                    d.align = Some(a);
                }
            }
            ".v2" => d.vec = 2,
            ".v4" => d.vec = 4,
            ".v8" => d.vec = 8,
            ".attribute" => {
                p.expect("(")?;
                while !p.eat(")") {
                    p.next()?;
                }
            }
            ".texref" | ".samplerref" | ".surfref" => d.opaque = true,
            ".ptr" => pointee = true,
            ".global" | ".const" | ".shared" | ".local" | ".param" | ".visible" | ".extern" | ".weak" | ".common" | ".managed" => {}
            ty => match type_size(ty) {
                Some(s) => d.elem = Some(s),
                None => return Err(bad(line, format!("unknown type or qualifier `{ty}`"))),
            },
        }
    }
}

/// Reads `[N]...` dimensions after a name; `[]` is `None` (sized by its initializer).
fn dims(p: &mut Parser<'_>) -> Result<Vec<Option<u64>>, ImageError> {
    let mut out = Vec::new();
    while p.eat("[") {
        if p.eat("]") {
            out.push(None);
            continue;
        }
        let n = p.number()?;
        p.expect("]")?;
        out.push(Some(n));
    }
    Ok(out)
}

/// Counts the scalar elements of an initializer `{ a, b, {c, d} }` (flattened), leaving
/// the parser after it. A scalar initializer counts 1.
fn initializer_len(p: &mut Parser<'_>) -> Result<u64, ImageError> {
    if p.peek() != Some("{") {
        // Scalar expression, up to `,` or `;` at depth 0.
        let mut paren = 0usize;
        loop {
            match p.peek() {
                None => return Err(bad(p.line(), "missing `;`")),
                Some("(") => paren += 1,
                Some(")") => paren = paren.saturating_sub(1),
                Some(",") | Some(";") if paren == 0 => return Ok(1),
                _ => {}
            }
            p.i += 1;
        }
    }
    let mut depth = 0usize;
    let mut count = 0u64;
    let mut pending = false;
    loop {
        let line = p.line();
        let t = p.next()?;
        match t {
            "{" => depth += 1,
            "}" => {
                if pending {
                    count += 1;
                    pending = false;
                }
                depth -= 1;
                if depth == 0 {
                    return Ok(count);
                }
            }
            "," => {
                if pending {
                    count += 1;
                    pending = false;
                }
            }
            ";" => return Err(bad(line, "`;` inside an initializer")),
            _ => pending = true,
        }
    }
}

/// A `.global` / `.const` declaration (after its state space): one or more declarators.
fn variable(p: &mut Parser<'_>, constant: bool, external: bool, out: &mut Vec<GlobalInfo>) -> Result<(), ImageError> {
    let d = decl_prefix(p)?;
    loop {
        let line = p.line();
        let name = p.next()?;
        if !is_ident(name) {
            return Err(bad(line, format!("expected a variable name, found `{name}`")));
        }
        let dims = dims(p)?;
        let mut init_len = None;
        if p.eat("=") {
            init_len = Some(initializer_len(p)?);
        }
        if !d.opaque && !external {
            let elem = d.elem.ok_or_else(|| bad(line, format!("variable `{name}` has no type")))?;
            let size = if dims.iter().any(Option::is_none) {
                // `x[] = {...}`: the initializer's scalars give the size.
                init_len.map(|n| n.saturating_mul(elem))
            } else {
                let known: u64 = dims.iter().flatten().fold(1u64, |a, &n| a.saturating_mul(n));
                Some(elem.saturating_mul(d.vec).saturating_mul(known))
            };
            if size.is_some_and(|s| s > MAX_VARIABLE_BYTES) {
                return Err(bad(line, format!("variable `{name}` is too large")));
            }
            out.push(GlobalInfo { name: name.to_string(), size, constant });
        }
        if p.eat(",") {
            continue;
        }
        p.expect(";")?;
        return Ok(());
    }
}

/// The parameter list of an `.entry`: `( .param ... name[, ...] )`.
fn entry_params(p: &mut Parser<'_>) -> Result<Vec<ParamInfo>, ImageError> {
    let mut out = Vec::new();
    let mut offset = 0u64;
    p.expect("(")?;
    if p.eat(")") {
        return Ok(out);
    }
    loop {
        let line = p.line();
        p.expect(".param")?;
        let d = decl_prefix(p)?;
        let name = p.next()?;
        if !is_ident(name) {
            return Err(bad(line, format!("expected a parameter name, found `{name}`")));
        }
        let dims = dims(p)?;
        let elem = d.elem.ok_or_else(|| bad(line, format!("parameter `{name}` has no type")))?;
        let mut size = elem.saturating_mul(d.vec);
        for n in &dims {
            let n = n.ok_or_else(|| bad(line, format!("parameter `{name}` has an unsized array")))?;
            size = size.saturating_mul(n);
        }
        let align = d.align.unwrap_or(elem.saturating_mul(d.vec)).max(1);
        offset = offset.div_ceil(align).saturating_mul(align);
        if offset.saturating_add(size) > u32::MAX as u64 {
            return Err(bad(line, "parameter list too large"));
        }
        out.push(ParamInfo { offset: offset as u32, size: size as u32 });
        offset += size;
        if p.eat(")") {
            return Ok(out);
        }
        p.expect(",")?;
    }
}

/// Up to three comma-separated numbers (missing ones are 1).
fn dims3(p: &mut Parser<'_>) -> Result<[u32; 3], ImageError> {
    let mut v = [1u32; 3];
    for (k, slot) in v.iter_mut().enumerate() {
        let line = p.line();
        let n = p.number()?;
        *slot = u32::try_from(n).map_err(|_| bad(line, format!("{n} out of range")))?;
        if k < 2 && !p.eat(",") {
            break;
        }
    }
    Ok(v)
}

/// An `.entry` or `.func` after its keyword.
fn function(p: &mut Parser<'_>, entry: bool, out: &mut Vec<KernelInfo>) -> Result<(), ImageError> {
    if !entry && p.peek() == Some("(") {
        // Return value list of a .func.
        p.i += 1;
        let mut depth = 1usize;
        while depth > 0 {
            match p.next()? {
                "(" => depth += 1,
                ")" => depth -= 1,
                _ => {}
            }
        }
    }
    let line = p.line();
    let name = p.next()?;
    if !is_ident(name) {
        return Err(bad(line, format!("expected a function name, found `{name}`")));
    }
    let params = if entry {
        if p.peek() == Some("(") {
            entry_params(p)?
        } else {
            Vec::new()
        }
    } else {
        if p.peek() == Some("(") {
            p.i += 1;
            let mut depth = 1usize;
            while depth > 0 {
                match p.next()? {
                    "(" => depth += 1,
                    ")" => depth -= 1,
                    _ => {}
                }
            }
        }
        Vec::new()
    };
    let mut bounds = LaunchBounds::default();
    loop {
        let line = p.line();
        match p.peek() {
            Some("{") => {
                p.skip_braces()?;
                break;
            }
            Some(";") => {
                // A prototype: declared here, defined elsewhere.
                p.i += 1;
                return Ok(());
            }
            Some(".maxntid") => {
                p.i += 1;
                bounds.maxntid = Some(dims3(p)?);
            }
            Some(".reqntid") => {
                p.i += 1;
                bounds.reqntid = Some(dims3(p)?);
            }
            Some(".minnctapersm") => {
                p.i += 1;
                bounds.minnctapersm = Some(p.number()?.min(u32::MAX as u64) as u32);
            }
            Some(".maxnctapersm") | Some(".maxnreg") | Some(".maxclusterrank") => {
                p.i += 1;
                p.number()?;
            }
            Some(".reqnctapercluster") => {
                p.i += 1;
                dims3(p)?;
            }
            Some(".explicitcluster") | Some(".noreturn") | Some(".blocksareclusters") => p.i += 1,
            Some(".pragma") => {
                p.i += 1;
                p.skip_statement()?;
            }
            Some(t) => return Err(bad(line, format!("unexpected `{t}` in the declaration of `{name}`"))),
            None => return Err(bad(line, format!("`{name}` has no body"))),
        }
    }
    if entry {
        out.push(KernelInfo { name: name.to_string(), params: Some(params), attrs: None, bounds });
    }
    Ok(())
}

/// Parses a PTX module's top level.
pub(crate) fn parse(src: &str) -> Result<PtxModule, ImageError> {
    let mut p = Parser { t: tokens(src)?, i: 0 };
    let mut version = None;
    let mut target = None;
    let mut kernels = Vec::new();
    let mut globals = Vec::new();
    while let Some(t) = p.peek() {
        let line = p.line();
        p.i += 1;
        match t {
            ".version" => {
                let v = p.next()?;
                let ok = v
                    .split_once('.')
                    .is_some_and(|(a, b)| !a.is_empty() && !b.is_empty() && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit()));
                if !ok {
                    return Err(bad(line, format!("bad .version `{v}`")));
                }
                version = Some(v);
            }
            ".target" => loop {
                let l = p.line();
                let a = p.next()?;
                if let Some(sm) = target_arch(a) {
                    if target.is_none() {
                        target = Some(sm);
                    }
                } else if !matches!(a, "debug" | "texmode_unified" | "texmode_independent" | "map_f64_to_f32") {
                    return Err(bad(l, format!("unknown .target `{a}`")));
                }
                if !p.eat(",") {
                    break;
                }
            },
            ".address_size" => {
                let n = p.number()?;
                if n != 32 && n != 64 {
                    return Err(bad(line, format!(".address_size {n}")));
                }
            }
            ".file" => {
                p.number()?;
                let f = p.next()?;
                if !f.starts_with('"') {
                    return Err(bad(line, ".file without a file name"));
                }
                while p.eat(",") {
                    p.number()?;
                }
            }
            ".pragma" | ".alias" => p.skip_statement()?,
            ".section" => {
                p.next()?;
                if p.peek() != Some("{") {
                    return Err(bad(line, ".section without a body"));
                }
                p.skip_braces()?;
            }
            ".visible" | ".extern" | ".weak" | ".common" => {
                // Linkage, then the declaration proper.
                let external = t == ".extern";
                let mut ext = external;
                while let Some(q) = p.peek() {
                    if matches!(q, ".visible" | ".extern" | ".weak" | ".common") {
                        ext |= q == ".extern";
                        p.i += 1;
                    } else {
                        break;
                    }
                }
                let l = p.line();
                match p.next()? {
                    ".entry" => function(&mut p, true, &mut kernels)?,
                    ".func" => function(&mut p, false, &mut kernels)?,
                    ".global" => variable(&mut p, false, ext, &mut globals)?,
                    ".const" => variable(&mut p, true, ext, &mut globals)?,
                    ".shared" | ".local" | ".tex" => p.skip_statement()?,
                    other => return Err(bad(l, format!("unexpected `{other}` after linkage"))),
                }
            }
            ".entry" => function(&mut p, true, &mut kernels)?,
            ".func" => function(&mut p, false, &mut kernels)?,
            ".global" => variable(&mut p, false, false, &mut globals)?,
            ".const" => variable(&mut p, true, false, &mut globals)?,
            ".shared" | ".local" | ".tex" => p.skip_statement()?,
            other => return Err(bad(line, format!("unexpected `{other}` at module level"))),
        }
    }
    let Some(version) = version else {
        return Err(bad(1, "no .version directive"));
    };
    // Checked to be digits '.' digits when read.
    let version = version.split_once('.').map(|(a, b)| (a.parse().unwrap_or(u32::MAX), b.parse().unwrap_or(u32::MAX))).unwrap_or((0, 0));
    let Some(target_sm) = target else {
        return Err(bad(1, "no .target sm_XX directive"));
    };
    Ok(PtxModule { target_sm, version, kernels, globals })
}

/// The `.global` (`__device__`) and `.const` (`__constant__`) variables a PTX module
/// defines, with sizes in bytes (for cuModuleGetGlobal). `.extern` declarations are left
/// out: they are defined by another module.
pub fn ptx_globals(src: &str) -> Result<Vec<GlobalInfo>, ImageError> {
    parse(src).map(|m| m.globals)
}
