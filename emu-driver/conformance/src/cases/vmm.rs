//! The virtual-memory API (`vmm_*`), the legacy device properties
//! (`device_get_properties`) and entry points CUDA 13.0 added (`entries_13_0`): granularities, physical allocations (handles), address
//! reservations, mappings, access flags, shareable handles, and how memory mapped this
//! way behaves for copies, memsets, kernels and pointer queries.
//!
//! Sizes are multiples of the granularity `G` the driver reports (asked first, in every
//! case), so the lines hold no figure of the device other than `G` itself (printed by
//! `vmm_granularity`). Addresses are printed relative to the reservations the case made
//! (`A`, `A+0x1000`, `B`, `other`, `null`); handles as `same` / `other` / `zero`.

use crate::api::{AccessDesc, AllocProp, DevProp, MemLocation, P, R};
use crate::cx::{hash, pp, Case, Cx};
use std::ffi::c_void;
use std::ptr::null_mut;

// cuda.h's location, allocation, handle and access numbers (abi/src/cuda.rs), by short names.
use crate::cuda::{
    CU_MEM_ACCESS_FLAGS_PROT_NONE as PROT_NONE, CU_MEM_ACCESS_FLAGS_PROT_READ as PROT_READ, CU_MEM_ACCESS_FLAGS_PROT_READWRITE as PROT_RW,
    CU_MEM_ALLOCATION_TYPE_MANAGED as MANAGED, CU_MEM_ALLOCATION_TYPE_PINNED as PINNED, CU_MEM_HANDLE_TYPE_FABRIC as HT_FABRIC,
    CU_MEM_HANDLE_TYPE_NONE as HT_NONE, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR as HT_FD, CU_MEM_HANDLE_TYPE_WIN32 as HT_WIN32,
    CU_MEM_LOCATION_TYPE_DEVICE as LOC_DEVICE, CU_MEM_LOCATION_TYPE_HOST as LOC_HOST, CU_MEM_LOCATION_TYPE_HOST_NUMA as LOC_HOST_NUMA,
    CU_MEM_LOCATION_TYPE_INVALID as LOC_INVALID,
};
/// A page-aligned, canonical address no allocation of either driver uses (see cases.rs).
const UNKNOWN_VA: u64 = 0x0000_3ead_0000_0000;

/// A named change to a good allocation request.
type Variant = (&'static str, fn(&mut AllocProp));

fn prop(ht: i32) -> AllocProp {
    AllocProp {
        type_: PINNED,
        requested_handle_types: ht,
        location: MemLocation { type_: LOC_DEVICE, id: 0 },
        win32_handle_meta_data: null_mut(),
        compression_type: 0,
        gpu_direct_rdma_capable: 0,
        usage: 0,
        reserved: [0; 4],
    }
}

fn dev0() -> MemLocation {
    MemLocation { type_: LOC_DEVICE, id: 0 }
}

fn rw(location: MemLocation, flags: i32) -> AccessDesc {
    AccessDesc { location, flags }
}

fn ok(b: bool) -> &'static str {
    if b {
        "ok"
    } else {
        "bad"
    }
}

/// `p` named relative to the case's bases: `A`, `A+0x..`, `null`, `other`.
fn rel(p: u64, bases: &[(&str, u64, u64)]) -> String {
    if p == 0 {
        return "null".into();
    }
    for &(name, base, len) in bases {
        if p == base {
            return name.into();
        }
        if p > base && p < base + len {
            return format!("{name}+{:#x}", p - base);
        }
    }
    "other".into()
}

impl Cx<'_> {
    /// The minimum granularity for a pinned device-0 allocation (setup).
    fn gran(&mut self) -> Result<usize, String> {
        let mut g = 0usize;
        let p = prop(HT_NONE);
        setup!(self, cuMemGetAllocationGranularity(&mut g, &p, 0));
        if g == 0 || !g.is_power_of_two() {
            return Err(format!("SETUP granularity={g}"));
        }
        Ok(g)
    }
    fn create(&mut self, size: usize, ht: i32) -> Result<u64, String> {
        let mut h = 0u64;
        let p = prop(ht);
        setup!(self, cuMemCreate(&mut h, size, &p, 0));
        Ok(h)
    }
    fn reserve(&mut self, size: usize, align: usize) -> Result<u64, String> {
        let mut a = 0u64;
        setup!(self, cuMemAddressReserve(&mut a, size, align, 0, 0));
        Ok(a)
    }
    fn map(&mut self, va: u64, size: usize, h: u64) -> Result<(), String> {
        setup!(self, cuMemMap(va, size, 0, h, 0));
        Ok(())
    }
    fn access(&mut self, va: u64, size: usize, flags: i32) -> Result<(), String> {
        let d = rw(dev0(), flags);
        setup!(self, cuMemSetAccess(va, size, &d, 1));
        Ok(())
    }
    /// Reserved, created, mapped and read-write: (va, handle).
    fn mapped_rw(&mut self, size: usize, ht: i32) -> Result<(u64, u64), String> {
        let a = self.reserve(size, 0)?;
        let h = self.create(size, ht)?;
        self.map(a, size, h)?;
        self.access(a, size, PROT_RW)?;
        Ok((a, h))
    }
    /// cuMemGetAccess for device 0; the flags or `-`.
    fn get_access(&mut self, va: u64) -> String {
        let mut f = 0xa5u64;
        let loc = dev0();
        let r = rec!(self, cuMemGetAccess(&mut f, &loc, va));
        if r == 0 {
            f.to_string()
        } else {
            "-".into()
        }
    }
    /// A copy of `n` bytes of `b` to `va` and back: the code of each, and whether the
    /// bytes came back.
    fn roundtrip(&mut self, key: &str, va: u64, n: usize, b: u8) {
        let src = vec![b; n];
        let r1 = rec!(self, cuMemcpyHtoD_v2(va, src.as_ptr() as *const c_void, n));
        let mut dst = vec![0u8; n];
        let r2 = rec!(self, cuMemcpyDtoH_v2(dst.as_mut_ptr() as P, va, n));
        if r1 == 0 && r2 == 0 {
            self.val(key, ok(dst == src));
        }
    }
}

// ---------------------------------------------------------------- granularity

