//! The layout of simtwin's linked image: what the emulated JIT linkers (the driver's
//! cuLinkComplete and simtwin's libnvJitLink.so.13) hand back and what the driver's
//! cuModuleLoadData / cuLibraryLoadData accept. The PTX modules given to the link are kept
//! whole; PTX mode links and translates them together at load.
//!
//! Layout (little-endian): magic `SLNK`, u32 version 1, u32 module count, u32 the JIT
//! optimisation level the link was made at plus one (0: none given), then per module a
//! u64 byte length and the PTX text, padded to 8 bytes.

/// First four bytes of a linked image.
pub const MAGIC: &[u8; 4] = b"SLNK";
/// The layout version written after the magic.
pub const VERSION: u32 = 1;

/// Builds a linked image of `modules` (PTX texts), linked at JIT optimisation level
/// `opt_level` when the program gave one.
pub fn build(modules: &[String], opt_level: Option<u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + modules.iter().map(|m| 8 + m.len().next_multiple_of(8)).sum::<usize>());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(modules.len() as u32).to_le_bytes());
    out.extend_from_slice(&opt_level.map_or(0u32, |v| u32::from(v) + 1).to_le_bytes());
    for m in modules {
        out.extend_from_slice(&(m.len() as u64).to_le_bytes());
        out.extend_from_slice(m.as_bytes());
        out.resize(out.len().next_multiple_of(8), 0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::build;

    #[test]
    fn header_modules_and_padding() {
        let img = build(&["abc".into(), "".into()], Some(2));
        assert_eq!(&img[..4], b"SLNK");
        assert_eq!(img[4..8], 1u32.to_le_bytes());
        assert_eq!(img[8..12], 2u32.to_le_bytes());
        assert_eq!(img[12..16], 3u32.to_le_bytes());
        assert_eq!(img[16..24], 3u64.to_le_bytes());
        assert_eq!(&img[24..27], b"abc");
        assert_eq!(img[27..32], [0; 5]);
        assert_eq!(img[32..40], 0u64.to_le_bytes());
        assert_eq!(img.len(), 40);
        assert_eq!(build(&["a".into()], None)[12..16], 0u32.to_le_bytes());
    }
}
