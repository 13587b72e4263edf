"""Quick look: assemble cases (by name prefix) or PTX files and print SASS with PTX lines."""
import sys, os, fnmatch
sys.path.insert(0, os.path.dirname(__file__))
import toolchain, sasslib, ptxgen, cases

SHOW = {"BAR", "MEMBAR", "BRA", "ATOMG", "RED", "FENCE", "CCTL", "WARPSYNC", "BSSY", "BSYNC", "STL", "LDL", "STS", "LDS", "CALL", "RET", "MOV", "SEL", "FSEL"}

def show(name, src, ver, opt, extra):
    ks = toolchain.assemble_lines(src, name + ".ptx", ver, opt, extra)
    srcl = src.split("\n")
    for k, ins in ks.items():
        print(f"== {k}  {sasslib.float_counts(ins)}")
        for i in ins:
            if not (i.opcode in sasslib.FLOAT_OPS or i.opcode in SHOW or os.environ.get("ALL")): continue
            pl = srcl[i.line - 1].strip() if i.line else ""
            print(f"  {i.line!s:>4} {i.text():50s} | {pl}")

def main():
    args = sys.argv[1:]
    ver = "13.5"; opt = "3"; extra = []
    while args and args[0].startswith("-"):
        a = args.pop(0)
        if a == "--v130": ver = "13.0"
        elif a.startswith("-O"): opt = a[2:]
        else: extra.append(a)
    for a in args:
        if a.endswith(".ptx"):
            show(os.path.basename(a)[:-4], open(a).read(), ver, opt, extra); continue
        for c in cases.CASES:
            if fnmatch.fnmatch(c["name"], a):
                src = ptxgen.ptx_file(c["name"], c["doc"], c["body"], raw=c.get("raw"), version=c.get("version", "8.0"), extra=c.get("extra", ""))
                if c.get("raw") is None or True:
                    print("#", c["doc"])
                show(c["name"], src, ver, opt, extra)

main()
