//! The PTX module as written: what the parser produces and every later pass reads.
//!
//! Instructions stay close to the text (an opcode, its modifiers in order, operands);
//! their meaning is decided where it is used (the passes and the emitter), each from the
//! PTX ISA's definition of that instruction.

use std::collections::BTreeMap;

/// A fundamental PTX type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum Ty {
    B8,
    B16,
    B32,
    B64,
    B128,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F16x2,
    Bf16,
    Bf16x2,
    Tf32,
    F32,
    F64,
    Pred,
    E4m3x2,
    E5m2x2,
}

impl Ty {
    /// The type named by a modifier such as `.u32` (with the dot).
    pub fn parse(s: &str) -> Option<Ty> {
        Some(match s {
            ".b8" => Ty::B8,
            ".b16" => Ty::B16,
            ".b32" => Ty::B32,
            ".b64" => Ty::B64,
            ".b128" => Ty::B128,
            ".u8" => Ty::U8,
            ".u16" => Ty::U16,
            ".u32" => Ty::U32,
            ".u64" => Ty::U64,
            ".s8" => Ty::S8,
            ".s16" => Ty::S16,
            ".s32" => Ty::S32,
            ".s64" => Ty::S64,
            ".f16" => Ty::F16,
            ".f16x2" => Ty::F16x2,
            ".bf16" => Ty::Bf16,
            ".bf16x2" => Ty::Bf16x2,
            ".tf32" => Ty::Tf32,
            ".f32" => Ty::F32,
            ".f64" => Ty::F64,
            ".pred" => Ty::Pred,
            ".e4m3x2" => Ty::E4m3x2,
            ".e5m2x2" => Ty::E5m2x2,
            _ => return None,
        })
    }

    /// Size in bytes (a predicate counts as 1).
    pub fn size(self) -> u32 {
        match self {
            Ty::B8 | Ty::U8 | Ty::S8 | Ty::Pred => 1,
            Ty::B16 | Ty::U16 | Ty::S16 | Ty::F16 | Ty::Bf16 | Ty::E4m3x2 | Ty::E5m2x2 => 2,
            Ty::B32 | Ty::U32 | Ty::S32 | Ty::F32 | Ty::F16x2 | Ty::Bf16x2 | Ty::Tf32 => 4,
            Ty::B64 | Ty::U64 | Ty::S64 | Ty::F64 => 8,
            Ty::B128 => 16,
        }
    }

    /// Signed integer types.
    pub fn signed(self) -> bool {
        matches!(self, Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64)
    }

    /// Floating-point types (scalar: f16, bf16, f32, f64).
    pub fn float(self) -> bool {
        matches!(self, Ty::F16 | Ty::Bf16 | Ty::F32 | Ty::F64 | Ty::Tf32)
    }

    /// The modifier spelling, without the dot.
    pub fn name(self) -> &'static str {
        match self {
            Ty::B8 => "b8",
            Ty::B16 => "b16",
            Ty::B32 => "b32",
            Ty::B64 => "b64",
            Ty::B128 => "b128",
            Ty::U8 => "u8",
            Ty::U16 => "u16",
            Ty::U32 => "u32",
            Ty::U64 => "u64",
            Ty::S8 => "s8",
            Ty::S16 => "s16",
            Ty::S32 => "s32",
            Ty::S64 => "s64",
            Ty::F16 => "f16",
            Ty::F16x2 => "f16x2",
            Ty::Bf16 => "bf16",
            Ty::Bf16x2 => "bf16x2",
            Ty::Tf32 => "tf32",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
            Ty::Pred => "pred",
            Ty::E4m3x2 => "e4m3x2",
            Ty::E5m2x2 => "e5m2x2",
        }
    }
}

/// A state space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Space {
    Reg,
    Global,
    Const,
    Shared,
    Local,
    Param,
    Tex,
}

