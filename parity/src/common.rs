//! Arguments and setup shared by `frames`, `transfers` and `bench`.

use crate::device::find_simtwin;
use crate::template::{Backend, Vars};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// The clip pair of a run: -r, -d, -W and -H are each required (parity frames can take
/// a list of clips instead, `--clips`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ClipArgs {
    /// Reference clip (raw planar YUV; other containers need --frames) [required]
    #[arg(long, short = 'r')]
    pub reference: Option<PathBuf>,
    /// Distorted clip [required]
    #[arg(long, short = 'd')]
    pub distorted: Option<PathBuf>,
    /// Frame width in pixels [required]
    #[arg(long, short = 'W', allow_negative_numbers = true, value_parser = parse_pixels)]
    pub width: Option<u32>,
    /// Frame height in pixels [required]
    #[arg(long, short = 'H', allow_negative_numbers = true, value_parser = parse_pixels)]
    pub height: Option<u32>,
    /// Bits per sample
    #[arg(long, short = 'b', default_value_t = 8, value_parser = parse_bitdepth)]
    pub bitdepth: u32,
    /// Chroma subsampling
    #[arg(long, default_value = "420", value_parser = ["420", "422", "444"])]
    pub pixfmt: String,
}

impl ClipArgs {
    /// Whether any of -r, -d, -W, -H was given.
    pub fn given(&self) -> bool {
        self.reference.is_some() || self.distorted.is_some() || self.width.is_some() || self.height.is_some()
    }

    /// The clip the arguments name: every one of -r, -d, -W and -H is needed.
    pub fn clip(&self) -> Result<Clip> {
        let missing: Vec<&str> = [
            ("--reference/-r", self.reference.is_none()),
            ("--distorted/-d", self.distorted.is_none()),
            ("--width/-W", self.width.is_none()),
            ("--height/-H", self.height.is_none()),
        ]
        .iter()
        .filter(|(_, m)| *m)
        .map(|(n, _)| *n)
        .collect();
        if !missing.is_empty() {
            bail!("missing {}: the clip pair and its size are required", missing.join(", "));
        }
        Ok(Clip {
            name: String::new(),
            reference: self.reference.clone().unwrap_or_default(),
            distorted: self.distorted.clone().unwrap_or_default(),
            width: self.width.unwrap_or(0),
            height: self.height.unwrap_or(0),
            bitdepth: self.bitdepth,
            pixfmt: self.pixfmt.clone(),
            frames: None,
        })
    }
}

/// One clip pair: raw planar YUV (or another container with an explicit frame count).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Clip {
    /// Its name in a clip list (`--clips`); empty for -r/-d.
    pub name: String,
    pub reference: PathBuf,
    pub distorted: PathBuf,
    pub width: u32,
    pub height: u32,
    pub bitdepth: u32,
    pub pixfmt: String,
    /// Frames to use, from a clip list (else --frames or every frame).
    pub frames: Option<u64>,
}

impl Clip {
    pub fn frame_bytes(&self) -> u64 {
        let (w, h) = (self.width as u64, self.height as u64);
        let (cw, ch) = match self.pixfmt.as_str() {
            "444" => (w, h),
            "422" => (w.div_ceil(2), h),
            _ => (w.div_ceil(2), h.div_ceil(2)),
        };
        let bps = if self.bitdepth > 8 { 2 } else { 1 };
        (w * h + 2 * cw * ch) * bps
    }

    /// Frames both clips hold (raw YUV only; None for other files).
    pub fn available_frames(&self) -> Result<Option<u64>> {
        if self.width == 0 || self.height == 0 {
            bail!("--width and --height must be positive");
        }
        let mut n = None::<u64>;
        for p in [&self.reference, &self.distorted] {
            let len = crate::input::check_regular(p, "clip")?;
            if p.extension().is_some_and(|e| e == "yuv") {
                let fb = self.frame_bytes();
                if len % fb != 0 {
                    bail!(
                        "{} is {} bytes, not a whole number of {}x{} {}-bit {} frames ({} bytes each)",
                        p.display(),
                        len,
                        self.width,
                        self.height,
                        self.bitdepth,
                        self.pixfmt,
                        fb
                    );
                }
                let f = len / fb;
                n = Some(n.map_or(f, |x| x.min(f)));
            } else {
                return Ok(None);
            }
        }
        Ok(n)
    }

    /// The frame count to process: `--frames` (checked against the clips) or all frames.
    pub fn resolve_frames(&self, want: Option<u64>) -> Result<u64> {
        let avail = self.available_frames()?;
        match (want, avail) {
            (Some(0), _) => bail!("--frames must be at least 1"),
            (Some(w), Some(a)) if w > a => bail!("--frames {w}: the clips hold only {a} frames"),
            (Some(w), _) => Ok(w),
            (None, Some(0)) => bail!("the clips hold no frames"),
            (None, Some(a)) => Ok(a),
            (None, None) => bail!("cannot tell the frame count of non-.yuv clips: pass --frames"),
        }
    }
}

