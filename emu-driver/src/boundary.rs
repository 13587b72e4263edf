//! The C boundary: typed views of the raw arguments a C caller passes to an entry point.
//!
//! The export table (`exports.rs`) is the only place that builds these values, each from
//! the raw argument of its C signature, under the driver API's contract (out-pointers
//! are null or writable, strings NUL-terminated, arrays as long as their count, callbacks
//! callable). The `api/` implementations receive them and stay safe Rust: every unsafe
//! read or write of caller memory is a method here, next to the contract it relies on.

use crate::cu::*;
use std::ffi::{c_char, c_void, CStr};

/// Result of a driver call: `Err` holds the CUresult.
pub type CuResult<T = ()> = Result<T, CUresult>;

/// An out-parameter (`T *`): null-checked, written unaligned.
pub struct Out<T> {
    p: *mut T,
}

/// # Safety
/// `p` is null or valid for an (unaligned) write of `T` for the duration of the call.
pub unsafe fn out<T>(p: *mut T) -> Out<T> {
    Out { p }
}

impl<T> Out<T> {
    /// Whether the caller passed null.
    pub fn is_null(&self) -> bool {
        self.p.is_null()
    }
    /// Writes `v`; a null pointer is CUDA_ERROR_INVALID_VALUE (as the real driver).
    pub fn set(self, v: T) -> CuResult {
        if self.p.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: non-null, writable per the contract of `out`.
        unsafe { self.p.write_unaligned(v) };
        Ok(())
    }
    /// Writes `v` when the caller asked for it (an optional out-parameter).
    pub fn set_if_asked(self, v: T) -> CuResult {
        if self.p.is_null() {
            return Ok(());
        }
        self.set(v)
    }
    /// Fails with CUDA_ERROR_INVALID_VALUE when null (checked before any work is done).
    pub fn required(&self) -> CuResult {
        if self.p.is_null() {
            Err(CUDA_ERROR_INVALID_VALUE)
        } else {
            Ok(())
        }
    }
}

/// An out-parameter whose type depends on another argument (attribute queries): the
/// value written is chosen by the callee.
pub struct OutAny {
    p: *mut c_void,
}

/// # Safety
/// `p` is null or valid for a write of the type the entry point's attribute selects.
pub unsafe fn out_any(p: *mut c_void) -> OutAny {
    OutAny { p }
}

impl OutAny {
    /// Fails with CUDA_ERROR_INVALID_VALUE when null.
    pub fn required(&self) -> CuResult {
        if self.p.is_null() {
            Err(CUDA_ERROR_INVALID_VALUE)
        } else {
            Ok(())
        }
    }
    /// Writes a value of the attribute's type.
    pub fn set<T: Copy>(&self, v: T) -> CuResult {
        self.required()?;
        // SAFETY: per the contract of `out_any`: the attribute selects T.
        unsafe { (self.p as *mut T).write_unaligned(v) };
        Ok(())
    }
    /// Reads a value of the attribute's type (set-attribute calls pass values this way).
    pub fn get<T: Copy>(&self) -> CuResult<T> {
        self.required()?;
        // SAFETY: per the contract of `out_any`, the pointer is readable as T too.
        Ok(unsafe { (self.p as *const T).read_unaligned() })
    }
}

/// A caller's character buffer of `len` bytes (device name, PCI bus id).
pub struct OutText {
    p: *mut c_char,
    len: i32,
}

/// # Safety
/// `p` is null or valid for writes of `len` bytes.
pub unsafe fn out_text(p: *mut c_char, len: i32) -> OutText {
    OutText { p, len }
}

impl OutText {
    /// Writes `s` truncated to the buffer, NUL-terminated; null or len <= 0 is
    /// CUDA_ERROR_INVALID_VALUE.
    pub fn set(self, s: &str) -> CuResult {
        if self.p.is_null() || self.len <= 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let n = s.len().min(self.len as usize - 1);
        // SAFETY: the buffer holds `len` > n bytes per the contract of `out_text`.
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr(), self.p as *mut u8, n);
            *self.p.add(n) = 0;
        }
        Ok(())
    }
}

/// A NUL-terminated string argument (null allowed: `get` refuses it).
pub struct Text<'a>(Option<&'a CStr>);

