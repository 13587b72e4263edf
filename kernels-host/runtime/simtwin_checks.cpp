/*
 * Checking hooks of a simtwin kernel library's checking variant (`kernels-host build
 * --checks` -> <stem>.checks.so), linked only into that variant.
 *
 * The variant's kernel code is compiled with GCC's ThreadSanitizer instrumentation
 * (-fsanitize=thread --param tsan-instrument-func-entry-exit=0), which calls
 * __tsan_readN / __tsan_writeN before every load and store the compiler could not prove
 * private to the thread, __tsan_read_range / __tsan_write_range around aggregate copies,
 * and __tsan_atomicN_* in place of every atomic builtin. No libtsan is linked: this file
 * defines those functions. Each reports the access, with its size, kind and the return
 * address (the instrumented instruction, which the driver symbolises with the library's
 * debug info only when it reports a race), through the runtime table's `access` entry;
 * the atomic ones then perform the operation, sequentially consistent like the shim's
 * atomics. ThreadSanitizer rather than AddressSanitizer: GCC's ASan skips accesses to
 * thread-local variables at constant offsets (`s[0]`, a scalar `__shared__`), which is
 * exactly how static __shared__ memory is reached in kernels-host libraries.
 *
 * The driver decides what to keep (accesses to the running block's shared memory);
 * outside a launch, before bind, or under a driver whose table has no `access` entry the
 * hooks do nothing.
 */
#include <stddef.h>
#include <stdint.h>
namespace __simtwin {
#include "simtwin/abi.h"
}

#define HIDDEN __attribute__((visibility("hidden")))
namespace __simtwin {
extern const simtwin_runtime_t *rt HIDDEN;
}

namespace {
using ::__simtwin::simtwin_runtime_t;

inline void note(const volatile void *a, uint64_t n, uint32_t kind, const void *pc) {
    const simtwin_runtime_t *r = ::__simtwin::rt;
    if (r && r->size >= offsetof(simtwin_runtime_t, access) + sizeof(r->access) && r->access)
        r->access(const_cast<const void *>(a), n, kind, pc);
}
const uint32_t READ = ::__simtwin::SIMTWIN_ACCESS_READ, WRITE = ::__simtwin::SIMTWIN_ACCESS_WRITE,
               AREAD = ::__simtwin::SIMTWIN_ACCESS_ATOMIC_READ, AWRITE = ::__simtwin::SIMTWIN_ACCESS_ATOMIC_WRITE;
} // namespace

#define PC __builtin_return_address(0)
#define SC __ATOMIC_SEQ_CST

extern "C" {
/* Exported so that the driver can tell a checking library from a plain one. */
__attribute__((visibility("default"))) extern const char simtwin_checks_v1[];
const char simtwin_checks_v1[] = "simtwin checking library (ThreadSanitizer hooks)";

HIDDEN void __tsan_init(void) {}
HIDDEN void __tsan_func_entry(void *) {}
HIDDEN void __tsan_func_exit(void) {}
HIDDEN void __tsan_vptr_update(void **p, void *) { note(p, sizeof(void *), WRITE, PC); }
HIDDEN void __tsan_read_range(void *a, size_t n) { note(a, n, READ, PC); }
HIDDEN void __tsan_write_range(void *a, size_t n) { note(a, n, WRITE, PC); }

#define PLAIN(N)                                                                        \
    HIDDEN void __tsan_read##N(void *a) { note(a, N, READ, PC); }                      \
    HIDDEN void __tsan_write##N(void *a) { note(a, N, WRITE, PC); }                    \
    HIDDEN void __tsan_volatile_read##N(void *a) { note(a, N, READ, PC); }             \
    HIDDEN void __tsan_volatile_write##N(void *a) { note(a, N, WRITE, PC); }
PLAIN(1)
PLAIN(2)
PLAIN(4)
PLAIN(8)
PLAIN(16)
#undef PLAIN

/* Atomics: the memory-order arguments are ignored, every operation is sequentially
   consistent (as the shim's atomics are). */
#define ATOMICS(N, T)                                                                                      \
    HIDDEN T __tsan_atomic##N##_load(const volatile T *a, int) { note(a, sizeof(T), AREAD, PC); return __atomic_load_n(a, SC); } \
    HIDDEN void __tsan_atomic##N##_store(volatile T *a, T v, int) { note(a, sizeof(T), AWRITE, PC); __atomic_store_n(a, v, SC); } \
    HIDDEN T __tsan_atomic##N##_exchange(volatile T *a, T v, int) { note(a, sizeof(T), AWRITE, PC); return __atomic_exchange_n(a, v, SC); } \
    HIDDEN T __tsan_atomic##N##_fetch_add(volatile T *a, T v, int) { note(a, sizeof(T), AWRITE, PC); return __atomic_fetch_add(a, v, SC); } \
    HIDDEN T __tsan_atomic##N##_fetch_sub(volatile T *a, T v, int) { note(a, sizeof(T), AWRITE, PC); return __atomic_fetch_sub(a, v, SC); } \
    HIDDEN T __tsan_atomic##N##_fetch_and(volatile T *a, T v, int) { note(a, sizeof(T), AWRITE, PC); return __atomic_fetch_and(a, v, SC); } \
    HIDDEN T __tsan_atomic##N##_fetch_or(volatile T *a, T v, int) { note(a, sizeof(T), AWRITE, PC); return __atomic_fetch_or(a, v, SC); } \
    HIDDEN T __tsan_atomic##N##_fetch_xor(volatile T *a, T v, int) { note(a, sizeof(T), AWRITE, PC); return __atomic_fetch_xor(a, v, SC); } \
    HIDDEN T __tsan_atomic##N##_fetch_nand(volatile T *a, T v, int) { note(a, sizeof(T), AWRITE, PC); return __atomic_fetch_nand(a, v, SC); } \
    HIDDEN bool __tsan_atomic##N##_compare_exchange_strong(volatile T *a, T *expected, T v, int, int) {     \
        note(a, sizeof(T), AWRITE, PC);                                                                     \
        return __atomic_compare_exchange_n(a, expected, v, false, SC, SC);                                  \
    }                                                                                                       \
    HIDDEN bool __tsan_atomic##N##_compare_exchange_weak(volatile T *a, T *expected, T v, int, int) {       \
        note(a, sizeof(T), AWRITE, PC);                                                                     \
        return __atomic_compare_exchange_n(a, expected, v, true, SC, SC);                                   \
    }
ATOMICS(8, uint8_t)
ATOMICS(16, uint16_t)
ATOMICS(32, uint32_t)
ATOMICS(64, uint64_t)
#undef ATOMICS
HIDDEN void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(SC); }
HIDDEN void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(SC); }
}
