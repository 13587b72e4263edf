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
        use crate::cu::*;
        Some(match v {
            CU_AD_FORMAT_UNSIGNED_INT8 => Format::U8,
            CU_AD_FORMAT_UNSIGNED_INT16 => Format::U16,
            CU_AD_FORMAT_UNSIGNED_INT32 => Format::U32,
            CU_AD_FORMAT_SIGNED_INT8 => Format::S8,
            CU_AD_FORMAT_SIGNED_INT16 => Format::S16,
            CU_AD_FORMAT_SIGNED_INT32 => Format::S32,
            CU_AD_FORMAT_HALF => Format::Half,
            CU_AD_FORMAT_FLOAT => Format::Float,
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
        // NaNs come out quiet with their payload (measured).
        s | 0x7f80_0000 | (m << 13) | if m != 0 { 0x40_0000 } else { 0 }
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

/// sRGB-encoded 8-bit value to linear, as the H200's texture unit answers it: the
/// IEC 61966-2-1 curve at reduced precision (about 10 significant bits; 1/255 reads
/// 20/65536 where the curve gives 0.0003035). Recorded from the device (conformance
/// case `texs_table_srgb`: every value, point sampled), not computed.
pub fn srgb_to_linear(v: u32) -> f32 {
    f32::from_bits(SRGB_H200[(v & 0xff) as usize])
}

/// How the H200's filter holds a decoded sRGB value: an 8-bit significand `m` and the
/// exponent `e` of its top bit's place, the value being `m * 2^(e - 7)` (exactly
/// `srgb_to_linear`: the table has 8 significant bits). From byte 32 on the exponent is a
/// step function of the byte (-6 from 32, then one more at 48, 64, 96, 136, 184 and 248),
/// so the bytes just past each step hold a significand below 128; below 32 it is the
/// value's own binade (fit19 on the H200: every two-texel blend and bilinear footprint).
pub fn srgb_filter_form(v: u32) -> (u32, i32) {
    let b = SRGB_H200[(v & 0xff) as usize];
    if b == 0 {
        return (0, -126);
    }
    let e =
        if v < 32 { ((b >> 23) & 0xff) as i32 - 127 } else { -6 + [48, 64, 96, 136, 184, 248].iter().filter(|&&t| v >= t).count() as i32 };
    let m = (f32::from_bits(b) as f64 * 2f64.powi(7 - e)) as u32;
    (m, e)
}

/// `texs_table_srgb` of emu-driver/tests/data/h200-conformance.txt, channel 0.
const SRGB_H200: [u32; 256] = [
    0x00000000, 0x39a00000, 0x3a200000, 0x3a700000, 0x3aa00000, 0x3ac80000, 0x3af00000, 0x3b0c0000, 0x3b200000, 0x3b340000, 0x3b480000,
    0x3b5c0000, 0x3b700000, 0x3b840000, 0x3b900000, 0x3b9c0000, 0x3baa0000, 0x3bb80000, 0x3bc60000, 0x3bd60000, 0x3be60000, 0x3bf60000,
    0x3c030000, 0x3c0c0000, 0x3c160000, 0x3c1f0000, 0x3c290000, 0x3c340000, 0x3c3e0000, 0x3c490000, 0x3c550000, 0x3c600000, 0x3c6c0000,
    0x3c7a0000, 0x3c830000, 0x3c8a0000, 0x3c910000, 0x3c980000, 0x3c9f0000, 0x3ca60000, 0x3cae0000, 0x3cb60000, 0x3cbe0000, 0x3cc60000,
    0x3cce0000, 0x3cd70000, 0x3ce00000, 0x3ce90000, 0x3cf20000, 0x3cfc0000, 0x3d030000, 0x3d080000, 0x3d0d0000, 0x3d120000, 0x3d170000,
    0x3d1c0000, 0x3d220000, 0x3d280000, 0x3d2d0000, 0x3d330000, 0x3d390000, 0x3d3f0000, 0x3d450000, 0x3d4c0000, 0x3d520000, 0x3d580000,
    0x3d600000, 0x3d660000, 0x3d6c0000, 0x3d740000, 0x3d7a0000, 0x3d810000, 0x3d850000, 0x3d880000, 0x3d8c0000, 0x3d900000, 0x3d940000,
    0x3d980000, 0x3d9c0000, 0x3da00000, 0x3da40000, 0x3da90000, 0x3dad0000, 0x3db10000, 0x3db60000, 0x3dba0000, 0x3dbf0000, 0x3dc30000,
    0x3dc80000, 0x3dcd0000, 0x3dd10000, 0x3dd60000, 0x3ddb0000, 0x3de00000, 0x3de50000, 0x3dea0000, 0x3df00000, 0x3df40000, 0x3dfa0000,
    0x3e000000, 0x3e020000, 0x3e050000, 0x3e080000, 0x3e0b0000, 0x3e0e0000, 0x3e110000, 0x3e140000, 0x3e170000, 0x3e1a0000, 0x3e1d0000,
    0x3e200000, 0x3e230000, 0x3e260000, 0x3e290000, 0x3e2c0000, 0x3e300000, 0x3e330000, 0x3e360000, 0x3e3a0000, 0x3e3d0000, 0x3e400000,
    0x3e440000, 0x3e470000, 0x3e4b0000, 0x3e4e0000, 0x3e520000, 0x3e560000, 0x3e590000, 0x3e5d0000, 0x3e610000, 0x3e650000, 0x3e680000,
    0x3e6c0000, 0x3e700000, 0x3e740000, 0x3e780000, 0x3e7c0000, 0x3e800000, 0x3e820000, 0x3e840000, 0x3e860000, 0x3e880000, 0x3e8a0000,
    0x3e8d0000, 0x3e8f0000, 0x3e910000, 0x3e930000, 0x3e950000, 0x3e980000, 0x3e9a0000, 0x3e9c0000, 0x3e9e0000, 0x3ea10000, 0x3ea30000,
    0x3ea50000, 0x3ea80000, 0x3eaa0000, 0x3ead0000, 0x3eaf0000, 0x3eb20000, 0x3eb40000, 0x3eb60000, 0x3eb90000, 0x3ebc0000, 0x3ebe0000,
    0x3ec10000, 0x3ec30000, 0x3ec60000, 0x3ec80000, 0x3ecb0000, 0x3ece0000, 0x3ed10000, 0x3ed30000, 0x3ed60000, 0x3ed90000, 0x3edb0000,
    0x3ede0000, 0x3ee10000, 0x3ee40000, 0x3ee70000, 0x3eea0000, 0x3eed0000, 0x3ef00000, 0x3ef20000, 0x3ef60000, 0x3ef80000, 0x3efc0000,
    0x3efe0000, 0x3f010000, 0x3f020000, 0x3f040000, 0x3f050000, 0x3f070000, 0x3f090000, 0x3f0a0000, 0x3f0c0000, 0x3f0d0000, 0x3f0f0000,
    0x3f110000, 0x3f120000, 0x3f140000, 0x3f160000, 0x3f170000, 0x3f190000, 0x3f1b0000, 0x3f1c0000, 0x3f1e0000, 0x3f200000, 0x3f210000,
    0x3f230000, 0x3f250000, 0x3f270000, 0x3f290000, 0x3f2a0000, 0x3f2c0000, 0x3f2e0000, 0x3f300000, 0x3f320000, 0x3f330000, 0x3f350000,
    0x3f370000, 0x3f390000, 0x3f3b0000, 0x3f3d0000, 0x3f3f0000, 0x3f410000, 0x3f430000, 0x3f450000, 0x3f470000, 0x3f490000, 0x3f4b0000,
    0x3f4d0000, 0x3f4f0000, 0x3f510000, 0x3f530000, 0x3f550000, 0x3f570000, 0x3f590000, 0x3f5b0000, 0x3f5d0000, 0x3f5f0000, 0x3f610000,
    0x3f630000, 0x3f650000, 0x3f680000, 0x3f6a0000, 0x3f6c0000, 0x3f6e0000, 0x3f700000, 0x3f720000, 0x3f740000, 0x3f760000, 0x3f7a0000,
    0x3f7c0000, 0x3f7e0000, 0x3f800000,
];
