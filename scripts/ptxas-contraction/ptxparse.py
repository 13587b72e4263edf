"""A small PTX reader: enough of the syntax for the contraction model (per function, each
instruction with its line, guard, opcode, modifiers, destination and sources)."""
import re
from dataclasses import dataclass


@dataclass
class PInstr:
    line: int
    guard: str  # "" or "@%p1" / "@!%p1"
    op: str  # "mul"
    mods: list  # ["rn", "ftz", "f32"] (all dot parts, type last)
    args: list  # operand strings, destination first (when the op has one)
    label: str = ""  # set for label lines (op == "label")

    @property
    def type(self):
        return self.mods[-1] if self.mods else ""

    def has(self, m):
        return m in self.mods


_FUNC = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)?\.(entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)")


def strip_comments(src):
    src = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), src, flags=re.S)
    return "\n".join(l.split("//")[0] for l in src.split("\n"))


def split_args(s):
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


def parse(src):
    """Returns {function name: [PInstr]} (bodies of .entry and .func)."""
    funcs, cur, depth, pending = {}, None, 0, None
    lines = strip_comments(src).split("\n")
    carry, carry_line = "", 0
    for n, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s:
            continue
        if cur is not None and depth > 0:
            # a statement continued over several lines (nvcc splits call's operands):
            # join it and give it the line it starts on
            if carry:
                s = carry + " " + s
                n = carry_line
                carry = ""
            body = s
            if body and not body.endswith((";", "{", "}", ":")) and not body.startswith(("{", "}", ".", "//")) \
                    and "{" not in body and not body.endswith(":"):
                carry, carry_line = body, n
                continue
        m = _FUNC.match(s)
        if m and depth == 0:
            pending = m.group(2)
        if pending is not None and depth == 0 and "{" in s:
            cur, pending = pending, None
            funcs[cur] = []
            depth = s.count("{") - s.count("}")
            continue
        if cur is None:
            continue
        depth += s.count("{") - s.count("}")
        if depth <= 0:
            cur = None
            continue
        for stmt in s.split(";"):
            stmt = stmt.strip().strip("{}").strip()
            if not stmt:
                continue
            lm = re.match(r"^([$\w]+):\s*(.*)$", stmt)
            if lm:
                funcs[cur].append(PInstr(n, "", "label", [], [], lm.group(1)))
                stmt = lm.group(2).strip()
                if not stmt:
                    continue
            if stmt.startswith("."):
                continue  # .reg/.local/.shared/.loc ... declarations
            guard = ""
            gm = re.match(r"^(@!?%\w+)\s+(.*)$", stmt)
            if gm:
                guard, stmt = gm.group(1), gm.group(2)
            parts = stmt.split(None, 1)
            names = parts[0].split(".")
            args = split_args(parts[1]) if len(parts) > 1 else []
            funcs[cur].append(PInstr(n, guard, names[0], names[1:], args))
    return funcs
