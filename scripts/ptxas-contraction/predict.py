#!/usr/bin/env python3
"""Prototype of ptxas's mul+add -> fma contraction rule (sm_90, -O1..-O3; -O0 contracts
nothing), over the PTX of one function. reports/ptxas-contraction/README.md states the rule;
this file is its executable form, checked against the corpus (check.py) and against real
kernels (realcheck.py). The translator ports it; nothing here depends on ptxas.

    predict.py file.ptx            # print each function's decisions
"""
import re
import sys
from dataclasses import dataclass, field

import ptxparse

FLOAT_TYPES = {"f32", "f64", "f16", "bf16", "f16x2", "bf16x2"}
ROUNDING = {"rn", "rz", "rm", "rp", "rna"}
BRANCHES = {"bra", "brx"}
ENDS = {"ret", "exit", "trap", "brkpt"}  # end a region (guarded or not)


def splits_region(i, f=None):
    """PTX instructions that ptxas expands before contracting into code of its own blocks
    (or treats as a barrier): a mul before one and an add after it are never fused, and a
    use across one is a use from another region. Measured (README, 'Regions')."""
    t = i.type
    if i.op in ("membar", "fence", "call"):
        return True
    if i.op in ("div", "rcp", "sqrt") and t in ("f32", "f64"):
        # the IEEE forms (.rn/.rz/.rm/.rp) branch to a slow path; .approx/.full do not;
        # with constant operands ptxas emits a short inline sequence and does not split
        if not set(i.mods) & ROUNDING:
            return False
        if f is not None and all(resolve(f, i.idx, a).kind == "imm" for a in i.p.args[1:]):
            return False
        return True
    if i.op in ("div", "rem") and t in ("s16", "u16", "s32", "s64", "u64", "b64"):
        return True  # but div.u32 / rem.u32 do not split (measured)
    return i.op in ENDS


@dataclass
class Ins:
    idx: int
    p: ptxparse.PInstr
    region: int = 0
    block: int = 0

    @property
    def op(self):
        return self.p.op

    @property
    def line(self):
        return self.p.line

    @property
    def type(self):
        return self.p.type

    @property
    def mods(self):
        return self.p.mods


def is_reg(a):
    return isinstance(a, str) and a.startswith("%") and not a.startswith("%tid") and "." not in a


def imm_value(a):
    """Float value of a PTX float immediate (0fXXXXXXXX, 0dXXXXXXXXXXXXXXXX, decimal)."""
    import struct
    if not isinstance(a, str):
        return None
    m = re.match(r"^([-+]?)0([fFdD])([0-9a-fA-F]+)$", a)
    if m:
        bits = int(m.group(3), 16)
        v = struct.unpack("<f", struct.pack("<I", bits))[0] if m.group(2) in "fF" else struct.unpack("<d", struct.pack("<Q", bits))[0]
        return -v if m.group(1) == "-" else v
    try:
        return float(a)
    except ValueError:
        return None


DEST_LESS = {"st", "bra", "brx", "ret", "exit", "trap", "bar", "barrier", "membar", "fence", "red", "prefetch",
             "cp", "nanosleep", "brkpt", "call", "sust", "pmevent", "griddepcontrol", "setmaxnreg"}


def dests(p):
    """Registers an instruction writes (the first operand, vector braces expanded;
    setp's 'p|q' pair; call's return list)."""
    if p.op == "call" and len(p.args) >= 2 and p.args[0].startswith("("):
        return re.findall(r"%[A-Za-z_]\w*", p.args[0])
    if p.op in DEST_LESS or not p.args:
        return []
    a = p.args[0]
    if a.startswith("{"):
        return [x.strip() for x in a.strip("{}").split(",") if is_reg(x.strip())]
    return [x for x in a.split("|") if is_reg(x)]


