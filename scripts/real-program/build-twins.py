#!/usr/bin/env python3
"""Builds simtwin host twins of every .cu file a meson/ninja build compiles with nvcc.

meson writes nvcc calls made by custom_target (how VMAF builds its fatbins) into
build.ninja but not into compile_commands.json, so the compile database comes from
`ninja -t compdb` (every rule); this keeps the entries whose file is a .cu and whose
command runs nvcc, writes them as a compile_commands.json of their own, and builds one
kernel library per entry:

- with `kernels-host build --compile-commands FILE` when kernels-host has it (one call,
  see USE_COMPILE_COMMANDS below),
- otherwise one `kernels-host build -o OUT -- FLAGS FILE.cu` per entry, run in the entry's
  directory with the entry's own nvcc arguments (minus the compiler and `-o X`), so
  relative -I paths mean what they meant to nvcc.

Independently of kernels-host, each .cu is also compiled by nvcc to PTX for one
architecture with the same flags, and the `.entry` names there are compared with the
kernels in the twin's manifest: a kernel that nvcc compiles and the twin lacks (or the
reverse) is reported by name, so a silent drop shows before any run.

Usage: build-twins.py --kernels-host KH --nvcc NVCC --compdb ALL.json --out DIR --report R.json
Exit: 0 every .cu built with every kernel, 1 a .cu failed or kernels differ, 2 bad input.
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile


def die(msg):
    print(f"build-twins: {msg}", file=sys.stderr)
    sys.exit(2)


def supports_compile_commands(kh):
    r = subprocess.run([kh, "build", "--help"], capture_output=True, text=True)
    return "--compile-commands" in (r.stdout + r.stderr)


def nvcc_args(entry):
    """The entry's argv without the compiler, its output and the output-kind flags."""
    argv = entry.get("arguments") or shlex.split(entry["command"])
    out, i = [], 1
    while i < len(argv):
        a = argv[i]
        if a == "-o":
            i += 2
            continue
        if a.startswith("-o") and len(a) > 2 and not a.startswith("-opt"):
            i += 1
            continue
        out.append(a)
        i += 1
    return argv[0], out


