//! Arrays, texture and surface objects, and copies into and out of arrays, on the driver's
//! arrays (cuArray3DCreate) and objects (cuTexObjectCreate, cuSurfObjectCreate).
//!
//! The runtime describes an array's element with a cudaChannelFormatDesc (bits per
//! channel, kind); the driver with a CUarray_format and a channel count: 1, 2 or 4
//! channels of the same width, (8/16/32-bit signed or unsigned, 16/32-bit float), else
//! cudaErrorInvalidChannelDescriptor. Array flags (layered, surface load/store, cubemap,
//! texture gather), resource types, address and filter modes have the same numbers in both
//! APIs. Positions and widths in array copies are in elements for arrays and in bytes for
//! linear memory, as the runtime documents; the driver takes bytes.

use std::ffi::c_void;

use crate::driver::{self as d, Array3DDesc, Handle, Memcpy2D, Memcpy3D, ResourceDesc, TextureDesc};
use crate::error::{self, check, Res};
use crate::memory::Kind;
use crate::state;

/// cudaErrorInvalidChannelDescriptor.
const INVALID_CHANNEL_DESCRIPTOR: error::Error = 20;
/// CU_MEMORYTYPE_ARRAY.
const ARRAY: u32 = 3;

/// driver_types.h's `struct cudaChannelFormatDesc`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChannelDesc {
    pub x: i32,
    pub y: i32,
    pub z: i32,
    pub w: i32,
    /// cudaChannelFormatKind: 0 signed, 1 unsigned, 2 float, 3 none.
    pub f: i32,
}

/// driver_types.h's `struct cudaExtent` (and `cudaPos`: x, y, z).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Extent {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
}

/// driver_types.h's `struct cudaPitchedPtr`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PitchedPtr {
    pub ptr: *mut c_void,
    pub pitch: usize,
    pub xsize: usize,
    pub ysize: usize,
}

/// driver_types.h's `struct cudaMemcpy3DParms`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Memcpy3DParms {
    pub src_array: Handle,
    pub src_pos: Extent,
    pub src_ptr: PitchedPtr,
    pub dst_array: Handle,
    pub dst_pos: Extent,
    pub dst_ptr: PitchedPtr,
    pub extent: Extent,
    pub kind: i32,
}

/// driver_types.h's `struct cudaResourceDesc`, its union as words.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RtResourceDesc {
    pub res_type: i32,
    pub res: [u64; 16],
    pub flags: u32,
}

/// texture_types.h's `struct cudaTextureDesc`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct RtTextureDesc {
    pub address_mode: [i32; 3],
    pub filter_mode: i32,
    pub read_mode: i32,
    pub srgb: i32,
    pub border_color: [f32; 4],
    pub normalized_coords: i32,
    pub max_anisotropy: u32,
    pub mipmap_filter_mode: i32,
    pub mipmap_level_bias: f32,
    pub min_mipmap_level_clamp: f32,
    pub max_mipmap_level_clamp: f32,
    pub disable_trilinear_optimization: i32,
    pub seamless_cubemap: i32,
}

/// cudaCreateChannelDesc.
pub fn channel_desc(x: i32, y: i32, z: i32, w: i32, f: i32) -> ChannelDesc {
    ChannelDesc { x, y, z, w, f }
}

/// The driver's (CUarray_format, channel count) for a channel description.
fn format_of(c: &ChannelDesc) -> Res<(u32, u32)> {
    let bits = [c.x, c.y, c.z, c.w];
    let n = bits.iter().take_while(|&&b| b != 0).count();
    if n == 0 || n == 3 || bits[n..].iter().any(|&b| b != 0) || bits[..n].iter().any(|&b| b != c.x) {
        return Err(INVALID_CHANNEL_DESCRIPTOR);
    }
    let format = match (c.f, c.x) {
        (1, 8) => 0x01,
        (1, 16) => 0x02,
        (1, 32) => 0x03,
        (0, 8) => 0x08,
        (0, 16) => 0x09,
        (0, 32) => 0x0a,
        (2, 16) => 0x10,
        (2, 32) => 0x20,
        _ => return Err(INVALID_CHANNEL_DESCRIPTOR),
    };
    Ok((format, n as u32))
}

