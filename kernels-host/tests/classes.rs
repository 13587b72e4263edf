//! One test per class of problem real programs met (issue: real CUDA programs run
//! unmodified): declarations the rewriter must see through, names the generated code
//! must not take from the user, modules without kernels, the CUDA toolkit's types in
//! device code, the nvcc cross-check, big static shared memory, and many kernels.

mod common;
use common::*;
use kernels_host::build::{build, BuildOptions, Built};
use kernels_host::module::LoadedModule;
use std::process::Command;

fn build_one(src: &std::path::Path, flags: &[&str]) -> (tempfile::TempDir, Built) {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = BuildOptions::new(dir.path(), vec![src.to_path_buf()]);
    opts.nvcc_flags = flags.iter().map(|s| s.to_string()).collect();
    let built = build(&opts).unwrap_or_else(|e| panic!("{}: {e}", src.display())).remove(0);
    (dir, built)
}

fn open_bound(b: &Built) -> LoadedModule {
    let m = LoadedModule::open(&b.library).unwrap();
    unsafe { m.bind(&RUNTIME) };
    m
}

fn symbols(b: &Built) -> Vec<&str> {
    b.manifest.entries.iter().map(|e| e.symbol.as_str()).collect()
}

#[test]
fn every_kernel_is_found_behind_templates_lambdas_attributes_and_operators() {
    let (_d, b) = build_one(&cu("syntax.cu"), &["--std", "c++20"]);
    // nvcc -ptx -arch=compute_90 --std c++20 syntax.cu, .entry names in source order (the
    // build's own cross-check compared them too).
    assert_eq!(
        symbols(&b),
        [
            "_ZN5outer2v112in_inline_nsEPi",
            "_Z9defaultedIiLi32EEvPT_i",
            "_Z9defaultedIfLi64EEvPT_i",
            "_Z5boxedIiEvP3BoxIS0_IT_EE",
            "_Z11constrainedIiEvPT_",
            "_Z19with_lambda_defaultPiPFiiE",
            "_Z10attributedPi",
            "_Z8gnu_attrPf",
            "c_after_all"
        ]
    );
    let e = |s: &str| b.manifest.entries.iter().find(|e| e.symbol == s).unwrap();
    // __launch_bounds__(B) with B's default (32) and with an explicit 64.
    assert_eq!(e("_Z9defaultedIiLi32EEvPT_i").max_threads, 32);
    assert_eq!(e("_Z9defaultedIfLi64EEvPT_i").max_threads, 64);
    let globals: Vec<_> = b.manifest.globals.iter().map(|g| (g.name.as_str(), g.size)).collect();
    assert_eq!(globals, [("table", 12), ("braced", 4), ("sizes", 8)]);

    let m = open_bound(&b);
    let mut out = [0i32; 2];
    let mut p = out.as_mut_ptr();
    launch(&m, "_Z10attributedPi", 1, &[arg(&mut p)], &mut []);
    // fn(2)=6, fn[1]=4, p<q=1, q>p=1, (p>>1).a=0, lambda(1)=4, table[2]=3, braced=7, attr_fn(0)=1
    assert_eq!(out[0], (6 + 4 + 1 + 1) + 4 + 3 + 7 + 1);
    // width_of=4, trailing(1)=2, WithCtor(2).m=4, Mode::B=2, pi_v<int>=3, sizes[0]=4
    assert_eq!(out[1], 4 + 2 + 4 + 2 + 3 + 4);
    let mut n = 5i32;
    launch(&m, "_Z9defaultedIiLi32EEvPT_i", 1, &[arg(&mut p), arg(&mut n)], &mut []);
    assert_eq!(out[0], 5 + 4 + 2); // add_n<int, 4>(5) + twice(1)
}

