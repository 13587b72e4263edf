"""The GPU machine a run used, as JSON (argv[1]): nvidia-smi's GPU, nvcc (argv[2]), the real
libcuda.so.1 (argv[3]), meson, ninja and the meson options (argv[4]), the host CPU."""
import json, subprocess, sys, os
def sh(*a):
    try:
        return subprocess.run(list(a), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout.strip()
    except OSError as e:
        return str(e)
json.dump({"nvidia_smi": sh("nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"),
           "nvcc": sh(sys.argv[2], "--version").splitlines()[-1:], "real_libcuda": sys.argv[3],
           "meson": sh("meson", "--version"), "ninja": sh("ninja", "--version"), "meson_options": sys.argv[4].split(),
           "cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), None),
           "cores": os.cpu_count()}, open(sys.argv[1], "w"), indent=2)
