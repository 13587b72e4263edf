//! Arguments of `parity replay` and `parity libm` (their own module, so that the
//! replay back ends can take them without importing the command's module).

use clap::Args;
use std::path::PathBuf;

/// Arguments of `parity replay`.
#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Examples:\n  parity replay --source fixtures/cuda/crlog2_device.cu --function simtwin_cr_log2f \\\n      --reference log2 --require-correct-rounding --out reports/replay/crlog2\n  parity replay --source f.cu --function my_exp --reference exp --from 0xc2000000 --to 0xc3000000\n  parity replay --table fixtures/data/log2_hard_cases.csv --reference log2\n  parity replay --source f.cu --function my_log2 --reference log2 --shard 3/8 --out shards/3   # then: parity merge shards/*\n  parity replay --device real --builtin __log2f --reference log2 --out $OUT/fast_log2\n  parity replay --device-math --function expf,__sinf            # sampled: one block + 4096 inputs each\n  parity replay --device-math --exhaustive --out reports/replay/device-math"
)]
pub struct ReplayArgs {
    /// The .cu file holding the device function.
    #[arg(long)]
    pub source: Option<PathBuf>,
    /// The device function, `float NAME(float)`.
    #[arg(long)]
    pub function: Option<String>,
    /// Reference: log2, exp2, log, exp, sqrt, cbrt, sin, cos, log10, exp10, pow:<p>, scale:<c>
    /// (required, except with --device-math).
    #[arg(long, default_value = "")]
    pub reference: String,
    /// First input (bits as 0x..., or a float value such as 1.0 or 0x1p-3).
    #[arg(long)]
    pub from: Option<String>,
    /// End of the range, exclusive (bits as 0x..., or a float value).
    #[arg(long)]
    pub to: Option<String>,
    /// Report directory (default reports/replay/<function>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Exit 1 if any input misrounds.
    #[arg(long)]
    pub require_correct_rounding: bool,
    /// A hard-case table (CSV: input,output hex bits): recompute every entry with MPFR.
    #[arg(long)]
    pub table: Option<PathBuf>,
    /// Preprocessor define for the compilation of the source (NAME or NAME=VALUE).
    #[arg(long = "define", short = 'D')]
    pub defines: Vec<String>,
    /// Include directory for the compilation of the source.
    #[arg(long = "include", short = 'I')]
    pub includes: Vec<PathBuf>,
    /// Where the function runs: host (host-compiled with kernels-host's shim) or real (GPU).
    #[arg(long, default_value = "host")]
    pub device: String,
    /// --device real: a libdevice function or fast intrinsic instead of a source file:
    /// log2f, expf, exp2f, logf, sinf, cosf, sqrtf, __log2f, __expf, __logf, __sinf, __cosf.
    #[arg(long)]
    pub builtin: Option<String>,
    /// --device real: a prebuilt cubin/fatbin (from --emit-image) instead of running nvcc.
    #[arg(long)]
    pub image: Option<PathBuf>,
    /// Compile the device kernel with nvcc into this file (sm_90 cubin) and exit.
    #[arg(long)]
    pub emit_image: Option<PathBuf>,
    /// Extra nvcc flag (repeatable), e.g. --nvcc-flag=--fmad=false.
    #[arg(long = "nvcc-flag", allow_hyphen_values = true)]
    pub nvcc_flags: Vec<String>,
    /// GPU architecture for nvcc.
    #[arg(long, default_value = "sm_90")]
    pub arch: String,
    /// Inputs per work item (host) or per kernel launch (device: default 2^28).
    #[arg(long)]
    pub chunk: Option<usize>,
    /// Most misrounded inputs listed in the CSV (the count is always exact).
    #[arg(long, default_value_t = 1_000_000)]
    pub max_list: usize,
    /// Also compute the max ulp error over correctly rounded inputs (slower).
    #[arg(long)]
    pub track_max_error: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Replay only shard K of N of the input range (N contiguous parts); `auto` reads a
    /// Slurm array task, `auto/N` a Kubernetes Indexed Job; `parity merge` of the shards'
    /// --out directories gives the whole range's report
    #[arg(long, value_name = "K/N|auto|auto/N", value_parser = crate::shard::parse)]
    pub shard: Option<crate::shard::Shard>,
    /// --device-math: twins' libdevice against the H200's record.
    #[command(flatten)]
    pub device_math: DeviceMathArgs,
}

/// `parity replay --device-math`: twins' math functions (libdevice translated over the
/// H200's SFU models) against the H200's recorded results; --function takes a
/// comma-separated list of the record's functions (default all), --from/--to a range of
/// input indices (whole blocks).
#[derive(Args, Debug, Clone)]
pub struct DeviceMathArgs {
    /// Compare twins' math with the H200's record instead of a reference (default: the
    /// record's sample: one block and one window of 4096 inputs per function).
    #[arg(long)]
    pub device_math: bool,
    /// --device-math: the record directory, RELEASE-SET (default
    /// reports/device-math/h200-record/13.5-ftz0-div1-sqrt1-fmad1).
    #[arg(long, requires = "device_math")]
    pub record: Option<PathBuf>,
    /// --device-math: every block of every function (2^32 inputs each).
    #[arg(long, requires = "device_math")]
    pub exhaustive: bool,
    /// --device-math: twin (kernels-host's libdevice, default) or host-libm (glibc, the
    /// math twins had before: a known-wrong model).
    #[arg(long, default_value = "twin", requires = "device_math")]
    pub model: String,
}

impl Default for DeviceMathArgs {
    fn default() -> Self {
        DeviceMathArgs { device_math: false, record: None, exhaustive: false, model: "twin".into() }
    }
}

/// Arguments of `parity libm`.
#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Examples:\n  parity libm --function log2f --from 1.0 --to 1024.0 --out reports/libm/log2f_1_1024\n  parity libm --function powf:2.5 --from 0.25 --to 4.0\n  parity libm --function log2f --library target/simtwin/lib/libsimtwin_crlibm.so --require-correct-rounding"
)]
pub struct LibmArgs {
    /// log2f, expf, logf, exp2f, sinf, cosf, sqrtf, cbrtf, log10f, exp10f, powf:<exponent>.
    #[arg(long)]
    pub function: String,
    /// First input (bits as 0x..., or a float value).
    #[arg(long)]
    pub from: Option<String>,
    /// End of the range, exclusive.
    #[arg(long)]
    pub to: Option<String>,
    /// Report directory (default reports/libm/<function>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The shared library to take the function from (default: glibc's libm.so.6).
    #[arg(long, default_value = "libm.so.6")]
    pub library: String,
    /// Exit 1 if any input misrounds.
    #[arg(long)]
    pub require_correct_rounding: bool,
    /// Most misrounded inputs listed in the CSV.
    #[arg(long, default_value_t = 1_000_000)]
    pub max_list: usize,
    /// Inputs per work item.
    #[arg(long)]
    pub chunk: Option<usize>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Replay only shard K of N of the input range (N contiguous parts); `auto` reads a
    /// Slurm array task, `auto/N` a Kubernetes Indexed Job; `parity merge` of the shards'
    /// --out directories gives the whole range's report
    #[arg(long, value_name = "K/N|auto|auto/N", value_parser = crate::shard::parse)]
    pub shard: Option<crate::shard::Shard>,
}