/// The channel description of a driver format (cudaGetChannelDesc).
fn desc_of(format: u32, channels: u32) -> ChannelDesc {
    let (f, bits) = match format {
        0x01 => (1, 8),
        0x02 => (1, 16),
        0x03 => (1, 32),
        0x08 => (0, 8),
        0x09 => (0, 16),
        0x0a => (0, 32),
        0x10 => (2, 16),
        0x20 => (2, 32),
        _ => (3, 0),
    };
    let b = |i: u32| if i < channels { bits } else { 0 };
    ChannelDesc { x: b(0), y: b(1), z: b(2), w: b(3), f }
}

/// cudaMallocArray / cudaMalloc3DArray: `extent` in elements (height 0: 1D, depth 0: 2D).
pub fn malloc_array(desc: &ChannelDesc, extent: Extent, flags: u32) -> Res<usize> {
    state::ctx()?;
    let (format, num_channels) = format_of(desc)?;
    if flags & !0x0f != 0 || extent.width == 0 {
        return Err(error::INVALID_VALUE);
    }
    let d = Array3DDesc { width: extent.width, height: extent.height, depth: extent.depth, format, num_channels, flags };
    let mut a = std::ptr::null_mut();
    check(d::cuArray3DCreate(&mut a, &d))?;
    Ok(a as usize)
}

pub fn free_array(a: Handle) -> Res<()> {
    state::ctx()?;
    if a.is_null() {
        return Ok(());
    }
    check(d::cuArrayDestroy(a))
}

fn descriptor(a: Handle) -> Res<Array3DDesc> {
    if a.is_null() {
        return Err(error::INVALID_RESOURCE_HANDLE);
    }
    let mut d = Array3DDesc::default();
    check(d::cuArray3DGetDescriptor(&mut d, a))?;
    Ok(d)
}

/// Bytes per element of an array.
fn element_size(d: &Array3DDesc) -> usize {
    let bytes = match d.format {
        0x01 | 0x08 => 1,
        0x02 | 0x09 | 0x10 => 2,
        _ => 4,
    };
    bytes * d.num_channels as usize
}

/// cudaGetChannelDesc.
pub fn array_channel_desc(a: Handle) -> Res<ChannelDesc> {
    state::ctx()?;
    let d = descriptor(a)?;
    Ok(desc_of(d.format, d.num_channels))
}

/// cudaArrayGetInfo: (channel description, extent, flags).
pub fn array_info(a: Handle) -> Res<(ChannelDesc, Extent, u32)> {
    state::ctx()?;
    let d = descriptor(a)?;
    Ok((desc_of(d.format, d.num_channels), Extent { width: d.width, height: d.height, depth: d.depth }, d.flags))
}

/// The CUmemorytype of the linear memory on one side of a copy of `kind` (`source`: the
/// side copied from).
fn linear_type(kind: Kind, source: bool) -> Res<u32> {
    Ok(match (kind, source) {
        (Kind::HostToHost, _) | (Kind::HostToDevice, true) | (Kind::DeviceToHost, false) => 1,
        (Kind::DeviceToDevice, _) | (Kind::HostToDevice, false) | (Kind::DeviceToHost, true) => 2,
        (Kind::Default, _) => 4,
    })
}

/// One 2D copy between linear memory and an array.
pub struct ArrayCopy2D {
    pub array: Handle,
    /// Offset in the array: bytes across (as the runtime's `wOffset`), rows down.
    pub w_offset: usize,
    pub h_offset: usize,
    pub linear: u64,
    pub pitch: usize,
    pub width: usize,
    pub height: usize,
}

