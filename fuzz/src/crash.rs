//! What ends a run as a finding: a panic, a fatal signal (a read past a buffer, an abort,
//! a stack overflow), an input that runs longer than the time limit, an allocation past
//! the allocation limit, memory use past the RSS limit. Each writes the input to
//! `ARTIFACTS/KIND-HASH` and says how to reproduce it.
//!
//! Panics unwind back to the engine ([`crate::fuzz`] returns the finding). Signals, the
//! watchdog (time and memory) and the allocator cannot return: they write the artifact
//! with nothing but `open`/`write` (no allocation, async-signal-safe), print, and `_exit(1)`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The input being run (pointer, length) while [`EXECUTING`].
static CUR_PTR: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static CUR_LEN: AtomicUsize = AtomicUsize::new(0);
/// True while the target runs.
static EXECUTING: AtomicBool = AtomicBool::new(false);
/// Milliseconds since [`START`] at which the current run began.
static RUN_START_MS: AtomicU64 = AtomicU64::new(0);
/// Runs started (for messages).
pub(crate) static RUNS: AtomicU64 = AtomicU64::new(0);
/// Largest single allocation a run may make (bytes).
static MALLOC_LIMIT: AtomicU64 = AtomicU64::new(u64::MAX);
/// `ARTIFACTS/` as bytes, and the target's name, for the non-returning paths.
static ARTIFACT_DIR: OnceLock<Vec<u8>> = OnceLock::new();
static TARGET: OnceLock<String> = OnceLock::new();
static START: OnceLock<Instant> = OnceLock::new();
/// The message of the panic of the current run, if one happened (caught or not).
pub(crate) static PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Limits of one fuzzing process.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Longest a single input may run.
    pub timeout: Duration,
    /// Resident memory of the process.
    pub rss_bytes: u64,
    /// Largest single allocation.
    pub malloc_bytes: u64,
}

/// Installs the handlers (once per process): signals, the panic hook, the watchdog.
pub(crate) fn install(target: &str, artifacts: &std::path::Path, limits: Limits) {
    let _ = START.set(Instant::now());
    let _ = TARGET.set(target.to_string());
    let mut dir = artifacts.as_os_str().as_encoded_bytes().to_vec();
    dir.push(b'/');
    let _ = ARTIFACT_DIR.set(dir);
    MALLOC_LIMIT.store(limits.malloc_bytes, Ordering::Relaxed);
    std::panic::set_hook(Box::new(|info| {
        if EXECUTING.load(Ordering::Relaxed) {
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
            if let Ok(mut p) = PANIC.lock() {
                p.get_or_insert(format!("panic: {msg}{at}"));
            }
        } else {
            eprintln!("simtwin-fuzz: {info}");
        }
    }));
    install_signals();
    std::thread::Builder::new().name("fuzz-watchdog".into()).spawn(move || watchdog(limits)).expect("the watchdog thread starts");
}

/// Marks the start of a run of `data`.
pub(crate) fn begin(data: &[u8]) {
    CUR_PTR.store(data.as_ptr() as *mut u8, Ordering::Relaxed);
    CUR_LEN.store(data.len(), Ordering::Relaxed);
    RUN_START_MS.store(now_ms(), Ordering::Relaxed);
    RUNS.fetch_add(1, Ordering::Relaxed);
    EXECUTING.store(true, Ordering::SeqCst);
}

/// Marks the end of a run; the panic message if it panicked.
pub(crate) fn end() -> Option<String> {
    EXECUTING.store(false, Ordering::SeqCst);
    PANIC.lock().ok().and_then(|mut p| p.take())
}

fn now_ms() -> u64 {
    START.get().map(|s| s.elapsed().as_millis() as u64).unwrap_or(0)
}

