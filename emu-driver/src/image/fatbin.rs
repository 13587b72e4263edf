//! The fatbin container nvcc writes (`nvcc -fatbin`, the `.nv_fatbin` section of host
//! objects): a 16-byte header, then entries laid end to end, each a header followed by
//! its payload (an ELF cubin or PTX text, optionally compressed).
//!
//! Layout, little-endian, as observed from nvcc 12.x/13.x output:
//!
//! ```text
//! container header      entry header (header_size >= 64 bytes)
//!  0 u32 magic 0xBA55ED50   0 u16 kind (1 PTX, 2 ELF)       32 u32 name offset
//!  4 u16 version 1          2 u16 (0x0101)                  36 u32 name size
//!  6 u16 header size (16)   4 u32 header size (64/80/120)    40 u64 flags
//!  8 u64 bytes of entries   8 u64 payload bytes (padded)     56 u64 decompressed size
//!                          16 u32 compressed bytes
//!                          24 u16 minor, 26 u16 major version of the payload format
//!                          28 u32 architecture (90)
//! ```
//!
//! Flags: 0x1 64-bit, 0x2 debug, 0x10 Linux, 0x2000 LZ4-compressed, 0x8000
//! zstd-compressed, 0x100000 arch-specific (`sm_90a`), 0x200000 family (`sm_100f`).

use super::types::{
    cubin_runs, invalid, le_u16, le_u32, le_u64, Compression, EntryKind, EntrySummary, Image, ImageError, ImageKind, Target, FATBIN_MAGIC,
    MAX_FATBIN_ENTRIES, MAX_IMAGE_BYTES,
};
use super::{cubin, ptx};

const ENTRY_HEADER_MIN: usize = 64;
/// Entry headers grow with new toolchains (80, 120 bytes today); far more is corruption.
const ENTRY_HEADER_MAX: usize = 4096;
/// Container headers are 16 bytes; allow growth, refuse nonsense.
const CONTAINER_HEADER_MAX: usize = 4096;

const FLAG_LZ4: u64 = 0x2000;
const FLAG_ZSTD: u64 = 0x8000;
const FLAG_ARCH_SPECIFIC: u64 = 0x10_0000;
const FLAG_FAMILY: u64 = 0x20_0000;

/// An LZ4 block expands at most about 255:1 (each extra length byte adds 255).
const LZ4_MAX_RATIO: u64 = 256;

/// Total bytes of the container that starts `head` (its header plus its entries), from
/// the first 16 bytes. Used to learn the length of an image given only by pointer.
pub(crate) fn container_len(head: &[u8]) -> Result<u64, ImageError> {
    let (hs, fat) = header(head)?;
    let total = (hs as u64)
        .checked_add(fat)
        .filter(|&t| t <= MAX_IMAGE_BYTES)
        .ok_or_else(|| invalid(format!("fatbin claims {fat} bytes of entries, over the limit")))?;
    Ok(total)
}

/// Validates the container header: (header size, bytes of entries after it).
fn header(b: &[u8]) -> Result<(usize, u64), ImageError> {
    let magic = le_u32(b, 0).ok_or_else(|| invalid("fatbin header truncated"))?;
    if magic != FATBIN_MAGIC {
        return Err(invalid(format!("bad fatbin magic {magic:#x}")));
    }
    let version = le_u16(b, 4).ok_or_else(|| invalid("fatbin header truncated"))?;
    let hs = le_u16(b, 6).ok_or_else(|| invalid("fatbin header truncated"))? as usize;
    let fat = le_u64(b, 8).ok_or_else(|| invalid("fatbin header truncated"))?;
    if version != 1 {
        return Err(invalid(format!("fatbin version {version} (only 1 is known)")));
    }
    if !(16..=CONTAINER_HEADER_MAX).contains(&hs) {
        return Err(invalid(format!("fatbin header size {hs}")));
    }
    Ok((hs, fat))
}

/// One entry, located and validated but not yet decompressed.
struct Entry<'a> {
    summary: EntrySummary,
    /// The stored payload (compressed bytes only, when compressed).
    data: &'a [u8],
}

