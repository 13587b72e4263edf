#!/usr/bin/env python3
"""Copies nv-codec-headers and adds the driver entry points VMAF's CUDA backend calls
that the copy's loader does not resolve yet.

VMAF's meson asks for nv-codec-headers at commit 876af32a or later (code.ffmpeg.org);
older trees (the GitHub mirror of early 2025, Debian's 11.1) lack the loader entries for
cuStreamCreateWithPriority, cuCtxGetStreamPriorityRange, cuMemHostAlloc, cuMemFreeHost,
cuLaunchHostFunc, cuCtxSynchronize and cuMemFreeAsync. For each entry below this adds,
only where it is missing, the `tcuNAME` typedef (dynlink_cuda.h), the `CudaFunctions`
member and a mandatory `LOAD_SYMBOL` line (dynlink_loader.h). The prototypes are the
CUDA driver API's (cuda.h); the symbol names are the ones libcuda.so.1 exports.

Usage: patch-nv-codec-headers.py SRC_DIR DEST_DIR
  SRC_DIR   an nv-codec-headers tree (with include/ffnvcodec/)
  DEST_DIR  where the patched copy goes (DEST_DIR/include/ffnvcodec/*.h and
            DEST_DIR/lib/pkgconfig/ffnvcodec.pc); replaced if it exists
Prints one line per entry: added or already present. Exit 0 ok, 2 bad input.
"""

import os
import re
import shutil
import sys

# (member name, symbol in libcuda.so.1, typedef text after "typedef CUresult CUDAAPI tcuNAME")
ENTRIES = [
    ("cuCtxSynchronize", "cuCtxSynchronize", "(void);"),
    ("cuCtxGetStreamPriorityRange", "cuCtxGetStreamPriorityRange", "(int *leastPriority, int *greatestPriority);"),
    ("cuStreamCreateWithPriority", "cuStreamCreateWithPriority", "(CUstream *phStream, unsigned int flags, int priority);"),
    ("cuMemHostAlloc", "cuMemHostAlloc", "(void **pp, size_t bytesize, unsigned int Flags);"),
    ("cuMemFreeHost", "cuMemFreeHost", "(void *p);"),
    ("cuMemFreeAsync", "cuMemFreeAsync", "(CUdeviceptr dptr, CUstream hStream);"),
    ("cuLaunchHostFunc", "cuLaunchHostFunc", "(CUstream hStream, CUhostFn *fn, void *userData);"),
]

# Types the typedefs above need, added before the first typedef if absent. CUhostFn is a
# function type, as CUstreamCallback is in these headers (VMAF casts to `CUhostFn*`).
TYPES = [
    ("CUhostFn", "typedef void CUDAAPI CUhostFn(void *userData);"),
]


def die(msg):
    print(f"patch-nv-codec-headers: {msg}", file=sys.stderr)
    sys.exit(2)


def main():
    if len(sys.argv) != 3:
        die("usage: patch-nv-codec-headers.py SRC_DIR DEST_DIR")
    src, dest = sys.argv[1], sys.argv[2]
    inc = os.path.join(src, "include", "ffnvcodec")
    cuda_h = os.path.join(inc, "dynlink_cuda.h")
    loader_h = os.path.join(inc, "dynlink_loader.h")
    for f in (cuda_h, loader_h):
        if not os.path.isfile(f):
            die(f"{f} not found: {src} is not an nv-codec-headers tree")
    if os.path.exists(dest):
        shutil.rmtree(dest)
    out_inc = os.path.join(dest, "include", "ffnvcodec")
    shutil.copytree(inc, out_inc)

    with open(os.path.join(out_inc, "dynlink_cuda.h")) as f:
        cuda = f.read()
    with open(os.path.join(out_inc, "dynlink_loader.h")) as f:
        loader = f.read()

    # dynlink_cuda.h: new typedefs go after the last `typedef CUresult CUDAAPI tcu...;`
    # line that is outside any platform block, i.e. after tcuStreamAddCallback (always
    # present: it is the anchor used for both types and functions).
    anchor = re.search(r"^typedef CUresult CUDAAPI tcuStreamAddCallback\(.*?\);\n", cuda, re.M)
    if not anchor:
        die("dynlink_cuda.h: no tcuStreamAddCallback typedef to anchor the additions")
    add_cuda = ""
    for name, text in TYPES:
        if re.search(r"\b" + name + r"\b", cuda):
            print(f"type {name}: already present")
        else:
            add_cuda += text + "\n"
            print(f"type {name}: added")
    for member, _sym, proto in ENTRIES:
        if re.search(r"\bt" + member + r"\s*\(", cuda):
            print(f"typedef t{member}: already present")
        else:
            add_cuda += f"typedef CUresult CUDAAPI t{member}{proto}\n"
            print(f"typedef t{member}: added")
    cuda = cuda[: anchor.end()] + add_cuda + cuda[anchor.end():]

    # dynlink_loader.h: members after `tcuStreamAddCallback *cuStreamAddCallback;`,
    # loads after its LOAD_SYMBOL line (both inside the CUDA part of the loader).
    m_anchor = re.search(r"^(\s*)tcuStreamAddCallback \*cuStreamAddCallback;\n", loader, re.M)
    l_anchor = re.search(r'^(\s*)LOAD_SYMBOL\(cuStreamAddCallback,.*\n', loader, re.M)
    if not m_anchor or not l_anchor:
        die("dynlink_loader.h: no cuStreamAddCallback member/LOAD_SYMBOL to anchor the additions")
    add_members, add_loads = "", ""
    for member, sym, _proto in ENTRIES:
        if re.search(r"\*\s*" + member + r"\s*;", loader):
            print(f"member {member}: already present")
        else:
            add_members += f"{m_anchor.group(1)}t{member} *{member};\n"
            print(f"member {member}: added")
        if re.search(r'LOAD_SYMBOL(_OPT)?\(' + member + r"\s*,", loader):
            print(f"load {sym}: already present")
        else:
            add_loads += f'{l_anchor.group(1)}LOAD_SYMBOL({member}, t{member}, "{sym}");\n'
            print(f"load {sym}: added")
    # Insert the later anchor first so the earlier offsets stay valid.
    first, second = sorted([(m_anchor.end(), add_members), (l_anchor.end(), add_loads)])
    loader = loader[: second[0]] + second[1] + loader[second[0]:]
    loader = loader[: first[0]] + first[1] + loader[first[0]:]

    with open(os.path.join(out_inc, "dynlink_cuda.h"), "w") as f:
        f.write(cuda)
    with open(os.path.join(out_inc, "dynlink_loader.h"), "w") as f:
        f.write(loader)

    # pkg-config file, as the tree's Makefile would write it for PREFIX=DEST_DIR.
    pc_in = os.path.join(src, "ffnvcodec.pc.in")
    if os.path.isfile(pc_in):
        pc_dir = os.path.join(dest, "lib", "pkgconfig")
        os.makedirs(pc_dir, exist_ok=True)
        with open(pc_in) as f:
            pc = f.read().replace("@@PREFIX@@", os.path.abspath(dest))
        with open(os.path.join(pc_dir, "ffnvcodec.pc"), "w") as f:
            f.write(pc)


if __name__ == "__main__":
    main()