def srcs(p):
    """Registers an instruction reads, with their operand positions."""
    args = p.args if p.op in DEST_LESS else p.args[1:]
    if p.op == "call" and len(p.args) >= 2 and p.args[0].startswith("("):
        args = p.args[1:]
    out = []
    for k, a in enumerate(args):
        for r in re.findall(r"%[A-Za-z_][\w]*", a):
            out.append((k, r))
    if p.guard:
        out.append((-1, p.guard.lstrip("@!")))
    return out


class Function:
    """One .entry/.func: regions, reaching definitions and copy-resolved def-use chains."""

    def __init__(self, name, pinstrs, is_entry=True):
        self.name = name
        self.is_entry = is_entry
        self.ins = []
        self.labels = {}
        pending = []
        for p in pinstrs:
            if p.op == "label":
                pending.append(p.label)
                continue
            if p.op.startswith(".") or p.op in ("{", "}"):
                continue
            i = Ins(len(self.ins), p)
            for l in pending:
                self.labels[l] = i.idx
            pending = []
            self.ins.append(i)
        for l in pending:
            self.labels[l] = len(self.ins)
        self.alias = {}  # instruction -> the earlier identical one it is replaced by (early CSE)
        self._blocks()
        self._reaching()
        self._regions()
        self._dominators()

    # --- control flow ---------------------------------------------------------------
    def _targets(self, i):
        if i.op in BRANCHES:
            return [a for a in i.p.args if a in self.labels]
        return []

    def _to_next(self, i):
        """An unguarded branch to the instruction right after it (ptxas drops it)."""
        if i.op != "bra" or i.p.guard:
            return False
        t = self._targets(i)
        return len(t) == 1 and self.labels[t[0]] == i.idx + 1

    def _blocks(self):
        targeted = set()
        for i in self.ins:
            if self._to_next(i):
                continue
            for t in self._targets(i):
                targeted.add(self.labels[t])
        leaders = {0}
        for i in self.ins:
            if (i.op in BRANCHES and not self._to_next(i)) or i.op in ENDS:
                leaders.add(i.idx + 1)
        leaders |= targeted
        block = -1
        for i in self.ins:
            if i.idx in leaders:
                block += 1
            i.block = block
        self.nblocks = block + 1
        # successors
        self.succ = {b: set() for b in range(self.nblocks)}
        first = {}
        for i in self.ins:
            first.setdefault(i.block, i.idx)
        last = {}
        for i in self.ins:
            last[i.block] = i.idx
        for b in range(self.nblocks):
            li = self.ins[last[b]]
            uncond = (li.op in BRANCHES and not li.p.guard) or (li.op in ENDS and not li.p.guard)
            for t in self._targets(li):
                ti = self.labels[t]
                if ti < len(self.ins):
                    self.succ[b].add(self.ins[ti].block)
            if not uncond and b + 1 < self.nblocks:
                self.succ[b].add(b + 1)
        self.first, self.last = first, last

    def _reaching(self):
        """Classic reaching definitions over blocks; defs are instruction indices."""
        gen, kill_regs = {}, {}
        for b in range(self.nblocks):
            g = {}
            for idx in range(self.first[b], self.last[b] + 1):
                for r in dests(self.ins[idx].p):
                    if self.ins[idx].p.guard:
                        g.setdefault(r, set()).add(idx)  # a guarded def does not kill
                    else:
                        g[r] = {idx}
            gen[b] = g
        IN = {b: {} for b in range(self.nblocks)}
        OUT = {b: {} for b in range(self.nblocks)}
        preds = {b: set() for b in range(self.nblocks)}
        for b, ss in self.succ.items():
            for s in ss:
                preds[s].add(b)
        changed = True
        while changed:
            changed = False
            for b in range(self.nblocks):
                inn = {}
                for p in preds[b]:
                    for r, ds in OUT[p].items():
                        inn.setdefault(r, set()).update(ds)
                out = {r: set(ds) for r, ds in inn.items()}
                for r, ds in gen[b].items():
                    guarded = all(self.ins[d].p.guard for d in ds)
                    out[r] = (out.get(r, set()) | ds) if guarded else set(ds)
                if out != OUT[b] or inn != IN[b]:
                    IN[b], OUT[b] = inn, out
                    changed = True
        self.IN = IN

    def _regions(self):
        """Regions: blocks, further cut around the instructions splits_region names."""
        region = -1
        prev_block = None
        split = [splits_region(i, self) for i in self.ins]
        for i in self.ins:
            if i.block != prev_block or split[i.idx] or (i.idx > 0 and split[i.idx - 1]):
                region += 1
            prev_block = i.block
            i.region = region

    def _dominators(self):
        preds = {b: set() for b in range(self.nblocks)}
        for b, ss in self.succ.items():
            for t in ss:
                preds[t].add(b)
        allb = set(range(self.nblocks))
        dom = {b: set(allb) for b in allb}
        if self.nblocks:
            dom[0] = {0}
        changed = True
        while changed:
            changed = False
            for b in range(1, self.nblocks):
                ps = [dom[p] for p in preds[b]]
                new = (set.intersection(*ps) if ps else set()) | {b}
                if new != dom[b]:
                    dom[b], changed = new, True
        self.dom = dom

    def dominates(self, i, j):
        """Instruction i is executed before j on every path to j."""
        a, b = self.ins[i], self.ins[j]
        if a.block == b.block:
            return i < j
        return a.block in self.dom[b.block]

    def reaching(self, idx, reg):
        """Definitions of reg that reach instruction idx (set of instruction indices;
        -1 stands for 'defined outside the function / undefined')."""
        i = self.ins[idx]
        cur = {r: set(ds) for r, ds in self.IN[i.block].items()}
        for k in range(self.first[i.block], idx):
            p = self.ins[k].p
            for r in dests(p):
                cur[r] = (cur.get(r, set()) | {k}) if p.guard else {k}
        return cur.get(reg, {-1})


