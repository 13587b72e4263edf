//! The link itself, in safe Rust: options, inputs, the linked image and the two logs.
//! `ffi` turns C calls into calls on a [`Linker`] and its answers back into result codes.

use std::fmt::Write as _;
use std::time::Instant;

/// nvJitLinkResult values (the public header's enum, in its order).
pub mod code {
    /// The call succeeded.
    pub const SUCCESS: i32 = 0;
    /// An option nvJitLink does not know.
    pub const UNRECOGNIZED_OPTION: i32 = 1;
    /// No `-arch=sm_NN` among the options.
    pub const MISSING_ARCH: i32 = 2;
    /// An input (or handle) that cannot be used.
    pub const INVALID_INPUT: i32 = 3;
    /// PTX that cannot be compiled.
    pub const PTX_COMPILE: i32 = 4;
    /// NVVM IR that cannot be compiled.
    pub const NVVM_COMPILE: i32 = 5;
    /// Something went wrong inside the library.
    pub const INTERNAL: i32 = 6;
    /// The thread pool failed.
    pub const THREADPOOL: i32 = 7;
    /// An input of a type nvJitLink does not know.
    pub const UNRECOGNIZED_INPUT: i32 = 8;
    /// The finalizer failed.
    pub const FINALIZE: i32 = 9;
    /// A null pointer where one was required.
    pub const NULL_INPUT: i32 = 10;
    /// Options that cannot go together.
    pub const INCOMPATIBLE_OPTIONS: i32 = 11;
    /// An input whose contents are not of the type it was given as.
    pub const INCORRECT_INPUT_TYPE: i32 = 12;
    /// An input built for another architecture.
    pub const ARCH_MISMATCH: i32 = 13;
    /// An input newer than the library.
    pub const OUTDATED_LIBRARY: i32 = 14;
    /// A fatbin was required.
    pub const MISSING_FATBIN: i32 = 15;
    /// An `-arch` value that is not an architecture name.
    pub const UNRECOGNIZED_ARCH: i32 = 16;
    /// An `-arch` value this library does not link for.
    pub const UNSUPPORTED_ARCH: i32 = 17;
    /// An LTO-IR input (or output) without `-lto`.
    pub const LTO_NOT_ENABLED: i32 = 18;
}

/// nvJitLinkInputType values.
pub mod input {
    /// No type (an error).
    pub const NONE: u32 = 0;
    /// A cubin (device ELF).
    pub const CUBIN: u32 = 1;
    /// PTX text.
    pub const PTX: u32 = 2;
    /// NVVM LTO-IR.
    pub const LTOIR: u32 = 3;
    /// A fatbin.
    pub const FATBIN: u32 = 4;
    /// A host object with embedded device code.
    pub const OBJECT: u32 = 5;
    /// A host archive (libcudadevrt.a).
    pub const LIBRARY: u32 = 6;
    /// An index file.
    pub const INDEX: u32 = 7;
    /// Whatever the contents say.
    pub const ANY: u32 = 10;
}

/// The nvJitLink version this library reports by default: 12.2, below the emulated
/// driver's 13.0 (an older nvJitLink with a newer driver is a valid pairing) and, on
/// purpose, below 12.3: numba-cuda turns LTO on for every kernel when nvJitLink is 12.3 or
/// newer (`_have_nvjitlink`), and LTO-IR cannot be linked here, so at 12.2 numba compiles
/// its kernels to PTX and cuda.core (which only checks that nvJitLinkVersion exists) still
/// links them through this library.
pub const VERSION: (u32, u32) = (12, 2);

/// The environment variable that makes nvJitLinkVersion answer another `MAJOR.MINOR`
/// (`SIMTWIN_NVJITLINK_VERSION=13.0`: the emulated driver's version; numba then asks for
/// LTO and its kernels fail to link, with the reason in the error log).
pub const VERSION_ENV: &str = "SIMTWIN_NVJITLINK_VERSION";

/// The version nvJitLinkVersion answers: `VERSION_ENV` when it holds `MAJOR.MINOR`,
/// otherwise [`VERSION`].
pub fn version() -> (u32, u32) {
    parse_version(std::env::var(VERSION_ENV).ok().as_deref()).unwrap_or(VERSION)
}