#[derive(clap::Args, Debug, Clone)]
pub struct ExtractorArgs {
    /// Extractor preset: twin (simtwin-twin), vmaf-fork (--backend/--precision max), vmaf-upstream (--gpumask)
    #[arg(long, default_value = "twin", value_parser = ["twin", "vmaf-fork", "vmaf-upstream"])]
    pub preset: String,
    /// Features to extract, comma separated (e.g. sse,band_mask,log_stat,topk,temporal)
    #[arg(long)]
    pub features: Option<String>,
    /// Planted defect to switch on in the CUDA twin ({defect}/{defect_arg})
    #[arg(long)]
    pub defect: Option<String>,
    /// simtwin-twin binary ({twin}; default: <simtwin>/bin/simtwin-twin)
    #[arg(long)]
    pub twin: Option<PathBuf>,
    /// VMAF CLI binary ({vmaf})
    #[arg(long, default_value = "vmaf")]
    pub vmaf: String,
    /// simtwin build directory (default: target/simtwin, found from the current directory)
    #[arg(long)]
    pub simtwin: Option<PathBuf>,
    /// Host kernel libraries for the emulated driver (EMU_CUDA_KERNELS; default <simtwin>/kernels)
    #[arg(long)]
    pub kernels: Option<PathBuf>,
    #[command(flatten)]
    pub emu: crate::settings::EmuSettings,
    /// Extra environment for the CUDA extractor, KEY=VALUE (repeatable)
    #[arg(long = "cuda-env", value_name = "KEY=VALUE")]
    pub cuda_env: Vec<String>,
    /// Time limit of each extractor run in seconds (default 600; faults: 10x the clean run);
    /// a run that reaches it is killed with its whole process group and the command fails
    /// (exit code 2; in faults it is a hang), e.g. --timeout 60
    #[arg(long, value_name = "SECONDS", value_parser = crate::run::parse_timeout)]
    pub timeout: Option<f64>,
}

impl ExtractorArgs {
    /// The time limit of one extractor run: `--timeout` or the default.
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.timeout.unwrap_or(crate::run::DEFAULT_TIMEOUT_S))
    }

    pub fn simtwin(&self) -> Option<PathBuf> {
        find_simtwin(self.simtwin.as_deref()).ok()
    }

    pub fn require_simtwin(&self) -> Result<PathBuf> {
        find_simtwin(self.simtwin.as_deref())
    }

    pub fn vars(&self, clip: &Clip, frames: u64, output: &Path, backend: Backend, features: Option<&str>) -> Vars {
        let mut v = Vars::default();
        let simtwin = self.simtwin();
        v.set("ref", clip.reference.display().to_string());
        v.set("dis", clip.distorted.display().to_string());
        v.set("width", clip.width.to_string());
        v.set("height", clip.height.to_string());
        v.set("pixfmt", clip.pixfmt.clone());
        v.set("bitdepth", clip.bitdepth.to_string());
        v.set("output", output.display().to_string());
        v.set("frames", frames.to_string());
        v.set("features", features.or(self.features.as_deref()).unwrap_or("").to_string());
        v.set("backend", backend.name());
        v.set("defect", if backend == Backend::Cuda { self.defect.clone().unwrap_or_default() } else { String::new() });
        let twin = self
            .twin
            .clone()
            .or_else(|| simtwin.as_ref().map(|s| s.join("bin/simtwin-twin")))
            .unwrap_or_else(|| PathBuf::from("simtwin-twin"));
        v.set("twin", twin.display().to_string());
        v.set("vmaf", self.vmaf.clone());
        v.set("simtwin", simtwin.map(|s| s.display().to_string()).unwrap_or_default());
        v.derive_lists();
        v
    }

    /// Environment for the CUDA side beyond the device selection.
    pub fn cuda_extra_env(&self) -> Result<Vec<(String, String)>> {
        let mut e = self.emu.env();
        for kv in &self.cuda_env {
            let (k, v) = kv.split_once('=').with_context(|| format!("--cuda-env {kv}: expected KEY=VALUE"))?;
            if k.is_empty() {
                bail!("--cuda-env {kv}: empty variable name");
            }
            e.push((k.to_string(), v.to_string()));
        }
        Ok(e)
    }
}

/// `auto` | `counts` | `log:TEXT` | `none`: how to prove that the CUDA side ran on a device.
#[derive(Debug, Clone, PartialEq)]
pub enum Proof {
    Auto,
    Counts,
    Log(String),
    None,
}

pub fn parse_proof(s: &str) -> Result<Proof> {
    Ok(match s {
        "auto" => Proof::Auto,
        "counts" => Proof::Counts,
        "none" => Proof::None,
        _ => match s.strip_prefix("log:") {
            Some(t) if !t.is_empty() => Proof::Log(t.to_string()),
            _ => bail!("--proof {s}: expected auto, counts, log:TEXT or none"),
        },
    })
}

/// `--width`/`--height`: a positive number of pixels (a negative one is named as such,
/// not taken for an option).
fn parse_pixels(s: &str) -> std::result::Result<u32, String> {
    match s.trim().parse::<i64>() {
        Ok(n) if n > 0 && n <= u32::MAX as i64 => Ok(n as u32),
        Ok(_) => Err(format!("'{s}': a frame dimension is a positive number of pixels")),
        Err(_) => Err(format!("'{s}' is not a number of pixels")),
    }
}

fn parse_bitdepth(s: &str) -> std::result::Result<u32, String> {
    match s {
        "8" | "10" | "12" | "16" => Ok(s.parse().unwrap()),
        _ => Err(format!("'{s}' is not a bit depth (8, 10, 12, 16)")),
    }
}
