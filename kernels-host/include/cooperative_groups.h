/* simtwin shim for <cooperative_groups.h>: thread blocks and static tiles of a warp,
   built on the barrier and warp collectives of the runtime table, and the grid group
   (the context's workspace from the runtime's grid_workspace, made by its first
   cooperative launch as on the device; the barrier nvcc's header compiles to). Coalesced groups and cg::reduce are not provided (a
   compile error names them). */
#ifndef __SIMTWIN_SHIM_COOPERATIVE_GROUPS_H
#define __SIMTWIN_SHIM_COOPERATIVE_GROUPS_H
#pragma GCC system_header
#include "simtwin/names_push.h"
#include "simtwin/prelude.h"

namespace cooperative_groups {

class thread_block {
public:
    void sync(__SIMTWIN_SITE_PARAMS) const { __syncthreads(__SIMTWIN_SITE_FWD); }
    static unsigned long long thread_rank() { return ::__simtwin::tls_ctx->linear_tid; }
    static unsigned long long size() {
        const ::__simtwin::simtwin_dim3_t &d = ::__simtwin::tls_ctx->block_dim; return (unsigned long long)d.x * d.y * d.z;
    }
    static unsigned long long num_threads() { return size(); }
    static dim3 group_index() { return ::__simtwin::to_dim3(::__simtwin::tls_ctx->block_idx); }
    static dim3 thread_index() { return ::__simtwin::to_dim3(::__simtwin::tls_ctx->thread_idx); }
    static dim3 group_dim() { return ::__simtwin::to_dim3(::__simtwin::tls_ctx->block_dim); }
    static dim3 dim_threads() { return ::__simtwin::to_dim3(::__simtwin::tls_ctx->block_dim); }
};
__SIMTWIN_INLINE thread_block this_thread_block() { return thread_block(); }
__SIMTWIN_INLINE void sync(const thread_block &b, __SIMTWIN_SITE_PARAMS) { b.sync(__SIMTWIN_SITE_FWD); }

/* The grid of a cooperative launch (cuLaunchCooperativeKernel): sync() is the device's
   grid barrier on the launch's workspace (block 0 adds 0x80000001 - blocks, the others 1,
   to the word at offset 4; each waits for its top bit to flip). Outside a cooperative
   launch there is no workspace: is_valid() is false and sync() traps, as on the device. */
class grid_group {
    static unsigned long long workspace() {
        const ::__simtwin::simtwin_runtime_t *r = ::__simtwin::rt;
        if (!r || r->size < offsetof(::__simtwin::simtwin_runtime_t, grid_workspace) + sizeof r->grid_workspace) return 0;
        return r->grid_workspace();
    }
    static unsigned int blocks() {
        const ::__simtwin::simtwin_dim3_t &g = ::__simtwin::tls_ctx->grid_dim; return g.x * g.y * g.z;
    }
public:
    bool is_valid() const { return workspace() != 0; }
    void sync(__SIMTWIN_SITE_PARAMS) const {
        unsigned long long ws = workspace();
        if (!ws) __trap(__SIMTWIN_SITE_FWD);
        __syncthreads(__SIMTWIN_SITE_FWD);
        const ::__simtwin::simtwin_thread_ctx_t *c = ::__simtwin::tls_ctx;
        if (c->linear_tid == 0) {
            const ::__simtwin::simtwin_dim3_t &b = c->block_idx;
            unsigned int add = (b.x | b.y | b.z) == 0 ? 0x80000001u - blocks() : 1u;
            unsigned int *ctr = (unsigned int *)(uintptr_t)(ws + 4);
            unsigned int old = __atomic_fetch_add(ctr, add, __ATOMIC_RELEASE);
            while ((int)(__atomic_load_n(ctr, __ATOMIC_ACQUIRE) ^ old) >= 0)
                ::__simtwin::rt->yield_now(::__simtwin::simtwin_site_t{__simtwin_site_file, __simtwin_site_line, 0u});
        }
        __syncthreads(__SIMTWIN_SITE_FWD);
    }
    static unsigned long long block_rank() {
        const ::__simtwin::simtwin_dim3_t &b = ::__simtwin::tls_ctx->block_idx, &g = ::__simtwin::tls_ctx->grid_dim;
        return ((unsigned long long)b.z * g.y + b.y) * g.x + b.x;
    }
    static unsigned long long num_blocks() { return blocks(); }
    static unsigned long long thread_rank() { return block_rank() * thread_block::size() + ::__simtwin::tls_ctx->linear_tid; }
    static unsigned long long size() { return num_blocks() * thread_block::size(); }
    static unsigned long long num_threads() { return size(); }
    static dim3 group_dim() { return ::__simtwin::to_dim3(::__simtwin::tls_ctx->grid_dim); }
    static dim3 dim_blocks() { return group_dim(); }
    static dim3 block_index() { return ::__simtwin::to_dim3(::__simtwin::tls_ctx->block_idx); }
};
__SIMTWIN_INLINE grid_group this_grid() { return grid_group(); }
__SIMTWIN_INLINE void sync(const grid_group &g, __SIMTWIN_SITE_PARAMS) { g.sync(__SIMTWIN_SITE_FWD); }

/* A tile of N consecutive lanes (N a power of two <= 32) of a warp. */
template <unsigned int N> class thread_block_tile {
    static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "tile size must be a power of two <= 32");
public:
    static unsigned int mask() {
        unsigned int base = ((::__simtwin::tls_ctx->linear_tid & 31u) / N) * N;
        return N == 32 ? 0xffffffffu : (((1u << N) - 1u) << base);
    }
    void sync(__SIMTWIN_SITE_PARAMS) const { __syncwarp(mask(), __SIMTWIN_SITE_FWD); }
    static unsigned long long thread_rank() { return (::__simtwin::tls_ctx->linear_tid & 31u) % N; }
    static constexpr unsigned long long size() { return N; }
    static constexpr unsigned long long num_threads() { return N; }
    static unsigned long long meta_group_rank() { return ::__simtwin::tls_ctx->linear_tid / N; }
    static unsigned long long meta_group_size() { return (thread_block::size() + N - 1) / N; }
    template <class T> T shfl(T v, int src, __SIMTWIN_SITE_PARAMS) const { return __shfl_sync(mask(), v, src, N, __SIMTWIN_SITE_FWD); }
    template <class T> T shfl_up(T v, unsigned int d, __SIMTWIN_SITE_PARAMS) const { return __shfl_up_sync(mask(), v, d, N, __SIMTWIN_SITE_FWD); }
    template <class T> T shfl_down(T v, unsigned int d, __SIMTWIN_SITE_PARAMS) const { return __shfl_down_sync(mask(), v, d, N, __SIMTWIN_SITE_FWD); }
    template <class T> T shfl_xor(T v, int m, __SIMTWIN_SITE_PARAMS) const { return __shfl_xor_sync(mask(), v, m, N, __SIMTWIN_SITE_FWD); }
    /* Ballot bits are relative to the tile's first lane. */
    unsigned int ballot(int pred, __SIMTWIN_SITE_PARAMS) const {
        unsigned int b = __ballot_sync(mask(), pred, __SIMTWIN_SITE_FWD);
        return N == 32 ? b : (b >> (((::__simtwin::tls_ctx->linear_tid & 31u) / N) * N)) & ((1u << N) - 1u);
    }
    int any(int pred, __SIMTWIN_SITE_PARAMS) const { return __any_sync(mask(), pred, __SIMTWIN_SITE_FWD); }
    int all(int pred, __SIMTWIN_SITE_PARAMS) const { return __all_sync(mask(), pred, __SIMTWIN_SITE_FWD); }
};
template <unsigned int N, class Parent> __SIMTWIN_INLINE thread_block_tile<N> tiled_partition(const Parent &) {
    return thread_block_tile<N>();
}
template <unsigned int N> __SIMTWIN_INLINE void sync(const thread_block_tile<N> &t, __SIMTWIN_SITE_PARAMS) { t.sync(__SIMTWIN_SITE_FWD); }

} // namespace cooperative_groups
#include "simtwin/names_pop.h"
#endif
