//! Shared by the integration tests: builds the test .cu files once per test binary and
//! provides a mock runtime with single-thread semantics (blockDim 1, or a loop over the
//! threads of a block without barriers; warp operations on the calling lane alone).

#![allow(dead_code)]

use kernels_host::build::{build, BuildOptions, Built};
use kernels_host::manifest::Manifest;
use kernels_host::module::{ffi, LoadedModule};
use std::ffi::{c_char, c_void, CStr};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

pub fn cu(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cu").join(name)
}

pub struct Libs {
    pub dir: PathBuf,
    pub built: Vec<Built>,
}

/// Builds every runtime-test source once (one g++ and one nvcc run each, one runtime
/// object) and shares the result between the test processes of this test binary (nextest
/// runs every test in a process of its own): the first process builds under a lock into
/// a directory named by a hash of the inputs, the others read the manifests back.
pub fn libs() -> &'static Libs {
    static LIBS: OnceLock<Libs> = OnceLock::new();
    LIBS.get_or_init(|| {
        let srcs = ["rounding.cu", "convert.cu", "intops.cu", "memory.cu", "templates.cu", "vmaf_like.cu"];
        let flags = ["--std", "c++20", "-DDEVICE_CODE"];
        let (dir, lock) = shared_build_dir("libs", &srcs, &flags);
        let built = if lock.is_some() {
            let mut opts = BuildOptions::new(&dir, srcs.iter().map(|s| cu(s)).collect());
            opts.nvcc_flags = flags.iter().map(|s| s.to_string()).collect();
            let built = build(&opts).unwrap_or_else(|e| panic!("build failed: {e}"));
            std::fs::write(dir.join("done"), b"").unwrap();
            drop(lock);
            built
        } else {
            srcs.iter()
                .map(|s| {
                    let stem = s.trim_end_matches(".cu");
                    let manifest_path = dir.join(Manifest::file_name(stem));
                    let manifest = Manifest::parse(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
                    Built { library: dir.join(format!("{stem}.so")), manifest_path, manifest }
                })
                .collect()
        };
        Libs { dir, built }
    })
}

/// A build directory shared by the processes of this test binary for these inputs, and,
/// if the caller must build into it, the lock it holds until it has written `done` there
/// (dropping the file releases it; so does the process's exit, if the build fails).
pub fn shared_build_dir(what: &str, srcs: &[&str], flags: &[&str]) -> (PathBuf, Option<std::fs::File>) {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    let exe = std::env::current_exe().unwrap();
    let meta = std::fs::metadata(&exe).unwrap();
    h.update(format!("{}|{:?}|{}|{:?}|{:?}", exe.display(), meta.modified().ok(), meta.len(), srcs, flags));
    for var in ["NVCC", "SIMTWIN_NVCC", "SIMTWIN_CXX", "SIMTWIN_CUDA_INCLUDE"] {
        h.update(format!("{var}={:?}", std::env::var_os(var)));
    }
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![crate_dir.join("include"), crate_dir.join("runtime"), crate_dir.join("tests/cu")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p)
            } else {
                files.push(p)
            }
        }
    }
    files.sort();
    for f in files {
        h.update(f.to_string_lossy().as_bytes());
        h.update(std::fs::read(&f).unwrap());
    }
    let key = format!("{:x}", h.finalize());
    let stem = exe.file_stem().unwrap().to_string_lossy().into_owned();
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let prefix = format!("kh-{what}-{stem}-");
    let dir = root.join(format!("{prefix}{}", &key[..16]));
    std::fs::create_dir_all(&root).unwrap();
    let lock = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(root.join(format!("{prefix}lock"))).unwrap();
    // SAFETY: flock on a descriptor this File owns; closing it releases the lock.
    assert_eq!(unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&lock), libc::LOCK_EX) }, 0);
    if dir.join("done").exists() {
        return (dir, None);
    }
    // Earlier builds of this binary are stale.
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.starts_with(&prefix) && !n.ends_with("lock") && e.path() != dir {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    (dir, Some(lock))
}

pub static PRINTED: Mutex<String> = Mutex::new(String::new());
/// Where the mock's trap reports (a pipe in a forked child); -1: none.
pub static TRAP_FD: Mutex<i32> = Mutex::new(-1);