# --- copies ---------------------------------------------------------------------------
def copy_source(f, i):
    """If instruction i only moves a value (mov of a register, neg, selp of one value,
    mul by exactly 1.0 / -1.0 without ftz/sat, ld.local of a slot last stored in its region),
    returns (source register or immediate, source instruction index for reaching, negate)."""
    p = i.p
    t = p.type
    if p.op == "mov" and len(p.args) == 2 and (is_reg(p.args[1]) or imm_value(p.args[1]) is not None) and not p.args[1].startswith("{"):
        return (p.args[1], i.idx, False)
    if p.op == "neg" and t in FLOAT_TYPES and not p.guard:
        return (p.args[1], i.idx, True)
    if p.op == "selp" and len(p.args) == 4 and p.args[1] == p.args[2] and not p.guard:
        return (p.args[1], i.idx, False)
    if p.op == "mul" and t in FLOAT_TYPES and not p.guard and "sat" not in p.mods and len(p.args) == 3:
        # x * 1.0 is x and x * -1.0 is -x (with .ftz also flushed: the consumers of the
        # product see x, measured); ptxas removes these before contracting
        for a, b in ((p.args[1], p.args[2]), (p.args[2], p.args[1])):
            v = imm_value(b)
            if v in (1.0, -1.0) and (is_reg(a) or imm_value(a) is not None):
                return (a, i.idx, v == -1.0)
    if p.op == "ld" and "local" in p.mods and not p.guard and "volatile" not in p.mods:
        addr = p.args[1]
        for k in range(i.idx - 1, -1, -1):
            q = f.ins[k]
            if q.region != i.region:
                break
            if q.op == "st" and "local" in q.p.mods:
                if q.p.args[0] == addr and q.p.type == p.type:
                    return (q.p.args[1], q.idx, False)
                break  # another local store: do not guess
            if q.op in ("call",):
                break
    return None


@dataclass
class Value:
    """What an operand holds after looking through copies: a defining instruction, or
    an immediate, or an unknown (merge of several definitions / parameters)."""
    kind: str  # "def", "imm", "unknown"
    idx: int = -1
    imm: float = 0.0
    neg: bool = False


