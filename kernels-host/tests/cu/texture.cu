// Texture and surface functions of device code, for tests/texture.rs: each call is one
// request to the runtime table's texture entry (the test runtime answers
// (handle, op, geometry, coord[0] bits)).
extern "C" __global__ void tex_calls(cudaTextureObject_t t, cudaSurfaceObject_t s, unsigned *out)
{
    float4 a = tex2D<float4>(t, 1.5f, 2.5f);
    int4 b = tex1Dfetch<int4>(t, 7);
    uchar2 c = tex2DLayered<uchar2>(t, 0.25f, 0.5f, 3);
    float d = tex2DLod<float>(t, 0.5f, 0.5f, 1.75f);
    float4 e = tex2Dgather<float4>(t, 0.5f, 0.5f, 2);
    float f = texCubemap<float>(t, 1.0f, -0.5f, 0.25f);
    unsigned g = surf2Dread<unsigned>(s, 8, 2, cudaBoundaryModeClamp);
    surf2DLayeredwrite(make_ushort2(0x1234, 0x5678), s, 4, 1, 2, cudaBoundaryModeZero);
    out[0] = __float_as_uint(a.x);
    out[1] = (unsigned)b.y;
    out[2] = c.x;
    out[3] = __float_as_uint(d);
    out[4] = __float_as_uint(e.w);
    out[5] = __float_as_uint(f);
    out[6] = g;
}
