/*
 * libsimtwin-tls.so.2: the one thread-local every kernel library reads, the context slot
 * of the CUDA thread running on this OS thread (abi.h `ctx_slot`). kernels-host builds it
 * beside the kernel libraries, which need it (DT_NEEDED, found through RUNPATH $ORIGIN).
 *
 * Why a library of its own: kernel libraries read the slot with the initial-exec TLS
 * model (a %fs-relative load, no __tls_get_addr call per threadIdx read). glibc serves
 * initial-exec accesses of a dlopened object from its small static TLS reserve, for the
 * whole TLS block of the module that defines the variable; this module's block is 8
 * bytes, where a kernel library's own block holds its __shared__ arrays.
 */
namespace __simtwin {
struct simtwin_thread_ctx;
__attribute__((visibility("default"))) __thread simtwin_thread_ctx *tls_ctx = nullptr;
}
