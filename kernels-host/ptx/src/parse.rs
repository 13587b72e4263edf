//! The parser: PTX text (ISA up to 9.x, nvcc's and clang's output alike) into an
//! [`ast::Module`]. Panic-free on any input; nesting depth and sizes are bounded, and an
//! error names its line.

use crate::ast::*;
use crate::lex::{self, Kind, Tok};
use crate::Error;

/// Deepest `{ }` nesting accepted in a body or an initializer.
const MAX_DEPTH: usize = 64;
/// Largest array dimension accepted (elements).
const MAX_DIM: u64 = 1 << 40;

/// Parses one PTX module.
pub fn parse(src: &str) -> Result<Module, Error> {
    let toks = lex::tokens(src)?;
    let mut p = Parser { t: toks, i: 0 };
    p.module()
}

struct Parser<'a> {
    t: Vec<Tok<'a>>,
    i: usize,
}

/// Parses an integer literal: decimal, hex (`0x`), octal (`0...`), binary (`0b`), with an
/// optional `U` suffix.
pub fn int_lit(s: &str) -> Option<u64> {
    let s = s.strip_suffix('U').or_else(|| s.strip_suffix('u')).unwrap_or(s);
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok();
    }
    if let Some(b) = s.strip_prefix("0b").or_else(|| s.strip_prefix("0B")) {
        return u64::from_str_radix(b, 2).ok();
    }
    if s.len() > 1 && s.starts_with('0') && s.bytes().all(|c| c.is_ascii_digit()) {
        return u64::from_str_radix(&s[1..], 8).ok();
    }
    if !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()) {
        return s.parse::<u64>().ok();
    }
    None
}

/// Parses a float literal: `0f` + 8 hex digits, `0d` + 16, or a decimal with `.` or an
/// exponent.
pub fn float_lit(s: &str) -> Option<FloatLit> {
    if let Some(h) = s.strip_prefix("0f").or_else(|| s.strip_prefix("0F")) {
        return (h.len() == 8).then(|| u32::from_str_radix(h, 16).ok()).flatten().map(FloatLit::F32);
    }
    if let Some(h) = s.strip_prefix("0d").or_else(|| s.strip_prefix("0D")) {
        return (h.len() == 16).then(|| u64::from_str_radix(h, 16).ok()).flatten().map(FloatLit::F64);
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) && (s.contains('.') || s.contains('e') || s.contains('E')) {
        return s.parse::<f64>().ok().map(FloatLit::Dec);
    }
    None
}

fn negate_float(f: FloatLit) -> FloatLit {
    match f {
        FloatLit::F32(b) => FloatLit::F32(b ^ 0x8000_0000),
        FloatLit::F64(b) => FloatLit::F64(b ^ 0x8000_0000_0000_0000),
        FloatLit::Dec(v) => FloatLit::Dec(-v),
    }
}

