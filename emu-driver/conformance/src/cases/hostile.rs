//! What a careless or hostile program does, and what the device answers: fork() around
//! the driver, copies of zero bytes at the edges of (or outside) an allocation, copies
//! from or into host memory the process cannot read or write, a fault in one context seen
//! from another, misaligned accesses in kernels, and threads or blocks that spin on flags
//! other threads set (independent thread scheduling).
//!
//! Each case is a process of its own; where the real driver kills the process (SIGSEGV)
//! the line reads `CRASHED(signal 11)`, which is what the emulated driver must match then.

use super::devres::lanes;
use crate::api::P;
use crate::cx::{fmt_code, pp, Case, Cx};
use std::ffi::c_void;
use std::ptr::null_mut;

/// An address no allocation of either driver uses (the basic cases' `UNKNOWN_DPTR`).
const UNKNOWN_DPTR: u64 = 0x0000_3ead_0000_0000;

pub fn cases() -> Vec<Case> {
    let mut v: Vec<Case> = Vec::new();
    let mut add = |name: &str, run: fn(&mut Cx) -> Result<(), String>| v.push(Case { name: name.to_string(), run: Box::new(run) });
    add("fork_after_init", fork_after_init);
    add("fork_before_init", fork_before_init);
    add("fork_during_calls", fork_during_calls);
    add("zerolen_htod", zerolen_htod);
    add("zerolen_dtoh", zerolen_dtoh);
    add("zerolen_dtod", zerolen_dtod);
    add("zerolen_async", zerolen_async);
    add("zerolen_memset", zerolen_memset);
    add("zerolen_unified", zerolen_unified);
    add("hostmem_htod_noaccess", hostmem_htod_noaccess);
    add("hostmem_htod_unmapped", hostmem_htod_unmapped);
    add("hostmem_htod_partial", hostmem_htod_partial);
    add("hostmem_dtoh_readonly", hostmem_dtoh_readonly);
    add("hostmem_dtoh_unmapped", hostmem_dtoh_unmapped);
    add("hostmem_htod_async_noaccess", hostmem_htod_async_noaccess);
    add("hostmem_dtoh_async_readonly", hostmem_dtoh_async_readonly);
    add("sticky_created_then_primary", sticky_created_then_primary);
    add("sticky_primary_then_created", sticky_primary_then_created);
    add("fault_noncanonical", fault_noncanonical);
    for (name, _, _) in MISALIGNED {
        v.push(Case { name: format!("misaligned_{name}"), run: Box::new(move |cx| misaligned(cx, name)) });
    }
    for (name, ..) in SPINS {
        v.push(Case { name: format!("spin_{name}"), run: Box::new(move |cx| spin(cx, name)) });
    }
    v.push(Case { name: "spin_chain_lanes".into(), run: Box::new(|cx| spin_chain(cx, 1, 32)) });
    v.push(Case { name: "spin_chain_block".into(), run: Box::new(|cx| spin_chain(cx, 1, 256)) });
    v.push(Case { name: "spin_chain_blocks".into(), run: Box::new(|cx| spin_chain(cx, 8, 32)) });
    // More blocks than an H200 holds resident (132 SMs x 32 blocks), each waiting for the
    // one before; and a reverse chain of blocks that all fit at once.
    v.push(Case { name: "spin_blocks_forward_4300".into(), run: Box::new(|cx| spin_blocks(cx, 4300, 32, 1)) });
    v.push(Case { name: "spin_blocks_reverse_512".into(), run: Box::new(|cx| spin_blocks(cx, 512, 32, -1)) });
    v.push(Case { name: "fork_streams_contexts".into(), run: Box::new(fork_streams_contexts) });
    v
}

// ---------------------------------------------------------------- fork

