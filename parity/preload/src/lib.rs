//! Correctly rounded replacements for host libm float functions, for LD_PRELOAD.
