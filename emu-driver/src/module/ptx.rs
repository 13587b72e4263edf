//! PTX mode: a module's kernels run from the image's own PTX, translated to host C++ and
//! compiled at load by simtwin-ptx (cached by content), then bound like a twin.
//!
//! Failures answer what a user can act on: an image without PTX (SASS only) is
//! CUDA_ERROR_NO_BINARY_FOR_GPU with the `-gencode` that embeds it; PTX that does not
//! parse is CUDA_ERROR_INVALID_PTX; an instruction simtwin cannot run faithfully is
//! CUDA_ERROR_NOT_SUPPORTED, counted under `unsupported` as `PTX:<instruction>`, with its
//! kernel and line in the message; no C++ compiler is CUDA_ERROR_JIT_COMPILER_NOT_FOUND.

use super::load::{image_label, open_instance, prepared, release_instance, Prepared};
use super::Kernel;
use crate::abi;
use crate::config::ThreadLoops;
use crate::cu::*;
use crate::image;
use crate::state::CuResult;
use simtwin_abi::ffi::c_str;
use simtwin_ptx::jit::{self, JitError};
use simtwin_ptx::uniform::Path;
use std::ffi::c_void;

/// Translates, compiles (or finds in the cache) and opens the image's PTX, with ptxas's
/// contraction at optimisation level `opt_level` (the JIT option's; 3 by default).
pub fn prepare(img: image::Image, sm_count: u32, opt_level: u8) -> CuResult<Prepared> {
    if img.ptx.is_empty() {
        crate::log_error!(
            "module image ({}): PTX mode needs the module's PTX, and the image holds none (SASS only: {}); embed it, e.g. nvcc -gencode arch=compute_90,code=[sm_90,compute_90], or build host twins (kernels-host) and set EMU_CUDA_KERNELS",
            img.chosen,
            if img.entries.is_empty() { img.chosen.clone() } else { img.entries.iter().map(|e| e.describe()).collect::<Vec<_>>().join(", ") }
        );
        return Err(CUDA_ERROR_NO_BINARY_FOR_GPU);
    }
    let texts: Vec<&str> = img.ptx.iter().map(String::as_str).collect();
    // A linked image was compiled at cuLinkCreate's level on a real driver.
    let opt_level = img.jit_opt_level.unwrap_or(opt_level);
    let label = image_label(&img);
    let segment_vectors = crate::config::get().map_or(simtwin_ptx::SegmentVectors::default(), |c| c.segment_vectors);
    let opts = simtwin_ptx::Options { contract: true, opt_level, sm_count, name: label.clone(), units: 0, segment_vectors };
    let built = match jit::build(&texts, &opts, &jit::JitOptions::from_env()) {
        Ok(b) => b,
        Err(e) => return Err(jit_error(&label, e)),
    };
    let lib_path = built.library.clone();
    let (lib, desc) = open_instance(&lib_path).map_err(|m| {
        crate::log_error!("PTX mode: {m}");
        CUDA_ERROR_NO_BINARY_FOR_GPU
    })?;
    // SAFETY: open_instance checked the ABI version; the descriptor is static data of
    // `lib`, which lives in the prepared module.
    let d = unsafe { &*desc };
    let t = &built.translation;
    if d.kernel_count as usize != t.kernels.len() || d.global_count as usize != t.globals.len() {
        release_instance(&lib_path);
        crate::log_error!("PTX mode: {} does not match its translation (a stale cache entry?): remove it", lib_path.display());
        return Err(CUDA_ERROR_NO_BINARY_FOR_GPU);
    }
    let loop_runners = loop_runners(&lib, t.kernels.len());
    let mut notes = t.notes.clone();
    notes.extend(thread_paths(&label, &t.kernels, &loop_runners));
    // SAFETY: arrays of kernel_count / global_count records in the descriptor.
    let raw_kernels = unsafe { std::slice::from_raw_parts(d.kernels, d.kernel_count as usize) };
    let kernels: Vec<Kernel> = t
        .kernels
        .iter()
        .zip(raw_kernels)
        .zip(&loop_runners)
        .map(|((k, raw), looped)| {
            // The cubin of the same image, when it has one, still says what the device
            // compiled (registers, ptxas's shared-memory size) for attributes and launch
            // validation.
            let from_image = img.kernel(&k.name);
            Kernel {
                symbol: k.name.clone(),
                exec: crate::exec::KernelRef {
                    name: k.name.as_str().into(),
                    run: looped.unwrap_or(raw.run),
                    ctx_slot: d.ctx_slot,
                    shared_in_tls: false,
                },
                tally: crate::counters::get().tally(&k.name),
                param_sizes: k.params.iter().map(|p| p.0).collect(),
                param_offsets: k.params.iter().map(|p| p.1).collect(),
                param_bytes: k.params.iter().map(|p| p.0 + p.1).max().unwrap_or(0),
                attrs: from_image.and_then(|i| i.attrs),
                launch_bounds: (k.max_threads, k.min_blocks),
                smem_prefix: k.static_smem,
                refused: k.refused.as_ref().map(|(code, message)| {
                    std::sync::Arc::new(super::Refusal { code: *code, message: message.clone(), told: false.into() })
                }),
            }
        })
        .collect();
    // A kernel the device's driver cannot compile fails the load under eager loading
    // (CUDA_MODULE_LOADING=EAGER, measured on an H200); under the default lazy loading
    // the module loads and cuModuleGetFunction of that kernel fails.
    if let Some(r) = kernels.iter().find_map(|k| k.refused.clone()) {
        if crate::config::get().is_ok_and(|c| c.eager_loading) {
            crate::log_error!("module ptx: {} (CUDA_MODULE_LOADING=EAGER: the load fails)", r.message);
            release_instance(&lib_path);
            return Err(r.code);
        }
    }
    let globals = if t.globals.is_empty() {
        Vec::new()
    } else {
        // SAFETY: as above, the globals' array.
        let raw = unsafe { std::slice::from_raw_parts(d.globals, d.global_count as usize) };
        t.globals
            .iter()
            .zip(raw)
            .map(|(g, r)| {
                // SAFETY: the record's name is a NUL-terminated literal of the library.
                let name = unsafe { c_str(r.name) };
                (name.clone(), name, r.address as u64, g.size)
            })
            .collect()
    };
    let inexact: std::collections::BTreeSet<&String> = t.kernels.iter().flat_map(|k| k.inexact_sfu.iter()).collect();
    let record = simtwin_abi::counters::ModuleRecord {
        image: label,
        mode: "ptx".into(),
        library: lib_path.display().to_string(),
        kernels: kernels.len() as u64,
        device_exact: inexact.is_empty(),
        notes,
        translate_us: (built.translate_ms * 1e3) as u64,
        compile_us: (built.compile_ms * 1e3) as u64,
        cached: built.cached,
    };
    crate::log_info!(
        "PTX mode: {} kernels, {} in {:.1} ms, {} ({})",
        kernels.len(),
        if built.indexed { "translation read from the cache's index" } else { "translated" },
        built.translate_ms,
        if built.cached { "compiled library from the cache".to_string() } else { format!("compiled in {:.0} ms", built.compile_ms) },
        lib_path.display()
    );
    Ok(prepared(kernels, globals, lib, lib_path, record))
}