/// # Safety
/// `p` is null or a NUL-terminated string valid for the duration of the call.
pub unsafe fn text<'a>(p: *const c_char) -> Text<'a> {
    // SAFETY: per this function's contract.
    Text(if p.is_null() { None } else { Some(unsafe { CStr::from_ptr(p) }) })
}

impl Text<'_> {
    /// The string; null is CUDA_ERROR_INVALID_VALUE.
    pub fn get(&self) -> CuResult<String> {
        self.0.map(|c| c.to_string_lossy().into_owned()).ok_or(CUDA_ERROR_INVALID_VALUE)
    }
}

/// A struct passed by pointer (`const T *`), copied at the boundary; None for null.
///
/// # Safety
/// `p` is null or valid for an (unaligned) read of `T`.
pub unsafe fn input<T: Copy>(p: *const T) -> Option<T> {
    // SAFETY: per this function's contract.
    (!p.is_null()).then(|| unsafe { p.read_unaligned() })
}

/// An array argument (`const T *` with a count), copied; None for null with n > 0.
///
/// # Safety
/// `p` is null or valid for reads of `n` elements.
pub unsafe fn array<T: Copy>(p: *const T, n: usize) -> Option<Vec<T>> {
    if n == 0 {
        return Some(Vec::new());
    }
    // SAFETY: per this function's contract.
    (!p.is_null()).then(|| (0..n).map(|i| unsafe { p.add(i).read_unaligned() }).collect())
}

/// An array of out-parameters whose types follow another array (cuPointerGetAttributes).
///
/// # Safety
/// `p` is null or valid for reads of `n` pointers, each null or valid as `out_any` says.
pub unsafe fn out_any_array(p: *mut *mut c_void, n: usize) -> Option<Vec<OutAny>> {
    // SAFETY: per this function's contract.
    unsafe { array(p as *const *mut c_void, n) }.map(|v| v.into_iter().map(|q| OutAny { p: q }).collect())
}

/// A host address the caller passes for a copy: pageable or pinned memory of the
/// caller's that the driver reads or writes as the API says. Kept as an address; the
/// copy itself (`memory::copy`) relies on this contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostPtr(pub u64);

/// A host address argument.
pub fn host(p: *const c_void) -> HostPtr {
    HostPtr(p as u64)
}

/// An opaque pointer the driver stores or hands back but never dereferences (user data
/// of callbacks, handles, unused property structs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opaque(pub usize);

/// An opaque pointer argument.
pub fn opaque<T>(p: *const T) -> Opaque {
    Opaque(p as usize)
}

impl Opaque {
    /// Whether it is null.
    pub fn is_null(&self) -> bool {
        self.0 == 0
    }
}

/// A host function enqueued on a stream (cuLaunchHostFunc, cuStreamAddCallback).
#[derive(Clone, Copy)]
pub enum HostCall {
    /// `void fn(void *data)`
    Func(unsafe extern "C" fn(*mut c_void), usize),
    /// `void cb(CUstream, CUresult, void *data)`
    Callback(unsafe extern "C" fn(CUstream, CUresult, *mut c_void), usize, usize),
}

// SAFETY: the user data pointer is handed back to the user's function untouched, on the
// driver's callback thread, as the API specifies.
unsafe impl Send for HostCall {}

/// # Safety
/// `f` (when Some) is callable with `data` as the API describes.
pub unsafe fn host_func(f: CUhostFn, data: *mut c_void) -> Option<HostCall> {
    f.map(|f| HostCall::Func(f, data as usize))
}

/// # Safety
/// `cb` (when Some) is callable with (`stream`, a status, `data`) as the API describes.
pub unsafe fn stream_callback(cb: CUstreamCallback, stream: CUstream, data: *mut c_void) -> Option<HostCall> {
    cb.map(|f| HostCall::Callback(f, stream as usize, data as usize))
}

impl HostCall {
    /// Calls the user's function.
    pub fn call(self) {
        match self {
            // SAFETY: per the contract of `host_func`.
            HostCall::Func(f, d) => unsafe { f(d as *mut c_void) },
            // SAFETY: per the contract of `stream_callback`.
            HostCall::Callback(f, s, d) => unsafe { f(s as CUstream, CUDA_SUCCESS, d as *mut c_void) },
        }
    }
}

