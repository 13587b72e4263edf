//! Finding the running fiber from kernel code without a thread-local lookup.
//!
//! Every runtime entry needs the worker and the fiber its caller runs on. A Rust
//! thread-local in this shared library costs a `__tls_get_addr` call (general-dynamic
//! model), about a tenth of a barrier. The kernel library's context slot (abi.h
//! `ctx_slot`) already says it: the scheduler stores the running fiber's context there
//! before every switch, the context lies inside its `Fiber`, and `executor` names the
//! worker. kernels-host's libraries keep the slot in static TLS (libsimtwin-tls.so.2,
//! initial-exec), whose offset from the thread pointer is the same on every thread, so
//! the entries read it with one `%fs`-relative load.
//!
//! The offset is learned from the slots launches use ([`note_slot`], at the start of
//! every launch on every worker thread): it is used only while every slot seen had the
//! same offset and that offset lies in the static TLS area just below the thread
//! pointer (a slot in dynamically allocated TLS, as an older library's would be, is in
//! the heap, far from it). Otherwise, and whenever the slot is empty (outside a launch),
//! the entries fall back to the worker's thread-local.

use super::fibers::Fiber;
use crate::abi::ThreadCtx;
use std::arch::asm;
use std::sync::atomic::{AtomicIsize, Ordering::Relaxed};

/// No launch has told the offset yet.
const UNKNOWN: isize = isize::MIN;
/// Slots were seen that this fast path cannot serve.
const UNUSABLE: isize = isize::MIN + 1;
/// How far below the thread pointer a slot in static TLS may lie.
const STATIC_TLS_SPAN: isize = 1 << 16;

/// The slot's offset from the thread pointer, or one of the markers.
static SLOT_OFFSET: AtomicIsize = AtomicIsize::new(UNKNOWN);

#[inline(always)]
fn thread_pointer() -> usize {
    let tp: usize;
    // SAFETY: on x86-64 Linux %fs:0 holds the thread pointer itself (the TCB's self
    // pointer); reading it has no side effect.
    unsafe { asm!("mov {}, qword ptr fs:[0]", out(reg) tp, options(nostack, readonly, preserves_flags)) };
    tp
}

/// A launch on this thread uses context slot `slot`: learn or check the offset.
pub(crate) fn note_slot(slot: *mut *mut ThreadCtx) {
    let off = (slot as isize).wrapping_sub(thread_pointer() as isize);
    let usable = off < 0 && off > -STATIC_TLS_SPAN && off % 8 == 0;
    let want = if usable { off } else { UNUSABLE };
    // Every launch after the first finds the offset it learned: a load, not a locked
    // compare-exchange per launch.
    if SLOT_OFFSET.load(Relaxed) == want {
        return;
    }
    match SLOT_OFFSET.compare_exchange(UNKNOWN, want, Relaxed, Relaxed) {
        Ok(_) => {}
        Err(seen) if seen == want => {}
        Err(_) => SLOT_OFFSET.store(UNUSABLE, Relaxed),
    }
}

/// The fiber the calling kernel code runs on and its worker (the context's
/// `executor`), read from the context slot; None when the fast path cannot tell (then
/// ask the worker's thread-local).
#[inline(always)]
pub(crate) fn running() -> Option<(*mut Fiber, *mut std::ffi::c_void)> {
    let off = SLOT_OFFSET.load(Relaxed);
    if off <= UNUSABLE {
        return None;
    }
    let ctx: *mut ThreadCtx;
    // SAFETY: `off` was checked by `note_slot` to be a slot in static TLS, at the same
    // offset from the thread pointer on every thread that launched; a plain load.
    unsafe { asm!("mov {}, qword ptr fs:[{}]", out(reg) ctx, in(reg) off, options(nostack, readonly, preserves_flags)) };
    if ctx.is_null() {
        return None;
    }
    // SAFETY: the scheduler only stores contexts of its fibers in the slot (and null
    // after a launch): `ctx` is the `ctx` field of a live Fiber, whose context names
    // its worker.
    unsafe {
        let f = ctx.cast::<u8>().sub(std::mem::offset_of!(Fiber, ctx)).cast::<Fiber>();
        Some((f, (*ctx).executor))
    }
}