/// FNV-1a of the input: the artifact's name.
pub(crate) fn fnv(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// A fixed-size text buffer (no allocation).
struct Buf {
    b: [u8; 4096],
    n: usize,
}

impl Buf {
    fn new() -> Buf {
        Buf { b: [0; 4096], n: 0 }
    }
    fn push(&mut self, s: &[u8]) -> &mut Buf {
        let k = s.len().min(self.b.len() - 1 - self.n);
        self.b[self.n..self.n + k].copy_from_slice(&s[..k]);
        self.n += k;
        self
    }
    fn num(&mut self, mut v: u64, radix: u64, width: usize) -> &mut Buf {
        let mut d = [0u8; 20];
        let mut k = 0;
        while v > 0 || k < width.max(1) {
            d[k] = b"0123456789abcdef"[(v % radix) as usize];
            v /= radix;
            k += 1;
        }
        d[..k].reverse();
        self.push(&d[..k])
    }
}

/// Writes the current input to `ARTIFACTS/KIND-HASH` and prints `why`, with nothing but
/// system calls; then ends the process with status 1.
fn die(kind: &[u8], why: &[u8]) -> ! {
    let ptr = CUR_PTR.load(Ordering::Relaxed);
    let len = CUR_LEN.load(Ordering::Relaxed);
    let data: &[u8] = if ptr.is_null() {
        &[]
    } else {
        // SAFETY: the engine keeps the input alive and unchanged for the whole run.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    };
    let mut path = Buf::new();
    path.push(ARTIFACT_DIR.get().map(Vec::as_slice).unwrap_or(b"./")).push(kind).push(b"-").num(fnv(data), 16, 16);
    path.b[path.n] = 0;
    // SAFETY: a NUL-terminated path in a local buffer; plain open/write/close.
    let written = unsafe {
        let fd = libc::open(path.b.as_ptr().cast(), libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC | libc::O_CLOEXEC, 0o644);
        let mut off = 0;
        while fd >= 0 && off < data.len() {
            let r = libc::write(fd, data[off..].as_ptr().cast(), data.len() - off);
            if r <= 0 {
                break;
            }
            off += r as usize;
        }
        if fd >= 0 {
            libc::close(fd);
        }
        fd >= 0 && off == data.len()
    };
    let mut m = Buf::new();
    m.push(b"fuzz ").push(TARGET.get().map(String::as_bytes).unwrap_or(b"?")).push(b": CRASH (").push(why).push(b") in run ");
    m.num(RUNS.load(Ordering::Relaxed), 10, 1).push(b"; the input (").num(len as u64, 10, 1).push(b" bytes) ");
    if written {
        m.push(b"is in ")
            .push(&path.b[..path.n])
            .push(b"\nreproduce: simtwin-fuzz check ")
            .push(TARGET.get().map(String::as_bytes).unwrap_or(b"?"))
            .push(b" ")
            .push(&path.b[..path.n]);
    } else {
        m.push(b"could not be written to ").push(&path.b[..path.n]);
    }
    m.push(b"\n");
    // SAFETY: write(2) of a local buffer, then _exit: async-signal-safe.
    unsafe {
        libc::write(2, m.b.as_ptr().cast(), m.n);
        libc::_exit(1)
    }
}

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    let name: &[u8] = match sig {
        libc::SIGSEGV => b"signal SIGSEGV",
        libc::SIGBUS => b"signal SIGBUS",
        libc::SIGILL => b"signal SIGILL",
        libc::SIGFPE => b"signal SIGFPE",
        libc::SIGABRT => b"signal SIGABRT",
        _ => b"signal SIGTRAP",
    };
    let mut why = Buf::new();
    why.push(name);
    if matches!(sig, libc::SIGSEGV | libc::SIGBUS) && !info.is_null() {
        // SAFETY: the kernel's siginfo for a fault carries the faulting address.
        let addr = unsafe { (*info).si_addr() } as u64;
        why.push(b" at 0x").num(addr, 16, 1);
    }
    if !EXECUTING.load(Ordering::Relaxed) {
        why.push(b", outside a run");
    }
    let n = why.n;
    die(b"crash", &why.b[..n])
}

fn install_signals() {
    const ALT: usize = 256 << 10;
    // SAFETY: a fresh anonymous mapping as this thread's alternate signal stack (so a stack
    // overflow is reported), and handlers that only call async-signal-safe functions.
    unsafe {
        let stack =
            libc::mmap(std::ptr::null_mut(), ALT, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        if stack != libc::MAP_FAILED {
            let ss = libc::stack_t { ss_sp: stack, ss_flags: 0, ss_size: ALT };
            libc::sigaltstack(&ss, std::ptr::null_mut());
        }
        for sig in [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE, libc::SIGABRT, libc::SIGTRAP] {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER | libc::SA_RESETHAND;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Ends the process on a run past the time limit or memory past the RSS limit.
fn watchdog(l: Limits) {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    loop {
        std::thread::sleep(Duration::from_millis(100));
        if EXECUTING.load(Ordering::SeqCst) {
            let ran = now_ms().saturating_sub(RUN_START_MS.load(Ordering::Relaxed));
            if ran > l.timeout.as_millis() as u64 {
                let mut why = Buf::new();
                why.push(b"timeout: one input ran ")
                    .num(ran / 1000, 10, 1)
                    .push(b" s, the limit is ")
                    .num(l.timeout.as_secs(), 10, 1)
                    .push(b" s");
                let n = why.n;
                die(b"timeout", &why.b[..n]);
            }
        }
        let rss =
            std::fs::read_to_string("/proc/self/statm").ok().and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok()).unwrap_or(0)
                * page;
        if rss > l.rss_bytes {
            let mut why = Buf::new();
            why.push(b"out of memory: resident ")
                .num(rss >> 20, 10, 1)
                .push(b" MiB, the limit is ")
                .num(l.rss_bytes >> 20, 10, 1)
                .push(b" MiB");
            let n = why.n;
            die(b"oom", &why.b[..n]);
        }
    }
}

/// The fuzzer's allocator: the system's, with a finding for any single allocation past
/// the limit during a run (a parser trusting a size field).
pub struct LimitedAlloc;

impl LimitedAlloc {
    fn check(size: usize) {
        if size as u64 > MALLOC_LIMIT.load(Ordering::Relaxed) && EXECUTING.load(Ordering::Relaxed) {
            let mut why = Buf::new();
            why.push(b"out of memory: one allocation of ").num(size as u64, 10, 1).push(b" bytes, the limit is ").num(
                MALLOC_LIMIT.load(Ordering::Relaxed),
                10,
                1,
            );
            let n = why.n;
            die(b"oom", &why.b[..n]);
        }
    }
}

// SAFETY: forwards to the system allocator unchanged; the check only reads atomics and,
// past the limit, ends the process without allocating.
unsafe impl GlobalAlloc for LimitedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::check(layout.size());
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::check(layout.size());
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::check(new_size);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