fn parse_version(v: Option<&str>) -> Option<(u32, u32)> {
    let (major, minor) = v?.trim().split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The options of `nvJitLinkCreate`, as recorded.
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// The `-arch` value (`sm_90`, `sm_90a`, `compute_90`, ...).
    pub arch: String,
    /// `-lto`: link-time optimisation of LTO-IR inputs (none can be honoured here).
    pub lto: bool,
    /// `-ptx`: emit PTX rather than a cubin (with `-lto`).
    pub ptx: bool,
    /// `-O<n>`: the optimisation level, written into the linked image.
    pub opt_level: Option<u8>,
    /// `-maxrregcount=<n>`.
    pub maxrregcount: Option<u32>,
    /// `-g`.
    pub debug: bool,
    /// `-lineinfo`.
    pub lineinfo: bool,
    /// `-time`: the info log says how long the link took.
    pub time: bool,
    /// `-verbose`: the info log says what was linked.
    pub verbose: bool,
    /// Every other option, as given (accepted, and without effect on PTX mode).
    pub other: Vec<String>,
}

/// Options that take no value.
const FLAGS: &[&str] = &["-optimize-unused-variables", "-nvvm-latest", "-no-cache", "-device-stack-protector", "-r"];
/// Options written `-name=value`.
const VALUED: &[&str] = &[
    "-Ofc",
    "-ftz",
    "-prec-div",
    "-prec-sqrt",
    "-fma",
    "-kernels-used",
    "-variables-used",
    "-Xptxas",
    "-split-compile",
    "-split-compile-extended",
    "-jump-table-density",
    "-device-stack-protector",
];

/// A failed call: the result code and the error-log line saying why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The nvJitLinkResult.
    pub code: i32,
    /// What the error log gets (one line, no newline).
    pub message: String,
}

fn fail<T>(code: i32, message: impl Into<String>) -> Result<T, Failure> {
    Err(Failure { code, message: message.into() })
}

/// Whether `a` names an architecture: `sm_`/`compute_`/`lto_` and a number of at least
/// two digits, optionally followed by one letter (`sm_90a`, `sm_100f`).
fn arch_ok(a: &str) -> bool {
    let Some(rest) = ["sm_", "compute_", "lto_"].iter().find_map(|p| a.strip_prefix(p)) else { return false };
    let digits = rest.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    digits.len() >= 2 && digits.bytes().all(|b| b.is_ascii_digit()) && rest.len() - digits.len() <= 1
}

impl Options {
    /// Parses nvJitLinkCreate's options.
    pub fn parse<S: AsRef<str>>(opts: &[S]) -> Result<Options, Failure> {
        let mut o = Options::default();
        let mut arch = None;
        for s in opts {
            let s = s.as_ref().trim();
            let (name, value) = match s.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (s, None),
            };
            match (name, value) {
                ("-arch", Some(v)) => {
                    if !arch_ok(v) {
                        return fail(code::UNRECOGNIZED_ARCH, format!("nvJitLinkCreate: -arch={v} is not an architecture (sm_NN)"));
                    }
                    arch = Some(v.to_string());
                }
                ("-lto", None) => o.lto = true,
                ("-ptx", None) => o.ptx = true,
                ("-g", None) => o.debug = true,
                ("-lineinfo", None) => o.lineinfo = true,
                ("-time", None) => o.time = true,
                ("-verbose", None) => o.verbose = true,
                ("-maxrregcount", Some(v)) => match v.parse() {
                    Ok(n) => o.maxrregcount = Some(n),
                    Err(_) => return fail(code::UNRECOGNIZED_OPTION, format!("nvJitLinkCreate: {s}: the register count is not a number")),
                },
                (n, None) if n.len() == 3 && n.starts_with("-O") && n.as_bytes()[2].is_ascii_digit() => {
                    o.opt_level = Some(n.as_bytes()[2] - b'0')
                }
                (n, None) if FLAGS.contains(&n) => o.other.push(s.to_string()),
                (n, Some(_)) if VALUED.contains(&n) => o.other.push(s.to_string()),
                _ => return fail(code::UNRECOGNIZED_OPTION, format!("nvJitLinkCreate: unrecognized option {s}")),
            }
        }
        o.arch = match arch {
            Some(a) => a,
            None => return fail(code::MISSING_ARCH, "nvJitLinkCreate: the option -arch=sm_NN is required"),
        };
        Ok(o)
    }
}

/// What an input's bytes are, by their first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Contents {
    Ptx,
    Fatbin,
    Cubin,
    HostObject,
    Archive,
    Linked,
    Ltoir,
    Unknown,
}

