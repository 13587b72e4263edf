//! Source rewriting of a preprocessed .cu file into host C++.
//!
//! The rewriter works on `g++ -E` output (so kernels and tables that come from the
//! user's own headers or macros are seen too), in user code only (tokens from system
//! headers and the shim are left alone). It
//! - replaces the CUDA keywords, which the shim deliberately leaves undefined;
//! - turns `__shared__` into `static thread_local` (a block's CUDA threads all run on
//!   one OS thread, so per-OS-thread storage is per-block storage; blocks on other
//!   workers get their own) and `extern __shared__ T name[];` into a pointer to the
//!   block's dynamic shared memory (`ctx->dyn_smem`): a local `T (*const name)` at block
//!   scope, a macro at namespace scope;
//! - rejects inline PTX (`asm`) naming file and line;
//! - routes `printf`, `clock()` and the expansion of `assert` to the runtime table;
//! - finds `__global__` definitions and explicit instantiations and namespace-scope
//!   `__device__`/`__constant__` variables, gives them external linkage (dropping
//!   `static`, adding `extern` to const tables) so their exported names are the ones
//!   nvcc gives, and emits next to each one a small registration function, in the
//!   same scope so that its names resolve as the user wrote them.
//!
//! Edits never add or remove lines, except the namespace-scope macro, which is
//! followed by a linemarker; so g++'s messages point at the user's file and line.

use crate::lex::{lex, Kind, Lexed};
use std::collections::HashMap;

/// A kernel entry found in the source.
#[derive(Clone, Debug)]
pub struct KernelRec {
    /// Qualified name as written (template-id for instantiations).
    #[cfg_attr(not(test), allow(dead_code))] // read by the unit tests
    pub name: String,
    /// Qualified path of its generated registration function.
    pub reg_fn: String,
    pub location: String,
    pub anonymous_namespace: bool,
}

/// A namespace-scope `__device__` / `__constant__` variable.
#[derive(Clone, Debug)]
pub struct GlobalRec {
    #[cfg_attr(not(test), allow(dead_code))] // read by the unit tests
    pub name: String,
    pub reg_fn: String,
    #[cfg_attr(not(test), allow(dead_code))] // read by the unit tests
    pub constant: bool,
    pub location: String,
}

/// The rewritten translation unit (without the module descriptor tail).
pub struct Rewritten {
    pub text: String,
    pub kernels: Vec<KernelRec>,
    pub globals: Vec<GlobalRec>,
    pub warnings: Vec<String>,
}

#[derive(Clone, Debug)]
enum Scope {
    Namespace(Option<String>),
    Linkage,
    Other { function_body: bool },
}

struct Edit {
    start: usize,
    end: usize,
    text: String,
}

struct TemplateDef {
    params: Vec<String>,
    /// Each parameter's default argument as text (empty: none).
    defaults: Vec<String>,
    bounds: Vec<Vec<usize>>,
}

struct PendingKernel {
    qname: String,
    name_as_written: String,
    params: String,
    insert_at: usize,
    bounds: [String; 2],
    ns_path: Vec<String>,
    location: String,
    anonymous: bool,
}

struct Rewriter<'a> {
    lx: Lexed<'a>,
    edits: Vec<Edit>,
    errors: Vec<String>,
    warnings: Vec<String>,
    scopes: Vec<Scope>,
    templates: HashMap<String, TemplateDef>,
    kernels: Vec<PendingKernel>,
    globals: Vec<GlobalRec>,
    global_inserts: Vec<(usize, String)>,
    /// Parentheses open at the current token.
    parens: i32,
    /// User declarations that shadow a built-in variable's name (a parameter or member
    /// named blockDim, ...), for as long as their scope lasts.
    shadows: Vec<Shadow>,
}

/// A declaration of a built-in variable's name by the user.
struct Shadow {
    name: String,
    /// `scopes.len()` where it was declared.
    depth: usize,
    /// A parameter (declared inside parentheses): in scope in the body that follows.
    param: bool,
    /// The parameter's body has opened.
    armed: bool,
}

/// How a built-in variable's name is used at one place.
enum BuiltinUse {
    /// Read: the built-in.
    Read,
    /// A member access, a qualified name, or a name the user's declaration shadows.
    Other,
    /// The user declares something of that name.
    Declaration,
}

/// Groups after which a parenthesis is not a declarator's parameter list.
const ATTRIBUTE_LIKE: [&str; 7] = ["__attribute__", "__launch_bounds__", "alignas", "__declspec", "decltype", "noexcept", "throw"];

fn is_keyword_token(s: &str) -> bool {
    matches!(
        s,
        "const"
            | "volatile"
            | "static"
            | "extern"
            | "inline"
            | "constexpr"
            | "unsigned"
            | "signed"
            | "int"
            | "long"
            | "short"
            | "char"
            | "float"
            | "double"
            | "bool"
            | "void"
            | "__restrict__"
            | "__inline__"
            | "thread_local"
            | "struct"
            | "class"
            | "typename"
            | "auto"
    )
}

