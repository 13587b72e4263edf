//! ELF cubins: kernel entries, their parameter layout and function attributes, and the
//! module's `__device__` / `__constant__` objects.
//!
//! Where things live in a cubin (as nvcc 12.x/13.x writes them):
//! - kernels are FUNC symbols with `STO_CUDA_ENTRY` (0x10) in `st_other`, their code in
//!   `.text.<name>`;
//! - `.nv.info` holds module-wide EIATTR records keyed by symbol index (EIATTR_REGCOUNT,
//!   EIATTR_FRAME_SIZE), `.nv.info.<name>` the kernel's own (EIATTR_KPARAM_INFO,
//!   EIATTR_MAX_THREADS, EIATTR_REQNTID, EIATTR_CBANK_PARAM_SIZE);
//! - `.nv.shared.<name>` (NOBITS) is the kernel's static shared window;
//! - variables are OBJECT symbols of `.nv.global` (zero-initialised), `.nv.global.init`
//!   and the module constant banks `.nv.constantN` (N > 0; bank 0 is per-kernel
//!   parameters, named `.nv.constant0.<name>`).
//!
//! An EIATTR record is `u8 format, u8 attribute, u16 value-or-size`; format 4 (EIFMT_SVAL)
//! is followed by that many bytes, formats 1-3 (NVAL, BVAL, HVAL) carry the u16 only.

use std::collections::HashMap;

use super::types::{invalid, le_u16, le_u32, le_u64, FuncAttrs, GlobalInfo, ImageError, KernelInfo, LaunchBounds, ParamInfo};

/// `e_machine` of NVIDIA cubins.
const EM_CUDA: u16 = 190;
/// `st_other` bit of a kernel entry symbol.
const STO_CUDA_ENTRY: u8 = 0x10;
/// ptxas places this system window first in every kernel's shared memory from sm_90 on.
const RESERVED_SHARED_SM90: u32 = 1024;

const SHT_NULL: u32 = 0;
const SHT_SYMTAB: u32 = 2;
const SHT_NOBITS: u32 = 8;
const STT_OBJECT: u8 = 1;
const STT_FUNC: u8 = 2;
const SHN_LORESERVE: u16 = 0xff00;
/// Sections and symbols accepted in one cubin (real ones have tens to thousands).
const MAX_SECTIONS: u64 = 1 << 20;

const EIFMT_SVAL: u8 = 4;
const EIATTR_MAX_THREADS: u8 = 0x05;
const EIATTR_REQNTID: u8 = 0x10;
const EIATTR_FRAME_SIZE: u8 = 0x11;
const EIATTR_KPARAM_INFO: u8 = 0x17;
const EIATTR_CBANK_PARAM_SIZE: u8 = 0x19;
const EIATTR_REGCOUNT: u8 = 0x2f;

/// What the driver needs from one cubin.
pub(crate) struct Cubin {
    /// major*10+minor of the cubin's architecture.
    pub arch: u32,
    pub kernels: Vec<KernelInfo>,
    pub globals: Vec<GlobalInfo>,
}

/// One EIATTR record.
struct Attr<'a> {
    attr: u8,
    /// The u16 of NVAL/BVAL/HVAL records (the size, for SVAL).
    value: u16,
    /// The payload of an SVAL record (empty otherwise).
    data: &'a [u8],
}

fn eiattrs<'a>(b: &'a [u8], section: &str) -> Result<Vec<Attr<'a>>, ImageError> {
    let mut out = Vec::new();
    let mut p = 0usize;
    while p < b.len() {
        let (Some(&fmt), Some(&attr), Some(value)) = (b.get(p), b.get(p + 1), le_u16(b, p + 2)) else {
            return Err(invalid(format!("{section}: EIATTR record truncated at {p}")));
        };
        p += 4;
        let data = match fmt {
            1..=3 => &b[p..p],
            EIFMT_SVAL => {
                let d = b
                    .get(p..p + value as usize)
                    .ok_or_else(|| invalid(format!("{section}: EIATTR {attr:#x} of {value} bytes truncated")))?;
                p += value as usize;
                d
            }
            f => return Err(invalid(format!("{section}: EIATTR format {f} at {}", p - 4))),
        };
        out.push(Attr { attr, value, data });
    }
    Ok(out)
}

