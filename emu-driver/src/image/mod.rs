//! Module image parsing: PTX text, fatbin containers, ELF cubins (docs/architecture.md).
//!
//! What the driver's cuModuleLoadData family hands over is parsed here into an [`Image`]:
//! the kernel entry names (as the image spells them, mangled for C++), their parameter
//! layout, function attributes where a cubin for the emulated device is present, and the
//! `__device__` / `__constant__` variables. Everything is pure Rust and panic-free on any
//! input: every size and count read from a header is checked against the bytes that are
//! really there and against the limits below, decompression is bounded by the size the
//! entry declares.
//!
//! # Which fatbin entry is used (for a device of compute capability `M.m`)
//!
//! 1. An ELF cubin for the same major `M` with minor `<= m` (`sm_90a`/`sm_100f` count as
//!    their plain number); the highest such wins. This is what a device loads directly.
//! 2. Otherwise the PTX with the highest virtual architecture `<=` the device's (it would
//!    be JIT-compiled).
//! 3. Otherwise nothing can run: [`ImageError::NoBinaryForGpu`]. Cubins for another major
//!    (sm_80 or sm_120 on an sm_90 device) and PTX above the device never run.
//!
//! Entries of an unknown kind are listed in [`Image::entries`] and skipped. Names and
//! parameter sizes come from the chosen entry; every entry of one fatbin is the same
//! module compiled for different targets, so they agree.

mod cubin;
mod fatbin;
pub mod linked;
mod memory;
mod ptx;
mod types;

pub use cubin::cubin_globals;
pub use ptx::ptx_globals;

pub use types::*;

/// Parses an image whose length is known (a file, a buffer with an explicit size).
/// Trailing bytes after a fatbin or ELF (bin2c NUL padding) are ignored; PTX text ends at
/// its first NUL or at the end of `bytes`.
pub fn parse_bytes(bytes: &[u8], target: Target) -> Result<Image, ImageError> {
    match sniff(bytes) {
        Format::Fatbin => fatbin::parse(bytes, target),
        Format::Linked => {
            let modules = linked::modules(bytes)?;
            let mut img = Image {
                kind: ImageKind::Linked,
                chosen: format!("linked image of {} PTX modules", modules.len()),
                kernels: Vec::new(),
                globals: Vec::new(),
                entries: Vec::new(),
                ptx_version: None,
                ptx: Vec::new(),
                jit_opt_level: linked::opt_level(bytes),
            };
            for (i, text) in modules.iter().enumerate() {
                let m = ptx::parse(text).map_err(|e| match e {
                    ImageError::InvalidPtx(m) => ImageError::InvalidPtx(format!("linked module {i}: {m}")),
                    other => other,
                })?;
                img.kernels.extend(m.kernels);
                for g in m.globals {
                    if img.global(&g.name).is_none() {
                        img.globals.push(g);
                    }
                }
                img.ptx_version = img.ptx_version.max(Some(m.version));
            }
            img.ptx = modules;
            Ok(img)
        }
        Format::Wrapper => Err(invalid(
            "a fatbin wrapper (magic 0x466243b1) holds a pointer to the fatbin; \
             it can only be loaded from memory",
        )),
        Format::Elf => {
            let cubin = cubin::parse(bytes)?;
            check_cubin_runs(cubin.arch, target)?;
            Ok(Image {
                kind: ImageKind::Cubin,
                chosen: format!("sm_{} cubin", cubin.arch),
                kernels: cubin.kernels,
                globals: cubin.globals,
                entries: Vec::new(),
                ptx_version: None,
                ptx: Vec::new(),
                jit_opt_level: None,
            })
        }
        Format::Text => {
            let text = ptx_text(bytes)?;
            let m = ptx::parse(text)?;
            if m.target_sm > target.sm {
                // The JIT compiler refuses a .target above the device.
                return Err(ImageError::InvalidPtx(format!("PTX .target sm_{} is above the device's sm_{}", m.target_sm, target.sm)));
            }
            Ok(Image {
                kind: ImageKind::Ptx,
                chosen: format!("compute_{} ptx", m.target_sm),
                kernels: m.kernels,
                globals: m.globals,
                entries: Vec::new(),
                ptx_version: Some(m.version),
                ptx: vec![text.to_string()],
                jit_opt_level: None,
            })
        }
    }
}

/// Parses an image given only as a pointer (cuModuleLoadData, cuModuleLoadFatBinary).
///
/// The length is learnt from the headers: a fatbin's header size, an ELF's section and
/// program header extents, PTX up to its NUL (at most [`MAX_PTX_BYTES`]), or the fatbin
/// wrapper `{magic 0x466243b1, version, data, filename}` that host objects embed. Memory
/// is read through a checked copy where the OS offers one, so an unreadable page gives an
/// error rather than a fault.
///
/// # Safety
/// `ptr` must be null or point to memory the process may read for as long as the image's
/// own headers say it extends.
pub unsafe fn parse_ptr(ptr: *const u8, target: Target) -> Result<Image, ImageError> {
    // SAFETY: the caller's contract, forwarded.
    let bytes = unsafe { memory::image_bytes(ptr)? };
    parse_bytes(&bytes, target)
}

/// True when [`parse_ptr`] reads through a copy that reports unreadable pages as
/// [`ImageError::Unreadable`] (Linux `process_vm_readv`); false where the OS refuses it.
pub fn checked_reads() -> bool {
    memory::checked_reads()
}

fn check_cubin_runs(arch: u32, target: Target) -> Result<(), ImageError> {
    if cubin_runs(arch, target) {
        Ok(())
    } else {
        Err(ImageError::NoBinaryForGpu(format!("the image is a cubin for sm_{arch}, which cannot run on an sm_{} device", target.sm)))
    }
}

/// The text part of a PTX image: up to the first NUL, which must be followed only by NULs.
fn ptx_text(bytes: &[u8]) -> Result<&str, ImageError> {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    if bytes[end..].iter().any(|&b| b != 0) {
        return Err(invalid("not a PTX, fatbin or ELF image (binary data after a NUL)"));
    }
    let text = &bytes[..end];
    let Ok(s) = std::str::from_utf8(text) else {
        return Err(invalid("not a PTX, fatbin or ELF image (not text)"));
    };
    if !ptx::looks_like_ptx(s) {
        return Err(invalid("not a PTX, fatbin or ELF image (no .version/.target directive)"));
    }
    Ok(s)
}