fn granularity(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    for ht in [HT_NONE, HT_FD, HT_FABRIC] {
        for opt in [0, 1] {
            let mut g = 0usize;
            let p = prop(ht);
            let r = rec!(cx, cuMemGetAllocationGranularity(&mut g, &p, opt));
            cx.val(&format!("ht{ht}_opt{opt}"), if r == 0 { g.to_string() } else { "-".into() });
        }
    }
    let mut g = 0usize;
    let good = prop(HT_NONE);
    rec!(cx, cuMemGetAllocationGranularity(&mut g, &good, 2));
    rec!(cx, cuMemGetAllocationGranularity(&mut g, null_mut(), 0));
    rec!(cx, cuMemGetAllocationGranularity(null_mut(), &good, 0));
    let variants: [Variant; 10] = [
        ("type_invalid", |p| p.type_ = 0),
        ("type_managed", |p| p.type_ = MANAGED),
        ("loc_invalid", |p| p.location.type_ = LOC_INVALID),
        ("loc_dev1", |p| p.location.id = 1),
        ("loc_dev_neg", |p| p.location.id = -1),
        ("loc_host", |p| p.location.type_ = LOC_HOST),
        ("loc_host_numa", |p| p.location.type_ = LOC_HOST_NUMA),
        ("ht_win32", |p| p.requested_handle_types = HT_WIN32),
        ("ht_bad", |p| p.requested_handle_types = 0x10),
        ("compressible", |p| p.compression_type = 1),
    ];
    for (k, f) in variants {
        let mut p = prop(HT_NONE);
        f(&mut p);
        let mut g = 0usize;
        let r = rec!(cx, cuMemGetAllocationGranularity(&mut g, &p, 0));
        cx.val(k, if r == 0 { g.to_string() } else { "-".into() });
    }
    Ok(())
}

/// Which VM calls need a current context: granularity, create, reserve with none.
fn nocontext(cx: &mut Cx) -> Result<(), String> {
    setup!(cx, cuInit(0));
    let mut g = 0usize;
    let p = prop(HT_NONE);
    let r = rec!(cx, cuMemGetAllocationGranularity(&mut g, &p, 0));
    let g = if r == 0 { g } else { 2 << 20 };
    let mut h = 0u64;
    let rc = rec!(cx, cuMemCreate(&mut h, g, &p, 0));
    let mut a = 0u64;
    let ra = rec!(cx, cuMemAddressReserve(&mut a, g, 0, 0, 0));
    if rc == 0 && ra == 0 {
        rec!(cx, cuMemMap(a, g, 0, h, 0));
        let d = rw(dev0(), PROT_RW);
        rec!(cx, cuMemSetAccess(a, g, &d, 1));
        let f = cx.get_access(a);
        cx.val("access", f);
        rec!(cx, cuMemUnmap(a, g));
    }
    if ra == 0 {
        rec!(cx, cuMemAddressFree(a, g));
    }
    if rc == 0 {
        rec!(cx, cuMemRelease(h));
    }
    Ok(())
}

// ---------------------------------------------------------------- physical allocations

fn create(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let g = cx.gran()?;
    let sizes: [(&str, usize); 6] = [("g", g), ("g_plus_1", g + 1), ("half_g", g / 2), ("zero", 0), ("two_g", 2 * g), ("page", 4096)];
    for (k, size) in sizes {
        let mut h = 0u64;
        let p = prop(HT_NONE);
        let r = rec!(cx, cuMemCreate(&mut h, size, &p, 0));
        cx.val(
            k,
            if r == 0 {
                if h != 0 {
                    "handle"
                } else {
                    "zero"
                }
            } else {
                "-"
            },
        );
        if r == 0 {
            rec!(cx, cuMemRelease(h));
        }
    }
    let mut h = 0u64;
    let p = prop(HT_NONE);
    rec!(cx, cuMemCreate(&mut h, g, null_mut(), 0));
    rec!(cx, cuMemCreate(null_mut(), g, &p, 0));
    let r = rec!(cx, cuMemCreate(&mut h, g, &p, 1));
    if r == 0 {
        rec!(cx, cuMemRelease(h));
    }
    let r = rec!(cx, cuMemCreate(&mut h, 1usize << 50, &p, 0));
    if r == 0 {
        rec!(cx, cuMemRelease(h));
    }
    Ok(())
}

/// cuMemCreate with each property varied from a good pinned device-0 one.
fn create_props(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let g = cx.gran()?;
    let variants: [Variant; 15] = [
        ("type_invalid", |p| p.type_ = 0),
        ("type_managed", |p| p.type_ = MANAGED),
        ("loc_invalid", |p| p.location.type_ = LOC_INVALID),
        ("loc_dev1", |p| p.location.id = 1),
        ("loc_host", |p| p.location.type_ = LOC_HOST),
        ("loc_host_numa", |p| p.location.type_ = LOC_HOST_NUMA),
        ("ht_fd", |p| p.requested_handle_types = HT_FD),
        ("ht_win32", |p| p.requested_handle_types = HT_WIN32),
        ("ht_fabric", |p| p.requested_handle_types = HT_FABRIC),
        ("ht_fd_fabric", |p| p.requested_handle_types = HT_FD | HT_FABRIC),
        ("ht_bad", |p| p.requested_handle_types = 0x10),
        ("win32_meta", |p| p.win32_handle_meta_data = 8 as P),
        ("compressible", |p| p.compression_type = 1),
        ("rdma", |p| p.gpu_direct_rdma_capable = 1),
        ("usage_bad", |p| p.usage = 0x80),
    ];
    for (k, f) in variants {
        let mut p = prop(HT_NONE);
        f(&mut p);
        let mut h = 0u64;
        let r = rec!(cx, cuMemCreate(&mut h, g, &p, 0));
        if r == 0 {
            // What the driver kept of the request.
            let mut q = prop(-1);
            let rq = call!(cx, cuMemGetAllocationPropertiesFromHandle(&mut q, h));
            cx.val(
                k,
                if rq == 0 {
                    format!(
                        "t{}/h{}/l{}.{}/c{}/r{}/u{}",
                        q.type_,
                        q.requested_handle_types,
                        q.location.type_,
                        q.location.id,
                        q.compression_type,
                        q.gpu_direct_rdma_capable,
                        q.usage
                    )
                } else {
                    format!("props:{rq}")
                },
            );
            rec!(cx, cuMemRelease(h));
        } else {
            cx.val(k, "-");
        }
    }
    Ok(())
}

/// cuMemRelease(0). (Recorded as one case with the forged handles below, the H200's
/// driver crashed; they are apart since.)
fn release_bad(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    rec!(cx, cuMemRelease(0));
    Ok(())
}