def resolve(f, idx, a, depth=0, through_neg=True):
    if not is_reg(a):
        v = imm_value(a)
        return Value("imm", imm=v) if v is not None else Value("unknown")
    ds = f.reaching(idx, a)
    if len(ds) != 1 or -1 in ds:
        return Value("unknown")
    d = next(iter(ds))
    d = f.alias.get(d, d)
    cs = copy_source(f, f.ins[d])
    if cs is not None and depth < 32 and (through_neg or not cs[2]):
        src, at, neg = cs
        v = resolve(f, at, src, depth + 1, through_neg)
        if neg:
            v.neg = not v.neg
            if v.kind == "imm":
                v.imm = -v.imm
        return v
    return Value("def", idx=d)


# --- the rule -------------------------------------------------------------------------
def mods_of(p):
    return set(p.mods[:-1])


def is_mul_like(p):
    """mul.<float>, and div.approx.f32 / div.full.f32, which ptxas expands before
    contracting into a multiply of the (scaled) dividend by rcp.approx of the (scaled)
    divisor, a multiply it contracts like any other."""
    if p.op == "mul" and p.type in FLOAT_TYPES:
        return True
    return p.op == "div" and p.type == "f32" and ("approx" in p.mods or "full" in p.mods)


def contractable_mul(f, i):
    p = i.p
    if not is_mul_like(p) or p.guard or len(p.args) != 3:
        return False
    m = mods_of(p) - {"approx", "full"}
    if m & ROUNDING or "sat" in m:
        return False
    if copy_source(f, i) is not None:
        return False  # multiply by +-1.0: removed before contraction
    a, b = resolve(f, i.idx, p.args[1]), resolve(f, i.idx, p.args[2])
    if a.kind == "imm" and b.kind == "imm":
        return False  # folded to a constant (rounded) before contraction
    return True


def contractable_add(p):
    if p.op not in ("add", "sub") or p.type not in FLOAT_TYPES or len(p.args) != 3:
        return False
    return not (mods_of(p) & ROUNDING)


def constant_operand(f, v):
    """A value SASS can take as an immediate or a constant-bank operand: an immediate, a
    kernel parameter (ld.param of an .entry parameter at a fixed offset) or ld.const of a
    fixed address."""
    if v.kind == "imm":
        return True
    if v.kind != "def":
        return False
    p = f.ins[v.idx].p
    if p.op != "ld" or len(p.args) < 2 or "%" in p.args[1]:
        return False
    return "const" in p.mods or ("param" in p.mods and f.is_entry)


def by_immediate(f, m):
    """A multiply of one register by a constant operand (constant_operand): ptxas
    contracts it into adds in any block (it re-creates it at each use), unlike a product
    of two registers, which must share the add's region."""
    vs = [resolve(f, m.idx, x) for x in m.p.args[1:3]]
    consts = [constant_operand(f, v) for v in vs]
    return consts.count(True) == 1


@dataclass
class Prediction:
    fused: dict = field(default_factory=dict)  # add line -> mul line
    materialized: dict = field(default_factory=dict)  # mul line -> bool (a FMUL stays)
    merged: dict = field(default_factory=dict)  # add/mul line -> line of the identical one it is CSEd into
    scaled: dict = field(default_factory=dict)  # mul line -> (line of the mul by 2^k it folds into, "M2".."D8")
    notes: list = field(default_factory=list)
    dead: set = field(default_factory=set)  # lines whose results nothing uses (removed)


