//! Loaded objects and names for addresses, for the checking modes (`EMU_CUDA_CHECKS`):
//! which loaded object holds an address and where its thread-local (static
//! `__shared__`) block is, the source line of an instruction of a kernel library (its
//! debug info, read by binutils' `addr2line`, the tool every g++ installation has), and
//! the names of a library's thread-local variables (its ELF symbol table, demangled by
//! `c++filt`).
//!
//! Lines and names are looked up only when a report is written (a handful per launch,
//! reports being deduplicated) and cached; without binutils a report names the library
//! and offset instead. A leaf: nothing of the driver below it.

use std::collections::HashMap;
use std::ffi::{c_int, c_void, CStr};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// A loaded object, as the dynamic loader lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Object {
    /// Load bias: an address of the object minus its ELF virtual address.
    pub base: usize,
    /// The file it was loaded from (a private copy's original, see [`note_copy`]).
    pub path: PathBuf,
    /// Its thread-local storage: (module id, bytes of the block), if it has any.
    pub tls: Option<(usize, usize)>,
}

/// Private copies of kernel libraries (a second instance of a module is loaded from a
/// copy, deleted at once): copy -> original, so that reports can read the original.
static COPIES: Mutex<Vec<(PathBuf, PathBuf)>> = Mutex::new(Vec::new());

/// `copy` (loaded, then deleted) is a byte-identical copy of `original`.
pub(crate) fn note_copy(copy: &Path, original: &Path) {
    let mut c = COPIES.lock().unwrap_or_else(|e| e.into_inner());
    c.retain(|(p, _)| p != copy);
    c.push((copy.to_path_buf(), original.to_path_buf()));
}

fn original_of(path: PathBuf) -> PathBuf {
    let c = COPIES.lock().unwrap_or_else(|e| e.into_inner());
    c.iter().find(|(p, _)| *p == path).map(|(_, o)| o.clone()).unwrap_or(path)
}

/// The loaded object whose mapped segments contain `addr` (`dl_iterate_phdr`: no file
/// is read; costs a walk over the loaded objects).
pub(crate) fn object_of(addr: usize) -> Option<Object> {
    struct Search {
        addr: usize,
        found: Option<Object>,
    }
    unsafe extern "C" fn visit(info: *mut libc::dl_phdr_info, _size: usize, data: *mut c_void) -> c_int {
        // SAFETY: the loader passes a valid record for the duration of the call; `data`
        // is the Search below.
        let (info, s) = unsafe { (&*info, &mut *(data as *mut Search)) };
        let base = info.dlpi_addr as usize;
        // SAFETY: dlpi_phdr points to dlpi_phnum program headers of a loaded object.
        let phdrs = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
        let inside = phdrs.iter().any(|p| {
            p.p_type == libc::PT_LOAD && {
                let start = base.wrapping_add(p.p_vaddr as usize);
                s.addr >= start && s.addr < start.wrapping_add(p.p_memsz as usize)
            }
        });
        if !inside {
            return 0;
        }
        let tls = phdrs.iter().find(|p| p.p_type == libc::PT_TLS).map(|p| (info.dlpi_tls_modid, p.p_memsz as usize));
        let name = if info.dlpi_name.is_null() {
            PathBuf::new()
        } else {
            // SAFETY: a NUL-terminated string of the loader.
            PathBuf::from(unsafe { CStr::from_ptr(info.dlpi_name) }.to_string_lossy().into_owned())
        };
        s.found = Some(Object { base, path: name, tls: tls.filter(|t| t.0 != 0 && t.1 != 0) });
        1
    }
    let mut s = Search { addr, found: None };
    // SAFETY: `visit` only reads the records and writes `s`, which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut s as *mut Search as *mut c_void) };
    s.found.map(|mut o| {
        o.path = original_of(o.path);
        o
    })
}