/// cudaMemcpy2DToArray(Async) (`to_array`) and cudaMemcpy2DFromArray(Async).
pub fn memcpy_2d_array(c: &ArrayCopy2D, to_array: bool, kind: i32, stream: Option<Handle>) -> Res<()> {
    let kind = Kind::from_raw(kind)?;
    state::ctx()?;
    descriptor(c.array)?;
    if c.width == 0 || c.height == 0 {
        return Ok(());
    }
    if c.width > c.pitch {
        return Err(error::INVALID_PITCH_VALUE);
    }
    let t = linear_type(kind, to_array)?;
    let mut p = Memcpy2D {
        src_x_in_bytes: 0,
        src_y: 0,
        src_memory_type: t,
        src_host: c.linear as *const c_void,
        src_device: c.linear,
        src_array: std::ptr::null_mut(),
        src_pitch: c.pitch,
        dst_x_in_bytes: 0,
        dst_y: 0,
        dst_memory_type: t,
        dst_host: c.linear as *mut c_void,
        dst_device: c.linear,
        dst_array: std::ptr::null_mut(),
        dst_pitch: c.pitch,
        width_in_bytes: c.width,
        height: c.height,
    };
    if to_array {
        p.dst_memory_type = ARRAY;
        p.dst_array = c.array;
        p.dst_x_in_bytes = c.w_offset;
        p.dst_y = c.h_offset;
    } else {
        p.src_memory_type = ARRAY;
        p.src_array = c.array;
        p.src_x_in_bytes = c.w_offset;
        p.src_y = c.h_offset;
    }
    check(match stream {
        None => d::cuMemcpy2D(&p),
        Some(s) => d::cuMemcpy2DAsync(&p, s),
    })
}

/// cudaMemcpyToArray / cudaMemcpyFromArray (deprecated, still exported): `count` bytes
/// from (`w_offset` bytes, `h_offset` rows) on, in row order: a partial first row, whole
/// rows, a partial last row.
#[allow(clippy::too_many_arguments)] // the C call's six, the direction and the stream
pub fn memcpy_array_1d(
    array: Handle,
    w_offset: usize,
    h_offset: usize,
    linear: u64,
    count: usize,
    to_array: bool,
    kind: i32,
    stream: Option<Handle>,
) -> Res<()> {
    Kind::from_raw(kind)?;
    state::ctx()?;
    let d = descriptor(array)?;
    let row = d.width * element_size(&d);
    let (mut x, mut y, mut done) = (w_offset, h_offset, 0usize);
    while done < count {
        if x >= row {
            return Err(error::INVALID_VALUE);
        }
        let rows = if x == 0 { (count - done) / row } else { 0 };
        let (width, height) = if rows > 0 { (row, rows) } else { ((row - x).min(count - done), 1) };
        let c = ArrayCopy2D { array, w_offset: x, h_offset: y, linear: linear + done as u64, pitch: width.max(1), width, height };
        memcpy_2d_array(&c, to_array, kind, stream)?;
        done += width * height;
        x = (x + width) % row;
        y += if rows > 0 { rows } else { usize::from(x == 0) };
    }
    Ok(())
}

