#include <cstdio>
#include <cooperative_groups.h>
namespace cg=cooperative_groups;
__global__ void gs(unsigned*d,unsigned*o,int r){cg::grid_group g=cg::this_grid();unsigned long long n=g.size(),t=g.thread_rank();for(int k=0;k<r;k++){d[t]+=k+1;g.sync();o[t]=o[t]*31u+d[(t+1+k)%n];g.sync();}}
__global__ void env(unsigned*o){unsigned a,b,c;asm volatile("mov.u32 %0,%%envreg0;":"=r"(c));asm volatile("mov.u32 %0,%%envreg1;":"=r"(a));asm volatile("mov.u32 %0,%%envreg2;":"=r"(b));
if(threadIdx.x==0&&blockIdx.x==0){o[0]=c;o[1]=a;o[2]=b;unsigned*w=(unsigned*)(((unsigned long long)a<<32)|b);if(w){o[3]=w[0];o[4]=w[1];}}}
#define P(s,e) printf("%s %d %s\n",s,(int)(e),cudaGetErrorName(e))
int main(){int v,sm,nb;cudaDeviceProp p;cudaGetDeviceProperties(&p,0);printf("device %s\n",p.name);
cudaDeviceGetAttribute(&v,cudaDevAttrCooperativeLaunch,0);printf("attr_cooperative_launch %d\n",v);
sm=p.multiProcessorCount;cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb,gs,128,0);
cudaFuncAttributes fa;cudaFuncGetAttributes(&fa,gs);printf("sms %d occupancy_gs_128 %d regs %d\n",sm,nb,fa.numRegs);
unsigned*d,*o,h[8]={0};cudaMalloc(&d,1<<24);cudaMalloc(&o,1<<24);int r=3;void*a[]={&d,&o,&r},*ea[]={&o};
cudaMemset(o,0xAB,64);P("env_coop_launch",cudaLaunchCooperativeKernel((void*)env,dim3(2),dim3(32),ea));P("env_coop_sync",cudaDeviceSynchronize());
cudaMemcpy(h,o,20,cudaMemcpyDeviceToHost);printf("coop envreg0 %08x envreg1 %08x envreg2 %08x ws[0] %08x ws[1] %08x\n",h[0],h[1],h[2],h[3],h[4]);
cudaMemset(o,0xAB,64);env<<<2,32>>>(o);P("env_plain_sync",cudaDeviceSynchronize());cudaMemcpy(h,o,20,cudaMemcpyDeviceToHost);
printf("plain envreg0 %08x envreg1 %08x envreg2 %08x ws[0] %08x ws[1] %08x\n",h[0],h[1],h[2],h[3],h[4]);
P("gs_coop_too_large",cudaLaunchCooperativeKernel((void*)gs,dim3(nb*sm+1),dim3(128),a));P("after_too_large_sync",cudaDeviceSynchronize());
cudaMemset(d,0,1<<24);cudaMemset(o,0,1<<24);P("gs_coop_3d",cudaLaunchCooperativeKernel((void*)gs,dim3(33,2,2),dim3(32,2,2),a));P("gs_coop_3d_sync",cudaDeviceSynchronize());
static unsigned H[16896];cudaMemcpy(H,o,sizeof H,cudaMemcpyDeviceToHost);unsigned long long f=1469598103934665603ull;for(unsigned x:H)f=(f^x)*1099511628211ull;printf("gs_coop_3d_fnv64 %016llx out[0] %u out[16895] %u\n",f,H[0],H[16895]);
P("gs_coop_full",cudaLaunchCooperativeKernel((void*)gs,dim3(nb*sm),dim3(128),a));P("gs_coop_full_sync",cudaDeviceSynchronize());
gs<<<4,128>>>(d,o,r);P("gs_plain_launch",cudaGetLastError());P("gs_plain_sync",cudaDeviceSynchronize());P("after_sticky",cudaMemset(o,0,4));}