/// The calling thread's thread-local block of TLS module `modid` (allocated now if the
/// thread never touched it): glibc's `__tls_get_addr` for offset 0.
pub(crate) fn tls_block(modid: usize) -> Option<*mut u8> {
    #[repr(C)]
    struct TlsIndex {
        module: usize,
        offset: usize,
    }
    type GetAddr = unsafe extern "C" fn(*const TlsIndex) -> *mut c_void;
    static GET: std::sync::OnceLock<Option<GetAddr>> = std::sync::OnceLock::new();
    let get = *GET.get_or_init(|| {
        // SAFETY: looking a symbol up in the global scope; the name is NUL-terminated.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"__tls_get_addr".as_ptr()) };
        // SAFETY: glibc's __tls_get_addr has this signature on x86_64 (a plain C call).
        (!p.is_null() && cfg!(target_arch = "x86_64")).then(|| unsafe { std::mem::transmute::<*mut c_void, GetAddr>(p) })
    });
    let ti = TlsIndex { module: modid, offset: 0 };
    // SAFETY: `modid` is the module id the loader gave a loaded object with a TLS segment.
    get.map(|f| unsafe { f(&ti) } as *mut u8).filter(|p| !p.is_null())
}

/// One frame of a source location: function and `file:line`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Frame {
    pub function: String,
    pub file: String,
    pub line: u32,
}

/// Where an instruction of a loaded library comes from: its inline frames, innermost
/// first (empty when the library has no debug info or addr2line is missing), and
/// `library+0xOFFSET` for reports that cannot say more.
#[derive(Clone, Debug, Default)]
pub(crate) struct Place {
    pub frames: Vec<Frame>,
    pub raw: String,
}

impl Place {
    /// The innermost frame in the user's code: frames in kernels-host's shim headers (an
    /// atomic, an intrinsic) and generated code are skipped; `file:line`, or the raw
    /// location.
    pub fn user_line(&self) -> String {
        match self.frames.iter().find(|f| !is_shim(&f.file)).or(self.frames.first()) {
            Some(f) => format!("{}:{}", f.file, f.line),
            None => self.raw.clone(),
        }
    }
}

/// A file of kernels-host's shim (its include directory holds `simtwin/prelude.h`) or
/// generated code (`<simtwin registry>`).
fn is_shim(file: &str) -> bool {
    if file.starts_with('<') || file.is_empty() || file == "??" {
        return true;
    }
    Path::new(file).ancestors().skip(1).take(3).any(|d| d.join("simtwin").join("prelude.h").is_file())
}

/// The source place of the instruction *before* return address `pc` (the call of a
/// checking hook), cached.
pub(crate) fn place_of_return(pc: usize) -> Place {
    static CACHE: Mutex<Option<HashMap<usize, Place>>> = Mutex::new(None);
    if let Some(p) = CACHE.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(HashMap::new).get(&pc) {
        return p.clone();
    }
    let place = match object_of(pc) {
        None => Place { frames: vec![], raw: format!("{pc:#x}") },
        Some(o) => {
            let off = pc.wrapping_sub(1).wrapping_sub(o.base);
            let raw = format!("{}+{off:#x}", o.path.display());
            Place { frames: addr2line(&o.path, off), raw }
        }
    };
    CACHE.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(HashMap::new).insert(pc, place.clone());
    place
}

/// `addr2line -f -C -i -e FILE OFFSET`: the inline frames at `off`, innermost first.
fn addr2line(file: &Path, off: usize) -> Vec<Frame> {
    let Ok(out) = Command::new("addr2line").arg("-f").arg("-C").arg("-i").arg("-e").arg(file).arg(format!("{off:#x}")).output() else {
        return vec![];
    };
    if !out.status.success() {
        return vec![];
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    lines
        .chunks(2)
        .filter_map(|c| {
            let (function, loc) = (c.first()?, c.get(1)?);
            // "file:line" or "file:line (discriminator N)"; "??:0" when unknown.
            let loc = loc.split(" (").next().unwrap_or(loc);
            let (file, line) = loc.rsplit_once(':')?;
            let line: u32 = line.trim().parse().ok()?;
            (line != 0).then(|| Frame { function: function.to_string(), file: file.to_string(), line })
        })
        .collect()
}

/// A thread-local variable of a library: its offset in the TLS block, size and name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TlsVar {
    pub offset: u64,
    pub size: u64,
    /// Demangled (`kernel(float*)::tile`), or the symbol as stored.
    pub name: String,
}