/// Runs `body` in a forked child (alarm after `alarm` s: a child that hangs dies of SIGALRM)
/// and returns what it printed into the pipe, or how it ended when it printed nothing.
fn in_child(cx: &mut Cx, alarm: u32, body: impl FnOnce(&mut Cx) -> String) -> String {
    let mut fds = [0i32; 2];
    // SAFETY: pipe(2) into a two-int array.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return "pipe-failed".into();
    }
    // SAFETY: fork(2); the child runs `body` and leaves with _exit.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: in the child: alarm, write to our pipe, _exit.
        unsafe {
            libc::close(fds[0]);
            libc::alarm(alarm);
        }
        let s = body(cx);
        // SAFETY: as above.
        unsafe {
            libc::write(fds[1], s.as_ptr().cast(), s.len());
            libc::_exit(0);
        }
    }
    // SAFETY: closing our copy of the write end.
    unsafe { libc::close(fds[1]) };
    if pid < 0 {
        return "fork-failed".into();
    }
    let mut out = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        // SAFETY: reading into a local buffer.
        let n = unsafe { libc::read(fds[0], buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        out.extend_from_slice(&buf[..n as usize]);
    }
    let mut status = 0;
    // SAFETY: waiting for our own child; closing our read end.
    unsafe {
        libc::waitpid(pid, &mut status, 0);
        libc::close(fds[0]);
    }
    let text = String::from_utf8_lossy(&out).into_owned();
    let ended =
        if libc::WIFSIGNALED(status) { format!("signal{}", libc::WTERMSIG(status)) } else { format!("exit{}", libc::WEXITSTATUS(status)) };
    if text.is_empty() {
        ended
    } else if ended == "exit0" {
        text
    } else {
        format!("{text}/{ended}")
    }
}

/// Codes of a sequence of calls in a child, joined by `/`.
fn codes(v: &[i32]) -> String {
    v.iter().map(|&c| fmt_code(c)).collect::<Vec<_>>().join("/")
}

/// The parent initialised the driver, made a context, allocated and copied; the child
/// then calls into the driver with what it inherited, and initialises again.
fn fork_after_init(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(256)?;
    let src = [7u8; 256];
    setup!(cx, cuMemcpyHtoD_v2(d, src.as_ptr() as *const c_void, 256));
    let child = in_child(cx, 10, |cx| {
        let mut r = Vec::new();
        let mut cur: P = null_mut();
        r.push(call!(cx, cuCtxGetCurrent(&mut cur)));
        let cur_set = !cur.is_null();
        let mut d2 = 0u64;
        r.push(call!(cx, cuMemAlloc_v2(&mut d2, 256)));
        let buf = [1u8; 16];
        r.push(call!(cx, cuMemcpyHtoD_v2(d, buf.as_ptr() as *const c_void, 16)));
        r.push(call!(cx, cuCtxSynchronize()));
        r.push(call!(cx, cuInit(0)));
        let mut n = -1;
        r.push(call!(cx, cuDeviceGetCount(&mut n)));
        let mut v = 0;
        r.push(call!(cx, cuDriverGetVersion(&mut v)));
        let mut ctx: P = null_mut();
        r.push(call!(cx, cuDevicePrimaryCtxRetain(&mut ctx, 0)));
        let mut c2: P = null_mut();
        r.push(call!(cx, cuCtxCreate_v2(&mut c2, 0, 0)));
        r.push(call!(cx, cuMemAlloc_v2(&mut d2, 256)));
        format!("{} current_inherited={cur_set}", codes(&r))
    });
    cx.val("child", child.replace(' ', ";"));
    let mut d3 = 0u64;
    rec!(cx, cuMemAlloc_v2(&mut d3, 256));
    rec!(cx, cuCtxSynchronize());
    let mut back = [0u8; 256];
    rec!(cx, cuMemcpyDtoH_v2(back.as_mut_ptr() as P, d, 256));
    cx.val("parent_bytes_ok", back.iter().all(|&b| b == 7));
    Ok(())
}

/// Nothing initialised before fork: the child initialises and runs a kernel; then the
/// parent initialises too.
fn fork_before_init(cx: &mut Cx) -> Result<(), String> {
    // A long alarm: in PTX mode the child compiles the module (seconds on a busy machine).
    let child = in_child(cx, 120, |cx| {
        let mut r = Vec::new();
        let ok = (|| -> Result<bool, String> {
            cx.primary()?;
            let m = cx.module()?;
            let f = cx.function(m, "fill_hash")?;
            let d = cx.alloc(64 * 4)?;
            let (mut dd, mut n) = (d, 64u32);
            let mut params = [pp(&mut dd), pp(&mut n)];
            r.push(call!(cx, cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, null_mut(), params.as_mut_ptr(), null_mut())));
            r.push(call!(cx, cuCtxSynchronize()));
            let v = cx.dtoh_u32(d, 64)?;
            Ok(v.iter().enumerate().all(|(i, &x)| x == crate::cx::hash(i as u32)))
        })();
        match ok {
            Ok(ok) => format!("{} ran={ok}", codes(&r)),
            Err(e) => e.replace(' ', "_"),
        }
    });
    cx.val("child", child.replace(' ', ";"));
    rec!(cx, cuInit(0));
    let mut d = 0u64;
    let mut dev = 0;
    rec!(cx, cuDeviceGet(&mut dev, 0));
    let mut ctx: P = null_mut();
    rec!(cx, cuDevicePrimaryCtxRetain(&mut ctx, 0));
    rec!(cx, cuCtxSetCurrent(ctx));
    rec!(cx, cuMemAlloc_v2(&mut d, 256));
    Ok(())
}