/// Walks the container's entries, checking every offset and size against the buffer.
fn entries(b: &[u8]) -> Result<Vec<Entry<'_>>, ImageError> {
    let (hs, fat) = header(b)?;
    let end = (hs as u64).checked_add(fat).filter(|&e| e <= b.len() as u64).ok_or_else(|| {
        invalid(format!("fatbin truncated: header says {} bytes, {} present", hs as u64 + fat.min(u64::MAX - hs as u64), b.len()))
    })? as usize;
    let mut out = Vec::new();
    let mut p = hs;
    while p < end {
        if out.len() >= MAX_FATBIN_ENTRIES {
            return Err(invalid(format!("fatbin has more than {MAX_FATBIN_ENTRIES} entries")));
        }
        let e = &b[p..end];
        if e.len() < ENTRY_HEADER_MIN {
            return Err(invalid(format!("fatbin entry at {p} truncated ({} bytes left)", e.len())));
        }
        let field = |off: usize| le_u32(e, off).unwrap_or(0);
        let kind = le_u16(e, 0).unwrap_or(0);
        let ehs = field(4) as usize;
        let stored = le_u64(e, 8).unwrap_or(0);
        let compressed = field(16) as u64;
        let arch = field(28);
        let flags = le_u64(e, 40).unwrap_or(0);
        let size = le_u64(e, 56).unwrap_or(0);
        if !(ENTRY_HEADER_MIN..=ENTRY_HEADER_MAX).contains(&ehs) || ehs > e.len() {
            return Err(invalid(format!("fatbin entry at {p}: header size {ehs}")));
        }
        if stored > (e.len() - ehs) as u64 {
            return Err(invalid(format!("fatbin entry at {p}: payload of {stored} bytes runs past the container")));
        }
        let payload = &e[ehs..ehs + stored as usize];
        let compression = match (flags & FLAG_LZ4 != 0, flags & FLAG_ZSTD != 0) {
            (false, false) => Compression::None,
            (true, false) => Compression::Lz4,
            (false, true) => Compression::Zstd,
            (true, true) => {
                return Err(ImageError::UnsupportedCompression(format!("fatbin entry at {p}: both LZ4 and zstd flags set ({flags:#x})")))
            }
        };
        let (data, size) = if compression == Compression::None {
            (payload, stored)
        } else {
            if compressed == 0 || compressed > stored {
                return Err(invalid(format!("fatbin entry at {p}: compressed size {compressed} with {stored} stored")));
            }
            if size == 0 || size > MAX_IMAGE_BYTES {
                return Err(invalid(format!("fatbin entry at {p}: decompressed size {size}")));
            }
            (&payload[..compressed as usize], size)
        };
        let variant = if flags & FLAG_ARCH_SPECIFIC != 0 {
            Some('a')
        } else if flags & FLAG_FAMILY != 0 {
            Some('f')
        } else {
            None
        };
        let kind = match kind {
            1 => EntryKind::Ptx,
            2 => EntryKind::Cubin,
            k => EntryKind::Unknown(k),
        };
        out.push(Entry { summary: EntrySummary { kind, arch, variant, compression, stored_size: stored, size, offset: p as u64 }, data });
        p += ehs + stored as usize;
    }
    Ok(out)
}

/// The entry the device would use: see the selection rule in the module docs.
fn choose(entries: &[Entry<'_>], target: Target) -> Option<usize> {
    let best = |kind: EntryKind, ok: &dyn Fn(u32) -> bool| {
        entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.summary.kind == kind && ok(e.summary.arch))
            .max_by_key(|(i, e)| (e.summary.arch, e.summary.variant.is_none(), usize::MAX - i))
            .map(|(i, _)| i)
    };
    best(EntryKind::Cubin, &|a| cubin_runs(a, target)).or_else(|| best(EntryKind::Ptx, &|a| a <= target.sm))
}

