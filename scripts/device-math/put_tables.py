"""Replaces the generated table block of kernels-host/runtime/simtwin_sfu.cpp with the
output of fit_tables.py:  python3 put_tables.py tables.inc path/to/simtwin_sfu.cpp"""
import sys
inc, path = sys.argv[1], sys.argv[2]
src = open(path).read()
begin = src.index("/* ---- H200 segment tables")
begin = src.index("\n", begin) + 1
end = src.index("/* ---- bit helpers")
open(path, "w").write(src[:begin] + open(inc).read() + "\n" + src[end:])
