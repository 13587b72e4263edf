//! PTX text into tokens, with line numbers (every error and every call site names its
//! PTX line).
//!
//! A word is a run of `[A-Za-z0-9_$%.]`: opcodes with their modifiers (`ld.global.v4.u32`),
//! directives (`.reg`; one dot each: `.reg.b16` is two words), qualifiers with `::`
//! (`.shared::cta`), registers (`%r12`, `%tid.x`), labels, numbers (`0f3F800000`,
//! `0x1F`, `1.5e-3`: an exponent's sign is taken into the word). Strings are one token;
//! every other character is punctuation. Comments are dropped.

use crate::Error;

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A run of word characters.
    Word,
    /// A quoted string (the token keeps its quotes).
    Str,
    /// One punctuation character.
    Punct,
}

/// One token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tok<'a> {
    /// The token's text.
    pub s: &'a str,
    /// Its kind.
    pub kind: Kind,
    /// 1-based line.
    pub line: u32,
}

fn word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'%' | b'.')
}

/// Splits `src` into tokens.
pub fn tokens(src: &str) -> Result<Vec<Tok<'_>>, Error> {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(src.len() / 4);
    let (mut i, mut line) = (0usize, 1u32);
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b' ' | b'\t' | b'\r' | b'\x0c' | b'\x0b' | 0 => i += 1,
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
                        return Err(Error::parse(start, "unterminated /* comment"));
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
                        return Err(Error::parse(line, "unterminated string"));
                    }
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if i >= b.len() {
                    return Err(Error::parse(line, "unterminated string"));
                }
                i += 1;
                out.push(Tok { s: &src[start..i], kind: Kind::Str, line });
            }
            c if word_char(c) => {
                let start = i;
                let numeric = c.is_ascii_digit();
                // A directive is one dot and a name: `.reg.b16` is `.reg` `.b16` (ptxas
                // reads it so; cuda_fp16.hpp's inline asm writes it).
                let directive = c == b'.';
                if directive {
                    i += 1;
                }
                while i < b.len() {
                    if directive && b[i] == b'.' {
                        break;
                    }
                    // A qualifier's `::` belongs to the word (`.shared::cta`, `.L2::128B`);
                    // a label's single `:` does not.
                    if b[i] == b':' && b.get(i + 1) == Some(&b':') && b.get(i + 2).is_some_and(|&c| word_char(c)) && i > start {
                        i += 2;
                        continue;
                    }
                    // A decimal exponent's sign belongs to the number (not in hex forms).
                    let exponent_sign = numeric
                        && matches!(b[i], b'+' | b'-')
                        && matches!(b[i - 1], b'e' | b'E')
                        && !matches!(src.get(start..start + 2), Some("0x" | "0X" | "0f" | "0F" | "0d" | "0D"));
                    if word_char(b[i]) || exponent_sign {
                        i += 1;
                    } else {
                        break;
                    }
                }
                out.push(Tok { s: &src[start..i], kind: Kind::Word, line });
            }
            _ => {
                // One punctuation character (any UTF-8 sequence counts as one).
                let len = src[i..].chars().next().map(|ch| ch.len_utf8()).unwrap_or(1);
                out.push(Tok { s: &src[i..i + len], kind: Kind::Punct, line });
                i += len;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<&str> {
        tokens(s).unwrap().iter().map(|t| t.s).collect()
    }

    #[test]
    fn opcodes_registers_numbers_and_comments() {
        assert_eq!(
            words("ld.global.v2.f32 {%f1, %f2}, [%rd4+-8]; // x\n mov.f32 %f3, 0f3F800000; /* y */ add.f64 %fd1, %fd2, 1.5e-3;"),
            vec![
                "ld.global.v2.f32",
                "{",
                "%f1",
                ",",
                "%f2",
                "}",
                ",",
                "[",
                "%rd4",
                "+",
                "-",
                "8",
                "]",
                ";",
                "mov.f32",
                "%f3",
                ",",
                "0f3F800000",
                ";",
                "add.f64",
                "%fd1",
                ",",
                "%fd2",
                ",",
                "1.5e-3",
                ";"
            ]
        );
        let t = tokens("a\n/* two\nlines */ b \"s\\\"t\"").unwrap();
        assert_eq!((t[1].s, t[1].line), ("b", 3));
        assert_eq!(t[2].kind, Kind::Str);
        assert!(tokens("/* open").is_err());
        assert!(tokens("\"open").is_err());
    }

    #[test]
    fn hex_floats_keep_e_digits_and_minus_is_punctuation() {
        assert_eq!(words("0f3E000000-1"), vec!["0f3E000000", "-", "1"]);
        assert_eq!(words("0x1e-2"), vec!["0x1e", "-", "2"]);
        assert_eq!(words("1E+5"), vec!["1E+5"]);
    }

    #[test]
    fn a_directive_ends_at_the_next_dot() {
        assert_eq!(words(".reg.b16 i,r;"), vec![".reg", ".b16", "i", ",", "r", ";"]);
        assert_eq!(words(".reg .pred %p<3>;"), vec![".reg", ".pred", "%p", "<", "3", ">", ";"]);
        assert_eq!(words("ld.global.v4.u32 %tid.x"), vec!["ld.global.v4.u32", "%tid.x"]);
        assert_eq!(words("$L1: mbarrier.arrive.shared::cta.b64 %rd1"), vec!["$L1", ":", "mbarrier.arrive.shared::cta.b64", "%rd1"]);
        assert_eq!(words(".shared::cluster"), vec![".shared::cluster"]);
    }
}