/// Every rendezvous call site the mock saw, as "file:line" (file name only).
pub static SITES: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn note_site(site: ffi::Site) {
    let file = unsafe { simtwin_abi::ffi::c_str(site.file) };
    let name = file.rsplit('/').next().unwrap_or("").to_string();
    SITES.lock().unwrap().push(format!("{name}:{}", site.line));
}

unsafe extern "C" fn barrier(op: u32, pred: i32, site: ffi::Site) -> i32 {
    note_site(site);
    // One thread: count = pred, and/or = pred.
    if op == 0 {
        0
    } else {
        pred
    }
}
/// One warp call the mock saw: (op, mask, value, arg, width).
pub type WarpCall = (u32, u32, u64, i32, i32);
/// Every warp call the mock saw.
pub static WARP_CALLS: Mutex<Vec<WarpCall>> = Mutex::new(Vec::new());

unsafe extern "C" fn warp(op: u32, mask: u32, value: u64, arg: i32, width: i32, pred_out: *mut i32, site: ffi::Site) -> u64 {
    note_site(site);
    WARP_CALLS.lock().unwrap().push((op, mask, value, arg, width));
    let lane_bit = 1u64;
    if !pred_out.is_null() {
        unsafe { *pred_out = 1 };
    }
    match op {
        0..=3 => value,                            // shuffles: own value
        4 if value != 0 => lane_bit & mask as u64, // ballot
        4 => 0,
        5 | 6 => value,
        7 | 8 => lane_bit,
        9..=14 => value,
        _ => 0,
    }
}
unsafe extern "C" fn activemask(site: ffi::Site) -> u32 {
    note_site(site);
    1
}
unsafe extern "C" fn yield_now(site: ffi::Site) {
    note_site(site);
}
/// Held by tests that count REPORTS or SITES (the harness may run tests on threads of
/// one process).
pub static SERIAL: Mutex<()> = Mutex::new(());

/// SERIAL's guard (a panicking test does not poison it for the others).
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reports the library made (kind, message).
pub static REPORTS: Mutex<Vec<(u32, String)>> = Mutex::new(Vec::new());
unsafe extern "C" fn report(kind: u32, message: *const c_char, site: ffi::Site) {
    note_site(site);
    REPORTS.lock().unwrap().push((kind, unsafe { simtwin_abi::ffi::c_str(message) }));
}
unsafe extern "C" fn trap(kind: u32, message: *const c_char, file: *const c_char, line: u32) {
    let s = |p: *const c_char| if p.is_null() { String::new() } else { unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned() };
    let text = format!("{kind}|{}|{}|{line}", s(message), s(file));
    let fd = *TRAP_FD.lock().unwrap();
    if fd >= 0 {
        unsafe {
            libc::write(fd, text.as_ptr() as *const c_void, text.len());
            libc::_exit(0);
        }
    }
    eprintln!("mock trap outside a forked child: {text}");
    std::process::abort();
}
unsafe extern "C" fn print(text: *const c_char, len: usize) {
    let b = unsafe { std::slice::from_raw_parts(text as *const u8, len) };
    PRINTED.lock().unwrap().push_str(&String::from_utf8_lossy(b));
}
unsafe extern "C" fn threadfence(_scope: u32) {}
unsafe extern "C" fn clock() -> u64 {
    12345
}

/// Accesses a checking library reported: (address, size, kind, pc).
pub static ACCESSES: Mutex<Vec<(usize, u64, u32, usize)>> = Mutex::new(Vec::new());
unsafe extern "C" fn access(address: *const c_void, size: u64, kind: u32, pc: *const c_void) {
    ACCESSES.lock().unwrap().push((address as usize, size, kind, pc as usize));
}

/// Texture and surface requests a library made; each is answered with
/// (handle, op, geometry, coord[0] bits) so a test sees what reached the driver.
pub static TEXTURES: Mutex<Vec<ffi::TexRequest>> = Mutex::new(Vec::new());
unsafe extern "C" fn texture(req: *mut ffi::TexRequest) {
    // SAFETY: the library passes its own request, valid for the call.
    let r = unsafe { &mut *req };
    TEXTURES.lock().unwrap().push(*r);
    r.data = [r.handle as u32, r.op, r.geometry, r.coord[0].to_bits()];
}

/// Twins never call it (only PTX mode's loop path does): a call is a test failure.
/// No launch here is cooperative: no grid workspace (grid sync traps, as in a plain launch).
unsafe extern "C" fn grid_workspace() -> u64 {
    0
}

