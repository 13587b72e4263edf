//! The JIT linker: cuLinkCreate, cuLinkAddData/AddFile, cuLinkComplete, cuLinkDestroy.
//!
//! PTX inputs (plain PTX, or the PTX of a fatbin) are checked as a real driver JIT-compiles
//! them at cuLinkAddData (invalid PTX: CUDA_ERROR_INVALID_PTX, a version newer than the
//! profile's: CUDA_ERROR_UNSUPPORTED_PTX_VERSION, with the message in the program's error
//! log buffer) and kept; cuLinkComplete hands back a linked image (`image::linked`) that
//! cuModuleLoadData runs in PTX mode, the modules translated and linked together (externs
//! bound across them). Inputs without PTX (cubins, objects, NVVM IR) cannot be run by PTX
//! mode: CUDA_ERROR_NOT_SUPPORTED, counted as `cuLinkAddData:<kind>`. A library input (an
//! ar archive such as libcudadevrt.a) follows static-library semantics at cuLinkComplete
//! (`simtwin_abi::devrt`): unused when the PTX leaves nothing undefined; libcudadevrt.a's
//! cooperative-groups entry points from simtwin's PTX; any other symbol only an archive's
//! SASS could define fails the link (CUDA_ERROR_INVALID_IMAGE), naming it and the archive.

use crate::boundary::{CuResult, HostBytes, JitOptions, Out, Text};
use crate::cu::*;
use crate::state::{driver, handle, handle_id, LinkState, Tag};

// CUjitInputType (abi/src/cuda.rs), by short names.
use crate::cu::{
    CU_JIT_INPUT_CUBIN as INPUT_CUBIN, CU_JIT_INPUT_FATBINARY as INPUT_FATBINARY, CU_JIT_INPUT_LIBRARY as INPUT_LIBRARY,
    CU_JIT_INPUT_NVVM as INPUT_NVVM, CU_JIT_INPUT_OBJECT as INPUT_OBJECT, CU_JIT_INPUT_PTX as INPUT_PTX,
};

pub fn link_create(opts: JitOptions, state: Out<CUlinkState>) -> CuResult {
    opts.check()?;
    state.required()?;
    let mut d = driver()?;
    d.current()?;
    let id = d.new_id();
    d.links.insert(id, LinkState { opt_level: opts.opt_level_given(), ..LinkState::default() });
    state.set(handle(Tag::Link, id))
}

fn fail(opts: &JitOptions, code: CUresult, msg: String) -> CuResult {
    crate::log_error!("{msg}");
    opts.write_log(CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, &msg);
    Err(code)
}

/// The PTX modules an input holds, checked.
fn ptx_of(kind: u32, bytes: &[u8], name: &str, opts: &JitOptions) -> CuResult<Vec<String>> {
    let (target, max_ptx) = {
        let d = driver()?;
        (crate::image::Target { sm: d.profile.sm() }, d.profile.max_ptx_version)
    };
    let texts = match kind {
        INPUT_PTX => {
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            match std::str::from_utf8(&bytes[..end]) {
                Ok(t) => vec![t.to_string()],
                Err(_) => {
                    return fail(opts, CUDA_ERROR_INVALID_PTX, format!("cuLinkAddData: {name}: PTX input is not UTF-8 text"))
                        .map(|_| Vec::new())
                }
            }
        }
        INPUT_FATBINARY => match crate::image::parse_bytes(bytes, target) {
            Ok(img) if !img.ptx.is_empty() => img.ptx,
            Ok(img) => {
                crate::counters::get().unsupported("cuLinkAddData:FATBINARY-without-PTX");
                return fail(opts, CUDA_ERROR_NOT_SUPPORTED, format!("cuLinkAddData: {name}: the fatbin holds no PTX the device accepts ({}): simtwin links PTX; embed it with -gencode arch=compute_90,code=compute_90", img.chosen)).map(|_| Vec::new());
            }
            Err(e) => return fail(opts, e.cu_result(), format!("cuLinkAddData: {name}: {e}")).map(|_| Vec::new()),
        },
        INPUT_CUBIN | INPUT_OBJECT | INPUT_NVVM => {
            let what = ["CUBIN", "PTX", "FATBINARY", "OBJECT", "LIBRARY", "NVVM"][kind as usize];
            crate::counters::get().unsupported(&format!("cuLinkAddData:{what}"));
            return fail(opts, CUDA_ERROR_NOT_SUPPORTED, format!("cuLinkAddData: {name}: a {what} input holds no PTX, and simtwin's JIT linker links PTX (PTX mode runs PTX); give the PTX (or a fatbin carrying it) instead")).map(|_| Vec::new());
        }
        _ => return Err(CUDA_ERROR_INVALID_VALUE),
    };
    for t in &texts {
        let m = match simtwin_ptx::parse::parse(t) {
            Ok(m) => m,
            Err(e) => return fail(opts, CUDA_ERROR_INVALID_PTX, format!("cuLinkAddData: {name}: {e}")).map(|_| Vec::new()),
        };
        if m.version > max_ptx {
            return fail(
                opts,
                CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
                format!(
                    "cuLinkAddData: {name}: PTX .version {}.{} is newer than this driver's ISA {}.{}",
                    m.version.0, m.version.1, max_ptx.0, max_ptx.1
                ),
            )
            .map(|_| Vec::new());
        }
    }
    Ok(texts)
}