/// The driver's CUDA_MEMCPY3D for the runtime's cudaMemcpy3DParms (also a graph's memcpy
/// node).
pub fn driver_3d(p: &Memcpy3DParms) -> Res<Memcpy3D> {
    let kind = Kind::from_raw(p.kind)?;
    if !p.src_array.is_null() && !p.src_ptr.ptr.is_null() || !p.dst_array.is_null() && !p.dst_ptr.ptr.is_null() {
        return Err(error::INVALID_VALUE);
    }
    let src_el = if p.src_array.is_null() { None } else { Some(element_size(&descriptor(p.src_array)?)) };
    let dst_el = if p.dst_array.is_null() { None } else { Some(element_size(&descriptor(p.dst_array)?)) };
    // The extent is in elements when an array takes part, in bytes otherwise.
    let width_bytes = p.extent.width * src_el.or(dst_el).unwrap_or(1);
    let src_type = if src_el.is_some() { ARRAY } else { linear_type(kind, true)? };
    let dst_type = if dst_el.is_some() { ARRAY } else { linear_type(kind, false)? };
    let c = Memcpy3D {
        src_x_in_bytes: p.src_pos.width * src_el.unwrap_or(1),
        src_y: p.src_pos.height,
        src_z: p.src_pos.depth,
        src_lod: 0,
        src_memory_type: src_type,
        src_host: p.src_ptr.ptr,
        src_device: p.src_ptr.ptr as u64,
        src_array: p.src_array,
        reserved0: std::ptr::null_mut(),
        src_pitch: p.src_ptr.pitch,
        src_height: p.src_ptr.ysize,
        dst_x_in_bytes: p.dst_pos.width * dst_el.unwrap_or(1),
        dst_y: p.dst_pos.height,
        dst_z: p.dst_pos.depth,
        dst_lod: 0,
        dst_memory_type: dst_type,
        dst_host: p.dst_ptr.ptr,
        dst_device: p.dst_ptr.ptr as u64,
        dst_array: p.dst_array,
        reserved1: std::ptr::null_mut(),
        dst_pitch: p.dst_ptr.pitch,
        dst_height: p.dst_ptr.ysize,
        width_in_bytes: width_bytes,
        height: p.extent.height.max(1),
        depth: p.extent.depth.max(1),
    };
    Ok(c)
}

/// cudaMemcpy3D(Async).
pub fn memcpy_3d(p: &Memcpy3DParms, stream: Option<Handle>) -> Res<()> {
    state::ctx()?;
    let c = driver_3d(p)?;
    if p.extent.width == 0 {
        return Ok(());
    }
    check(match stream {
        None => d::cuMemcpy3D(&c),
        Some(s) => d::cuMemcpy3DAsync(&c, s),
    })
}

/// The driver's resource description for the runtime's: arrays (texture and surface
/// objects), linear memory and pitched 2D memory (texture objects).
fn resource(r: &RtResourceDesc) -> Res<ResourceDesc> {
    let w = &r.res;
    let int = |byte: usize| -> i32 {
        let word = w[byte / 8];
        (if byte.is_multiple_of(8) { word as u32 } else { (word >> 32) as u32 }) as i32
    };
    // The channel description sits at byte 8 of the union (after the device pointer).
    let channel = || ChannelDesc { x: int(8), y: int(12), z: int(16), w: int(20), f: int(24) };
    let mut out = ResourceDesc { res_type: r.res_type as u32, res: [0; 16], flags: r.flags };
    match r.res_type {
        0 => {
            if w[0] == 0 {
                return Err(error::INVALID_RESOURCE_HANDLE);
            }
            out.res[0] = w[0];
        }
        2 => {
            let (format, n) = format_of(&channel())?;
            out.res[0] = w[0];
            out.res[1] = u64::from(format) | u64::from(n) << 32;
            out.res[2] = w[4];
        }
        3 => {
            let (format, n) = format_of(&channel())?;
            out.res[0] = w[0];
            out.res[1] = u64::from(format) | u64::from(n) << 32;
            out.res[2] = w[4];
            out.res[3] = w[5];
            out.res[4] = w[6];
        }
        _ => return Err(error::unsupported("cudaCreateTextureObject of a mipmapped array")),
    }
    Ok(out)
}