/// A kernel's arguments as cuLaunchKernel receives them: `kernelParams` (one pointer per
/// parameter, possibly unaligned values) or `extra` (a key/value list ending in
/// CU_LAUNCH_PARAM_END with a buffer pointer and its size).
pub struct KernelArgs {
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
}

/// # Safety
/// `params` is null or holds one valid pointer per parameter of the kernel launched,
/// each readable for that parameter's size; `extra` is null or a list of pointer pairs
/// ending in CU_LAUNCH_PARAM_END whose buffer entries are readable for the given sizes.
pub unsafe fn kernel_args(params: *mut *mut c_void, extra: *mut *mut c_void) -> KernelArgs {
    KernelArgs { params, extra }
}

/// Most `extra` pairs read before the list is called malformed.
const MAX_EXTRA_PAIRS: usize = 32;

/// A launch's captured argument values: 8-byte aligned words, zeroed where no argument
/// was copied. The storage is recycled: a dropped buffer becomes its OS thread's spare,
/// which the next capture on that thread takes, so a launch allocates nothing once the
/// thread has launched a kernel with as many parameter words.
pub struct ArgBuf(Vec<u64>);

thread_local! {
    /// The storage of the last argument buffer dropped on this OS thread.
    static SPARE_ARGS: std::cell::Cell<Vec<u64>> = const { std::cell::Cell::new(Vec::new()) };
}

impl ArgBuf {
    /// `len` zeroed words.
    fn zeroed(len: usize) -> ArgBuf {
        let mut v = SPARE_ARGS.try_with(|s| s.take()).unwrap_or_default();
        v.clear();
        v.resize(len, 0);
        ArgBuf(v)
    }
}

impl Drop for ArgBuf {
    fn drop(&mut self) {
        let v = std::mem::take(&mut self.0);
        // Keep the larger of the two (a thread that exits drops it).
        let _ = SPARE_ARGS.try_with(|s| {
            let old = s.take();
            s.set(if old.capacity() > v.capacity() { old } else { v });
        });
    }
}

impl std::ops::Deref for ArgBuf {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        &self.0
    }
}

impl std::ops::DerefMut for ArgBuf {
    fn deref_mut(&mut self) -> &mut [u64] {
        &mut self.0
    }
}

