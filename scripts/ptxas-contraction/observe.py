"""What ptxas did, per PTX line: the SASS instructions each PTX line produced (from line
info) and, for every fused add/sub, which PTX multiply it absorbed (traced through the
SASS registers back to the PTX values the multiplicands hold)."""
import re, struct

import ptxparse
import sasslib

_DEFAULT = {"FFMA": "fma", "DFMA": "fma", "HFMA2": "fma", "FMUL": "mul", "DMUL": "mul", "HMUL2": "mul",
            "FADD": "add", "DADD": "add", "HADD2": "add"}


def _class_tag(s):
    """'=add' / '=mul' when an FMA-kind instruction computes something else (HFMA2 a, 1, 1, c
    is an add; an FMA with a -RZ addend a multiply); '' otherwise."""
    c = sasslib.float_class(s)
    d = _DEFAULT.get(s.opcode)
    return f"={c}" if c and d and c != d else ""

FMA_OPS = {"FFMA", "DFMA", "HFMA2", "FFMA32I", "HFMA2_32I"}
FLOAT_ARITH = {"mul", "add", "sub", "fma", "mad", "neg", "abs", "div", "rcp", "sqrt", "rsqrt",
               "min", "max", "ex2", "lg2", "sin", "cos", "tanh", "cvt", "testp", "copysign", "selp", "setp", "mov"}
NON_DEST = {"STG", "STS", "STL", "ST", "RED", "BRA", "EXIT", "RET", "CALL", "BAR", "NOP", "BSSY", "BSYNC",
            "WARPSYNC", "MEMBAR", "ERRBAR", "CCTL", "DEPBAR", "ISETP", "FSETP", "DSETP", "HSETP2", "PSETP", "ATOMG"}
FLOAT_TYPES = {"f32", "f64", "f16", "bf16", "f16x2", "bf16x2"}


def reg_base(op):
    """SASS operand -> register name (R5 from -|R5.reuse|.H0_H0), or None."""
    s = op.strip().lstrip("-!").strip("|").lstrip("-")
    m = re.match(r"^(U?R\d+|RZ|URZ)\b", s)
    return m.group(1) if m else None


def sass_imm(op):
    s = op.strip()
    neg = s.startswith("-")
    s = s.lstrip("-")
    try:
        if s.startswith("0x"):
            return None
        v = float(s.replace("INF", "inf").replace("+QNAN", "nan").replace("QNAN", "nan"))
        return -v if neg else v
    except ValueError:
        return None


def ptx_imm(s, ty):
    s = s.strip()
    m = re.match(r"^0([fFdD])([0-9a-fA-F]+)$", s)
    if m:
        bits = int(m.group(2), 16)
        return struct.unpack("<f", struct.pack("<I", bits))[0] if m.group(1) in "fF" else struct.unpack("<d", struct.pack("<Q", bits))[0]
    try:
        return float(s)
    except ValueError:
        return None


