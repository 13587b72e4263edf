//! parity: the harness.
