//! The data of module images (what parsing produces, the limits, the errors) and the
//! byte-level helpers every parser shares; no parsing logic.

use std::fmt;

/// Largest image accepted, whatever its headers claim (container or decompressed entry).
pub const MAX_IMAGE_BYTES: u64 = 1 << 30;
/// Largest PTX text accepted when its length is only known from its terminating NUL.
pub const MAX_PTX_BYTES: u64 = 256 << 20;
/// Most entries one fatbin container may hold.
pub const MAX_FATBIN_ENTRIES: usize = 4096;

/// The emulated device the image is loaded for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// Compute capability as major*10+minor: 90 for an H200.
    pub sm: u32,
}

/// The kind of container given to the loader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    /// PTX assembly text.
    Ptx,
    /// A bare ELF cubin.
    Cubin,
    /// A fatbin container (given directly or through its `__fatBinC_Wrapper_t`).
    Fatbin,
    /// What cuLinkComplete made: the PTX modules given to the JIT linker.
    Linked,
}

/// The result of parsing one module image.
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    /// Kind of the container given.
    pub kind: ImageKind,
    /// Which entry was used, e.g. "sm_90 cubin" or "compute_80 ptx (zstd)".
    pub chosen: String,
    /// Kernel entries, in image order.
    pub kernels: Vec<KernelInfo>,
    /// `.global` / `.const` variables (PTX) or objects of `.nv.global*` / `.nv.constantN`
    /// (cubin).
    pub globals: Vec<GlobalInfo>,
    /// Every fatbin entry seen (empty for a bare PTX or cubin).
    pub entries: Vec<EntrySummary>,
    /// The `.version` (ISA major, minor) when the chosen entry is PTX: a driver JIT-compiles
    /// only PTX up to its own ISA version.
    pub ptx_version: Option<(u32, u32)>,
    /// The PTX PTX mode runs: the image itself (PTX), the fatbin's PTX entry of the
    /// highest virtual architecture the device accepts (decompressed), even when a cubin
    /// was chosen, else its lowest newer one (the device could not JIT that, but it holds
    /// the same kernels), or the modules of a linked image (cuLinkComplete), translated together;
    /// empty for a bare cubin or a fatbin without such PTX.
    pub ptx: Vec<String>,
    /// The JIT optimisation level a linked image was made at (cuLinkCreate's
    /// CU_JIT_OPTIMIZATION_LEVEL), which decides PTX mode's contraction over the load's.
    pub jit_opt_level: Option<u8>,
}

impl Image {
    /// The kernel of that exact (possibly mangled) name.
    pub fn kernel(&self, name: &str) -> Option<&KernelInfo> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// The global variable of that exact name.
    pub fn global(&self, name: &str) -> Option<&GlobalInfo> {
        self.globals.iter().find(|g| g.name == name)
    }
}

/// One kernel entry of a module.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelInfo {
    /// The entry's symbol as the image spells it (mangled for C++ kernels).
    pub name: String,
    /// Parameter layout in order, when the image records it (PTX and cubins both do).
    pub params: Option<Vec<ParamInfo>>,
    /// Function attributes; only a cubin carries them (registers are not known from PTX).
    pub attrs: Option<FuncAttrs>,
    /// Block-size directives, from PTX (`.maxntid`, `.reqntid`, `.minnctapersm`) or from
    /// the cubin's EIATTR records.
    pub bounds: LaunchBounds,
}

impl KernelInfo {
    /// Bytes the parameters occupy (end of the last one), if the layout is known.
    pub fn param_bytes(&self) -> Option<u32> {
        self.params.as_ref().map(|p| p.iter().map(|p| p.offset.saturating_add(p.size)).max().unwrap_or(0))
    }
}

/// One kernel parameter: its byte offset in the parameter buffer and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    /// Byte offset of the parameter in the parameter buffer.
    pub offset: u32,
    /// Size of the parameter in bytes.
    pub size: u32,
}