#[test]
fn kernels_and_device_functions_may_be_named_like_library_functions() {
    // Built with the nvcc cross-check when nvcc is there: nvcc accepts every name.
    let (_d, b) = build_one(&cu("libnames.cu"), &[]);
    assert_eq!(
        symbols(&b),
        ["_Z4sqrtPf", "_Z3maxPii", "_Z6memsetPii", "_Z6memcpyPiPKi", "_Z6printfPi", "_Z6mallocPi", "_Z3expPf", "_Z5clockPx", "_Z4freePi"]
    );
    let m = open_bound(&b);
    let mut f = [4.0f32, 9.0, 16.0, 25.0];
    let mut pf = f.as_mut_ptr();
    launch(&m, "_Z4sqrtPf", 4, &[arg(&mut pf)], &mut []);
    assert_eq!(f, [4.0, 5.0, 6.0, 7.0]); // sqrtf + the device sqrt(int) overload: 4 * 0.5
    let mut v = [3i32, -8, 5, 1, 0];
    let mut pv = v.as_mut_ptr();
    let mut n = 4i32;
    launch(&m, "_Z3maxPii", 1, &[arg(&mut pv), arg(&mut n)], &mut []);
    assert_eq!(v[4], 5);
    let mut w = [-6i32, 0, 0, 0];
    let mut pw = w.as_mut_ptr();
    let mut val = 10i32;
    // Thread 0 reads p[0] (-6, |.| = 6) before it writes it: every thread adds 6 or 16.
    launch(&m, "_Z6memsetPii", 1, &[arg(&mut pw), arg(&mut val)], &mut []);
    assert_eq!(w[0], 16);
    let src = [1i32, 2, 3, 4];
    let mut dst = [0i32; 4];
    let (mut pd, mut ps) = (dst.as_mut_ptr(), src.as_ptr());
    launch(&m, "_Z6memcpyPiPKi", 4, &[arg(&mut pd), arg(&mut ps)], &mut []);
    assert_eq!(dst, [3, 6, 9, 12]);
    let mut o = [0i32; 4];
    let mut po = o.as_mut_ptr();
    launch(&m, "_Z6printfPi", 4, &[arg(&mut po)], &mut []);
    assert_eq!(o, [1, 2, 3, 4]);
    launch(&m, "_Z6mallocPi", 4, &[arg(&mut po)], &mut []);
    assert_eq!(o, [0, 2, 4, 6]);
    launch(&m, "_Z4freePi", 4, &[arg(&mut po)], &mut []);
    assert_eq!(o, [-1; 4]);
    let mut e = [0.0f32, 1.0];
    let mut pe = e.as_mut_ptr();
    launch(&m, "_Z3expPf", 2, &[arg(&mut pe)], &mut []);
    assert_eq!(e, [1.0, 1.0f32.exp()]);
    let mut c = [0i64; 2];
    let mut pc = c.as_mut_ptr();
    launch(&m, "_Z5clockPx", 2, &[arg(&mut pc)], &mut []);
    assert_eq!(c, [7, 7]);
}

#[test]
fn generated_names_never_collide_with_user_names() {
    let (_d, b) = build_one(&cu("names.cu"), &["--std", "c++20"]);
    assert_eq!(symbols(&b), ["k", "runner_names", "_ZN2ns2k2EPi", "_ZN6detail9in_detailEPi", "simtwin_printf"]);
    let m = open_bound(&b);
    // Every global is registered with its own address (the exported symbol's) and size.
    for g in &m.globals {
        let sym = std::ffi::CString::new(g.symbol.clone().unwrap()).unwrap();
        let h = unsafe {
            libc::dlopen(std::ffi::CString::new(b.library.to_str().unwrap()).unwrap().as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD)
        };
        assert!(!h.is_null());
        let addr = unsafe { libc::dlsym(h, sym.as_ptr()) };
        unsafe { libc::dlclose(h) };
        assert_eq!(addr, g.address, "{}", g.name);
        let want = match g.name.as_str() {
            "m" => 16,
            _ => 4,
        };
        assert_eq!(g.size, want, "{}", g.name);
    }
    let addr = |n: &str| m.global(n).unwrap_or_else(|| panic!("{n}")).address as *mut i32;
    unsafe {
        // A host write to `g` (cuMemcpyHtoD) is what the kernel reads.
        *addr("g") = 100;
        *addr("count") = 1000;
        *addr("first") = 10000;
        *addr("simtwin_rt") = 3;
        *addr("simtwin_tls_ctx") = 4;
    }
    let mut out = [0i32; 2];
    let mut p = out.as_mut_ptr();
    let (mut g, mut mm, mut s) = (1i32, 2i32, 3i32);
    launch(&m, "k", 1, &[arg(&mut p), arg(&mut g), arg(&mut mm), arg(&mut s)], &mut []);
    assert_eq!(out[0], 1 + 2 + 3 + 100 + 7);
    let (mut ctx, mut first, mut n, mut count, mut pp) = (1i32, 2i32, 3i32, 4i32, 5i32);
    launch(&m, "runner_names", 1, &[arg(&mut p), arg(&mut ctx), arg(&mut first), arg(&mut n), arg(&mut count), arg(&mut pp)], &mut []);
    assert_eq!(out, [15, 4 + 1000 + 10000]);
    launch(&m, "_ZN2ns2k2EPi", 1, &[arg(&mut p)], &mut []);
    assert_eq!(out[0], 40 + 3 + 4 + 1);
    launch(&m, "_ZN6detail9in_detailEPi", 1, &[arg(&mut p)], &mut []);
    assert_eq!(out[0], 9);
    launch(&m, "simtwin_printf", 1, &[arg(&mut p)], &mut []);
    assert_eq!(out[0], 3 + 4 + 1);

    // User macros named like the ABI's members and the registry's old names cannot change
    // the shim (as far as nvcc's own headers survive them: -Dcount or -Dsize break those).
    let (_d2, b2) = build_one(&cu("speed.cu"), &["-Dlane=5", "-Drun=6", "-Dbind=7", "-Dk=8", "-Dg=9", "-Dm=10"]);
    assert_eq!(symbols(&b2), ["saxpy", "ids"]);
}

