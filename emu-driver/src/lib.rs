//! emu-driver: the CUDA driver API implemented in host memory.
