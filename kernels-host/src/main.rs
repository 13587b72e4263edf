//! The `kernels-host` CLI. Exit codes: 0 ok, 1 compile error, 2 usage or input error.

use clap::{Parser, Subcommand};
use kernels_host::build::{build, build_compile_commands, BuildOptions};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "kernels-host",
    version,
    about = "Compile unmodified CUDA C++ (.cu) as host C++ into kernel libraries for the simtwin emulated driver"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

// Parsed once per run: the size of the build variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Cmd {
    /// Build one kernel library (<stem>.so) and manifest (<stem>.simtwin.json) per .cu file.
    #[command(
        after_help = "Example:\n  kernels-host build -o build/kernels -I include -- --std c++20 -DDEVICE_CODE src/psnr.cu src/motion.cu\n  \
kernels-host build -o build/kernels --compile-commands build/compile_commands.json\n  \
kernels-host build --checks -o build/kernels src/reduce.cu   # + reduce.checks.so for EMU_CUDA_CHECKS=race\n\n\
Everything after `--` is taken as the nvcc flags of the real build: -D/-U/-I/-include and the C++\n\
standard apply to the host build; --fmad, --use_fast_math, --ftz are recorded and warned about.\n\
The .cu files may follow the nvcc flags. Each file is also compiled by nvcc (-ptx) and the kernels\n\
and their parameter sizes must agree (--no-nvcc-check skips that).\n\
Exit codes: 0 ok, 1 compile error or kernel mismatch, 2 usage or input error (nvcc not found included)."
    )]
    Build {
        /// Output directory. A .cu file builds OUT_DIR/<stem>.so and <stem>.simtwin.json;
        /// sources that share a stem get their parent directories' names as a prefix
        /// (src/a/k.cu -> a-k.so).
        #[arg(short = 'o', long = "out-dir", value_name = "OUT_DIR")]
        out_dir: PathBuf,
        /// Include directory (repeatable).
        #[arg(short = 'I', value_name = "DIR")]
        include: Vec<PathBuf>,
        /// Preprocessor definition NAME or NAME=VALUE (repeatable).
        #[arg(short = 'D', value_name = "NAME[=VALUE]")]
        define: Vec<String>,
        /// Emulated architecture (sets __CUDA_ARCH__, sm_90 -> 900; nvcc's check compiles
        /// for compute_90).
        #[arg(long, default_value = "sm_90")]
        arch: String,
        /// Do not cross-check the kernels built against nvcc's PTX of the same file.
        #[arg(long)]
        no_nvcc_check: bool,
        /// The nvcc for the cross-check (default: as `kernels-host nvcc-path` finds it).
        #[arg(long, value_name = "PATH")]
        nvcc: Option<PathBuf>,
        /// Build a host twin for every nvcc (or clang CUDA) compilation of this compile
        /// database (compile_commands.json, or `ninja -t compdb` output), each with its
        /// own flags; other entries are skipped.
        #[arg(long, value_name = "FILE")]
        compile_commands: Option<PathBuf>,
        /// Also build each library's checking variant, <stem>.checks.so (ThreadSanitizer
        /// instrumentation calling simtwin's hooks, debug info), named in the manifest: the
        /// emulated driver loads it under EMU_CUDA_CHECKS=race to find shared-memory races.
        #[arg(long)]
        checks: bool,
        /// The device whose math the twins compute: math functions and fast intrinsics are
        /// libdevice's (of the nvcc found: its release), translated, with this device's
        /// special-function unit. Profiles with models: h200. Any other name keeps the
        /// host's libm, and the manifest says the math is not device-exact.
        #[arg(long, default_value = "h200", value_name = "NAME")]
        device_profile: String,
        /// The nvcc release whose libdevice the twins compute (13.0, 13.5): default, the
        /// release of the nvcc found. Give the release of the nvcc your real build uses when
        /// it is not the one kernels-host finds (libdevice differs between releases).
        #[arg(long, value_name = "RELEASE")]
        libdevice_release: Option<String>,
        /// .cu files, then optionally `--` and the nvcc flags (which may be followed by more .cu files).
        #[arg(value_name = "FILE.cu", num_args = 0..)]
        files: Vec<String>,
        #[arg(last = true, value_name = "NVCC_FLAGS", allow_hyphen_values = true)]
        nvcc_flags: Vec<String>,
    },
    /// Print the nvcc simtwin uses: $NVCC, $SIMTWIN_NVCC, the nvidia-cuda-nvcc Python
    /// package, PATH, /usr/local/cuda/bin (scripts/nvcc-path, compiled in, decides). Exit
    /// code 2 when there is none, or when a variable names no executable.
    NvccPath {
        /// Print the toolkit's include directory (the one holding cuda.h) instead.
        #[arg(long)]
        include: bool,
    },
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    if let Cmd::NvccPath { include } = cli.cmd {
        let found = if include { kernels_host::toolkit::find_include(None) } else { kernels_host::toolkit::find_nvcc(None) };
        match found {
            Ok(p) => println!("{}", p.display()),
            Err(e) => {
                eprintln!("kernels-host: {e}");
                std::process::exit(2);
            }
        }
        return;
    }
    let Cmd::Build {
        out_dir,
        include,
        define,
        arch,
        no_nvcc_check,
        nvcc,
        compile_commands,
        checks,
        device_profile,
        libdevice_release,
        files,
        nvcc_flags,
    } = cli.cmd
    else {
        unreachable!("the other commands returned above")
    };
    let arch_num = arch.strip_prefix("sm_").or_else(|| arch.strip_prefix("compute_")).and_then(|a| a.parse::<u32>().ok());
    let Some(arch_num) = arch_num else {
        eprintln!("kernels-host: bad --arch `{arch}` (expected e.g. sm_90)");
        std::process::exit(2);
    };
    if let Some(db) = compile_commands {
        if !files.is_empty() || !nvcc_flags.is_empty() || !include.is_empty() || !define.is_empty() {
            eprintln!("kernels-host: --compile-commands takes every source and flag from the database; give no .cu files, -I, -D or nvcc flags with it");
            std::process::exit(2);
        }
        let mut opts = BuildOptions::new(out_dir.clone(), vec![]);
        opts.arch = arch_num;
        opts.nvcc_check = !no_nvcc_check;
        opts.nvcc = nvcc;
        opts.checks = checks;
        opts.device_profile = device_profile;
        opts.libdevice_release = libdevice_release;
        match build_compile_commands(&opts, &db) {
            Ok(r) => {
                for b in &r.built {
                    for w in &b.manifest.warnings {
                        eprintln!("kernels-host: warning: {}: {w}", b.manifest.source);
                    }
                    println!(
                        "{} ({} kernels, {} globals) from {}",
                        b.library.display(),
                        b.manifest.entries.len(),
                        b.manifest.globals.len(),
                        b.manifest.source
                    );
                }
                for (src, e) in &r.failed {
                    eprintln!("kernels-host: {}: {e}", src.display());
                }
                let kernels: usize = r.built.iter().map(|b| b.manifest.entries.len()).sum();
                println!(
                    "{}: {} CUDA entries built ({} kernels), {} failed, {} entries skipped (not CUDA)",
                    out_dir.display(),
                    r.built.len(),
                    kernels,
                    r.failed.len(),
                    r.skipped
                );
                if r.failed.is_empty() && r.built.is_empty() {
                    eprintln!("kernels-host: {}: no nvcc or clang CUDA compilation in it (for meson custom_target commands, use `ninja -t compdb` output)", db.display());
                    std::process::exit(2);
                }
                std::process::exit(if r.failed.iter().any(|(_, e)| e.exit_code() == 2) && r.built.is_empty() {
                    2
                } else if r.failed.is_empty() {
                    0
                } else {
                    1
                });
            }
            Err(e) => {
                eprintln!("kernels-host: {e}");
                std::process::exit(e.exit_code());
            }
        }
    }
    // .cu files may also come after the nvcc flags: nvcc's own command lines look so.
    let mut sources: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
    let mut flags = Vec::new();
    for f in nvcc_flags {
        if f.ends_with(".cu") && !f.starts_with('-') {
            sources.push(PathBuf::from(f));
        } else {
            flags.push(f);
        }
    }
    for s in &sources {
        if s.extension().map(|e| e != "cu").unwrap_or(true) {
            eprintln!("kernels-host: {}: not a .cu file", s.display());
            std::process::exit(2);
        }
    }
    let mut opts = BuildOptions::new(out_dir, sources);
    opts.include_dirs = include;
    opts.defines = define;
    opts.arch = arch_num;
    opts.nvcc_flags = flags;
    opts.nvcc_check = !no_nvcc_check;
    opts.nvcc = nvcc;
    opts.checks = checks;
    opts.device_profile = device_profile;
    opts.libdevice_release = libdevice_release;
    match build(&opts) {
        Ok(built) => {
            for b in built {
                for w in &b.manifest.warnings {
                    eprintln!("kernels-host: warning: {}: {w}", b.manifest.source);
                }
                println!("{} ({} kernels, {} globals)", b.library.display(), b.manifest.entries.len(), b.manifest.globals.len());
            }
        }
        Err(e) => {
            eprintln!("kernels-host: {e}");
            std::process::exit(e.exit_code());
        }
    }
}