/// Launch-bound directives of a kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchBounds {
    /// `.maxntid` / EIATTR_MAX_THREADS (from `__launch_bounds__(N)`).
    pub maxntid: Option<[u32; 3]>,
    /// `.reqntid` / EIATTR_REQNTID: the only block shape the kernel accepts.
    pub reqntid: Option<[u32; 3]>,
    /// `.minnctapersm` (PTX only).
    pub minnctapersm: Option<u32>,
}

/// What cuFuncGetAttribute answers, read from a cubin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FuncAttrs {
    /// EIATTR_REGCOUNT (or the register field of the `.text.<name>` section header).
    pub num_regs: u32,
    /// Static `__shared__` bytes, as `ptxas -v` reports them: `.nv.shared.<name>` less the
    /// 1 KiB system window that ptxas places first from sm_90 on.
    pub shared_size_bytes: u32,
    /// The `.nv.shared.<name>` section size as the cubin has it.
    pub shared_section_bytes: u32,
    /// EIATTR_FRAME_SIZE: local (stack) bytes per thread.
    pub local_size_bytes: u32,
    /// Bytes of the module's user constant banks (`__constant__` variables).
    pub const_size_bytes: u32,
    /// Product of EIATTR_MAX_THREADS (or EIATTR_REQNTID), if the kernel has one.
    pub max_threads_per_block: Option<u32>,
    /// EIATTR_REQNTID: the only block shape the kernel accepts, if it has one.
    pub reqntid: Option<[u32; 3]>,
    /// Not recorded in cubins: set by cuFuncSetAttribute. Always `None` here.
    pub max_dynamic_shared: Option<u32>,
    /// Architecture of the cubin, major*10+minor (90).
    pub binary_version: u32,
    /// Virtual architecture the cubin was compiled from (the `.note.nv.cuinfo` note).
    pub ptx_version: Option<u32>,
    /// EIATTR_CBANK_PARAM_SIZE: bytes of the parameter buffer.
    pub param_bytes: Option<u32>,
}

/// A module-scope variable that cuModuleGetGlobal can name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalInfo {
    /// The variable's symbol, as cuModuleGetGlobal is asked for it.
    pub name: String,
    /// Size in bytes when the image states it.
    pub size: Option<u64>,
    /// `__constant__` (true) or `__device__` (false).
    pub constant: bool,
}

/// What an entry of a fatbin holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// PTX text (entry kind 1).
    Ptx,
    /// An ELF cubin (entry kind 2).
    Cubin,
    /// Any other kind number, listed and skipped.
    Unknown(u16),
}

/// How an entry's payload is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Stored as is.
    None,
    /// Flag 0x8000: a zstd frame (nvcc 12.8 and later, `--compress-mode=default/size`).
    Zstd,
    /// Flag 0x2000: an LZ4 block (older nvcc; `--compress-mode=speed` today).
    Lz4,
}

/// One fatbin entry as seen in the container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntrySummary {
    /// What the entry holds.
    pub kind: EntryKind,
    /// Architecture number, e.g. 90.
    pub arch: u32,
    /// 'a' (arch-specific, sm_90a) or 'f' (family, sm_100f) variants.
    pub variant: Option<char>,
    /// How the payload is stored.
    pub compression: Compression,
    /// Bytes stored in the container for this entry (after its header, padding included).
    pub stored_size: u64,
    /// Bytes of the payload once decompressed.
    pub size: u64,
    /// Offset of the entry header from the container start.
    pub offset: u64,
}

impl EntrySummary {
    /// "sm_90 cubin", "compute_80 ptx (zstd)".
    pub fn describe(&self) -> String {
        let v = self.variant.map(String::from).unwrap_or_default();
        let what = match self.kind {
            EntryKind::Cubin => format!("sm_{}{v} cubin", self.arch),
            EntryKind::Ptx => format!("compute_{}{v} ptx", self.arch),
            EntryKind::Unknown(k) => format!("arch {}{v} entry of unknown kind {k:#x}", self.arch),
        };
        match self.compression {
            Compression::None => what,
            Compression::Zstd => format!("{what} (zstd)"),
            Compression::Lz4 => format!("{what} (lz4)"),
        }
    }
}

