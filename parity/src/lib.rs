//! parity: runs CPU vs CUDA extractors per frame, diffs, transfer audits, fp32 replay, timing.

pub mod replay;