def predict(f, opt=3):
    """Applies the rule to one Function for ptxas -O`opt` (-O0: nothing is contracted;
    -O1: no merging of repeated adds across regions); returns a Prediction keyed by PTX
    lines."""
    if opt == 0:
        return _no_contraction(f)
    n = len(f.ins)
    # every non-copy consumer of every definition, through copies
    consumers = {}  # def idx -> list of (consumer idx, operand position, negated)
    operand_vals = {}  # (consumer idx, position) -> Value
    live = live_instructions(f)
    f.alias = {}
    if opt >= 2:
        early_cse(f, live)
    live -= set(f.alias)
    forwarded_stores = set()
    for i in f.ins:
        cs = copy_source(f, i)
        if cs is not None and i.op == "ld":
            forwarded_stores.add(cs[1])
    for i in f.ins:
        if copy_source(f, i) is not None or i.idx in forwarded_stores or i.idx not in live:
            continue
        for k, r in srcs(i.p):
            v = resolve(f, i.idx, r)
            operand_vals[(i.idx, k)] = v
            if v.kind == "def":
                consumers.setdefault(v.idx, []).append((i.idx, k))
            else:
                # a merge of definitions: each of them gets a non-fusable use
                for d in _defs_behind(f, i.idx, r):
                    consumers.setdefault(d, []).append((i.idx, -2))
    muls = {i.idx for i in f.ins if i.idx in live and contractable_mul(f, i)}
    uses = {m: consumers.get(m, []) for m in muls}

    def candidate(add_idx, pos):
        """The mul operand `pos` (0 or 1) of add add_idx can absorb, or None."""
        a = f.ins[add_idx]
        if not contractable_add(a.p):
            return None
        v = operand_vals.get((add_idx, pos))
        if v is None or v.kind != "def" or v.idx not in muls:
            return None
        m = f.ins[v.idx]
        if m.p.type != a.p.type or ("ftz" in mods_of(m.p)) != ("ftz" in mods_of(a.p)):
            return None
        if m.region != a.region and not by_immediate(f, m):
            return None
        o = operand_vals.get((add_idx, 1 - pos))
        if o is not None and o.kind == "def" and o.idx == v.idx:
            return None  # add(p, p)
        if o is not None and o.kind == "def" and o.idx in muls and same_product(f, v.idx, o.idx):
            # a*b + a*b written as two multiplies: ptxas adds the product to itself (but
            # a*b - a*b is fused: fma(a, b, -a*b), the product's rounding error)
            sv = v.neg ^ (a.op == "sub" and pos == 1)
            so = o.neg ^ (a.op == "sub" and pos == 0)
            if sv == so:
                return None
        return v.idx

    adds = [i.idx for i in f.ins if i.idx in live and contractable_add(i.p)]
    fused = {}  # add idx -> mul idx
    static = {m: len(u) for m, u in uses.items()}

    def eligible(m):
        for (c, k) in uses[m]:
            if fused.get(c) == m:
                continue
            if c in fused or k not in (0, 1) or candidate(c, k) != m:
                return False
        return True

    # stage 1: a mul with a single use is absorbed by that add (first operand first)
    for a in adds:
        for pos in (0, 1):
            m = candidate(a, pos)
            if m is not None and static[m] == 1:
                fused[a] = m
                break
    # stage 2: program order; a mul all of whose remaining uses are adds that can still
    # absorb it; of two, the one with fewer uses, then the first operand
    for a in adds:
        if a in fused:
            continue
        c = [m for m in (candidate(a, 0), candidate(a, 1)) if m is not None and eligible(m)]
        if not c:
            continue
        if len(c) == 2 and static[c[1]] < static[c[0]]:
            c = [c[1]]
        fused[a] = c[0]

    pred = Prediction()
    pred.dead = {i.line for i in f.ins if i.idx not in live and i.idx not in f.alias}
    for a, b in f.alias.items():
        pred.merged[f.ins[a].line] = f.ins[b].line
    for a, m in fused.items():
        pred.fused[f.ins[a].line] = f.ins[m].line
    mat = {m: any(fused.get(c) != m for c, _ in uses[m]) for m in muls}
    # a product left standalone whose only use is a multiply by 2, 4, 8, 1/2, 1/4 or 1/8
    # becomes one FMUL.M2..D8 (f32; the outer mul .rn or unmodified, .ftz/.sat allowed;
    # the outer's .ftz/.sat win, the inner's .ftz is dropped)
    for m in muls:
        if not mat[m] or f.ins[m].p.type != "f32" or len(uses[m]) != 1:
            continue
        c, k = uses[m][0]
        q = f.ins[c].p
        if q.op != "mul" or q.type != "f32" or q.guard or (mods_of(q) & (ROUNDING - {"rn"})) or (c in mat and not mat[c]):
            continue
        other = resolve(f, c, q.args[2 - k]) if k in (0, 1) else None
        if other is not None and other.kind == "imm" and other.imm in SCALES and f.ins[c].region == f.ins[m].region:
            pred.scaled[f.ins[m].line] = (f.ins[c].line, SCALES[other.imm])
            mat[m] = False
    for m in muls:
        pred.materialized[f.ins[m].line] = mat[m]
    # CSE after contraction: identical adds, fmas and standalone muls merge into the first
    seen = {}
    for i in f.ins:
        key = None
        if i.idx in muls and mat[i.idx] and f.ins[i.idx].line not in pred.scaled:
            key = _mul_key(f, i.idx)
        elif contractable_add(i.p):
            key = _value_key(f, i.idx, fused.get(i.idx), operand_vals)
        if key is None:
            continue
        key = (i.region, key)  # repeats in other regions were merged before contracting
        if key in seen:
            pred.merged[i.line] = f.ins[seen[key]].line
        else:
            seen[key] = i.idx
    # loop-carried products: ptxas unrolls loops (-O2/-O3) and may then fuse a product of
    # one iteration into the next iteration's add; flag them
    for m in muls:
        for c, _ in uses[m]:
            if c <= m and f.ins[c].block != f.ins[m].block:
                pred.notes.append(f"line {f.ins[m].line}: product reaches line {f.ins[c].line} around a loop; "
                                  "ptxas's unrolling may fuse it in some iterations")
                break
    return pred


