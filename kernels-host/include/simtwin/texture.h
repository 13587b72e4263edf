/* Texture and surface functions of device code (texture_indirect_functions.h and
   surface_indirect_functions.h in the CUDA toolkit): tex1Dfetch, tex1D/2D/3D, layered,
   cubemap, Lod, Grad, tex2Dgather, surf*read / surf*write, with the toolkit's names and
   overloads. Every one fills a simtwin_tex_request_t and calls runtime->texture: the
   driver samples as the device does, the same entry PTX mode's tex/tld4/suld/sust use. */
#ifndef __SIMTWIN_TEXTURE_H
#define __SIMTWIN_TEXTURE_H
#pragma GCC system_header
#include <string.h>

#ifndef __SIMTWIN_CUDA_TOOLKIT
enum cudaSurfaceBoundaryMode { cudaBoundaryModeZero = 0, cudaBoundaryModeClamp = 1, cudaBoundaryModeTrap = 2 };
#endif

namespace __simtwin {
namespace texops {

/* How a result type takes the four words the driver answers. */
template <class T> struct traits;
#define __SIMTWIN_TEX_SCALAR(T, KIND)                                                    \
    template <> struct traits<T> {                                                      \
        static const uint32_t kind = KIND;                                              \
        static inline T one(uint32_t w) { return conv(w); }                              \
        static inline T make(const uint32_t *d) { return conv(d[0]); }                   \
        static inline T conv(uint32_t w) {                                               \
            if (KIND == SIMTWIN_TEX_F32) { float f; memcpy(&f, &w, 4); return (T)f; }    \
            return (T)w;                                                                 \
        }                                                                                \
    };
#define __SIMTWIN_TEX_VEC(V, T, KIND)                                                                            \
    template <> struct traits<V##1> {                                                                          \
        static const uint32_t kind = KIND;                                                                     \
        static inline V##1 make(const uint32_t *d) { V##1 r; r.x = traits<T>::conv(d[0]); return r; }          \
    };                                                                                                        \
    template <> struct traits<V##2> {                                                                          \
        static const uint32_t kind = KIND;                                                                     \
        static inline V##2 make(const uint32_t *d) {                                                           \
            V##2 r; r.x = traits<T>::conv(d[0]); r.y = traits<T>::conv(d[1]); return r; }                      \
    };                                                                                                        \
    template <> struct traits<V##4> {                                                                          \
        static const uint32_t kind = KIND;                                                                     \
        static inline V##4 make(const uint32_t *d) {                                                           \
            V##4 r; r.x = traits<T>::conv(d[0]); r.y = traits<T>::conv(d[1]);                                  \
            r.z = traits<T>::conv(d[2]); r.w = traits<T>::conv(d[3]); return r; }                              \
    };
__SIMTWIN_TEX_SCALAR(float, SIMTWIN_TEX_F32)
__SIMTWIN_TEX_SCALAR(char, SIMTWIN_TEX_S32)
__SIMTWIN_TEX_SCALAR(signed char, SIMTWIN_TEX_S32)
__SIMTWIN_TEX_SCALAR(unsigned char, SIMTWIN_TEX_U32)
__SIMTWIN_TEX_SCALAR(short, SIMTWIN_TEX_S32)
__SIMTWIN_TEX_SCALAR(unsigned short, SIMTWIN_TEX_U32)
__SIMTWIN_TEX_SCALAR(int, SIMTWIN_TEX_S32)
__SIMTWIN_TEX_SCALAR(unsigned int, SIMTWIN_TEX_U32)
__SIMTWIN_TEX_VEC(float, float, SIMTWIN_TEX_F32)
__SIMTWIN_TEX_VEC(char, signed char, SIMTWIN_TEX_S32)
__SIMTWIN_TEX_VEC(uchar, unsigned char, SIMTWIN_TEX_U32)
__SIMTWIN_TEX_VEC(short, short, SIMTWIN_TEX_S32)
__SIMTWIN_TEX_VEC(ushort, unsigned short, SIMTWIN_TEX_U32)
__SIMTWIN_TEX_VEC(int, int, SIMTWIN_TEX_S32)
__SIMTWIN_TEX_VEC(uint, unsigned int, SIMTWIN_TEX_U32)
#undef __SIMTWIN_TEX_SCALAR
#undef __SIMTWIN_TEX_VEC