impl Space {
    /// The space named by a directive such as `.global`.
    pub fn parse(s: &str) -> Option<Space> {
        Some(match s {
            ".reg" => Space::Reg,
            ".global" => Space::Global,
            ".const" => Space::Const,
            ".shared" => Space::Shared,
            ".local" => Space::Local,
            ".param" => Space::Param,
            ".tex" => Space::Tex,
            _ => return None,
        })
    }

    /// The space an access instruction's modifiers name (None: a generic address).
    pub fn of_access(mods: &[String]) -> Option<Space> {
        mods.iter().find_map(|m| match m.as_str() {
            ".global" => Some(Space::Global),
            ".shared" | ".shared::cta" | ".shared::cluster" => Some(Space::Shared),
            ".local" => Some(Space::Local),
            ".const" => Some(Space::Const),
            ".param" | ".param::entry" | ".param::func" => Some(Space::Param),
            _ => None,
        })
    }
}

/// Linkage directives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[allow(missing_docs)]
pub enum Linkage {
    #[default]
    None,
    Visible,
    Extern,
    Weak,
    Common,
}

/// An initializer value.
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    /// An integer (as 64-bit two's complement).
    Int(u64),
    /// A float literal as an f64 value (decimal) or exact bits.
    Float(FloatLit),
    /// The address of a variable or function plus an offset; `generic` for `generic(x)`.
    Addr {
        /// The variable or function.
        name: String,
        /// Bytes added.
        offset: i64,
        /// Written as `generic(name)`.
        generic: bool,
    },
    /// A braced list.
    List(Vec<Init>),
}

/// A floating-point literal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FloatLit {
    /// `0fXXXXXXXX`: single-precision bits.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX`: double-precision bits.
    F64(u64),
    /// A decimal literal (double precision).
    Dec(f64),
}

impl FloatLit {
    /// The bits of a float literal as a value of type `ty` (f32/f64 numerically converted;
    /// for bit and integer types the literal's own bits).
    pub fn bits(self, ty: Ty) -> u64 {
        let f = self;
        let as_f64 = |f: FloatLit| match f {
            FloatLit::F32(b) => f32::from_bits(b) as f64,
            FloatLit::F64(b) => f64::from_bits(b),
            FloatLit::Dec(v) => v,
        };
        match ty {
            Ty::F32 => match f {
                FloatLit::F32(b) => b as u64,
                other => (as_f64(other) as f32).to_bits() as u64,
            },
            Ty::F64 => match f {
                FloatLit::F64(b) => b,
                other => as_f64(other).to_bits(),
            },
            _ => match f {
                FloatLit::F32(b) => b as u64,
                FloatLit::F64(b) => b,
                FloatLit::Dec(v) => {
                    if ty.size() == 4 {
                        (v as f32).to_bits() as u64
                    } else {
                        v.to_bits()
                    }
                }
            },
        }
    }
}

/// A variable (module scope or function scope), or a parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Var {
    /// Line of the declaration.
    pub line: u32,
    /// Linkage (module scope).
    pub linkage: Linkage,
    /// State space.
    pub space: Space,
    /// `.align N`, if given.
    pub align: Option<u32>,
    /// `.v2`/`.v4` element count (1 for scalars).
    pub vector: u32,
    /// Element type (`.texref` and friends: B64).
    pub ty: Ty,
    /// Name.
    pub name: String,
    /// Array dimensions (`None`: `[]`, sized by the initializer or unsized extern).
    pub dims: Vec<Option<u64>>,
    /// Initializer.
    pub init: Option<Init>,
    /// Texture/sampler/surface reference (`.texref`, `.samplerref`, `.surfref`).
    pub opaque: Option<String>,
}

impl Var {
    /// Bytes of one element (vector included).
    pub fn elem_size(&self) -> u64 {
        self.ty.size() as u64 * self.vector as u64
    }

