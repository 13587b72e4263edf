//! SASS listings (`cuobjdump -sass`, `nvdisasm -c [-g]`) read into per-kernel instruction
//! lists, so a checker can compare a model of ptxas's mul+add contraction with what the
//! device runs: the float-op counts of each kernel of an image's sm_90 cubin
//! (reports/ptxas-contraction/README.md says how, and where counts mislead).
//!
//! Only the text format is read; producing it (running cuobjdump on a cubin or fatbin)
//! is the caller's business. Malformed input is an error naming the line, never a
//! silently shorter list.

use std::collections::BTreeMap;
use std::fmt;

/// One SASS instruction as the disassembler printed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SassInstr {
    /// Byte offset in the function (`/*0060*/`).
    pub addr: u64,
    /// Guard predicate as printed (`@P0`, `@!PT`), if any.
    pub guard: Option<String>,
    /// Base opcode (`FFMA`).
    pub opcode: String,
    /// Dot modifiers in order (`FTZ`, `SAT` for `FFMA.FTZ.SAT`).
    pub modifiers: Vec<String>,
    /// Operands as printed, split at top-level commas (`-R0`, `|R5|`, `R7.reuse`,
    /// `desc[UR4][R2.64+0x4]`, `3`). Immediate pairs of HFMA2 count as two.
    pub operands: Vec<String>,
    /// PTX/source line from `nvdisasm -g` line info, when the listing has it.
    pub line: Option<u32>,
}

/// A kernel (or device function section) of one architecture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SassKernel {
    /// Symbol name (mangled as in the image).
    pub name: String,
    /// `sm_90` etc. (from `code for sm_XX` / `arch = sm_XX`; empty if the listing says
    /// nothing, as `nvdisasm` output of a single cubin may not).
    pub arch: String,
    /// Instructions in address order.
    pub instrs: Vec<SassInstr>,
}

/// What a float instruction computes, for counting against a contraction model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FloatClass {
    /// a*b+c with one rounding (FFMA/DFMA/HFMA2 with a real addend).
    Fma,
    /// a*b (FMUL/DMUL/HMUL2, and an FMA whose addend is -0, which ptxas uses for f16x2
    /// `mul.rn`; FMUL.M2..D8 too).
    Mul,
    /// a+b (FADD/DADD/HADD2, and HFMA2 with multiplier 1 as ptxas writes f16x2 adds).
    Add,
}

/// Floating-point precision of a float instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Precision {
    /// 16-bit (HFMA2/HMUL2/HADD2, f16 or bf16 lanes).
    Half,
    /// 32-bit (F*).
    Single,
    /// 64-bit (D*).
    Double,
}

/// A malformed listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SassError {
    /// 1-based line of the listing.
    pub line: usize,
    /// What is wrong there.
    pub message: String,
}

impl fmt::Display for SassError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SASS listing line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for SassError {}

impl SassInstr {
    /// `FFMA.FTZ.SAT`: opcode with its modifiers.
    pub fn full_opcode(&self) -> String {
        let mut s = self.opcode.clone();
        for m in &self.modifiers {
            s.push('.');
            s.push_str(m);
        }
        s
    }

    fn has(&self, m: &str) -> bool {
        self.modifiers.iter().any(|x| x == m)
    }

    /// `HFMA2.MMA Rd, -RZ, RZ, a, b`: ptxas materialising a 32-bit constant from two
    /// half immediates, not arithmetic.
    pub fn is_constant_move(&self) -> bool {
        self.opcode == "HFMA2" && self.operands.len() >= 3 && is_zero_reg(&self.operands[1]) && is_zero_reg(&self.operands[2])
    }

    /// The (multiplicand, multiplier, addend) operand groups of an FMA-kind instruction
    /// (an HFMA2 immediate pair is one group of two operands).
    fn fma_parts(&self) -> Option<(&[String], &[String], &[String])> {
        let o = &self.operands;
        match o.len() {
            4 => Some((&o[1..2], &o[2..3], &o[3..4])),
            5 if is_register(&o[2]) => Some((&o[1..2], &o[2..3], &o[3..5])),
            5 => Some((&o[1..2], &o[2..4], &o[4..5])),
            6 => Some((&o[1..2], &o[2..4], &o[4..6])),
            _ => None,
        }
    }

