//! What nvcc's generated code registers at start-up (fatbins, kernels, device and
//! `__constant__` variables, managed variables), and the driver modules loaded from it.
//!
//! Each translation unit's constructor calls `__cudaRegisterFatBinary` with its fatbin,
//! then `__cudaRegisterFunction` / `__cudaRegisterVar` / `__cudaRegisterManagedVar` for
//! each entity, keyed by the host address the program later names (the kernel's stub, the
//! host shadow of a variable). Nothing reaches the driver then: a fatbin becomes a module
//! on a device (cuModuleLoadData of the fatbin itself) at the first launch or symbol use on
//! that device, so a program that never launches never loads, and the driver is not
//! initialised inside a constructor.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::driver as d;
use crate::error::{self, check, Res};
use crate::state;

struct Fatbin {
    /// Address of the fatbin (the wrapper's `data`), 0 when the wrapper was not one we
    /// can load.
    image: usize,
    /// For relocatable device code (`-rdc`): each translation unit's fatbin (address,
    /// size), linked by the driver's JIT linker when the device-linked image does not load.
    prelinked: Vec<(usize, usize)>,
    /// Loaded modules by device.
    modules: HashMap<i32, usize>,
}

struct Function {
    fatbin: usize,
    name: CString,
    by_device: HashMap<i32, usize>,
}

struct Var {
    fatbin: usize,
    name: CString,
    size: usize,
    /// For a managed variable, the address of the host pointer the generated code reads
    /// the variable through (set at load).
    managed_slot: Option<usize>,
    by_device: HashMap<i32, u64>,
}

#[derive(Default)]
struct Registry {
    fatbins: Vec<Option<Fatbin>>,
    /// The handle `__cudaRegisterFatBinary` returned -> index in `fatbins`.
    handles: HashMap<usize, usize>,
    functions: HashMap<usize, Function>,
    vars: HashMap<usize, Var>,
}

fn registry() -> MutexGuard<'static, Registry> {
    static R: OnceLock<Mutex<Registry>> = OnceLock::new();
    R.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

/// Registers a fatbin at `image` (0: unloadable) under the handle `handle`, with the
/// translation units' own fatbins when the program was built with `-rdc`.
pub fn add_fatbin(handle: usize, image: usize, prelinked: Vec<(usize, usize)>) {
    let mut r = registry();
    let i = r.fatbins.len();
    r.fatbins.push(Some(Fatbin { image, prelinked, modules: HashMap::new() }));
    r.handles.insert(handle, i);
}

/// Unregisters a fatbin: its modules are unloaded, its entities forgotten.
pub fn remove_fatbin(handle: usize) {
    let mut r = registry();
    let Some(i) = r.handles.remove(&handle) else { return };
    if let Some(f) = r.fatbins[i].take() {
        for (_, m) in f.modules {
            let _ = d::cuModuleUnload(m as d::Handle);
        }
    }
    r.functions.retain(|_, f| f.fatbin != i);
    r.vars.retain(|_, v| v.fatbin != i);
}

fn fatbin_index(r: &Registry, handle: usize) -> Option<usize> {
    r.handles.get(&handle).copied()
}

/// `__cudaRegisterFunction`: the kernel `name` of the fatbin, launched by `host_fn`.
pub fn add_function(handle: usize, host_fn: usize, name: CString) {
    let mut r = registry();
    if let Some(fatbin) = fatbin_index(&r, handle) {
        r.functions.insert(host_fn, Function { fatbin, name, by_device: HashMap::new() });
    }
}

/// `__cudaRegisterVar` / `__cudaRegisterManagedVar`.
pub fn add_var(handle: usize, host_var: usize, name: CString, size: usize, managed_slot: Option<usize>) {
    let mut r = registry();
    if let Some(fatbin) = fatbin_index(&r, handle) {
        r.vars.insert(host_var, Var { fatbin, name, size, managed_slot, by_device: HashMap::new() });
    }
}

/// The fatbin's module on `dev`, loading it (in the device's current context) if needed;
/// managed variables' host pointers are set when it loads.
fn module(r: &mut Registry, fatbin: usize, dev: i32) -> Res<usize> {
    let f = r.fatbins.get_mut(fatbin).and_then(Option::as_mut).ok_or(error::INVALID_DEVICE_FUNCTION)?;
    if let Some(&m) = f.modules.get(&dev) {
        return Ok(m);
    }
    if f.image == 0 {
        return Err(error::from_driver(200));
    }
    // `-rdc`: the device-linked image holds SASS only (nvlink's output), which the emulated
    // driver cannot run; the translation units' fatbins carry PTX, so they are linked with
    // the driver's JIT linker first (on NVIDIA's driver that links their relocatable SASS),
    // and the device-linked image is the fallback.
    let linked = if f.prelinked.is_empty() { None } else { link(&f.prelinked).ok() };
    let m = match linked {
        Some(m) => m as d::Handle,
        None => {
            let mut m = std::ptr::null_mut();
            check(d::cuModuleLoadData(&mut m, f.image as *const std::ffi::c_void))?;
            m
        }
    };
    f.modules.insert(dev, m as usize);
    for v in r.vars.values_mut().filter(|v| v.fatbin == fatbin) {
        let Some(slot) = v.managed_slot else { continue };
        let (mut addr, mut size) = (0u64, 0usize);
        if d::cuModuleGetGlobal(&mut addr, &mut size, m, v.name.as_ptr()) == 0 {
            v.by_device.insert(dev, addr);
            d::store_host_pointer(slot, addr as usize);
        }
    }
    Ok(m as usize)
}