    /// Total size in bytes; an unsized array counts its initializer's elements (0 if none).
    pub fn size(&self) -> u64 {
        let mut n = 1u64;
        for (i, d) in self.dims.iter().enumerate() {
            let k = match d {
                Some(k) => *k,
                None if i == 0 => self.init.as_ref().map(init_len).unwrap_or(0),
                None => 0,
            };
            n = n.saturating_mul(k);
        }
        n.saturating_mul(self.elem_size())
    }

    /// Alignment in bytes: `.align`, else the element's natural alignment.
    pub fn alignment(&self) -> u64 {
        self.align.map(|a| a as u64).unwrap_or_else(|| self.elem_size().max(1))
    }
}

/// Elements an initializer gives at its top level (flattened scalars for nested lists).
fn init_len(i: &Init) -> u64 {
    match i {
        Init::List(v) => v.len() as u64,
        _ => 1,
    }
}

/// A function's parameter (or return value).
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// `.param` or `.reg` (device functions may take registers).
    pub space: Space,
    /// Element type.
    pub ty: Ty,
    /// `.align N`.
    pub align: Option<u32>,
    /// `.v2`/`.v4`.
    pub vector: u32,
    /// Array length (`.b8 p[16]`), 1 for scalars.
    pub count: u64,
    /// Name (`_` in prototypes).
    pub name: String,
    /// `.ptr .global`-style attributes (kept for reports).
    pub ptr: Option<String>,
}

impl Param {
    /// Bytes.
    pub fn size(&self) -> u64 {
        self.ty.size() as u64 * self.vector as u64 * self.count
    }
    /// Alignment in bytes.
    pub fn alignment(&self) -> u64 {
        self.align.map(|a| a as u64).unwrap_or((self.ty.size() as u64 * self.vector as u64).max(1))
    }
}

/// An operand as written.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A register, special register (`%tid.x`), variable, function or label name.
    Name(String),
    /// `_`.
    Sink,
    /// An integer literal (two's complement, 64 bits).
    Int(u64),
    /// A float literal.
    Float(FloatLit),
    /// `[base+offset]`: base is a name (register or variable) or absent (`[imm]`).
    Addr {
        /// Register or variable name; None for an absolute address.
        base: Option<String>,
        /// Bytes added.
        offset: i64,
    },
    /// `name+offset` as a value (address of a variable plus an offset).
    SymOff(String, i64),
    /// `{a, b, ...}`.
    Vector(Vec<Operand>),
    /// `d|p` (setp, shfl...).
    Pair(Box<Operand>, Box<Operand>),
    /// `!p`.
    Not(Box<Operand>),
    /// `(a, b, ...)` in call.
    List(Vec<Operand>),
    /// `[tex, {coords}]`-style bracketed lists (texture instructions).
    Bracket(Vec<Operand>),
}

/// One instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Instr {
    /// PTX line.
    pub line: u32,
    /// `@p` / `@!p`: (negated, predicate).
    pub guard: Option<(bool, String)>,
    /// The opcode without modifiers (`ld`).
    pub op: String,
    /// Modifiers in order, with their dots (`.global`, `.v4`, `.u32`).
    pub mods: Vec<String>,
    /// Operands.
    pub args: Vec<Operand>,
}

impl Instr {
    /// Whether modifier `m` (with its dot) is present.
    pub fn has(&self, m: &str) -> bool {
        self.mods.iter().any(|x| x == m)
    }
    /// The vector width modifier (`.v2`/`.v4`/`.v8`), 1 if none.
    pub fn vec_width(&self) -> u32 {
        self.mods
            .iter()
            .find_map(|m| match m.as_str() {
                ".v2" => Some(2),
                ".v4" => Some(4),
                ".v8" => Some(8),
                _ => None,
            })
            .unwrap_or(1)
    }
    /// The bytes a load or store moves: its type's size times its vector width.
    pub fn access_bytes(&self) -> Option<u32> {
        Some(self.last_ty()?.size() * self.vec_width())
    }
    /// The last modifier that names a type, if any.
    pub fn last_ty(&self) -> Option<Ty> {
        self.mods.iter().rev().find_map(|m| Ty::parse(m))
    }
    /// Every modifier that names a type, in order.
    pub fn tys(&self) -> Vec<Ty> {
        self.mods.iter().filter_map(|m| Ty::parse(m)).collect()
    }
    /// The opcode with its modifiers, as written.
    pub fn text(&self) -> String {
        let mut s = self.op.clone();
        for m in &self.mods {
            s.push_str(m);
        }
        s
    }
}