fn sniff(b: &[u8]) -> Contents {
    const ELF: &[u8] = b"\x7fELF";
    const EM_CUDA: u16 = 190;
    let head = |n: usize| b.get(..n).map(|h| u32::from_le_bytes([h[0], h[1], h[2], h[3]]));
    if b.starts_with(ELF) {
        let machine = b.get(18..20).map(|m| u16::from_le_bytes([m[0], m[1]]));
        return if machine == Some(EM_CUDA) { Contents::Cubin } else { Contents::HostObject };
    }
    if matches!(head(4), Some(0xBA55_ED50) | Some(0x4662_43B1)) {
        return Contents::Fatbin;
    }
    if b.starts_with(b"!<arch>\n") {
        return Contents::Archive;
    }
    if b.starts_with(simtwin_abi::linked::MAGIC) {
        return Contents::Linked;
    }
    if head(4) == Some(0x7F4E_43ED) {
        return Contents::Ltoir;
    }
    match ptx_text(b) {
        Some(_) => Contents::Ptx,
        None => Contents::Unknown,
    }
}

/// The PTX text of `b` (up to its first NUL) when it is UTF-8 text with a `.version`
/// directive.
fn ptx_text(b: &[u8]) -> Option<&str> {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    let t = std::str::from_utf8(&b[..end]).ok()?;
    t.lines().any(|l| l.trim_start().starts_with(".version")).then_some(t)
}

/// One link: what nvJitLinkCreate makes and nvJitLinkDestroy frees.
#[derive(Debug)]
pub struct Linker {
    /// The options it was created with.
    pub options: Options,
    modules: Vec<(String, String)>,
    /// Library inputs, searched at completion (static-library semantics:
    /// simtwin_abi::devrt).
    archives: Vec<simtwin_abi::devrt::Archive>,
    image: Option<Vec<u8>>,
    error_log: String,
    info_log: String,
}

impl Linker {
    /// A link with `options`.
    pub fn new(options: Options) -> Linker {
        Linker { options, modules: Vec::new(), archives: Vec::new(), image: None, error_log: String::new(), info_log: String::new() }
    }

    /// Records a failure in the error log and hands back its code.
    pub fn record(&mut self, f: Failure) -> i32 {
        self.error_log.push_str(&f.message);
        self.error_log.push('\n');
        f.code
    }

    fn info(&mut self, line: String) {
        self.info_log.push_str(&line);
        self.info_log.push('\n');
    }

    /// nvJitLinkAddData / nvJitLinkAddFile: `bytes` of type `kind`, named `name`.
    pub fn add(&mut self, kind: u32, bytes: &[u8], name: &str) -> Result<(), Failure> {
        let what = sniff(bytes);
        let declared = match kind {
            input::PTX => Contents::Ptx,
            input::ANY | input::CUBIN | input::FATBIN | input::OBJECT | input::LTOIR if what == Contents::Ltoir || kind == input::LTOIR => {
                return if self.options.lto {
                    fail(code::NVVM_COMPILE, format!("{name}: an LTO-IR input is NVVM IR, which simtwin cannot compile or run (simtwin runs PTX): have the compiler emit PTX instead of LTO-IR (numba-cuda: lto=False)"))
                } else {
                    fail(code::LTO_NOT_ENABLED, format!("{name}: an LTO-IR input needs -lto; and simtwin cannot compile NVVM IR in any case (simtwin runs PTX): give PTX instead"))
                };
            }
            input::ANY | input::CUBIN | input::FATBIN | input::OBJECT => what,
            input::LIBRARY => {
                let a = simtwin_abi::devrt::Archive::read(name, bytes).map_err(|m| Failure { code: code::INVALID_INPUT, message: m })?;
                if self.options.verbose {
                    self.info(format!(
                        "simtwin nvJitLink: {name}: library of {} member(s) added; searched at nvJitLinkComplete",
                        a.members.len()
                    ));
                }
                self.archives.push(a);
                self.image = None;
                return Ok(());
            }
            input::INDEX => {
                return fail(code::INVALID_INPUT, format!("{name}: an index-file input is not supported: simtwin links PTX only"))
            }
            _ => return fail(code::UNRECOGNIZED_INPUT, format!("{name}: input type {kind} is not an nvJitLinkInputType")),
        };
        match declared {
            Contents::Ptx => {
                let Some(text) = ptx_text(bytes) else {
                    return if what == Contents::Unknown {
                        fail(code::INVALID_INPUT, format!("{name}: the PTX input is not PTX text (UTF-8 with a .version directive)"))
                    } else {
                        fail(code::INCORRECT_INPUT_TYPE, format!("{name}: given as PTX, but it is {}", describe(what)))
                    };
                };
                self.modules.push((name.to_string(), text.to_string()));
                self.image = None;
                if self.options.verbose {
                    self.info(format!("simtwin nvJitLink: {name}: PTX module added ({} bytes)", text.len()));
                }
                Ok(())
            }
            Contents::Unknown => fail(
                code::UNRECOGNIZED_INPUT,
                format!("{name}: neither PTX text nor a container simtwin recognises (LTO-IR cannot be run: simtwin links PTX only)"),
            ),
            other => fail(
                code::INVALID_INPUT,
                format!(
                    "{name}: {}: simtwin's nvJitLink links PTX only (the emulated device runs PTX, not SASS): give the PTX text as NVJITLINK_INPUT_PTX",
                    describe(other)
                ),
            ),
        }
    }