fn three(d: &[u8]) -> Option<[u32; 3]> {
    Some([le_u32(d, 0)?, le_u32(d, 4)?, le_u32(d, 8)?])
}

/// One section header (the fields used here).
struct Section {
    name: String,
    kind: u32,
    offset: u64,
    size: u64,
    link: u32,
    info: u32,
}

/// One symbol of `.symtab`.
struct Symbol {
    name: String,
    kind: u8,
    other: u8,
    shndx: u16,
    size: u64,
}

/// A little-endian ELF64 read with explicit field offsets: cubins keep their section
/// header table only 4-byte aligned, so nothing is read in place.
struct Elf<'a> {
    data: &'a [u8],
    abi_version: u8,
    machine: u16,
    flags: u32,
    sections: Vec<Section>,
}

impl<'a> Elf<'a> {
    fn parse(data: &'a [u8]) -> Result<Self, ImageError> {
        if data.len() < 64 || data[..4] != *b"\x7fELF" {
            return Err(invalid("cubin: ELF header truncated"));
        }
        match (data[4], data[5]) {
            (2, 1) => {}
            (1, _) => return Err(invalid("cubin: 32-bit ELF images are not supported")),
            (2, 2) => return Err(invalid("cubin: big-endian ELF")),
            (c, d) => return Err(invalid(format!("cubin: ELF class {c}, data encoding {d}"))),
        }
        let h = |o| le_u16(data, o).unwrap_or(0);
        let machine = h(0x12);
        let flags = le_u32(data, 0x30).unwrap_or(0);
        let shoff = le_u64(data, 0x28).unwrap_or(0);
        let (shentsize, shnum16, shstrndx16) = (h(0x3a), h(0x3c), h(0x3e));
        let mut elf = Elf { data, abi_version: data[8], machine, flags, sections: Vec::new() };
        let (phoff, phentsize, phnum) = (le_u64(data, 0x20).unwrap_or(0), h(0x36) as u64, h(0x38) as u64);
        if phnum > 0 && phoff.checked_add(phentsize * phnum).is_none_or(|e| e > data.len() as u64) {
            return Err(invalid(format!("cubin: program header table ({phnum} x {phentsize} at {phoff}) runs past the image")));
        }
        if shoff == 0 {
            return Ok(elf);
        }
        if shentsize != 64 {
            return Err(invalid(format!("cubin: section header size {shentsize}")));
        }
        let raw = |i: u64| -> Result<&'a [u8], ImageError> {
            let start = i.checked_mul(64).and_then(|o| o.checked_add(shoff));
            start
                .and_then(|s| usize::try_from(s).ok())
                .and_then(|s| data.get(s..s.checked_add(64)?))
                .ok_or_else(|| invalid(format!("cubin: section header {i} lies outside the image")))
        };
        let s0 = raw(0)?;
        let shnum = if shnum16 == 0 { le_u64(s0, 32).unwrap_or(0) } else { shnum16 as u64 };
        let shstrndx = if shstrndx16 == 0xffff { le_u32(s0, 40).unwrap_or(0) as u64 } else { shstrndx16 as u64 };
        if shnum > MAX_SECTIONS {
            return Err(invalid(format!("cubin: {shnum} sections")));
        }
        // Check the whole table is present before allocating for it.
        raw(shnum.saturating_sub(1))?;
        let mut secs = Vec::with_capacity(shnum as usize);
        for i in 0..shnum {
            let r = raw(i)?;
            let w = |o| le_u64(r, o).unwrap_or(0);
            secs.push((
                le_u32(r, 0).unwrap_or(0),
                Section {
                    name: String::new(),
                    kind: le_u32(r, 4).unwrap_or(0),
                    offset: w(24),
                    size: w(32),
                    link: le_u32(r, 40).unwrap_or(0),
                    info: le_u32(r, 44).unwrap_or(0),
                },
            ));
        }
        let strtab: &[u8] = match secs.get(shstrndx as usize) {
            Some((_, s)) if shnum > 0 => elf_bytes(data, s)?,
            _ => &[],
        };
        for (name_off, mut s) in secs {
            s.name =
                c_string(strtab, name_off as u64).ok_or_else(|| invalid(format!("cubin: section name at {name_off} outside .shstrtab")))?;
            elf.sections.push(s);
        }
        Ok(elf)
    }

    fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    fn bytes(&self, s: &Section) -> Result<&'a [u8], ImageError> {
        elf_bytes(self.data, s)
    }

    fn section_data(&self, name: &str) -> Result<Option<&'a [u8]>, ImageError> {
        self.section(name).map(|s| self.bytes(s)).transpose()
    }

    fn symbols(&self) -> Result<Vec<Symbol>, ImageError> {
        let Some(symtab) = self.sections.iter().find(|s| s.kind == SHT_SYMTAB) else {
            return Ok(Vec::new());
        };
        let d = self.bytes(symtab)?;
        let names = match self.sections.get(symtab.link as usize) {
            Some(s) => self.bytes(s)?,
            None => return Err(invalid("cubin: .symtab links to no string table")),
        };
        let mut out = Vec::with_capacity(d.len() / 24);
        for r in d.chunks_exact(24) {
            let name_off = le_u32(r, 0).unwrap_or(0) as u64;
            out.push(Symbol {
                name: c_string(names, name_off).ok_or_else(|| invalid(format!("cubin: symbol name at {name_off} outside .strtab")))?,
                kind: r[4] & 0xf,
                other: r[5],
                shndx: le_u16(r, 6).unwrap_or(0),
                size: le_u64(r, 16).unwrap_or(0),
            });
        }
        Ok(out)
    }

    /// The name of the section a symbol is defined in.
    fn section_of(&self, s: &Symbol) -> Option<&str> {
        if s.shndx == 0 || s.shndx >= SHN_LORESERVE {
            return None;
        }
        self.sections.get(s.shndx as usize).map(|s| s.name.as_str())
    }
}

