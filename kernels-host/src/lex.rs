//! A tokenizer for preprocessed C++ (g++ -E output): enough to find declarations and
//! track scopes. It knows identifiers, numbers, string and character literals (raw
//! strings included), punctuation, and the linemarkers (`# N "file" flags`) that map
//! every token back to the file and line it came from and say whether that file is a
//! system header (the shim headers mark themselves as such).

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Ident,
    Number,
    Str,
    Char,
    Punct,
}

/// One token of the preprocessed text.
#[derive(Clone, Debug)]
pub struct Token {
    pub kind: Kind,
    /// Byte range in the preprocessed text.
    pub start: usize,
    pub end: usize,
    /// Index into `Lexed::files`.
    pub file: usize,
    /// Line in that file.
    pub line: u32,
    /// The token comes from a system header (or the shim): not user code.
    pub system: bool,
}

/// The tokens of a preprocessed file and the files its linemarkers named.
pub struct Lexed<'a> {
    pub text: &'a str,
    pub tokens: Vec<Token>,
    pub files: Vec<String>,
}

impl<'a> Lexed<'a> {
    pub fn text_of(&self, t: &Token) -> &'a str {
        &self.text[t.start..t.end]
    }
    pub fn is(&self, i: usize, s: &str) -> bool {
        i < self.tokens.len() && self.text_of(&self.tokens[i]) == s
    }
    pub fn location(&self, t: &Token) -> String {
        format!("{}:{}", self.files[t.file], t.line)
    }
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80
}
fn is_ident_char(c: u8) -> bool {
    is_ident_start(c) || c.is_ascii_digit()
}

/// Three-character and two-character punctuators that matter for the scanner.
const PUNCT3: [&str; 3] = ["<<=", ">>=", "..."];
const PUNCT2: [&str; 19] =
    ["::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|="];

/// Parses a linemarker line (`# 12 "file.cu" 1 3`): line number, file, flags.
fn parse_linemarker(line: &str) -> Option<(u32, String, Vec<u32>)> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("line").map(|r| r.trim_start()).unwrap_or(rest);
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    if digits.is_empty() {
        return None;
    }
    let n: u32 = digits.parse().ok()?;
    let rest = rest[digits.len()..].trim_start();
    let rest = rest.strip_prefix('"')?;
    let mut name = String::new();
    let mut chars = rest.chars();
    loop {
        match chars.next()? {
            '"' => break,
            '\\' => name.push(chars.next()?),
            c => name.push(c),
        }
    }
    let flags = chars.as_str().split_whitespace().filter_map(|f| f.parse().ok()).collect();
    Some((n, name, flags))
}