impl KernelArgs {
    /// Copies the argument values into an 8-byte aligned buffer laid out at `offsets`
    /// (parameter `i` has `sizes[i]` bytes), so the caller may reuse its storage as soon
    /// as the call returns, as on a device.
    pub fn capture(&self, sizes: &[u32], offsets: &[u32], total: u32) -> CuResult<ArgBuf> {
        let mut buf = ArgBuf::zeroed((total as usize).div_ceil(8).max(1));
        let base = buf.as_mut_ptr() as *mut u8;
        if !self.params.is_null() && !self.extra.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        if !self.params.is_null() {
            for (i, (&size, &off)) in sizes.iter().zip(offsets).enumerate() {
                // SAFETY: one pointer per parameter (contract of `kernel_args`).
                let p = unsafe { *self.params.add(i) };
                if p.is_null() {
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
                if off as usize + size as usize > total as usize {
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
                // SAFETY: the value is readable for its size (contract); the buffer holds
                // `total` bytes and the range was checked above.
                unsafe { copy_arg(p as *const u8, base.add(off as usize), size as usize) };
            }
        } else if !self.extra.is_null() {
            let (mut data, mut size): (*const u8, Option<usize>) = (std::ptr::null(), None);
            let mut i = 0;
            loop {
                if i / 2 >= MAX_EXTRA_PAIRS {
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
                // SAFETY: key/value pairs up to CU_LAUNCH_PARAM_END (contract).
                let key = unsafe { *self.extra.add(i) } as usize;
                if key == CU_LAUNCH_PARAM_END {
                    break;
                }
                // SAFETY: as above; a key is followed by its value.
                let value = unsafe { *self.extra.add(i + 1) };
                match key {
                    CU_LAUNCH_PARAM_BUFFER_POINTER => data = value as *const u8,
                    CU_LAUNCH_PARAM_BUFFER_SIZE => {
                        if value.is_null() {
                            return Err(CUDA_ERROR_INVALID_VALUE);
                        }
                        // SAFETY: the size entry points to a size_t (contract).
                        size = Some(unsafe { (value as *const usize).read_unaligned() });
                    }
                    _ => return Err(CUDA_ERROR_INVALID_VALUE),
                }
                i += 2;
            }
            let size = size.ok_or(CUDA_ERROR_INVALID_VALUE)?;
            if data.is_null() || size < total as usize {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            // SAFETY: the caller's buffer holds `size` >= total bytes (contract).
            unsafe { std::ptr::copy_nonoverlapping(data, base, total as usize) };
        } else if !sizes.is_empty() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        Ok(buf)
    }
}

/// Copies one argument value: the usual sizes as one unaligned load and store, not a
/// call to memcpy.
///
/// # Safety
/// `src` is readable and `dst` writable for `size` bytes; they do not overlap.
#[inline(always)]
unsafe fn copy_arg(src: *const u8, dst: *mut u8, size: usize) {
    // SAFETY: per the contract, for each size.
    unsafe {
        match size {
            8 => dst.cast::<u64>().write_unaligned(src.cast::<u64>().read_unaligned()),
            4 => dst.cast::<u32>().write_unaligned(src.cast::<u32>().read_unaligned()),
            16 => dst.cast::<u128>().write_unaligned(src.cast::<u128>().read_unaligned()),
            _ => std::ptr::copy_nonoverlapping(src, dst, size),
        }
    }
}

/// A module image passed by pointer (cuModuleLoadData and friends). Images carry no
/// length: the parser reads only what their headers allow.
pub struct ImagePtr(*const u8);

/// # Safety
/// `p` is null or points to a module image (PTX text, fatbin, cubin) whose headers
/// describe readable memory.
pub unsafe fn image_ptr(p: *const c_void) -> ImagePtr {
    ImagePtr(p as *const u8)
}

impl ImagePtr {
    /// Parses the image for `target`; null is CUDA_ERROR_INVALID_VALUE.
    pub fn parse(&self, target: crate::image::Target) -> CuResult<crate::image::Image> {
        if self.0.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: per the contract of `image_ptr`; the parser bounds every read by the
        // sizes the headers give.
        unsafe { crate::image::parse_ptr(self.0, target) }.map_err(|e| {
            crate::log_error!("module image rejected: {e}");
            e.cu_result()
        })
    }
}

/// cuLaunchKernelEx's config and its attribute array, copied; None for a null config,
/// the attributes None when the count is nonzero and the array null.
///
/// # Safety
/// `c` is null or a readable `CUlaunchConfig` whose `attrs` holds `num_attrs` entries.
pub unsafe fn launch_config(c: *const CUlaunchConfig) -> Option<(CUlaunchConfig, Option<Vec<CUlaunchAttribute>>)> {
    // SAFETY: per this function's contract.
    let cfg = unsafe { input(c) }?;
    // SAFETY: as above, `attrs` holds `num_attrs` entries.
    let attrs = unsafe { array(cfg.attrs as *const CUlaunchAttribute, cfg.num_attrs as usize) };
    Some((cfg, attrs))
}

/// A caller's byte range (`data`, `size`), read whole (cuLinkAddData's input).
pub struct HostBytes {
    p: *const u8,
    len: usize,
}

/// # Safety
/// `p` is null or readable for `len` bytes for the duration of the call.
pub unsafe fn host_bytes(p: *const c_void, len: usize) -> HostBytes {
    HostBytes { p: p as *const u8, len }
}

impl HostBytes {
    /// A copy of the bytes; null is CUDA_ERROR_INVALID_VALUE. A size of 0 for text
    /// (PTX) means "up to the NUL", as programs pass strlen-less PTX.
    pub fn get(&self) -> CuResult<Vec<u8>> {
        if self.p.is_null() || self.len > crate::image::MAX_IMAGE_BYTES as usize {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        if self.len == 0 {
            // SAFETY: per the contract of `host_bytes`, read as a C string (PTX).
            return Ok(unsafe { CStr::from_ptr(self.p as *const c_char) }.to_bytes().to_vec());
        }
        // SAFETY: per the contract of `host_bytes`: `len` readable bytes.
        Ok(unsafe { std::slice::from_raw_parts(self.p, self.len) }.to_vec())
    }
}

/// JIT options (`CUjit_option *options, void **values, unsigned n`): what a program asks
/// of the JIT compiler and where it wants the logs.
pub struct JitOptions {
    n: u32,
    opts: *const u32,
    vals: *mut *mut c_void,
}

/// # Safety
/// For n > 0, `opts` and `vals` are null or hold `n` entries; a log-buffer option's
/// value points to a writable buffer of the size its size option gives.
pub unsafe fn jit_options(n: u32, opts: *const u32, vals: *mut *mut c_void) -> JitOptions {
    JitOptions { n, opts, vals }
}

impl JitOptions {
    /// Checks the arrays (both given when `n` > 0) and the option numbers.
    pub fn check(&self) -> CuResult {
        if self.n > 0 && (self.opts.is_null() || self.vals.is_null()) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        for i in 0..self.n as usize {
            // SAFETY: `opts` holds `n` entries (contract of `jit_options`).
            let o = unsafe { *self.opts.add(i) };
            if o > 40 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
        }
        Ok(())
    }

    fn find(&self, opt: u32) -> Option<usize> {
        (0..self.n as usize).find(|&i| {
            // SAFETY: `opts` holds `n` entries (checked non-null by `check` first).
            !self.opts.is_null() && unsafe { *self.opts.add(i) } == opt
        })
    }

    /// The ptxas optimisation level the program asks for (CU_JIT_OPTIMIZATION_LEVEL, an
    /// integer in its value slot; 4, the JIT's default and highest, is ptxas's -O3),
    /// which decides whether ptxas contracts mul+add into FMA (-O0 does not).
    pub fn opt_level(&self) -> u8 {
        self.opt_level_given().unwrap_or(simtwin_ptx::contract::DEFAULT_OPT_LEVEL)
    }

    /// The level of CU_JIT_OPTIMIZATION_LEVEL when the program gave it (0..=3).
    pub fn opt_level_given(&self) -> Option<u8> {
        let i = self.find(CU_JIT_OPTIMIZATION_LEVEL)?;
        if self.vals.is_null() {
            return None;
        }
        // SAFETY: `vals` holds `n` entries (contract of `jit_options`); the option's
        // value is the integer itself, in the pointer slot.
        let v = unsafe { *self.vals.add(i) } as usize;
        Some(v.min(3) as u8)
    }

    /// Writes `text` (NUL-terminated, truncated to fit) into the log buffer the program
    /// gave for `buffer_opt` (info or error log) and the bytes written into its size.
    pub fn write_log(&self, buffer_opt: u32, size_opt: u32, text: &str) {
        let (Some(b), Some(s)) = (self.find(buffer_opt), self.find(size_opt)) else { return };
        // SAFETY: `vals` holds `n` entries; the size option's value is the size itself
        // (an integer in the pointer slot), the buffer option's a writable buffer of
        // that size (contract of `jit_options`).
        unsafe {
            let size = *self.vals.add(s) as usize;
            let buf = *self.vals.add(b) as *mut u8;
            if buf.is_null() || size == 0 {
                return;
            }
            let n = text.len().min(size - 1);
            std::ptr::copy_nonoverlapping(text.as_ptr(), buf, n);
            *buf.add(n) = 0;
            *self.vals.add(s) = (n + 1) as *mut c_void;
        }
    }

    /// Reports the wall time (CU_JIT_WALL_TIME, a float of milliseconds in the value slot).
    pub fn set_wall_time(&self, ms: f32) {
        if let Some(i) = self.find(CU_JIT_WALL_TIME) {
            // SAFETY: the option's value slot is written with the float's bits, as the
            // API defines it.
            unsafe { *self.vals.add(i) = ms.to_bits() as usize as *mut c_void };
        }
    }
}

/// An out-array (`T *array, unsigned count`): written element by element, unaligned.
pub struct OutSlice<T> {
    p: *mut T,
    n: usize,
}

/// # Safety
/// `p` is null or writable for `n` elements of `T` for the duration of the call.
pub unsafe fn out_slice<T>(p: *mut T, n: usize) -> OutSlice<T> {
    OutSlice { p, n }
}

impl<T: Copy> OutSlice<T> {
    /// The number of elements the caller made room for.
    pub fn len(&self) -> usize {
        self.n
    }
    /// Writes `v` (at most as many elements as there is room for); null is
    /// CUDA_ERROR_INVALID_VALUE.
    pub fn set(self, v: &[T]) -> CuResult {
        if self.p.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        for (i, x) in v.iter().take(self.n).enumerate() {
            // SAFETY: `i` < n: writable per the contract of `out_slice`.
            unsafe { self.p.add(i).write_unaligned(*x) };
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recycled_argument_buffer_is_zeroed_around_the_new_arguments() {
        // A launch that fills 32 bytes with ones, then one with a 4-byte and an 8-byte
        // parameter at offsets 0 and 8: the padding and the tail are zero again.
        let ones = [u64::MAX; 4];
        let mut p1: Vec<*mut c_void> = ones.iter().map(|v| v as *const u64 as *mut c_void).collect();
        // SAFETY: one readable 8-byte value per parameter.
        let a = unsafe { kernel_args(p1.as_mut_ptr(), std::ptr::null_mut()) };
        let first = a.capture(&[8, 8, 8, 8], &[0, 8, 16, 24], 32).expect("captured");
        assert_eq!(&*first, &[u64::MAX; 4]);
        drop(first);
        let (x, y) = (0x1122_3344u32, 0x5566_7788_99aa_bbccu64);
        let mut p2: Vec<*mut c_void> = vec![&x as *const u32 as *mut c_void, &y as *const u64 as *mut c_void];
        // SAFETY: as above, with the parameters' sizes.
        let b = unsafe { kernel_args(p2.as_mut_ptr(), std::ptr::null_mut()) };
        let second = b.capture(&[4, 8], &[0, 8], 16).expect("captured");
        assert_eq!(&*second, &[0x1122_3344, y]);
        // Odd sizes go through the general copy.
        let bytes = [7u8, 8, 9];
        let mut p3: Vec<*mut c_void> = vec![bytes.as_ptr() as *mut c_void];
        drop(second);
        // SAFETY: as above.
        let c = unsafe { kernel_args(p3.as_mut_ptr(), std::ptr::null_mut()) };
        assert_eq!(&*c.capture(&[3], &[0], 3).expect("captured"), &[0x09_08_07]);
    }
}

// ---- graphs -------------------------------------------------------------------------

/// A kernel's arguments held by the driver (a graph's kernel node): the captured
/// parameter buffer, handed to a launch as the `extra` buffer form.
#[derive(Clone)]
pub struct HeldArgs {
    words: Vec<u64>,
    bytes: usize,
    /// One pointer per parameter into `words` (cuGraphKernelNodeGetParams's kernelParams),
    /// as addresses.
    offsets: Vec<u32>,
}

impl HeldArgs {
    /// Takes a captured buffer of `bytes` bytes laid out at `offsets`.
    pub fn new(buf: &ArgBuf, bytes: u32, offsets: &[u32]) -> HeldArgs {
        HeldArgs { words: buf.to_vec(), bytes: bytes as usize, offsets: offsets.to_vec() }
    }

    /// Runs `f` with these arguments as a launch's KernelArgs (valid during `f`).
    pub fn with<R>(&self, f: impl FnOnce(KernelArgs) -> R) -> R {
        let mut size = self.bytes;
        let mut extra: [*mut c_void; 5] = [
            CU_LAUNCH_PARAM_BUFFER_POINTER as *mut c_void,
            self.words.as_ptr() as *mut c_void,
            CU_LAUNCH_PARAM_BUFFER_SIZE as *mut c_void,
            &mut size as *mut usize as *mut c_void,
            CU_LAUNCH_PARAM_END as *mut c_void,
        ];
        // SAFETY: the list ends in CU_LAUNCH_PARAM_END; the buffer holds `size` bytes
        // (`words` covers the kernel's parameter bytes) and outlives `f`, as does `size`.
        let args = unsafe { kernel_args(std::ptr::null_mut(), extra.as_mut_ptr()) };
        f(args)
    }

    /// The address of each parameter in the held buffer (stable while the node lives).
    pub fn param_addresses(&self) -> Vec<usize> {
        let base = self.words.as_ptr() as usize;
        self.offsets.iter().map(|&o| base + o as usize).collect()
    }
}

/// A kernel node's parameters as given (v1 or v2 layout), with the caller's arguments.
pub struct KernelNodeIn {
    pub func: CUfunction,
    pub kern: CUkernel,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: u32,
    pub args: KernelArgs,
}

/// # Safety
/// `p` is null or points to a CUDA_KERNEL_NODE_PARAMS of the layout `v2` says, whose
/// kernelParams/extra follow `kernel_args`'s contract.
pub unsafe fn kernel_node_params(p: *const c_void, v2: bool) -> Option<KernelNodeIn> {
    if p.is_null() {
        return None;
    }
    // SAFETY: per the contract; v1 is a prefix of v2.
    let (a, kern) = unsafe {
        if v2 {
            let q = (p as *const CUDA_KERNEL_NODE_PARAMS_v2).read_unaligned();
            (
                CUDA_KERNEL_NODE_PARAMS_v1 {
                    func: q.func,
                    grid_dim_x: q.grid_dim_x,
                    grid_dim_y: q.grid_dim_y,
                    grid_dim_z: q.grid_dim_z,
                    block_dim_x: q.block_dim_x,
                    block_dim_y: q.block_dim_y,
                    block_dim_z: q.block_dim_z,
                    shared_mem_bytes: q.shared_mem_bytes,
                    kernel_params: q.kernel_params,
                    extra: q.extra,
                },
                q.kern,
            )
        } else {
            ((p as *const CUDA_KERNEL_NODE_PARAMS_v1).read_unaligned(), std::ptr::null_mut())
        }
    };
    Some(KernelNodeIn {
        func: a.func,
        kern,
        grid: [a.grid_dim_x, a.grid_dim_y, a.grid_dim_z],
        block: [a.block_dim_x, a.block_dim_y, a.block_dim_z],
        shared: a.shared_mem_bytes,
        // SAFETY: per the contract.
        args: unsafe { kernel_args(a.kernel_params, a.extra) },
    })
}

/// A kernel node's parameters to write back (cuGraphKernelNodeGetParams).
pub struct KernelNodeOut {
    p: *mut c_void,
    v2: bool,
}

/// # Safety
/// `p` is null or writable for a CUDA_KERNEL_NODE_PARAMS of the layout `v2` says.
pub unsafe fn kernel_node_out(p: *mut c_void, v2: bool) -> KernelNodeOut {
    KernelNodeOut { p, v2 }
}

impl KernelNodeOut {
    /// Writes the node's launch; `params` points to the held parameter addresses (kept
    /// alive by the node).
    pub fn set(self, func: CUfunction, grid: [u32; 3], block: [u32; 3], shared: u32, params: *mut *mut c_void) -> CuResult {
        if self.p.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let v1 = CUDA_KERNEL_NODE_PARAMS_v1 {
            func,
            grid_dim_x: grid[0],
            grid_dim_y: grid[1],
            grid_dim_z: grid[2],
            block_dim_x: block[0],
            block_dim_y: block[1],
            block_dim_z: block[2],
            shared_mem_bytes: shared,
            kernel_params: params,
            extra: std::ptr::null_mut(),
        };
        // SAFETY: non-null and writable for the layout (contract of `kernel_node_out`).
        unsafe {
            if self.v2 {
                let q = CUDA_KERNEL_NODE_PARAMS_v2 {
                    func,
                    grid_dim_x: grid[0],
                    grid_dim_y: grid[1],
                    grid_dim_z: grid[2],
                    block_dim_x: block[0],
                    block_dim_y: block[1],
                    block_dim_z: block[2],
                    shared_mem_bytes: shared,
                    kernel_params: params,
                    extra: std::ptr::null_mut(),
                    kern: std::ptr::null_mut(),
                    ctx: std::ptr::null_mut(),
                };
                (self.p as *mut CUDA_KERNEL_NODE_PARAMS_v2).write_unaligned(q);
            } else {
                (self.p as *mut CUDA_KERNEL_NODE_PARAMS_v1).write_unaligned(v1);
            }
        }
        Ok(())
    }
}

/// A list the caller gives room for: `items` (null: only the count is asked), an
/// optional parallel array of 8-byte edge data (zeroed on output) and the in/out count.
pub struct HandleList {
    items: *mut *mut c_void,
    data: *mut u64,
    count: *mut usize,
}

/// # Safety
/// `count` is null or readable and writable; `items` (and `data`) are null or writable
/// for `*count` elements.
pub unsafe fn handle_list(items: *mut *mut c_void, data: *mut c_void, count: *mut usize) -> HandleList {
    HandleList { items, data: data as *mut u64, count }
}

impl HandleList {
    /// cuGraphGetNodes's rule: with no array, the count; otherwise up to `*count`
    /// handles, the rest of the room nulled, and `*count` set to how many were written.
    pub fn fill(self, all: &[usize]) -> CuResult {
        if self.count.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: readable and writable (contract).
        let room = unsafe { self.count.read_unaligned() };
        if self.items.is_null() {
            // SAFETY: as above.
            unsafe { self.count.write_unaligned(all.len()) };
            return Ok(());
        }
        for i in 0..room {
            let v = all.get(i).copied().unwrap_or(0);
            // SAFETY: i < room: writable (contract).
            unsafe {
                self.items.add(i).write_unaligned(v as *mut c_void);
                if !self.data.is_null() {
                    self.data.add(i).write_unaligned(0);
                }
            }
        }
        // SAFETY: as above.
        unsafe { self.count.write_unaligned(room.min(all.len())) };
        Ok(())
    }
}

/// cuGraphGetEdges's two arrays and count.
pub struct EdgeList {
    from: HandleList,
    to: *mut *mut c_void,
}

/// # Safety
/// As `handle_list`, for `from`, `to` (both null or both writable) and `data`.
pub unsafe fn edge_list(from: *mut *mut c_void, to: *mut *mut c_void, data: *mut c_void, count: *mut usize) -> EdgeList {
    // SAFETY: per the contract.
    EdgeList { from: unsafe { handle_list(from, data, count) }, to }
}

impl EdgeList {
    /// Fills both arrays (from/to pairs) as `HandleList::fill` does; one array given
    /// without the other is CUDA_ERROR_INVALID_VALUE.
    pub fn fill(self, edges: &[(usize, usize)]) -> CuResult {
        if self.from.items.is_null() != self.to.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        if !self.to.is_null() && !self.from.count.is_null() {
            // SAFETY: readable (contract).
            let room = unsafe { self.from.count.read_unaligned() };
            for i in 0..room {
                let v = edges.get(i).map_or(0, |e| e.1);
                // SAFETY: i < room: writable (contract).
                unsafe { self.to.add(i).write_unaligned(v as *mut c_void) };
            }
        }
        let from: Vec<usize> = edges.iter().map(|e| e.0).collect();
        self.from.fill(&from)
    }
}

/// Edge data given to cuGraphAddDependencies_v2 and friends: only the default (all
/// zero) edge is emulated.
///
/// # Safety
/// `p` is null or readable for `n` 8-byte CUgraphEdgeData entries.
pub unsafe fn default_edges(p: *const c_void, n: usize) -> bool {
    // SAFETY: per the contract.
    p.is_null() || unsafe { array(p as *const u64, n) }.is_some_and(|v| v.iter().all(|&e| e == 0))
}

/// A pointer handed back to the caller that stays valid until the next such call on
/// its thread (cuStreamGetCaptureInfo's dependency array).
pub fn thread_handles(v: Vec<usize>) -> *const *mut c_void {
    thread_local! {
        static HANDLES: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    HANDLES.with(|h| {
        let mut h = h.borrow_mut();
        *h = v;
        if h.is_empty() {
            std::ptr::null()
        } else {
            h.as_ptr() as *const *mut c_void
        }
    })
}

/// cuGraphAddHostNode's parameters: the host function (None when absent).
///
/// # Safety
/// `p` is null or readable for a CUDA_HOST_NODE_PARAMS.
pub unsafe fn host_node_params(p: *const CUDA_HOST_NODE_PARAMS) -> Option<HostCall> {
    // SAFETY: per the contract.
    let v = unsafe { input(p) }?;
    // SAFETY: the function and its data are the caller's, called back as the API says.
    unsafe { host_func(v.func, v.user_data) }
}

impl HostCall {
    /// The C parameters of a host node (a stream callback has none).
    pub fn node_params(&self) -> Option<CUDA_HOST_NODE_PARAMS> {
        match *self {
            HostCall::Func(f, d) => Some(CUDA_HOST_NODE_PARAMS { func: Some(f), user_data: d as *mut c_void }),
            HostCall::Callback(..) => None,
        }
    }
}

/// The `type` of a CUgraphNodeParams (cuGraphAddNode), read as its first field.
///
/// # Safety
/// `p` is null or readable for 4 bytes.
pub unsafe fn node_params_type(p: *const c_void) -> Option<u32> {
    // SAFETY: per the contract.
    unsafe { input(p as *const u32) }
}
