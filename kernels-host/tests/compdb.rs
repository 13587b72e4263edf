//! `kernels-host build --compile-commands`: a hand-written database in the forms CMake,
//! meson (`ninja -t compdb`, which lists custom_target commands) and clang write, and a
//! real meson project when meson and ninja are installed.

mod common;
use std::path::Path;
use std::process::Command;

fn kh() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kernels-host"))
}

/// A small project: two kernels files with the same stem, one that needs a define and an
/// include directory given relative to the build directory.
fn project(root: &Path) {
    for d in ["src/a", "src/b", "include", "build"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(root.join("include/cfg.h"), "#pragma once\n#define SCALE 3\n").unwrap();
    std::fs::write(
        root.join("src/a/k.cu"),
        "#include \"cfg.h\"\n#ifndef DEVICE_CODE\n#error \"DEVICE_CODE comes from the command\"\n#endif\n\
         extern \"C\" __global__ void ka(int *p) { *p = SCALE * (int)sizeof(LABEL); }\n",
    )
    .unwrap();
    std::fs::write(root.join("src/b/k.cu"), "__global__ void kb(float *p, int n) { p[n] = 2.0f; }\n").unwrap();
    std::fs::write(root.join("src/c.cu"), "extern \"C\" __global__ void kc(double *p) { *p = 1.0; }\n").unwrap();
    std::fs::write(root.join("hello.c"), "int main(void) { return 0; }\n").unwrap();
}

#[test]
fn every_cuda_entry_of_a_database_is_built_with_its_own_flags() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    project(root);
    let b = root.join("build");
    let db = serde_json::json!([
        // CMake / ninja "command" form: relative -I, a quoted define with a space.
        {"directory": b, "file": "../src/a/k.cu",
         "command": "/opt/cuda/bin/nvcc --fatbin -gencode=arch=compute_90,code=sm_90 ../src/a/k.cu -o ka.fatbin -I ../include -DDEVICE_CODE '-DLABEL=\"a b\"' --std c++17"},
        // "arguments" form behind launchers.
        {"directory": b, "file": "../src/b/k.cu",
         "arguments": ["env", "FOO=bar", "ccache", "nvcc", "-c", "../src/b/k.cu", "-o", "kb.o", "-isystem=../include", "--fmad=false"]},
        // clang in CUDA mode.
        {"directory": b, "file": "../src/c.cu",
         "arguments": ["clang++", "--cuda-gpu-arch=sm_75", "--cuda-device-only", "-S", "../src/c.cu", "-o", "c.s", "-std=c++17"]},
        // Not CUDA: a C compilation, a link, meson's wrapper around bin2c.
        {"directory": b, "file": "../hello.c", "command": "cc -I.. -o hello.p/hello.c.o -c ../hello.c"},
        {"directory": b, "file": "hello.p/hello.c.o", "command": "cc -o hello hello.p/hello.c.o"},
        {"directory": b, "file": "../src/a/k.cu",
         "command": "/usr/bin/meson --internal exe --capture ka.c -- /opt/cuda/bin/bin2c --const ../src/a/k.cu"}
    ]);
    let dbp = b.join("compile_commands.json");
    std::fs::write(&dbp, serde_json::to_string_pretty(&db).unwrap()).unwrap();
    let out_dir = root.join("kernels");
    let o = kh().args(["build", "-o"]).arg(&out_dir).arg("--compile-commands").arg(&dbp).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("3 CUDA entries built (3 kernels), 0 failed, 3 entries skipped (not CUDA)"), "{stdout}");
    let manifest = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(out_dir.join(format!("{name}.simtwin.json"))).unwrap()).unwrap()
    };
    // Same stem, distinct outputs, prefixed with the parent directory's name.
    let a = manifest("a-k");
    assert_eq!(a["entries"][0]["symbol"], "ka");
    assert_eq!(
        a["nvcc_flags"],
        serde_json::json!([
            "--fatbin",
            "-gencode=arch=compute_90,code=sm_90",
            "-I",
            "../include",
            "-DDEVICE_CODE",
            "-DLABEL=\"a b\"",
            "--std",
            "c++17"
        ])
    );
    let kb = manifest("b-k");
    assert_eq!(kb["entries"][0]["symbol"], "_Z2kbPfi");
    assert_eq!(kb["fma_contraction_differs"], false);
    assert_eq!(manifest("c")["entries"][0]["symbol"], "kc");

    // The kernel saw the define and the include directory: SCALE * sizeof("a b").
    let lib = kernels_host::module::LoadedModule::open(&out_dir.join("a-k.so")).unwrap();
    unsafe { lib.bind(&common::RUNTIME) };
    let mut v = 0i32;
    let mut p = &mut v as *mut i32;
    common::launch(&lib, "ka", 1, &[common::arg(&mut p)], &mut []);
    assert_eq!(v, 3 * 4);

    // A database without CUDA entries, or an unreadable one, is a usage error.
    let none = b.join("none.json");
    std::fs::write(&none, serde_json::to_string(&serde_json::json!([db[3]])).unwrap()).unwrap();
    let o = kh().args(["build", "-o"]).arg(&out_dir).arg("--compile-commands").arg(&none).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("ninja -t compdb"));
    let o = kh().args(["build", "-o"]).arg(&out_dir).arg("--compile-commands").arg(root.join("missing.json")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    // Sources and a database together are refused.
    let o = kh().args(["build", "-o"]).arg(&out_dir).arg("--compile-commands").arg(&dbp).arg(root.join("src/c.cu")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_failing_entry_fails_the_build_and_the_others_are_still_built() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    project(root);
    let b = root.join("build");
    // Without -DDEVICE_CODE, src/a/k.cu stops at its #error.
    let db = serde_json::json!([
        {"directory": b, "file": "../src/a/k.cu", "command": "nvcc -c ../src/a/k.cu -I ../include"},
        {"directory": b, "file": "../src/c.cu", "command": "nvcc -c ../src/c.cu"}
    ]);
    let dbp = b.join("compile_commands.json");
    std::fs::write(&dbp, db.to_string()).unwrap();
    let out_dir = root.join("kernels");
    let o = kh().args(["build", "-o"]).arg(&out_dir).arg("--compile-commands").arg(&dbp).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 CUDA entries built (1 kernels), 1 failed, 0 entries skipped"), "{stdout}");
    assert!(stderr.contains("k.cu:3:") && stderr.contains("DEVICE_CODE comes from the command"), "{stderr}");
    assert!(out_dir.join("c.so").is_file() && !out_dir.join("k.so").exists());
}

/// With meson and ninja installed: a meson project whose nvcc runs in custom_targets, its
/// database from `ninja -t compdb` (meson's compile_commands.json has no such entries).
#[test]
fn meson_custom_targets_through_ninja_compdb() {
    let have = |t: &str| Command::new(t).arg("--version").output().map(|o| o.status.success()).unwrap_or(false);
    if !have("meson") || !have("ninja") {
        eprintln!("meson or ninja not installed: the hand-written databases above cover the formats");
        return;
    }
    let nvcc = kernels_host::toolkit::find_nvcc(None).expect("nvcc (scripts/setup installs it)");
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    project(root);
    std::fs::write(
        root.join("meson.build"),
        "project('twin', 'c')\nnvcc = find_program(get_option('nvcc'))\n\
         foreach name, cu : {'ka': 'src/a/k.cu', 'kb': 'src/b/k.cu'}\n\
           custom_target('cu_' + name, build_by_default: true, output: [name + '.fatbin'], input: cu,\n\
             command: [nvcc, '--fatbin', '-gencode=arch=compute_90,code=sm_90', '@INPUT@', '-o', '@OUTPUT@',\n\
                       '-I', '../include', '-DDEVICE_CODE', '-DLABEL=\"m\"'])\n\
         endforeach\nexecutable('hello', 'hello.c')\n",
    )
    .unwrap();
    std::fs::write(root.join("meson_options.txt"), "option('nvcc', type: 'string', value: 'nvcc')\n").unwrap();
    std::fs::remove_dir_all(root.join("build")).unwrap();
    let o = Command::new("meson").current_dir(root).args(["setup", "build"]).arg(format!("-Dnvcc={}", nvcc.display())).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let o = Command::new("ninja").current_dir(root.join("build")).args(["-t", "compdb"]).output().unwrap();
    assert!(o.status.success());
    let dbp = root.join("build/compdb.json");
    std::fs::write(&dbp, &o.stdout).unwrap();
    let out_dir = root.join("kernels");
    let o = kh().args(["build", "-o"]).arg(&out_dir).arg("--compile-commands").arg(&dbp).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("2 CUDA entries built (2 kernels), 0 failed"), "{stdout}");
    assert!(out_dir.join("a-k.so").is_file() && out_dir.join("b-k.so").is_file());
}
