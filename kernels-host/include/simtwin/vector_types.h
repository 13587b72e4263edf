/* CUDA vector types with the alignment vector_types.h gives them on 64-bit Linux, so
   that struct layouts and kernel parameter sizes match, and named structs so that
   C++ mangled kernel names match nvcc's. Built-in variables read the thread context. */
#ifndef __SIMTWIN_VECTOR_TYPES_H
#define __SIMTWIN_VECTOR_TYPES_H
#pragma GCC system_header

#define __SIMTWIN_VEC1(T, N, A) \
    struct __attribute__((aligned(A))) N##1 { T x; }; \
    __SIMTWIN_INLINE N##1 make_##N##1(T x) { N##1 r; r.x = x; return r; }
#define __SIMTWIN_VEC2(T, N, A) \
    struct __attribute__((aligned(A))) N##2 { T x, y; }; \
    __SIMTWIN_INLINE N##2 make_##N##2(T x, T y) { N##2 r; r.x = x; r.y = y; return r; }
#define __SIMTWIN_VEC3(T, N, A) \
    struct __attribute__((aligned(A))) N##3 { T x, y, z; }; \
    __SIMTWIN_INLINE N##3 make_##N##3(T x, T y, T z) { N##3 r; r.x = x; r.y = y; r.z = z; return r; }
#define __SIMTWIN_VEC4(T, N, A) \
    struct __attribute__((aligned(A))) N##4 { T x, y, z, w; }; \
    __SIMTWIN_INLINE N##4 make_##N##4(T x, T y, T z, T w) { \
        N##4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }
/* T, name, alignment of 1, 2, 3, 4 components (vector_types.h on LP64). */
#define __SIMTWIN_VECS(T, N, A1, A2, A3, A4) \
    __SIMTWIN_VEC1(T, N, A1) __SIMTWIN_VEC2(T, N, A2) __SIMTWIN_VEC3(T, N, A3) __SIMTWIN_VEC4(T, N, A4)

__SIMTWIN_VECS(signed char, char, 1, 2, 1, 4)
__SIMTWIN_VECS(unsigned char, uchar, 1, 2, 1, 4)
__SIMTWIN_VECS(short, short, 2, 4, 2, 8)
__SIMTWIN_VECS(unsigned short, ushort, 2, 4, 2, 8)
__SIMTWIN_VECS(int, int, 4, 8, 4, 16)
__SIMTWIN_VECS(unsigned int, uint, 4, 8, 4, 16)
__SIMTWIN_VECS(long, long, 8, 16, 8, 16)
__SIMTWIN_VECS(unsigned long, ulong, 8, 16, 8, 16)
__SIMTWIN_VECS(long long, longlong, 8, 16, 8, 16)
__SIMTWIN_VECS(unsigned long long, ulonglong, 8, 16, 8, 16)
__SIMTWIN_VECS(float, float, 4, 8, 4, 16)
__SIMTWIN_VECS(double, double, 8, 16, 8, 16)

#undef __SIMTWIN_VEC1
#undef __SIMTWIN_VEC2
#undef __SIMTWIN_VEC3
#undef __SIMTWIN_VEC4
#undef __SIMTWIN_VECS

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
        : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};

static_assert(sizeof(uint3) == sizeof(::__simtwin::simtwin_dim3_t), "uint3 layout");
static_assert(sizeof(dim3) == sizeof(::__simtwin::simtwin_dim3_t), "dim3 layout");
static_assert(alignof(float4) == 16 && alignof(double2) == 16 && alignof(char3) == 1 &&
              alignof(short4) == 8 && alignof(long3) == 8, "CUDA vector alignment");

/* Built-in variables: the executor's context for the running CUDA thread, read member
   by member and returned by value (a uint3 / dim3 lvalue over the context's
   simtwin_dim3_t would be a type pun that lets g++ reorder the reads past the runner's
   stores once the kernel is inlined into it). */
namespace __simtwin {
__attribute__((always_inline)) inline uint3 to_uint3(const simtwin_dim3_t &__simtwin_d) {
    return uint3{__simtwin_d.x, __simtwin_d.y, __simtwin_d.z};
}
__attribute__((always_inline)) inline dim3 to_dim3(const simtwin_dim3_t &__simtwin_d) {
    return dim3(__simtwin_d.x, __simtwin_d.y, __simtwin_d.z);
}
}
/* kernels-host's rewriter replaces each read of threadIdx, blockIdx, blockDim and gridDim
   in user code by the matching expression (so that struct members and parameters of
   those names, in the toolkit's headers and the user's, stay what they are). Code that
   includes the shim without the rewriter gets macros. */
#ifndef __SIMTWIN_BUILTINS_REWRITTEN
#define threadIdx (::__simtwin::to_uint3(::__simtwin::tls_ctx->thread_idx))
#define blockIdx (::__simtwin::to_uint3(::__simtwin::tls_ctx->block_idx))
#define blockDim (::__simtwin::to_dim3(::__simtwin::tls_ctx->block_dim))
#define gridDim (::__simtwin::to_dim3(::__simtwin::tls_ctx->grid_dim))
#endif
static constexpr int warpSize = 32;

#endif