/// A section's file contents (empty for NOBITS), checked against the image.
fn elf_bytes<'a>(data: &'a [u8], s: &Section) -> Result<&'a [u8], ImageError> {
    if s.kind == SHT_NOBITS || s.kind == SHT_NULL {
        return Ok(&[]);
    }
    let r = usize::try_from(s.offset).ok().and_then(|o| {
        let end = o.checked_add(usize::try_from(s.size).ok()?)?;
        data.get(o..end)
    });
    r.ok_or_else(|| {
        invalid(format!("cubin: section {} ({} bytes at {}) runs past the image's {} bytes", s.name, s.size, s.offset, data.len()))
    })
}

/// The NUL-terminated string at `off` of a string table.
fn c_string(table: &[u8], off: u64) -> Option<String> {
    let rest = table.get(usize::try_from(off).ok()?..)?;
    let end = rest.iter().position(|&b| b == 0)?;
    Some(String::from_utf8_lossy(&rest[..end]).into_owned())
}

/// The architecture a cubin header names: ELF ABI version 8 and later keep it in bits
/// 8-15 of `e_flags`, older ones in bits 0-7.
fn arch_of(abi_version: u8, flags: u32) -> u32 {
    if abi_version >= 8 {
        (flags >> 8) & 0xff
    } else {
        flags & 0xff
    }
}