/// Handles that were never made: "the behavior is undefined" (cuda.h); the H200's
/// driver crashed on one of these (SIGSEGV). Kept apart so that the other cases record.
fn forged_handles(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let g = cx.gran()?;
    let a = cx.reserve(g, 0)?;
    rec!(cx, cuMemMap(a, g, 0, 0, 0));
    rec!(cx, cuMemMap(a, g, 0, 0x1234_5678_9abc, 0));
    rec!(cx, cuMemRelease(0x1234_5678_9abc));
    // A cuMemAlloc pointer is no handle.
    let d = cx.alloc(4096)?;
    rec!(cx, cuMemRelease(d));
    rec!(cx, cuMemAddressFree(a, g));
    Ok(())
}

/// The documentation calls a second release undefined: whatever the device does.
fn release_twice(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let g = cx.gran()?;
    let h = cx.create(g, HT_NONE)?;
    rec!(cx, cuMemRelease(h));
    rec!(cx, cuMemRelease(h));
    Ok(())
}

fn props(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let g = cx.gran()?;
    for ht in [HT_NONE, HT_FD] {
        let h = cx.create(2 * g, ht)?;
        let mut q = prop(-1);
        q.compression_type = 0x5a;
        q.gpu_direct_rdma_capable = 0x5a;
        q.usage = 0x5a5a;
        q.reserved = [0x5a; 4];
        q.win32_handle_meta_data = 8 as P;
        let r = rec!(cx, cuMemGetAllocationPropertiesFromHandle(&mut q, h));
        if r == 0 {
            cx.val(
                &format!("ht{ht}"),
                format!(
                    "t{}/h{}/l{}.{}/w{}/c{:#x}/r{:#x}/u{:#x}/res{:x?}",
                    q.type_,
                    q.requested_handle_types,
                    q.location.type_,
                    q.location.id,
                    if q.win32_handle_meta_data.is_null() { "null" } else { "set" },
                    q.compression_type,
                    q.gpu_direct_rdma_capable,
                    q.usage,
                    q.reserved
                ),
            );
        }
        rec!(cx, cuMemRelease(h));
    }
    let mut q = prop(0);
    rec!(cx, cuMemGetAllocationPropertiesFromHandle(&mut q, 0));
    let h = cx.create(g, HT_NONE)?;
    rec!(cx, cuMemGetAllocationPropertiesFromHandle(null_mut(), h));
    rec!(cx, cuMemRelease(h));
    Ok(())
}

// ---------------------------------------------------------------- reservations

fn reserve(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let g = cx.gran()?;
    let try_reserve = |cx: &mut Cx, k: &str, size: usize, align: usize, hint: u64, flags: u64| -> (R, u64) {
        let mut a = 0u64;
        let r = rec!(cx, cuMemAddressReserve(&mut a, size, align, hint, flags));
        if r == 0 {
            let al = if align > g { align } else { g };
            cx.val(k, if a.is_multiple_of(al as u64) { "aligned" } else { "unaligned" });
        } else {
            cx.val(k, "-");
        }
        (r, a)
    };
    let mut keep = Vec::new();
    for (k, size, align) in [
        ("g", g, 0),
        ("page", 4096, 0),
        ("g_plus_page", g + 4096, 0),
        ("zero", 0, 0),
        ("align3", g, 3),
        ("align_page", g, 4096),
        ("align_2g", g, 2 * g),
        ("align_1gib", g, 1 << 30),
        ("huge", 1usize << 56, 0),
    ] {
        let (r, a) = try_reserve(cx, k, size, align, 0, 0);
        if r == 0 {
            keep.push((a, size));
        }
    }
    let (r, _) = try_reserve(cx, "flags1", g, 0, 0, 1);
    if r == 0 {
        return Err("flags accepted".into());
    }
    rec!(cx, cuMemAddressReserve(null_mut(), g, 0, 0, 0));
    // A hint: the address of a reservation just freed, then the same plus a page.
    let mut a = 0u64;
    setup!(cx, cuMemAddressReserve(&mut a, g, 0, 0, 0));
    setup!(cx, cuMemAddressFree(a, g));
    let mut b = 0u64;
    let r = rec!(cx, cuMemAddressReserve(&mut b, g, 0, a, 0));
    if r == 0 {
        cx.val("hint", if b == a { "honored" } else { "elsewhere" });
        keep.push((b, g));
    }
    let mut c = 0u64;
    let r = rec!(cx, cuMemAddressReserve(&mut c, g, 0, a + 4096, 0));
    if r == 0 {
        cx.val(
            "hint_unaligned",
            if c == a + 4096 {
                "honored"
            } else if c.is_multiple_of(g as u64) {
                "aligned"
            } else {
                "unaligned"
            },
        );
        keep.push((c, g));
    }
    // A hint inside a live reservation.
    let mut e = 0u64;
    let r = rec!(cx, cuMemAddressReserve(&mut e, g, 0, b, 0));
    if r == 0 {
        cx.val("hint_taken", if e == b { "same" } else { "elsewhere" });
        keep.push((e, g));
    }
    for (a, size) in keep {
        rec!(cx, cuMemAddressFree(a, size));
    }
    Ok(())
}

fn address_free(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let g = cx.gran()?;
    let a = cx.reserve(2 * g, 0)?;
    rec!(cx, cuMemAddressFree(a, g));
    rec!(cx, cuMemAddressFree(a + g as u64, g));
    rec!(cx, cuMemAddressFree(0, g));
    rec!(cx, cuMemAddressFree(a, 0));
    rec!(cx, cuMemAddressFree(a, 2 * g));
    rec!(cx, cuMemAddressFree(a, 2 * g));
    rec!(cx, cuMemAddressFree(UNKNOWN_VA, g));
    let d = cx.alloc(g)?;
    rec!(cx, cuMemAddressFree(d, g));
    // With a mapping in it.
    let b = cx.reserve(g, 0)?;
    let h = cx.create(g, HT_NONE)?;
    cx.map(b, g, h)?;
    rec!(cx, cuMemAddressFree(b, g));
    rec!(cx, cuMemUnmap(b, g));
    rec!(cx, cuMemAddressFree(b, g));
    rec!(cx, cuMemRelease(h));
    Ok(())
}

// ---------------------------------------------------------------- mappings

