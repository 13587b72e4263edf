//! kernels-host: CUDA C++ compiled as host code.