/// Parses a cubin (an ELF64 for EM_CUDA). Trailing bytes after the ELF are ignored.
pub(crate) fn parse(data: &[u8]) -> Result<Cubin, ImageError> {
    let elf = Elf::parse(data)?;
    if elf.machine != EM_CUDA {
        return Err(invalid(format!("ELF for machine {}, not a CUDA cubin (190)", elf.machine)));
    }
    let (flags, abi) = (elf.flags, elf.abi_version);
    let arch = arch_of(abi, flags);
    if !(10..=255).contains(&arch) {
        return Err(invalid(format!("cubin: no architecture in e_flags {flags:#x}")));
    }
    let symbols = elf.symbols()?;

    // Module-wide records, keyed by symbol index.
    let mut regs: HashMap<u32, u32> = HashMap::new();
    let mut frame: HashMap<u32, u32> = HashMap::new();
    if let Some(d) = elf.section_data(".nv.info")? {
        for a in eiattrs(d, ".nv.info")? {
            let (Some(sym), Some(v)) = (le_u32(a.data, 0), le_u32(a.data, 4)) else { continue };
            match a.attr {
                EIATTR_REGCOUNT => {
                    regs.insert(sym, v);
                }
                EIATTR_FRAME_SIZE => {
                    frame.insert(sym, v);
                }
                _ => {}
            }
        }
    }

    let reserved_window = arch >= 90
        && (elf.sections.iter().any(|s| s.name.starts_with(".nv.shared.reserved."))
            || symbols.iter().any(|s| s.name.starts_with("__nv_reservedSMEM")));

    let mut globals = Vec::new();
    let mut banks: Vec<&str> = Vec::new();
    for s in &symbols {
        if s.kind != STT_OBJECT || s.name.is_empty() {
            continue;
        }
        let Some(sec) = elf.section_of(s) else { continue };
        let Some(constant) = variable_section(sec) else { continue };
        globals.push(GlobalInfo { name: s.name.clone(), size: Some(s.size), constant });
        if constant && !banks.contains(&sec) {
            banks.push(sec);
        }
    }
    let const_size = banks.iter().filter_map(|b| elf.section(b)).fold(0u64, |a, s| a.saturating_add(s.size));
    let ptx_version = cuinfo_virtual_arch(elf.section_data(".note.nv.cuinfo")?)
        .or_else(|| (abi < 8 && (flags >> 16) & 0xff != 0).then_some((flags >> 16) & 0xff));

    let mut kernels = Vec::new();
    for (idx, s) in symbols.iter().enumerate() {
        if s.kind != STT_FUNC || s.other & STO_CUDA_ENTRY == 0 || s.shndx == 0 {
            continue;
        }
        let name = &s.name;
        let info_name = format!(".nv.info.{name}");
        let mut params: Vec<(u16, ParamInfo)> = Vec::new();
        let mut maxntid = None;
        let mut reqntid = None;
        let mut param_bytes = None;
        if let Some(d) = elf.section_data(&info_name)? {
            for a in eiattrs(d, &info_name)? {
                match a.attr {
                    EIATTR_KPARAM_INFO => {
                        let (Some(ord), Some(off), Some(bits)) = (le_u16(a.data, 4), le_u16(a.data, 6), le_u32(a.data, 8)) else {
                            return Err(invalid(format!("{info_name}: short EIATTR_KPARAM_INFO")));
                        };
                        params.push((ord, ParamInfo { offset: off as u32, size: bits >> 18 }));
                    }
                    EIATTR_MAX_THREADS => maxntid = three(a.data),
                    EIATTR_REQNTID => reqntid = three(a.data),
                    EIATTR_CBANK_PARAM_SIZE => param_bytes = Some(a.value as u32),
                    _ => {}
                }
            }
        }
        params.sort_by_key(|p| p.0);
        if params.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(invalid(format!("{info_name}: parameter ordinal given twice")));
        }
        let num_regs =
            regs.get(&(idx as u32)).copied().or_else(|| elf.section(&format!(".text.{name}")).map(|t| t.info >> 24)).unwrap_or(0);
        let shared_section = elf.section(&format!(".nv.shared.{name}")).map(|h| h.size.min(u32::MAX as u64) as u32).unwrap_or(0);
        let shared = if reserved_window { shared_section.saturating_sub(RESERVED_SHARED_SM90) } else { shared_section };
        let product = |d: [u32; 3]| d[0].checked_mul(d[1]).and_then(|v| v.checked_mul(d[2]));
        kernels.push(KernelInfo {
            name: name.clone(),
            params: Some(params.into_iter().map(|p| p.1).collect()),
            attrs: Some(FuncAttrs {
                num_regs,
                shared_size_bytes: shared,
                shared_section_bytes: shared_section,
                local_size_bytes: frame.get(&(idx as u32)).copied().unwrap_or(0),
                const_size_bytes: const_size.min(u32::MAX as u64) as u32,
                max_threads_per_block: reqntid.or(maxntid).and_then(product),
                reqntid,
                max_dynamic_shared: None,
                binary_version: arch,
                ptx_version,
                param_bytes,
            }),
            bounds: LaunchBounds { maxntid, reqntid, minnctapersm: None },
        });
    }
    Ok(Cubin { arch, kernels, globals })
}