    /// nvJitLinkComplete: the linked image of every PTX module added.
    pub fn complete(&mut self) -> Result<(), Failure> {
        let start = Instant::now();
        if self.modules.is_empty() {
            return fail(code::INVALID_INPUT, "nvJitLinkComplete: nothing was added to the link (no PTX input)");
        }
        let mut texts: Vec<String> = self.modules.iter().map(|(_, t)| t.clone()).collect();
        // Archives contribute only what the PTX still leaves undefined.
        let (add, notes) =
            simtwin_abi::devrt::resolve(&texts, &self.archives).map_err(|m| Failure { code: code::INVALID_INPUT, message: m })?;
        texts.extend(add);
        for n in notes {
            self.info(format!("simtwin nvJitLink: {n}"));
        }
        self.image = Some(simtwin_abi::linked::build(&texts, self.options.opt_level));
        if self.options.verbose {
            let names: Vec<&str> = self.modules.iter().map(|(n, _)| n.as_str()).collect();
            let line = format!(
                "simtwin nvJitLink: linked {} PTX module(s) ({}) for {} into a simtwin linked image; the emulated driver translates them at load",
                texts.len(),
                names.join(", "),
                self.options.arch
            );
            self.info(line);
        }
        if self.options.time {
            let mut line = String::new();
            let _ = write!(line, "simtwin nvJitLink: link time {:.3} ms", start.elapsed().as_secs_f64() * 1e3);
            self.info(line);
        }
        Ok(())
    }

    /// The linked image (nvJitLinkGetLinkedCubin): a simtwin linked image, which the
    /// emulated driver's cuModuleLoadData and cuLibraryLoadData load.
    pub fn cubin(&self) -> Result<&[u8], Failure> {
        self.image.as_deref().ok_or_else(|| Failure {
            code: code::INVALID_INPUT,
            message: "nvJitLinkGetLinkedCubin: the link has not been completed (call nvJitLinkComplete first)".into(),
        })
    }

    /// The linked PTX (nvJitLinkGetLinkedPtx): the one module's text. simtwin keeps the
    /// modules of a link whole, so there is one PTX text only when one module was given.
    pub fn ptx(&self) -> Result<&str, Failure> {
        if self.image.is_none() {
            return fail(code::INVALID_INPUT, "nvJitLinkGetLinkedPtx: the link has not been completed (call nvJitLinkComplete first)");
        }
        match self.modules.as_slice() {
            [(_, t)] => Ok(t),
            many => fail(
                code::INVALID_INPUT,
                format!("nvJitLinkGetLinkedPtx: {} PTX modules were linked; simtwin keeps them whole and does not merge them into one PTX text (get the linked cubin instead)", many.len()),
            ),
        }
    }

    /// nvJitLinkGetLinkedLTOIR: never any (simtwin does not produce NVVM IR).
    pub fn ltoir(&self) -> Result<&[u8], Failure> {
        if !self.options.lto {
            return fail(code::LTO_NOT_ENABLED, "nvJitLinkGetLinkedLTOIR: linked LTO-IR needs -lto");
        }
        fail(code::INVALID_INPUT, "nvJitLinkGetLinkedLTOIR: simtwin links PTX and produces no LTO-IR")
    }

    /// The error log so far.
    pub fn error_log(&self) -> &str {
        &self.error_log
    }

    /// The info log so far.
    pub fn info_log(&self) -> &str {
        &self.info_log
    }
}

