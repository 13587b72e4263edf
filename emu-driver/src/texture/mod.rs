//! Textures and surfaces as kernels see them: the objects (`cuTexObjectCreate`,
//! `cuSurfObjectCreate`) and the memory they read (CUDA arrays, mipmapped arrays, linear
//! and pitched device memory), and the one sampler both execution modes call through the
//! runtime table (`sample`). The entry points that create and destroy them are in
//! `api/texture.rs`; this module depends on nothing above `cu`, so the executor can call
//! it while a kernel runs.
//!
//! Objects live in their own registry (not behind the driver's lock): a fetch looks its
//! handle up under a read lock and never waits for a driver call.

pub mod filter;
pub mod format;
pub mod sample;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// The texel layout of memory a texture or surface reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Host address of texel (0, 0, 0) of layer/slice 0.
    pub base: u64,
    /// Elements per row, rows, and slices (3D depth or layers; 1 when neither).
    pub width: u64,
    pub height: u64,
    pub depth: u64,
    /// Bytes between rows and between slices.
    pub pitch: u64,
    pub slice: u64,
    pub format: format::Format,
    pub channels: u32,
}

impl Layout {
    /// Bytes of one element.
    pub fn elem(&self) -> u64 {
        self.format.bytes() as u64 * self.channels as u64
    }
}

/// A CUDA array (or one level of a mipmapped array).
#[derive(Debug)]
pub struct Array {
    /// Dimensions as the descriptor gave them (height/depth 0 for fewer dimensions).
    pub width: u64,
    pub height: u64,
    pub depth: u64,
    pub format: u32,
    pub channels: u32,
    pub flags: u32,
    /// The memory (tracked by the driver as a `CUDA array` allocation).
    pub base: u64,
    /// The mipmapped array this is a level of (levels are not destroyed on their own).
    pub parent: Option<u64>,
}

impl Array {
    pub fn layout(&self) -> Layout {
        let f = format::Format::from_cu(self.format).unwrap_or(format::Format::U8);
        let w = self.width.max(1);
        let h = self.height.max(1);
        let elem = f.bytes() as u64 * self.channels as u64;
        Layout {
            base: self.base,
            width: w,
            height: h,
            depth: self.depth.max(1),
            pitch: w * elem,
            slice: w * h * elem,
            format: f,
            channels: self.channels,
        }
    }
    /// Whether the array is layered (CUDA_ARRAY3D_LAYERED), a cubemap.
    pub fn layered(&self) -> bool {
        self.flags & 0x01 != 0
    }
    pub fn cubemap(&self) -> bool {
        self.flags & 0x04 != 0
    }
}

/// What a texture or surface object reads.
#[derive(Debug, Clone)]
pub enum Resource {
    Array { handle: u64, array: Arc<Array> },
    Mipmap { handle: u64, levels: Vec<Arc<Array>> },
    Linear { ptr: u64, format: u32, channels: u32, bytes: u64 },
    Pitch2D { ptr: u64, format: u32, channels: u32, width: u64, height: u64, pitch: u64 },
}

/// CUDA_TEXTURE_DESC, as given.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TexDesc {
    pub address: [u32; 3],
    pub filter: u32,
    pub flags: u32,
    pub max_anisotropy: u32,
    pub mip_filter: u32,
    pub mip_bias: f32,
    pub min_lod: f32,
    pub max_lod: f32,
    pub border: [f32; 4],
}

/// A texture or surface object.
#[derive(Debug)]
pub enum Object {
    Texture { res: Resource, desc: TexDesc, view: Option<[u64; 11]> },
    Surface { res: Resource },
}

/// Texture and surface objects by handle.
static OBJECTS: RwLock<Option<HashMap<u64, Arc<Object>, BuildHandleHasher>>> = RwLock::new(None);

/// Hashes a handle with one multiplication: handles are small sequential integers made
/// here, and every texel fetch looks one up (SipHash was 3% of a texture kernel's time).
#[derive(Default, Clone, Copy)]
struct BuildHandleHasher;

impl std::hash::BuildHasher for BuildHandleHasher {
    type Hasher = HandleHasher;
    fn build_hasher(&self) -> HandleHasher {
        HandleHasher(0)
    }
}

struct HandleHasher(u64);

impl std::hash::Hasher for HandleHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Registers an object; returns its handle (never 0).
pub fn register(o: Object) -> u64 {
    let h = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    OBJECTS.write().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(HashMap::default).insert(h, Arc::new(o));
    h
}

/// The object behind `h`.
pub fn lookup(h: u64) -> Option<Arc<Object>> {
    OBJECTS.read().unwrap_or_else(|e| e.into_inner()).as_ref()?.get(&h).cloned()
}

/// Removes `h`; false if it was not registered.
pub fn unregister(h: u64) -> bool {
    OBJECTS.write().unwrap_or_else(|e| e.into_inner()).as_mut().and_then(|m| m.remove(&h)).is_some()
}