SCALES = {2.0: "M2", 4.0: "M4", 8.0: "M8", 0.5: "D2", 0.25: "D4", 0.125: "D8"}


def _mul_key(f, m):
    p = f.ins[m].p
    if p.guard:
        return None
    ks = [_vkey(resolve(f, m, x)) for x in p.args[1:3]]
    if None in ks:
        return None
    return ("mul", p.op, tuple(p.mods), tuple(sorted(map(str, ks))))


PURE = {"add", "sub", "mul", "mad", "fma", "div", "rem", "neg", "abs", "min", "max", "mov", "selp", "setp",
        "cvt", "cvta", "and", "or", "xor", "not", "shl", "shr", "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin",
        "cos", "tanh", "copysign", "testp", "set", "slct", "bfe", "bfi", "prmt", "popc", "clz", "brev",
        "bfind", "lop3", "shf", "cnot", "mul24", "mad24", "sad", "dp4a", "dp2a", "fns"}


def live_instructions(f):
    """Indices of instructions whose effects or results something needs: side-effecting
    instructions, and transitively the definitions their operands read (ptxas deletes
    the rest before contracting, so their uses do not count)."""
    def pure(p):
        if p.op in PURE:
            return True
        return p.op == "ld" and "volatile" not in p.mods and not (set(p.mods) & {"acquire", "relaxed"})
    live = set()
    work = [i.idx for i in f.ins if not pure(i.p)]
    while work:
        k = work.pop()
        if k in live:
            continue
        live.add(k)
        for _, r in srcs(f.ins[k].p):
            for d in f.reaching(k, r):
                if d >= 0 and d not in live:
                    work.append(d)
    return live


def early_cse(f, live):
    """Before contracting, ptxas replaces an add/sub that repeats one in another region that
    dominates it (same operation on the same values, sub(a, b) read as add(a, -b)) by that
    earlier one; its users then use the earlier result. Multiplies are not merged this way,
    and repeats within one region are merged only after contracting (measured)."""
    f.alias = {}
    first = {}
    for i in f.ins:
        if i.idx not in live or not contractable_add(i.p) or i.p.guard:
            continue
        vals = {(i.idx, k): resolve(f, i.idx, i.p.args[1 + k]) for k in (0, 1)}
        key = _value_key(f, i.idx, None, vals)
        if key is None:
            continue
        j = first.get(key)
        if j is not None and f.ins[j].region != i.region and f.dominates(j, i.idx):
            f.alias[i.idx] = j
        elif j is None:
            first[key] = i.idx