/// `.nv.constant3`: a module constant bank (not `.nv.constant0.<kernel>`).
fn module_constant_bank(section: &str) -> bool {
    match section.strip_prefix(".nv.constant") {
        Some(n) => !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) && n != "0",
        None => false,
    }
}

fn variable_section(section: &str) -> Option<bool> {
    if section == ".nv.global" || section == ".nv.global.init" {
        Some(false)
    } else if module_constant_bank(section) {
        Some(true)
    } else {
        None
    }
}

/// The virtual architecture in the `.note.nv.cuinfo` note (type 1000, "NVIDIA Corp"):
/// its descriptor is `u16 version, u16 virtual sm, u32 toolkit version`.
fn cuinfo_virtual_arch(note: Option<&[u8]>) -> Option<u32> {
    let n = note?;
    let namesz = le_u32(n, 0)? as usize;
    let descsz = le_u32(n, 4)? as usize;
    let kind = le_u32(n, 8)?;
    if kind != 1000 || descsz < 4 {
        return None;
    }
    let desc = 12usize.checked_add(namesz.checked_add(3)? & !3)?;
    let sm = le_u16(n, desc.checked_add(2)?)? as u32;
    (sm > 0).then_some(sm)
}

/// The `__device__` and `__constant__` objects of a cubin, with their sizes (for
/// cuModuleGetGlobal).
pub fn cubin_globals(bytes: &[u8]) -> Result<Vec<GlobalInfo>, ImageError> {
    parse(bytes).map(|c| c.globals)
}

/// Bytes an ELF image spans, from its headers: the furthest of the section header table,
/// the program header table and every section's file contents. `read(offset, len)` must
/// return exactly the bytes asked for (or an error). Used when only a pointer is given.
pub(crate) fn elf_len(read: &mut dyn FnMut(u64, usize) -> Result<Vec<u8>, ImageError>, limit: u64) -> Result<u64, ImageError> {
    let h = read(0, 64)?;
    if h.get(4) != Some(&2) || h.get(5) != Some(&1) {
        return Err(invalid("cubin: not a little-endian ELF64"));
    }
    let u16_at = |o| le_u16(&h, o).unwrap_or(0) as u64;
    let u64_at = |o| le_u64(&h, o).unwrap_or(0);
    let (phoff, shoff) = (u64_at(0x20), u64_at(0x28));
    let (phentsize, phnum) = (u16_at(0x36), u16_at(0x38));
    let (shentsize, mut shnum) = (u16_at(0x3a), u16_at(0x3c));
    let too_big = || invalid(format!("cubin: headers reach past the {limit}-byte limit"));
    let mut end: u64 = 64;
    if phnum > 0 {
        let e = phentsize.checked_mul(phnum).and_then(|n| n.checked_add(phoff)).ok_or_else(too_big)?;
        end = end.max(e);
    }
    if shoff != 0 {
        if shentsize != 64 {
            return Err(invalid(format!("cubin: section header size {shentsize}")));
        }
        if shoff > limit {
            return Err(too_big());
        }
        if shnum == 0 {
            // Extended numbering: the count is in section 0's sh_size.
            let s0 = read(shoff, 64)?;
            shnum = le_u64(&s0, 32).unwrap_or(0);
            if shnum > 1 << 20 {
                return Err(invalid(format!("cubin: {shnum} sections")));
            }
        }
        let table_len = shnum.checked_mul(64).ok_or_else(too_big)?;
        let table_end = shoff.checked_add(table_len).filter(|&t| t <= limit).ok_or_else(too_big)?;
        end = end.max(table_end);
        let table = read(shoff, table_len as usize)?;
        for s in table.chunks_exact(64) {
            let kind = le_u32(s, 4).unwrap_or(0);
            let (off, size) = (le_u64(s, 24).unwrap_or(0), le_u64(s, 32).unwrap_or(0));
            if kind == SHT_NOBITS || kind == SHT_NULL {
                continue;
            }
            end = end.max(off.checked_add(size).ok_or_else(too_big)?);
        }
    }
    if end > limit {
        return Err(too_big());
    }
    Ok(end)
}
