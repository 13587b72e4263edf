//! Texel formats (CUarray_format) and how a texel's channels are read.

/// The element formats textures and surfaces support (the classic CUarray_format
/// values; the block-compressed and planar ones are refused at creation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    U8,
    U16,
    U32,
    S8,
    S16,
    S32,
    Half,
    Float,
}

impl Format {
    pub fn from_cu(v: u32) -> Option<Format> {
        Some(match v {
            0x01 => Format::U8,
            0x02 => Format::U16,
            0x03 => Format::U32,
            0x08 => Format::S8,
            0x09 => Format::S16,
            0x0a => Format::S32,
            0x10 => Format::Half,
            0x20 => Format::Float,
            _ => return None,
        })
    }
    /// Bytes of one channel.
    pub fn bytes(self) -> u32 {
        match self {
            Format::U8 | Format::S8 => 1,
            Format::U16 | Format::S16 | Format::Half => 2,
            _ => 4,
        }
    }
    /// 8- and 16-bit integers: read as normalized floats unless element type is asked.
    pub fn normalizable(self) -> bool {
        matches!(self, Format::U8 | Format::U16 | Format::S8 | Format::S16)
    }
    pub fn is_float(self) -> bool {
        matches!(self, Format::Half | Format::Float)
    }
}

/// Reads channel `c` of the element at `addr` as raw bits (integers sign- or
/// zero-extended to 32 bits, halves as their 16 bits).
///
/// # Safety
/// `addr` points to a readable element of format `f` with more than `c` channels.
pub unsafe fn read_channel(addr: u64, f: Format, c: u32) -> u32 {
    let p = addr + (c * f.bytes()) as u64;
    // SAFETY: per this function's contract; unaligned reads (pitched memory may be
    // anywhere the caller allowed).
    unsafe {
        match f {
            Format::U8 => *(p as *const u8) as u32,
            Format::S8 => *(p as *const i8) as i32 as u32,
            Format::U16 | Format::Half => (p as *const u16).read_unaligned() as u32,
            Format::S16 => (p as *const i16).read_unaligned() as i32 as u32,
            Format::U32 | Format::S32 | Format::Float => (p as *const u32).read_unaligned(),
        }
    }
}

/// IEEE half to single (exact).
pub fn half_to_f32(h: u16) -> f32 {
    let s = ((h >> 15) as u32) << 31;
    let e = ((h >> 10) & 0x1f) as u32;
    let m = (h & 0x3ff) as u32;
    let bits = if e == 0 {
        if m == 0 {
            s
        } else {
            // Subnormal: normalise.
            let mut e2 = 127 - 15 + 1;
            let mut m2 = m;
            while m2 & 0x400 == 0 {
                m2 <<= 1;
                e2 -= 1;
            }
            s | ((e2 as u32) << 23) | ((m2 & 0x3ff) << 13)
        }
    } else if e == 31 {
        s | 0x7f80_0000 | (m << 13)
    } else {
        s | ((e + 127 - 15) << 23) | (m << 13)
    };
    f32::from_bits(bits)
}

/// The normalized-float value of an 8/16-bit integer channel: unsigned to [0, 1],
/// signed to [-1, 1] (the most negative value reads -1).
pub fn normalized(raw: u32, f: Format) -> f32 {
    match f {
        Format::U8 => (raw as f64 / 255.0) as f32,
        Format::U16 => (raw as f64 / 65535.0) as f32,
        Format::S8 => ((raw as i32) as f64 / 127.0).max(-1.0) as f32,
        Format::S16 => ((raw as i32) as f64 / 32767.0).max(-1.0) as f32,
        _ => f32::from_bits(raw),
    }
}

/// sRGB-encoded 8-bit value to linear (IEC 61966-2-1), rounded to single.
pub fn srgb_to_linear(v: u32) -> f32 {
    let c = v as f64 / 255.0;
    let l = if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) };
    l as f32
}
