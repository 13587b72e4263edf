//! The Rust ABI types against kernels-host's abi.h: a C program built from the header
//! prints every size, alignment and offset; each must equal the Rust layout.

use simtwin_abi::kernel::*;
use std::mem::{align_of, offset_of, size_of};
use std::process::Command;

const HEADER_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../kernels-host/include");

fn c_layout(lines: &[(&str, &str)]) -> Vec<(String, u64)> {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let src = dir.join("layout.c");
    let mut c = String::from("#include <stdio.h>\n#include <stddef.h>\n#include \"simtwin/abi.h\"\nint main(void) {\n");
    for (name, expr) in lines {
        c += &format!("  printf(\"%s %llu\\n\", \"{name}\", (unsigned long long)({expr}));\n");
    }
    c += "  return 0;\n}\n";
    std::fs::write(&src, c).unwrap();
    let exe = dir.join("layout");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let st = Command::new(&cc).arg("-I").arg(HEADER_DIR).arg(&src).arg("-o").arg(&exe).status().expect("a C compiler (cc)");
    assert!(st.success(), "abi.h does not compile as C");
    let out = Command::new(&exe).output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

macro_rules! layout {
    ($( $cty:literal => $rty:ty { $($cf:literal => $rf:ident),* } ),* $(,)?) => {{
        let mut c = Vec::new();
        let mut r: Vec<(String, u64)> = Vec::new();
        $(
            c.push((concat!($cty, ".size"), concat!("sizeof(", $cty, ")")));
            c.push((concat!($cty, ".align"), concat!("_Alignof(", $cty, ")")));
            r.push((concat!($cty, ".size").into(), size_of::<$rty>() as u64));
            r.push((concat!($cty, ".align").into(), align_of::<$rty>() as u64));
            $(
                c.push((concat!($cty, ".", $cf), concat!("offsetof(", $cty, ", ", $cf, ")")));
                r.push((concat!($cty, ".", $cf).into(), offset_of!($rty, $rf) as u64));
            )*
        )*
        (c, r)
    }};
}

#[test]
fn rust_types_match_abi_h() {
    let (c, rust) = layout! {
        "simtwin_dim3_t" => Dim3 { "x" => x, "y" => y, "z" => z },
        "simtwin_thread_ctx_t" => ThreadCtx {
            "thread_idx" => thread_idx, "block_idx" => block_idx, "block_dim" => block_dim,
            "grid_dim" => grid_dim, "linear_tid" => linear_tid, "reserved" => reserved,
            "dyn_smem" => dyn_smem, "dyn_smem_size" => dyn_smem_size,
            "range_stop" => range_stop, "lanes" => lanes, "executor" => executor
        },
        "simtwin_recover_t" => Recover { "landing" => landing },
        "simtwin_site_t" => Site { "file" => file, "line" => line, "column" => column },
        "simtwin_runtime_t" => Runtime {
            "abi_version" => abi_version, "size" => size, "barrier" => barrier, "warp" => warp,
            "activemask" => activemask, "trap" => trap, "print" => print,
            "threadfence" => threadfence, "clock" => clock, "yield_now" => yield_now,
            "report" => report, "access" => access, "texture" => texture,
            "block_barrier" => block_barrier, "warp_exited" => warp_exited,
            "grid_workspace" => grid_workspace, "recover_slot" => recover_slot
        },
        "simtwin_tex_request_t" => TexRequest {
            "op" => op, "geometry" => geometry, "handle" => handle, "coord" => coord,
            "icoord" => icoord, "lod" => lod, "offset" => offset, "grad" => grad,
            "component" => component, "result" => result, "size" => size, "clamp" => clamp,
            "query" => query, "flags" => flags, "data" => data
        },
        "simtwin_kernel_t" => Kernel {
            "name" => name, "function" => function, "run" => run, "param_count" => param_count,
            "param_sizes" => param_sizes, "param_aligns" => param_aligns,
            "max_threads" => max_threads, "min_blocks" => min_blocks
        },
        "simtwin_global_t" => Global {
            "name" => name, "address" => address, "size" => size,
            "is_constant" => is_constant, "reserved" => reserved
        },
        "simtwin_module_t" => Module {
            "abi_version" => abi_version, "kernel_count" => kernel_count, "kernels" => kernels,
            "global_count" => global_count, "globals" => globals, "source_path" => source_path,
            "source_hash" => source_hash, "build_id" => build_id, "bind" => bind,
            "ctx_slot" => ctx_slot
        },
    };
    let mut c = c;
    let consts: Vec<(String, u64)> = vec![
        ("SIMTWIN_ABI_VERSION".into(), ABI_VERSION as u64),
        ("SIMTWIN_BAR_COUNT".into(), bar::COUNT as u64),
        ("SIMTWIN_BAR_OR".into(), bar::OR as u64),
        ("SIMTWIN_WARP_SHFL_XOR".into(), warp::SHFL_XOR as u64),
        ("SIMTWIN_WARP_MATCH_ALL".into(), warp::MATCH_ALL as u64),
        ("SIMTWIN_WARP_REDUCE_XOR".into(), warp::REDUCE_XOR as u64),
        ("SIMTWIN_WARP_SYNC".into(), warp::SYNC as u64),
        ("SIMTWIN_TRAP_UNSUPPORTED".into(), trap::UNSUPPORTED as u64),
        ("SIMTWIN_REPORT_CONVERSION".into(), report::CONVERSION as u64),
        ("SIMTWIN_REPORT_SHIFT".into(), report::SHIFT as u64),
        ("SIMTWIN_ACCESS_READ".into(), access::READ as u64),
        ("SIMTWIN_ACCESS_WRITE".into(), access::WRITE as u64),
        ("SIMTWIN_ACCESS_ATOMIC_READ".into(), access::ATOMIC_READ as u64),
        ("SIMTWIN_ACCESS_ATOMIC_WRITE".into(), access::ATOMIC_WRITE as u64),
        ("SIMTWIN_TEX_SURF_STORE".into(), tex::SURF_STORE as u64),
        ("SIMTWIN_TEX_SUQ".into(), tex::SUQ as u64),
        ("SIMTWIN_TEX_SURF_STORE_P".into(), tex::SURF_STORE_P as u64),
        ("SIMTWIN_TEX_ACUBE".into(), tex::G_ACUBE as u64),
        ("SIMTWIN_TEX_U32".into(), tex::R_U32 as u64),
        ("SIMTWIN_SURF_ZERO".into(), tex::ZERO as u64),
        ("SIMTWIN_TXQ_NUM_SAMPLES".into(), tex::Q_NUM_SAMPLES as u64),
        ("SIMTWIN_TXQ_LEVEL_WIDTH".into(), tex::Q_LEVEL_WIDTH as u64),
        ("SIMTWIN_TXQ_LEVEL_HEIGHT".into(), tex::Q_LEVEL_HEIGHT as u64),
        ("SIMTWIN_TXQ_LEVEL_DEPTH".into(), tex::Q_LEVEL_DEPTH as u64),
    ];
    let names: Vec<String> = consts.iter().map(|(n, _)| n.clone()).collect();
    for n in &names {
        c.push((Box::leak(n.clone().into_boxed_str()), Box::leak(n.clone().into_boxed_str())));
    }
    let have = c_layout(&c);
    let mut want = rust;
    want.extend(consts);
    assert_eq!(have.len(), want.len());
    for (h, w) in have.iter().zip(want.iter()) {
        assert_eq!(h, w, "abi.h and simtwin_abi::kernel disagree");
    }
    // The symbol name too.
    let header = std::fs::read_to_string(format!("{HEADER_DIR}/simtwin/abi.h")).unwrap();
    let sym = std::str::from_utf8(&MODULE_SYMBOL[..MODULE_SYMBOL.len() - 1]).unwrap();
    assert!(header.contains(&format!("#define SIMTWIN_MODULE_SYMBOL \"{sym}\"")));
}
