"""Parsing SASS listings (nvdisasm -c -g, cuobjdump -sass) into per-kernel instruction lists.

The Rust twin of this parser is kernels-host/src/sass.rs; this one serves the corpus
generator and the prototype predictor.
"""
import re
from dataclasses import dataclass, field

# Float arithmetic opcodes whose rounding differs between fused and unfused forms (base
# opcode, before the first '.'). Counted per kernel in the expectations.
FLOAT_OPS = (
    "FFMA", "FMUL", "FADD", "FFMA32I", "FMUL32I", "FADD32I",
    "DFMA", "DMUL", "DADD",
    "HFMA2", "HMUL2", "HADD2", "HFMA2_32I", "HMUL2_32I", "HADD2_32I",
    "FMNMX", "DMNMX", "HMNMX2", "FSWZADD", "MUFU", "FCHK", "FSETP", "DSETP", "HSETP2",
    "FSEL", "F2F", "F2FP", "F2I", "I2F", "FRND",
)


@dataclass
class Instr:
    addr: int
    pred: str  # "" or e.g. "@!P0"
    opcode: str  # base opcode, e.g. "FFMA"
    mods: list  # e.g. ["FTZ", "SAT"]
    operands: list  # operand strings as printed, e.g. ["R5", "-R0", "|R5|", "R7"]
    line: int | None = None  # PTX line from line info, when present
    file: str | None = None  # the file that line is in

    @property
    def full(self):
        return ".".join([self.opcode] + self.mods)

    def text(self):
        p = self.pred + " " if self.pred else ""
        return f"{p}{self.full} {', '.join(self.operands)}".rstrip()


_INSN = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_LINE = re.compile(r'^\s*//## File "([^"]*)", line (\d+)')
_FUNC_CUOBJ = re.compile(r"^\s*Function : (\S+)")
_FUNC_NVD = re.compile(r"^\.text\.(\S+):\s*$")


def split_operands(s):
    """Splits at top-level commas (not inside [] or {})."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_insn(addr, body):
    pred = ""
    m = re.match(r"^(@!?U?P\w+)\s+(.*)$", body)
    if m:
        pred, body = m.group(1), m.group(2)
    parts = body.split(None, 1)
    op = parts[0]
    ops = split_operands(parts[1]) if len(parts) > 1 else []
    names = op.split(".")
    return Instr(addr, pred, names[0], names[1:], ops)


def parse(text):
    """Returns {kernel: [Instr]} from nvdisasm -c [-g] or cuobjdump -sass output."""
    kernels, cur, line, file = {}, None, None, None
    for raw in text.splitlines():
        m = _FUNC_CUOBJ.match(raw) or _FUNC_NVD.match(raw)
        if m:
            cur = m.group(1)
            kernels.setdefault(cur, [])
            line = file = None
            continue
        m = _LINE.match(raw)
        if m:
            file, line = m.group(1), int(m.group(2))
            continue
        m = _INSN.match(raw)
        if m and cur is not None:
            ins = parse_insn(int(m.group(1), 16), m.group(2))
            ins.line, ins.file = line, file
            kernels[cur].append(ins)
    return kernels


def is_constant_move(i):
    """HFMA2.MMA Rd, -RZ, RZ, a, b: ptxas's way to materialise a 32-bit constant (its two
    halves a, b), not arithmetic."""
    return i.opcode == "HFMA2" and len(i.operands) >= 3 and i.operands[1].lstrip("-") == "RZ" and i.operands[2].lstrip("-") == "RZ"


def float_counts(instrs):
    c = {}
    for i in instrs:
        if i.opcode in FLOAT_OPS and not is_constant_move(i):
            c[i.opcode] = c.get(i.opcode, 0) + 1
    return dict(sorted(c.items()))


def _is_reg(op):
    s = op.lstrip("-!|")
    return s.startswith(("R", "UR", "c[", "desc["))


def float_class(i):
    """'fma' / 'mul' / 'add' for float arithmetic (as kernels-host/src/sass.rs classifies
    it: an FMA with a -RZ addend is a multiply, HFMA2 with multiplier 1 an add), None for
    everything else (constant moves, HADD2.F32 conversions, compares...)."""
    op = i.opcode
    if op in ("FMUL", "FMUL32I", "DMUL", "HMUL2", "HMUL2_32I"):
        return "mul"
    if op in ("FADD", "FADD32I", "DADD", "HADD2_32I"):
        return "add"
    if op == "HADD2":
        return None if "F32" in i.mods else "add"
    if op not in ("FFMA", "FFMA32I", "DFMA", "HFMA2", "HFMA2_32I") or is_constant_move(i):
        return None
    o = i.operands
    if len(o) == 4:
        b, c = o[2:3], o[3:4]
    elif len(o) == 5 and _is_reg(o[2]):
        b, c = o[2:3], o[3:5]
    elif len(o) == 5:
        b, c = o[2:4], o[4:5]
    elif len(o) == 6:
        b, c = o[2:4], o[4:6]
    else:
        return "fma"
    if c == ["-RZ"]:
        return "mul"
    if op.startswith("HFMA2"):
        try:
            if all(float(x) == 1.0 for x in b):
                return "add"
        except ValueError:
            pass
    return "fma"