impl<'a> Rewriter<'a> {
    fn s(&self, i: usize) -> &'a str {
        self.lx.text_of(&self.lx.tokens[i])
    }
    fn n(&self) -> usize {
        self.lx.tokens.len()
    }
    fn at_namespace_level(&self) -> bool {
        self.scopes.iter().all(|s| !matches!(s, Scope::Other { .. }))
    }
    fn in_linkage(&self) -> bool {
        self.scopes.iter().any(|s| matches!(s, Scope::Linkage))
    }
    fn ns_path(&self) -> (Vec<String>, bool) {
        let mut path = Vec::new();
        let mut anon = false;
        for s in &self.scopes {
            if let Scope::Namespace(n) = s {
                match n {
                    Some(n) => path.push(n.clone()),
                    None => anon = true,
                }
            }
        }
        (path, anon)
    }
    fn replace(&mut self, i: usize, text: &str) {
        let t = &self.lx.tokens[i];
        self.edits.push(Edit { start: t.start, end: t.end, text: text.to_string() });
    }
    fn loc(&self, i: usize) -> String {
        self.lx.location(&self.lx.tokens[i])
    }
    /// Index of the bracket matching the opening one at `i`. For `<`, brackets inside
    /// parentheses are not counted (`N = (3 > 2)`), and `>>` closes two levels.
    fn matching(&self, i: usize) -> Option<usize> {
        let (open, close) = match self.s(i) {
            "(" => ("(", ")"),
            "[" => ("[", "]"),
            "{" => ("{", "}"),
            "<" => ("<", ">"),
            _ => return None,
        };
        let mut depth = 0i32;
        let mut parens = 0i32;
        for j in i..self.n() {
            let s = self.s(j);
            if open == "<" {
                match s {
                    "(" | "[" | "{" => parens += 1,
                    ")" | "]" | "}" => {
                        parens -= 1;
                        if parens < 0 {
                            return None;
                        }
                    }
                    ";" => return None,
                    _ if parens > 0 => {}
                    "<" => depth += 1,
                    ">" => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j);
                        }
                    }
                    ">>" => {
                        depth -= 2;
                        if depth <= 0 {
                            return Some(j);
                        }
                    }
                    _ => {}
                }
                continue;
            }
            if s == open {
                depth += 1;
            } else if s == close {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
        }
        None
    }
    /// Index after an attribute-like group starting at `k` (`__attribute__((..))`,
    /// `[[..]]`, `alignas(..)`, `__launch_bounds__(..)`, `decltype(..)`, ...), if any.
    fn skip_attribute(&self, k: usize, end: usize) -> Option<usize> {
        let s = self.s(k);
        if ATTRIBUTE_LIKE.contains(&s) && self.is(k + 1, "(") {
            return self.matching(k + 1).map(|c| c + 1).filter(|&c| c <= end);
        }
        if s == "[" && self.is(k + 1, "[") {
            return self.matching(k).map(|c| c + 1).filter(|&c| c <= end);
        }
        None
    }
    /// Index after `template <...>` headers (and a requires-clause following them)
    /// starting at `k`; `k` itself if there is none.
    fn skip_template_headers(&self, mut k: usize, end: usize) -> usize {
        while k < end && self.s(k) == "template" && self.is(k + 1, "<") {
            match self.matching(k + 1) {
                Some(c) if c < end => k = c + 1,
                _ => return end,
            }
            if self.is(k, "requires") {
                k = self.skip_requires(k, end);
            }
        }
        k
    }
    /// Index after a requires-clause starting at `k` (the `requires` token): primaries
    /// (parenthesized expressions, possibly qualified template-ids, `true`/`false`)
    /// joined by `&&` and `||`.
    fn skip_requires(&self, k: usize, end: usize) -> usize {
        let mut k = k + 1;
        loop {
            if k >= end {
                return end;
            }
            if self.s(k) == "(" {
                k = self.matching(k).map(|c| c + 1).unwrap_or(end);
            } else {
                if self.s(k) == "::" {
                    k += 1;
                }
                while k < end && self.lx.tokens[k].kind == Kind::Ident {
                    k += 1;
                    if self.is(k, "<") {
                        k = self.matching(k).map(|c| c + 1).unwrap_or(end);
                    }
                    if self.is(k, "::") {
                        k += 1;
                    } else {
                        break;
                    }
                }
            }
            if k < end && matches!(self.s(k), "&&" | "||") {
                k += 1;
            } else {
                return k.min(end);
            }
        }
    }
    /// Index after an operator function's name starting at `k` (the `operator` token):
    /// `operator()`, `operator[]`, `operator new[]`, `operator<`, `operator int*`, ...
    fn skip_operator_name(&self, k: usize, end: usize) -> usize {
        let mut j = k + 1;
        if self.is(j, "(") && self.is(j + 1, ")") {
            return j + 2;
        }
        while j < end && self.s(j) != "(" {
            j += 1;
        }
        j
    }
    /// Whether the `{` at `e` opens a function body, for a namespace-scope declaration
    /// starting at `a`. Not a function body: a class, union or enum definition; an
    /// initializer (an `=` outside brackets, template headers and operator names); a
    /// declaration without a parameter list (`int x{1}`); a constructor's member
    /// initializer (`: m{1}`); a requires-expression.
    fn is_function_head(&self, a: usize, e: usize) -> bool {
        let prev = if e > a { self.s(e - 1) } else { "" };
        if prev == "requires" {
            return false;
        }
        if prev == ")" {
            if let Some(open) = (a..e).rev().find(|&o| self.s(o) == "(" && self.matching(o) == Some(e - 1)) {
                if open > a && self.s(open - 1) == "requires" {
                    return false;
                }
            }
        }
        let mut k = self.skip_template_headers(a, e);
        // Decl-specifiers before a class-key: `typedef struct {`, `__device__ struct S {`.
        while k < e
            && matches!(
                self.s(k),
                "typedef"
                    | "static"
                    | "extern"
                    | "inline"
                    | "constexpr"
                    | "const"
                    | "volatile"
                    | "friend"
                    | "__device__"
                    | "__host__"
                    | "__constant__"
                    | "__shared__"
                    | "__managed__"
                    | "__global__"
            )
        {
            k += 1;
        }
        while let Some(n) = self.skip_attribute(k, e) {
            k = n;
        }
        if matches!(self.s(k), "struct" | "class" | "union" | "enum") && k < e {
            let mut j = k + 1;
            if self.s(k) == "enum" && matches!(self.s(j), "class" | "struct") {
                j += 1;
            }
            while let Some(n) = self.skip_attribute(j, e) {
                j = n;
            }
            while j < e && (self.lx.tokens[j].kind == Kind::Ident || self.s(j) == "::") && self.s(j) != "final" {
                j += 1;
                if self.is(j, "<") {
                    j = self.matching(j).map(|c| c + 1).unwrap_or(e);
                }
            }
            if self.is(j, "final") {
                j += 1;
            }
            if j == e {
                return false; // `struct S {`
            }
            if self.s(j) == ":" && !(j + 1..e).any(|m| self.s(m) == "{") {
                return false; // `struct S : Base<T> {`
            }
        }
        // The rest: an `=` at depth 0 makes it an initializer; a parameter list makes
        // it a function.
        let mut depth = 0i32;
        let mut params_close = None;
        let mut j = k;
        while j < e {
            let s = self.s(j);
            if depth == 0 {
                if let Some(n) = self.skip_attribute(j, e) {
                    j = n;
                    continue;
                }
                if matches!(s, "sizeof" | "alignof" | "__alignof__" | "typeid" | "static_assert") && self.is(j + 1, "(") {
                    j = self.matching(j + 1).map(|c| c + 1).unwrap_or(e);
                    continue;
                }
                if s == "operator" {
                    j = self.skip_operator_name(j, e);
                    continue;
                }
                if s == "requires" {
                    j = self.skip_requires(j, e);
                    continue;
                }
                if s == "=" {
                    return false;
                }
                if s == "(" && params_close.is_none() && j > k {
                    let p = self.s(j - 1);
                    // `int (*fp)(int)` groups a declarator: not the parameter list.
                    let grouping = is_keyword_token(p) && p != "auto";
                    if !grouping && (self.lx.tokens[j - 1].kind == Kind::Ident || p == ">" || p == ")") {
                        params_close = self.matching(j);
                    }
                }
                if s == ":" {
                    if let Some(c) = params_close {
                        if j > c {
                            // A constructor's member initializers: the body's brace
                            // follows a `)` or `}`, a member's brace init a name.
                            return matches!(prev, ")" | "}");
                        }
                    }
                }
            }
            match s {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth -= 1,
                _ => {}
            }
            j += 1;
        }
        params_close.is_some()
    }
    /// The tokens of [a, b) split at commas outside brackets (template argument lists
    /// included; `>>` closes two).
    fn split_top_level(&self, a: usize, b: usize) -> Vec<Vec<usize>> {
        let mut out = vec![vec![]];
        let mut depth = 0i32;
        for j in a..b {
            match self.s(j) {
                "(" | "[" | "{" | "<" => depth += 1,
                ")" | "]" | "}" | ">" => depth -= 1,
                ">>" => depth -= 2,
                "," if depth == 0 => {
                    out.push(vec![]);
                    continue;
                }
                _ => {}
            }
            out.last_mut().unwrap().push(j);
        }
        if out.last().map(|v| v.is_empty()).unwrap_or(false) {
            out.pop();
        }
        out
    }
    /// Joins tokens [a, b) into text, a space between words.
    fn join(&self, a: usize, b: usize) -> String {
        let mut out = String::new();
        let mut prev_word = false;
        for i in a..b {
            let t = &self.lx.tokens[i];
            let word = matches!(t.kind, Kind::Ident | Kind::Number);
            if !out.is_empty() && (word && prev_word || t.kind == Kind::Str || t.kind == Kind::Char) {
                out.push(' ');
            }
            out.push_str(self.lx.text_of(t));
            prev_word = word;
        }
        out
    }

    fn run(&mut self) {
        let mut decl_start = 0usize;
        // Parentheses and brackets open in the current namespace-scope declaration: a
        // brace inside them (a lambda in a default argument) is never a function body.
        let mut depth = 0i32;
        let mut i = 0usize;
        while i < self.n() {
            let t = self.lx.tokens[i].clone();
            let s = self.s(i);
            // assert() expands from <assert.h>, so its tokens are marked as system code
            // even inside the user's file: route every call (not the declaration).
            if s == "__assert_fail" && (i == 0 || self.s(i - 1) != "void") {
                self.replace(i, "::__simtwin_assert_fail");
            }
            if t.system {
                // The CUDA toolkit's type headers (cuda_runtime_api.h, ...) annotate their
                // declarations with execution spaces; nothing there is registered.
                if matches!(s, "__host__" | "__device__" | "__noinline__" | "__forceinline__") {
                    self.replace(i, if s == "__forceinline__" { "inline" } else { "" });
                }
            } else {
                if let Some(next) = self.token_edit(i) {
                    if self.at_namespace_level() && next > 0 && self.is(next - 1, ";") {
                        decl_start = next; // a namespace-scope extern __shared__ declaration
                        depth = 0;
                    }
                    i = next;
                    continue;
                }
            }
            match s {
                "(" => self.parens += 1,
                ")" => self.parens = (self.parens - 1).max(0),
                ";" if self.parens == 0 => {
                    // A prototype's parameters go out of scope.
                    let d = self.scopes.len();
                    self.shadows.retain(|sh| !(sh.param && !sh.armed && sh.depth == d));
                }
                _ => {}
            }
            let ns_level = self.at_namespace_level();
            if s == "{" {
                let d = self.scopes.len();
                for sh in self.shadows.iter_mut().filter(|sh| sh.param && sh.depth == d) {
                    sh.armed = true;
                }
            }
            match s {
                "(" | "[" if ns_level => depth += 1,
                ")" | "]" if ns_level => depth = (depth - 1).max(0),
                "{" if ns_level && depth > 0 => self.scopes.push(Scope::Other { function_body: false }),
                "{" if ns_level => {
                    let first = if decl_start < i { self.s(decl_start) } else { "" };
                    if first == "namespace" || (first == "inline" && self.is(decl_start + 1, "namespace")) {
                        let from = if first == "inline" { decl_start + 2 } else { decl_start + 1 };
                        // `namespace a::inline b {` names a::b.
                        let parts: Vec<usize> = (from..i).filter(|&k| self.s(k) != "inline").collect();
                        let name: String = parts.iter().map(|&k| self.s(k)).collect();
                        self.scopes.push(Scope::Namespace(if name.is_empty() { None } else { Some(name) }));
                        decl_start = i + 1;
                    } else if i == decl_start + 2 && self.s(decl_start) == "extern" && self.lx.tokens[decl_start + 1].kind == Kind::Str {
                        self.scopes.push(Scope::Linkage);
                        decl_start = i + 1;
                    } else {
                        let function_body = self.is_function_head(decl_start, i);
                        self.scopes.push(Scope::Other { function_body });
                    }
                }
                "{" => self.scopes.push(Scope::Other { function_body: false }),
                "}" => {
                    let popped = self.scopes.pop();
                    let d = self.scopes.len();
                    self.shadows.retain(|sh| sh.depth < d || (sh.depth == d && !(sh.param && sh.armed)));
                    if ns_level {
                        // The end of a namespace or linkage block.
                        decl_start = i + 1;
                        depth = 0;
                    } else if self.at_namespace_level() {
                        if let Some(Scope::Other { function_body: true }) = popped {
                            self.declaration(decl_start, i);
                            decl_start = i + 1;
                            depth = 0;
                        }
                        // Otherwise a class body, an initializer or a lambda: the
                        // declaration goes on to its `;`.
                    }
                }
                ";" if ns_level => {
                    self.declaration(decl_start, i);
                    decl_start = i + 1;
                    depth = 0;
                }
                _ => {}
            }
            i += 1;
        }
    }

    fn is(&self, i: usize, s: &str) -> bool {
        self.lx.is(i, s)
    }

    /// Token-level rewriting of user code. Returns the index to continue at when the
    /// edit consumed more than this token.
    fn token_edit(&mut self, i: usize) -> Option<usize> {
        let s = self.s(i);
        let prev = if i > 0 { self.s(i - 1) } else { "" };
        match s {
            // A kernel's only caller is its generated runner: always_inline lets g++ put
            // the body into the runner's thread loop (the exported function stays, for
            // its symbol). Kernels cannot recurse, so the inlining cannot fail.
            "__global__" => self.replace(i, "__attribute__((always_inline))"),
            "__device__" | "__host__" | "__constant__" | "__managed__" | "__grid_constant__" => self.replace(i, ""),
            "__forceinline__" => self.replace(i, "__inline__ __attribute__((always_inline))"),
            "threadIdx" | "blockIdx" | "blockDim" | "gridDim" => {
                match self.builtin_use(i) {
                    BuiltinUse::Read => {}
                    BuiltinUse::Other => return None,
                    BuiltinUse::Declaration => {
                        let sh = Shadow { name: s.to_string(), depth: self.scopes.len(), param: self.parens > 0, armed: false };
                        self.shadows.push(sh);
                        return None;
                    }
                }
                let (conv, field) = match s {
                    "threadIdx" => ("to_uint3", "thread_idx"),
                    "blockIdx" => ("to_uint3", "block_idx"),
                    "blockDim" => ("to_dim3", "block_dim"),
                    _ => ("to_dim3", "grid_dim"),
                };
                self.replace(i, &format!("(::__simtwin::{conv}(::__simtwin::tls_ctx->{field}))"))
            }
            "__noinline__" => self.replace(i, "__attribute__((noinline))"),
            "__launch_bounds__" => {
                if self.is(i + 1, "(") {
                    if let Some(close) = self.matching(i + 1) {
                        let (a, b) = (self.lx.tokens[i].start, self.lx.tokens[close].end);
                        self.edits.push(Edit { start: a, end: b, text: String::new() });
                        return Some(close + 1);
                    }
                }
                self.errors.push(format!("{}: malformed __launch_bounds__", self.loc(i)));
            }
            "__shared__" => {
                if prev == "extern" {
                    return Some(self.extern_shared(i - 1));
                }
                self.replace(i, if prev == "static" { "thread_local" } else { "static thread_local" });
            }
            "asm" | "__asm__" | "__asm" => self.errors.push(format!(
                "{}: inline PTX `{}` cannot be compiled for the host; replace it with an intrinsic \
                 or portable C++",
                self.loc(i),
                s
            )),
            // A call (not a declaration of the user's own `printf`/`clock`, a kernel so
            // named included: a name after a type is declared, nvcc accepts it).
            "printf" | "clock"
                if self.is(i + 1, "(")
                    && prev != "."
                    && prev != "->"
                    && !(i > 0
                        && self.lx.tokens[i - 1].kind == Kind::Ident
                        && !matches!(prev, "return" | "else" | "do" | "case" | "co_return" | "co_yield" | "throw")) =>
            {
                if s == "clock" && !self.is(i + 2, ")") {
                    return None;
                }
                if prev == "::" {
                    self.replace(i - 1, "");
                    if i >= 2 && self.s(i - 2) == "std" {
                        self.replace(i - 2, "");
                    }
                }
                self.replace(i, if s == "printf" { "::__simtwin_printf" } else { "::__simtwin_clock" });
            }
            _ => {}
        }
        None
    }

    /// Whether the built-in variable name at `i` (threadIdx, ...) is read there, rather
    /// than a member access (`p.blockDim`), a qualified name, or the name of something
    /// the user declares (`dim3 blockDim;` in a struct, a parameter `dim3 gridDim`).
    fn builtin_use(&self, i: usize) -> BuiltinUse {
        let s = self.s(i);
        let prev = if i > 0 { self.s(i - 1) } else { "" };
        if matches!(prev, "." | "->" | "::" | "struct" | "class" | "enum" | "union" | "goto") {
            return BuiltinUse::Other;
        }
        let next = if i + 1 < self.n() { self.s(i + 1) } else { "" };
        let declarator_next = matches!(next, ";" | "," | "=" | "[" | "{" | ")" | ":");
        let type_before =
            (i > 0 && self.lx.tokens[i - 1].kind == Kind::Ident && !is_expression_keyword(prev)) || matches!(prev, ">" | "*" | "&" | "&&");
        if declarator_next && type_before {
            BuiltinUse::Declaration
        } else if self.shadows.iter().any(|sh| sh.name == s) {
            BuiltinUse::Other
        } else {
            BuiltinUse::Read
        }
    }

    /// `extern __shared__ [attrs] T name[] [dims];` starting at `extern` (index e).
    fn extern_shared(&mut self, e: usize) -> usize {
        let Some(semi) = (e..self.n()).find(|&k| self.s(k) == ";") else {
            self.errors.push(format!("{}: unterminated extern __shared__ declaration", self.loc(e)));
            return self.n();
        };
        let mut ty = Vec::new();
        let mut k = e + 2;
        let mut name = None;
        while k < semi {
            let s = self.s(k);
            if ATTRIBUTE_LIKE.contains(&s) && self.is(k + 1, "(") {
                k = self.matching(k + 1).unwrap_or(semi) + 1;
                continue;
            }
            if s == "[" {
                name = ty.pop();
                break;
            }
            ty.push(k);
            k += 1;
        }
        let close = if name.is_some() { self.matching(k) } else { None };
        let (Some(name), Some(close)) = (name, close) else {
            self.errors.push(format!("{}: unsupported extern __shared__ form (expected `extern __shared__ T name[];`)", self.loc(e)));
            return semi + 1;
        };
        if close != k + 1 {
            self.errors.push(format!("{}: extern __shared__ array must be unsized (`name[]`)", self.loc(e)));
            return semi + 1;
        }
        let ty_text: Vec<String> = ty.iter().map(|&t| self.s(t).to_string()).collect();
        let ty_text = ty_text.join(" ");
        let rest = self.join(close + 1, semi);
        let name_s = self.s(name).to_string();
        let cast = format!("reinterpret_cast<{ty_text} (*){rest}>(::__simtwin::tls_ctx->dyn_smem)");
        let (a, b) = (self.lx.tokens[e].start, self.lx.tokens[semi].end);
        let newlines = self.lx.text[a..b].matches('\n').count();
        let text = if self.at_namespace_level() {
            let t = &self.lx.tokens[semi];
            format!("\n#define {name_s} ({cast})\n# {} \"{}\"\n", t.line, self.lx.files[t.file].replace('\\', "\\\\").replace('"', "\\\""))
        } else {
            format!("{ty_text} (*const {name_s}){rest} = {cast};{}", "\n".repeat(newlines))
        };
        self.edits.push(Edit { start: a, end: b, text });
        semi + 1
    }

    /// A namespace-scope declaration: tokens [a, b] (b is its `;` or closing `}`).
    fn declaration(&mut self, a: usize, b: usize) {
        if a > b || self.lx.tokens[a].system {
            return;
        }
        // The declaration's head: up to a function body or brace initializer.
        let head_end = (a..=b).find(|&k| self.s(k) == "{").unwrap_or(b);
        let has = |r: &Self, w: &str| (a..head_end).any(|k| r.s(k) == w);
        if has(self, "__shared__") {
            return;
        }
        if has(self, "__global__") {
            self.kernel(a, b, head_end);
        } else if has(self, "__device__") || has(self, "__constant__") || has(self, "__managed__") {
            self.global_var(a, b);
        }
    }

    /// Index of the declarator's parameter list `(` in [a, b), if any, skipping
    /// template headers, requires-clauses, attribute-like groups and operator names.
    fn param_list(&self, a: usize, b: usize) -> Option<usize> {
        let mut k = self.skip_template_headers(a, b);
        while k < b {
            let s = self.s(k);
            if let Some(n) = self.skip_attribute(k, b) {
                k = n;
                continue;
            }
            if matches!(s, "sizeof" | "alignof" | "__alignof__") && self.is(k + 1, "(") {
                k = self.matching(k + 1)? + 1;
                continue;
            }
            if s == "requires" {
                k = self.skip_requires(k, b);
                continue;
            }
            if s == "operator" {
                let n = self.skip_operator_name(k, b);
                return if n < b && self.s(n) == "(" { Some(n) } else { None };
            }
            if s == "=" || s == "{" || s == "[" {
                return None;
            }
            if s == "(" && k > a {
                let p = self.s(k - 1);
                let grouping = is_keyword_token(p) && p != "auto";
                if !grouping && (self.lx.tokens[k - 1].kind == Kind::Ident || p == ">") {
                    return Some(k);
                }
            }
            k += 1;
        }
        None
    }

    /// Start of the (possibly qualified, possibly template-id) name that ends at `end`.
    fn name_start(&self, a: usize, end: usize) -> usize {
        let mut k = end;
        if matches!(self.s(k), ">" | ">>") {
            // Back to the `<` that opens the template arguments (parenthesized
            // expressions inside them are skipped whole).
            let mut depth = 0;
            let mut parens = 0;
            while k > a {
                match self.s(k) {
                    ")" | "]" => parens += 1,
                    "(" | "[" => parens -= 1,
                    ">" if parens == 0 => depth += 1,
                    ">>" if parens == 0 => depth += 2,
                    "<" if parens == 0 => depth -= 1,
                    _ => {}
                }
                if depth == 0 && parens == 0 {
                    break;
                }
                k -= 1;
            }
            k -= 1; // the template name
        }
        while k >= a + 2 && self.s(k - 1) == "::" && self.lx.tokens[k - 2].kind == Kind::Ident {
            k -= 2;
        }
        k
    }

    fn drop_static(&mut self, a: usize, b: usize) {
        for k in a..b {
            if self.s(k) == "static" {
                self.replace(k, "");
            }
        }
    }

    fn launch_bounds(&self, a: usize, b: usize) -> Vec<Vec<usize>> {
        let Some(k) = (a..b).find(|&k| self.s(k) == "__launch_bounds__") else { return vec![] };
        let Some(close) = self.matching(k + 1) else { return vec![] };
        let mut args = vec![vec![]];
        let mut depth = 0;
        for j in k + 2..close {
            match self.s(j) {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth -= 1,
                "," if depth == 0 => {
                    args.push(vec![]);
                    continue;
                }
                _ => {}
            }
            args.last_mut().unwrap().push(j);
        }
        args
    }

    fn kernel(&mut self, a: usize, b: usize, head_end: usize) {
        let is_template = self.s(a) == "template";
        let is_specialization = is_template && self.is(a + 1, "<") && self.is(a + 2, ">");
        let is_instantiation = is_template && !self.is(a + 1, "<");
        let has_body = self.s(b) == "}";
        self.drop_static(a, head_end);
        let Some(lp) = self.param_list(a, b) else {
            self.errors.push(format!("{}: cannot find the parameter list of this __global__ function", self.loc(a)));
            return;
        };
        let ns = self.name_start(a, lp - 1);
        let name = self.join(ns, lp);
        let base = self.s(ns_base(self, ns, lp)).to_string();
        let (path, anon) = self.ns_path();
        let qual = |n: &str| if path.is_empty() { n.to_string() } else { format!("{}::{}", path.join("::"), n) };
        if is_template && !is_instantiation && !is_specialization {
            // A template definition: remember its parameters for the launch bounds of
            // its explicit instantiations.
            let close = self.matching(a + 1).unwrap_or(a + 1);
            let mut params = Vec::new();
            let mut defaults = Vec::new();
            for seg in self.split_top_level(a + 2, close) {
                // A parameter's name: the last identifier before its default argument.
                let end = seg.iter().position(|&t| self.s(t) == "=").unwrap_or(seg.len());
                if let Some(&id) = seg[..end].iter().rev().find(|&&t| self.lx.tokens[t].kind == Kind::Ident && !is_keyword_token(self.s(t)))
                {
                    params.push(self.s(id).to_string());
                    defaults.push(if end + 1 < seg.len() { self.join(seg[end + 1], seg[seg.len() - 1] + 1) } else { String::new() });
                }
            }
            let bounds = self.launch_bounds(a, b);
            self.templates.insert(qual(&base), TemplateDef { params, defaults, bounds });
            return;
        }
        if !has_body && !is_instantiation {
            return; // a prototype; the definition registers the kernel
        }
        let rp = self.matching(lp).unwrap_or(lp);
        // Parameter types for a function-pointer cast; default arguments dropped.
        let mut params = String::new();
        let mut depth = 0;
        let mut skipping = false;
        let mut from = lp + 1;
        for j in lp + 1..=rp {
            let s = self.s(j);
            match s {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" if j != rp => depth -= 1,
                _ => {}
            }
            if depth == 0 && (s == "," || j == rp) {
                if !skipping {
                    params.push_str(&self.join(from, j));
                }
                if s == "," {
                    params.push_str(", ");
                }
                skipping = false;
                from = j + 1;
            } else if depth == 0 && s == "=" {
                params.push_str(&self.join(from, j));
                skipping = true;
            }
        }
        // Launch bounds: on this declaration, or on the template it instantiates.
        let mut bounds = [String::from("0"), String::from("0")];
        let own = self.launch_bounds(a, b);
        if !own.is_empty() {
            for (k, arg) in own.iter().take(2).enumerate() {
                bounds[k] = format!("({})", self.join_ids(arg, &HashMap::new()));
            }
        } else if is_template {
            if let Some(def) = self.templates.get(&qual(&base)) {
                let args = template_args(self, ns, lp);
                let mut map = HashMap::new();
                for (i, p) in def.params.iter().enumerate() {
                    // An explicit argument, else the parameter's default (which may name
                    // earlier parameters: substituted below like the bounds themselves).
                    if let Some(v) = args.get(i) {
                        map.insert(p.clone(), v.clone());
                    } else if !def.defaults[i].is_empty() {
                        map.insert(p.clone(), def.defaults[i].clone());
                    }
                }
                for (k, arg) in def.bounds.iter().take(2).enumerate() {
                    let uses_unknown = arg.iter().any(|&t| def.params.contains(&self.s(t).to_string()) && !map.contains_key(self.s(t)));
                    if uses_unknown {
                        self.warnings.push(format!(
                            "{}: __launch_bounds__ of {} depend on deduced template arguments; recorded as 0",
                            self.loc(a),
                            name
                        ));
                    } else {
                        bounds[k] = format!("({})", self.join_ids(arg, &map));
                    }
                }
            }
        }
        let _ = self.in_linkage();
        self.kernels.push(PendingKernel {
            qname: qual(&name),
            name_as_written: name,
            params,
            insert_at: self.lx.tokens[b].end,
            bounds,
            ns_path: path,
            location: self.loc(a),
            anonymous: anon,
        });
    }

    /// Joins the tokens, substituting template parameters.
    fn join_ids(&self, toks: &[usize], map: &HashMap<String, String>) -> String {
        let parts: Vec<String> =
            toks.iter().map(|&t| map.get(self.s(t)).map(|v| format!("({v})")).unwrap_or_else(|| self.s(t).to_string())).collect();
        parts.join(" ")
    }

    fn global_var(&mut self, a: usize, b: usize) {
        if self.s(a) == "template" || self.param_list(a, b).is_some() {
            return; // a function (or template), not a variable
        }
        let is_extern = (a..b).any(|k| self.s(k) == "extern");
        let has_init = (a..b).any(|k| self.s(k) == "=" || self.s(k) == "{");
        if is_extern && !has_init {
            return; // a declaration of a variable defined elsewhere
        }
        let constant = (a..b).any(|k| self.s(k) == "__constant__");
        // Declarators, split at top-level commas.
        let mut segments = vec![vec![]];
        let mut depth = 0;
        for k in a..b {
            let s = self.s(k);
            match s {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth -= 1,
                "," if depth == 0 => {
                    segments.push(vec![]);
                    continue;
                }
                _ => {}
            }
            segments.last_mut().unwrap().push(k);
        }
        let (path, _) = self.ns_path();
        let mut names = Vec::new();
        let mut is_const_object = false;
        for (si, seg) in segments.iter().enumerate() {
            let mut name = None;
            let mut k = 0;
            while k < seg.len() {
                let s = self.s(seg[k]);
                if ATTRIBUTE_LIKE.contains(&s) && k + 1 < seg.len() && self.s(seg[k + 1]) == "(" {
                    let close = self.matching(seg[k + 1]).unwrap_or(seg[k + 1]);
                    while k < seg.len() && seg[k] <= close {
                        k += 1;
                    }
                    continue;
                }
                if s == "[" || s == "=" || s == "{" {
                    break;
                }
                if self.lx.tokens[seg[k]].kind == Kind::Ident && !is_keyword_token(s) && !s.starts_with("__") {
                    name = Some(seg[k]);
                }
                k += 1;
            }
            let Some(name) = name else { continue };
            if si == 0 {
                let star = seg.iter().rposition(|&t| t < name && (self.s(t) == "*" || self.s(t) == "&"));
                is_const_object = seg.iter().any(|&t| self.s(t) == "constexpr")
                    || seg.iter().enumerate().any(|(p, &t)| t < name && self.s(t) == "const" && star.map(|s| p > s).unwrap_or(true));
            }
            names.push(self.s(name).to_string());
        }
        self.drop_static(a, b);
        if is_const_object && has_init && !is_extern {
            let t = &self.lx.tokens[a];
            self.edits.push(Edit { start: t.start, end: t.start, text: "extern ".to_string() });
        }
        let mut insert = String::new();
        for n in names {
            let idx = self.globals.len();
            let reg = format!("__simtwin_greg_{idx}");
            // Generated names are reserved (`__simtwin_`) and ABI types qualified: the
            // function sits in the user's namespace, beside the user's own names.
            insert.push_str(&format!(
                " static ::__simtwin::simtwin_global_t {reg}() {{ ::__simtwin::simtwin_global_t __simtwin_g = {{ \
                 \"{q}\", (void *)__builtin_addressof({n}), sizeof({n}), {c}, 0 }}; return __simtwin_g; }}",
                q = qualify(&path, &n),
                c = constant as u32
            ));
            self.globals.push(GlobalRec {
                name: qualify(&path, &n),
                reg_fn: format!("::{}", qualify(&path, &reg)),
                constant,
                location: self.loc(a),
            });
        }
        self.global_inserts.push((self.lx.tokens[b].end, insert));
    }
}