/// Decompresses an entry's payload, bounded by the size its header declares.
fn payload(e: &Entry<'_>) -> Result<Vec<u8>, ImageError> {
    let s = &e.summary;
    let what = s.describe();
    let out = match s.compression {
        Compression::None => return Ok(e.data.to_vec()),
        Compression::Zstd => {
            if let Ok(Some(n)) = zstd::zstd_safe::get_frame_content_size(e.data) {
                if n != s.size {
                    return Err(invalid(format!("{what}: zstd frame holds {n} bytes, entry header says {}", s.size)));
                }
            }
            zstd::bulk::decompress(e.data, s.size as usize).map_err(|err| invalid(format!("{what}: zstd data corrupt ({err})")))?
        }
        Compression::Lz4 => {
            if s.size > (e.data.len() as u64).saturating_mul(LZ4_MAX_RATIO) {
                return Err(invalid(format!("{what}: {} bytes cannot expand to {}", e.data.len(), s.size)));
            }
            lz4_flex::block::decompress(e.data, s.size as usize).map_err(|err| invalid(format!("{what}: LZ4 data corrupt ({err})")))?
        }
    };
    if out.len() as u64 != s.size {
        return Err(invalid(format!("{what}: decompressed to {} bytes, entry header says {}", out.len(), s.size)));
    }
    Ok(out)
}

/// Parses a fatbin container and the entry chosen for `target`.
pub(crate) fn parse(b: &[u8], target: Target) -> Result<Image, ImageError> {
    let entries = entries(b)?;
    let summaries: Vec<EntrySummary> = entries.iter().map(|e| e.summary.clone()).collect();
    let Some(i) = choose(&entries, target) else {
        let seen: Vec<String> = summaries.iter().map(EntrySummary::describe).collect();
        return Err(ImageError::NoBinaryForGpu(format!(
            "no entry of the fatbin runs on sm_{} (entries: {})",
            target.sm,
            if seen.is_empty() { "none".to_string() } else { seen.join(", ") }
        )));
    };
    let e = &entries[i];
    let chosen = e.summary.describe();
    let data = payload(e)?;
    let ptx_text = |data: &[u8], what: &str| -> Result<String, ImageError> {
        let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
        std::str::from_utf8(&data[..end]).map(str::to_string).map_err(|_| ImageError::InvalidPtx(format!("{what}: not UTF-8 text")))
    };
    let (kernels, globals, ptx_version, ptx) = match e.summary.kind {
        EntryKind::Cubin => {
            let c = cubin::parse(&data).map_err(|err| context(&chosen, err))?;
            // PTX mode runs the PTX beside the cubin (the same module, compiled for a
            // virtual architecture the device accepts), when the fatbin has one; else the
            // lowest newer one (nvcc 13 builds of upstream VMAF carry compute_120 PTX
            // only): the device could not JIT it, but it is the same kernels, and the
            // translator refuses any instruction it cannot run.
            let ptx_entries = || entries.iter().filter(|x| x.summary.kind == EntryKind::Ptx);
            let best_ptx = ptx_entries()
                .filter(|x| x.summary.arch <= target.sm)
                .max_by_key(|x| x.summary.arch)
                .or_else(|| ptx_entries().min_by_key(|x| x.summary.arch));
            // A damaged PTX entry does not stop the cubin from loading (as on a device,
            // which never reads it); PTX mode then says there is no PTX.
            let ptx: Vec<String> = best_ptx.and_then(|p| payload(p).ok()).and_then(|d| ptx_text(&d, "").ok()).into_iter().collect();
            (c.kernels, c.globals, None, ptx)
        }
        _ => {
            let text = ptx_text(&data, &chosen)?;
            let m = ptx::parse(&text).map_err(|err| context(&chosen, err))?;
            (m.kernels, m.globals, Some(m.version), vec![text])
        }
    };
    Ok(Image { kind: ImageKind::Fatbin, chosen, kernels, globals, entries: summaries, ptx_version, ptx, jit_opt_level: None })
}

/// Prefixes an error's message with the entry it came from.
fn context(entry: &str, err: ImageError) -> ImageError {
    match err {
        ImageError::Invalid(m) => ImageError::Invalid(format!("{entry}: {m}")),
        ImageError::InvalidPtx(m) => ImageError::InvalidPtx(format!("{entry}: {m}")),
        other => other,
    }
}