/// Links the translation units' fatbins with the driver's JIT linker and loads the result.
fn link(parts: &[(usize, usize)]) -> Res<usize> {
    const INPUT_FATBINARY: u32 = 2;
    let mut state = std::ptr::null_mut();
    let null: *mut std::ffi::c_void = std::ptr::null_mut();
    check(d::cuLinkCreate(0, null.cast(), null.cast(), &mut state))?;
    let result = (|| {
        for &(addr, size) in parts {
            check(d::cuLinkAddData(state, INPUT_FATBINARY, addr as *mut _, size, c"rdc".as_ptr(), 0, null.cast(), null.cast()))?;
        }
        let (mut image, mut size) = (std::ptr::null_mut(), 0usize);
        check(d::cuLinkComplete(state, &mut image, &mut size))?;
        let mut m = std::ptr::null_mut();
        check(d::cuModuleLoadData(&mut m, image))?;
        Ok(m as usize)
    })();
    let _ = d::cuLinkDestroy(state);
    result
}

/// Whether `host_fn` is a registered kernel.
pub fn is_function(host_fn: usize) -> bool {
    registry().functions.contains_key(&host_fn)
}

/// The driver function of the kernel whose host stub is `host_fn`, on the current
/// context's device (cudaErrorInvalidResourceHandle for an address nvcc did not register,
/// as NVIDIA's runtime answers on an H100: reports/reference/h200/runtime/).
pub fn function(host_fn: usize) -> Res<d::Handle> {
    let dev = state::ctx()?;
    let mut r = registry();
    let f = r.functions.get(&host_fn).ok_or(error::INVALID_RESOURCE_HANDLE)?;
    if let Some(&h) = f.by_device.get(&dev) {
        return Ok(h as d::Handle);
    }
    let (fatbin, name) = (f.fatbin, f.name.clone());
    let m = module(&mut r, fatbin, dev)?;
    let mut h = std::ptr::null_mut();
    check(d::cuModuleGetFunction(&mut h, m as d::Handle, name.as_ptr())).map_err(|e| {
        if e == error::from_driver(500) {
            error::INVALID_DEVICE_FUNCTION
        } else {
            e
        }
    })?;
    if let Some(f) = r.functions.get_mut(&host_fn) {
        f.by_device.insert(dev, h as usize);
    }
    Ok(h)
}

/// The device address and size of the variable whose host shadow is at `host_var`, on
/// the current context's device (cudaErrorInvalidSymbol for an unregistered address).
pub fn symbol(host_var: usize) -> Res<(u64, usize)> {
    let dev = state::ctx()?;
    let mut r = registry();
    let v = r.vars.get(&host_var).ok_or(error::INVALID_SYMBOL)?;
    if let Some(&a) = v.by_device.get(&dev) {
        return Ok((a, v.size));
    }
    let (fatbin, name) = (v.fatbin, v.name.clone());
    let m = module(&mut r, fatbin, dev)?;
    let (mut addr, mut size) = (0u64, 0usize);
    check(d::cuModuleGetGlobal(&mut addr, &mut size, m as d::Handle, name.as_ptr())).map_err(|e| {
        if e == error::from_driver(500) {
            error::INVALID_SYMBOL
        } else {
            e
        }
    })?;
    if let Some(v) = r.vars.get_mut(&host_var) {
        v.by_device.insert(dev, addr);
    }
    Ok((addr, size))
}

/// `__cudaInitModule`: loads the fatbin's module on the current device (setting its
/// managed variables' pointers).
pub fn init_module(handle: usize) -> Res<()> {
    let dev = state::ctx()?;
    let mut r = registry();
    let i = fatbin_index(&r, handle).ok_or(error::INVALID_VALUE)?;
    module(&mut r, i, dev).map(|_| ())
}

/// Forgets `dev`'s modules and handles (cudaDeviceReset destroyed them).
pub fn forget_device(dev: i32) {
    let mut r = registry();
    for f in r.fatbins.iter_mut().flatten() {
        f.modules.remove(&dev);
    }
    for f in r.functions.values_mut() {
        f.by_device.remove(&dev);
    }
    for v in r.vars.values_mut() {
        v.by_device.remove(&dev);
    }
}