/* Sends the request; a driver whose table predates the entry cannot sample. */
static inline void call(simtwin_tex_request_t &r) {
    if (::__simtwin::rt->size < offsetof(simtwin_runtime_t, texture) + sizeof(void *))
        __simtwin_trap_now(SIMTWIN_TRAP_UNSUPPORTED, "texture instruction: the driver's runtime table has no texture entry (an older simtwin)", __FILE__, __LINE__);
    ::__simtwin::rt->texture(&r);
}

template <class T>
static inline T fetch(uint32_t op, uint32_t geom, unsigned long long obj, float x, float y, float z, int layer,
                      float lod, const float *grad, uint32_t comp) {
    simtwin_tex_request_t r;
    memset(&r, 0, sizeof r);
    r.op = op;
    r.geometry = geom;
    r.handle = obj;
    r.coord[0] = x;
    r.coord[1] = y;
    r.coord[2] = z;
    r.icoord[3] = layer;
    r.lod = lod;
    if (grad)
        memcpy(r.grad, grad, sizeof r.grad);
    r.component = comp;
    r.result = traits<T>::kind;
    call(r);
    return traits<T>::make(r.data);
}

template <class T>
static inline T fetch_int(unsigned long long obj, int x) {
    simtwin_tex_request_t r;
    memset(&r, 0, sizeof r);
    r.op = SIMTWIN_TEX_FETCH;
    r.geometry = SIMTWIN_TEX_1D;
    r.handle = obj;
    r.icoord[0] = x;
    r.flags = SIMTWIN_TEX_INT_COORDS;
    r.result = traits<T>::kind;
    call(r);
    return traits<T>::make(r.data);
}

static inline uint32_t boundary(int mode) {
    /* cudaSurfaceBoundaryMode: 0 zero, 1 clamp, 2 trap. */
    return mode == 2 ? SIMTWIN_SURF_TRAP : mode == 1 ? SIMTWIN_SURF_CLAMP : SIMTWIN_SURF_ZERO;
}

static inline void surf(uint32_t op, uint32_t geom, unsigned long long obj, void *data, uint32_t size, int x, int y, int z,
                        int layer, int mode) {
    simtwin_tex_request_t r;
    memset(&r, 0, sizeof r);
    r.op = op;
    r.geometry = geom;
    r.handle = obj;
    r.icoord[0] = x;
    r.icoord[1] = y;
    r.icoord[2] = z;
    r.icoord[3] = layer;
    r.size = size;
    r.clamp = boundary(mode);
    if (op == SIMTWIN_TEX_SURF_STORE)
        memcpy(r.data, data, size);
    call(r);
    if (op == SIMTWIN_TEX_SURF_LOAD)
        memcpy(data, r.data, size);
}

} // namespace texops
} // namespace __simtwin

#define __SIMTWIN_TEX_FN template <class T> static inline __attribute__((always_inline))

/* ---- textures -------------------------------------------------------------------- */