def _no_contraction(f):
    """-O0: every multiply and add stays as written (no fusion, no CSE, no folding)."""
    pred = Prediction()
    live = live_instructions(f)
    pred.dead = {i.line for i in f.ins if i.idx not in live}
    for i in f.ins:
        if is_mul_like(i.p) and not i.p.guard and i.idx in live:
            pred.materialized[i.line] = True
    return pred


def _defs_behind(f, idx, r, depth=0):
    out = set()
    for d in f.reaching(idx, r):
        if d < 0:
            continue
        cs = copy_source(f, f.ins[d])
        if cs is not None and depth < 32 and is_reg(cs[0]):
            out |= _defs_behind(f, cs[1], cs[0], depth + 1)
        else:
            out.add(d)
    return out


def same_product(f, m1, m2):
    p, q = f.ins[m1].p, f.ins[m2].p
    if p.mods != q.mods:
        return False
    a = [_vkey(resolve(f, m1, x)) for x in p.args[1:3]]
    b = [_vkey(resolve(f, m2, x)) for x in q.args[1:3]]
    return None not in a and sorted(map(str, a)) == sorted(map(str, b))


def _vkey(v):
    if v.kind == "def":
        return ("d", v.idx, v.neg)
    if v.kind == "imm":
        return ("i", v.imm)
    return None


def _value_key(f, a, m, operand_vals):
    """Value-numbering key of an add/sub (fused with mul m or not), sub(a, b) read as
    add(a, -b) and negations folded into signs, so that ptxas's CSE of equal sums is
    predicted whichever way they were written."""
    p = f.ins[a].p
    if p.guard:
        return None
    terms = []
    for pos in (0, 1):
        v = operand_vals.get((a, pos))
        if v is None or _vkey(v) is None:
            return None
        sign = v.neg ^ (p.op == "sub" and pos == 1)
        if v.kind == "imm":
            terms.append((("i", abs(v.imm)), sign ^ (v.imm < 0) if v.imm else sign, v))
        else:
            terms.append((("d", v.idx), sign, v))
    mods = tuple(x for x in p.mods)
    if m is not None:
        mk = _mul_key(f, m)
        if mk is None:
            return None
        mt = [t for t in terms if t[2].kind == "def" and t[2].idx == m][0]
        ot = [t for t in terms if t is not mt][0]
        return ("fma", mods, mk, mt[1], str(ot[0]), ot[1])
    # commutative (f32/f64; half-precision sums are merged only when written in the same
    # order), but ties (the same value twice: -p + p against p - p) keep their order
    if p.type in ("f32", "f64"):
        terms = sorted(terms, key=lambda t: str(t[0]))
    return ("add", mods, tuple((str(t[0]), t[1]) for t in terms))


def functions(src):
    entries = set(re.findall(r"\.entry\s+([A-Za-z_$][\w$]*)", ptxparse.strip_comments(src)))
    return {n: Function(n, ins, n in entries) for n, ins in ptxparse.parse(src).items()}


def main():
    for path in sys.argv[1:]:
        src = open(path).read()
        for name, f in functions(src).items():
            p = predict(f)
            print(f"== {name}")
            for a, m in sorted(p.fused.items()):
                print(f"  add line {a} absorbs mul line {m}")
            for m, mat in sorted(p.materialized.items()):
                print(f"  mul line {m}: {'FMUL stays' if mat else 'absorbed everywhere'}")
            for a, b in sorted(p.merged.items()):
                print(f"  line {a}: identical to line {b} (CSE)")
            for a, (b, k) in sorted(p.scaled.items()):
                print(f"  mul line {a}: folded into line {b} as FMUL.{k}")
            for n in p.notes:
                print(f"  note: {n}")


if __name__ == "__main__":
    main()
