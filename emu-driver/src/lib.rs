//! emu-driver: the CUDA driver API implemented in host memory, installed as libcuda.so.1.

pub mod abi;
pub mod exec;
pub mod image;
