"""The scale_cuda kernels' type pairs (`Subsample_Nearest_<in>_<out>`) in a file's bytes or
in its gzip members (FFmpeg's --enable-ptx-compression): one a line, sorted.
scripts/ffmpeg-filters: which scale_cuda cases to run."""
import re, sys, zlib
data = open(sys.argv[1], "rb").read()
texts = [data]
i = data.find(b"\x1f\x8b\x08")
while i >= 0:
    try:
        texts.append(zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[i:], 1 << 26))
    except zlib.error:
        pass
    i = data.find(b"\x1f\x8b\x08", i + 1)
names = {m.decode() for t in texts for m in re.findall(rb"Subsample_Nearest_([a-z0-9]+_[a-z0-9]+)", t)}
print("\n".join(sorted(names)))