    /// Class and precision of a float multiply/add/fma; None for everything else
    /// (conversions such as `HADD2.F32`, constant moves, compares, MUFU).
    pub fn float_class(&self) -> Option<(FloatClass, Precision)> {
        let prec = match self.opcode.as_str() {
            "FFMA" | "FFMA32I" | "FMUL" | "FMUL32I" | "FADD" | "FADD32I" => Precision::Single,
            "DFMA" | "DMUL" | "DADD" => Precision::Double,
            "HFMA2" | "HFMA2_32I" | "HMUL2" | "HMUL2_32I" | "HADD2" | "HADD2_32I" => Precision::Half,
            _ => return None,
        };
        let class = match self.opcode.as_str() {
            "FMUL" | "FMUL32I" | "DMUL" | "HMUL2" | "HMUL2_32I" => FloatClass::Mul,
            "FADD" | "FADD32I" | "DADD" | "HADD2_32I" => FloatClass::Add,
            "HADD2" => {
                if self.has("F32") {
                    return None; // HADD2.F32 Rd, -RZ, Rh: a conversion f16 -> f32
                }
                FloatClass::Add
            }
            _ => {
                if self.is_constant_move() {
                    return None;
                }
                let (_, b, c) = self.fma_parts()?;
                if c.len() == 1 && c[0] == "-RZ" {
                    FloatClass::Mul // a*b + (-0) is a*b exactly
                } else if prec == Precision::Half && b.iter().all(|x| is_one(x)) {
                    FloatClass::Add // HFMA2 a, 1, 1, c: f16x2 add on the FMA pipe
                } else {
                    FloatClass::Fma
                }
            }
        };
        Some((class, prec))
    }
}

impl SassKernel {
    /// Counts per (class, precision) of the float arithmetic instructions.
    pub fn float_counts(&self) -> BTreeMap<(FloatClass, Precision), usize> {
        let mut m = BTreeMap::new();
        for i in &self.instrs {
            if let Some(k) = i.float_class() {
                *m.entry(k).or_insert(0) += 1;
            }
        }
        m
    }

    /// Counts per opcode as printed with modifiers (`FFMA.FTZ`: 3), every instruction.
    pub fn opcode_counts(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for i in &self.instrs {
            *m.entry(i.full_opcode()).or_insert(0) += 1;
        }
        m
    }
}

fn is_zero_reg(op: &str) -> bool {
    matches!(op.trim_start_matches('-'), "RZ" | "URZ")
}

fn is_register(op: &str) -> bool {
    let s = op.trim_start_matches(['-', '!', '|']);
    s.starts_with('R') || s.starts_with("UR") || s.starts_with("c[") || s.starts_with("desc[")
}

fn is_one(op: &str) -> bool {
    op.parse::<f64>().map(|v| v == 1.0).unwrap_or(false)
}

/// Splits at commas outside brackets.
fn split_operands(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '[' | '{' | '(' => depth += 1,
            ']' | '}' | ')' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            out.push(cur.trim().to_string());
            cur.clear();
        } else {
            cur.push(ch);
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// `/*0060*/   @P0 FFMA R5, R0, R5, R7 ;   /* 0x... */` -> (addr, instruction text).
fn instruction_text(raw: &str) -> Option<(&str, &str)> {
    let t = raw.trim_start();
    let rest = t.strip_prefix("/*")?;
    let end = rest.find("*/")?;
    let addr = &rest[..end];
    if addr.is_empty() || !addr.chars().all(|c| c.is_ascii_hexdigit()) {
        return None; // an encoding comment (/* 0x000... */) on its own line
    }
    let body = rest[end + 2..].trim_start();
    // the instruction ends at ';' (cuobjdump/nvdisasm print one; `BRA 0x90;` has no space)
    let stop = body.find(';').unwrap_or(body.find("/*").unwrap_or(body.len()));
    Some((addr, body[..stop].trim()))
}

fn parse_instruction(addr: &str, text: &str, lineno: usize) -> Result<SassInstr, SassError> {
    let err = |m: String| SassError { line: lineno, message: m };
    let addr = u64::from_str_radix(addr, 16).map_err(|_| err(format!("bad address /*{addr}*/")))?;
    if text.is_empty() {
        return Err(err("an address with no instruction".into()));
    }
    let (guard, rest) = if text.starts_with('@') {
        let mut it = text.splitn(2, char::is_whitespace);
        let g = it.next().unwrap_or_default().to_string();
        (Some(g), it.next().unwrap_or_default().trim_start())
    } else {
        (None, text)
    };
    let mut it = rest.splitn(2, char::is_whitespace);
    let op = it.next().unwrap_or_default();
    if op.is_empty() || !op.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
        return Err(err(format!("expected an opcode, found {rest:?}")));
    }
    let mut names = op.split('.');
    let opcode = names.next().unwrap_or_default().to_string();
    let modifiers = names.map(str::to_string).collect();
    let operands = it.next().map(split_operands).unwrap_or_default();
    Ok(SassInstr { addr, guard, opcode, modifiers, operands, line: None })
}

