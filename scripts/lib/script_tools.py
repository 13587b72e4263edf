"""Small Python steps of the shell scripts (here rather than in `python3 -c` strings or
heredocs). One subcommand a step:

  driver-is-real FILE     exit 0 when `parity driver-info --json` output FILE lists devices
                          of a real (not emulated) driver, else 1
  driver-path FILE        print the driver's path from that output
  ninja-bin               print the bin/ directory of the `ninja` Python package (exit 1
                          without the package)
  has-module NAME         exit 0 when python3 can import NAME (e.g. mesonbuild), else 1
  ms-per-frame NS FRAMES  print NS nanoseconds spread over FRAMES - 2 frames, in ms (the
                          run of FRAMES frames less the run of 2)
  seconds T0 T1           print T1 - T0 (seconds, as `date +%s.%N` writes them), to 1 ms
  externally-managed      exit 0 when python3's stdlib is marked EXTERNALLY-MANAGED (PEP
                          668: pip needs --break-system-packages), else 1
  kernel-ids FILE         print the "id" of each of bench-kernels' table.json "kernels",
                          space-separated
"""
import importlib
import json
import os
import sys


def main(argv):
    if not argv:
        sys.exit(__doc__)
    cmd, args = argv[0], argv[1:]
    if cmd == "driver-is-real":
        d = json.load(open(args[0]))
        return 0 if d.get("devices") and not d.get("emulated") else 1
    if cmd == "driver-path":
        print(json.load(open(args[0]))["path"])
        return 0
    if cmd == "ninja-bin":
        try:
            import ninja
        except ImportError:
            return 1
        print(getattr(ninja, "BIN_DIR", os.path.join(os.path.dirname(ninja.__file__), "data", "bin")))
        return 0
    if cmd == "has-module":
        try:
            importlib.import_module(args[0])
        except ImportError:
            return 1
        return 0
    if cmd == "ms-per-frame":
        print(int(args[0]) / 1e6 / (int(args[1]) - 2))
        return 0
    if cmd == "seconds":
        print(round(float(args[1]) - float(args[0]), 3))
        return 0
    if cmd == "externally-managed":
        import sysconfig

        return 0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1
    if cmd == "kernel-ids":
        print(" ".join(k["id"] for k in json.load(open(args[0]))["kernels"]))
        return 0
    sys.exit(f"script_tools.py: unknown step {cmd!r}\n{__doc__}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
