//! Parameter types of kernels, where they can be known: from an Itanium-mangled symbol
//! (`_Z8band_boxPKhiiPh`: C++ kernels), or from a signature file (`--types`: one
//! C declaration per line, `name(const unsigned char *z, int w, ...)`, for `extern "C"`
//! kernels, whose symbols carry no types). A pointer parameter's pointee type is the
//! element type of the buffer it points into; a value parameter's type prints it.

use anyhow::{bail, Result};
use std::collections::HashMap;
use std::path::Path;

/// An element type the report can print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F32,
    F64,
    /// 16-bit float: printed as its bits and value.
    F16,
}

impl Elem {
    pub fn size(self) -> usize {
        match self {
            Elem::U8 | Elem::I8 => 1,
            Elem::U16 | Elem::I16 | Elem::F16 => 2,
            Elem::U32 | Elem::I32 | Elem::F32 => 4,
            Elem::U64 | Elem::I64 | Elem::F64 => 8,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Elem::U8 => "u8",
            Elem::I8 => "i8",
            Elem::U16 => "u16",
            Elem::I16 => "i16",
            Elem::U32 => "u32",
            Elem::I32 => "i32",
            Elem::U64 => "u64",
            Elem::I64 => "i64",
            Elem::F32 => "f32",
            Elem::F64 => "f64",
            Elem::F16 => "f16",
        }
    }
    /// The value of `b` (exactly `size()` bytes, little-endian), as text (floats with
    /// their bits, so that two values printing alike still show apart).
    pub fn format(self, b: &[u8]) -> String {
        let a = |n: usize| -> [u8; 8] {
            let mut x = [0u8; 8];
            x[..n].copy_from_slice(&b[..n]);
            x
        };
        match self {
            Elem::U8 => b[0].to_string(),
            Elem::I8 => (b[0] as i8).to_string(),
            Elem::U16 => u16::from_le_bytes([b[0], b[1]]).to_string(),
            Elem::I16 => i16::from_le_bytes([b[0], b[1]]).to_string(),
            Elem::U32 => u32::from_le_bytes(b[..4].try_into().unwrap()).to_string(),
            Elem::I32 => i32::from_le_bytes(b[..4].try_into().unwrap()).to_string(),
            Elem::U64 => u64::from_le_bytes(a(8)).to_string(),
            Elem::I64 => i64::from_le_bytes(a(8)).to_string(),
            Elem::F32 => {
                let bits = u32::from_le_bytes(b[..4].try_into().unwrap());
                format!("{:e} (0x{bits:08x})", f32::from_bits(bits))
            }
            Elem::F64 => {
                let bits = u64::from_le_bytes(a(8));
                format!("{:e} (0x{bits:016x})", f64::from_bits(bits))
            }
            Elem::F16 => format!("0x{:04x}", u16::from_le_bytes([b[0], b[1]])),
        }
    }
}

/// One parameter's type: a value of an element type, a pointer to one, or unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    Value(Elem),
    Pointer(Option<Elem>),
    Unknown,
}

/// Kernel parameter types by kernel name or symbol.
#[derive(Debug, Default, Clone)]
pub struct Types {
    by_name: HashMap<String, Vec<Param>>,
}

impl Types {
    /// Reads a signature file: one declaration per line (`#` comments, blank lines);
    /// `__global__`, `extern "C"`, `void` before the name are ignored.
    pub fn load(path: &Path) -> Result<Types> {
        Types::parse(&crate::input::read_text(path, "types file")?, path)
    }

    /// Parses a signature file's text read from `path` (errors name it).
    pub fn parse(text: &str, path: &Path) -> Result<Types> {
        let mut t = Types::default();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (Some(open), Some(close)) = (line.find('('), line.rfind(')')) else {
                bail!("{}: line {}: expected `name(type param, ...)`, got {raw:?}", path.display(), i + 1);
            };
            let name = line[..open].split_whitespace().last().unwrap_or("").trim_start_matches('*');
            if name.is_empty() || close < open {
                bail!("{}: line {}: no kernel name before `(`", path.display(), i + 1);
            }
            let inner = line[open + 1..close].trim();
            let params = if inner.is_empty() || inner == "void" { Vec::new() } else { inner.split(',').map(c_param).collect() };
            t.by_name.insert(name.to_string(), params);
        }
        Ok(t)
    }

    /// The parameters of `symbol`: from the file by symbol, else demangled.
    pub fn params(&self, symbol: &str) -> Option<Vec<Param>> {
        self.by_name.get(symbol).cloned().or_else(|| demangle_params(symbol))
    }
}