fn describe(c: Contents) -> &'static str {
    match c {
        Contents::Ptx => "PTX text",
        Contents::Fatbin => "a fatbin (its PTX, if any, is not extracted here)",
        Contents::Cubin => "a cubin (SASS)",
        Contents::HostObject => "a host object",
        Contents::Archive => "a library archive",
        Contents::Linked => "a simtwin linked image (link its PTX modules instead)",
        Contents::Ltoir => "LTO-IR (NVVM IR)",
        Contents::Unknown => "of unknown contents",
    }
}

#[cfg(test)]
mod tests {
    use super::{code, input, Linker, Options};

    const PTX: &str = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n";

    #[test]
    fn version_override() {
        assert_eq!(super::parse_version(Some("12.2")), Some((12, 2)));
        assert_eq!(super::parse_version(Some("12")), None);
        assert_eq!(super::parse_version(Some("x.y")), None);
        assert_eq!(super::parse_version(None), None);
    }

    #[test]
    fn options() {
        assert_eq!(Options::parse::<&str>(&[]).unwrap_err().code, code::MISSING_ARCH);
        assert_eq!(Options::parse(&["-O3"]).unwrap_err().code, code::MISSING_ARCH);
        assert_eq!(Options::parse(&["-arch=sm_90", "-bogus"]).unwrap_err().code, code::UNRECOGNIZED_OPTION);
        assert_eq!(Options::parse(&["-arch=gfx90"]).unwrap_err().code, code::UNRECOGNIZED_ARCH);
        let o = Options::parse(&[
            "-arch=sm_90a",
            "-O2",
            "-lto",
            "-ptx",
            "-g",
            "-lineinfo",
            "-maxrregcount=32",
            "-time",
            "-verbose",
            "-ftz=1",
            "-kernels-used=k",
            "-no-cache",
        ])
        .unwrap();
        assert_eq!((o.arch.as_str(), o.opt_level, o.maxrregcount), ("sm_90a", Some(2), Some(32)));
        assert!(o.lto && o.ptx && o.debug && o.lineinfo && o.time && o.verbose);
        assert_eq!(o.other, vec!["-ftz=1", "-kernels-used=k", "-no-cache"]);
        for a in ["sm_90", "sm_100f", "compute_89"] {
            assert!(Options::parse(&[format!("-arch={a}")]).is_ok(), "{a}");
        }
    }

    #[test]
    fn inputs_and_outputs() {
        let mut l = Linker::new(Options::parse(&["-arch=sm_90"]).unwrap());
        assert_eq!(l.complete().unwrap_err().code, code::INVALID_INPUT);
        assert_eq!(l.cubin().unwrap_err().code, code::INVALID_INPUT);
        assert_eq!(l.add(input::LTOIR, b"\x7fNVVM", "a.ltoir").unwrap_err().code, code::LTO_NOT_ENABLED);
        assert_eq!(l.add(input::LIBRARY, b"not an archive", "libcudadevrt.a").unwrap_err().code, code::INVALID_INPUT);
        l.add(input::LIBRARY, b"!<arch>\n", "empty.a").expect("an empty archive is a library");
        assert_eq!(l.add(input::PTX, b"\x7fELF\x02\x01", "x.cubin").unwrap_err().code, code::INCORRECT_INPUT_TYPE);
        assert_eq!(l.add(input::ANY, b"\x50\xed\x55\xba\x01\x00", "x.fatbin").unwrap_err().code, code::INVALID_INPUT);
        assert_eq!(l.add(input::NONE, PTX.as_bytes(), "x").unwrap_err().code, code::UNRECOGNIZED_INPUT);
        assert_eq!(l.add(input::ANY, b"\xedCN\x7f\x01C", "k.ltoir").unwrap_err().code, code::LTO_NOT_ENABLED);
        assert_eq!(l.add(input::PTX, b"\xedCN\x7f\x01C", "k.ltoir").unwrap_err().code, code::INCORRECT_INPUT_TYPE);
        l.add(input::ANY, format!("{PTX}\0").as_bytes(), "a.ptx").unwrap();
        l.complete().unwrap();
        assert_eq!(l.ptx().unwrap(), PTX);
        assert_eq!(l.cubin().unwrap(), simtwin_abi::linked::build(&[PTX.into()], None));
        l.add(input::PTX, PTX.as_bytes(), "b.ptx").unwrap();
        l.complete().unwrap();
        assert_eq!(l.ptx().unwrap_err().code, code::INVALID_INPUT);
        assert_eq!(l.ltoir().unwrap_err().code, code::LTO_NOT_ENABLED);
    }
}