/// Mapping misuse (forged handles are in `vmm_forged_handles`).
fn map(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let g = cx.gran()?;
    let gg = g as u64;
    let a = cx.reserve(4 * g, 0)?;
    let h = cx.create(g, HT_NONE)?;
    let h2 = cx.create(2 * g, HT_NONE)?;
    rec!(cx, cuMemMap(a, g, 0, h, 0));
    rec!(cx, cuMemMap(a, g, 0, h, 0));
    rec!(cx, cuMemMap(a, g, 0, h2, 0));
    // The same handle a second time, beside the first.
    rec!(cx, cuMemMap(a + gg, g, 0, h, 0));
    rec!(cx, cuMemMap(a + 2 * gg + 4096, g, 0, h2, 0));
    rec!(cx, cuMemMap(a + 2 * gg, g + 4096, 0, h2, 0));
    rec!(cx, cuMemMap(a + 2 * gg, g, 4096, h2, 0));
    rec!(cx, cuMemMap(a + 2 * gg, 2 * g, 0, h, 0));
    rec!(cx, cuMemMap(a + 2 * gg, g, 0, h2, 1));
    rec!(cx, cuMemMap(a + 3 * gg, 2 * g, 0, h2, 0));
    rec!(cx, cuMemMap(UNKNOWN_VA, g, 0, h2, 0));
    rec!(cx, cuMemMap(a + 2 * gg, 0, 0, h2, 0));
    let d = cx.alloc(g)?;
    rec!(cx, cuMemMap(d, g, 0, h2, 0));
    // A nonzero offset into the handle (documented as "currently must be zero").
    let r = rec!(cx, cuMemMap(a + 2 * gg, g, g, h2, 0));
    if r == 0 {
        rec!(cx, cuMemUnmap(a + 2 * gg, g));
    }
    rec!(cx, cuMemMap(a + 2 * gg, 2 * g, 0, h2, 0));
    // One unmap over three mappings, then each.
    let r = rec!(cx, cuMemUnmap(a, 4 * g));
    if r != 0 {
        rec!(cx, cuMemUnmap(a, g));
        rec!(cx, cuMemUnmap(a + gg, g));
        rec!(cx, cuMemUnmap(a + 2 * gg, 2 * g));
    }
    rec!(cx, cuMemRelease(h));
    rec!(cx, cuMemRelease(h2));
    rec!(cx, cuMemAddressFree(a, 4 * g));
    Ok(())
}

fn unmap(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let g = cx.gran()?;
    let gg = g as u64;
    let a = cx.reserve(2 * g, 0)?;
    let h = cx.create(2 * g, HT_NONE)?;
    cx.map(a, 2 * g, h)?;
    cx.access(a, 2 * g, PROT_RW)?;
    rec!(cx, cuMemUnmap(a, g));
    rec!(cx, cuMemUnmap(a + gg, g));
    rec!(cx, cuMemUnmap(a + 4096, 2 * g - 4096));
    rec!(cx, cuMemUnmap(a, 0));
    rec!(cx, cuMemUnmap(UNKNOWN_VA, g));
    rec!(cx, cuMemUnmap(a, 2 * g));
    rec!(cx, cuMemUnmap(a, 2 * g));
    // After the unmap the range is a reservation again: copies fail, a new mapping
    // starts without access.
    let src = [1u8; 64];
    rec!(cx, cuMemcpyHtoD_v2(a, src.as_ptr() as *const c_void, 64));
    cx.map(a, 2 * g, h)?;
    let f = cx.get_access(a);
    cx.val("remapped_access", f);
    rec!(cx, cuMemUnmap(a, 2 * g));
    rec!(cx, cuMemRelease(h));
    rec!(cx, cuMemAddressFree(a, 2 * g));
    Ok(())
}

// ---------------------------------------------------------------- access

fn access(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let g = cx.gran()?;
    let gg = g as u64;
    let a = cx.reserve(2 * g, 0)?;
    let h = cx.create(g, HT_NONE)?;
    cx.map(a, g, h)?;
    // Mapped, no access yet.
    let f = cx.get_access(a);
    cx.val("before", f);
    let src = [7u8; 64];
    rec!(cx, cuMemcpyHtoD_v2(a, src.as_ptr() as *const c_void, 64));
    let mut dst = [0u8; 64];
    rec!(cx, cuMemcpyDtoH_v2(dst.as_mut_ptr() as P, a, 64));
    rec!(cx, cuMemsetD8_v2(a, 1, 64));
    // Bad requests.
    let good = rw(dev0(), PROT_RW);
    rec!(cx, cuMemSetAccess(a, g, null_mut(), 1));
    rec!(cx, cuMemSetAccess(a, g, &good, 0));
    let d1 = rw(MemLocation { type_: LOC_DEVICE, id: 1 }, PROT_RW);
    rec!(cx, cuMemSetAccess(a, g, &d1, 1));
    let host = rw(MemLocation { type_: LOC_HOST, id: 0 }, PROT_RW);
    rec!(cx, cuMemSetAccess(a, g, &host, 1));
    let bad_flags = rw(dev0(), 2);
    rec!(cx, cuMemSetAccess(a, g, &bad_flags, 1));
    let bad_flags = rw(dev0(), 7);
    rec!(cx, cuMemSetAccess(a, g, &bad_flags, 1));
    rec!(cx, cuMemSetAccess(a, 2 * g, &good, 1));
    rec!(cx, cuMemSetAccess(a + 4096, g - 4096, &good, 1));
    rec!(cx, cuMemSetAccess(a + gg, g, &good, 1));
    rec!(cx, cuMemSetAccess(a, 0, &good, 1));
    rec!(cx, cuMemSetAccess(UNKNOWN_VA, g, &good, 1));
    // Read-write.
    rec!(cx, cuMemSetAccess(a, g, &good, 1));
    let f = cx.get_access(a + 4096);
    cx.val("rw", f);
    cx.roundtrip("rw_copy", a + 128, 256, 0x3c);
    rec!(cx, cuMemsetD32_v2(a, 0xdead_beef, 64));
    let mut back = [0u32; 64];
    rec!(cx, cuMemcpyDtoH_v2(back.as_mut_ptr() as P, a, 256));
    cx.val("memset", ok(back.iter().all(|&w| w == 0xdead_beef)));
    // The same descriptor twice in one call.
    let two = [good, good];
    rec!(cx, cuMemSetAccess(a, g, two.as_ptr(), 2));
    // Access taken away again.
    let none = rw(dev0(), PROT_NONE);
    rec!(cx, cuMemSetAccess(a, g, &none, 1));
    let f = cx.get_access(a);
    cx.val("revoked", f);
    rec!(cx, cuMemcpyHtoD_v2(a, src.as_ptr() as *const c_void, 64));
    // cuMemGetAccess misuse.
    let mut fl = 0u64;
    let loc = dev0();
    rec!(cx, cuMemGetAccess(null_mut(), &loc, a));
    rec!(cx, cuMemGetAccess(&mut fl, null_mut(), a));
    let l1 = MemLocation { type_: LOC_DEVICE, id: 1 };
    rec!(cx, cuMemGetAccess(&mut fl, &l1, a));
    let lh = MemLocation { type_: LOC_HOST, id: 0 };
    rec!(cx, cuMemGetAccess(&mut fl, &lh, a));
    let f = cx.get_access(a + gg);
    cx.val("unmapped", f);
    let f = cx.get_access(UNKNOWN_VA);
    cx.val("unknown", f);
    let dptr = cx.alloc(4096)?;
    let f = cx.get_access(dptr);
    cx.val("mem_alloc", f);
    rec!(cx, cuMemUnmap(a, g));
    rec!(cx, cuMemRelease(h));
    rec!(cx, cuMemAddressFree(a, 2 * g));
    Ok(())
}