/// A second thread calls the driver without pause while the main thread forks 12
/// times; each child initialises and allocates. Distinct child outcomes, with counts.
fn fork_during_calls(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let m = cx.module()?;
    let f = cx.function(m, "fill_hash")?;
    let mut ctx: P = null_mut();
    setup!(cx, cuCtxGetCurrent(&mut ctx));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (ctx_word, f_word) = (ctx as usize, f as usize);
    let api_lib = cx.o.lib.clone().unwrap_or_default();
    let stop2 = stop.clone();
    let worker = std::thread::spawn(move || {
        let api = crate::api::Api::load(&api_lib).expect("load the driver again");
        let (set, alloc, free, launch, sync) = (
            api.cuCtxSetCurrent.unwrap(),
            api.cuMemAlloc_v2.unwrap(),
            api.cuMemFree_v2.unwrap(),
            api.cuLaunchKernel.unwrap(),
            api.cuCtxSynchronize.unwrap(),
        );
        let mut calls = 0u64;
        // SAFETY: the driver's entry points with valid arguments (a context and function
        // of this process, out-pointers to locals).
        unsafe {
            set(ctx_word as P);
            while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
                let mut d = 0u64;
                if alloc(&mut d, 4096) == 0 {
                    let (mut dd, mut n) = (d, 1024u32);
                    let mut params = [pp(&mut dd), pp(&mut n)];
                    launch(f_word as P, 4, 1, 1, 256, 1, 1, 0, null_mut(), params.as_mut_ptr(), null_mut());
                    sync();
                    free(d);
                }
                calls += 1;
            }
        }
        calls
    });
    let mut outcomes: std::collections::BTreeMap<String, u32> = Default::default();
    for _ in 0..12 {
        std::thread::sleep(std::time::Duration::from_millis(3));
        let o = in_child(cx, 3, |cx| {
            let mut r = Vec::new();
            r.push(call!(cx, cuInit(0)));
            let mut d = 0u64;
            r.push(call!(cx, cuMemAlloc_v2(&mut d, 256)));
            r.push(call!(cx, cuCtxSynchronize()));
            codes(&r)
        });
        *outcomes.entry(o).or_default() += 1;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let calls = worker.join().map_err(|_| "SETUP worker-thread-panicked".to_string())?;
    cx.val("worker_ran", calls > 0);
    let list: Vec<String> = outcomes.iter().map(|(k, n)| format!("{k}x{n}")).collect();
    cx.val("children", list.join(","));
    Ok(())
}

