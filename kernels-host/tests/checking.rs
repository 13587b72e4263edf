//! The checking variant of a library (`build --checks`): built beside the plain one and
//! named in the manifest; its kernel code reports every access, including the ones
//! AddressSanitizer's instrumentation would skip (constant offsets into thread-local
//! storage, i.e. scalar and constant-index static `__shared__`), with atomics marked, to
//! the runtime table's `access` entry; the plain library reports nothing.

mod common;
use common::*;
use kernels_host::build::{build, BuildOptions};
use kernels_host::module::{ffi, LoadedModule};

#[test]
fn the_checking_variant_reports_every_access_and_the_plain_library_none() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut opts = BuildOptions::new(dir.path(), vec![cu("checking.cu")]);
    opts.checks = true;
    let b = build(&opts).unwrap_or_else(|e| panic!("{e}")).remove(0);
    assert_eq!(b.manifest.checks_library.as_deref(), Some("checking.checks.so"));
    let checks = dir.path().join("checking.checks.so");
    assert!(checks.is_file());

    // The counter the kernel adds to (its address is what the atomic must report).
    let mut count = 0u64;
    let count_addr = &count as *const u64 as usize;
    // What one run gives: the accesses the hook saw (address, size, kind, return address),
    // the kernel's output and the counter.
    type Run = (Vec<(usize, u64, u32, usize)>, [i32; 1], u64);
    let mut run = |path: &std::path::Path| -> Run {
        let m = LoadedModule::open(path).unwrap();
        unsafe { m.bind(&RUNTIME) };
        ACCESSES.lock().unwrap().clear();
        count = 0;
        let (mut out, mut i) = ([0i32; 1], 4i32);
        let (mut po, mut pc) = (out.as_mut_ptr(), &mut count as *mut u64);
        launch(&m, "touch", 1, &[arg(&mut po), arg(&mut pc), arg(&mut i)], &mut []);
        let seen = ACCESSES.lock().unwrap().clone();
        (seen, out, count)
    };
    let (plain, out, count) = run(&b.library);
    assert!(plain.is_empty(), "the plain library reports nothing: {plain:?}");
    assert_eq!((out[0], count), (7, 2), "s[5] is 0, scalar 7");

    let (seen, out, count) = run(&checks);
    assert_eq!((out[0], count), (7, 2), "the checking variant computes the same");
    let writes4: Vec<usize> = seen.iter().filter(|a| a.1 == 4 && a.2 == ffi::access::WRITE).map(|a| a.0).collect();
    // scalar = 7, s[i] = 5, s[3] = 9 (three shared stores) and out[0] = ...
    assert!(writes4.len() >= 4, "{seen:x?}");
    // s[3] and s[i=4] are 4 bytes apart: an indexed and a constant-index store of one array.
    assert!(writes4.iter().any(|&a| writes4.contains(&(a + 4))), "{writes4:x?}");
    // The atomics: 8 bytes on the counter, 4 on s[2] (s[3] - 4), marked atomic.
    let atomics: Vec<(usize, u64)> = seen.iter().filter(|a| a.2 == ffi::access::ATOMIC_WRITE).map(|a| (a.0, a.1)).collect();
    assert_eq!(atomics.len(), 2, "{seen:x?}");
    assert_eq!(atomics[0], (count_addr, 8));
    assert_eq!(atomics[1].1, 4);
    assert!(writes4.contains(&(atomics[1].0 + 4)), "s[2] lies just before s[3]: {atomics:x?} {writes4:x?}");
    // Reads of s[i ^ 1] and of the scalar; every hook call names an instruction of the library.
    assert!(seen.iter().filter(|a| a.2 == ffi::access::READ && a.1 == 4).count() >= 2, "{seen:x?}");
    let lib = simtwin_abi::ffi::dl_info(seen[0].3 as *const std::ffi::c_void).expect("a library address");
    // (the build loaded it from its work directory before publishing it: the same inode)
    assert!(lib.file.to_string_lossy().contains("checking.checks.so"), "{lib:?}");
}
