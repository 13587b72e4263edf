//! Any text through the PTX parser (kernels, parameters, globals).
#![no_main]
use cuda::image::{parse_bytes, ptx_globals, Target};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = ptx_globals(s);
        // Through the loader too, with a .version prefix so the text is taken as PTX.
        let mut t = b".version 8.0\n.target sm_80\n".to_vec();
        t.extend_from_slice(data);
        let _ = parse_bytes(&t, Target { sm: 90 });
    }
});
