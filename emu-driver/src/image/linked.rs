//! The image cuLinkComplete hands back: the PTX modules the JIT linker was given, kept
//! whole so that PTX mode links and translates them together at cuModuleLoadData (which
//! is where a real driver's linked cubin goes too). A program treats it as an opaque
//! cubin (loads it, or writes it to a file and loads that).
//!
//! The layout, and its writer, are shared with simtwin's libnvJitLink.so.13
//! (`simtwin_abi::linked`); this module reads it.

use super::types::{ImageError, MAX_IMAGE_BYTES};

// The writer: cuLinkComplete's image, byte for byte what the shim's nvJitLinkComplete writes.
pub use simtwin_abi::linked::build;
use simtwin_abi::linked::VERSION;
/// Most modules one linked image holds.
const MAX_MODULES: u32 = 4096;

fn invalid(m: impl Into<String>) -> ImageError {
    ImageError::Invalid(format!("linked image: {}", m.into()))
}

/// The container's length, from its headers read through `read(offset, len)`.
pub(crate) fn container_len(read: &mut dyn FnMut(u64, usize) -> Result<Vec<u8>, ImageError>) -> Result<u64, ImageError> {
    let h = read(0, 16)?;
    let count = u32::from_le_bytes([h[8], h[9], h[10], h[11]]);
    if u32::from_le_bytes([h[4], h[5], h[6], h[7]]) != VERSION || count == 0 || count > MAX_MODULES {
        return Err(invalid(format!("version or module count ({count}) out of range")));
    }
    let mut at = 16u64;
    for _ in 0..count {
        let l = read(at, 8)?;
        let len = u64::from_le_bytes(l[..8].try_into().unwrap_or([0; 8]));
        at = at
            .checked_add(8)
            .and_then(|a| a.checked_add(len.next_multiple_of(8)))
            .filter(|&a| a <= MAX_IMAGE_BYTES)
            .ok_or_else(|| invalid("module length out of range"))?;
    }
    Ok(at)
}

/// The JIT optimisation level the link was made at, if the program gave one (ptxas ran
/// at link time on a real driver: that level, not the load's, made the code).
pub(crate) fn opt_level(b: &[u8]) -> Option<u8> {
    let v = u32::from_le_bytes(b.get(12..16)?.try_into().ok()?);
    (v > 0).then(|| (v - 1).min(3) as u8)
}

/// The PTX modules of a linked image.
pub(crate) fn modules(b: &[u8]) -> Result<Vec<String>, ImageError> {
    let mut read = |off: u64, len: usize| -> Result<Vec<u8>, ImageError> {
        let s = usize::try_from(off).map_err(|_| invalid("offset"))?;
        b.get(s..s.saturating_add(len)).map(<[u8]>::to_vec).ok_or_else(|| invalid("truncated"))
    };
    let total = container_len(&mut read)?;
    if total > b.len() as u64 {
        return Err(invalid(format!("truncated: the headers name {total} bytes, the image has {}", b.len())));
    }
    let count = u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize;
    let mut at = 16usize;
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let len = u64::from_le_bytes(read(at as u64, 8)?[..8].try_into().unwrap_or([0; 8]));
        let len = usize::try_from(len).map_err(|_| invalid("module length out of range"))?;
        let text = read(at as u64 + 8, len)?;
        let end = text.iter().position(|&c| c == 0).unwrap_or(text.len());
        out.push(std::str::from_utf8(&text[..end]).map_err(|_| invalid("a module is not UTF-8 text"))?.to_string());
        at += 8 + len.next_multiple_of(8);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::image::linked::{build, container_len, modules, opt_level};

    #[test]
    fn round_trip_and_corruption() {
        let img = build(&["a".into(), ".version 7.0\n".into()], None);
        assert_eq!(modules(&img).unwrap(), vec!["a".to_string(), ".version 7.0\n".into()]);
        assert_eq!(opt_level(&img), None);
        assert_eq!(opt_level(&build(&["a".into()], Some(0))), Some(0));
        let mut read = |off: u64, len: usize| Ok(img[off as usize..off as usize + len].to_vec());
        assert_eq!(container_len(&mut read).unwrap(), img.len() as u64);
        assert!(modules(&img[..img.len() - 9]).is_err());
        let mut bad = img.clone();
        bad[16] = 0xff; // a huge length
        bad[23] = 0x7f;
        assert!(modules(&bad).is_err());
        let mut zero = img;
        zero[8] = 0;
        assert!(modules(&zero).is_err());
    }
}
