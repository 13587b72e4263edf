"""Finding and running ptxas / nvdisasm / cuobjdump (PyPI toolkits)."""
import os, subprocess, tempfile, glob, re
import sasslib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


_BIN = []


def bin_dir_135():
    if not _BIN:
        nvcc = subprocess.run([os.path.join(ROOT, "scripts", "nvcc-path")], capture_output=True, text=True, check=True).stdout.strip()
        _BIN.append(os.path.dirname(nvcc))
    return _BIN[0]


def ptxas(ver):
    """ptxas of toolkit `ver` ("13.5": scripts/nvcc-path's; "13.0": $PTXAS_13_0 or
    /tmp/contraction/nvcc130, a pip --target install of nvidia-cuda-nvcc==13.0.88)."""
    if ver == "13.5":
        return os.path.join(bin_dir_135(), "ptxas")
    p = os.environ.get("PTXAS_13_0", "/tmp/contraction/nvcc130/nvidia/cu13/bin/ptxas")
    return p if os.path.exists(p) else None


def tool(name):
    p = os.path.join(bin_dir_135(), name)
    if not os.path.exists(p):
        raise SystemExit(f"{name} not found beside nvcc ({p}): pip install nvidia-cuda-{name}==13.5.*")
    return p


def add_loc(src, fname, file_index=1, file_directive=True):
    """Inserts `.loc 1 <line> 0` before every instruction of every function body, so
    ptxas -lineinfo attributes each SASS instruction to the PTX line it came from.
    Line numbers stay those of the original file (the .loc lines are not counted)."""
    out, depth, cont = [], 0, False
    for i, l in enumerate(src.split("\n"), 1):
        s = l.strip()
        if s.startswith(".address_size"):
            out.append(l)
            if file_directive:
                out.append(f'.file {file_index} "{fname}"')
            continue
        code = s.split("//")[0].strip()
        if depth > 0 and code and not cont and not code.startswith((".", "{", "}")) and not code.endswith(":"):
            out.append(f".loc {file_index} {i} 0")
        if depth > 0 and code and not code.startswith((".", "{", "}")) and not code.endswith(":"):
            cont = not code.endswith(";")  # a statement split over lines (nvcc's call)
        depth += code.count("{") - code.count("}")
        out.append(l)
    return "\n".join(out)


def assemble(src, ver="13.5", opt="3", extra=(), lineinfo=False, fname="x.ptx", has_locs=False):
    """Assembles PTX text for sm_90; returns the nvdisasm -c [-g] listing."""
    px = ptxas(ver)
    if px is None:
        raise FileNotFoundError(f"ptxas {ver} not installed")
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, fname)
        open(p, "w").write(add_loc(src, fname) if lineinfo and not has_locs else src)
        cub = os.path.join(d, "x.cubin")
        cmd = [px, "-arch=sm_90", f"-O{opt}", *extra] + (["-lineinfo"] if lineinfo else []) + [p, "-o", cub]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"ptxas failed: {' '.join(cmd)}\n{r.stderr}")
        r = subprocess.run([tool("nvdisasm"), "-c"] + (["-g"] if lineinfo else []) + [cub], capture_output=True, text=True, check=True)
        return r.stdout


def cuobjdump_of(src, ver="13.5", opt="3", extra=()):
    """cuobjdump -sass text of the cubin ptxas makes of `src` (the same listing format
    as a cubin nvcc built, for comparing the two)."""
    with tempfile.TemporaryDirectory() as d:
        p, cub = os.path.join(d, "x.ptx"), os.path.join(d, "x.cubin")
        open(p, "w").write(src)
        r = subprocess.run([ptxas(ver), "-arch=sm_90", f"-O{opt}", *extra, p, "-o", cub], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"ptxas failed:\n{r.stderr}")
        return subprocess.run([tool("cuobjdump"), "-sass", cub], capture_output=True, text=True, check=True).stdout


def assemble_lines(src, fname, ver="13.5", opt="3", extra=()):
    """Kernels with PTX lines; checks -lineinfo changed no instruction."""
    with_l = sasslib.parse(assemble(src, ver, opt, extra, True, fname))
    without = sasslib.parse(assemble(src, ver, opt, extra, False, fname))
    for k in with_l:
        a = [i.text() for i in with_l[k]]
        b = [i.text() for i in without.get(k, [])]
        if a != b:
            raise RuntimeError(f"{fname}:{k}: -lineinfo changed the SASS")
    return with_l


def version(ver):
    """'13.5.37'-style release of ptxas `ver`."""
    import re as _re
    out = subprocess.run([ptxas(ver), "--version"], capture_output=True, text=True).stdout
    m = _re.search(r"V(\d+\.\d+\.\d+)", out)
    return m.group(1) if m else out.strip().splitlines()[-1]


_HEAD = re.compile(r"^\s*\.(version|target|address_size)\b")


def combine(srcs, lineinfo):
    """One PTX module holding the kernels of several corpus files ({name: text}), each
    file's lines attributed to "<name>.ptx" (so one ptxas and one nvdisasm run serve all;
    nvdisasm's start-up dominates the cost of a small file). Module-scope names must
    not collide between the files."""
    names = list(srcs)
    vers = []
    for s in srcs.values():
        m = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", s, re.M)
        vers.append((int(m.group(1)), int(m.group(2))) if m else (8, 0))
    v = max(vers)
    targets = {m.group(1) for s in srcs.values() for m in [re.search(r"^\s*\.target\s+(\S+)", s, re.M)] if m}
    if len(targets) > 1:
        raise ValueError(f"corpus files with different .target: {sorted(targets)}")
    out = [f".version {v[0]}.{v[1]}", f".target {targets.pop() if targets else 'sm_90'}", ".address_size 64"]
    if lineinfo:
        out += [f'.file {k + 1} "{n}.ptx"' for k, n in enumerate(names)]
    for k, n in enumerate(names):
        s = srcs[n]
        if lineinfo:
            s = add_loc(s, n + ".ptx", k + 1, file_directive=False)
        out += [l if not _HEAD.match(l) else "// " + l.strip() for l in s.split("\n")]
    return "\n".join(out) + "\n"


def assemble_many(srcs, ver="13.5", opt="3", extra=(), check_lineinfo=True):
    """{kernel: [Instr]} for all kernels of the corpus files `srcs` ({name: text}), with
    Instr.file/line naming the file and line; with check_lineinfo, also assembles without
    line info and fails if any kernel's SASS differs (line info must not change code)."""
    with_l = sasslib.parse(assemble(combine(srcs, True), ver, opt, extra, True, "corpus.ptx", True))
    if check_lineinfo:
        without = sasslib.parse(assemble(combine(srcs, False), ver, opt, extra, False, "corpus.ptx"))
        for k in with_l:
            a = [i.text() for i in with_l[k]]
            b = [i.text() for i in without.get(k, [])]
            if a != b:
                raise RuntimeError(f"{k}: -lineinfo changed the SASS (ptxas {ver} -O{opt})")
    return with_l