__SIMTWIN_TEX_FN T tex1Dfetch(cudaTextureObject_t o, int x) { return ::__simtwin::texops::fetch_int<T>(o, x); }
__SIMTWIN_TEX_FN void tex1Dfetch(T *p, cudaTextureObject_t o, int x) { *p = tex1Dfetch<T>(o, x); }
__SIMTWIN_TEX_FN T tex1D(cudaTextureObject_t o, float x) {
    return ::__simtwin::texops::fetch<T>(::__simtwin::SIMTWIN_TEX_FETCH, ::__simtwin::SIMTWIN_TEX_1D, o, x, 0, 0, 0, 0, 0, 0);
}
__SIMTWIN_TEX_FN void tex1D(T *p, cudaTextureObject_t o, float x) { *p = tex1D<T>(o, x); }
__SIMTWIN_TEX_FN T tex2D(cudaTextureObject_t o, float x, float y) {
    return ::__simtwin::texops::fetch<T>(::__simtwin::SIMTWIN_TEX_FETCH, ::__simtwin::SIMTWIN_TEX_2D, o, x, y, 0, 0, 0, 0, 0);
}
__SIMTWIN_TEX_FN void tex2D(T *p, cudaTextureObject_t o, float x, float y) { *p = tex2D<T>(o, x, y); }
__SIMTWIN_TEX_FN T tex3D(cudaTextureObject_t o, float x, float y, float z) {
    return ::__simtwin::texops::fetch<T>(::__simtwin::SIMTWIN_TEX_FETCH, ::__simtwin::SIMTWIN_TEX_3D, o, x, y, z, 0, 0, 0, 0);
}
__SIMTWIN_TEX_FN void tex3D(T *p, cudaTextureObject_t o, float x, float y, float z) { *p = tex3D<T>(o, x, y, z); }
__SIMTWIN_TEX_FN T tex1DLayered(cudaTextureObject_t o, float x, int layer) {
    return ::__simtwin::texops::fetch<T>(::__simtwin::SIMTWIN_TEX_FETCH, ::__simtwin::SIMTWIN_TEX_A1D, o, x, 0, 0, layer, 0, 0, 0);
}
__SIMTWIN_TEX_FN void tex1DLayered(T *p, cudaTextureObject_t o, float x, int layer) { *p = tex1DLayered<T>(o, x, layer); }
__SIMTWIN_TEX_FN T tex2DLayered(cudaTextureObject_t o, float x, float y, int layer) {
    return ::__simtwin::texops::fetch<T>(::__simtwin::SIMTWIN_TEX_FETCH, ::__simtwin::SIMTWIN_TEX_A2D, o, x, y, 0, layer, 0, 0, 0);
}
__SIMTWIN_TEX_FN void tex2DLayered(T *p, cudaTextureObject_t o, float x, float y, int layer) { *p = tex2DLayered<T>(o, x, y, layer); }
__SIMTWIN_TEX_FN T texCubemap(cudaTextureObject_t o, float x, float y, float z) {
    return ::__simtwin::texops::fetch<T>(::__simtwin::SIMTWIN_TEX_FETCH, ::__simtwin::SIMTWIN_TEX_CUBE, o, x, y, z, 0, 0, 0, 0);
}
__SIMTWIN_TEX_FN void texCubemap(T *p, cudaTextureObject_t o, float x, float y, float z) { *p = texCubemap<T>(o, x, y, z); }
__SIMTWIN_TEX_FN T texCubemapLayered(cudaTextureObject_t o, float x, float y, float z, int layer) {
    return ::__simtwin::texops::fetch<T>(::__simtwin::SIMTWIN_TEX_FETCH, ::__simtwin::SIMTWIN_TEX_ACUBE, o, x, y, z, layer, 0, 0, 0);
}
__SIMTWIN_TEX_FN void texCubemapLayered(T *p, cudaTextureObject_t o, float x, float y, float z, int layer) {
    *p = texCubemapLayered<T>(o, x, y, z, layer);
}
__SIMTWIN_TEX_FN T tex1DLod(cudaTextureObject_t o, float x, float lod) {
    return ::__simtwin::texops::fetch<T>(::__simtwin::SIMTWIN_TEX_LEVEL, ::__simtwin::SIMTWIN_TEX_1D, o, x, 0, 0, 0, lod, 0, 0);
}
__SIMTWIN_TEX_FN T tex2DLod(cudaTextureObject_t o, float x, float y, float lod) {
    return ::__simtwin::texops::fetch<T>(::__simtwin::SIMTWIN_TEX_LEVEL, ::__simtwin::SIMTWIN_TEX_2D, o, x, y, 0, 0, lod, 0, 0);
}
__SIMTWIN_TEX_FN void tex2DLod(T *p, cudaTextureObject_t o, float x, float y, float lod) { *p = tex2DLod<T>(o, x, y, lod); }
__SIMTWIN_TEX_FN T tex3DLod(cudaTextureObject_t o, float x, float y, float z, float lod) {
    return ::__simtwin::texops::fetch<T>(::__simtwin::SIMTWIN_TEX_LEVEL, ::__simtwin::SIMTWIN_TEX_3D, o, x, y, z, 0, lod, 0, 0);
}
__SIMTWIN_TEX_FN T tex1DLayeredLod(cudaTextureObject_t o, float x, int layer, float lod) {
    return ::__simtwin::texops::fetch<T>(::__simtwin::SIMTWIN_TEX_LEVEL, ::__simtwin::SIMTWIN_TEX_A1D, o, x, 0, 0, layer, lod, 0, 0);
}
__SIMTWIN_TEX_FN T tex2DLayeredLod(cudaTextureObject_t o, float x, float y, int layer, float lod) {
    return ::__simtwin::texops::fetch<T>(::__simtwin::SIMTWIN_TEX_LEVEL, ::__simtwin::SIMTWIN_TEX_A2D, o, x, y, 0, layer, lod, 0, 0);
}
__SIMTWIN_TEX_FN T texCubemapLod(cudaTextureObject_t o, float x, float y, float z, float lod) {
    return ::__simtwin::texops::fetch<T>(::__simtwin::SIMTWIN_TEX_LEVEL, ::__simtwin::SIMTWIN_TEX_CUBE, o, x, y, z, 0, lod, 0, 0);
}
__SIMTWIN_TEX_FN T tex1DGrad(cudaTextureObject_t o, float x, float dx, float dy) {
    const float __simtwin_g[6] = {dx, 0, 0, dy, 0, 0};
    return ::__simtwin::texops::fetch<T>(::__simtwin::SIMTWIN_TEX_GRAD, ::__simtwin::SIMTWIN_TEX_1D, o, x, 0, 0, 0, 0, __simtwin_g, 0);
}
__SIMTWIN_TEX_FN T tex2DGrad(cudaTextureObject_t o, float x, float y, float2 dx, float2 dy) {
    const float __simtwin_g[6] = {dx.x, dx.y, 0, dy.x, dy.y, 0};
    return ::__simtwin::texops::fetch<T>(::__simtwin::SIMTWIN_TEX_GRAD, ::__simtwin::SIMTWIN_TEX_2D, o, x, y, 0, 0, 0, __simtwin_g, 0);
}
__SIMTWIN_TEX_FN void tex2DGrad(T *p, cudaTextureObject_t o, float x, float y, float2 dx, float2 dy) { *p = tex2DGrad<T>(o, x, y, dx, dy); }
__SIMTWIN_TEX_FN T tex3DGrad(cudaTextureObject_t o, float x, float y, float z, float4 dx, float4 dy) {
    const float __simtwin_g[6] = {dx.x, dx.y, dx.z, dy.x, dy.y, dy.z};
    return ::__simtwin::texops::fetch<T>(::__simtwin::SIMTWIN_TEX_GRAD, ::__simtwin::SIMTWIN_TEX_3D, o, x, y, z, 0, 0, __simtwin_g, 0);
}
__SIMTWIN_TEX_FN T tex2DLayeredGrad(cudaTextureObject_t o, float x, float y, int layer, float2 dx, float2 dy) {
    const float __simtwin_g[6] = {dx.x, dx.y, 0, dy.x, dy.y, 0};
    return ::__simtwin::texops::fetch<T>(::__simtwin::SIMTWIN_TEX_GRAD, ::__simtwin::SIMTWIN_TEX_A2D, o, x, y, 0, layer, 0, __simtwin_g, 0);
}
__SIMTWIN_TEX_FN T tex2Dgather(cudaTextureObject_t o, float x, float y, int comp = 0) {
    return ::__simtwin::texops::fetch<T>(::__simtwin::SIMTWIN_TEX_GATHER, ::__simtwin::SIMTWIN_TEX_2D, o, x, y, 0, 0, 0, 0, (uint32_t)comp);
}
__SIMTWIN_TEX_FN void tex2Dgather(T *p, cudaTextureObject_t o, float x, float y, int comp = 0) { *p = tex2Dgather<T>(o, x, y, comp); }