/// Two contexts (the primary and a created one), a stream in each with a kernel and an
/// asynchronous copy still queued, then fork: the child touches each inherited stream,
/// context and event and initialises again; the parent's work completes.
fn fork_streams_contexts(cx: &mut Cx) -> Result<(), String> {
    let n = 1u32 << 16;
    let mut work = Vec::new();
    let mut ctxs = Vec::new();
    for k in 0..2 {
        let ctx = if k == 0 { cx.primary()? } else { cx.created()? };
        let m = cx.module()?;
        let f = cx.function(m, "fill_hash")?;
        let d = cx.alloc(n as usize * 4)?;
        let mut s: P = null_mut();
        setup!(cx, cuStreamCreate(&mut s, 0));
        let mut ev: P = null_mut();
        setup!(cx, cuEventCreate(&mut ev, 0));
        let (mut dd, mut nn) = (d, n);
        let mut params = [pp(&mut dd), pp(&mut nn)];
        setup!(cx, cuLaunchKernel(f, n / 256, 1, 1, 256, 1, 1, 0, s, params.as_mut_ptr(), null_mut()));
        let mut host = vec![0u32; n as usize];
        setup!(cx, cuMemcpyDtoHAsync_v2(host.as_mut_ptr() as P, d, n as usize * 4, s));
        setup!(cx, cuEventRecord(ev, s));
        work.push((ctx, s, ev, host));
        ctxs.push(ctx);
    }
    let (s0, s1, e0, c1) = (work[0].1, work[1].1, work[0].2, ctxs[1]);
    let child = in_child(cx, 20, |cx| {
        let mut r = Vec::new();
        r.push(call!(cx, cuStreamQuery(s0)));
        r.push(call!(cx, cuStreamSynchronize(s1)));
        r.push(call!(cx, cuEventSynchronize(e0)));
        r.push(call!(cx, cuCtxSetCurrent(c1)));
        r.push(call!(cx, cuCtxSynchronize()));
        r.push(call!(cx, cuStreamDestroy_v2(s1)));
        r.push(call!(cx, cuCtxDestroy_v2(c1)));
        r.push(call!(cx, cuInit(0)));
        let mut d = 0u64;
        r.push(call!(cx, cuMemAlloc_v2(&mut d, 256)));
        codes(&r)
    });
    cx.val("child", child.replace(' ', ";"));
    for (ctx, s, _ev, host) in &work {
        rec!(cx, cuCtxSetCurrent(*ctx));
        rec!(cx, cuStreamSynchronize(*s));
        cx.val("parent_ok", host.iter().enumerate().all(|(i, &x)| x == crate::cx::hash(i as u32)));
    }
    Ok(())
}

// ---------------------------------------------------------------- zero-length copies