/// Keywords after which a name is an operand, not a declarator.
fn is_expression_keyword(s: &str) -> bool {
    matches!(s, "return" | "case" | "sizeof" | "alignof" | "decltype" | "co_return" | "co_yield" | "throw" | "new" | "delete")
}

fn qualify(path: &[String], n: &str) -> String {
    if path.is_empty() {
        n.to_string()
    } else {
        format!("{}::{}", path.join("::"), n)
    }
}

/// Index of the unqualified template name within a name [ns, lp).
fn ns_base(r: &Rewriter<'_>, ns: usize, lp: usize) -> usize {
    let mut base = ns;
    for k in ns..lp {
        if r.s(k) == "<" {
            break;
        }
        if r.lx.tokens[k].kind == Kind::Ident {
            base = k;
        }
    }
    base
}

/// The template arguments of a template-id name [ns, lp), as texts.
fn template_args(r: &Rewriter<'_>, ns: usize, lp: usize) -> Vec<String> {
    let Some(open) = (ns..lp).find(|&k| r.s(k) == "<") else { return vec![] };
    let close = lp - 1;
    let mut args: Vec<String> = r.split_top_level(open + 1, close).iter().map(|seg| r.join(seg[0], seg[seg.len() - 1] + 1)).collect();
    if r.s(close) == ">>" {
        // `k<A<int>>`: the last argument's own `>` is the first half of the token.
        if let Some(last) = args.last_mut() {
            last.push('>');
        }
    }
    args
}