/// Reads a `cuobjdump -sass` listing (of a cubin, or of a fatbin with several
/// architectures) or an `nvdisasm -c [-g]` listing into its kernels. Fails on text that
/// holds no function, or on a line inside a function that looks like an instruction but
/// does not parse.
pub fn parse(text: &str) -> Result<Vec<SassKernel>, SassError> {
    let mut kernels: Vec<SassKernel> = Vec::new();
    let mut arch = String::new();
    let mut line_info: Option<u32> = None;
    for (n, raw) in text.lines().enumerate() {
        let lineno = n + 1;
        let t = raw.trim();
        if let Some(a) = t.strip_prefix("arch = ") {
            arch = a.trim().to_string();
            continue;
        }
        if let Some(a) = t.strip_prefix("code for ") {
            arch = a.trim().to_string();
            continue;
        }
        if let Some(a) = t.strip_prefix(".target") {
            if arch.is_empty() {
                arch = a.trim().to_string();
            }
            continue;
        }
        if let Some(name) = t.strip_prefix("Function : ") {
            kernels.push(SassKernel { name: name.trim().to_string(), arch: arch.clone(), instrs: Vec::new() });
            line_info = None;
            continue;
        }
        // nvdisasm: a section label `.text.<name>:` opens a function
        if let Some(name) = t.strip_prefix(".text.").and_then(|s| s.strip_suffix(':')) {
            kernels.push(SassKernel { name: name.to_string(), arch: arch.clone(), instrs: Vec::new() });
            line_info = None;
            continue;
        }
        if let Some(rest) = t.strip_prefix("//## File ") {
            line_info =
                rest.rsplit("line ").next().and_then(|x| x.trim().split(|c: char| !c.is_ascii_digit()).next()).and_then(|x| x.parse().ok());
            continue;
        }
        if let Some((addr, body)) = instruction_text(raw) {
            let k = kernels.last_mut().ok_or(SassError { line: lineno, message: "instruction before any `Function :` header".into() })?;
            let mut ins = parse_instruction(addr, body, lineno)?;
            ins.line = line_info;
            k.instrs.push(ins);
        }
    }
    if kernels.is_empty() {
        return Err(SassError { line: 0, message: "no SASS function found (expected `cuobjdump -sass` or `nvdisasm -c` output)".into() });
    }
    Ok(kernels)
}