#[test]
fn a_module_without_kernels_builds_and_exports_its_variables() {
    let (_d, b) = build_one(&cu("no_kernels.cu"), &[]);
    assert!(b.manifest.entries.is_empty());
    let g: Vec<_> = b.manifest.globals.iter().map(|g| (g.name.as_str(), g.symbol.as_str(), g.size, g.constant)).collect();
    assert_eq!(g, [("counter", "counter", 4, false), ("coeffs", "coeffs", 16, true)]);
    let m = open_bound(&b);
    assert_eq!(m.kernels.len(), 0);
    unsafe {
        assert_eq!(*(m.global("counter").unwrap().address as *const i32), 3);
        assert_eq!(std::slice::from_raw_parts(m.global("coeffs").unwrap().address as *const f32, 4), [0.5, 1.5, 2.5, 3.5]);
    }
}

#[repr(C)]
#[derive(Default)]
struct State {
    ctx: usize,
    str_: usize,
    ev: usize,
    dev: i32,
    buf: u64,
    last: u32,
    where_: u32,
    rt_stream: usize,
    rt_err: u32,
    kind: u32,
}

#[test]
fn device_code_sees_the_toolkit_types_through_cuda_h() {
    let (_d, b) = build_one(&cu("toolkit_types.cu"), &["--std", "c++20"]);
    assert_eq!(b.manifest.entries[0].param_sizes, [std::mem::size_of::<State>() as u32, 8]);
    let m = open_bound(&b);
    let mut s = State { dev: 3, buf: 7 << 32, last: 1, where_: 2, rt_err: 1, kind: 2, ..Default::default() };
    let mut out = [0i32; 9];
    let mut p = out.as_mut_ptr();
    launch(&m, "read_state", 1, &[arg(&mut s), arg(&mut p)], &mut []);
    // CUDA_ERROR_INVALID_VALUE = 1, cudaErrorInvalidValue = 1, cudaMemcpyDeviceToHost = 2,
    // CU_MEMORYTYPE_DEVICE = 2 (cuda.h / driver_types.h).
    assert_eq!(out, [1, std::mem::size_of::<State>() as i32, 3, 1, 1, 1, 7, -3, 1]);
    let mut shape = [4u32, 5, 6, 7, 8, 9];
    let mut grid = [10u32, 11, 12];
    launch(&m, "shape", 2, &[arg(&mut shape), arg(&mut grid), arg(&mut p)], &mut []);
    // sh.gridDim.x + sh.blockDim.y + gridDim(parameter).z + blockDim.x (built-in) + threadIdx.x
    assert_eq!(out[0], 4 + 8 + 12 + 2 + 1);
}

