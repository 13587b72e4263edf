//! Module image parsing: PTX text, fatbin containers, ELF cubins (DESIGN.md §2).