/// Rewrites preprocessed text. Errors (asm, malformed forms) name file and line.
pub fn rewrite(preprocessed: &str) -> Result<Rewritten, Vec<String>> {
    let lx = lex(preprocessed).map_err(|e| vec![e])?;
    let mut r = Rewriter {
        lx,
        edits: Vec::new(),
        errors: Vec::new(),
        warnings: Vec::new(),
        scopes: Vec::new(),
        templates: HashMap::new(),
        kernels: Vec::new(),
        globals: Vec::new(),
        global_inserts: Vec::new(),
        parens: 0,
        shadows: Vec::new(),
    };
    r.run();
    if !r.errors.is_empty() {
        return Err(r.errors);
    }
    // Kernels: always a cast to the function type: a kernel may share its name with a
    // function of the host's headers (`sqrt`, `memset`, `max`: nvcc accepts them, the
    // names are overloaded in host C++), with another kernel, or be a template instance.
    let mut kernels = Vec::new();
    let pending = std::mem::take(&mut r.kernels);
    for (idx, k) in pending.iter().enumerate() {
        let expr = format!("(static_cast<void (*)({})>(&{}))", k.params, k.name_as_written);
        let reg = format!("__simtwin_kreg_{idx}");
        let text = format!(
            " static ::__simtwin::simtwin_kernel_t {reg}() {{ return \
             ::__simtwin::detail::kernel_entry<decltype({expr}), {expr}>(\"{name}\", (unsigned int)({b0}), (unsigned int)({b1})); }}",
            name = k.qname.replace('"', "\\\""),
            b0 = k.bounds[0],
            b1 = k.bounds[1]
        );
        r.edits.push(Edit { start: k.insert_at, end: k.insert_at, text });
        kernels.push(KernelRec {
            name: k.qname.clone(),
            reg_fn: format!("::{}", qualify(&k.ns_path, &reg)),
            location: k.location.clone(),
            anonymous_namespace: k.anonymous,
        });
    }
    for (at, text) in std::mem::take(&mut r.global_inserts) {
        r.edits.push(Edit { start: at, end: at, text });
    }
    let text = apply_edits(r.lx.text, r.edits)?;
    Ok(Rewritten { text, kernels, globals: r.globals, warnings: r.warnings })
}