/// A C parameter declaration (`const unsigned char *z`) as a [`Param`].
fn c_param(decl: &str) -> Param {
    let ptr = decl.contains('*') || decl.contains('[');
    let words: Vec<&str> = decl
        .split(|c: char| c.is_whitespace() || c == '*' || c == '&' || c == '[' || c == ']')
        .filter(|w| !w.is_empty() && !matches!(*w, "const" | "volatile" | "__restrict__" | "restrict" | "__restrict" | "struct"))
        .collect();
    // Drop the parameter's name: the last word when more than one remain and it is not
    // a type word.
    let type_words = ["unsigned", "signed", "char", "short", "int", "long", "float", "double"];
    let mut w = words.clone();
    if w.len() > 1 && !type_words.contains(w.last().unwrap()) && !w.last().unwrap().ends_with("_t") {
        w.pop();
    }
    let elem = elem_of(&w.join(" "));
    match (ptr, elem) {
        (true, e) => Param::Pointer(e),
        (false, Some(e)) => Param::Value(e),
        (false, None) => Param::Unknown,
    }
}

fn elem_of(t: &str) -> Option<Elem> {
    Some(match t {
        "unsigned char" | "uint8_t" | "u8" | "uchar" => Elem::U8,
        "char" | "signed char" | "int8_t" | "i8" => Elem::I8,
        "unsigned short" | "unsigned short int" | "uint16_t" | "u16" | "ushort" => Elem::U16,
        "short" | "short int" | "signed short" | "int16_t" | "i16" => Elem::I16,
        "unsigned" | "unsigned int" | "uint32_t" | "u32" | "uint" => Elem::U32,
        "int" | "signed" | "signed int" | "int32_t" | "i32" => Elem::I32,
        "unsigned long long" | "unsigned long long int" | "unsigned long" | "uint64_t" | "size_t" | "u64" | "ulong" => Elem::U64,
        "long long" | "long long int" | "long" | "int64_t" | "ptrdiff_t" | "i64" => Elem::I64,
        "float" | "f32" => Elem::F32,
        "double" | "f64" => Elem::F64,
        "half" | "__half" | "f16" => Elem::F16,
        _ => return None,
    })
}

