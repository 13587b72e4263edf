#!/usr/bin/env python3
"""Generates simtwin's PTX instruction suite: suite.ptx (one kernel per case) and
cases.txt (what the runner feeds each kernel), from the case table below.

Every case is one PTX instruction (or a short sequence: carry chains, contraction,
atomics) over inputs the runner generates per thread (runner.c: edge values of each
class, then deterministic random ones). Each thread i reads 4 input slots of 8 bytes at
in + 32*i and writes 2 output slots at out + 16*i (slots are zeroed first; a value
narrower than 8 bytes fills the low bytes). Recorded on an H200 (driver JIT of this
very PTX) and replayed on simtwin in PTX mode: tests/data/suite-h200.bin.zst.

  python3 kernels-host/ptx/suite/gen.py      # rewrites suite.ptx and cases.txt
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))

# input class -> (PTX register type, load type)
CLASS = {
    "f32": (".f32", ".f32"), "f64": (".f64", ".f64"),
    "f16": (".b16", ".b16"), "bf16": (".b16", ".b16"),
    "f16x2": (".b32", ".b32"), "bf16x2": (".b32", ".b32"),
    "u8": (".u16", ".u8"), "s8": (".s16", ".s8"),
    "u16": (".u16", ".u16"), "s16": (".s16", ".s16"),
    "u32": (".u32", ".u32"), "s32": (".s32", ".s32"),
    "u64": (".u64", ".u64"), "s64": (".s64", ".s64"),
    "b16": (".b16", ".b16"), "b32": (".b32", ".b32"), "b64": (".b64", ".b64"),
    "sh": (".u32", ".u32"),      # shift amounts / bit positions
    "lane": (".u32", ".u32"),    # lane numbers and deltas
    "lut": (".u32", ".u32"),     # 8-bit tables, byte selectors
    "pred": (".pred", ".u8"),
    "small": (".u32", ".u32"),   # 0..40
    "lut64": (".b64", ".u64"),   # small 64-bit keys (match.b64)
}
# output type -> (register type, store type)
OUT = {
    "f32": (".f32", ".f32"), "f64": (".f64", ".f64"), "b16": (".b16", ".b16"),
    "b32": (".b32", ".b32"), "b64": (".b64", ".b64"), "u8": (".u16", ".u8"),
    "s8": (".s16", ".s8"), "u16": (".u16", ".u16"), "s16": (".s16", ".s16"),
    "u32": (".u32", ".u32"), "s32": (".s32", ".s32"), "u64": (".u64", ".u64"),
    "s64": (".s64", ".s64"), "pred": (".pred", ".u8"),
}

cases = []  # (name, body lines using {a} {b} {c} {e} {d0} {d1}, input classes, output types, threads)


def case(name, instr, ins, outs, threads=None, sfu="-"):
    """One case; `sfu` names the special-function-unit form it tests (not device-exact
    until modelled: kernels-host/runtime/sfu_exact.txt)."""
    if threads is None:
        threads = {0: 64, 1: 512, 2: 1536, 3: 1024, 4: 1024}[len(ins)]
    cases.append((name, instr if isinstance(instr, list) else [instr], ins, outs, threads, sfu))


def cname(s):
    return s.replace(".", "_").replace("::", "_")


INT = ["s16", "u16", "s32", "u32", "s64", "u64"]
BITS = {"s16": "b16", "u16": "b16", "s32": "b32", "u32": "b32", "s64": "b64", "u64": "b64"}

# ---- integer arithmetic ---------------------------------------------------------------
for t in INT:
    case(f"add_{t}", f"add.{t} {{d0}}, {{a}}, {{b}};", [t, t], [t])
    case(f"sub_{t}", f"sub.{t} {{d0}}, {{a}}, {{b}};", [t, t], [t])
    case(f"mul_lo_{t}", f"mul.lo.{t} {{d0}}, {{a}}, {{b}};", [t, t], [t])
    case(f"mul_hi_{t}", f"mul.hi.{t} {{d0}}, {{a}}, {{b}};", [t, t], [t])
    case(f"min_{t}", f"min.{t} {{d0}}, {{a}}, {{b}};", [t, t], [t])
    case(f"max_{t}", f"max.{t} {{d0}}, {{a}}, {{b}};", [t, t], [t])
    case(f"div_{t}", f"div.{t} {{d0}}, {{a}}, {{b}};", [t, t], [t])
    case(f"rem_{t}", f"rem.{t} {{d0}}, {{a}}, {{b}};", [t, t], [t])
    case(f"mad_lo_{t}", f"mad.lo.{t} {{d0}}, {{a}}, {{b}}, {{c}};", [t, t, t], [t])
    case(f"mad_hi_{t}", f"mad.hi.{t} {{d0}}, {{a}}, {{b}}, {{c}};", [t, t, t], [t])
    case(f"sad_{t}", f"sad.{t} {{d0}}, {{a}}, {{b}}, {{c}};", [t, t, t], [t])
    if t.startswith("s"):
        case(f"abs_{t}", f"abs.{t} {{d0}}, {{a}};", [t], [t])
        case(f"neg_{t}", f"neg.{t} {{d0}}, {{a}};", [t], [t])
for t, w in [("s16", "s32"), ("u16", "u32"), ("s32", "s64"), ("u32", "u64")]:
    case(f"mul_wide_{t}", f"mul.wide.{t} {{d0}}, {{a}}, {{b}};", [t, t], [w])
    case(f"mad_wide_{t}", f"mad.wide.{t} {{d0}}, {{a}}, {{b}}, {{c}};", [t, t, w], [w])
case("add_sat_s32", "add.sat.s32 {d0}, {a}, {b};", ["s32", "s32"], ["s32"])
case("sub_sat_s32", "sub.sat.s32 {d0}, {a}, {b};", ["s32", "s32"], ["s32"])
case("mad_hi_sat_s32", "mad.hi.sat.s32 {d0}, {a}, {b}, {c};", ["s32", "s32", "s32"], ["s32"])
case("max_relu_s32", "max.relu.s32 {d0}, {a}, {b};", ["s32", "s32"], ["s32"])
case("min_relu_s32", "min.relu.s32 {d0}, {a}, {b};", ["s32", "s32"], ["s32"])
for t in ["s32", "u32"]:
    case(f"mul24_lo_{t}", f"mul24.lo.{t} {{d0}}, {{a}}, {{b}};", [t, t], [t])
    case(f"mul24_hi_{t}", f"mul24.hi.{t} {{d0}}, {{a}}, {{b}};", [t, t], [t])
    case(f"mad24_lo_{t}", f"mad24.lo.{t} {{d0}}, {{a}}, {{b}}, {{c}};", [t, t, t], [t])
# carry chains: 64-bit add/sub/mad from 32-bit halves (a,b,c,e: lo, hi, lo, hi)
case("addcc_chain", ["add.cc.u32 {d0}, {a}, {c};", "addc.u32 {d1}, {b}, {e};"], ["u32", "u32", "u32", "u32"], ["u32", "u32"])
case("addcc_chain_cc", ["add.cc.u32 {d0}, {a}, {c};", "addc.cc.u32 {d1}, {b}, {e};", "addc.u32 %t0, 0, 0;", "add.u32 {d1}, {d1}, %t0;"],
     ["u32", "u32", "u32", "u32"], ["u32", "u32"])
case("subcc_chain", ["sub.cc.u32 {d0}, {a}, {c};", "subc.u32 {d1}, {b}, {e};"], ["u32", "u32", "u32", "u32"], ["u32", "u32"])
case("subcc_chain_cc", ["sub.cc.u32 {d0}, {a}, {c};", "subc.cc.u32 {d1}, {b}, {e};", "subc.u32 %t0, 0, 0;", "xor.b32 {d1}, {d1}, %t0;"],
     ["u32", "u32", "u32", "u32"], ["u32", "u32"])
case("madcc_chain", ["mad.lo.cc.u32 {d0}, {a}, {b}, {c};", "madc.hi.u32 {d1}, {a}, {b}, {e};"], ["u32", "u32", "u32", "u32"], ["u32", "u32"])
case("addcc_u64", ["add.cc.u64 {d0}, {a}, {b};", "addc.u64 {d1}, {c}, 0;"], ["u64", "u64", "u64"], ["u64", "u64"])

# ---- bit operations ----------------------------------------------------------------------
for t in ["b32", "b64"]:
    case(f"popc_{t}", f"popc.{t} {{d0}}, {{a}};", [t], ["u32"])
    case(f"clz_{t}", f"clz.{t} {{d0}}, {{a}};", [t], ["u32"])
    case(f"brev_{t}", f"brev.{t} {{d0}}, {{a}};", [t], [t])
    case(f"bfi_{t}", f"bfi.{t} {{d0}}, {{a}}, {{b}}, {{c}}, {{e}};", [t, t, "sh", "sh"], [t])
for t in ["s32", "u32", "s64", "u64"]:
    case(f"bfind_{t}", f"bfind.{t} {{d0}}, {{a}};", [t], ["u32"])
    case(f"bfind_shiftamt_{t}", f"bfind.shiftamt.{t} {{d0}}, {{a}};", [t], ["u32"])
    case(f"bfe_{t}", f"bfe.{t} {{d0}}, {{a}}, {{b}}, {{c}};", [t, "sh", "sh"], [t])
case("fns_b32", "fns.b32 {d0}, {a}, {b}, {c};", ["b32", "small", "s32"], ["u32"])
case("bmsk_wrap", "bmsk.wrap.b32 {d0}, {a}, {b};", ["sh", "sh"], ["b32"])
case("bmsk_clamp", "bmsk.clamp.b32 {d0}, {a}, {b};", ["sh", "sh"], ["b32"])
for t in ["s32", "u32"]:
    for m in ["wrap", "clamp"]:
        case(f"szext_{m}_{t}", f"szext.{m}.{t} {{d0}}, {{a}}, {{b}};", ["u32", "sh"], [t])
for ta in ["u32", "s32"]:
    for tb in ["u32", "s32"]:
        dt = "s32" if "s32" in (ta, tb) else "u32"
        case(f"dp4a_{ta}_{tb}", f"dp4a.{ta}.{tb} {{d0}}, {{a}}, {{b}}, {{c}};", ["b32", "b32", "b32"], [dt])
        case(f"dp2a_lo_{ta}_{tb}", f"dp2a.lo.{ta}.{tb} {{d0}}, {{a}}, {{b}}, {{c}};", ["b32", "b32", "b32"], [dt])
        case(f"dp2a_hi_{ta}_{tb}", f"dp2a.hi.{ta}.{tb} {{d0}}, {{a}}, {{b}}, {{c}};", ["b32", "b32", "b32"], [dt])
for t in ["b16", "b32", "b64"]:
    for op in ["and", "or", "xor"]:
        case(f"{op}_{t}", f"{op}.{t} {{d0}}, {{a}}, {{b}};", [t, t], [t])
    case(f"not_{t}", f"not.{t} {{d0}}, {{a}};", [t], [t])
    case(f"cnot_{t}", f"cnot.{t} {{d0}}, {{a}};", [t], [t])
    case(f"shl_{t}", f"shl.{t} {{d0}}, {{a}}, {{b}};", [t, "sh"], [t])
    case(f"shr_{t}", f"shr.{t} {{d0}}, {{a}}, {{b}};", [t, "sh"], [t])
for t in ["s16", "s32", "s64", "u32"]:
    case(f"shr_{t}", f"shr.{t} {{d0}}, {{a}}, {{b}};", [t, "sh"], [t])
for op in ["and", "or", "xor"]:
    case(f"{op}_pred", f"{op}.pred {{d0}}, {{a}}, {{b}};", ["pred", "pred"], ["pred"])
case("not_pred", "not.pred {d0}, {a};", ["pred"], ["pred"])
for lut in [0x00, 0x80, 0x96, 0xe8, 0xfe, 0xca, 0x3c, 0xff]:
    case(f"lop3_{lut:02x}", f"lop3.b32 {{d0}}, {{a}}, {{b}}, {{c}}, {lut};", ["b32", "b32", "b32"], ["b32"])
for d in ["l", "r"]:
    for m in ["wrap", "clamp"]:
        case(f"shf_{d}_{m}", f"shf.{d}.{m}.b32 {{d0}}, {{a}}, {{b}}, {{c}};", ["b32", "b32", "sh"], ["b32"])
case("prmt", "prmt.b32 {d0}, {a}, {b}, {c};", ["b32", "b32", "b32"], ["b32"])
for m in ["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"]:
    case(f"prmt_{m}", f"prmt.b32.{m} {{d0}}, {{a}}, {{b}}, {{c}};", ["b32", "b32", "lut"], ["b32"])

# ---- comparisons and selection -------------------------------------------------------
ICMP = ["eq", "ne", "lt", "le", "gt", "ge"]
UCMP = ["lo", "ls", "hi", "hs"]
FCMP = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]
for t in ["s32", "u32", "s64", "u64", "s16", "u16"]:
    for c in ICMP:
        case(f"setp_{c}_{t}", f"setp.{c}.{t} {{d0}}, {{a}}, {{b}};", [t, t], ["pred"])
for t in ["u32", "u64"]:
    for c in UCMP:
        case(f"setp_{c}_{t}", f"setp.{c}.{t} {{d0}}, {{a}}, {{b}};", [t, t], ["pred"])
for t in ["f32", "f64"]:
    for c in FCMP:
        case(f"setp_{c}_{t}", f"setp.{c}.{t} {{d0}}, {{a}}, {{b}};", [t, t], ["pred"])
for c in ["lt", "equ", "gtu"]:
    case(f"setp_{c}_ftz_f32", f"setp.{c}.ftz.f32 {{d0}}, {{a}}, {{b}};", ["f32", "f32"], ["pred"])
for b in ["and", "or", "xor"]:
    case(f"setp_lt_{b}_s32", f"setp.lt.{b}.s32 {{d0}}|{{d1}}, {{a}}, {{b}}, {{c}};", ["s32", "s32", "pred"], ["pred", "pred"])
    case(f"setp_ltu_{b}_f32", f"setp.ltu.{b}.f32 {{d0}}|{{d1}}, {{a}}, {{b}}, !{{c}};", ["f32", "f32", "pred"], ["pred", "pred"])
case("setp_pair_f64", "setp.geu.f64 {d0}|{d1}, {a}, {b};", ["f64", "f64"], ["pred", "pred"])
for c in ["lt", "nan", "gtu"]:
    case(f"setp_{c}_f16", f"setp.{c}.f16 {{d0}}, {{a}}, {{b}};", ["f16", "f16"], ["pred"])
    case(f"setp_{c}_f16x2", f"setp.{c}.f16x2 {{d0}}|{{d1}}, {{a}}, {{b}};", ["f16x2", "f16x2"], ["pred", "pred"])
    case(f"setp_{c}_bf16", f"setp.{c}.bf16 {{d0}}, {{a}}, {{b}};", ["bf16", "bf16"], ["pred"])
for t in ["b32", "b64", "f32", "f64", "b16"]:
    case(f"selp_{t}", f"selp.{t} {{d0}}, {{a}}, {{b}}, {{c}};", [t, t, "pred"], [t])
case("slct_s32_s32", "slct.s32.s32 {d0}, {a}, {b}, {c};", ["s32", "s32", "s32"], ["s32"])
case("slct_f32_f32", "slct.f32.f32 {d0}, {a}, {b}, {c};", ["f32", "f32", "f32"], ["f32"])
case("slct_ftz_u32_f32", "slct.ftz.u32.f32 {d0}, {a}, {b}, {c};", ["u32", "u32", "f32"], ["u32"])
for c in ["lt", "equ", "ne"]:
    case(f"set_{c}_u32_f32", f"set.{c}.u32.f32 {{d0}}, {{a}}, {{b}};", ["f32", "f32"], ["u32"])
for c in ["lt", "eq", "ne"]:
    case(f"set_{c}_f32_s32", f"set.{c}.f32.s32 {{d0}}, {{a}}, {{b}};", ["s32", "s32"], ["f32"])
case("set_lt_and_s32_u32", "set.lt.and.s32.u32 {d0}, {a}, {b}, {c};", ["u32", "u32", "pred"], ["s32"])
# set's half-precision forms (cuda_fp16.hpp's hsin/hcos write `set.eq.f16.f16`).
for c in ["eq", "lt", "nan", "geu"]:
    case(f"set_{c}_f16_f16", f"set.{c}.f16.f16 {{d0}}, {{a}}, {{b}};", ["f16", "f16"], ["f16"])
    case(f"set_{c}_u32_f16x2", f"set.{c}.u32.f16x2 {{d0}}, {{a}}, {{b}};", ["f16x2", "f16x2"], ["u32"])
    case(f"set_{c}_f16x2_f16x2", f"set.{c}.f16x2.f16x2 {{d0}}, {{a}}, {{b}};", ["f16x2", "f16x2"], ["f16x2"])
    case(f"set_{c}_bf16_bf16", f"set.{c}.bf16.bf16 {{d0}}, {{a}}, {{b}};", ["bf16", "bf16"], ["bf16"])
case("set_lt_ftz_s16_f16", "set.lt.ftz.s16.f16 {d0}, {a}, {b};", ["f16", "f16"], ["s16"])
case("set_gt_u32_f16", "set.gt.u32.f16 {d0}, {a}, {b};", ["f16", "f16"], ["u32"])
case("set_le_f16_f32", "set.le.f16.f32 {d0}, {a}, {b};", ["f32", "f32"], ["f16"])
case("set_ltu_or_f16x2_f16x2", "set.ltu.or.f16x2.f16x2 {d0}, {a}, {b}, !{c};", ["f16x2", "f16x2", "pred"], ["f16x2"])
for t in ["f16", "bf16", "f16x2", "bf16x2"]:
    case(f"fma_rn_relu_{t}", f"fma.rn.relu.{t} {{d0}}, {{a}}, {{b}}, {{c}};", [t, t, t], [t])
case("set_ne_bf16x2_bf16x2", "set.ne.bf16x2.bf16x2 {d0}, {a}, {b};", ["bf16x2", "bf16x2"], ["bf16x2"])

# ---- floating point -------------------------------------------------------------------
RND = ["rn", "rz", "rm", "rp"]
for t in ["f32", "f64"]:
    for r in RND:
        for op in ["add", "sub", "mul"]:
            case(f"{op}_{r}_{t}", f"{op}.{r}.{t} {{d0}}, {{a}}, {{b}};", [t, t], [t])
        case(f"fma_{r}_{t}", f"fma.{r}.{t} {{d0}}, {{a}}, {{b}}, {{c}};", [t, t, t], [t])
        case(f"div_{r}_{t}", f"div.{r}.{t} {{d0}}, {{a}}, {{b}};", [t, t], [t])
        case(f"sqrt_{r}_{t}", f"sqrt.{r}.{t} {{d0}}, {{a}};", [t], [t])
        case(f"rcp_{r}_{t}", f"rcp.{r}.{t} {{d0}}, {{a}};", [t], [t])
    for op in ["abs", "neg"]:
        case(f"{op}_{t}", f"{op}.{t} {{d0}}, {{a}};", [t], [t])
    for op in ["min", "max"]:
        case(f"{op}_{t}", f"{op}.{t} {{d0}}, {{a}}, {{b}};", [t, t], [t])
    case(f"copysign_{t}", f"copysign.{t} {{d0}}, {{a}}, {{b}};", [t, t], [t])
    for p in ["finite", "infinite", "number", "notanumber", "normal", "subnormal"]:
        case(f"testp_{p}_{t}", f"testp.{p}.{t} {{d0}}, {{a}};", [t], ["pred"])
    case(f"mov_{t}", f"mov.{t} {{d0}}, {{a}};", [t], [t])
for r in RND:
    for op in ["add", "sub", "mul"]:
        case(f"{op}_{r}_ftz_f32", f"{op}.{r}.ftz.f32 {{d0}}, {{a}}, {{b}};", ["f32", "f32"], ["f32"])
    case(f"fma_{r}_ftz_f32", f"fma.{r}.ftz.f32 {{d0}}, {{a}}, {{b}}, {{c}};", ["f32", "f32", "f32"], ["f32"])
    case(f"div_{r}_ftz_f32", f"div.{r}.ftz.f32 {{d0}}, {{a}}, {{b}};", ["f32", "f32"], ["f32"])
    case(f"sqrt_{r}_ftz_f32", f"sqrt.{r}.ftz.f32 {{d0}}, {{a}};", ["f32"], ["f32"])
    case(f"rcp_{r}_ftz_f32", f"rcp.{r}.ftz.f32 {{d0}}, {{a}};", ["f32"], ["f32"])
for op in ["add", "sub", "mul"]:
    case(f"{op}_rn_sat_f32", f"{op}.rn.sat.f32 {{d0}}, {{a}}, {{b}};", ["f32", "f32"], ["f32"])
    case(f"{op}_rn_ftz_sat_f32", f"{op}.rn.ftz.sat.f32 {{d0}}, {{a}}, {{b}};", ["f32", "f32"], ["f32"])
case("fma_rn_sat_f32", "fma.rn.sat.f32 {d0}, {a}, {b}, {c};", ["f32", "f32", "f32"], ["f32"])
case("mad_rn_f32", "mad.rn.f32 {d0}, {a}, {b}, {c};", ["f32", "f32", "f32"], ["f32"])
case("mad_rn_f64", "mad.rn.f64 {d0}, {a}, {b}, {c};", ["f64", "f64", "f64"], ["f64"])
for op in ["abs", "neg"]:
    case(f"{op}_ftz_f32", f"{op}.ftz.f32 {{d0}}, {{a}};", ["f32"], ["f32"])
for op in ["min", "max"]:
    case(f"{op}_ftz_f32", f"{op}.ftz.f32 {{d0}}, {{a}}, {{b}};", ["f32", "f32"], ["f32"])
    case(f"{op}_NaN_f32", f"{op}.NaN.f32 {{d0}}, {{a}}, {{b}};", ["f32", "f32"], ["f32"])
# the special-function unit (not device-exact until modelled)
for f in ["rcp.approx.f32", "rcp.approx.ftz.f32", "sqrt.approx.f32", "sqrt.approx.ftz.f32", "rsqrt.approx.f32",
          "rsqrt.approx.ftz.f32", "sin.approx.f32", "sin.approx.ftz.f32", "cos.approx.f32", "cos.approx.ftz.f32",
          "lg2.approx.f32", "lg2.approx.ftz.f32", "ex2.approx.f32", "ex2.approx.ftz.f32", "tanh.approx.f32"]:
    case(cname(f), f"{f} {{d0}}, {{a}};", ["f32"], ["f32"], sfu=f)
case("rcp_approx_ftz_f64", "rcp.approx.ftz.f64 {d0}, {a};", ["f64"], ["f64"], sfu="rcp.approx.ftz.f64")
case("rsqrt_approx_f64", "rsqrt.approx.f64 {d0}, {a};", ["f64"], ["f64"], sfu="rsqrt.approx.f64")
for f in ["div.approx.f32", "div.approx.ftz.f32", "div.full.f32", "div.full.ftz.f32"]:
    case(cname(f), f"{f} {{d0}}, {{a}}, {{b}};", ["f32", "f32"], ["f32"], sfu=f)
# contraction (ptxas fuses unmodified mul + add/sub)
case("contract_mul_add_f32", ["mul.f32 %t1, {a}, {b};", "add.f32 {d0}, %t1, {c};"], ["f32", "f32", "f32"], ["f32"])
case("contract_add_mul_f32", ["mul.f32 %t1, {a}, {b};", "add.f32 {d0}, {c}, %t1;"], ["f32", "f32", "f32"], ["f32"])
case("contract_mul_sub_f32", ["mul.f32 %t1, {a}, {b};", "sub.f32 {d0}, %t1, {c};"], ["f32", "f32", "f32"], ["f32"])
case("contract_sub_mul_f32", ["mul.f32 %t1, {a}, {b};", "sub.f32 {d0}, {c}, %t1;"], ["f32", "f32", "f32"], ["f32"])
case("contract_mul_add_f64", ["mul.f64 %t3, {a}, {b};", "add.f64 {d0}, %t3, {c};"], ["f64", "f64", "f64"], ["f64"])
case("contract_mul_add_ftz_f32", ["mul.ftz.f32 %t1, {a}, {b};", "add.ftz.f32 {d0}, %t1, {c};"], ["f32", "f32", "f32"], ["f32"])
case("nocontract_rn_f32", ["mul.rn.f32 %t1, {a}, {b};", "add.rn.f32 {d0}, %t1, {c};"], ["f32", "f32", "f32"], ["f32"])
case("contract_two_uses_f32", ["mul.f32 %t1, {a}, {b};", "add.f32 {d0}, %t1, {c};", "add.f32 {d1}, %t1, {a};"], ["f32", "f32", "f32"], ["f32", "f32"])

# ---- half precision -----------------------------------------------------------------
for t in ["f16", "f16x2", "bf16", "bf16x2"]:
    for op in ["add", "sub", "mul"]:
        case(f"{op}_rn_{t}", f"{op}.rn.{t} {{d0}}, {{a}}, {{b}};", [t, t], ["b32" if "x2" in t else "b16"])
    case(f"fma_rn_{t}", f"fma.rn.{t} {{d0}}, {{a}}, {{b}}, {{c}};", [t, t, t], ["b32" if "x2" in t else "b16"])
    for op in ["min", "max"]:
        case(f"{op}_{t}", f"{op}.{t} {{d0}}, {{a}}, {{b}};", [t, t], ["b32" if "x2" in t else "b16"])
    for op in ["abs", "neg"]:
        case(f"{op}_{t}", f"{op}.{t} {{d0}}, {{a}};", [t], ["b32" if "x2" in t else "b16"])
for t in ["f16", "f16x2"]:
    ot = "b32" if "x2" in t else "b16"
    case(f"add_rn_ftz_{t}", f"add.rn.ftz.{t} {{d0}}, {{a}}, {{b}};", [t, t], [ot])
    case(f"add_rn_sat_{t}", f"add.rn.sat.{t} {{d0}}, {{a}}, {{b}};", [t, t], [ot])
    case(f"fma_rn_sat_{t}", f"fma.rn.sat.{t} {{d0}}, {{a}}, {{b}}, {{c}};", [t, t, t], [ot])
    case(f"min_NaN_{t}", f"min.NaN.{t} {{d0}}, {{a}}, {{b}};", [t, t], [ot])

# ---- conversions ---------------------------------------------------------------------
INTS = ["s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"]
BITS_OF = {"s8": 8, "u8": 8, "s16": 16, "u16": 16, "s32": 32, "u32": 32, "s64": 64, "u64": 64}


def fits(d, s):
    """Every value of integer type s is representable in d (cvt.sat is then illegal)."""
    if d[0] == s[0]:
        return BITS_OF[d] >= BITS_OF[s]
    if d[0] == "s":
        return BITS_OF[d] > BITS_OF[s]
    return False


for d in INTS:
    for s in INTS:
        if d != s:
            case(f"cvt_{d}_{s}", f"cvt.{d}.{s} {{d0}}, {{a}};", [s], [d])
            if not fits(d, s):
                case(f"cvt_sat_{d}_{s}", f"cvt.sat.{d}.{s} {{d0}}, {{a}};", [s], [d])
for d in INTS:
    for s in ["f32", "f64"]:
        for r in ["rni", "rzi", "rmi", "rpi"]:
            case(f"cvt_{r}_{d}_{s}", f"cvt.{r}.{d}.{s} {{d0}}, {{a}};", [s], [d])
    case(f"cvt_rzi_ftz_{d}_f32", f"cvt.rzi.ftz.{d}.f32 {{d0}}, {{a}};", ["f32"], [d])
for s in ["s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"]:
    for d in ["f32", "f64"]:
        for r in RND:
            case(f"cvt_{r}_{d}_{s}", f"cvt.{r}.{d}.{s} {{d0}}, {{a}};", [s], [d])
for r in RND:
    case(f"cvt_{r}_f32_f64", f"cvt.{r}.f32.f64 {{d0}}, {{a}};", ["f64"], ["f32"])
    case(f"cvt_{r}_ftz_f32_f64", f"cvt.{r}.ftz.f32.f64 {{d0}}, {{a}};", ["f64"], ["f32"])
    case(f"cvt_{r}_f16_f32", f"cvt.{r}.f16.f32 {{d0}}, {{a}};", ["f32"], ["b16"])
    case(f"cvt_{r}_f16_f64", f"cvt.{r}.f16.f64 {{d0}}, {{a}};", ["f64"], ["b16"])
    case(f"cvt_{r}_bf16_f32", f"cvt.{r}.bf16.f32 {{d0}}, {{a}};", ["f32"], ["b16"])
for r in ["rni", "rzi", "rmi", "rpi"]:
    case(f"cvt_{r}_f32_f32", f"cvt.{r}.f32.f32 {{d0}}, {{a}};", ["f32"], ["f32"])
    case(f"cvt_{r}_f64_f64", f"cvt.{r}.f64.f64 {{d0}}, {{a}};", ["f64"], ["f64"])
    case(f"cvt_{r}_ftz_f32_f32", f"cvt.{r}.ftz.f32.f32 {{d0}}, {{a}};", ["f32"], ["f32"])
for r in ["rni", "rzi", "rmi", "rpi"]:
    case(f"cvt_{r}_f16_f16", f"cvt.{r}.f16.f16 {{d0}}, {{a}};", ["f16"], ["b16"])
    case(f"cvt_{r}_bf16_bf16", f"cvt.{r}.bf16.bf16 {{d0}}, {{a}};", ["bf16"], ["b16"])
case("cvt_f64_f32", "cvt.f64.f32 {d0}, {a};", ["f32"], ["f64"])
case("cvt_ftz_f64_f32", "cvt.ftz.f64.f32 {d0}, {a};", ["f32"], ["f64"])
case("cvt_sat_f32_f32", "cvt.sat.f32.f32 {d0}, {a};", ["f32"], ["f32"])
case("cvt_ftz_sat_f32_f32", "cvt.ftz.sat.f32.f32 {d0}, {a};", ["f32"], ["f32"])
case("cvt_rn_sat_f32_f64", "cvt.rn.sat.f32.f64 {d0}, {a};", ["f64"], ["f32"])
case("cvt_f32_f16", "cvt.f32.f16 {d0}, {a};", ["f16"], ["f32"])
case("cvt_f64_f16", "cvt.f64.f16 {d0}, {a};", ["f16"], ["f64"])
case("cvt_f32_bf16", "cvt.f32.bf16 {d0}, {a};", ["bf16"], ["f32"])
case("cvt_rn_f16x2_f32", "cvt.rn.f16x2.f32 {d0}, {a}, {b};", ["f32", "f32"], ["b32"])
case("cvt_rn_bf16x2_f32", "cvt.rn.bf16x2.f32 {d0}, {a}, {b};", ["f32", "f32"], ["b32"])
case("cvt_rna_tf32_f32", "cvt.rna.tf32.f32 {d0}, {a};", ["f32"], ["b32"])
for d in ["s32", "u32", "s16", "u8"]:
    case(f"cvt_rni_{d}_f16", f"cvt.rni.{d}.f16 {{d0}}, {{a}};", ["f16"], [d])
case("cvt_rn_f16_s32", "cvt.rn.f16.s32 {d0}, {a};", ["s32"], ["b16"])

# ---- moves ----------------------------------------------------------------------------
case("mov_pack_b64", "mov.b64 {d0}, {{{a}, {b}}};", ["b32", "b32"], ["b64"])
case("mov_unpack_b64", "mov.b64 {{{d0}, {d1}}}, {a};", ["b64"], ["b32", "b32"])
case("mov_pack_b32", "mov.b32 {d0}, {{{a}, {b}}};", ["b16", "b16"], ["b32"])

# ---- warp collectives, special registers (all lanes active, full mask) -----------------
for m in ["up", "down", "bfly", "idx"]:
    case(f"shfl_{m}_w32", f"shfl.sync.{m}.b32 {{d0}}|{{d1}}, {{a}}, {{b}}, {'0' if m == 'up' else '31'}, -1;", ["b32", "lane"], ["b32", "pred"])
    case(f"shfl_{m}_w8", f"shfl.sync.{m}.b32 {{d0}}|{{d1}}, {{a}}, {{b}}, {'0x1800' if m == 'up' else '0x181f'}, -1;", ["b32", "lane"], ["b32", "pred"])
    case(f"shfl_{m}_anyc", f"shfl.sync.{m}.b32 {{d0}}|{{d1}}, {{a}}, {{b}}, {{c}}, -1;", ["b32", "lane", "b32"], ["b32", "pred"])
case("vote_ballot", "vote.sync.ballot.b32 {d0}, {a}, -1;", ["pred"], ["b32"])
case("vote_any", "vote.sync.any.pred {d0}, {a}, -1;", ["pred"], ["pred"])
case("vote_all", "vote.sync.all.pred {d0}, {a}, -1;", ["pred"], ["pred"])
case("vote_uni", "vote.sync.uni.pred {d0}, {a}, -1;", ["pred"], ["pred"])
case("vote_ballot_not", "vote.sync.ballot.b32 {d0}, !{a}, -1;", ["pred"], ["b32"])
case("match_any_b32", "match.any.sync.b32 {d0}, {a}, -1;", ["small"], ["b32"])
case("match_all_b32", "match.all.sync.b32 {d0}|{d1}, {a}, -1;", ["small"], ["b32", "pred"])
case("match_any_b64", "match.any.sync.b64 {d0}, {a}, -1;", ["lut64"], ["b32"])
for op, t in [("add", "u32"), ("add", "s32"), ("min", "u32"), ("min", "s32"), ("max", "u32"), ("max", "s32"), ("and", "b32"), ("or", "b32"), ("xor", "b32")]:
    case(f"redux_{op}_{t}", f"redux.sync.{op}.{t} {{d0}}, {{a}}, -1;", [t], [t])
case("activemask", "activemask.b32 {d0};", [], ["b32"], 512)
case("laneid", "mov.u32 {d0}, %laneid;", [], ["u32"], 512)
for m in ["eq", "le", "lt", "ge", "gt"]:
    case(f"lanemask_{m}", f"mov.u32 {{d0}}, %lanemask_{m};", [], ["u32"], 512)
case("warpid_ntid", ["mov.u32 {d0}, %ntid.x;", "mov.u32 {d1}, %nctaid.x;"], [], ["u32", "u32"], 512)
case("bar_red_popc", "bar.red.popc.u32 {d0}, 0, {a};", ["pred"], ["u32"])
case("bar_red_and", "bar.red.and.pred {d0}, 0, {a};", ["pred"], ["pred"])
case("bar_red_or", "bar.red.or.pred {d0}, 0, {a};", ["pred"], ["pred"])

# ---- atomics on the thread's own slot: d0 = old value, d1 = memory after --------------
ATOM = [("add", "u32"), ("add", "s32"), ("add", "u64"), ("add", "f32"), ("add", "f64"), ("min", "u32"), ("min", "s32"),
        ("max", "u32"), ("max", "s32"), ("min", "u64"), ("max", "s64"), ("and", "b32"), ("or", "b32"), ("xor", "b32"),
        ("exch", "b32"), ("exch", "b64"), ("inc", "u32"), ("dec", "u32"), ("add", "f16x2"), ("add", "bf16x2")]
for op, t in ATOM:
    suffix = ".noftz" if t in ("f16x2", "bf16x2") else ""
    case(f"atom_{op}_{t}", ["st.global.{st} [{slot}], {a};", f"atom.global.{op}{suffix}.{t} {{d0}}, [{{slot}}], {{b}};", "ld.global.{st} {d1}, [{slot}];"],
         [t, t], [{"f16x2": "b32", "bf16x2": "b32"}.get(t, t)] * 2)
for t in ["b32", "b64"]:
    case(f"atom_cas_{t}", ["st.global.{st} [{slot}], {a};", f"atom.global.cas.{t} {{d0}}, [{{slot}}], {{b}}, {{c}};", "ld.global.{st} {d1}, [{slot}];"],
         [t, t, t], [t, t])


# ---- emission -----------------------------------------------------------------------------
def regtype_out(t):
    if t in OUT:
        return OUT[t]
    return CLASS[t]


def kernel(name, body, ins, outs):
    regs = ["%ia", "%ib", "%ic", "%ie"]
    L = [f".visible .entry {name}(.param .u64 pin, .param .u64 pout, .param .u32 pn)", "{"]
    L.append("\t.reg .pred %p<4>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<12>;")
    L.append("\t.reg .u32 %t0;\n\t.reg .f32 %t1;\n\t.reg .f64 %t3;\n\t.reg .u16 %t16;\n\t.reg .u32 %t17;")
    for k, cls in enumerate(ins):
        L.append(f"\t.reg {CLASS[cls][0]} {regs[k]};")
    for k, t in enumerate(outs):
        L.append(f"\t.reg {regtype_out(t)[0]} %o{k};")
    L += ["\tld.param.u64 %rd1, [pin];", "\tld.param.u64 %rd2, [pout];", "\tld.param.u32 %r1, [pn];",
          "\tmov.u32 %r2, %ctaid.x;", "\tmov.u32 %r3, %ntid.x;", "\tmov.u32 %r4, %tid.x;",
          "\tmad.lo.u32 %r5, %r2, %r3, %r4;", "\tsetp.ge.u32 %p1, %r5, %r1;", "\t@%p1 bra DONE;",
          "\tmul.wide.u32 %rd3, %r5, 32;", "\tadd.u64 %rd4, %rd1, %rd3;", "\tmul.wide.u32 %rd5, %r5, 16;",
          "\tadd.u64 %rd6, %rd2, %rd5;", "\tadd.u64 %rd9, %rd6, 8;"]
    for k, cls in enumerate(ins):
        if cls == "pred":
            L.append(f"\tld.global.u8 %t16, [%rd4+{8 * k}];")
            L.append(f"\tsetp.ne.u16 {regs[k]}, %t16, 0;")
        else:
            L.append(f"\tld.global{CLASS[cls][1]} {regs[k]}, [%rd4+{8 * k}];")
    st = CLASS[ins[0]][1] if ins else ".b32"
    subst = {"a": "%ia", "b": "%ib", "c": "%ic", "e": "%ie", "d0": "%o0", "d1": "%o1", "slot": "%rd9", "st": st[1:]}
    for line in body:
        L.append("\t" + line.format(**subst))
    for k, t in enumerate(outs):
        rt, stt = regtype_out(t)
        if rt == ".pred":
            L.append(f"\tselp.u32 %t17, 1, 0, %o{k};")
            L.append(f"\tst.global.u8 [%rd6+{8 * k}], %t17;")
        else:
            L.append(f"\tst.global{stt} [%rd6+{8 * k}], %o{k};")
    L += ["DONE:", "\tret;", "}", ""]
    return "\n".join(L)


def main():
    names = set()
    out = ["// simtwin PTX instruction suite (generated by gen.py: do not edit)", ".version 8.0", ".target sm_90",
           ".address_size 64", ""]
    lines = []
    for name, body, ins, outs, threads, sfu in cases:
        assert name not in names, name
        names.add(name)
        out.append(kernel(name, body, ins, outs))
        block = min(threads, 256)
        assert threads % block == 0, name
        lines.append(f"{name} {threads} {block} {','.join(ins) if ins else '-'} {','.join(outs)} {sfu}")
    with open(os.path.join(HERE, "suite.ptx"), "w") as f:
        f.write("\n".join(out))
    with open(os.path.join(HERE, "cases.txt"), "w") as f:
        f.write("# kernel threads block input-classes output-types sfu-form (generated by gen.py)\n")
        f.write("\n".join(lines) + "\n")
    print(f"{len(cases)} cases")


if __name__ == "__main__":
    main()
