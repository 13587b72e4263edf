//! The SIMT executor (owned by the executor helper; see DESIGN.md §3).