fn is_name(s: &str) -> bool {
    let first = s.as_bytes().first().copied().unwrap_or(b'0');
    (first.is_ascii_alphabetic() || matches!(first, b'_' | b'$' | b'%')) && !s.is_empty()
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&Tok<'a>> {
        self.t.get(self.i)
    }
    fn peek_s(&self) -> &'a str {
        self.t.get(self.i).map(|t| t.s).unwrap_or("")
    }
    fn peek_at(&self, k: usize) -> &'a str {
        self.t.get(self.i + k).map(|t| t.s).unwrap_or("")
    }
    fn line(&self) -> u32 {
        self.t.get(self.i).or_else(|| self.t.last()).map(|t| t.line).unwrap_or(0)
    }
    fn err<T>(&self, msg: impl Into<String>) -> Result<T, Error> {
        Err(Error::parse(self.line(), msg))
    }
    fn next(&mut self) -> Result<Tok<'a>, Error> {
        match self.t.get(self.i) {
            Some(t) => {
                self.i += 1;
                Ok(*t)
            }
            None => Err(Error::parse(self.line(), "unexpected end of the module")),
        }
    }
    fn eat(&mut self, s: &str) -> bool {
        if self.peek_s() == s && self.peek().map(|t| t.kind != Kind::Str).unwrap_or(false) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, s: &str) -> Result<(), Error> {
        if self.eat(s) {
            Ok(())
        } else {
            let got = self.peek_s().to_string();
            self.err(format!("expected `{s}`, found `{got}`"))
        }
    }
    fn word(&mut self) -> Result<&'a str, Error> {
        let t = self.next()?;
        if t.kind != Kind::Word {
            return Err(Error::parse(t.line, format!("expected a name, found `{}`", t.s)));
        }
        Ok(t.s)
    }
    fn uint(&mut self) -> Result<u64, Error> {
        let t = self.next()?;
        int_lit(t.s).ok_or_else(|| Error::parse(t.line, format!("expected an integer, found `{}`", t.s)))
    }
    fn u32v(&mut self) -> Result<u32, Error> {
        let v = self.uint()?;
        u32::try_from(v).map_err(|_| Error::parse(self.line(), format!("{v} is too large")))
    }
    /// Skips to just after the next `;` at this nesting level (unknown directives).
    fn skip_statement(&mut self) -> Result<(), Error> {
        let mut depth = 0i32;
        while let Some(t) = self.peek() {
            let s = t.s;
            self.i += 1;
            match s {
                "{" => depth += 1,
                "}" => depth -= 1,
                ";" if depth <= 0 => return Ok(()),
                _ => {}
            }
        }
        Ok(())
    }
    /// Skips a balanced `{ ... }` starting at the current `{`.
    fn skip_braces(&mut self) -> Result<(), Error> {
        self.expect("{")?;
        let mut depth = 1;
        while depth > 0 {
            let t = self.next()?;
            match t.s {
                "{" if t.kind == Kind::Punct => depth += 1,
                "}" if t.kind == Kind::Punct => depth -= 1,
                _ => {}
            }
        }
        Ok(())
    }

    fn module(&mut self) -> Result<Module, Error> {
        let mut m = Module { address_size: 64, ..Module::default() };
        let mut seen_version = false;
        while let Some(t) = self.peek() {
            let line = t.line;
            match t.s {
                ".version" => {
                    self.i += 1;
                    let v = self.word()?;
                    let (a, b) = v.split_once('.').unwrap_or((v, "0"));
                    m.version = (
                        a.parse().map_err(|_| Error::parse(line, format!("bad .version {v}")))?,
                        b.parse().map_err(|_| Error::parse(line, format!("bad .version {v}")))?,
                    );
                    seen_version = true;
                }
                ".target" => {
                    self.i += 1;
                    loop {
                        let w = self.word()?;
                        if let Some(n) = w.strip_prefix("sm_").or_else(|| w.strip_prefix("compute_")) {
                            let digits: String = n.chars().take_while(|c| c.is_ascii_digit()).collect();
                            m.sm = digits.parse().map_err(|_| Error::parse(line, format!("bad .target {w}")))?;
                        } else {
                            m.target_opts.push(w.to_string());
                        }
                        if !self.eat(",") {
                            break;
                        }
                    }
                }
                ".address_size" => {
                    self.i += 1;
                    m.address_size = self.u32v()?;
                }
                ".file" => {
                    self.i += 1;
                    let n = self.u32v()?;
                    let t = self.next()?;
                    let name = t.s.trim_matches('"').to_string();
                    m.files.insert(n, name);
                    while self.eat(",") {
                        self.next()?;
                    }
                }
                ".section" => {
                    self.i += 1;
                    self.word()?;
                    if self.peek_s() == "{" {
                        self.skip_braces()?;
                    } else {
                        self.skip_statement()?;
                    }
                }
                ".pragma" => {
                    self.i += 1;
                    self.skip_statement()?;
                }
                ";" => self.i += 1,
                _ => self.item(&mut m)?,
            }
        }
        if !seen_version {
            return Err(Error::parse(1, "no .version directive: not a PTX module"));
        }
        Ok(m)
    }

    /// A module-scope variable or function, with its linkage.
    fn item(&mut self, m: &mut Module) -> Result<(), Error> {
        let line = self.line();
        let mut linkage = Linkage::None;
        loop {
            let l = match self.peek_s() {
                ".visible" => Linkage::Visible,
                ".extern" => Linkage::Extern,
                ".weak" => Linkage::Weak,
                ".common" => Linkage::Common,
                _ => break,
            };
            linkage = l;
            self.i += 1;
        }
        match self.peek_s() {
            ".entry" | ".func" => {
                let entry = self.peek_s() == ".entry";
                self.i += 1;
                let f = self.function(line, linkage, entry)?;
                m.funcs.push(f);
                Ok(())
            }
            ".alias" => self.skip_statement(),
            // Independent texturing mode: the H200's ptxas refuses `.samplerref` under the
            // default `.target texmode_unified` (device: CUDA_ERROR_INVALID_PTX).
            ".samplerref" => {
                self.err("`.samplerref` (independent texturing mode) violates the default `.target texmode_unified`".to_string())
            }
            s if Space::parse(s).is_some() || matches!(s, ".texref" | ".surfref") => {
                let vars = self.variables(line, linkage)?;
                // `.global .samplerref s;` likewise (ptx_feature_samplerref_decl: 218 on
                // the H200); independent mode declares samplers so.
                let independent = m.target_opts.iter().any(|o| o == "texmode_independent");
                if let Some(v) = vars.iter().find(|v| v.opaque.as_deref() == Some("samplerref") && !independent) {
                    let msg =
                        format!("`.samplerref {}` (independent texturing mode) violates the default `.target texmode_unified`", v.name);
                    return Err(Error::parse(line, msg));
                }
                // In independent mode the H200's driver fails the load with
                // CUDA_ERROR_NOT_FOUND, with or without an initializer
                // (ptx_feature_samplerref_independent, _initialized).
                if let Some(v) = vars.iter().find(|v| v.opaque.as_deref() == Some("samplerref")) {
                    return Err(Error::DeviceRefuses {
                        what: format!(".samplerref {}", v.name),
                        function: String::new(),
                        line,
                        code: 500,
                        why: "a module-scope sampler in independent texturing mode is refused at load".into(),
                    });
                }
                m.vars.extend(vars);
                Ok(())
            }
            other => {
                let other = other.to_string();
                self.err(format!("unexpected `{other}` at module scope"))
            }
        }
    }

    /// `.space [.align N] [.vN] .type name[dims] [= init] [, name2...];`
    fn variables(&mut self, line: u32, linkage: Linkage) -> Result<Vec<Var>, Error> {
        let mut space = Space::Global;
        let mut align = None;
        let mut vector = 1;
        let mut ty = None;
        let mut opaque = None;
        loop {
            let s = self.peek_s();
            if let Some(sp) = Space::parse(s) {
                space = sp;
            } else if s == ".align" {
                self.i += 1;
                align = Some(self.u32v()?);
                continue;
            } else if s == ".v2" || s == ".v4" || s == ".v8" {
                vector = s[2..].parse().unwrap_or(1);
            } else if let Some(t) = Ty::parse(s) {
                ty = Some(t);
            } else if matches!(s, ".texref" | ".samplerref" | ".surfref") {
                opaque = Some(s[1..].to_string());
                ty = Some(Ty::B64);
            } else if s == ".ptr" || s == ".attribute" {
                // Attributes that do not change the layout.
                self.i += 1;
                if self.peek_s() == "(" {
                    self.skip_parens()?;
                }
                continue;
            } else {
                break;
            }
            self.i += 1;
        }
        let ty = ty.ok_or_else(|| Error::parse(line, "variable without a type"))?;
        let mut out = Vec::new();
        loop {
            let name = self.word()?.to_string();
            if !is_name(&name) {
                return Err(Error::parse(line, format!("bad variable name `{name}`")));
            }
            let mut dims = Vec::new();
            while self.eat("[") {
                if self.eat("]") {
                    dims.push(None);
                } else {
                    let n = self.uint()?;
                    if n > MAX_DIM {
                        return Err(Error::parse(line, format!("array dimension {n} of {name} is too large")));
                    }
                    dims.push(Some(n));
                    self.expect("]")?;
                }
            }
            let mut init = None;
            if self.eat("=") {
                init = Some(self.init(0)?);
            }
            out.push(Var { line, linkage, space, align, vector, ty, name, dims, init, opaque: opaque.clone() });
            if !self.eat(",") {
                break;
            }
        }
        self.expect(";")?;
        Ok(out)
    }

    fn skip_parens(&mut self) -> Result<(), Error> {
        self.expect("(")?;
        let mut depth = 1;
        while depth > 0 {
            match self.next()?.s {
                "(" => depth += 1,
                ")" => depth -= 1,
                _ => {}
            }
        }
        Ok(())
    }

    fn init(&mut self, depth: usize) -> Result<Init, Error> {
        if depth > MAX_DEPTH {
            return self.err("initializer nested too deeply");
        }
        if self.eat("{") {
            let mut v = Vec::new();
            if !self.eat("}") {
                loop {
                    // Sampler initializers: `name = value` pairs; kept as their values.
                    if self.peek_at(1) == "=" && self.peek().map(|t| t.kind == Kind::Word).unwrap_or(false) {
                        self.i += 2;
                    }
                    v.push(self.init(depth + 1)?);
                    if self.eat("}") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            return Ok(Init::List(v));
        }
        let neg = self.eat("-");
        let t = self.next()?;
        if let Some(v) = int_lit(t.s) {
            return Ok(Init::Int(if neg { v.wrapping_neg() } else { v }));
        }
        if let Some(f) = float_lit(t.s) {
            return Ok(Init::Float(if neg { negate_float(f) } else { f }));
        }
        if neg {
            return Err(Error::parse(t.line, format!("cannot negate `{}` in an initializer", t.s)));
        }
        let (name, generic) = if t.s == "generic" && self.peek_s() == "(" {
            self.i += 1;
            let n = self.word()?;
            self.expect(")")?;
            (n, true)
        } else {
            (t.s, false)
        };
        if !is_name(name) {
            return Err(Error::parse(t.line, format!("bad initializer `{name}`")));
        }
        let mut offset = 0i64;
        while matches!(self.peek_s(), "+" | "-") {
            let minus = self.next()?.s == "-";
            let v = self.uint()? as i64;
            offset = if minus { offset.wrapping_sub(v) } else { offset.wrapping_add(v) };
        }
        Ok(Init::Addr { name: name.to_string(), offset, generic })
    }

    /// A parameter list `( .param .type name, ... )` (possibly empty).
    fn params(&mut self, proto: bool) -> Result<Vec<Param>, Error> {
        self.expect("(")?;
        let mut out = Vec::new();
        if self.eat(")") {
            return Ok(out);
        }
        loop {
            let mut space = Space::Param;
            let mut ty = None;
            let mut align = None;
            let mut vector = 1;
            let mut ptr = None;
            loop {
                let s = self.peek_s();
                if s == ".param" || s == ".reg" {
                    space = Space::parse(s).unwrap_or(Space::Param);
                } else if s == ".align" {
                    self.i += 1;
                    align = Some(self.u32v()?);
                    continue;
                } else if let Some(t) = Ty::parse(s) {
                    ty = Some(t);
                } else if s == ".v2" || s == ".v4" {
                    vector = s[2..].parse().unwrap_or(1);
                } else if s == ".ptr" {
                    self.i += 1;
                    let mut attr = String::from("ptr");
                    while matches!(self.peek_s(), ".global" | ".const" | ".shared" | ".local") {
                        attr.push_str(self.peek_s());
                        self.i += 1;
                    }
                    if self.peek_s() == ".align" {
                        self.i += 1;
                        let a = self.u32v()?;
                        attr.push_str(&format!(".align{a}"));
                    }
                    ptr = Some(attr);
                    continue;
                } else if matches!(s, ".texref" | ".samplerref" | ".surfref") {
                    ty = Some(Ty::B64);
                } else {
                    break;
                }
                self.i += 1;
            }
            let ty = ty.ok_or_else(|| Error::parse(self.line(), "parameter without a type"))?;
            let name = if proto && matches!(self.peek_s(), "," | ")") { "_".to_string() } else { self.word()?.to_string() };
            let mut count = 1u64;
            if self.eat("[") {
                if self.eat("]") {
                    count = 0;
                } else {
                    count = self.uint()?;
                    if count > MAX_DIM {
                        return self.err("parameter array too large");
                    }
                    self.expect("]")?;
                }
            }
            out.push(Param { space, ty, align, vector, count, name, ptr });
            if self.eat(")") {
                return Ok(out);
            }
            self.expect(",")?;
        }
    }

    fn dims3(&mut self) -> Result<[u32; 3], Error> {
        let mut d = [1u32; 3];
        d[0] = self.u32v()?;
        for v in d.iter_mut().skip(1) {
            if !self.eat(",") {
                break;
            }
            *v = self.u32v()?;
        }
        Ok(d)
    }

    fn function(&mut self, line: u32, linkage: Linkage, entry: bool) -> Result<Function, Error> {
        let mut rets = Vec::new();
        if !entry && self.peek_s() == "(" {
            rets = self.params(false)?;
        }
        let name = self.word()?.to_string();
        let mut params = Vec::new();
        if self.peek_s() == "(" {
            params = self.params(false)?;
        }
        let mut perf = Perf::default();
        loop {
            match self.peek_s() {
                ".maxntid" => {
                    self.i += 1;
                    perf.maxntid = Some(self.dims3()?);
                }
                ".reqntid" => {
                    self.i += 1;
                    perf.reqntid = Some(self.dims3()?);
                }
                ".minnctapersm" => {
                    self.i += 1;
                    perf.minnctapersm = Some(self.u32v()?);
                }
                ".maxnreg" => {
                    self.i += 1;
                    perf.maxnreg = Some(self.u32v()?);
                }
                ".maxnctapersm" | ".maxclusterrank" => {
                    self.i += 1;
                    self.uint()?;
                }
                ".reqnctapercluster" => {
                    self.i += 1;
                    self.dims3()?;
                }
                ".explicitcluster" | ".noreturn" | ".blocksareclusters" => self.i += 1,
                ".attribute" => {
                    self.i += 1;
                    self.skip_parens()?;
                }
                ".pragma" => {
                    self.i += 1;
                    let _ = self.next()?;
                    self.expect(";")?;
                }
                _ => break,
            }
        }
        if self.eat(";") {
            return Ok(Function { line, linkage, entry, name, rets, params, perf, body: None });
        }
        self.expect("{")?;
        let body = self.body(0)?;
        Ok(Function { line, linkage, entry, name, rets, params, perf, body: Some(body) })
    }

    /// Statements up to the closing `}` (consumed).
    fn body(&mut self, depth: usize) -> Result<Vec<Stmt>, Error> {
        if depth > MAX_DEPTH {
            return self.err("blocks nested too deeply");
        }
        let mut out = Vec::new();
        loop {
            let Some(t) = self.peek() else {
                return self.err("unexpected end of the module inside a function body");
            };
            let line = t.line;
            match t.s {
                "}" => {
                    self.i += 1;
                    return Ok(out);
                }
                "{" => {
                    self.i += 1;
                    out.push(Stmt::Block(self.body(depth + 1)?));
                }
                ";" => self.i += 1,
                ".reg" => {
                    self.i += 1;
                    let mut vector = 1;
                    if matches!(self.peek_s(), ".v2" | ".v4") {
                        vector = self.peek_s()[2..].parse().unwrap_or(1);
                        self.i += 1;
                    }
                    let ts = self.word()?;
                    let ty = Ty::parse(ts).ok_or_else(|| Error::parse(line, format!("unknown register type {ts}")))?;
                    let mut names = Vec::new();
                    loop {
                        let n = self.word()?.to_string();
                        let mut count = None;
                        if self.eat("<") {
                            count = Some(self.u32v()?);
                            self.expect(">")?;
                        }
                        names.push((n, count));
                        if !self.eat(",") {
                            break;
                        }
                    }
                    self.expect(";")?;
                    out.push(Stmt::Reg { line, ty, vector, names });
                }
                ".local" | ".shared" | ".param" | ".const" | ".global" => {
                    for v in self.variables(line, Linkage::None)? {
                        out.push(Stmt::Var(v));
                    }
                }
                ".loc" => {
                    self.i += 1;
                    let file = self.u32v()?;
                    let l = self.u32v()?;
                    // column, then optional `, function_name ..., inlined_at ...`
                    if self.peek().map(|t| t.line == line).unwrap_or(false) {
                        let _ = self.uint();
                    }
                    while self.peek().map(|t| t.line == line && t.s != ";").unwrap_or(false) {
                        self.i += 1;
                    }
                    out.push(Stmt::Loc { file, line: l });
                }
                ".pragma" | ".maxnreg" | ".maxntid" | ".reqntid" | ".minnctapersm" => {
                    self.i += 1;
                    self.skip_statement()?;
                }
                "@" => out.push(Stmt::Instr(self.instruction()?)),
                s if t.kind == Kind::Word && self.peek_at(1) == ":" => {
                    let name = s.to_string();
                    self.i += 2;
                    match self.peek_s() {
                        ".callprototype" => {
                            self.i += 1;
                            let rets = if self.peek_s() == "(" { self.params(true)? } else { Vec::new() };
                            self.expect("_")?;
                            let params = if self.peek_s() == "(" { self.params(true)? } else { Vec::new() };
                            while self.peek_s() != ";" {
                                self.next()?;
                            }
                            self.expect(";")?;
                            out.push(Stmt::Prototype { line, name, rets, params });
                        }
                        ".branchtargets" => {
                            self.i += 1;
                            let mut labels = Vec::new();
                            loop {
                                labels.push(self.word()?.to_string());
                                if !self.eat(",") {
                                    break;
                                }
                            }
                            self.expect(";")?;
                            out.push(Stmt::BranchTargets { line, name, labels });
                        }
                        _ => out.push(Stmt::Label { line, name }),
                    }
                }
                s if t.kind == Kind::Word && !s.starts_with('.') => out.push(Stmt::Instr(self.instruction()?)),
                other => {
                    let other = other.to_string();
                    return self.err(format!("unexpected `{other}` in a function body"));
                }
            }
        }
    }

    fn instruction(&mut self) -> Result<Instr, Error> {
        let line = self.line();
        let mut guard = None;
        if self.eat("@") {
            let neg = self.eat("!");
            guard = Some((neg, self.word()?.to_string()));
        }
        let w = self.word()?;
        let (op, rest) = match w.find('.') {
            Some(k) => (&w[..k], &w[k..]),
            None => (w, ""),
        };
        if op.is_empty() {
            return Err(Error::parse(line, format!("bad instruction `{w}`")));
        }
        let mods: Vec<String> = rest.split('.').filter(|s| !s.is_empty()).map(|s| format!(".{s}")).collect();
        let mut args = Vec::new();
        if !self.eat(";") {
            loop {
                args.push(self.operand(0)?);
                if self.eat(";") {
                    break;
                }
                // `call` separates its lists with commas too.
                self.expect(",")?;
            }
        }
        Ok(Instr { line, guard, op: op.to_string(), mods, args })
    }

    fn operand(&mut self, depth: usize) -> Result<Operand, Error> {
        if depth > 8 {
            return self.err("operand nested too deeply");
        }
        let line = self.line();
        if self.eat("!") {
            return Ok(Operand::Not(Box::new(self.operand(depth + 1)?)));
        }
        if self.eat("{") {
            let mut v = Vec::new();
            if !self.eat("}") {
                loop {
                    v.push(self.operand(depth + 1)?);
                    if self.eat("}") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            // `tex... {d0, d1, d2, d3}|p, [...]`: the result and the residency predicate.
            if self.eat("|") {
                let second = self.operand(depth + 1)?;
                return Ok(Operand::Pair(Box::new(Operand::Vector(v)), Box::new(second)));
            }
            return Ok(Operand::Vector(v));
        }
        if self.eat("(") {
            let mut v = Vec::new();
            if !self.eat(")") {
                loop {
                    v.push(self.operand(depth + 1)?);
                    if self.eat(")") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            return Ok(Operand::List(v));
        }
        if self.eat("[") {
            return self.address(depth);
        }
        let neg = self.eat("-");
        let t = self.next()?;
        if t.kind != Kind::Word {
            return Err(Error::parse(line, format!("unexpected `{}` in an operand", t.s)));
        }
        if let Some(v) = int_lit(t.s) {
            let v = if neg { v.wrapping_neg() } else { v };
            return Ok(Operand::Int(v));
        }
        if let Some(f) = float_lit(t.s) {
            return Ok(Operand::Float(if neg { negate_float(f) } else { f }));
        }
        if neg {
            return Err(Error::parse(line, format!("cannot negate `{}`", t.s)));
        }
        if t.s == "_" {
            return Ok(Operand::Sink);
        }
        if !is_name(t.s) {
            return Err(Error::parse(line, format!("bad operand `{}`", t.s)));
        }
        let name = t.s.to_string();
        if self.eat("|") {
            let second = self.operand(depth + 1)?;
            return Ok(Operand::Pair(Box::new(Operand::Name(name)), Box::new(second)));
        }
        if matches!(self.peek_s(), "+" | "-") && int_lit(self.peek_at(1)).is_some() {
            let off = self.offset()?;
            return Ok(Operand::SymOff(name, off));
        }
        Ok(Operand::Name(name))
    }

    /// `+ int` / `- int` / `+ -int` sequences.
    fn offset(&mut self) -> Result<i64, Error> {
        let mut off = 0i64;
        while matches!(self.peek_s(), "+" | "-") {
            let mut minus = self.next()?.s == "-";
            if self.eat("-") {
                minus = !minus;
            }
            let v = self.uint()? as i64;
            off = if minus { off.wrapping_sub(v) } else { off.wrapping_add(v) };
        }
        Ok(off)
    }

    /// After `[`: `[name]`, `[name+off]`, `[off]`, or a texture-style list `[a, b, {..}]`.
    fn address(&mut self, depth: usize) -> Result<Operand, Error> {
        let line = self.line();
        let first = self.peek_s();
        if let Some(v) = int_lit(first) {
            self.i += 1;
            let extra = self.offset()?;
            self.expect("]")?;
            return Ok(Operand::Addr { base: None, offset: (v as i64).wrapping_add(extra) });
        }
        if first == "-" {
            let off = self.offset()?;
            self.expect("]")?;
            return Ok(Operand::Addr { base: None, offset: off });
        }
        let base = self.operand(depth + 1)?;
        let offset = if let Operand::SymOff(_, o) = &base { *o } else { self.offset()? };
        if self.eat("]") {
            let name = match base {
                Operand::Name(n) | Operand::SymOff(n, _) => n,
                _ => return Err(Error::parse(line, "bad address")),
            };
            return Ok(Operand::Addr { base: Some(name), offset });
        }
        let mut v = vec![base];
        while self.eat(",") {
            v.push(self.operand(depth + 1)?);
        }
        self.expect("]")?;
        Ok(Operand::Bracket(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
//
// Generated by NVIDIA NVVM Compiler
.version 8.0
.target sm_90
.address_size 64

.extern .func  (.param .b32 func_retval0) vprintf
(
	.param .b64 vprintf_param_0,
	.param .b64 vprintf_param_1
)
;
.global .align 1 .b8 $str[4] = {37, 100, 10, 0};
.const .align 4 .f32 tab[2] = {0f3F800000, 0f40000000};
.extern .shared .align 16 .b8 smem[];

.visible .entry k(
	.param .u64 .ptr .global .align 4 k_param_0,
	.param .align 8 .b8 k_param_1[16]
)
.maxntid 256, 1, 1
{
	.local .align 8 .b8 	__local_depot0[8];
	.reg .pred 	%p<2>;
	.reg .b32 	%r<5>;
	.reg .b64 	%rd<4>;
	.loc	1 10 3
	mov.u32 	%r1, %tid.x;
	setp.lt.s32 	%p1|%p2, %r1, -4;
	@!%p1 bra 	$L__BB0_2;
	ld.global.v2.f32 	{%r2, _}, [%rd1+-8];
	{
	.reg .b32 temp_param_reg;
	.param .b64 param0;
	st.param.b64 	[param0], %rd2;
	call.uni (retval0), vprintf, (param0, param1);
	}
$L__BB0_2:
	shfl.sync.down.b32 	%r3|%p1, %r1, 16, 31, -1;
	mov.u64 %rd3, tab+4;
	ret;
}
"#;

    #[test]
    fn parses_an_nvcc_shaped_module() {
        let m = parse(SAMPLE).unwrap();
        assert_eq!(m.version, (8, 0));
        assert_eq!(m.sm, 90);
        assert_eq!(m.vars.len(), 3);
        assert_eq!(m.vars[0].size(), 4);
        assert_eq!(m.vars[1].init, Some(Init::List(vec![Init::Float(FloatLit::F32(0x3F800000)), Init::Float(FloatLit::F32(0x40000000))])));
        assert_eq!(m.vars[2].dims, vec![None]);
        assert_eq!(m.funcs.len(), 2);
        assert!(m.funcs[0].body.is_none());
        assert_eq!(m.funcs[0].rets.len(), 1);
        let k = &m.funcs[1];
        assert!(k.entry);
        assert_eq!(k.params[0].ptr.as_deref(), Some("ptr.global.align4"));
        assert_eq!(k.params[1].size(), 16);
        assert_eq!(k.perf.maxntid, Some([256, 1, 1]));
        let body = k.body.as_ref().unwrap();
        let instrs: Vec<&Instr> = body.iter().filter_map(|s| if let Stmt::Instr(i) = s { Some(i) } else { None }).collect();
        assert_eq!(instrs[1].args[0], Operand::Pair(Box::new(Operand::Name("%p1".into())), Box::new(Operand::Name("%p2".into()))));
        assert_eq!(instrs[1].args[2], Operand::Int((-4i64) as u64));
        assert_eq!(instrs[2].guard, Some((true, "%p1".into())));
        assert_eq!(instrs[3].mods, vec![".global", ".v2", ".f32"]);
        assert_eq!(instrs[3].args[1], Operand::Addr { base: Some("%rd1".into()), offset: -8 });
        assert_eq!(instrs[3].args[0], Operand::Vector(vec![Operand::Name("%r2".into()), Operand::Sink]));
        assert_eq!(instrs[5].args[1], Operand::SymOff("tab".into(), 4));
        assert!(body.iter().any(|s| matches!(s, Stmt::Block(b) if b.len() == 4)));
        assert!(body.iter().any(|s| matches!(s, Stmt::Loc { file: 1, line: 10 })));
    }

    #[test]
    fn literals() {
        assert_eq!(int_lit("0x1F"), Some(31));
        assert_eq!(int_lit("017"), Some(15));
        assert_eq!(int_lit("0b101"), Some(5));
        assert_eq!(int_lit("42U"), Some(42));
        assert_eq!(float_lit("0f3F800000"), Some(FloatLit::F32(0x3F800000)));
        assert_eq!(float_lit("0d3FF0000000000000"), Some(FloatLit::F64(0x3FF0000000000000)));
        assert_eq!(float_lit("1.5e-3"), Some(FloatLit::Dec(1.5e-3)));
        assert_eq!(float_lit("0f3F8"), None);
    }

    #[test]
    fn a_sampler_declaration_is_refused_in_either_texturing_mode_as_the_h200_refuses_it() {
        // The H200 refuses `.global .samplerref s;` under the default unified mode (218).
        let body = ".global .samplerref s;\n.visible .entry k()\n{\n ret;\n}\n";
        let e = parse(&format!(".version 7.8\n.target sm_90\n{body}")).unwrap_err();
        assert!(e.to_string().contains("texmode_unified") && e.to_string().contains("line 3"), "{e}");
        // Independent mode: the H200 fails the load with CUDA_ERROR_NOT_FOUND (500).
        match parse(&format!(".version 7.8\n.target sm_90, texmode_independent\n{body}")) {
            Err(Error::DeviceRefuses { code: 500, line: 3, what, .. }) => assert_eq!(what, ".samplerref s"),
            r => panic!("{r:?}"),
        }
        assert!(parse(".version 7.8\n.target sm_90, texmode_independent\n.global .texref t;\n.visible .entry k()\n{\n ret;\n}\n").is_ok());
        assert!(parse(".version 7.8\n.target sm_90\n.global .texref t;\n.visible .entry k()\n{\n ret;\n}\n").is_ok());
    }

    #[test]
    fn errors_name_their_line() {
        let e = parse(".version 7.0\n.target sm_80\n.visible .entry k()\n{\n add.s32 %r1, ;\n}").unwrap_err();
        assert!(e.to_string().contains("line 5"), "{e}");
        assert!(parse("garbage").is_err());
        assert!(parse(".version 7.0\n.entry k() {").is_err());
        let deep = format!(".version 7.0\n.entry k() {}{}", "{".repeat(100), "}".repeat(100));
        assert!(parse(&deep).is_err());
    }
}
