//! CUDA arrays, mipmapped arrays, copies to and from them, texture and surface objects.
//! Validation follows what an H200 (driver 580) answered (`tex_api_*` of the
//! conformance runner); the objects themselves and the sampler are in `texture`.

use crate::boundary::{CuResult, HostPtr, Out};
use crate::cu::*;
use crate::memory::{self, Side};
use crate::state::{driver, handle, handle_id, AllocKind, Driver, Tag};
use crate::texture::{self, format::Format, Array, Object, Resource, TexDesc};
use std::ffi::c_void;
use std::sync::Arc;

use crate::cu::{
    CUDA_ARRAY3D_CUBEMAP as CUBEMAP, CUDA_ARRAY3D_DEPTH_TEXTURE as DEPTH_TEXTURE, CUDA_ARRAY3D_LAYERED as LAYERED,
    CUDA_ARRAY3D_TEXTURE_GATHER as TEXTURE_GATHER, CU_RESOURCE_TYPE_ARRAY as RES_ARRAY, CU_RESOURCE_TYPE_LINEAR as RES_LINEAR,
    CU_RESOURCE_TYPE_MIPMAPPED_ARRAY as RES_MIPMAP, CU_RESOURCE_TYPE_PITCH2D as RES_PITCH2D,
};
/// Flags this emulation refuses: sparse and deferred-mapping arrays need the
/// virtual-memory mapping of arrays (cuMemMapArrayAsync), which it does not have.
const UNSUPPORTED_FLAGS: u32 = CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING;

/// Texture alignment and pitch alignment of the H200 profile (CU_DEVICE_ATTRIBUTE_
/// TEXTURE_ALIGNMENT, TEXTURE_PITCH_ALIGNMENT): linear and pitched resources must
/// start on the first and have a pitch that is a multiple of the second.
const TEXTURE_ALIGNMENT: u64 = 512;
const PITCH_ALIGNMENT: u64 = 32;
/// Largest 1D, 2D, 3D extents (H200: MAXIMUM_TEXTURE1D_WIDTH 131072, 2D 131072 x 65536,
/// 3D 16384 each, layered 2D 32768 x 32768 x 2048, 1D linear 2^28 elements).
const MAX_1D: u64 = 131072;
const MAX_2D: (u64, u64) = (131072, 65536);
const MAX_3D: u64 = 16384;
const MAX_LAYERS: u64 = 2048;
const MAX_LINEAR: u64 = 1 << 28;

fn check_format(format: u32, channels: u32) -> CuResult<Format> {
    let f = Format::from_cu(format).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if !matches!(channels, 1 | 2 | 4) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(f)
}