fn add(state: CUlinkState, kind: u32, bytes: CuResult<Vec<u8>>, name: &str, opts: &JitOptions) -> CuResult {
    opts.check()?;
    let id = handle_id(Tag::Link, state).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    if !driver()?.links.contains_key(&id) {
        return Err(CUDA_ERROR_INVALID_HANDLE);
    }
    let bytes = bytes?;
    if kind == INPUT_LIBRARY {
        let a = match simtwin_abi::devrt::Archive::read(name, &bytes) {
            Ok(a) => a,
            Err(e) => return fail(opts, CUDA_ERROR_INVALID_IMAGE, format!("cuLinkAddData: {e}")),
        };
        let n = a.members.len();
        let mut d = driver()?;
        let st = d.links.get_mut(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        st.archives.push(a);
        st.image = None;
        let line = format!("simtwin: {name}: library of {n} member(s) added; it is searched at cuLinkComplete");
        opts.write_log(CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, &line);
        return Ok(());
    }
    let texts = ptx_of(kind, &bytes, name, opts)?;
    let n = texts.len();
    let mut d = driver()?;
    let st = d.links.get_mut(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    st.modules.extend(texts);
    st.image = None;
    opts.write_log(CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, &format!("simtwin: {name}: {n} PTX module(s) added"));
    Ok(())
}

pub fn link_add_data(state: CUlinkState, kind: u32, data: HostBytes, name: Text, opts: JitOptions) -> CuResult {
    let name = name.get().unwrap_or_else(|_| "(unnamed input)".into());
    add(state, kind, data.get(), &name, &opts)
}

pub fn link_add_file(state: CUlinkState, kind: u32, path: Text, opts: JitOptions) -> CuResult {
    let path = path.get()?;
    let bytes = std::fs::read(&path).map_err(|_| CUDA_ERROR_FILE_NOT_FOUND);
    add(state, kind, bytes, &path, &opts)
}

pub fn link_complete(state: CUlinkState, image: Out<*mut std::ffi::c_void>, size: Out<usize>) -> CuResult {
    image.required()?;
    let mut d = driver()?;
    let id = handle_id(Tag::Link, state).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    let st = d.links.get_mut(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    if st.modules.is_empty() {
        crate::log_error!("cuLinkComplete: nothing was added to the link");
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if st.image.is_none() {
        // Archives contribute only what the PTX still leaves undefined (static-library
        // semantics, simtwin_abi::devrt).
        let mut modules = st.modules.clone();
        match simtwin_abi::devrt::resolve(&st.modules, &st.archives) {
            Ok((add, notes)) => {
                modules.extend(add);
                for n in notes {
                    crate::log_info!("cuLinkComplete: {n}");
                }
            }
            Err(e) => {
                crate::log_error!("cuLinkComplete: {e}");
                return Err(CUDA_ERROR_INVALID_IMAGE);
            }
        }
        st.image = Some(crate::image::linked::build(&modules, st.opt_level));
    }
    let img = st.image.as_mut().expect("built above");
    let (p, n) = (img.as_mut_ptr() as *mut std::ffi::c_void, img.len());
    image.set(p)?;
    size.set_if_asked(n)
}

pub fn link_destroy(state: CUlinkState) -> CuResult {
    let mut d = driver()?;
    let id = handle_id(Tag::Link, state).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    d.links.remove(&id).map(|_| ()).ok_or(CUDA_ERROR_INVALID_HANDLE)
}
