//! Every format parity reads from files it did not write in the same run (extractor
//! outputs, tolerance tables, clip lists, traces and types files, shard records,
//! counters files, replay tables), as functions of the bytes: what the fuzzer feeds
//! (`fuzz/`, target `parity`). Each reader is the one the commands use after
//! [`crate::input`] has checked and read the file.

use std::path::Path;

/// Runs `data` through every reader; their errors are the expected answer to bad input,
/// a panic or a hang would be a defect.
pub fn read_all(data: &[u8]) {
    let path = Path::new("fuzz-input");
    let _ = crate::matrix::parse_clip_list(data, path);
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = crate::output::parse(text, "fuzz-input");
    let _ = crate::tolerance::Table::parse(text);
    let _ = crate::shard::Record::parse(text, path);
    let _ = crate::counts::parse_file(text, path);
    let _ = crate::replay::crlog2gen::parse_cases(text);
    let _ = crate::replay::parse_misrounded(text, path);
    let _ = crate::shard::parse(text.lines().next().unwrap_or(""));
    if let Ok(types) = crate::bisect::parse_types(text, path) {
        // Every word as a kernel symbol: the demangler reads symbols from traces.
        for w in text.split_whitespace().take(64) {
            let _ = types.params(w);
        }
    }
    let _ = crate::bisect::parse_trace(text, path);
}