/// The loop path's runner of each kernel (simtwin-ptx `uniform`), where the kernel takes
/// it and EMU_CUDA_THREAD_LOOPS is not `off`.
fn loop_runners(lib: &libloading::Library, n: usize) -> Vec<Option<abi::RunFn>> {
    let off = crate::config::get().map(|c| c.thread_loops == ThreadLoops::Off).unwrap_or(false);
    if off {
        return vec![None; n];
    }
    // SAFETY: the translator's libraries export this function with this signature (no
    // arguments, a static table of `n` runner pointers or nulls).
    let get = unsafe { lib.get::<unsafe extern "C" fn() -> *const *const c_void>(b"simtwin_ptx_loops_v1\0") };
    let table = match get {
        // SAFETY: as above; it only returns the table's address.
        Ok(f) => unsafe { f() },
        Err(_) => std::ptr::null(),
    };
    if table.is_null() {
        return vec![None; n];
    }
    // SAFETY: the table holds one entry per kernel, in descriptor order.
    let raw = unsafe { std::slice::from_raw_parts(table, n) };
    raw.iter()
        .map(|&p| {
            // SAFETY: a non-null entry is a runner with the ABI's `run` signature.
            (!p.is_null()).then(|| unsafe { std::mem::transmute::<*const c_void, abi::RunFn>(p) })
        })
        .collect()
}

/// Which path each kernel's threads take and why: the module record's notes (which the
/// load logs at info); with EMU_CUDA_THREAD_LOOPS=on, a kernel that keeps fibers is
/// also a warning.
fn thread_paths(label: &str, kernels: &[simtwin_ptx::KernelInfo], runners: &[Option<abi::RunFn>]) -> Vec<String> {
    let mode = crate::config::get().map(|c| c.thread_loops).unwrap_or(ThreadLoops::Auto);
    let mut out = Vec::new();
    for (k, r) in kernels.iter().zip(runners) {
        let path = match (&k.threads, r) {
            (Path::Loops, Some(_)) => "loops over threads",
            (Path::Loops, None) => "fibers (EMU_CUDA_THREAD_LOOPS=off)",
            (Path::Plain, _) => "one after another",
            (Path::Fibers, _) => "fibers",
        };
        let line = format!("threads of {}: {path}: {}", k.name, k.threads_why);
        if mode == ThreadLoops::On && k.threads == Path::Fibers {
            crate::log_warn!("module {label}: {line}");
        }
        out.push(line);
    }
    out
}

fn jit_error(label: &str, e: JitError) -> CUresult {
    match &e {
        JitError::Translate(simtwin_ptx::Error::Unsupported { instr, .. }) => {
            crate::counters::get().unsupported(&format!("PTX:{instr}"));
            crate::log_error!("module {label}: {e}");
            CUDA_ERROR_NOT_SUPPORTED
        }
        JitError::Translate(simtwin_ptx::Error::DeviceRefuses { code, .. }) => {
            crate::log_error!("module {label}: {e}");
            *code as CUresult
        }
        JitError::Translate(_) => {
            crate::log_error!("module {label}: invalid PTX: {e}");
            CUDA_ERROR_INVALID_PTX
        }
        JitError::NoCompiler(_) => {
            crate::log_error!("module {label}: {e}");
            CUDA_ERROR_JIT_COMPILER_NOT_FOUND
        }
        JitError::Compile(_) | JitError::Io(_) => {
            crate::log_error!("module {label}: PTX mode could not build the kernels: {e}");
            CUDA_ERROR_NOT_SUPPORTED
        }
    }
}