/// Twins never call it (only PTX mode's vector forms do): a call is a test failure.
unsafe extern "C" fn recover_slot() -> *mut *const ffi::Recover {
    eprintln!("mock runtime: recover_slot called by a twin");
    std::process::abort();
}

unsafe extern "C" fn warp_exited(_op: u32, _site: ffi::Site, _mask: u32, _warp: u32, _gone: u32) -> i32 {
    eprintln!("mock runtime: warp_exited called by a twin");
    std::process::abort();
}

/// Twins never call it (only PTX mode's loop path does): a call is a test failure.
unsafe extern "C" fn block_barrier(_op: u32, _site: ffi::Site, _arrived: u32, _exited: *const u32, _exited_count: u32) -> i32 {
    eprintln!("mock runtime: block_barrier called by a twin");
    std::process::abort();
}

pub static RUNTIME: ffi::Runtime = ffi::Runtime {
    abi_version: ffi::ABI_VERSION,
    size: std::mem::size_of::<ffi::Runtime>() as u32,
    barrier,
    warp,
    activemask,
    trap,
    print,
    threadfence,
    clock,
    yield_now,
    report,
    access,
    texture,
    block_barrier,
    warp_exited,
    grid_workspace,
    recover_slot,
};

pub fn new_ctx(block_dim: u32, smem: &mut [u8]) -> ffi::ThreadCtx {
    ffi::ThreadCtx {
        thread_idx: ffi::Dim3::default(),
        block_idx: ffi::Dim3::default(),
        block_dim: ffi::Dim3 { x: block_dim, y: 1, z: 1 },
        grid_dim: ffi::Dim3 { x: 1, y: 1, z: 1 },
        linear_tid: 0,
        reserved: 0,
        dyn_smem: smem.as_mut_ptr() as *mut c_void,
        dyn_smem_size: smem.len() as u64,
        range_stop: 0,
        lanes: 0,
        executor: std::ptr::null_mut(),
    }
}

/// Opens a built library (by stem) and binds the mock runtime.
pub fn open(stem: &str) -> LoadedModule {
    let l = libs();
    let b = l.built.iter().find(|b| b.manifest.library == format!("{stem}.so")).unwrap();
    let m = LoadedModule::open(&b.library).unwrap();
    unsafe { m.bind(&RUNTIME) };
    m
}

/// Runs `kernel` for `threads` threads of one block. `args` are pointers to each
/// parameter's value (as cuLaunchKernel's kernelParams).
pub fn launch(m: &LoadedModule, kernel: &str, threads: u32, args: &[*mut c_void], smem: &mut [u8]) {
    let k = m.kernel(kernel).unwrap_or_else(|| panic!("no kernel {kernel}"));
    assert_eq!(k.param_sizes.len(), args.len(), "{kernel}: parameter count");
    let mut ctx = new_ctx(threads, smem);
    unsafe {
        *m.ctx_slot() = &mut ctx;
        (k.run)(args.as_ptr(), &mut ctx, 0, threads);
    }
}

/// A pointer to a value, as kernelParams holds it.
pub fn arg<T>(v: &mut T) -> *mut c_void {
    v as *mut T as *mut c_void
}

/// Runs `f` in a forked child whose mock trap writes its report to a pipe; returns the
/// report ("kind|message|file|line"), or None if the child finished without a trap.
pub fn in_child_expect_trap(f: impl FnOnce()) -> Option<String> {
    let mut fds = [0i32; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        unsafe { libc::close(fds[0]) };
        *TRAP_FD.lock().unwrap() = fds[1];
        f();
        unsafe { libc::_exit(3) };
    }
    unsafe { libc::close(fds[1]) };
    let mut buf = vec![0u8; 4096];
    let mut text = Vec::new();
    loop {
        let n = unsafe { libc::read(fds[0], buf.as_mut_ptr() as *mut c_void, buf.len()) };
        if n <= 0 {
            break;
        }
        text.extend_from_slice(&buf[..n as usize]);
    }
    let mut status = 0;
    unsafe { libc::waitpid(pid, &mut status, 0) };
    unsafe { libc::close(fds[0]) };
    if text.is_empty() {
        None
    } else {
        Some(String::from_utf8_lossy(&text).into_owned())
    }
}
