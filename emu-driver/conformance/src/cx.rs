//! What every case runs on: the case context (the library's entry points, the options,
//! the codes and values recorded) and the macros that call an entry point and record
//! its answer.

use crate::api::{Api, P, R};
use crate::opts::Opts;
use std::ffi::{c_void, CString};
use std::ptr::null_mut;

/// Code pushed when an entry point is not exported.
pub const MISSING: R = i32::MIN;

/// A case's body: records codes and values into the context; Err ends it with a reason.
pub type Run = Box<dyn Fn(&mut Cx) -> Result<(), String>>;

pub struct Case {
    pub name: String,
    pub run: Run,
}

pub struct Cx<'a> {
    pub api: Api,
    pub o: &'a Opts,
    /// The case's name (sub-lines are `name.sub: ...`).
    pub(crate) name: String,
    pub(crate) codes: Vec<String>,
    pub(crate) vals: Vec<String>,
    /// Further result lines of this case (`name.sub: ...`), printed after its main line.
    pub(crate) subs: Vec<String>,
    /// Keeps module images alive for as long as the case runs.
    pub(crate) images: Vec<Vec<u8>>,
}

/// Calls an entry point by its table name; MISSING when not exported.
macro_rules! call {
    ($cx:expr, $f:ident ( $($a:expr),* $(,)? )) => {
        match $cx.api.$f {
            // SAFETY: arguments follow the entry point's C signature (see api.rs); the
            // cases pass valid out-pointers unless the case is about invalid ones.
            Some(f) => unsafe { f($($a),*) },
            None => {
                $cx.missing(stringify!($f));
                $crate::cx::MISSING
            }
        }
    };
}

/// Calls and records the code.
macro_rules! rec {
    ($cx:expr, $f:ident ( $($a:expr),* $(,)? )) => {{
        let r = call!($cx, $f($($a),*));
        $cx.code(r);
        r
    }};
}

/// Calls a setup step; a failure ends the case with `SETUP step=code`.
macro_rules! setup {
    ($cx:expr, $f:ident ( $($a:expr),* $(,)? )) => {{
        let r = call!($cx, $f($($a),*));
        if r != 0 {
            return Err(format!("SETUP {}={}", stringify!($f), $crate::cx::fmt_code(r)));
        }
    }};
}

pub fn fmt_code(r: R) -> String {
    if r == MISSING {
        "MISSING".into()
    } else {
        r.to_string()
    }
}

impl<'a> Cx<'a> {
    pub(crate) fn code(&mut self, r: R) {
        self.codes.push(fmt_code(r));
    }
    pub(crate) fn missing(&mut self, name: &str) {
        self.vals.push(format!("missing={name}"));
    }
    pub(crate) fn val(&mut self, k: &str, v: impl std::fmt::Display) {
        self.vals.push(format!("{k}={v}"));
    }
    /// Adds the line `name.sub: text` (for results too long for one line).
    pub(crate) fn sub(&mut self, sub: &str, text: impl std::fmt::Display) {
        self.subs.push(format!("{}.{sub}: {text}", self.name));
    }
    pub(crate) fn line(&self, name: &str) -> String {
        let mut s = format!("{name}: {}", self.codes.join(","));
        for v in &self.vals {
            s.push(' ');
            s.push_str(v);
        }
        s
    }

    /// cuInit, device 0, primary context retained and made current.
    pub(crate) fn primary(&mut self) -> Result<P, String> {
        setup!(self, cuInit(0));
        let mut dev = 0;
        setup!(self, cuDeviceGet(&mut dev, 0));
        let mut ctx: P = null_mut();
        setup!(self, cuDevicePrimaryCtxRetain(&mut ctx, dev));
        setup!(self, cuCtxSetCurrent(ctx));
        Ok(ctx)
    }

    /// cuInit, device 0, a context from cuCtxCreate_v2 (current).
    pub(crate) fn created(&mut self) -> Result<P, String> {
        setup!(self, cuInit(0));
        let mut dev = 0;
        setup!(self, cuDeviceGet(&mut dev, 0));
        let mut ctx: P = null_mut();
        setup!(self, cuCtxCreate_v2(&mut ctx, 0, dev));
        Ok(ctx)
    }

    pub(crate) fn read_file(&self, path: Option<&String>, what: &str) -> Result<Vec<u8>, String> {
        let p = path.ok_or_else(|| format!("SETUP needs {what}"))?;
        let mut v = std::fs::read(p).map_err(|e| format!("SETUP read {p}: {e}"))?;
        // Images carry no length; a NUL tail keeps a reader that runs on harmlessly bounded.
        v.extend_from_slice(&[0u8; 16]);
        Ok(v)
    }

    /// Loads the good fatbin (after primary()/created()).
    pub(crate) fn module(&mut self) -> Result<P, String> {
        let img = self.read_file(self.o.fatbin.as_ref(), "--fatbin")?;
        self.images.push(img);
        let ptr = self.images.last().unwrap().as_ptr() as *const c_void;
        let mut m: P = null_mut();
        setup!(self, cuModuleLoadData(&mut m, ptr));
        Ok(m)
    }

    pub(crate) fn function(&mut self, m: P, name: &str) -> Result<P, String> {
        let c = CString::new(name).unwrap();
        let mut f: P = null_mut();
        let r = call!(self, cuModuleGetFunction(&mut f, m, c.as_ptr()));
        if r != 0 {
            return Err(format!("SETUP cuModuleGetFunction({name})={}", fmt_code(r)));
        }
        Ok(f)
    }

    pub(crate) fn alloc(&mut self, bytes: usize) -> Result<u64, String> {
        let mut d = 0u64;
        setup!(self, cuMemAlloc_v2(&mut d, bytes));
        Ok(d)
    }

    /// Launch on the default stream with kernelParams; records the launch code.
    pub(crate) fn launch(&mut self, f: P, grid: [u32; 3], block: [u32; 3], shmem: u32, params: &mut [P]) -> R {
        rec!(
            self,
            cuLaunchKernel(
                f,
                grid[0],
                grid[1],
                grid[2],
                block[0],
                block[1],
                block[2],
                shmem,
                null_mut(),
                if params.is_empty() { null_mut() } else { params.as_mut_ptr() },
                null_mut()
            )
        )
    }

    pub(crate) fn dtoh_u32(&mut self, d: u64, n: usize) -> Result<Vec<u32>, String> {
        let mut v = vec![0u32; n];
        setup!(self, cuMemcpyDtoH_v2(v.as_mut_ptr() as P, d, n * 4));
        Ok(v)
    }
}

/// A pointer to any value, as an out-parameter.
pub fn pp<T>(x: &mut T) -> P {
    x as *mut T as P
}

/// The value fill_hash writes for index `i`.
pub fn hash(i: u32) -> u32 {
    i.wrapping_mul(2654435761)
}