/// A statement of a function body.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `.reg .ty names;` (each name with its `<N>` count, if any).
    Reg {
        /// Line.
        line: u32,
        /// Type.
        ty: Ty,
        /// `.v2`/`.v4` (1 for scalars).
        vector: u32,
        /// Names with their `<N>` counts.
        names: Vec<(String, Option<u32>)>,
    },
    /// A `.local`, `.shared`, `.param` or `.const` variable.
    Var(Var),
    /// `name:`.
    Label {
        /// Line.
        line: u32,
        /// Name.
        name: String,
    },
    /// An instruction.
    Instr(Instr),
    /// `.loc file line col`.
    Loc {
        /// `.file` index.
        file: u32,
        /// Source line.
        line: u32,
    },
    /// `{ ... }`: a nested scope.
    Block(Vec<Stmt>),
    /// `name: .callprototype (rets) _ (params);`.
    Prototype {
        /// Line.
        line: u32,
        /// Name.
        name: String,
        /// Return parameters.
        rets: Vec<Param>,
        /// Parameters.
        params: Vec<Param>,
    },
    /// `name: .branchtargets L1, L2, ...;`.
    BranchTargets {
        /// Line.
        line: u32,
        /// Name.
        name: String,
        /// The labels, in index order.
        labels: Vec<String>,
    },
}

/// Performance directives of a function.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Perf {
    /// `.maxntid`.
    pub maxntid: Option<[u32; 3]>,
    /// `.reqntid`.
    pub reqntid: Option<[u32; 3]>,
    /// `.minnctapersm`.
    pub minnctapersm: Option<u32>,
    /// `.maxnreg`.
    pub maxnreg: Option<u32>,
}

/// A kernel (`.entry`) or device function (`.func`).
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// Line of the declaration.
    pub line: u32,
    /// Linkage.
    pub linkage: Linkage,
    /// `.entry` (a kernel) rather than `.func`.
    pub entry: bool,
    /// Name.
    pub name: String,
    /// Return parameters (`.func` only).
    pub rets: Vec<Param>,
    /// Parameters.
    pub params: Vec<Param>,
    /// Performance directives.
    pub perf: Perf,
    /// The body; None for a declaration.
    pub body: Option<Vec<Stmt>>,
}

impl Function {
    /// Each parameter's (bytes, offset) in a kernel's parameter buffer: in order, each at
    /// its alignment.
    pub fn param_offsets(&self) -> Vec<(u64, u64)> {
        let mut out = Vec::with_capacity(self.params.len());
        let mut p = 0u64;
        for prm in &self.params {
            let a = prm.alignment().max(1);
            p = p.div_ceil(a) * a;
            out.push((prm.size(), p));
            p += prm.size();
        }
        out
    }
}

/// A whole module.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    /// `.version` (major, minor).
    pub version: (u32, u32),
    /// `.target` architecture number (`sm_90a` -> 90).
    pub sm: u32,
    /// `.target` options other than the architecture (`texmode_independent`, `debug`, ...).
    pub target_opts: Vec<String>,
    /// `.address_size` (64 unless stated).
    pub address_size: u32,
    /// `.file` names by index.
    pub files: BTreeMap<u32, String>,
    /// Module-scope variables, in order.
    pub vars: Vec<Var>,
    /// Functions, in order.
    pub funcs: Vec<Function>,
}