/* ---- surfaces (x in bytes) ------------------------------------------------------- */

/* 2: cudaBoundaryModeTrap, the toolkit's default. */
#define __SIMTWIN_SURF_MODE int mode = 2
__SIMTWIN_TEX_FN T surf1Dread(cudaSurfaceObject_t s, int x, __SIMTWIN_SURF_MODE) {
    T v; ::__simtwin::texops::surf(::__simtwin::SIMTWIN_TEX_SURF_LOAD, ::__simtwin::SIMTWIN_TEX_1D, s, &v, sizeof(T), x, 0, 0, 0, mode); return v;
}
__SIMTWIN_TEX_FN void surf1Dread(T *p, cudaSurfaceObject_t s, int x, __SIMTWIN_SURF_MODE) { *p = surf1Dread<T>(s, x, mode); }
__SIMTWIN_TEX_FN T surf2Dread(cudaSurfaceObject_t s, int x, int y, __SIMTWIN_SURF_MODE) {
    T v; ::__simtwin::texops::surf(::__simtwin::SIMTWIN_TEX_SURF_LOAD, ::__simtwin::SIMTWIN_TEX_2D, s, &v, sizeof(T), x, y, 0, 0, mode); return v;
}
__SIMTWIN_TEX_FN void surf2Dread(T *p, cudaSurfaceObject_t s, int x, int y, __SIMTWIN_SURF_MODE) { *p = surf2Dread<T>(s, x, y, mode); }
__SIMTWIN_TEX_FN T surf3Dread(cudaSurfaceObject_t s, int x, int y, int z, __SIMTWIN_SURF_MODE) {
    T v; ::__simtwin::texops::surf(::__simtwin::SIMTWIN_TEX_SURF_LOAD, ::__simtwin::SIMTWIN_TEX_3D, s, &v, sizeof(T), x, y, z, 0, mode); return v;
}
__SIMTWIN_TEX_FN void surf3Dread(T *p, cudaSurfaceObject_t s, int x, int y, int z, __SIMTWIN_SURF_MODE) { *p = surf3Dread<T>(s, x, y, z, mode); }
__SIMTWIN_TEX_FN T surf1DLayeredread(cudaSurfaceObject_t s, int x, int layer, __SIMTWIN_SURF_MODE) {
    T v; ::__simtwin::texops::surf(::__simtwin::SIMTWIN_TEX_SURF_LOAD, ::__simtwin::SIMTWIN_TEX_A1D, s, &v, sizeof(T), x, 0, 0, layer, mode); return v;
}
__SIMTWIN_TEX_FN T surf2DLayeredread(cudaSurfaceObject_t s, int x, int y, int layer, __SIMTWIN_SURF_MODE) {
    T v; ::__simtwin::texops::surf(::__simtwin::SIMTWIN_TEX_SURF_LOAD, ::__simtwin::SIMTWIN_TEX_A2D, s, &v, sizeof(T), x, y, 0, layer, mode); return v;
}
__SIMTWIN_TEX_FN void surf2DLayeredread(T *p, cudaSurfaceObject_t s, int x, int y, int layer, __SIMTWIN_SURF_MODE) {
    *p = surf2DLayeredread<T>(s, x, y, layer, mode);
}
__SIMTWIN_TEX_FN void surf1Dwrite(T v, cudaSurfaceObject_t s, int x, __SIMTWIN_SURF_MODE) {
    ::__simtwin::texops::surf(::__simtwin::SIMTWIN_TEX_SURF_STORE, ::__simtwin::SIMTWIN_TEX_1D, s, &v, sizeof(T), x, 0, 0, 0, mode);
}
__SIMTWIN_TEX_FN void surf2Dwrite(T v, cudaSurfaceObject_t s, int x, int y, __SIMTWIN_SURF_MODE) {
    ::__simtwin::texops::surf(::__simtwin::SIMTWIN_TEX_SURF_STORE, ::__simtwin::SIMTWIN_TEX_2D, s, &v, sizeof(T), x, y, 0, 0, mode);
}
__SIMTWIN_TEX_FN void surf3Dwrite(T v, cudaSurfaceObject_t s, int x, int y, int z, __SIMTWIN_SURF_MODE) {
    ::__simtwin::texops::surf(::__simtwin::SIMTWIN_TEX_SURF_STORE, ::__simtwin::SIMTWIN_TEX_3D, s, &v, sizeof(T), x, y, z, 0, mode);
}
__SIMTWIN_TEX_FN void surf1DLayeredwrite(T v, cudaSurfaceObject_t s, int x, int layer, __SIMTWIN_SURF_MODE) {
    ::__simtwin::texops::surf(::__simtwin::SIMTWIN_TEX_SURF_STORE, ::__simtwin::SIMTWIN_TEX_A1D, s, &v, sizeof(T), x, 0, 0, layer, mode);
}
__SIMTWIN_TEX_FN void surf2DLayeredwrite(T v, cudaSurfaceObject_t s, int x, int y, int layer, __SIMTWIN_SURF_MODE) {
    ::__simtwin::texops::surf(::__simtwin::SIMTWIN_TEX_SURF_STORE, ::__simtwin::SIMTWIN_TEX_A2D, s, &v, sizeof(T), x, y, 0, layer, mode);
}
#undef __SIMTWIN_SURF_MODE
#undef __SIMTWIN_TEX_FN
#endif /* __SIMTWIN_TEXTURE_H */