/// The index after the group that opens at `s[i]` (one of `opens`) and closes at its
/// matching `E`; identifiers (`<len><id>`) inside are skipped whole, so their letters
/// open nothing. An unclosed group ends at the end of `s`.
fn skip_group(s: &[u8], mut i: usize, opens: &[u8]) -> Option<usize> {
    let mut depth = 0;
    while i < s.len() {
        match s[i] {
            c if opens.contains(&c) => depth += 1,
            b'E' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'0'..=b'9' => {
                let (len, at) = number(s, i)?;
                i = at + len;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    Some(i)
}

/// The parameter types of an Itanium-mangled function symbol (`_Z<name><params>`),
/// for the builtin types, pointers and qualifiers; a parameter of any other type is
/// [`Param::Unknown`] and ends the parse (what follows cannot be read without a full
/// demangler). None for a symbol that is not mangled.
pub fn demangle_params(sym: &str) -> Option<Vec<Param>> {
    let s = sym.strip_prefix("_Z")?.as_bytes();
    let mut i = 0;
    let mut template = false;
    // The name: <len><id>, or N ... E (nested), optionally followed by template args.
    if s.first() == Some(&b'N') {
        i = skip_group(s, i, b"NI")?;
    } else {
        let (len, at) = number(s, i)?;
        i = at + len;
        if s.get(i) == Some(&b'I') {
            template = true;
            i = skip_group(s, i, b"I")?;
        }
    }
    // A template function's encoding carries its return type first.
    if template {
        let (_, at, _) = one_type(s, i)?;
        i = at;
    }
    let mut out = Vec::new();
    while i < s.len() {
        match one_type(s, i) {
            // `v` alone: no parameters.
            Some((_, at, true)) => i = at,
            Some((p, at, false)) => {
                out.push(p);
                i = at;
            }
            None => {
                out.push(Param::Unknown);
                break;
            }
        }
    }
    Some(out)
}

fn number(s: &[u8], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    while j < s.len() && s[j].is_ascii_digit() {
        j += 1;
    }
    let n: usize = std::str::from_utf8(&s[i..j]).ok()?.parse().ok()?;
    Some((n, j))
}

/// One mangled type at `i`: (its parameter form, the index after it, whether it is
/// `void`).
fn one_type(s: &[u8], mut i: usize) -> Option<(Param, usize, bool)> {
    while matches!(s.get(i), Some(b'K' | b'V' | b'r')) {
        i += 1;
    }
    match *s.get(i)? {
        b'P' => match one_type(s, i + 1) {
            Some((Param::Value(e), at, false)) => Some((Param::Pointer(Some(e)), at, false)),
            Some((_, at, _)) => Some((Param::Pointer(None), at, false)),
            // A pointer to a type this reader does not know (T_, a class): the rest of
            // the list cannot be read, but this parameter is a pointer.
            None => Some((Param::Pointer(None), s.len(), false)),
        },
        b'v' => Some((Param::Unknown, i + 1, true)),
        c => {
            let e = match c {
                b'h' => Elem::U8,
                b'c' | b'a' => Elem::I8,
                b't' => Elem::U16,
                b's' => Elem::I16,
                b'j' => Elem::U32,
                b'i' => Elem::I32,
                b'm' | b'y' => Elem::U64,
                b'l' | b'x' => Elem::I64,
                b'f' => Elem::F32,
                b'd' => Elem::F64,
                b'b' => Elem::U8,
                _ => return None,
            };
            Some((Param::Value(e), i + 1, false))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::bisect::types::*;

    #[test]
    fn mangled_symbols_give_their_parameters() {
        assert_eq!(
            demangle_params("_Z8band_boxPKhiiPh").unwrap(),
            vec![Param::Pointer(Some(Elem::U8)), Param::Value(Elem::I32), Param::Value(Elem::I32), Param::Pointer(Some(Elem::U8))]
        );
        assert_eq!(demangle_params("_Z3fooPfS_"), Some(vec![Param::Pointer(Some(Elem::F32)), Param::Unknown]));
        // A template instantiation: return type first, then the parameters.
        assert_eq!(demangle_params("_Z3sumIfEvPKT_Pf").unwrap(), vec![Param::Pointer(None)]);
        assert_eq!(demangle_params("_Z4idlev").unwrap(), vec![]);
        assert!(demangle_params("band_box").is_none());
        assert_eq!(demangle_params("_ZN2ns4killEPy").unwrap(), vec![Param::Pointer(Some(Elem::U64))]);
    }

    #[test]
    fn signature_lines_parse() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("k.sig");
        std::fs::write(&p, "# fixtures\n__global__ void band_box(const unsigned char *z, int w, int h, unsigned char *m0)\nextern \"C\" void topk(const unsigned long long *state, float *fsum, uint32_t n)\n").unwrap();
        let t = Types::load(&p).unwrap();
        assert_eq!(
            t.params("band_box").unwrap(),
            vec![Param::Pointer(Some(Elem::U8)), Param::Value(Elem::I32), Param::Value(Elem::I32), Param::Pointer(Some(Elem::U8))]
        );
        assert_eq!(
            t.params("topk").unwrap(),
            vec![Param::Pointer(Some(Elem::U64)), Param::Pointer(Some(Elem::F32)), Param::Value(Elem::U32)]
        );
        std::fs::write(&p, "no parenthesis here\n").unwrap();
        assert!(Types::load(&p).unwrap_err().to_string().contains("line 1"));
    }

    #[test]
    fn values_print_with_their_bits() {
        assert_eq!(Elem::F32.format(&1.5f32.to_le_bytes()), "1.5e0 (0x3fc00000)");
        assert_eq!(Elem::I16.format(&(-2i16).to_le_bytes()), "-2");
    }
}
