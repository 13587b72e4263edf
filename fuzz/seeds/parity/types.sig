# kernel signatures
__global__ void scale(const float *x, float *y, int n)
extern "C" void adm_dwt(const unsigned short *src, int w, int h, float4 *out[2])
_Z6kernelPfPKfii
_ZN4vmaf3adm7reduceILi4EEEvPKfPfj