/// Read-only access: copies into it and out of it.
fn access_readonly(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let g = cx.gran()?;
    let a = cx.reserve(g, 0)?;
    let h = cx.create(g, HT_NONE)?;
    cx.map(a, g, h)?;
    let ro = rw(dev0(), PROT_READ);
    let r = rec!(cx, cuMemSetAccess(a, g, &ro, 1));
    if r == 0 {
        let f = cx.get_access(a);
        cx.val("flags", f);
        let mut dst = [0u8; 64];
        rec!(cx, cuMemcpyDtoH_v2(dst.as_mut_ptr() as P, a, 64));
        cx.val("zeroed", ok(dst.iter().all(|&b| b == 0)));
    }
    rec!(cx, cuMemUnmap(a, g));
    rec!(cx, cuMemRelease(h));
    rec!(cx, cuMemAddressFree(a, g));
    Ok(())
}

/// Two mappings of one handle, made accessible in one call that spans both, and copies,
/// memsets and queries across the seam.
fn span(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let g = cx.gran()?;
    let gg = g as u64;
    let a = cx.reserve(2 * g, 0)?;
    let h1 = cx.create(g, HT_NONE)?;
    let h2 = cx.create(g, HT_NONE)?;
    cx.map(a, g, h1)?;
    cx.map(a + gg, g, h2)?;
    let good = rw(dev0(), PROT_RW);
    rec!(cx, cuMemSetAccess(a, 2 * g, &good, 1));
    let seam = a + gg - 1024;
    cx.roundtrip("seam_copy", seam, 2048, 0x6b);
    rec!(cx, cuMemsetD8_v2(seam, 0x11, 2048));
    let mut back = vec![0u8; 2048];
    rec!(cx, cuMemcpyDtoH_v2(back.as_mut_ptr() as P, seam, 2048));
    cx.val("seam_memset", ok(back.iter().all(|&b| b == 0x11)));
    let bases = [("A", a, 2 * gg)];
    let (mut base, mut size) = (0u64, 0usize);
    let r = rec!(cx, cuMemGetAddressRange_v2(&mut base, &mut size, a + gg + 16));
    if r == 0 {
        cx.val("range", format!("{}/{}g", rel(base, &bases), size as f64 / g as f64));
    }
    let r = rec!(cx, cuMemGetAddressRange_v2(&mut base, &mut size, a + 16));
    if r == 0 {
        cx.val("range_first", format!("{}/{}g", rel(base, &bases), size as f64 / g as f64));
    }
    rec!(cx, cuMemUnmap(a, 2 * g));
    rec!(cx, cuMemRelease(h1));
    rec!(cx, cuMemRelease(h2));
    rec!(cx, cuMemAddressFree(a, 2 * g));
    Ok(())
}

// ---------------------------------------------------------------- aliasing and kernels

/// One handle mapped at two reservations: a write through one reads back through the
/// other, for copies, memsets and a kernel.
fn alias(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let g = cx.gran()?;
    let a = cx.reserve(g, 0)?;
    let b = cx.reserve(g, 0)?;
    let h = cx.create(g, HT_NONE)?;
    cx.map(a, g, h)?;
    cx.map(b, g, h)?;
    cx.access(a, g, PROT_RW)?;
    cx.access(b, g, PROT_RW)?;
    let src: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
    rec!(cx, cuMemcpyHtoD_v2(a + 4096, src.as_ptr() as *const c_void, 4096));
    let mut dst = vec![0u8; 4096];
    rec!(cx, cuMemcpyDtoH_v2(dst.as_mut_ptr() as P, b + 4096, 4096));
    cx.val("copy", ok(dst == src));
    rec!(cx, cuMemsetD32_v2(b, 0x0102_0304, 1024));
    let mut w = vec![0u32; 1024];
    rec!(cx, cuMemcpyDtoH_v2(w.as_mut_ptr() as P, a, 4096));
    cx.val("memset", ok(w.iter().all(|&x| x == 0x0102_0304)));
    // Device to device between the two views and ordinary memory.
    let d = cx.alloc(4096)?;
    rec!(cx, cuMemcpyDtoD_v2(d, a + 4096, 4096));
    let mut e = vec![0u8; 4096];
    rec!(cx, cuMemcpyDtoH_v2(e.as_mut_ptr() as P, d, 4096));
    cx.val("dtod", ok(e == src));
    // A kernel writes through A; the words are read through B.
    let m = cx.module()?;
    let f = cx.function(m, "fill_hash")?;
    let n = 1000u32;
    let (mut out, mut nn) = (a, n);
    let mut params = [pp(&mut out), pp(&mut nn)];
    cx.launch(f, [8, 1, 1], [128, 1, 1], 0, &mut params);
    rec!(cx, cuCtxSynchronize());
    let v = cx.dtoh_u32(b, n as usize)?;
    cx.val("kernel", ok(v.iter().enumerate().all(|(i, &x)| x == hash(i as u32))));
    rec!(cx, cuMemUnmap(a, g));
    // B still holds the data after A is gone.
    let v = cx.dtoh_u32(b, 4)?;
    cx.val("after_unmap", ok(v.iter().enumerate().all(|(i, &x)| x == hash(i as u32))));
    rec!(cx, cuMemUnmap(b, g));
    rec!(cx, cuMemRelease(h));
    rec!(cx, cuMemAddressFree(a, g));
    rec!(cx, cuMemAddressFree(b, g));
    Ok(())
}

/// A kernel writing to a mapping without access.
fn kernel_noaccess(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let g = cx.gran()?;
    let a = cx.reserve(g, 0)?;
    let h = cx.create(g, HT_NONE)?;
    cx.map(a, g, h)?;
    let m = cx.module()?;
    let f = cx.function(m, "poke")?;
    let mut p = a + 64;
    let mut params = [pp(&mut p)];
    cx.launch(f, [1, 1, 1], [1, 1, 1], 0, &mut params);
    rec!(cx, cuCtxSynchronize());
    rec!(cx, cuMemUnmap(a, g));
    Ok(())
}