/// Tokenizes preprocessed text. Errors name the file and line of an unterminated literal.
pub fn lex(text: &str) -> Result<Lexed<'_>, String> {
    let b = text.as_bytes();
    let mut tokens = Vec::new();
    let mut files: Vec<String> = vec!["<input>".to_string()];
    let mut file = 0usize;
    let mut line: u32 = 1;
    let mut system = false;
    let mut at_line_start = true;
    let mut i = 0usize;
    let file_index = |files: &mut Vec<String>, name: &str| -> usize {
        if let Some(p) = files.iter().position(|f| f == name) {
            p
        } else {
            files.push(name.to_string());
            files.len() - 1
        }
    };
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            at_line_start = true;
            i += 1;
            continue;
        }
        if c == b' ' || c == b'\t' || c == b'\r' || c == 0x0c {
            i += 1;
            continue;
        }
        if c == b'#' && at_line_start {
            // A directive line (linemarker or #pragma): not code.
            let mut j = i;
            while j < b.len() && b[j] != b'\n' {
                if b[j] == b'\\' && j + 1 < b.len() && b[j + 1] == b'\n' {
                    j += 1;
                    line += 1;
                }
                j += 1;
            }
            if let Some((n, name, flags)) = parse_linemarker(&text[i..j]) {
                file = file_index(&mut files, &name);
                system = flags.contains(&3);
                line = n.saturating_sub(1); // the newline that ends this line brings it to n
            }
            i = j;
            continue;
        }
        at_line_start = false;
        if c == b'/' && i + 1 < b.len() && b[i + 1] == b'/' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && i + 1 < b.len() && b[i + 1] == b'*' {
            let start_line = line;
            i += 2;
            loop {
                if i + 1 >= b.len() {
                    return Err(format!("{}:{}: unterminated comment", files[file], start_line));
                }
                if b[i] == b'\n' {
                    line += 1;
                }
                if b[i] == b'*' && b[i + 1] == b'/' {
                    i += 2;
                    break;
                }
                i += 1;
            }
            continue;
        }
        let start = i;
        let tok_line = line;
        let kind;
        if is_ident_start(c) {
            while i < b.len() && is_ident_char(b[i]) {
                i += 1;
            }
            let word = &text[start..i];
            // Encoding prefixes and raw strings: u8"..", L'..', R"d(..)d".
            let is_prefix = matches!(word, "u8" | "u" | "U" | "L" | "R" | "u8R" | "uR" | "UR" | "LR");
            if is_prefix && i < b.len() && (b[i] == b'"' || b[i] == b'\'') {
                if word.ends_with('R') && b[i] == b'"' {
                    let open = i + 1;
                    let paren = text[open..].find('(').ok_or_else(|| format!("{}:{}: malformed raw string", files[file], tok_line))?;
                    let delim = &text[open..open + paren];
                    let close = format!("){}\"", delim);
                    let body = open + paren + 1;
                    let end = text[body..].find(&close).ok_or_else(|| format!("{}:{}: unterminated raw string", files[file], tok_line))?;
                    line += text[body..body + end].matches('\n').count() as u32;
                    i = body + end + close.len();
                    kind = Kind::Str;
                } else {
                    let q = b[i];
                    i = skip_quoted(b, i, q).ok_or_else(|| format!("{}:{}: unterminated literal", files[file], tok_line))?;
                    kind = if q == b'"' { Kind::Str } else { Kind::Char };
                }
            } else {
                kind = Kind::Ident;
            }
        } else if c.is_ascii_digit() || (c == b'.' && i + 1 < b.len() && b[i + 1].is_ascii_digit()) {
            // pp-number, with C++14 digit separators.
            i += 1;
            while i < b.len() {
                let d = b[i];
                let exponent_sign = (d == b'+' || d == b'-') && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P');
                let digit_separator = d == b'\'' && i + 1 < b.len() && is_ident_char(b[i + 1]);
                if exponent_sign || is_ident_char(d) || d == b'.' || digit_separator {
                    i += 1;
                } else {
                    break;
                }
            }
            kind = Kind::Number;
        } else if c == b'"' || c == b'\'' {
            i = skip_quoted(b, i, c).ok_or_else(|| format!("{}:{}: unterminated literal", files[file], tok_line))?;
            kind = if c == b'"' { Kind::Str } else { Kind::Char };
        } else {
            let rest = &text[i..];
            let len = if PUNCT3.iter().any(|p| rest.starts_with(p)) {
                3
            } else if PUNCT2.iter().any(|p| rest.starts_with(p)) {
                2
            } else {
                rest.chars().next().map(|c| c.len_utf8()).unwrap_or(1)
            };
            i += len;
            kind = Kind::Punct;
        }
        tokens.push(Token { kind, start, end: i, file, line: tok_line, system });
    }
    Ok(Lexed { text, tokens, files })
}

/// Skips a quoted literal starting at `i` (the quote); returns the index after it.
fn skip_quoted(b: &[u8], mut i: usize, q: u8) -> Option<usize> {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'\n' => return None,
            x if x == q => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linemarkers_map_tokens_to_their_files() {
        let src = "# 1 \"a.cu\"\nint x;\n# 7 \"b.h\" 1 3\nfloat y;\n# 3 \"a.cu\" 2\nchar z = 'c';\n";
        let l = lex(src).unwrap();
        let t: Vec<_> = l.tokens.iter().map(|t| (l.text_of(t), l.location(t), t.system)).collect();
        assert_eq!(t[0], ("int", "a.cu:1".to_string(), false));
        assert_eq!(t[3], ("float", "b.h:7".to_string(), true));
        assert_eq!(t[6], ("char", "a.cu:3".to_string(), false));
        assert_eq!(l.text_of(&l.tokens[9]), "'c'");
    }

    #[test]
    fn literals_and_separators_are_single_tokens() {
        let l = lex("x = 1'000'000 + R\"d(a \" { )d\" + \"}\" ; a::b->c").unwrap();
        let t: Vec<_> = l.tokens.iter().map(|t| l.text_of(t)).collect();
        assert_eq!(t, vec!["x", "=", "1'000'000", "+", "R\"d(a \" { )d\"", "+", "\"}\"", ";", "a", "::", "b", "->", "c"]);
    }

    #[test]
    fn unterminated_string_is_an_error_with_location() {
        let e = lex("# 4 \"k.cu\"\nint a = \"oops\n").err().unwrap();
        assert_eq!(e, "k.cu:4: unterminated literal");
    }
}