/// Validates a 3D descriptor as cuArray3DCreate does.
fn check_3d(d: &CUDA_ARRAY3D_DESCRIPTOR) -> CuResult {
    check_format(d.format, d.num_channels)?;
    let (w, h, z, fl) = (d.width as u64, d.height as u64, d.depth as u64, d.flags);
    if fl & UNSUPPORTED_FLAGS != 0 {
        return Err(CUDA_ERROR_NOT_SUPPORTED);
    }
    if w == 0 || fl & DEPTH_TEXTURE != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if fl & CUBEMAP != 0 {
        let ok = w == h && z > 0 && if fl & LAYERED != 0 { z.is_multiple_of(6) && z / 6 <= MAX_LAYERS } else { z == 6 };
        return if ok && w <= 32768 { Ok(()) } else { Err(CUDA_ERROR_INVALID_VALUE) };
    }
    if fl & LAYERED != 0 {
        return if z == 0 || z > MAX_LAYERS || w > 32768 || h > 32768 { Err(CUDA_ERROR_INVALID_VALUE) } else { Ok(()) };
    }
    if fl & TEXTURE_GATHER != 0 && (z != 0 || h == 0) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    match (h, z) {
        (0, 0) if w <= MAX_1D => Ok(()),
        (_, 0) if h > 0 && w <= MAX_2D.0 && h <= MAX_2D.1 => Ok(()),
        (h, z) if h > 0 && z > 0 && w <= MAX_3D && h <= MAX_3D && z <= MAX_3D => Ok(()),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

/// Allocates an array's memory (zero-filled) and registers it; returns its id.
fn make_array(d: &mut Driver, ctx: u64, desc: &CUDA_ARRAY3D_DESCRIPTOR, parent: Option<u64>) -> CuResult<u64> {
    let f = check_format(desc.format, desc.num_channels)?;
    let elem = f.bytes() as u64 * desc.num_channels as u64;
    let bytes = (desc.width as u64).max(1) * (desc.height as u64).max(1) * (desc.depth as u64).max(1) * elem;
    let base = memory::allocate(d, ctx, bytes, AllocKind::Array, None)?;
    let id = d.new_id();
    d.arrays.insert(
        id,
        Arc::new(Array {
            width: desc.width as u64,
            height: desc.height as u64,
            depth: desc.depth as u64,
            format: desc.format,
            channels: desc.num_channels,
            flags: desc.flags,
            base,
            parent,
        }),
    );
    Ok(id)
}

fn array_of(d: &Driver, a: *mut c_void) -> CuResult<Arc<Array>> {
    handle_id(Tag::Array, a).and_then(|id| d.arrays.get(&id).cloned()).ok_or(CUDA_ERROR_INVALID_VALUE)
}

pub fn array_create(out: Out<*mut c_void>, desc: Option<CUDA_ARRAY_DESCRIPTOR>) -> CuResult {
    let mut d = driver()?;
    let ctx = d.current()?;
    out.required()?;
    let desc = desc.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let d3 = CUDA_ARRAY3D_DESCRIPTOR {
        width: desc.width,
        height: desc.height,
        depth: 0,
        format: desc.format,
        num_channels: desc.num_channels,
        flags: 0,
    };
    check_3d(&d3)?;
    let id = make_array(&mut d, ctx, &d3, None)?;
    out.set(handle(Tag::Array, id))
}

pub fn array3d_create(out: Out<*mut c_void>, desc: Option<CUDA_ARRAY3D_DESCRIPTOR>) -> CuResult {
    let mut d = driver()?;
    let ctx = d.current()?;
    out.required()?;
    let desc = desc.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    check_3d(&desc)?;
    let id = make_array(&mut d, ctx, &desc, None)?;
    out.set(handle(Tag::Array, id))
}

pub fn array_destroy(a: *mut c_void) -> CuResult {
    let mut d = driver()?;
    let id = handle_id(Tag::Array, a).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    let arr = d.arrays.get(&id).cloned().ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    if arr.parent.is_some() {
        // A level belongs to its mipmapped array (the H200 answers success and keeps it).
        return Ok(());
    }
    d.arrays.remove(&id);
    memory::release(&mut d, arr.base)
}

pub fn array_get_descriptor(out: Out<CUDA_ARRAY_DESCRIPTOR>, a: *mut c_void) -> CuResult {
    let d = driver()?;
    out.required()?;
    let arr = array_of(&d, a)?;
    out.set(CUDA_ARRAY_DESCRIPTOR {
        width: arr.width as usize,
        height: arr.height as usize,
        format: arr.format,
        num_channels: arr.channels,
    })
}

pub fn array3d_get_descriptor(out: Out<CUDA_ARRAY3D_DESCRIPTOR>, a: *mut c_void) -> CuResult {
    let d = driver()?;
    out.required()?;
    let arr = array_of(&d, a)?;
    out.set(CUDA_ARRAY3D_DESCRIPTOR {
        width: arr.width as usize,
        height: arr.height as usize,
        depth: arr.depth as usize,
        format: arr.format,
        num_channels: arr.channels,
        flags: arr.flags,
    })
}

pub fn mipmapped_create(out: Out<*mut c_void>, desc: Option<CUDA_ARRAY3D_DESCRIPTOR>, levels: u32) -> CuResult {
    let mut d = driver()?;
    let ctx = d.current()?;
    out.required()?;
    let desc = desc.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    check_3d(&desc)?;
    // Levels past the 1x1x1 one are not made (the H200 accepts the request).
    let layered = desc.flags & (LAYERED | CUBEMAP) != 0;
    let largest = desc.width.max(desc.height).max(if layered { 0 } else { desc.depth }).max(1) as u64;
    let full = 64 - largest.leading_zeros();
    let n = levels.clamp(1, full);
    let mut ids = Vec::new();
    for l in 0..n {
        let shrink = |v: usize| if v == 0 { 0 } else { (v >> l).max(1) };
        let ld = CUDA_ARRAY3D_DESCRIPTOR {
            width: shrink(desc.width),
            height: shrink(desc.height),
            depth: if layered { desc.depth } else { shrink(desc.depth) },
            ..desc
        };
        ids.push(make_array(&mut d, ctx, &ld, Some(0))?);
    }
    let id = d.new_id();
    d.mipmaps.insert(id, ids);
    out.set(handle(Tag::Mipmap, id))
}

pub fn mipmapped_get_level(out: Out<*mut c_void>, m: *mut c_void, level: u32) -> CuResult {
    let d = driver()?;
    out.required()?;
    let levels = handle_id(Tag::Mipmap, m).and_then(|id| d.mipmaps.get(&id)).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    let id = *levels.get(level as usize).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    out.set(handle(Tag::Array, id))
}

pub fn mipmapped_destroy(m: *mut c_void) -> CuResult {
    let mut d = driver()?;
    let id = handle_id(Tag::Mipmap, m).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    let levels = d.mipmaps.remove(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    for l in levels {
        if let Some(a) = d.arrays.remove(&l) {
            memory::release(&mut d, a.base)?;
        }
    }
    Ok(())
}

fn mipmap_levels(d: &Driver, m: u64) -> CuResult<Vec<Arc<Array>>> {
    let ids = handle_id(Tag::Mipmap, m as usize as *mut c_void).and_then(|id| d.mipmaps.get(&id)).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    ids.iter().map(|i| d.arrays.get(i).cloned().ok_or(CUDA_ERROR_INVALID_VALUE)).collect()
}

// ---- copies ------------------------------------------------------------------------

/// One side of a 3D copy: where its (x, y, z) origin is, its row and slice pitches, the
/// side it must be on, and the extent it may not leave (arrays).
struct End {
    addr: u64,
    pitch: u64,
    slice: u64,
    side: Option<Side>,
}

#[allow(clippy::too_many_arguments)]
fn end(
    d: &Driver,
    mt: u32,
    host: u64,
    dev: u64,
    arr: *mut c_void,
    x: usize,
    y: usize,
    z: usize,
    pitch: usize,
    height: usize,
    w: u64,
    h: u64,
    depth: u64,
) -> CuResult<End> {
    let (x, y, z) = (x as u64, y as u64, z as u64);
    match mt {
        CU_MEMORYTYPE_ARRAY => {
            let a = array_of(d, arr)?;
            let l = a.layout();
            let row = l.width * l.elem();
            // Inside the array (an offset that is not a whole element is accepted, as on
            // the H200).
            if x + w > row || y + h > l.height || z + depth > l.depth {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            Ok(End { addr: l.base + z * l.slice + y * l.pitch + x, pitch: row, slice: l.slice, side: Some(Side::Device) })
        }
        CU_MEMORYTYPE_HOST | CU_MEMORYTYPE_DEVICE | CU_MEMORYTYPE_UNIFIED => {
            let pitch = if pitch == 0 { w } else { pitch as u64 };
            let slice = pitch * if height == 0 { h } else { height as u64 };
            let (base, side) = match mt {
                CU_MEMORYTYPE_HOST => (host, Some(Side::Host)),
                CU_MEMORYTYPE_DEVICE => (dev, Some(Side::Device)),
                _ => (dev, None),
            };
            Ok(End { addr: base + z * slice + y * pitch + x, pitch, slice, side })
        }
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

/// A 3D copy (any side an array, host or device memory), slice by slice.
pub fn memcpy_3d(p: Option<CUDA_MEMCPY3D>, stream: Option<CUstream>) -> CuResult {
    let c = p.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let d = driver()?;
    match stream {
        Some(s) => d.stream_context(s).map(|_| ())?,
        None => d.current().map(|_| ())?,
    }
    copy_3d(&d, &c, false)?;
    let d = if crate::queue::deferred() {
        // Copies to and from arrays run now, after the work queued before them.
        let key = crate::queue::key(&d, stream.unwrap_or(std::ptr::null_mut()))?;
        drop(d);
        crate::queue::force_stream(key, "3D copy")?;
        driver()?
    } else {
        d
    };
    copy_3d(&d, &c, true)
}

/// A 3D copy (a graph's memcpy node): validated, and done when `run`.
pub fn graph_copy_3d(c: &CUDA_MEMCPY3D, run: bool) -> CuResult {
    let d = driver()?;
    copy_3d(&d, c, run)
}

fn copy_3d(d: &crate::state::Driver, c: &CUDA_MEMCPY3D, run: bool) -> CuResult {
    if c.src_lod != 0 || c.dst_lod != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let (w, h, depth) = (c.width_in_bytes as u64, c.height.max(1) as u64, c.depth.max(1) as u64);
    if c.width_in_bytes == 0 || c.height == 0 || c.depth == 0 {
        return Ok(());
    }
    let src = end(
        d,
        c.src_memory_type,
        c.src_host as u64,
        c.src_device,
        c.src_array,
        c.src_x_in_bytes,
        c.src_y,
        c.src_z,
        c.src_pitch,
        c.src_height,
        w,
        h,
        depth,
    )?;
    let dst = end(
        d,
        c.dst_memory_type,
        c.dst_host as u64,
        c.dst_device,
        c.dst_array,
        c.dst_x_in_bytes,
        c.dst_y,
        c.dst_z,
        c.dst_pitch,
        c.dst_height,
        w,
        h,
        depth,
    )?;
    if (h > 1 && (src.pitch < w || dst.pitch < w)) || (depth > 1 && (src.slice < src.pitch * h || dst.slice < dst.pitch * h)) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if run {
        for k in 0..depth {
            memory::copy_2d(d, dst.addr + k * dst.slice, dst.pitch, src.addr + k * src.slice, src.pitch, w, h, dst.side, src.side)?;
        }
    }
    Ok(())
}

/// A 2D copy with an array on either side goes through the 3D path.
pub fn memcpy_2d_arrays(c: &CUDA_MEMCPY2D, stream: Option<CUstream>) -> CuResult {
    let mut m: CUDA_MEMCPY3D = CUDA_MEMCPY3D {
        src_x_in_bytes: c.src_x_in_bytes,
        src_y: c.src_y,
        src_z: 0,
        src_lod: 0,
        src_memory_type: c.src_memory_type,
        src_host: c.src_host,
        src_device: c.src_device,
        src_array: c.src_array,
        reserved0: std::ptr::null_mut(),
        src_pitch: c.src_pitch,
        src_height: 0,
        dst_x_in_bytes: c.dst_x_in_bytes,
        dst_y: c.dst_y,
        dst_z: 0,
        dst_lod: 0,
        dst_memory_type: c.dst_memory_type,
        dst_host: c.dst_host,
        dst_device: c.dst_device,
        dst_array: c.dst_array,
        reserved1: std::ptr::null_mut(),
        dst_pitch: c.dst_pitch,
        dst_height: 0,
        width_in_bytes: c.width_in_bytes,
        height: c.height,
        depth: 1,
    };
    m.src_height = m.height;
    m.dst_height = m.height;
    memcpy_3d(Some(m), stream)
}

/// cuMemcpyHtoA / AtoH / DtoA / AtoD: `n` bytes at byte `offset` of a 1D view of the array.
pub fn memcpy_array_1d(
    a: *mut c_void,
    offset: usize,
    other: u64,
    other_type: u32,
    n: usize,
    to_array: bool,
    stream: Option<CUstream>,
) -> CuResult {
    let (host, dev) = if other_type == CU_MEMORYTYPE_HOST { (other, 0) } else { (0, other) };
    let d = driver()?;
    let arr = array_of(&d, a)?;
    drop(d);
    let row = arr.layout().pitch as usize;
    // The array's rows are contiguous: a 1D copy inside the first row (as the H200's
    // arrays of height 0 or 1 are laid out).
    let mut c = CUDA_MEMCPY2D {
        src_x_in_bytes: 0,
        src_y: 0,
        src_memory_type: other_type,
        src_host: host as *const c_void,
        src_device: dev,
        src_array: std::ptr::null_mut(),
        src_pitch: 0,
        dst_x_in_bytes: 0,
        dst_y: 0,
        dst_memory_type: other_type,
        dst_host: host as *mut c_void,
        dst_device: dev,
        dst_array: std::ptr::null_mut(),
        dst_pitch: 0,
        width_in_bytes: n,
        height: 1,
    };
    if offset + n > row {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if to_array {
        c.dst_memory_type = CU_MEMORYTYPE_ARRAY;
        c.dst_array = a;
        c.dst_x_in_bytes = offset;
    } else {
        c.src_memory_type = CU_MEMORYTYPE_ARRAY;
        c.src_array = a;
        c.src_x_in_bytes = offset;
    }
    memcpy_2d_arrays(&c, stream)
}

pub fn memcpy_htoa(a: *mut c_void, offset: usize, src: HostPtr, n: usize) -> CuResult {
    memcpy_array_1d(a, offset, src.0, CU_MEMORYTYPE_HOST, n, true, None)
}
pub fn memcpy_atoh(dst: HostPtr, a: *mut c_void, offset: usize, n: usize) -> CuResult {
    memcpy_array_1d(a, offset, dst.0, CU_MEMORYTYPE_HOST, n, false, None)
}
pub fn memcpy_dtoa(a: *mut c_void, offset: usize, src: CUdeviceptr, n: usize) -> CuResult {
    memcpy_array_1d(a, offset, src, CU_MEMORYTYPE_DEVICE, n, true, None)
}
pub fn memcpy_atod(dst: CUdeviceptr, a: *mut c_void, offset: usize, n: usize) -> CuResult {
    memcpy_array_1d(a, offset, dst, CU_MEMORYTYPE_DEVICE, n, false, None)
}

// ---- texture and surface objects ---------------------------------------------------

/// Whether `ptr` meets the texture alignment. The emulated allocator aligns bases to 256
/// bytes, the H200's to far more: alignment is measured from the allocation's base, so a
/// pointer the device accepts (its base plus a multiple of 512) is accepted here.
fn texture_aligned(d: &Driver, ptr: u64) -> bool {
    let base = d.find_alloc(ptr).map(|a| a.base).unwrap_or(0);
    (ptr - base).is_multiple_of(TEXTURE_ALIGNMENT)
}

/// A resource descriptor to the resource it names, validated as cuTexObjectCreate does.
fn resource(d: &Driver, r: &CUDA_RESOURCE_DESC) -> CuResult<Resource> {
    if r.flags != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let fmt = |w: u64| ((w & 0xffff_ffff) as u32, (w >> 32) as u32);
    Ok(match r.res_type {
        RES_ARRAY => {
            let a = r.res[0] as usize as *mut c_void;
            Resource::Array { handle: r.res[0], array: array_of(d, a)? }
        }
        RES_MIPMAP => Resource::Mipmap { handle: r.res[0], levels: mipmap_levels(d, r.res[0])? },
        RES_LINEAR => {
            let (format, channels) = fmt(r.res[1]);
            let f = check_format(format, channels)?;
            let (ptr, bytes) = (r.res[0], r.res[2]);
            if ptr == 0 || !texture_aligned(d, ptr) || bytes / (f.bytes() as u64 * channels as u64) > MAX_LINEAR {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            // What a fetch may read must be memory the driver knows (the device does
            // not check; an emulated fetch must not read outside an allocation).
            let usable = bytes - bytes % (f.bytes() as u64 * channels as u64);
            if usable > 0 && d.check_range(ptr, usable).is_err() && memory::side_of(d, ptr) != Side::Host {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            Resource::Linear { ptr, format, channels, bytes: usable }
        }
        RES_PITCH2D => {
            let (format, channels) = fmt(r.res[1]);
            let f = check_format(format, channels)?;
            let (ptr, width, height, pitch) = (r.res[0], r.res[2], r.res[3], r.res[4]);
            if ptr == 0 || !texture_aligned(d, ptr) || !pitch.is_multiple_of(PITCH_ALIGNMENT) || pitch == 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let elem = f.bytes() as u64 * channels as u64;
            // A width past the pitch is accepted by the H200; the emulation reads only
            // whole rows inside the pitch.
            let width = width.min(pitch / elem);
            if width > 0
                && height > 0
                && d.check_range(ptr, pitch * (height - 1) + width * elem).is_err()
                && memory::side_of(d, ptr) != Side::Host
            {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            Resource::Pitch2D { ptr, format, channels, width, height, pitch }
        }
        _ => return Err(CUDA_ERROR_INVALID_VALUE),
    })
}

fn resource_desc(res: &Resource) -> CUDA_RESOURCE_DESC {
    let mut r = CUDA_RESOURCE_DESC::default();
    match res {
        Resource::Array { handle, .. } => {
            r.res_type = RES_ARRAY;
            r.res[0] = *handle;
        }
        Resource::Mipmap { handle, .. } => {
            r.res_type = RES_MIPMAP;
            r.res[0] = *handle;
        }
        Resource::Linear { ptr, format, channels, bytes } => {
            r.res_type = RES_LINEAR;
            r.res = [0; 16];
            r.res[0] = *ptr;
            r.res[1] = *format as u64 | ((*channels as u64) << 32);
            r.res[2] = *bytes;
        }
        Resource::Pitch2D { ptr, format, channels, width, height, pitch } => {
            r.res_type = RES_PITCH2D;
            r.res[0] = *ptr;
            r.res[1] = *format as u64 | ((*channels as u64) << 32);
            r.res[2] = *width;
            r.res[3] = *height;
            r.res[4] = *pitch;
        }
    }
    r
}

pub fn tex_object_create(
    out: Out<u64>,
    res: Option<CUDA_RESOURCE_DESC>,
    td: Option<CUDA_TEXTURE_DESC>,
    view: Option<CUDA_RESOURCE_VIEW_DESC>,
) -> CuResult {
    let d = driver()?;
    d.current()?;
    out.required()?;
    let r = res.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let t = td.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let resource = resource(&d, &r)?;
    if t.address_mode.iter().any(|&m| m > 3) || t.filter_mode > 1 || t.mipmap_filter_mode > 1 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // A view changes the format or range an array is read with: only an identity view
    // (format NONE) is emulated; other views on arrays are refused as on the H200 for a
    // mismatched format. Views on linear and pitched memory are ignored, as there.
    let view = match (&resource, view) {
        (Resource::Array { .. } | Resource::Mipmap { .. }, Some(v)) if v.format != 0 => return Err(CUDA_ERROR_INVALID_VALUE),
        (Resource::Array { .. } | Resource::Mipmap { .. }, Some(v)) => Some(v),
        _ => None,
    };
    let desc = TexDesc {
        address: t.address_mode,
        filter: t.filter_mode,
        flags: t.flags,
        max_anisotropy: t.max_anisotropy,
        mip_filter: t.mipmap_filter_mode,
        mip_bias: t.mipmap_level_bias,
        min_lod: t.min_mipmap_level_clamp,
        max_lod: t.max_mipmap_level_clamp,
        border: t.border_color,
    };
    let words = view.map(|v| {
        [
            v.format as u64,
            v.width as u64,
            v.height as u64,
            v.depth as u64,
            v.first_mipmap_level as u64,
            v.last_mipmap_level as u64,
            v.first_layer as u64,
            v.last_layer as u64,
            0,
            0,
            0,
        ]
    });
    drop(d);
    let h = texture::register(Object::Texture { res: resource, desc, view: words });
    out.set(h)
}

/// Destroying an unknown object (0, destroyed before) answers success, as on the H200.
pub fn tex_object_destroy(h: u64) -> CuResult {
    driver()?;
    if let Some(o) = texture::lookup(h) {
        if matches!(*o, Object::Texture { .. }) {
            texture::unregister(h);
        }
    }
    Ok(())
}

fn texture_of(h: u64) -> CuResult<Arc<Object>> {
    texture::lookup(h).filter(|o| matches!(**o, Object::Texture { .. })).ok_or(CUDA_ERROR_INVALID_VALUE)
}

pub fn tex_object_get_resource_desc(out: Out<CUDA_RESOURCE_DESC>, h: u64) -> CuResult {
    driver()?;
    out.required()?;
    match &*texture_of(h)? {
        Object::Texture { res, .. } => out.set(resource_desc(res)),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

pub fn tex_object_get_texture_desc(out: Out<CUDA_TEXTURE_DESC>, h: u64) -> CuResult {
    driver()?;
    out.required()?;
    match &*texture_of(h)? {
        Object::Texture { desc, .. } => out.set(CUDA_TEXTURE_DESC {
            address_mode: desc.address,
            filter_mode: desc.filter,
            flags: desc.flags,
            max_anisotropy: desc.max_anisotropy,
            mipmap_filter_mode: desc.mip_filter,
            mipmap_level_bias: desc.mip_bias,
            min_mipmap_level_clamp: desc.min_lod,
            max_mipmap_level_clamp: desc.max_lod,
            border_color: desc.border,
            reserved: [0; 12],
        }),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

/// Without a view, the H200 answers success with a zeroed descriptor.
pub fn tex_object_get_resource_view_desc(out: Out<CUDA_RESOURCE_VIEW_DESC>, h: u64) -> CuResult {
    driver()?;
    out.required()?;
    match &*texture_of(h)? {
        Object::Texture { view, .. } => {
            let v = view.unwrap_or([0; 11]);
            out.set(CUDA_RESOURCE_VIEW_DESC {
                format: v[0] as u32,
                width: v[1] as usize,
                height: v[2] as usize,
                depth: v[3] as usize,
                first_mipmap_level: v[4] as u32,
                last_mipmap_level: v[5] as u32,
                first_layer: v[6] as u32,
                last_layer: v[7] as u32,
                reserved: [0; 16],
            })
        }
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

pub fn surf_object_create(out: Out<u64>, res: Option<CUDA_RESOURCE_DESC>) -> CuResult {
    let d = driver()?;
    d.current()?;
    out.required()?;
    let r = res.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if r.res_type != RES_ARRAY {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // An array made without CUDA_ARRAY3D_SURFACE_LDST is accepted too (measured).
    let resource = resource(&d, &r)?;
    drop(d);
    out.set(texture::register(Object::Surface { res: resource }))
}

pub fn surf_object_destroy(h: u64) -> CuResult {
    driver()?;
    if let Some(o) = texture::lookup(h) {
        if matches!(*o, Object::Surface { .. }) {
            texture::unregister(h);
        }
    }
    Ok(())
}

pub fn surf_object_get_resource_desc(out: Out<CUDA_RESOURCE_DESC>, h: u64) -> CuResult {
    driver()?;
    out.required()?;
    match texture::lookup(h).as_deref() {
        Some(Object::Surface { res, .. }) => out.set(resource_desc(res)),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}
