// Shared by the runtime test programs: CK(call) fails the program on an error, naming
// the call; EXPECT(cond) on a false condition; SHOW(label, err) prints an error's name so
// cudart/tests/runtime.rs can compare it.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(call)                                                                            \
    do {                                                                                    \
        cudaError_t e_ = (call);                                                            \
        if (e_ != cudaSuccess) {                                                            \
            printf("FAIL %s:%d %s -> %s (%s)\n", __FILE__, __LINE__, #call,                 \
                   cudaGetErrorName(e_), cudaGetErrorString(e_));                           \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

#define EXPECT(cond)                                                                        \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            printf("FAIL %s:%d expected %s\n", __FILE__, __LINE__, #cond);                  \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

#define SHOW(label, call) printf("%s: %s\n", label, cudaGetErrorName(call))
