//! Any bytes behind an ELF magic through the cubin parser.
#![no_main]
use cuda::image::{cubin_globals, parse_bytes, Target};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = cubin_globals(data);
    let _ = parse_bytes(data, Target { sm: 90 });
});