/// The kernels of one architecture (e.g. `sm_90`) from a parsed listing.
pub fn for_arch<'a>(kernels: &'a [SassKernel], arch: &str) -> Vec<&'a SassKernel> {
    kernels.iter().filter(|k| k.arch == arch).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // cuobjdump -sass of ptxas 13.5 -arch=sm_90 output (trimmed), two kernels
    const CUBIN: &str = r#"
	code for sm_90
	.target	sm_90

		Function : two_products
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;            /* 0x00000a00ff017b82 */
                                                                     /* 0x000ff00000000800 */
        /*0060*/                   FMUL R9, R6, R9 ;                 /* 0x0000000906097220 */
                                                                     /* 0x004fca0000400000 */
        /*0070*/                   FFMA R7, R0, R7, -R9 ;            /* 0x0000000700077223 */
                                                                     /* 0x000fca0000000809 */
        /*0080*/               @P0 FFMA.FTZ.SAT R7, -R0, R7, R9 ;    /* 0x0000000700077223 */
                                                                     /* 0x000fca0000000809 */
        /*0090*/                   STG.E desc[UR4][R2.64+0xc], R7 ;  /* 0x00000c0702007986 */
                                                                     /* 0x000fe2000c101904 */
        /*00a0*/                   EXIT ;                            /* 0x000000000000794d */
                                                                     /* 0x000fea0003800000 */
        /*00b0*/                   BRA 0xb0;                         /* 0xfffffffc00fc7947 */
                                                                     /* 0x000fc0000383ffff */
		..........


		Function : halves
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   HFMA2.MMA R5, -RZ, RZ, 1.875, 0.0001220703125 ; /* 0x3f800800ff057435 */
        /*0010*/                   HFMA2.MMA R0, R0, R7, -RZ ;       /* 0x0000000700007235 */
        /*0020*/                   HFMA2.MMA R0, R0, 1, 1, R7 ;      /* 0x3c003c0000007435 */
        /*0030*/                   HFMA2.BF16_V2 R0, -R0.H0_H0, R7.H0_H0, R6.H0_H0 ; /* 0x2000000700007231 */
        /*0040*/                   HADD2.F32 R0, -RZ, R2.H0_H0 ;     /* 0x20000002ff007230 */
        /*0050*/                   HADD2 R7, R0, R6 ;                /* 0x0000000600077230 */
        /*0060*/                   DFMA R2, -R2, R4, R6 ;            /* 0x000000040202722b */
        /*0070*/                   FMUL.M2 R7, R0, R7 ;              /* 0x0000000700077220 */
