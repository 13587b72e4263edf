// gridsum of coop.cu alone (no inline PTX, which host twins refuse): tests/coop.rs runs it
// as a host twin (kernels-host's cooperative_groups grid_group) from nvcc's fatbin.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void gridsum(unsigned *data, unsigned *out, int rounds) {
    cg::grid_group g = cg::this_grid();
    unsigned long long n = g.size();
    unsigned long long r = g.thread_rank();
    for (int k = 0; k < rounds; k++) {
        data[r] += (unsigned)k + 1;
        g.sync();
        unsigned long long o = (r + 1 + 977ull * k) % n;
        out[r] = out[r] * 31u + data[o];
        g.sync();
    }
}
