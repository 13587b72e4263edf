"""The provenance of a scripts/real-program-check run, as JSON: OUT_JSON VMAF_SRC VMAF NVH ROOT
NVCC MESON_OPTS MODE (the VMAF tree and binary, nv-codec-headers, this repository, nvcc,
the meson options as one string, the mode): commits, versions, the machine."""
import json, subprocess, sys, platform, os

out, vmaf_src, vmaf, nvh, root, nvcc, meson_opts, mode = sys.argv[1:9]


def sh(*a, cwd=None):
    try:
        r = subprocess.run(list(a), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd)
        return r.stdout.strip() if r.returncode == 0 else None
    except OSError:
        return None


cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), None)
json.dump({
  "vmaf_src": vmaf_src, "vmaf_commit": sh("git", "rev-parse", "HEAD", cwd=vmaf_src),
  "vmaf_version": (sh(vmaf, "--version") or "").split()[-1:],
  "nv_codec_headers": nvh, "nv_codec_headers_commit": sh("git", "rev-parse", "HEAD", cwd=nvh),
  "simtwin_commit": sh("git", "rev-parse", "HEAD", cwd=root),
  "simtwin_dirty": bool(sh("git", "status", "--porcelain", "--untracked-files=no", cwd=root)),
  "nvcc": nvcc, "nvcc_version": (sh(nvcc, "--version") or "").splitlines()[-1:],
  "meson": sh("meson", "--version"), "ninja": sh("ninja", "--version"),
  "meson_options": meson_opts.split(),
  "mode": mode, "gxx": (sh("g++", "--version") or "").splitlines()[:1],
  "machine": {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release()},
}, open(out, "w"), indent=2)