// ---------------------------------------------------------------- release while mapped

fn release_mapped(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let g = cx.gran()?;
    let (a, h) = cx.mapped_rw(g, HT_NONE)?;
    rec!(cx, cuMemRelease(h));
    // The memory lives on while mapped.
    cx.roundtrip("still_usable", a + 512, 512, 0x42);
    let mut r2 = 0u64;
    let r = rec!(cx, cuMemRetainAllocationHandle(&mut r2, (a + 4096) as P));
    if r == 0 {
        cx.val(
            "retained",
            if r2 == h {
                "same"
            } else if r2 == 0 {
                "zero"
            } else {
                "other"
            },
        );
        let mut q = prop(-1);
        rec!(cx, cuMemGetAllocationPropertiesFromHandle(&mut q, r2));
        // A second mapping of the retained handle.
        let b = cx.reserve(g, 0)?;
        rec!(cx, cuMemMap(b, g, 0, r2, 0));
        rec!(cx, cuMemRelease(r2));
        rec!(cx, cuMemUnmap(b, g));
        rec!(cx, cuMemAddressFree(b, g));
    }
    rec!(cx, cuMemUnmap(a, g));
    let r = rec!(cx, cuMemRetainAllocationHandle(&mut r2, a as P));
    if r == 0 {
        rec!(cx, cuMemRelease(r2));
    }
    rec!(cx, cuMemAddressFree(a, g));
    Ok(())
}

fn retain(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let g = cx.gran()?;
    let gg = g as u64;
    let a = cx.reserve(2 * g, 0)?;
    let h = cx.create(g, HT_NONE)?;
    cx.map(a, g, h)?;
    let mut r = 0u64;
    let c = rec!(cx, cuMemRetainAllocationHandle(&mut r, (a + gg - 1) as P));
    if c == 0 {
        cx.val("last_byte", if r == h { "same" } else { "other" });
        rec!(cx, cuMemRelease(r));
    }
    rec!(cx, cuMemRetainAllocationHandle(&mut r, (a + gg) as P));
    rec!(cx, cuMemRetainAllocationHandle(&mut r, UNKNOWN_VA as P));
    rec!(cx, cuMemRetainAllocationHandle(null_mut(), a as P));
    let d = cx.alloc(4096)?;
    rec!(cx, cuMemRetainAllocationHandle(&mut r, d as P));
    rec!(cx, cuMemUnmap(a, g));
    rec!(cx, cuMemRelease(h));
    rec!(cx, cuMemAddressFree(a, 2 * g));
    Ok(())
}

// ---------------------------------------------------------------- shareable handles

fn export(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let g = cx.gran()?;
    let plain = cx.create(g, HT_NONE)?;
    let mut fd: i32 = -7;
    rec!(cx, cuMemExportToShareableHandle(pp(&mut fd), plain, HT_FD, 0));
    cx.val("plain_fd", fd);
    rec!(cx, cuMemRelease(plain));
    let h = cx.create(g, HT_FD)?;
    for (k, ht, flags) in [("win32", HT_WIN32, 0u64), ("fabric", HT_FABRIC, 0), ("none", HT_NONE, 0), ("flags1", HT_FD, 1)] {
        let mut x: u64 = 0xa5a5;
        let r = rec!(cx, cuMemExportToShareableHandle(pp(&mut x), h, ht, flags));
        if r == 0 {
            cx.val(k, "exported");
        }
    }
    rec!(cx, cuMemExportToShareableHandle(null_mut(), h, HT_FD, 0));
    let mut x = -1i32;
    rec!(cx, cuMemExportToShareableHandle(pp(&mut x), 0, HT_FD, 0));
    let mut fd1: u64 = 0xa5a5_a5a5_a5a5_a5a5;
    let r = rec!(cx, cuMemExportToShareableHandle(pp(&mut fd1), h, HT_FD, 0));
    if r != 0 {
        return Ok(());
    }
    // An int is written; the rest of a wider variable is left alone.
    cx.val("upper", if fd1 >> 32 == 0xa5a5_a5a5 { "untouched" } else { "written" });
    let fd1 = fd1 as u32 as i32;
    // SAFETY: fcntl on a descriptor number only reads its flags.
    let flags = unsafe { libc::fcntl(fd1, libc::F_GETFD) };
    cx.val("fd", if flags < 0 { "closed".to_string() } else { format!("open/cloexec={}", flags & libc::FD_CLOEXEC != 0) });
    let mut fd2 = -1i32;
    rec!(cx, cuMemExportToShareableHandle(pp(&mut fd2), h, HT_FD, 0));
    cx.val("distinct", fd2 != fd1);
    // Imported in the same process: a handle for the same memory.
    let mut imp = 0u64;
    let r = rec!(cx, cuMemImportFromShareableHandle(&mut imp, fd1 as usize as P, HT_FD));
    if r == 0 {
        cx.val("import", if imp == h { "same" } else { "other" });
        let mut q = prop(-1);
        rec!(cx, cuMemGetAllocationPropertiesFromHandle(&mut q, imp));
        cx.val("import_props", format!("t{}/h{}/l{}.{}", q.type_, q.requested_handle_types, q.location.type_, q.location.id));
        let mut imp2 = 0u64;
        rec!(cx, cuMemImportFromShareableHandle(&mut imp2, fd2 as usize as P, HT_FD));
        cx.val("import2", if imp2 == imp { "same" } else { "other" });
        let a = cx.reserve(g, 0)?;
        let b = cx.reserve(g, 0)?;
        cx.map(a, g, h)?;
        rec!(cx, cuMemMap(b, g, 0, imp, 0));
        cx.access(a, g, PROT_RW)?;
        let good = rw(dev0(), PROT_RW);
        rec!(cx, cuMemSetAccess(b, g, &good, 1));
        let src = [0x9du8; 256];
        rec!(cx, cuMemcpyHtoD_v2(a, src.as_ptr() as *const c_void, 256));
        let mut dst = [0u8; 256];
        rec!(cx, cuMemcpyDtoH_v2(dst.as_mut_ptr() as P, b, 256));
        cx.val("import_alias", ok(dst == src));
        rec!(cx, cuMemUnmap(a, g));
        rec!(cx, cuMemUnmap(b, g));
        rec!(cx, cuMemAddressFree(a, g));
        rec!(cx, cuMemAddressFree(b, g));
        rec!(cx, cuMemRelease(imp));
        if imp2 != 0 {
            rec!(cx, cuMemRelease(imp2));
        }
    }
    // Bad imports.
    let mut z = 0u64;
    rec!(cx, cuMemImportFromShareableHandle(&mut z, usize::MAX as P, HT_FD));
    // SAFETY: opening /dev/null read-only.
    let null_fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY) };
    rec!(cx, cuMemImportFromShareableHandle(&mut z, null_fd as usize as P, HT_FD));
    rec!(cx, cuMemImportFromShareableHandle(&mut z, fd1 as usize as P, HT_NONE));
    rec!(cx, cuMemImportFromShareableHandle(&mut z, fd1 as usize as P, HT_WIN32));
    rec!(cx, cuMemImportFromShareableHandle(null_mut(), fd1 as usize as P, HT_FD));
    // SAFETY: closing descriptors this case owns.
    unsafe {
        libc::close(null_fd);
        libc::close(fd1);
        libc::close(fd2);
    }
    rec!(cx, cuMemImportFromShareableHandle(&mut z, fd1 as usize as P, HT_FD));
    rec!(cx, cuMemRelease(h));
    Ok(())
}