"#;

    #[test]
    fn reads_kernels_instructions_and_operands() {
        let ks = parse(CUBIN).unwrap();
        assert_eq!(ks.len(), 2);
        assert_eq!(ks[0].name, "two_products");
        assert_eq!(ks[0].arch, "sm_90");
        assert_eq!(ks[0].instrs.len(), 7);
        let f = &ks[0].instrs[2];
        assert_eq!((f.addr, f.opcode.as_str(), f.guard.as_deref()), (0x70, "FFMA", None));
        assert_eq!(f.operands, ["R7", "R0", "R7", "-R9"]);
        let g = &ks[0].instrs[3];
        assert_eq!(g.guard.as_deref(), Some("@P0"));
        assert_eq!(g.modifiers, ["FTZ", "SAT"]);
        assert_eq!(g.full_opcode(), "FFMA.FTZ.SAT");
        assert_eq!(ks[0].instrs[4].operands, ["desc[UR4][R2.64+0xc]", "R7"]);
        assert_eq!(ks[0].instrs[6].opcode, "BRA");
        assert_eq!(ks[0].instrs[6].operands, ["0xb0"]);
    }

    #[test]
    fn classifies_float_ops() {
        let ks = parse(CUBIN).unwrap();
        let c = ks[0].float_counts();
        assert_eq!(c.get(&(FloatClass::Fma, Precision::Single)), Some(&2));
        assert_eq!(c.get(&(FloatClass::Mul, Precision::Single)), Some(&1));
        assert_eq!(c.get(&(FloatClass::Add, Precision::Single)), None);
        let h: Vec<_> = ks[1].instrs.iter().map(|i| i.float_class()).collect();
        assert_eq!(
            h,
            [
                None,                                     // constant move
                Some((FloatClass::Mul, Precision::Half)), // f16x2 mul.rn: a*b + -0
                Some((FloatClass::Add, Precision::Half)), // a*1 + c
                Some((FloatClass::Fma, Precision::Half)), // bf16 fma
                None,                                     // HADD2.F32: a conversion
                Some((FloatClass::Add, Precision::Half)),
                Some((FloatClass::Fma, Precision::Double)),
                Some((FloatClass::Mul, Precision::Single)), // FMUL.M2
            ]
        );
        assert!(ks[1].instrs[0].is_constant_move());
        assert_eq!(ks[1].opcode_counts().get("HFMA2.MMA"), Some(&3));
    }

    #[test]
    fn fatbin_architectures_and_nvdisasm_line_info() {
        let fatbin = "\nFatbin elf code:\n================\narch = sm_80\n\n\tcode for sm_80\n\t\tFunction : k\n        /*0000*/                   FADD R0, R1, R2 ;   /* 0x0 */\n\nFatbin ptx code:\n================\narch = sm_90\n\nFatbin elf code:\n================\narch = sm_90\n\n\tcode for sm_90\n\t\tFunction : k\n        /*0000*/                   FFMA R0, R1, R2, R3 ;   /* 0x0 */\n";
        let ks = parse(fatbin).unwrap();
        assert_eq!(ks.len(), 2);
        let sm90 = for_arch(&ks, "sm_90");
        assert_eq!(sm90.len(), 1);
        assert_eq!(sm90[0].instrs[0].opcode, "FFMA");
        assert_eq!(for_arch(&ks, "sm_80")[0].instrs[0].opcode, "FADD");

        let nvd = "\t.target\tsm_90\n.text.k:\n\t//## File \"k.ptx\", line 30\n        /*0060*/                   FFMA R7, R0, R7, R9 ;\n        /*0070*/                   EXIT ;\n";
        let ks = parse(nvd).unwrap();
        assert_eq!((ks[0].name.as_str(), ks[0].arch.as_str()), ("k", "sm_90"));
        assert_eq!(ks[0].instrs[0].line, Some(30));
        assert_eq!(ks[0].instrs[1].line, Some(30));
    }

    /// The corpus's checked-in cuobjdump listing (ptxas 13.5 -arch=sm_90 of 15 corpus
    /// kernels, scripts/ptxas-contraction/gen.py) read back: every kernel's float opcode
    /// counts equal the ones expectations.json recorded through nvdisasm.
    #[test]
    fn corpus_sample_matches_the_expectations() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/ptx-corpus/contraction");
        let text = std::fs::read_to_string(format!("{dir}/sass-sample.txt")).unwrap();
        let exp: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(format!("{dir}/expectations.json")).unwrap()).unwrap();
        let ks = parse(&text).unwrap();
        assert_eq!(ks.len(), 15);
        const FLOAT: [&str; 10] = ["FFMA", "FMUL", "FADD", "DFMA", "DMUL", "DADD", "HFMA2", "HMUL2", "HADD2", "MUFU"];
        for k in &ks {
            assert_eq!(k.arch, "sm_90");
            let want = &exp["cases"][&k.name]["kernels"][&k.name]["sass_counts"];
            assert!(want.is_object(), "{} not in expectations.json", k.name);
            let mut got = BTreeMap::new();
            for i in k.instrs.iter().filter(|i| FLOAT.contains(&i.opcode.as_str()) && !i.is_constant_move()) {
                *got.entry(i.opcode.clone()).or_insert(0u64) += 1;
            }
            for op in FLOAT {
                assert_eq!(got.get(op).copied().unwrap_or(0), want[op].as_u64().unwrap_or(0), "{} {op}", k.name);
            }
        }
        // the classification on real listings: a fused pair is one Fma, f16x2 mul.rn a Mul
        let by = |n: &str| ks.iter().find(|k| k.name == n).unwrap().float_counts();
        assert_eq!(by("f32_mul_add").get(&(FloatClass::Fma, Precision::Single)), Some(&1));
        assert_eq!(by("two_products_ab_cd").get(&(FloatClass::Mul, Precision::Single)), Some(&1));
        assert_eq!(by("f16x2_rn").get(&(FloatClass::Mul, Precision::Half)), Some(&1));
        assert_eq!(by("f16x2_add_on_fma_pipe").get(&(FloatClass::Add, Precision::Half)), Some(&2));
        assert_eq!(by("f16x2_add_on_fma_pipe").get(&(FloatClass::Fma, Precision::Half)), None);
    }

    #[test]
    fn malformed_input_is_an_error_naming_the_line() {
        let e = parse("hello\nworld\n").unwrap_err();
        assert!(e.to_string().contains("no SASS function"), "{e}");
        let e = parse("        /*0000*/   FADD R0, R1, R2 ;\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("before any"), "{e}");
        let e = parse("\t\tFunction : k\n        /*0000*/   fadd r0 ;\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("expected an opcode"), "{e}");
        let e = parse("\t\tFunction : k\n        /*0010*/    ;\n").unwrap_err();
        assert!(e.message.contains("no instruction"), "{e}");
    }
}