#[test]
fn kernels_that_differ_from_nvcc_fail_the_build_naming_each() {
    let d = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kernels-host")).args(["build", "-o"]).arg(d.path()).arg(cu("mismatch.cu")).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("differ from nvcc's (4 problems)"), "{err}");
    assert!(err.contains("kernel _Z9nvcc_onlyPi: nvcc compiles it (.entry _Z9nvcc_onlyPi) but kernels-host did not build it"), "{err}");
    assert!(
        err.contains(
            "kernel sizes: parameter types differ: nvcc .entry _Z5sizesPii (sizes [8, 4]), kernels-host _Z5sizesPix (sizes [8, 8])"
        ),
        "{err}"
    );
    assert!(err.contains("kernel host_only (_Z9host_onlyPi): kernels-host built it but nvcc's PTX has no such .entry"), "{err}");
    assert!(err.contains("kernel by_value (by_value): parameter sizes differ: nvcc [4, 8], kernels-host [8, 8]"), "{err}");
    assert!(err.contains("--no-nvcc-check"), "{err}");
    assert!(!d.path().join("mismatch.so").exists() && !d.path().join("mismatch.simtwin.json").exists());

    // Without the check the same source builds (the user asked for it).
    let out = Command::new(env!("CARGO_BIN_EXE_kernels-host"))
        .args(["build", "--no-nvcc-check", "-o"])
        .arg(d.path())
        .arg(cu("mismatch.cu"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));

    // No nvcc where the user said: a clear error that names the way out.
    let out = Command::new(env!("CARGO_BIN_EXE_kernels-host"))
        .env("NVCC", "/nonexistent/nvcc")
        .args(["build", "-o"])
        .arg(d.path())
        .arg(cu("tiny.cu"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("/nonexistent/nvcc: not an executable nvcc") && err.contains("--no-nvcc-check"), "{err}");
}

#[test]
fn big_static_shared_memory_loads() {
    let (_d, b) = build_one(&cu("big_shared.cu"), &[]);
    let m = open_bound(&b);
    let mut out = vec![0f32; 64];
    let mut p = out.as_mut_ptr();
    launch(&m, "big", 64, &[arg(&mut p)], &mut []);
    assert!(out.iter().enumerate().all(|(i, v)| *v == i as f32 * 2.0 + 1.0), "{out:?}");
}

/// A source with `n` kernels: template instantiations and plain kernels, interleaved.
fn many_kernels_source(n: usize) -> (String, Vec<String>) {
    let mut src = String::from("#include <cuda_runtime.h>\ntemplate <int N> __global__ void t(int *out) { out[N] = N; }\n");
    let mut names = Vec::new();
    for i in 0..n {
        if i % 2 == 0 {
            src.push_str(&format!("template __global__ void t<{i}>(int *);\n"));
            names.push(format!("t<{i}>"));
        } else {
            src.push_str(&format!("__global__ void plain_{i}(int *out, int v) {{ out[{i}] = v + {i}; }}\n"));
            names.push(format!("plain_{i}"));
        }
    }
    (src, names)
}

fn many_kernels(n: usize) {
    let d = tempfile::tempdir().unwrap();
    let (src, names) = many_kernels_source(n);
    let path = d.path().join("many.cu");
    std::fs::write(&path, src).unwrap();
    let t0 = std::time::Instant::now();
    let (_o, b) = build_one(&path, &[]);
    let took = t0.elapsed();
    // The manifest lists the entries in descriptor order, which is source order.
    let got: Vec<&str> = b.manifest.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(got, names);
    let m = open_bound(&b);
    for (k, e) in m.kernels.iter().zip(&b.manifest.entries) {
        assert_eq!(k.name, e.name);
        assert_eq!(k.symbol.as_deref(), Some(e.symbol.as_str()));
    }
    let mut out = vec![0i32; n];
    let mut p = out.as_mut_ptr();
    let mut v = 1000i32;
    launch(&m, &b.manifest.entries[n - 1].symbol, 1, &[arg(&mut p), arg(&mut v)], &mut []);
    launch(&m, &b.manifest.entries[n - 2].symbol, 1, &[arg(&mut p)], &mut []);
    assert_eq!((out[n - 1], out[n - 2]), (1000 + (n - 1) as i32, (n - 2) as i32));
    eprintln!("{n} kernels built, checked against nvcc and described in {:.1} s", took.as_secs_f64());
}

#[test]
fn a_few_hundred_kernels_build_in_order() {
    many_kernels(256);
}

#[test]
#[ignore]
fn five_thousand_kernels_build_in_order() {
    many_kernels(5000);
}

#[test]
fn type_punned_loads_and_stores_see_the_bytes_stored() {
    // g++ -O2 without -fno-strict-aliasing returned 1 for every pun_load output (the
    // punned read dropped) and so made a real extractor (a VMAF fork's vif_cuda, scales
    // 1-3) score 1.0 where the H200 and the CPU agree on 0.9957.
    let (_d, b) = build_one(&cu("punning.cu"), &[]);
    let m = open_bound(&b);
    let input: Vec<u16> = (0..32u16).map(|i| i * 257 + 3).collect();
    let mut out = vec![0u16; 32];
    let (mut pi, mut po) = (input.as_ptr(), out.as_mut_ptr());
    launch(&m, "pun_load", 8, &[arg(&mut pi), arg(&mut po)], &mut []);
    let want: Vec<u16> = input.iter().map(|v| v + 1).collect();
    assert_eq!(out, want);

    let mut words = vec![0u32; 16];
    let (mut pw, mut n) = (words.as_mut_ptr(), 10i32);
    launch(&m, "pun_store", 8, &[arg(&mut pw), arg(&mut n)], &mut []);
    for t in 0..8u32 {
        assert_eq!(words[2 * t as usize], (45 + 10 * t + 128) >> 1, "thread {t} low word");
        assert_eq!(words[2 * t as usize + 1], 135, "thread {t} high word");
    }
}