/// Applies the edits to `src`. Insertions at one point keep the order they were made in;
/// an edit that overlaps another (two replacements of one range, an insertion inside a
/// replaced range) is an error naming both, never a silently dropped edit.
fn apply_edits(src: &str, mut edits: Vec<Edit>) -> Result<String, Vec<String>> {
    edits.sort_by_key(|e| (e.start, e.end)); // stable: same-point insertions keep their order
    let line = |at: usize| src[..at].matches('\n').count() + 1;
    let mut out = String::with_capacity(src.len() + 4096);
    let mut pos = 0;
    let mut last: Option<&Edit> = None;
    let mut errors = Vec::new();
    for e in &edits {
        if e.start < pos {
            let p = last.expect("an edit before");
            errors.push(format!(
                "internal error: two rewrites of the same source overlap (bytes {}..{} at line {} and {}..{} at line {}); \
                 please report this file",
                p.start,
                p.end,
                line(p.start),
                e.start,
                e.end,
                line(e.start)
            ));
            continue;
        }
        out.push_str(&src[pos..e.start]);
        out.push_str(&e.text);
        pos = e.end;
        last = Some(e);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    out.push_str(&src[pos..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(start: usize, end: usize, text: &str) -> Edit {
        Edit { start, end, text: text.into() }
    }

    #[test]
    fn edits_apply_in_source_order_and_same_point_insertions_keep_theirs() {
        let src = "abcdef";
        let out = apply_edits(src, vec![edit(4, 6, "XY"), edit(1, 1, "<"), edit(1, 1, ">"), edit(2, 3, "")]).unwrap();
        assert_eq!(out, "a<>bdXY");
    }

    #[test]
    fn an_edit_overlapping_another_is_an_error_not_a_dropped_edit() {
        let src = "line one\nline two\n";
        // Two replacements of overlapping ranges.
        let e = apply_edits(src, vec![edit(9, 13, "LINE"), edit(11, 17, "x")]).unwrap_err();
        assert_eq!(e.len(), 1);
        assert!(e[0].contains("bytes 9..13 at line 2 and 11..17 at line 2"), "{e:?}");
        // An insertion inside a replaced range.
        let e = apply_edits(src, vec![edit(0, 4, "LINE"), edit(2, 2, "!")]).unwrap_err();
        assert!(e[0].contains("bytes 0..4 at line 1 and 2..2 at line 1"), "{e:?}");
        // Adjacent edits do not overlap.
        assert_eq!(apply_edits(src, vec![edit(0, 4, "A"), edit(4, 4, "B"), edit(4, 8, "C")]).unwrap(), "ABC\nline two\n");
    }

    fn rw(src: &str) -> Rewritten {
        rewrite(&format!("# 1 \"t.cu\"\n{src}")).unwrap_or_else(|e| panic!("{e:?}"))
    }

    #[test]
    fn finds_kernels_templates_and_globals() {
        let r = rw("namespace ns { __global__ void a(int *x, int n = 3) { *x = n; } }\n\
             template <typename T, int B> __global__ __launch_bounds__(B, 2) void t(T *p) { }\n\
             template __global__ void t<float, 128>(float *);\n\
             extern \"C\" { __global__ void c(float *p) { } }\n\
             __constant__ const float tab[2] = {1, 2}; static __device__ int cnt, arr[4];\n\
             __device__ float f(float x) { return x; }\n");
        let names: Vec<_> = r.kernels.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, vec!["ns::a", "t<float,128>", "c"]);
        let globals: Vec<_> = r.globals.iter().map(|g| (g.name.as_str(), g.constant)).collect();
        assert_eq!(globals, vec![("tab", true), ("cnt", false), ("arr", false)]);
        assert!(r.text.contains("kernel_entry<decltype((static_cast<void (*)(float*)>(&t<float,128>))), (static_cast<void (*)(float*)>(&t<float,128>))>(\"t<float,128>\", (unsigned int)(((128))), (unsigned int)((2)))"), "{}", r.text);
        assert!(r.text.contains("kernel_entry<decltype((static_cast<void (*)(int*x, int n)>(&a))), (static_cast<void (*)(int*x, int n)>(&a))>(\"ns::a\", (unsigned int)(0), (unsigned int)(0))"), "{}", r.text);
        assert!(r.text.contains("extern  const float tab[2]"), "{}", r.text);
        assert!(!r.text.contains("static  int cnt") && r.text.contains(" int cnt, arr[4];"));
    }

    #[test]
    fn extern_shared_at_block_and_namespace_scope() {
        let r = rw("extern __shared__ float4 gsm[];\n__global__ void k() {\n  extern __shared__ __attribute__((aligned(16))) unsigned char s[];\n  s[0] = 1; }\n");
        assert!(
            r.text.contains("\n#define gsm (reinterpret_cast<float4 (*)>(::__simtwin::tls_ctx->dyn_smem))\n# 1 \"t.cu\"\n"),
            "{}",
            r.text
        );
        assert!(
            r.text.contains("unsigned char (*const s) = reinterpret_cast<unsigned char (*)>(::__simtwin::tls_ctx->dyn_smem);"),
            "{}",
            r.text
        );
        assert_eq!(r.text.matches('\n').count(), 4 + 1 + 3);
    }

    #[test]
    fn asm_is_an_error_naming_file_and_line() {
        let e = rewrite("# 1 \"k.cu\"\n__global__ void k(int *p) {\n  asm volatile(\"trap;\");\n}\n").err().unwrap();
        assert_eq!(e.len(), 1);
        assert!(e[0].starts_with("k.cu:2: inline PTX `asm`"), "{}", e[0]);
    }

    #[test]
    fn system_headers_are_left_alone() {
        let r = rw("# 1 \"sys.h\" 1 3\nstatic inline void f() { __asm__(\"\"); }\n# 2 \"t.cu\" 2\n__shared__ int x;\n");
        assert!(r.text.contains("__asm__"));
        assert!(r.text.contains("static thread_local int x;"));
    }
}