def ptx_entries(nvcc, entry, arch):
    """Kernel names nvcc itself emits for this .cu (PTX for one architecture)."""
    _, args = nvcc_args(entry)
    keep = []
    i = 0
    while i < len(args):
        a = args[i]
        # drop output-kind and code-generation flags; keep defines, includes, language flags
        if a in ("--fatbin", "-fatbin", "--cubin", "-cubin", "--ptx", "-ptx", "-c", "--compile"):
            i += 1
            continue
        if a.startswith("-gencode") or a.startswith("--generate-code") or a.startswith("-arch") or a.startswith("--gpu-architecture") or a.startswith("-code") or a.startswith("--gpu-code"):
            i += 1 if ("=" in a or a.startswith("-gencode=")) else 2
            continue
        keep.append(a)
        i += 1
    with tempfile.TemporaryDirectory() as td:
        out = os.path.join(td, "k.ptx")
        r = subprocess.run([nvcc, "--ptx", f"-arch=compute_{arch}"] + keep + ["-o", out], cwd=entry["directory"], capture_output=True, text=True)
        if r.returncode != 0:
            return None, (r.stderr or r.stdout).strip()[-2000:]
        with open(out) as f:
            ptx = f.read()
    return sorted(set(re.findall(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([A-Za-z0-9_$]+)\s*\(", ptx, re.M))), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels-host", required=True)
    ap.add_argument("--nvcc", required=True)
    ap.add_argument("--compdb", required=True, help="ninja -t compdb output (every rule)")
    ap.add_argument("--out", required=True, help="directory for the kernel libraries")
    ap.add_argument("--cu-compdb", required=True, help="where to write the .cu-only compile_commands.json")
    ap.add_argument("--report", required=True)
    ap.add_argument("--arch", default="90", help="architecture of the nvcc PTX cross-check")
    a = ap.parse_args()

    try:
        with open(a.compdb) as f:
            db = json.load(f)
    except (OSError, ValueError) as e:
        die(f"cannot read {a.compdb}: {e}")
    cu = []
    for e in db:
        argv = e.get("arguments") or shlex.split(e.get("command", ""))
        if e.get("file", "").endswith(".cu") and argv and os.path.basename(argv[0]).startswith("nvcc"):
            cu.append(e)
    if not cu:
        die(f"{a.compdb} holds no nvcc command for a .cu file (was the build configured with CUDA?)")
    with open(a.cu_compdb, "w") as f:
        json.dump(cu, f, indent=2)
    os.makedirs(a.out, exist_ok=True)

    # The one switch: kernels-host's own compile-database mode when it exists.
    USE_COMPILE_COMMANDS = supports_compile_commands(a.kernels_host)

    def manifests():
        by_src = {}
        for fn in os.listdir(a.out):
            if fn.endswith(".simtwin.json"):
                try:
                    with open(os.path.join(a.out, fn)) as f:
                        m = json.load(f)
                    by_src[os.path.realpath(m.get("source", ""))] = m
                except (OSError, ValueError):
                    pass
        return by_src

    modules = []
    ok = True
    if USE_COMPILE_COMMANDS:
        r = subprocess.run([a.kernels_host, "build", "--compile-commands", a.cu_compdb, "-o", a.out], capture_output=True, text=True)
        batch = {"returncode": r.returncode, "stderr": r.stderr[-4000:], "stdout": r.stdout[-4000:]}
        ok &= r.returncode == 0
    else:
        batch = None
    for e in cu:
        src = os.path.normpath(os.path.join(e["directory"], e["file"]))
        stem = os.path.splitext(os.path.basename(src))[0]
        m = {"source": src, "stem": stem, "mode": "compile-commands" if USE_COMPILE_COMMANDS else "per-file"}
        if not USE_COMPILE_COMMANDS:
            _, args = nvcc_args(e)
            cmd = [a.kernels_host, "build", "-o", os.path.abspath(a.out), "--"] + args
            r = subprocess.run(cmd, cwd=e["directory"], capture_output=True, text=True)
            m["command"] = cmd
            m["returncode"] = r.returncode
            m["output"] = (r.stdout + r.stderr)[-4000:]
        # The manifest that names this source (kernels-host may prefix same-stem files).
        man = manifests().get(os.path.realpath(src))
        if man is not None:
            m["kernels"] = sorted(x["name"] for x in man.get("entries", []))
            m["globals"] = sorted(x["name"] for x in man.get("globals", []))
            m["warnings"] = man.get("warnings", [])
        else:
            m["kernels"] = None
            ok = False
        if m.get("returncode", 0) != 0:
            ok = False
        want, err = ptx_entries(a.nvcc, e, a.arch)
        m["nvcc_entries"] = want
        if err:
            m["nvcc_error"] = err
        if want is not None and m["kernels"] is not None:
            m["missing_in_twin"] = sorted(set(want) - set(m["kernels"]))
            m["extra_in_twin"] = sorted(set(m["kernels"]) - set(want))
            if m["missing_in_twin"] or m["extra_in_twin"]:
                ok = False
        modules.append(m)
        k = "no library" if m["kernels"] is None else f"{len(m['kernels'])} kernels"
        w = "?" if want is None else str(len(want))
        miss = m.get("missing_in_twin") or []
        print(f"  {stem}: {k} (nvcc: {w})" + (f", MISSING {len(miss)}: {', '.join(miss[:10])}" if miss else "") + ("" if m.get("returncode", 0) == 0 else f", kernels-host exit {m['returncode']}"))
    with open(a.report, "w") as f:
        json.dump({"mode": "compile-commands" if USE_COMPILE_COMMANDS else "per-file", "batch": batch, "ok": ok, "modules": modules}, f, indent=2)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