/// Where a zero-length copy points, relative to a 256-byte allocation `d`: its end, one
/// MiB past it, NULL, and an address no allocation uses.
fn edges(d: u64) -> [(&'static str, u64); 4] {
    [("end", d + 256), ("outside", d + (1 << 20)), ("null", 0), ("unknown", UNKNOWN_DPTR)]
}

fn zerolen_htod(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(256)?;
    let h = [0u8; 16];
    for (_, p) in edges(d) {
        rec!(cx, cuMemcpyHtoD_v2(p, h.as_ptr() as *const c_void, 0));
    }
    rec!(cx, cuMemcpyHtoD_v2(d, std::ptr::null(), 0));
    rec!(cx, cuCtxSynchronize());
    Ok(())
}

fn zerolen_dtoh(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(256)?;
    let mut h = [0u8; 16];
    for (_, p) in edges(d) {
        rec!(cx, cuMemcpyDtoH_v2(h.as_mut_ptr() as P, p, 0));
    }
    rec!(cx, cuMemcpyDtoH_v2(null_mut(), d, 0));
    rec!(cx, cuCtxSynchronize());
    Ok(())
}

fn zerolen_dtod(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(256)?;
    let e = cx.alloc(256)?;
    for (_, p) in edges(d) {
        rec!(cx, cuMemcpyDtoD_v2(p, e, 0));
        rec!(cx, cuMemcpyDtoD_v2(e, p, 0));
    }
    rec!(cx, cuCtxSynchronize());
    Ok(())
}

fn zerolen_async(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(256)?;
    let e = cx.alloc(256)?;
    let mut s: P = null_mut();
    setup!(cx, cuStreamCreate(&mut s, 1));
    let mut h = [0u8; 16];
    for (_, p) in edges(d) {
        rec!(cx, cuMemcpyHtoDAsync_v2(p, h.as_ptr() as *const c_void, 0, s));
        rec!(cx, cuMemcpyDtoHAsync_v2(h.as_mut_ptr() as P, p, 0, s));
        rec!(cx, cuMemcpyDtoDAsync_v2(p, e, 0, s));
    }
    rec!(cx, cuStreamSynchronize(s));
    rec!(cx, cuCtxSynchronize());
    Ok(())
}

fn zerolen_memset(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(256)?;
    let mut s: P = null_mut();
    setup!(cx, cuStreamCreate(&mut s, 1));
    for (_, p) in edges(d) {
        rec!(cx, cuMemsetD8_v2(p, 0x5a, 0));
        rec!(cx, cuMemsetD32_v2(p, 0x5a, 0));
        rec!(cx, cuMemsetD8Async(p, 0x5a, 0, s));
        rec!(cx, cuMemsetD2D8_v2(p, 256, 0x5a, 0, 4));
    }
    rec!(cx, cuStreamSynchronize(s));
    rec!(cx, cuCtxSynchronize());
    Ok(())
}

fn zerolen_unified(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(256)?;
    let e = cx.alloc(256)?;
    let mut s: P = null_mut();
    setup!(cx, cuStreamCreate(&mut s, 1));
    for (_, p) in edges(d) {
        rec!(cx, cuMemcpy(p, e, 0));
        rec!(cx, cuMemcpyAsync(p, e, 0, s));
    }
    let mut m = crate::api::Memcpy2D::zeroed();
    m.src_memory_type = 2; // CU_MEMORYTYPE_DEVICE
    m.src_device = e;
    m.src_pitch = 256;
    m.dst_memory_type = 2;
    m.dst_device = d + (1 << 20);
    m.dst_pitch = 256;
    m.width_in_bytes = 0;
    m.height = 4;
    rec!(cx, cuMemcpy2D_v2(&m));
    rec!(cx, cuStreamSynchronize(s));
    rec!(cx, cuCtxSynchronize());
    Ok(())
}

// ---------------------------------------------------------------- host memory out of reach

/// `pages` pages mapped with `prot` (PROT_NONE, PROT_READ, ...).
fn map(pages: usize, prot: i32) -> Result<*mut u8, String> {
    // SAFETY: an anonymous private mapping; checked below.
    let p = unsafe { libc::mmap(null_mut(), pages * 4096, prot, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
    if p == libc::MAP_FAILED {
        return Err("SETUP mmap".into());
    }
    Ok(p.cast())
}

/// A page that was mapped and is not any more.
fn unmapped() -> Result<*mut u8, String> {
    let p = map(1, libc::PROT_READ | libc::PROT_WRITE)?;
    // SAFETY: unmapping what we just mapped.
    unsafe { libc::munmap(p.cast(), 4096) };
    Ok(p)
}

/// After the copy under test: is the context still usable, what do the next calls say.
fn after_host_copy(cx: &mut Cx, d: u64) {
    let mut d2 = 0u64;
    rec!(cx, cuMemAlloc_v2(&mut d2, 256));
    rec!(cx, cuCtxSynchronize());
    let mut h = [0u8; 4];
    rec!(cx, cuMemcpyDtoH_v2(h.as_mut_ptr() as P, d, 4));
}

fn hostmem_htod_noaccess(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(4096)?;
    let p = map(1, libc::PROT_NONE)?;
    rec!(cx, cuMemcpyHtoD_v2(d, p as *const c_void, 4096));
    after_host_copy(cx, d);
    Ok(())
}

fn hostmem_htod_unmapped(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(4096)?;
    let p = unmapped()?;
    rec!(cx, cuMemcpyHtoD_v2(d, p as *const c_void, 4096));
    after_host_copy(cx, d);
    Ok(())
}

/// The first page readable (filled with 0x33), the second not: a copy over both.
fn hostmem_htod_partial(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(8192)?;
    setup!(cx, cuMemsetD8_v2(d, 0, 8192));
    let p = map(2, libc::PROT_READ | libc::PROT_WRITE)?;
    // SAFETY: the first page is ours and writable; then the second is made inaccessible.
    unsafe {
        std::ptr::write_bytes(p, 0x33, 4096);
        libc::mprotect(p.add(4096).cast(), 4096, libc::PROT_NONE);
    }
    rec!(cx, cuMemcpyHtoD_v2(d, p as *const c_void, 8192));
    after_host_copy(cx, d);
    let mut h = vec![0u8; 4096];
    let r = call!(cx, cuMemcpyDtoH_v2(h.as_mut_ptr() as P, d, 4096));
    if r == 0 {
        cx.val("first_page_copied", h.iter().all(|&b| b == 0x33));
    }
    Ok(())
}

fn hostmem_dtoh_readonly(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(4096)?;
    let p = map(1, libc::PROT_READ)?;
    rec!(cx, cuMemcpyDtoH_v2(p.cast(), d, 4096));
    after_host_copy(cx, d);
    Ok(())
}

fn hostmem_dtoh_unmapped(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(4096)?;
    let p = unmapped()?;
    rec!(cx, cuMemcpyDtoH_v2(p.cast(), d, 4096));
    after_host_copy(cx, d);
    Ok(())
}

fn hostmem_htod_async_noaccess(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(4096)?;
    let mut s: P = null_mut();
    setup!(cx, cuStreamCreate(&mut s, 1));
    let p = map(1, libc::PROT_NONE)?;
    rec!(cx, cuMemcpyHtoDAsync_v2(d, p as *const c_void, 4096, s));
    rec!(cx, cuStreamSynchronize(s));
    after_host_copy(cx, d);
    Ok(())
}

fn hostmem_dtoh_async_readonly(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(4096)?;
    let mut s: P = null_mut();
    setup!(cx, cuStreamCreate(&mut s, 1));
    let p = map(1, libc::PROT_READ)?;
    rec!(cx, cuMemcpyDtoHAsync_v2(p.cast(), d, 4096, s));
    rec!(cx, cuStreamSynchronize(s));
    after_host_copy(cx, d);
    Ok(())
}

// ---------------------------------------------------------------- faults across contexts

/// Launches `poke` at `target` in the current context; records launch and sync codes.
fn poke(cx: &mut Cx, target: u64) -> Result<(), String> {
    let m = cx.module()?;
    let f = cx.function(m, "poke")?;
    let mut a = target;
    let mut params = [pp(&mut a)];
    cx.launch(f, [1, 1, 1], [32, 1, 1], 0, &mut params);
    rec!(cx, cuCtxSynchronize());
    Ok(())
}

/// A fault in a context from cuCtxCreate; then the primary context, never used before,
/// and another created context.
fn sticky_created_then_primary(cx: &mut Cx) -> Result<(), String> {
    let a = cx.created()?;
    poke(cx, UNKNOWN_DPTR)?;
    let mut p: P = null_mut();
    rec!(cx, cuDevicePrimaryCtxRetain(&mut p, 0));
    rec!(cx, cuCtxSetCurrent(p));
    let mut d = 0u64;
    rec!(cx, cuMemAlloc_v2(&mut d, 256));
    rec!(cx, cuCtxSynchronize());
    let mut b: P = null_mut();
    rec!(cx, cuCtxCreate_v2(&mut b, 0, 0));
    rec!(cx, cuMemAlloc_v2(&mut d, 256));
    rec!(cx, cuCtxDestroy_v2(b));
    rec!(cx, cuCtxSetCurrent(a));
    rec!(cx, cuMemAlloc_v2(&mut d, 256));
    rec!(cx, cuCtxDestroy_v2(a));
    rec!(cx, cuCtxSetCurrent(p));
    rec!(cx, cuMemAlloc_v2(&mut d, 256));
    Ok(())
}

/// A fault in the primary context; then a context from cuCtxCreate.
fn sticky_primary_then_created(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    poke(cx, UNKNOWN_DPTR)?;
    let mut b: P = null_mut();
    rec!(cx, cuCtxCreate_v2(&mut b, 0, 0));
    let mut d = 0u64;
    rec!(cx, cuMemAlloc_v2(&mut d, 256));
    rec!(cx, cuCtxSynchronize());
    Ok(())
}

/// A store through a non-canonical address (x86 reports no address for it).
fn fault_noncanonical(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    poke(cx, 0x8000_0000_0000_1000)?;
    let mut d = 0u64;
    rec!(cx, cuMemAlloc_v2(&mut d, 256));
    Ok(())
}

// ---------------------------------------------------------------- misaligned accesses

/// name, kind (the kernel's switch), offset from a 256-byte aligned address.
const MISALIGNED: [(&str, i32, i32); 22] = [
    ("store4_odd", 0, 1),
    ("store4_half", 0, 2),
    ("load4_odd", 1, 3),
    ("store8_at4", 2, 4),
    ("load16_at8", 3, 8),
    ("shared_store4_odd", 4, 1),
    ("memcpy_odd", 5, 1),
    ("packed_member", 6, 0),
    ("atomic4_odd", 7, 2),
    ("store4_aligned", 0, 4),
    ("load8_v2_at4", 8, 4),
    ("store16_v4_at8", 9, 8),
    ("store8_v2_at4", 10, 4),
    ("load16_v4_at8_all_lanes", 11, 8),
    ("atomic8_at4", 12, 4),
    ("atomic_cas4_half", 13, 2),
    ("shared_atomic4_odd", 14, 1),
    ("ldg4_odd", 15, 1),
    ("store16_double2_at8", 16, 8),
    ("load16_v4_aligned", 11, 16),
    ("atomic8_aligned", 12, 8),
    ("store8_v2_aligned", 10, 8),
];

fn misaligned(cx: &mut Cx, name: &str) -> Result<(), String> {
    let &(_, kind, off) = MISALIGNED.iter().find(|(n, ..)| *n == name).expect("a listed case");
    let buf = {
        cx.primary()?;
        let d = cx.alloc(512)?;
        setup!(cx, cuMemsetD8_v2(d, 0x11, 512));
        d
    };
    let out = cx.sentinel(1)?;
    let m = cx.module()?;
    let f = cx.function(m, "misaligned")?;
    let (mut p, mut o, mut k, mut q) = (buf, off, kind, out);
    let mut params = [pp(&mut p), pp(&mut o), pp(&mut k), pp(&mut q)];
    cx.launch(f, [1, 1, 1], [32, 1, 1], 0, &mut params);
    let s = rec!(cx, cuCtxSynchronize());
    let mut d = 0u64;
    rec!(cx, cuMemAlloc_v2(&mut d, 256));
    if s == 0 {
        let v: Vec<u32> = cx.download(out, 1)?;
        cx.val("out", lanes(&v));
    }
    Ok(())
}

// ---------------------------------------------------------------- forward progress

/// name, grid, block, waiter, setter (grid-linear threads), mode (see spin_flag).
const SPINS: [(&str, u32, u32, u32, u32, i32); 8] = [
    ("lane", 1, 32, 0, 31, 0),
    ("lane_atomic", 1, 32, 3, 17, 1),
    ("lane_bounded", 1, 32, 0, 31, 2),
    ("warp", 1, 64, 0, 63, 0),
    ("warp_atomic", 1, 256, 5, 250, 1),
    ("block", 2, 32, 0, 32, 0),
    ("block_atomic", 4, 64, 1, 255, 1),
    ("setter_first", 1, 32, 31, 0, 0),
];

fn spin(cx: &mut Cx, name: &str) -> Result<(), String> {
    let &(_, grid, block, waiter, setter, mode) = SPINS.iter().find(|(n, ..)| *n == name).expect("a listed case");
    cx.primary()?;
    let flag = cx.upload(&[0i32])?;
    let n = (grid * block) as usize;
    let out = cx.sentinel(n)?;
    let m = cx.module()?;
    let f = cx.function(m, "spin_flag")?;
    let (mut fl, mut w, mut s, mut md, mut o) = (flag, waiter, setter, mode, out);
    let mut params = [pp(&mut fl), pp(&mut w), pp(&mut s), pp(&mut md), pp(&mut o)];
    cx.launch(f, [grid, 1, 1], [block, 1, 1], 0, &mut params);
    let r = rec!(cx, cuCtxSynchronize());
    if r == 0 {
        let v: Vec<u32> = cx.download(out, n)?;
        cx.val("out", lanes(&v));
    }
    Ok(())
}

fn spin_blocks(cx: &mut Cx, grid: u32, block: u32, dir: i32) -> Result<(), String> {
    cx.primary()?;
    let flags = cx.upload(&vec![0i32; grid as usize])?;
    let out = cx.sentinel(grid as usize)?;
    let m = cx.module()?;
    let f = cx.function(m, "spin_blocks")?;
    let (mut fl, mut nb, mut d, mut o) = (flags, grid, dir, out);
    let mut params = [pp(&mut fl), pp(&mut nb), pp(&mut d), pp(&mut o)];
    cx.launch(f, [grid, 1, 1], [block, 1, 1], 0, &mut params);
    let r = rec!(cx, cuCtxSynchronize());
    if r == 0 {
        let v: Vec<u32> = cx.download(out, grid as usize)?;
        cx.val("out", lanes(&v));
    }
    Ok(())
}

fn spin_chain(cx: &mut Cx, grid: u32, block: u32) -> Result<(), String> {
    cx.primary()?;
    let n = grid * block;
    let flags = cx.upload(&vec![0i32; n as usize])?;
    let out = cx.sentinel(n as usize)?;
    let m = cx.module()?;
    let f = cx.function(m, "spin_chain")?;
    let (mut fl, mut nn, mut o) = (flags, n, out);
    let mut params = [pp(&mut fl), pp(&mut nn), pp(&mut o)];
    cx.launch(f, [grid, 1, 1], [block, 1, 1], 0, &mut params);
    let r = rec!(cx, cuCtxSynchronize());
    if r == 0 {
        let v: Vec<u32> = cx.download(out, n as usize)?;
        cx.val("out", lanes(&v));
    }
    Ok(())
}
