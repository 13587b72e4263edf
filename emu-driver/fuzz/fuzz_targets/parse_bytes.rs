//! Any bytes, with their length, through the whole image parser for a few devices.
#![no_main]
use cuda::image::{parse_bytes, Target};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for sm in [90, 80, 120] {
        let _ = parse_bytes(data, Target { sm });
    }
});