/// The thread-local variables of the library file `path` (its static `__shared__`
/// arrays, for kernels-host libraries), from the ELF symbol table; cached per path.
pub(crate) fn tls_vars(path: &Path) -> Vec<TlsVar> {
    static CACHE: Mutex<Vec<(PathBuf, Vec<TlsVar>)>> = Mutex::new(Vec::new());
    if let Some((_, v)) = CACHE.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(p, _)| p == path) {
        return v.clone();
    }
    let vars = read_tls_vars(path);
    CACHE.lock().unwrap_or_else(|e| e.into_inner()).push((path.to_path_buf(), vars.clone()));
    vars
}

fn read_tls_vars(path: &Path) -> Vec<TlsVar> {
    use object::{Object as _, ObjectSymbol, SymbolKind};
    let Ok(bytes) = std::fs::read(path) else { return vec![] };
    let Ok(file) = object::File::parse(&*bytes) else { return vec![] };
    let mut raw: Vec<(u64, u64, String)> = file
        .symbols()
        .chain(file.dynamic_symbols())
        .filter(|s| s.kind() == SymbolKind::Tls && s.size() > 0 && !s.is_undefined())
        .filter_map(|s| Some((s.address(), s.size(), s.name().ok()?.to_string())))
        .collect();
    raw.sort();
    raw.dedup();
    let names = demangle(&raw.iter().map(|r| r.2.clone()).collect::<Vec<_>>());
    raw.into_iter().zip(names).map(|((offset, size, _), name)| TlsVar { offset, size, name }).collect()
}

/// C++ names demangled by `c++filt` in one run (unchanged where it cannot).
fn demangle(names: &[String]) -> Vec<String> {
    use std::io::Write;
    if names.is_empty() {
        return vec![];
    }
    let child = Command::new("c++filt").stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).spawn();
    let Ok(mut child) = child else { return names.to_vec() };
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all((names.join("\n") + "\n").as_bytes());
    }
    match child.wait_with_output() {
        Ok(o) if o.status.success() => {
            let out: Vec<String> = String::from_utf8_lossy(&o.stdout).lines().map(str::to_string).collect();
            if out.len() == names.len() {
                out
            } else {
                names.to_vec()
            }
        }
        _ => names.to_vec(),
    }
}

/// The short name of a demangled variable: `s` for `temporal_sad<...>(...)::s`.
pub(crate) fn short_name(full: &str) -> &str {
    let (mut depth, mut cut) = (0i32, 0usize);
    let b = full.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'(' | b'<' => depth += 1,
            b')' | b'>' => depth -= 1,
            b':' if depth == 0 && b.get(i + 1) == Some(&b':') => {
                cut = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    &full[cut..]
}

#[cfg(test)]
mod tests {
    use crate::symbols::{is_shim, object_of, short_name};

    #[test]
    fn short_names_drop_the_enclosing_function() {
        assert_eq!(short_name("temporal_sad<unsigned short, true>(unsigned short const*, int)::s"), "s");
        assert_eq!(short_name("ns::k(a::b)::tile"), "tile");
        assert_eq!(short_name("tile"), "tile");
    }

    #[test]
    fn objects_are_found_by_address_and_shim_files_are_recognised() {
        let o = object_of(libc::malloc as *const () as usize).expect("libc is loaded");
        assert!(o.path.to_string_lossy().contains("libc"), "{o:?}");
        assert!(object_of(8).is_none());
        let shim = concat!(env!("CARGO_MANIFEST_DIR"), "/../kernels-host/include/simtwin/atomics.h");
        assert!(is_shim(shim) && is_shim("<simtwin registry>"));
        assert!(!is_shim(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/checks/checks.cu")));
    }
}