class Kernel:
    """One kernel's PTX and SASS, with the lookups the observations need."""

    def __init__(self, pinstrs, sass):
        self.p = [i for i in pinstrs if i.op != "label"]
        self.by_line = {}
        for i in self.p:
            self.by_line.setdefault(i.line, i)
        self.sass = sass

    def sass_at(self, line):
        return [s for s in self.sass if s.line == line]

    def ptx_def(self, reg, before_line):
        """The PTX instruction defining `reg` that reaches `before_line`: the last one
        above it, else the only one in the kernel (a loop's back edge)."""
        defs = [i for i in self.p if i.args and i.args[0] == reg and not i.op.startswith("st") and i.op not in ("bra", "ret", "bar", "red", "atom")]
        above = [i for i in defs if i.line < before_line]
        if above:
            return above[-1]
        return defs[0] if len(defs) == 1 else None

    def value_of_sass(self, idx, op):
        """The PTX value a SASS source operand holds: ('imm', v) or (line, reg), by the
        last write to that register above instruction idx."""
        r = reg_base(op)
        if r is None:
            v = sass_imm(op)
            return ("imm", v) if v is not None else None
        if r in ("RZ", "URZ"):
            return ("imm", 0.0)
        for j in range(idx - 1, -1, -1):
            s = self.sass[j]
            if s.opcode in NON_DEST or not s.operands:
                continue
            if reg_base(s.operands[0]) == r:
                if s.opcode in ("MOV", "IMAD") and s.opcode == "MOV" and len(s.operands) == 2:
                    return self.value_of_sass(j, s.operands[1])
                pi = self.by_line.get(s.line)
                if pi is None or not pi.args:
                    return None
                return (pi.line, pi.args[0])
        return None

    def value_of_ptx(self, src, at_line, ty):
        """The value a PTX source operand holds at `at_line`: ('imm', v) or (line, reg),
        looking through mov (copies)."""
        if not src.startswith("%"):
            v = ptx_imm(src, ty)
            return ("imm", v) if v is not None else None
        d = self.ptx_def(src, at_line)
        if d is None:
            return None
        if d.op in ("mov", "neg") and len(d.args) == 2:
            return self.value_of_ptx(d.args[1], d.line, ty)
        return (d.line, d.args[0])

    def mul_candidates(self, add):
        """PTX multiplies an add/sub may have absorbed: each operand's defining mul,
        looking through neg/mov/selp/cvt chains (one level of each)."""
        out = []
        seen = set()

        def walk(reg, at, depth):
            if not reg.startswith("%") or depth > 6:
                return
            d = self.ptx_def(reg, at)
            if d is None or id(d) in seen:
                return
            seen.add(id(d))
            if d.op == "mul" and d.type in FLOAT_TYPES:
                out.append(d)
            elif d.op in ("neg", "mov", "abs", "cvt", "selp", "ld", "st"):
                for a in d.args[1:]:
                    walk(a, d.line, depth + 1)
        for a in add.args[1:3]:
            walk(a, add.line, 0)
        # also any mul in the kernel (through memory or calls), last resort
        for i in self.p:
            if i.op == "mul" and i.type in FLOAT_TYPES and i not in out:
                out.append(i)
        return out

    def fused_mul(self, add, s_idx):
        """The PTX mul line the FMA at SASS index s_idx took its multiplicands from."""
        s = self.sass[s_idx]
        vals = [self.value_of_sass(s_idx, o) for o in s.operands[1:3]]
        if any(v is None for v in vals):
            return None
        hits = []
        for m in self.mul_candidates(add):
            mv = [self.value_of_ptx(a, m.line, m.type) for a in m.args[1:3]]
            if None in mv:
                continue
            if _same_pair(vals, mv):
                hits.append(m.line)
        # two multiplies of the same values cannot be told apart in the SASS: unknown
        return hits[0] if len(hits) == 1 else None


def _same_pair(a, b):
    def key(v):
        if v[0] == "imm":
            return ("imm", abs(v[1]) if v[1] == v[1] else "nan")
        return v
    return sorted(map(str, map(key, a))) == sorted(map(str, map(key, b)))


def observe(pinstrs, sass):
    """Per kernel: {'lines': {line: [sass texts]}, 'fusions': [{'add': L, 'mul': M|None,
    'sass': text}]} for the float arithmetic lines."""
    k = Kernel(pinstrs, sass)
    lines = {}
    for i in k.p:
        if (i.op in FLOAT_ARITH and (set(i.mods) & FLOAT_TYPES)):
            lines[i.line] = [("@" if s.pred else "") + s.full + _class_tag(s) for s in k.sass_at(i.line)
                             if s.opcode not in ("NOP",) and not sasslib.is_constant_move(s)]
    fusions = []
    for idx, s in enumerate(sass):
        if s.opcode not in FMA_OPS or sasslib.float_class(s) != "fma":
            continue
        pi = k.by_line.get(s.line)
        if pi is None or pi.op not in ("add", "sub"):
            continue
        # a mul.rn of f16x2 also becomes HFMA2 with a -RZ addend; that sits on the mul's line
        fusions.append({"add": pi.line, "mul": k.fused_mul(pi, idx), "sass": s.text()})
    return {"lines": lines, "fusions": fusions}
