//! PTX-mode regressions found running real programs in PTX mode (upstream VMAF, the
//! 17-extractor fork; reports/reference/ptx-mode/): kernels of the shape nvcc emitted
//! there (ptx_regress/regress.ptx), run on the emulated driver in PTX mode by the
//! instruction suite's runner, every output checked against the value the PTX ISA and
//! ptxas's measured contraction rule give for the runner's inputs.

mod client_support;
use client_support::{root, runner_records, simtwin, suite_runner_dir};
use std::collections::BTreeMap;
use std::process::Command;

/// name -> (status, per-thread 16-byte outputs or 32-byte inputs)
fn records(bytes: &[u8], with_status: bool, width: usize) -> BTreeMap<String, (i32, Vec<Vec<u8>>)> {
    runner_records(bytes, width, with_status)
        .into_iter()
        .map(|(name, status, data)| (name, (status, data.chunks(width).map(<[u8]>::to_vec).collect())))
        .collect()
}

fn f32_at(b: &[u8], off: usize) -> f32 {
    f32::from_bits(u32::from_le_bytes(b[off..off + 4].try_into().unwrap()))
}

/// Same bits, or both NaN (the device writes its canonical NaN; Rust's may differ).
fn same(got: f32, want: f32) -> bool {
    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
}

#[test]
fn ptx_mode_regressions_from_real_programs() {
    let dir = suite_runner_dir("ptx-regress");
    let runner = dir.join("runner");
    let src = root().join("emu-driver/tests/ptx_regress");
    let (out, inputs) = (dir.join("out.bin"), dir.join("in.bin"));
    let o = Command::new(&runner)
        .arg(src.join("regress.ptx"))
        .arg(src.join("cases.txt"))
        .arg(&out)
        .arg("--inputs")
        .arg(&inputs)
        .env("LD_LIBRARY_PATH", simtwin("lib"))
        .env("EMU_CUDA_EXEC", "ptx")
        .env("EMU_CUDA_LOG", "error")
        .env("SIMTWIN_CACHE_DIR", dir.join("cache"))
        .env_remove("EMU_CUDA_KERNELS")
        .output()
        .unwrap();
    assert!(o.status.success(), "runner failed:\n{}", String::from_utf8_lossy(&o.stderr));
    let outs = records(&std::fs::read(&out).unwrap(), true, 16);
    // The same runner on the H200 (reports/reference/h200/ptx-regress/): every case's
    // outputs byte for byte.
    let h200 =
        zstd::decode_all(&std::fs::read(root().join("reports/reference/h200/ptx-regress/h200-regress.bin.zst")).unwrap()[..]).unwrap();
    for (name, want) in records(&h200, true, 16) {
        assert!(outs.get(&name) == Some(&want), "case {name}: PTX mode's outputs differ from the H200's");
    }
    let ins = records(&std::fs::read(&inputs).unwrap(), false, 32);
    let listed =
        std::fs::read_to_string(src.join("cases.txt")).unwrap().lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).count();
    assert_eq!(outs.len(), listed, "cases run: {:?}", outs.keys().collect::<Vec<_>>());
    let mut checked = 0;
    for (name, (status, _)) in &outs {
        assert_eq!(*status, 0, "case {name}: the launch failed (CUresult {status}):\n{}", String::from_utf8_lossy(&o.stderr));
    }

    // Each thread reads back the word it stored, through `[window - 4 + 4]`.
    if let (Some((_, o1)), Some((_, i1))) = (outs.get("shared_addr_wraps"), ins.get("shared_addr_wraps")) {
        for (t, (o, i)) in o1.iter().zip(i1).enumerate() {
            assert_eq!(o[0..4], i[0..4], "shared_addr_wraps thread {t}");
        }
        checked += 1;
    }

    // add(p, q) with p = a*a, q = b*b each also under a sub: fma(a, a, round(b*b)); the
    // subs fma(-a, a, c) and fma(-b, b, d).
    if let (Some((_, o2)), Some((_, i2))) = (outs.get("two_products_one_add"), ins.get("two_products_one_add")) {
        let mut telling = 0;
        for (t, (o, i)) in o2.iter().zip(i2).enumerate() {
            let (a, b, c, d) = (f32_at(i, 0), f32_at(i, 8), f32_at(i, 16), f32_at(i, 24));
            let want = [a.mul_add(a, b * b), (-a).mul_add(a, c), (-b).mul_add(b, d)];
            let got = [f32_at(o, 0), f32_at(o, 8), f32_at(o, 12)];
            for k in 0..3 {
                assert!(
                    same(got[k], want[k]),
                    "two_products_one_add thread {t} output {k}: a={a:e} b={b:e} c={c:e} d={d:e}: {:#010x}, expected {:#010x}",
                    got[k].to_bits(),
                    want[k].to_bits()
                );
            }
            // Inputs where fusing the other product, or neither, would give other bits.
            if !same(want[0], b.mul_add(b, a * a)) || !same(want[0], a * a + b * b) {
                telling += 1;
            }
        }
        assert!(telling >= 10, "only {telling} inputs tell the fusions apart");
        checked += 1;
    }

    // p = a*b, sqrt.rn, then p + c: two roundings.
    if let (Some((_, o3)), Some((_, i3))) = (outs.get("no_fusion_across_sqrt_rn"), ins.get("no_fusion_across_sqrt_rn")) {
        let mut telling = 0;
        for (t, (o, i)) in o3.iter().zip(i3).enumerate() {
            let (a, b, c, d) = (f32_at(i, 0), f32_at(i, 8), f32_at(i, 16), f32_at(i, 24));
            let want = [a * b + c, d.sqrt()];
            let got = [f32_at(o, 0), f32_at(o, 8)];
            for k in 0..2 {
                assert!(
                    same(got[k], want[k]),
                    "no_fusion_across_sqrt_rn thread {t} output {k}: a={a:e} b={b:e} c={c:e} d={d:e}: {:#010x}, expected {:#010x}",
                    got[k].to_bits(),
                    want[k].to_bits()
                );
            }
            if !same(want[0], a.mul_add(b, c)) {
                telling += 1;
            }
        }
        assert!(telling >= 10, "only {telling} inputs tell fused from unfused");
        checked += 1;
    }
    // a*b through mov and neg into an add: fma(-a, b, c); a*3 across a membar into a
    // sub: fma(-a, 3, d).
    if let (Some((_, o4)), Some((_, i4))) = (outs.get("fused_through_copies"), ins.get("fused_through_copies")) {
        let mut telling = 0;
        for (t, (o, i)) in o4.iter().zip(i4).enumerate() {
            let (a, b, c, d) = (f32_at(i, 0), f32_at(i, 8), f32_at(i, 16), f32_at(i, 24));
            let want = [(-a).mul_add(b, c), (-a).mul_add(3.0, d)];
            let got = [f32_at(o, 0), f32_at(o, 8)];
            for k in 0..2 {
                assert!(
                    same(got[k], want[k]),
                    "fused_through_copies thread {t} output {k}: a={a:e} b={b:e} c={c:e} d={d:e}: {:#010x}, expected {:#010x}",
                    got[k].to_bits(),
                    want[k].to_bits()
                );
            }
            if !same(want[0], -(a * b) + c) || !same(want[1], d - a * 3.0) {
                telling += 1;
            }
        }
        assert!(telling >= 10, "only {telling} inputs tell fused from unfused");
        checked += 1;
    }

    // div.approx + add: fma(a, rcp.approx(b), c), checked where b needs no scaling (a
    // normal |b| <= 2^126), with the reciprocal the kernel stored.
    if let (Some((_, o5)), Some((_, i5))) = (outs.get("fused_div_approx"), ins.get("fused_div_approx")) {
        let (mut telling, mut compared) = (0, 0);
        for (t, (o, i)) in o5.iter().zip(i5).enumerate() {
            let (a, b, c) = (f32_at(i, 0), f32_at(i, 8), f32_at(i, 16));
            if !b.is_normal() || b.abs() > 2f32.powi(126) {
                continue;
            }
            compared += 1;
            let r = f32_at(o, 8);
            let want = a.mul_add(r, c);
            let got = f32_at(o, 0);
            assert!(
                same(got, want),
                "fused_div_approx thread {t}: a={a:e} b={b:e} c={c:e}: {:#010x}, expected {:#010x}",
                got.to_bits(),
                want.to_bits()
            );
            if !same(want, a * r + c) {
                telling += 1;
            }
        }
        assert!(compared >= 500 && telling >= 10, "{compared} inputs compared, {telling} tell fused from unfused");
        checked += 1;
    }

    // f16x2 mul + add: the bits of fma.rn.f16x2 on every input.
    if let Some((_, o6)) = outs.get("fused_f16x2") {
        let mut telling = 0;
        let u32_at = |b: &[u8], k: usize| u32::from_le_bytes(b[k..k + 4].try_into().unwrap());
        for (t, o) in o6.iter().enumerate() {
            let (fused, fma, unfused) = (u32_at(o, 0), u32_at(o, 4), u32_at(o, 8));
            assert_eq!(fused, fma, "fused_f16x2 thread {t}: mul+add {fused:#010x}, fma.rn {fma:#010x}");
            if fused != unfused {
                telling += 1;
            }
        }
        assert!(telling >= 10, "only {telling} inputs tell fused from unfused");
        checked += 1;
    }
    // f32 results are the device's canonical NaN (0x7fffffff) wherever they reach memory,
    // whatever NaN came in, also where the intermediate results of the chain were not
    // canonicalised (`nan_blind`); compared bit for bit.
    if let (Some((_, o8)), Some((_, i8))) = (outs.get("nan_payload_chains"), ins.get("nan_payload_chains")) {
        let dev = |x: f32| if x.is_nan() { 0x7fff_ffffu32 } else { x.to_bits() };
        let mut payloads = 0;
        for (t, (o, i)) in o8.iter().zip(i8).enumerate() {
            let (a, b) = (f32_at(i, 0), f32_at(i, 8));
            let s = a + b;
            let want = [
                dev((s * b).mul_add(a, 1.0)),
                dev(a - b),
                u32::from(a * b > 0.0 || (a * b).is_nan()), // setp.gtu: greater or unordered
                dev(s - s),
            ];
            let got: Vec<u32> = (0..4).map(|k| u32::from_le_bytes(o[4 * k..4 * k + 4].try_into().unwrap())).collect();
            assert_eq!(got, want, "nan_payload_chains thread {t}: a={:#010x} b={:#010x}", a.to_bits(), b.to_bits());
            if [a, b].iter().any(|x| x.is_nan() && x.to_bits() != 0x7fff_ffff) {
                payloads += 1;
            }
        }
        assert!(payloads >= 4, "only {payloads} inputs carry a NaN payload the device does not write");
        checked += 1;
    }
    // At CU_JIT_OPTIMIZATION_LEVEL 0 ptxas contracts nothing (reports/ptxas-contraction
    // 2.0): the same kernels loaded with cuModuleLoadDataEx round every product.
    let out0 = dir.join("out-O0.bin");
    let o0 = Command::new(&runner)
        .arg(src.join("regress.ptx"))
        .arg(src.join("cases.txt"))
        .arg(&out0)
        .args(["--only", "fused_through_copies", "--opt", "0"])
        .env("LD_LIBRARY_PATH", simtwin("lib"))
        .env("EMU_CUDA_EXEC", "ptx")
        .env("EMU_CUDA_LOG", "error")
        .env("SIMTWIN_CACHE_DIR", dir.join("cache"))
        .env_remove("EMU_CUDA_KERNELS")
        .output()
        .unwrap();
    assert!(o0.status.success(), "runner --opt 0 failed:\n{}", String::from_utf8_lossy(&o0.stderr));
    let outs0 = records(&std::fs::read(&out0).unwrap(), true, 16);
    let (status0, o7) = &outs0["fused_through_copies"];
    assert_eq!(*status0, 0, "fused_through_copies at -O0: the launch failed");
    let i7 = &ins["fused_through_copies"].1;
    let mut telling = 0;
    for (t, (o, i)) in o7.iter().zip(i7).enumerate() {
        let (a, b, c, d) = (f32_at(i, 0), f32_at(i, 8), f32_at(i, 16), f32_at(i, 24));
        let want = [-(a * b) + c, d - a * 3.0];
        let got = [f32_at(o, 0), f32_at(o, 8)];
        for k in 0..2 {
            assert!(
                same(got[k], want[k]),
                "fused_through_copies at -O0 thread {t} output {k}: {:#010x}, expected {:#010x}",
                got[k].to_bits(),
                want[k].to_bits()
            );
        }
        if !same(want[0], (-a).mul_add(b, c)) {
            telling += 1;
        }
    }
    assert!(telling >= 10, "only {telling} inputs tell -O0 from -O3");
    assert_eq!(checked, listed, "a case of cases.txt has no check here");
}
