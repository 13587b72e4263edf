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

use object::elf;
use object::read::elf::{FileHeader, SectionHeader, Sym};
use object::LittleEndian as LE;

use super::{invalid, le_u16, le_u32, FuncAttrs, GlobalInfo, ImageError, KernelInfo, LaunchBounds, ParamInfo};

/// `e_machine` of NVIDIA cubins.
const EM_CUDA: u16 = 190;
/// `st_other` bit of a kernel entry symbol.
const STO_CUDA_ENTRY: u8 = 0x10;
/// ptxas places this system window first in every kernel's shared memory from sm_90 on.
const RESERVED_SHARED_SM90: u32 = 1024;

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
        let (Some(&fmt), Some(&attr), Some(value)) = (b.get(p), b.get(p + 1), le_u16(b, p + 2))
        else {
            return Err(invalid(format!("{section}: EIATTR record truncated at {p}")));
        };
        p += 4;
        let data = match fmt {
            1..=3 => &b[p..p],
            EIFMT_SVAL => {
                let d = b.get(p..p + value as usize).ok_or_else(|| {
                    invalid(format!("{section}: EIATTR {attr:#x} of {value} bytes truncated"))
                })?;
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

/// `object` reads ELF structures in place and needs them aligned: copy when they are not.
fn aligned(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if bytes.as_ptr() as usize % 8 == 0 {
        std::borrow::Cow::Borrowed(bytes)
    } else {
        std::borrow::Cow::Owned(bytes.to_vec())
    }
}

fn elf_err(what: &str) -> impl Fn(object::read::Error) -> ImageError + '_ {
    move |e| invalid(format!("cubin: {what}: {e}"))
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
pub(crate) fn parse(bytes: &[u8]) -> Result<Cubin, ImageError> {
    let buf = aligned(bytes);
    let data: &[u8] = &buf;
    if data.get(4) == Some(&elf::ELFCLASS32) {
        return Err(invalid("cubin: 32-bit ELF images are not supported"));
    }
    let hdr = elf::FileHeader64::<LE>::parse(data).map_err(elf_err("header"))?;
    if hdr.e_ident().data != elf::ELFDATA2LSB {
        return Err(invalid("cubin: big-endian ELF"));
    }
    let e = LE;
    let machine = hdr.e_machine(e);
    if machine != EM_CUDA {
        return Err(invalid(format!("ELF for machine {machine}, not a CUDA cubin (190)")));
    }
    let flags = hdr.e_flags(e);
    let abi = hdr.e_ident().abi_version;
    let arch = arch_of(abi, flags);
    if !(10..=255).contains(&arch) {
        return Err(invalid(format!("cubin: no architecture in e_flags {flags:#x}")));
    }
    let sections = hdr.sections(e, data).map_err(elf_err("section headers"))?;
    let symtab = sections.symbols(e, data, elf::SHT_SYMTAB).map_err(elf_err("symbol table"))?;

    let mut names: Vec<String> = Vec::with_capacity(sections.len());
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for (i, s) in sections.iter().enumerate() {
        let raw = sections.section_name(e, s).map_err(elf_err("section name"))?;
        let n = String::from_utf8_lossy(raw).into_owned();
        by_name.entry(n.clone()).or_insert(i);
        names.push(n);
    }
    let section = |name: &str| by_name.get(name).and_then(|&i| sections.section(object::SectionIndex(i)).ok());
    let section_data = |name: &str| -> Result<Option<&[u8]>, ImageError> {
        match section(name) {
            None => Ok(None),
            Some(s) => s.data(e, data).map(Some).map_err(elf_err(name)),
        }
    };

    // Module-wide records, keyed by symbol index.
    let mut regs: HashMap<u32, u32> = HashMap::new();
    let mut frame: HashMap<u32, u32> = HashMap::new();
    if let Some(d) = section_data(".nv.info")? {
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

    let mut sym_names: Vec<String> = Vec::with_capacity(symtab.len());
    for s in symtab.iter() {
        let raw = symtab.symbol_name(e, s).map_err(elf_err("symbol name"))?;
        sym_names.push(String::from_utf8_lossy(raw).into_owned());
    }
    let section_name_of = |s: &elf::Sym64<LE>| -> Option<&str> {
        let i = s.st_shndx(e) as usize;
        if i == elf::SHN_UNDEF as usize || i >= elf::SHN_LORESERVE as usize {
            return None;
        }
        names.get(i).map(String::as_str)
    };

    let reserved_window = arch >= 90
        && (by_name.keys().any(|n| n.starts_with(".nv.shared.reserved."))
            || sym_names.iter().any(|n| n.starts_with("__nv_reservedSMEM")));

    let globals = globals_of(&symtab, &sym_names, &section_name_of, e);
    let mut const_size: u64 = 0;
    let mut banks_counted: Vec<&str> = Vec::new();
    for (s, _) in symtab.iter().zip(&sym_names) {
        if s.st_type() != elf::STT_OBJECT {
            continue;
        }
        if let Some(sec) = section_name_of(s) {
            if module_constant_bank(sec) && !banks_counted.contains(&sec) {
                banks_counted.push(sec);
                if let Some(h) = section(sec) {
                    const_size = const_size.saturating_add(h.sh_size(e));
                }
            }
        }
    }
    let ptx_version = cuinfo_virtual_arch(section_data(".note.nv.cuinfo")?)
        .or_else(|| (abi < 8 && (flags >> 16) & 0xff != 0).then_some((flags >> 16) & 0xff));

    let mut kernels = Vec::new();
    for (idx, (s, name)) in symtab.iter().zip(&sym_names).enumerate() {
        if s.st_type() != elf::STT_FUNC || s.st_other() & STO_CUDA_ENTRY == 0 {
            continue;
        }
        if s.st_shndx(e) == elf::SHN_UNDEF {
            continue;
        }
        let info_name = format!(".nv.info.{name}");
        let mut params: Vec<(u16, ParamInfo)> = Vec::new();
        let mut maxntid = None;
        let mut reqntid = None;
        let mut param_bytes = None;
        if let Some(d) = section_data(&info_name)? {
            for a in eiattrs(d, &info_name)? {
                match a.attr {
                    EIATTR_KPARAM_INFO => {
                        let (Some(ord), Some(off), Some(bits)) =
                            (le_u16(a.data, 4), le_u16(a.data, 6), le_u32(a.data, 8))
                        else {
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
        let text = section(&format!(".text.{name}"));
        let num_regs = regs
            .get(&(idx as u32))
            .copied()
            .or_else(|| text.map(|t| t.sh_info(e) >> 24))
            .unwrap_or(0);
        let shared_section = section(&format!(".nv.shared.{name}"))
            .map(|h| h.sh_size(e).min(u32::MAX as u64) as u32)
            .unwrap_or(0);
        let shared = if reserved_window {
            shared_section.saturating_sub(RESERVED_SHARED_SM90)
        } else {
            shared_section
        };
        let product = |d: [u32; 3]| d[0].checked_mul(d[1]).and_then(|v| v.checked_mul(d[2]));
        let max_threads = reqntid.or(maxntid).and_then(product);
        kernels.push(KernelInfo {
            name: name.clone(),
            params: Some(params.into_iter().map(|p| p.1).collect()),
            attrs: Some(FuncAttrs {
                num_regs,
                shared_size_bytes: shared,
                shared_section_bytes: shared_section,
                local_size_bytes: frame.get(&(idx as u32)).copied().unwrap_or(0),
                const_size_bytes: const_size.min(u32::MAX as u64) as u32,
                max_threads_per_block: max_threads,
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

fn globals_of<'a>(
    symtab: &object::read::elf::SymbolTable<'a, elf::FileHeader64<LE>>,
    sym_names: &[String],
    section_name_of: &dyn Fn(&elf::Sym64<LE>) -> Option<&'a str>,
    e: LE,
) -> Vec<GlobalInfo> {
    let mut out = Vec::new();
    for (s, name) in symtab.iter().zip(sym_names) {
        if s.st_type() != elf::STT_OBJECT || name.is_empty() {
            continue;
        }
        let Some(constant) = section_name_of(s).and_then(variable_section) else { continue };
        out.push(GlobalInfo { name: name.clone(), size: Some(s.st_size(e)), constant });
    }
    out
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
pub(crate) fn elf_len(
    read: &mut dyn FnMut(u64, usize) -> Result<Vec<u8>, ImageError>,
    limit: u64,
) -> Result<u64, ImageError> {
    let h = read(0, 64)?;
    if h.get(4) != Some(&elf::ELFCLASS64) || h.get(5) != Some(&elf::ELFDATA2LSB) {
        return Err(invalid("cubin: not a little-endian ELF64"));
    }
    let u16_at = |o| le_u16(&h, o).unwrap_or(0) as u64;
    let u64_at = |o| super::le_u64(&h, o).unwrap_or(0);
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
            shnum = super::le_u64(&s0, 32).unwrap_or(0);
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
            let (off, size) = (super::le_u64(s, 24).unwrap_or(0), super::le_u64(s, 32).unwrap_or(0));
            if kind == elf::SHT_NOBITS || kind == elf::SHT_NULL {
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