// ---------------------------------------------------------------- pointers and other calls

/// Pointer attributes of VM memory (mapped read-write, mapped without access, reserved
/// only) and of cuMemAlloc memory, for the attributes the VM API touches. Each value is
/// read from a u64 pre-filled with 0xa5 bytes: `/w4` when the driver wrote 4 bytes.
fn pointer_attrs(cx: &mut Cx) -> Result<(), String> {
    let ctx = cx.primary()?;
    let g = cx.gran()?;
    let gg = g as u64;
    let a = cx.reserve(2 * g, 0)?;
    let h = cx.create(g, HT_FD)?;
    cx.map(a, g, h)?;
    let b = cx.reserve(g, 0)?;
    let h2 = cx.create(g, HT_NONE)?;
    cx.map(b, g, h2)?;
    cx.access(b, g, PROT_RW)?;
    let d = cx.alloc(3 * 4096)?;
    let bases = [("A", a, 2 * gg), ("B", b, gg), ("D", d, 3 * 4096)];
    // VM memory is made accessible after the queries of `a` without access.
    for (k, p) in [("noaccess", a + 100), ("unmapped", a + gg + 100), ("rw", b + 100), ("alloc", d + 100)] {
        let mut line = Vec::new();
        for attr in [1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20] {
            let mut v = 0xa5a5_a5a5_a5a5_a5a5u64;
            let r = rec!(cx, cuPointerGetAttribute(pp(&mut v), attr, p));
            if r != 0 {
                line.push(format!("{attr}:-"));
                continue;
            }
            let w = if v >> 32 == 0xa5a5_a5a5 { "/w4" } else { "" };
            let shown = match attr {
                1 => (if v as usize == ctx as usize {
                    "ctx"
                } else if v == 0 {
                    "null"
                } else {
                    "other"
                })
                .to_string(),
                3 | 4 | 11 | 19 => rel(v, &bases),
                17 => (if v == 0 { "null" } else { "pool" }).to_string(),
                7 | 20 => (if v == 0 { "zero" } else { "id" }).to_string(),
                12 | 18 => format!("{}", v),
                _ => format!("{:#x}", if w.is_empty() { v } else { v & 0xffff_ffff }),
            };
            line.push(format!("{attr}:{shown}{w}"));
        }
        let (mut base, mut size) = (0u64, 0usize);
        let r = rec!(cx, cuMemGetAddressRange_v2(&mut base, &mut size, p));
        line.push(if r == 0 { format!("range:{}/{}", rel(base, &bases), size) } else { "range:-".into() });
        cx.sub(k, line.join(" "));
    }
    rec!(cx, cuMemUnmap(a, g));
    rec!(cx, cuMemUnmap(b, g));
    rec!(cx, cuMemRelease(h));
    rec!(cx, cuMemRelease(h2));
    rec!(cx, cuMemAddressFree(a, 2 * g));
    rec!(cx, cuMemAddressFree(b, g));
    Ok(())
}

/// cuMemFree_v2 and cuMemGetAddressRange on VM addresses; cuMemGetInfo around a
/// cuMemCreate.
fn other_calls(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let g = cx.gran()?;
    let (a, h) = cx.mapped_rw(g, HT_NONE)?;
    rec!(cx, cuMemFree_v2(a));
    rec!(cx, cuMemFree_v2(a + 4096));
    let (mut f0, mut t) = (0usize, 0usize);
    setup!(cx, cuMemGetInfo_v2(&mut f0, &mut t));
    let size = 32 * g;
    let big = cx.create(size, HT_NONE)?;
    let mut f1 = 0usize;
    setup!(cx, cuMemGetInfo_v2(&mut f1, &mut t));
    let drop = f0.saturating_sub(f1);
    cx.val(
        "create_takes",
        if drop >= size && drop < size + (64 << 20) {
            "size"
        } else if drop == 0 {
            "nothing"
        } else {
            "other"
        },
    );
    rec!(cx, cuMemRelease(big));
    let mut f2 = 0usize;
    setup!(cx, cuMemGetInfo_v2(&mut f2, &mut t));
    cx.val("release_gives", if f2 + (64 << 20) >= f0 { "back" } else { "not" });
    rec!(cx, cuMemUnmap(a, g));
    rec!(cx, cuMemRelease(h));
    rec!(cx, cuMemAddressFree(a, g));
    Ok(())
}

/// VM memory made under a context that is then destroyed.
fn ctx_destroy(cx: &mut Cx) -> Result<(), String> {
    let prim = cx.primary()?;
    let g = cx.gran()?;
    let mut b: P = null_mut();
    setup!(cx, cuCtxCreate_v2(&mut b, 0, 0));
    let (a, h) = cx.mapped_rw(g, HT_NONE)?;
    let src = [0x77u8; 128];
    rec!(cx, cuMemcpyHtoD_v2(a, src.as_ptr() as *const c_void, 128));
    rec!(cx, cuCtxDestroy_v2(b));
    setup!(cx, cuCtxSetCurrent(prim));
    let mut dst = [0u8; 128];
    let r = rec!(cx, cuMemcpyDtoH_v2(dst.as_mut_ptr() as P, a, 128));
    if r == 0 {
        cx.val("survives", ok(dst == src));
    }
    let f = cx.get_access(a);
    cx.val("access", f);
    rec!(cx, cuMemUnmap(a, g));
    rec!(cx, cuMemRelease(h));
    rec!(cx, cuMemAddressFree(a, g));
    Ok(())
}

