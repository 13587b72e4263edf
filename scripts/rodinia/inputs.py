"""scripts/rodinia-check's inputs, the same every time: hotspot's temperature and power
tables (512x512) and a 4096-node graph for bfs, from a fixed seed.

    inputs.py DIR"""
import random, sys
d = sys.argv[1]; r = random.Random(7)
with open(d + "/temp_512", "w") as f:
    f.writelines("%f\n" % (320 + r.random() * 20) for _ in range(512 * 512))
with open(d + "/power_512", "w") as f:
    f.writelines("%f\n" % (r.random() * 0.002) for _ in range(512 * 512))
n = 4096
edges = [[(r.randrange(n), r.randrange(1, 10)) for _ in range(r.randrange(1, 8))] for _ in range(n)]
with open(d + "/graph4096.txt", "w") as f:
    f.write("%d\n" % n); s = 0
    for e in edges:
        f.write("%d %d\n" % (s, len(e))); s += len(e)
    f.write("\n0\n\n%d\n" % s)
    for e in edges:
        f.writelines("%d %d\n" % x for x in e)
