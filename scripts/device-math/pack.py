"""Runs on the device after `dump`: delta-codes and xz-compresses each window's outputs,
packs them into tar files of at most ~15 MiB under $OUT (windows in priority order; any
that do not fit are named in pack.log), plus the compressed sample outputs."""
import io, lzma, os, sys, tarfile
from multiprocessing import Pool
import numpy as np

SRC, OUT = sys.argv[1], sys.argv[2]
ORDER = [l.split()[1] for l in open(os.path.join(SRC, "dump.log")) if l.startswith("window ")]
LIMIT = 15 * 1024 * 1024


def encode(name):
    out = np.fromfile(os.path.join(SRC, f"w_{name}.bin"), dtype=np.uint32)
    d = np.diff(out.astype(np.int64), prepend=0)
    esc = np.abs(d) > 127
    d8 = np.where(esc, -128, d).astype(np.int8)
    idx = np.nonzero(esc)[0].astype(np.uint32)
    buf = io.BytesIO()
    np.savez(buf, d8=d8, idx=idx, val=out[idx])
    return name, lzma.compress(buf.getvalue(), preset=6)


if __name__ == "__main__":
    with Pool(16) as p:
        blobs = dict(p.map(encode, ORDER, chunksize=1))
    log = open(os.path.join(OUT, "pack.log"), "w")
    part, size, tf = 0, 0, None
    for name in ORDER:
        b = blobs[name]
        if tf is None or size + len(b) > LIMIT:
            if tf is not None:
                tf.close()
            part += 1
            if part > 6:
                print(f"dropped {name} ({len(b)} bytes)", file=log)
                continue
            tf = tarfile.open(os.path.join(OUT, f"windows{part}.tar"), "w")
            size = 0
        ti = tarfile.TarInfo(f"{name}.npz.xz")
        ti.size = len(b)
        tf.addfile(ti, io.BytesIO(b))
        size += len(b)
        print(f"{name} -> windows{part}.tar {len(b)} bytes", file=log)
    if tf is not None:
        tf.close()
    if os.path.exists(os.path.join(SRC, "samples_out.bin")):
        s = open(os.path.join(SRC, "samples_out.bin"), "rb").read()
        open(os.path.join(OUT, "samples_out.bin.xz"), "wb").write(lzma.compress(s, preset=6))
    log.close()
    print(open(os.path.join(OUT, "pack.log")).read())