fn device_get_properties(cx: &mut Cx) -> Result<(), String> {
    let mut p = DevProp::default();
    rec!(cx, cuDeviceGetProperties(&mut p, 0));
    setup!(cx, cuInit(0));
    let r = rec!(cx, cuDeviceGetProperties(&mut p, 0));
    if r == 0 {
        // The 14 ints in cuda.h's order.
        let v = std::iter::once(p.max_threads_per_block).chain(p.max_threads_dim).chain(p.max_grid_size).chain([
            p.shared_mem_per_block,
            p.total_constant_memory,
            p.simd_width,
            p.mem_pitch,
            p.regs_per_block,
            p.clock_rate,
            p.texture_align,
        ]);
        cx.val("props", v.map(|v| v.to_string()).collect::<Vec<_>>().join(","));
    }
    rec!(cx, cuDeviceGetProperties(&mut p, 1));
    rec!(cx, cuDeviceGetProperties(&mut p, -1));
    rec!(cx, cuDeviceGetProperties(null_mut(), 0));
    Ok(())
}

/// Entry points CUDA 13.0 added beside older ones: the device of a context or stream,
/// synchronising a named context, the memory pools by location. (Recorded together with
/// the forged handles of `entries_13_0_forged`, the H200's driver crashed.)
fn entries_13_0(cx: &mut Cx) -> Result<(), String> {
    setup!(cx, cuInit(0));
    let mut dev = -7;
    rec!(cx, cuCtxGetDevice_v2(&mut dev, null_mut()));
    rec!(cx, cuCtxSynchronize_v2(null_mut()));
    let a = cx.primary()?;
    let mut b: P = null_mut();
    setup!(cx, cuCtxCreate_v2(&mut b, 0, 0));
    setup!(cx, cuCtxSetCurrent(a));
    for (k, c) in [("null", null_mut()), ("a", a), ("b", b)] {
        let mut dev = -7;
        let r = rec!(cx, cuCtxGetDevice_v2(&mut dev, c));
        cx.val(&format!("dev_{k}"), if r == 0 { dev.to_string() } else { "-".into() });
        rec!(cx, cuCtxSynchronize_v2(c));
    }
    rec!(cx, cuCtxGetDevice_v2(null_mut(), a));
    let mut s: P = null_mut();
    setup!(cx, cuStreamCreate(&mut s, 1));
    for (k, st) in [("named", s), ("null", null_mut()), ("legacy", 1 as P), ("per_thread", 2 as P)] {
        let mut dev = -7;
        let r = rec!(cx, cuStreamGetDevice(st, &mut dev));
        cx.val(&format!("stream_{k}"), if r == 0 { dev.to_string() } else { "-".into() });
    }
    rec!(cx, cuStreamGetDevice(s, null_mut()));
    let mut dflt: P = null_mut();
    setup!(cx, cuDeviceGetDefaultMemPool(&mut dflt, 0));
    for (k, ty, id, at) in [
        ("dev0", LOC_DEVICE, 0, PINNED),
        ("dev1", LOC_DEVICE, 1, PINNED),
        ("host", LOC_HOST, 0, PINNED),
        ("managed", LOC_DEVICE, 0, MANAGED),
        ("invalid", LOC_INVALID, 0, PINNED),
        ("type0", LOC_DEVICE, 0, 0),
    ] {
        let mut loc = MemLocation { type_: ty, id };
        let mut p: P = null_mut();
        let r = rec!(cx, cuMemGetDefaultMemPool(&mut p, &mut loc, at));
        let d = if r != 0 {
            "-"
        } else if p == dflt {
            "device_default"
        } else if p.is_null() {
            "null"
        } else {
            "other"
        };
        let mut q: P = null_mut();
        let r = rec!(cx, cuMemGetMemPool(&mut q, &mut loc, at));
        let c = if r != 0 {
            "-"
        } else if q == dflt {
            "device_default"
        } else if q.is_null() {
            "null"
        } else {
            "other"
        };
        cx.val(&format!("pool_{k}"), format!("{d}/{c}"));
    }
    let mut loc = dev0();
    rec!(cx, cuMemGetDefaultMemPool(null_mut(), &mut loc, PINNED));
    let mut p: P = null_mut();
    rec!(cx, cuMemGetDefaultMemPool(&mut p, null_mut(), PINNED));
    rec!(cx, cuMemSetMemPool(&mut loc, PINNED, dflt));
    rec!(cx, cuMemSetMemPool(&mut loc, PINNED, null_mut()));
    let mut cur: P = null_mut();
    rec!(cx, cuDeviceGetMemPool(&mut cur, 0));
    cx.val("current_after_set", if cur == dflt { "device_default" } else { "other" });
    rec!(cx, cuStreamDestroy_v2(s));
    rec!(cx, cuCtxDestroy_v2(b));
    Ok(())
}

/// The CUDA 13.0 entry points with a context or stream handle that was never made.
fn entries_13_0_forged(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let mut dev = -7;
    rec!(cx, cuCtxGetDevice_v2(&mut dev, 0x1234_5678 as P));
    rec!(cx, cuCtxSynchronize_v2(0x1234_5678 as P));
    rec!(cx, cuStreamGetDevice(0x1234_5678 as P, &mut dev));
    Ok(())
}

fn case(name: &str, run: fn(&mut Cx) -> Result<(), String>) -> Case {
    Case { name: name.to_string(), run: Box::new(run) }
}

pub fn cases() -> Vec<Case> {
    vec![
        case("vmm_granularity", granularity),
        case("vmm_nocontext", nocontext),
        case("vmm_create", create),
        case("vmm_create_props", create_props),
        case("vmm_release_bad", release_bad),
        case("vmm_release_twice", release_twice),
        case("vmm_forged_handles", forged_handles),
        case("vmm_props", props),
        case("vmm_reserve", reserve),
        case("vmm_address_free", address_free),
        case("vmm_map", map),
        case("vmm_unmap", unmap),
        case("vmm_access", access),
        case("vmm_access_readonly", access_readonly),
        case("vmm_span", span),
        case("vmm_alias", alias),
        case("vmm_kernel_noaccess", kernel_noaccess),
        case("vmm_release_mapped", release_mapped),
        case("vmm_retain", retain),
        case("vmm_export", export),
        case("vmm_pointer_attrs", pointer_attrs),
        case("vmm_other_calls", other_calls),
        case("vmm_ctx_destroy", ctx_destroy),
        case("device_get_properties", device_get_properties),
        case("entries_13_0", entries_13_0),
        case("entries_13_0_forged", entries_13_0_forged),
    ]
}