/// Why an image was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImageError {
    /// Not a recognised image, or a corrupt/truncated container, entry or ELF.
    Invalid(String),
    /// Well formed, but no entry can run on the target.
    NoBinaryForGpu(String),
    /// PTX text that does not parse.
    InvalidPtx(String),
    /// An entry compressed with a scheme not handled here.
    UnsupportedCompression(String),
    /// A null image pointer.
    NullPointer,
    /// The image's memory cannot be read (parse_ptr only).
    Unreadable(String),
}

impl ImageError {
    /// The CUresult the driver answers for this error (the one place this mapping lives).
    pub fn cu_result(&self) -> u32 {
        match self {
            ImageError::Invalid(_) => 200,                // CUDA_ERROR_INVALID_IMAGE
            ImageError::UnsupportedCompression(_) => 200, // CUDA_ERROR_INVALID_IMAGE
            ImageError::Unreadable(_) => 200,             // CUDA_ERROR_INVALID_IMAGE
            ImageError::NoBinaryForGpu(_) => 209,         // CUDA_ERROR_NO_BINARY_FOR_GPU
            ImageError::InvalidPtx(_) => 218,             // CUDA_ERROR_INVALID_PTX
            ImageError::NullPointer => 1,                 // CUDA_ERROR_INVALID_VALUE
        }
    }

    /// The message, without the variant.
    pub fn message(&self) -> &str {
        match self {
            ImageError::Invalid(m)
            | ImageError::NoBinaryForGpu(m)
            | ImageError::InvalidPtx(m)
            | ImageError::UnsupportedCompression(m)
            | ImageError::Unreadable(m) => m,
            ImageError::NullPointer => "null image pointer",
        }
    }
}

impl fmt::Display for ImageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            ImageError::Invalid(_) => "invalid image",
            ImageError::NoBinaryForGpu(_) => "no binary for the device",
            ImageError::InvalidPtx(_) => "invalid PTX",
            ImageError::UnsupportedCompression(_) => "unsupported compression",
            ImageError::NullPointer => "invalid value",
            ImageError::Unreadable(_) => "unreadable image",
        };
        write!(f, "{what}: {}", self.message())
    }
}

impl std::error::Error for ImageError {}

/// An [`ImageError::Invalid`] with that message.
pub(crate) fn invalid(msg: impl Into<String>) -> ImageError {
    ImageError::Invalid(msg.into())
}

/// The formats told apart by their first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    Fatbin,
    /// cuLinkComplete's image (see `linked`).
    Linked,
    /// The `__fatBinC_Wrapper_t` a host object embeds: it points at the fatbin.
    Wrapper,
    Elf,
    Text,
}

/// First word of a fatbin container.
pub(crate) const FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// First word of a `__fatBinC_Wrapper_t`.
pub(crate) const WRAPPER_MAGIC: u32 = 0x4662_43B1;

/// Tells the format from the first (up to four) bytes.
pub(crate) fn sniff(head: &[u8]) -> Format {
    if head.len() >= 4 {
        let m = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
        if m == FATBIN_MAGIC {
            return Format::Fatbin;
        }
        if m == WRAPPER_MAGIC {
            return Format::Wrapper;
        }
        if head[..4] == *b"\x7fELF" {
            return Format::Elf;
        }
        if head[..4] == *b"SLNK" {
            return Format::Linked;
        }
    }
    Format::Text
}

/// Can a cubin for `arch` run on the target? Same major, minor not above the device's.
pub(crate) fn cubin_runs(arch: u32, target: Target) -> bool {
    arch / 10 == target.sm / 10 && arch <= target.sm
}

/// Reads a little-endian integer at `off`, or None past the end (also `le_u32`, `le_u64`).
pub(crate) fn le_u16(b: &[u8], off: usize) -> Option<u16> {
    let s = b.get(off..off.checked_add(2)?)?;
    Some(u16::from_le_bytes([s[0], s[1]]))
}

pub(crate) fn le_u32(b: &[u8], off: usize) -> Option<u32> {
    let s = b.get(off..off.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

pub(crate) fn le_u64(b: &[u8], off: usize) -> Option<u64> {
    let s = b.get(off..off.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(u64::from_le_bytes(a))
}
