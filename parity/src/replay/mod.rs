//! `parity replay` and `parity libm`: exhaustive fp32 replay against MPFR (owned by the replay helper).