/// cudaCreateTextureObject (a resource view is not supported).
pub fn create_texture(r: &RtResourceDesc, t: &RtTextureDesc, has_view: bool) -> Res<u64> {
    state::ctx()?;
    if has_view {
        return Err(error::unsupported("cudaCreateTextureObject with a resource view"));
    }
    let res = resource(r)?;
    // The texels' format: an array's own, or the linear memory's channel description.
    let format = match r.res_type {
        0 => descriptor(res.res[0] as Handle)?.format,
        _ => res.res[1] as u32,
    };
    // CU_TRSF_READ_AS_INTEGER for cudaReadModeElementType on integer formats only: on a
    // float or half format it would make the texture unit read the texels' bits as
    // integers (and filter those), where the runtime's element type is the float itself.
    // Then NORMALIZED_COORDINATES, SRGB, DISABLE_TRILINEAR_OPTIMIZATION, SEAMLESS_CUBEMAP.
    let is_float = format == 0x10 || format == 0x20;
    let mut flags = 0;
    if t.read_mode == 0 && !is_float {
        flags |= 0x01;
    }
    if t.normalized_coords != 0 {
        flags |= 0x02;
    }
    if t.srgb != 0 {
        flags |= 0x10;
    }
    if t.disable_trilinear_optimization != 0 {
        flags |= 0x20;
    }
    if t.seamless_cubemap != 0 {
        flags |= 0x40;
    }
    let tex = TextureDesc {
        address_mode: t.address_mode.map(|m| m as u32),
        filter_mode: t.filter_mode as u32,
        flags,
        max_anisotropy: t.max_anisotropy,
        mipmap_filter_mode: t.mipmap_filter_mode as u32,
        mipmap_level_bias: t.mipmap_level_bias,
        min_mipmap_level_clamp: t.min_mipmap_level_clamp,
        max_mipmap_level_clamp: t.max_mipmap_level_clamp,
        border_color: t.border_color,
        reserved: [0; 12],
    };
    let mut obj = 0u64;
    check(d::cuTexObjectCreate(&mut obj, &res, &tex, std::ptr::null()))?;
    Ok(obj)
}

pub fn destroy_texture(t: u64) -> Res<()> {
    state::init()?;
    check(d::cuTexObjectDestroy(t))
}

/// cudaCreateSurfaceObject: the resource must be an array made with
/// cudaArraySurfaceLoadStore (the driver checks).
pub fn create_surface(r: &RtResourceDesc) -> Res<u64> {
    state::ctx()?;
    if r.res_type != 0 {
        return Err(error::INVALID_VALUE);
    }
    let res = resource(r)?;
    let mut obj = 0u64;
    check(d::cuSurfObjectCreate(&mut obj, &res))?;
    Ok(obj)
}

pub fn destroy_surface(s: u64) -> Res<()> {
    state::init()?;
    check(d::cuSurfObjectDestroy(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_descriptions_map_to_driver_formats() {
        assert_eq!(format_of(&channel_desc(32, 0, 0, 0, 2)), Ok((0x20, 1)));
        assert_eq!(format_of(&channel_desc(8, 8, 8, 8, 1)), Ok((0x01, 4)));
        assert_eq!(format_of(&channel_desc(16, 16, 0, 0, 0)), Ok((0x09, 2)));
        assert_eq!(format_of(&channel_desc(8, 8, 8, 0, 1)), Err(INVALID_CHANNEL_DESCRIPTOR));
        assert_eq!(format_of(&channel_desc(8, 16, 0, 0, 1)), Err(INVALID_CHANNEL_DESCRIPTOR));
        assert_eq!(format_of(&channel_desc(8, 0, 0, 0, 2)), Err(INVALID_CHANNEL_DESCRIPTOR));
        assert_eq!(desc_of(0x20, 4), channel_desc(32, 32, 32, 32, 2));
        assert_eq!(std::mem::size_of::<RtResourceDesc>(), 144);
        assert_eq!(std::mem::size_of::<RtTextureDesc>(), 72);
        assert_eq!(std::mem::size_of::<Memcpy3DParms>(), 160);
        assert_eq!(std::mem::size_of::<ResourceDesc>(), 144);
        assert_eq!(std::mem::size_of::<TextureDesc>(), 104);
        assert_eq!(std::mem::size_of::<Memcpy3D>(), 200);
    }
}
