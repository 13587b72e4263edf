//! Initialisation, the thread's current device, and its primary context.
//!
//! As NVIDIA's runtime does, each device has one context, its primary context
//! (cuDevicePrimaryCtxRetain, retained once per process), made current on a thread lazily
//! by the first call that needs a context. A context the program made current itself
//! through the driver API is used as it is (runtime and driver API interoperate).
//! cudaDeviceReset releases and resets the primary context; a global generation count
//! tells every thread to bind the device's new primary context at its next call.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::driver as d;
use crate::error::{self, check, Res};

/// cuInit(0), once; its answer for every later call.
pub fn init() -> Res<()> {
    static INIT: OnceLock<error::Error> = OnceLock::new();
    match *INIT.get_or_init(|| error::from_driver(d::cuInit(0))) {
        error::SUCCESS => Ok(()),
        e => Err(e),
    }
}

/// The number of devices (cudaErrorNoDevice for none).
pub fn device_count() -> Res<i32> {
    init()?;
    let mut n = 0;
    check(d::cuDeviceGetCount(&mut n))?;
    if n == 0 {
        return Err(error::NO_DEVICE);
    }
    Ok(n)
}

/// cudaErrorInvalidDevice unless `dev` is an ordinal of this machine.
pub fn valid_device(dev: i32) -> Res<()> {
    let n = device_count()?;
    if dev < 0 || dev >= n {
        return Err(error::INVALID_DEVICE);
    }
    Ok(())
}

thread_local! {
    static DEVICE: Cell<i32> = const { Cell::new(0) };
    /// The context this thread made current, and the generation it belongs to.
    static BOUND: Cell<(usize, u64)> = const { Cell::new((0, 0)) };
}

static GENERATION: AtomicU64 = AtomicU64::new(1);

fn primaries() -> MutexGuard<'static, HashMap<i32, usize>> {
    static P: OnceLock<Mutex<HashMap<i32, usize>>> = OnceLock::new();
    P.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

/// The device's primary context, retained on first use.
pub fn primary(dev: i32) -> Res<usize> {
    let mut p = primaries();
    if let Some(&c) = p.get(&dev) {
        return Ok(c);
    }
    let mut c = std::ptr::null_mut();
    check(d::cuDevicePrimaryCtxRetain(&mut c, dev))?;
    p.insert(dev, c as usize);
    Ok(c as usize)
}

/// The thread's current device (cudaGetDevice).
pub fn device() -> i32 {
    DEVICE.with(Cell::get)
}

/// cudaSetDevice: the thread's device becomes `dev`, its primary context current.
pub fn set_device(dev: i32) -> Res<()> {
    valid_device(dev)?;
    DEVICE.with(|c| c.set(dev));
    bind(dev)
}

fn bind(dev: i32) -> Res<()> {
    let c = primary(dev)?;
    check(d::cuCtxSetCurrent(c as d::Handle))?;
    BOUND.with(|b| b.set((c, GENERATION.load(Ordering::Acquire))));
    Ok(())
}

/// Makes sure a context is current on this thread (the thread's device's primary context
/// unless the program made one current itself) and answers its device.
pub fn ctx() -> Res<i32> {
    init()?;
    let mut cur = std::ptr::null_mut();
    check(d::cuCtxGetCurrent(&mut cur))?;
    let (bound, gen) = BOUND.with(Cell::get);
    let fresh = gen == GENERATION.load(Ordering::Acquire);
    if !cur.is_null() && (cur as usize != bound || fresh) {
        if cur as usize == bound {
            return Ok(device());
        }
        // A context the program made current through the driver API.
        let mut dev = 0;
        check(d::cuCtxGetDevice(&mut dev, std::ptr::null_mut()))?;
        return Ok(dev);
    }
    let dev = device();
    valid_device(dev)?;
    bind(dev)?;
    Ok(dev)
}

/// cudaDeviceReset's part here: the current device's primary context is released and
/// reset; every thread binds the new one at its next call. Answers the device.
pub fn reset_primary() -> Res<i32> {
    init()?;
    let dev = device();
    valid_device(dev)?;
    if primaries().remove(&dev).is_some() {
        // Best effort: the reset below is what matters.
        let _ = d::cuDevicePrimaryCtxRelease(dev);
    }
    let r = check(d::cuDevicePrimaryCtxReset(dev));
    GENERATION.fetch_add(1, Ordering::AcqRel);
    let _ = d::cuCtxSetCurrent(std::ptr::null_mut());
    BOUND.with(|b| b.set((0, 0)));
    r.map(|()| dev)
}
