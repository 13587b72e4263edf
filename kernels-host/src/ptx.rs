//! The kernel entries of a PTX module (`nvcc -ptx` output): each `.entry`'s name and the
//! size of each of its parameters, in order. That is all the cross-check needs
//! ([`crate::nvcc_check`]); everything else of the module is skipped.
//!
//! A parameter is `.param [.align N] [.ptr [space] [.align N]] [.vN] .TYPE name[[N]...]`;
//! its size is the type's size times the vector width times the array dimensions (a
//! struct by value is `.align A .b8 name[SIZE]`).

/// One `.entry` with a body (declarations without one are skipped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxEntry {
    pub name: String,
    pub param_sizes: Vec<u64>,
}

/// Tokens of PTX text: comments dropped, punctuation `( ) [ ] { } , ;` separate.
fn tokens(src: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = src.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
        } else if c == b'"' {
            let s = i;
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(&src[s..i.min(b.len())]);
        } else if b"()[]{},;".contains(&c) {
            out.push(&src[i..i + 1]);
            i += 1;
        } else {
            let s = i;
            while i < b.len() && !b[i].is_ascii_whitespace() && !b"()[]{},;\"".contains(&b[i]) {
                if b[i] == b'/' && matches!(b.get(i + 1), Some(b'/') | Some(b'*')) {
                    break;
                }
                i += 1;
            }
            out.push(&src[s..i]);
        }
    }
    out
}

/// Size of a fundamental PTX type.
fn type_size(t: &str) -> Option<u64> {
    Some(match t {
        ".b8" | ".u8" | ".s8" | ".pred" => 1,
        ".b16" | ".u16" | ".s16" | ".f16" | ".bf16" | ".e4m3x2" | ".e5m2x2" => 2,
        ".b32" | ".u32" | ".s32" | ".f32" | ".f16x2" | ".bf16x2" | ".tf32" => 4,
        ".b64" | ".u64" | ".s64" | ".f64" => 8,
        ".b128" => 16,
        _ => return None,
    })
}

fn parse_int(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// One parameter: the tokens between `(`/`,` and `,`/`)`.
fn param_size(t: &[&str], entry: &str) -> Result<u64, String> {
    let mut elem = None;
    let mut vec = 1u64;
    let mut k = 0;
    let mut pointee = false;
    while k < t.len() && t[k].starts_with('.') {
        match t[k] {
            ".param" | ".global" | ".const" | ".shared" | ".local" | ".reg" => {}
            ".ptr" => pointee = true,
            ".align" => k += 1, // its value
            ".v2" => vec = 2,
            ".v4" => vec = 4,
            ".v8" => vec = 8,
            ty => match type_size(ty) {
                Some(s) if !pointee || elem.is_none() => elem = Some(s),
                Some(_) => {}
                None if ty.starts_with(".attribute") => {}
                None => return Err(format!(".entry {entry}: unknown parameter type `{ty}`")),
            },
        }
        k += 1;
    }
    let elem = elem.ok_or_else(|| format!(".entry {entry}: a parameter without a type"))?;
    if k >= t.len() {
        return Err(format!(".entry {entry}: a parameter without a name"));
    }
    k += 1; // the name
    let mut size = elem * vec;
    while k < t.len() && t[k] == "[" {
        let n = t.get(k + 1).and_then(|s| parse_int(s)).ok_or_else(|| format!(".entry {entry}: bad parameter array size"))?;
        if t.get(k + 2) != Some(&"]") {
            return Err(format!(".entry {entry}: bad parameter array"));
        }
        size *= n;
        k += 3;
    }
    Ok(size)
}

/// The `.entry` definitions of `src`, in the order they appear.
pub fn entries(src: &str) -> Result<Vec<PtxEntry>, String> {
    let t = tokens(src);
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len() {
        if t[i] != ".entry" {
            i += 1;
            continue;
        }
        let name = t.get(i + 1).ok_or("`.entry` without a name")?.to_string();
        let mut k = i + 2;
        let mut param_sizes = Vec::new();
        if t.get(k) == Some(&"(") {
            k += 1;
            let mut cur: Vec<&str> = Vec::new();
            loop {
                let tok = *t.get(k).ok_or_else(|| format!(".entry {name}: unterminated parameter list"))?;
                k += 1;
                match tok {
                    "," | ")" => {
                        if !cur.is_empty() {
                            param_sizes.push(param_size(&cur, &name)?);
                            cur.clear();
                        }
                        if tok == ")" {
                            break;
                        }
                    }
                    _ => cur.push(tok),
                }
            }
        }
        // Performance directives (.maxntid ...) up to the body `{`, or `;` for a
        // declaration without one.
        while k < t.len() && t[k] != "{" && t[k] != ";" {
            k += 1;
        }
        if t.get(k) == Some(&"{") {
            out.push(PtxEntry { name, param_sizes });
            let mut depth = 0;
            while k < t.len() {
                match t[k] {
                    "{" => depth += 1,
                    "}" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                k += 1;
            }
        }
        i = k + 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_with_scalar_vector_struct_and_array_params() {
        let ptx = r#"
//
// Generated by NVIDIA NVVM Compiler
.version 9.0
.target sm_90
.address_size 64
.global .align 4 .u32 g = 5; // .entry not_an_entry(
.extern .func (.param .b32 func_retval0) vprintf ( .param .b64 vprintf_param_0 ) ;
.visible .entry _Z4fillIfLi128EEvPT_S0_i(
	.param .u64 .ptr .global .align 4 _Z4fillIfLi128EEvPT_S0_i_param_0,
	.param .f32 _Z4fillIfLi128EEvPT_S0_i_param_1,
	.param .u32 _Z4fillIfLi128EEvPT_S0_i_param_2
)
.maxntid 128, 1, 1
.minnctapersm 2
{
	.reg .pred 	%p<2>;
	{ nested }
	ret;
}
.entry no_params()
{
	ret;
}
.extern .entry declared_only(.param .u64 x);
.visible .entry s(
	.param .align 16 .b8 s_param_0[16], .param .align 2 .b8 s_param_1[2],
	.param .v2 .u32 s_param_2, .param .u8 s_param_3, .param .align 4 .b8 s_param_4[3][4]
) { ret; }
"#;
        let e = entries(ptx).unwrap();
        assert_eq!(
            e,
            vec![
                PtxEntry { name: "_Z4fillIfLi128EEvPT_S0_i".into(), param_sizes: vec![8, 4, 4] },
                PtxEntry { name: "no_params".into(), param_sizes: vec![] },
                PtxEntry { name: "s".into(), param_sizes: vec![16, 2, 8, 1, 12] },
            ]
        );
    }

    #[test]
    fn malformed_parameters_are_errors_naming_the_entry() {
        let e = entries(".entry k(.param .q32 x) {}").unwrap_err();
        assert!(e.contains("k") && e.contains(".q32"), "{e}");
        assert!(entries(".entry k(.param .u32 x").unwrap_err().contains("unterminated"));
    }
}
