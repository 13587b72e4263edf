//! `parity frames --video A B`: two raw video outputs (a filter's CPU and CUDA forms, or
//! the emulated and the real device's) compared frame by frame and component by
//! component: identical frames, the largest absolute difference, PSNR and the first
//! differing sample, in the same reports (per_frame.csv, summary.json, summary.md,
//! junit.xml) and with the same exit codes as extractor runs.
//!
//! Inputs are raw frames (`.yuv`, `.raw`, ...: geometry from -W/-H and --pix-fmt) or
//! YUV4MPEG2 streams (`.y4m`: geometry from the header). Both are read whole through
//! [`crate::input`] (regular files only, size and time limits).

use crate::frames::FramesArgs;
use crate::junit::{Case, Suite};
use crate::report::{write_atomic, write_json};
use anyhow::{anyhow, bail, Context, Result};
use serde_json::{json, Map, Value as Json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One plane of a pixel format: subsampling (log2) and samples per pixel (2 for the
/// interleaved chroma of nv12, 4 for bgr0, ...).
#[derive(Debug, Clone, Copy)]
struct Plane {
    w_shift: u32,
    h_shift: u32,
    per_pixel: usize,
}

/// One component: where its samples sit (plane, first sample of a pixel, stride).
#[derive(Debug, Clone, Copy)]
struct Component {
    name: &'static str,
    plane: usize,
    offset: usize,
}

/// A pixel format, by FFmpeg's name.
#[derive(Debug, Clone)]
pub struct PixFmt {
    name: &'static str,
    /// Bytes per sample: 1, or 2 (little-endian).
    bytes: usize,
    /// The largest sample value, for PSNR: 2^bits - 1 (10-bit samples in the low bits of
    /// 16 count as 1023; those in the high bits, p010, as 65535).
    peak: u32,
    planes: Vec<Plane>,
    comps: Vec<Component>,
}

const fn pl(w_shift: u32, h_shift: u32, per_pixel: usize) -> Plane {
    Plane { w_shift, h_shift, per_pixel }
}

const fn c(name: &'static str, plane: usize, offset: usize) -> Component {
    Component { name, plane, offset }
}

/// The formats parity knows, by name (FFmpeg's `-pix_fmt` names).
pub fn pix_fmt(name: &str) -> Result<PixFmt> {
    let yuv = |ws, hs| vec![pl(0, 0, 1), pl(ws, hs, 1), pl(ws, hs, 1)];
    let yuv_c = vec![c("Y", 0, 0), c("U", 1, 0), c("V", 2, 0)];
    let yuva_c = vec![c("Y", 0, 0), c("U", 1, 0), c("V", 2, 0), c("A", 3, 0)];
    let semi = |hs| vec![pl(0, 0, 1), pl(1, hs, 2)];
    let packed = |names: [&'static str; 4]| -> (Vec<Plane>, Vec<Component>) {
        (vec![pl(0, 0, 4)], names.iter().enumerate().map(|(i, n)| c(n, 0, i)).collect())
    };
    let packed3 = |names: [&'static str; 3]| -> (Vec<Plane>, Vec<Component>) {
        (vec![pl(0, 0, 3)], names.iter().enumerate().map(|(i, n)| c(n, 0, i)).collect())
    };
    let yuva = |ws, hs| {
        let mut p: Vec<Plane> = yuv(ws, hs);
        p.push(pl(0, 0, 1));
        p
    };
    let (n, bytes, peak, planes, comps): (&'static str, usize, u32, Vec<Plane>, Vec<Component>) = match name {
        "gray" => ("gray", 1, 255, vec![pl(0, 0, 1)], vec![c("Y", 0, 0)]),
        "gray16le" => ("gray16le", 2, 65535, vec![pl(0, 0, 1)], vec![c("Y", 0, 0)]),
        "yuv420p" => ("yuv420p", 1, 255, yuv(1, 1), yuv_c),
        "yuv422p" => ("yuv422p", 1, 255, yuv(1, 0), yuv_c),
        "yuv444p" => ("yuv444p", 1, 255, yuv(0, 0), yuv_c),
        "yuva420p" => ("yuva420p", 1, 255, yuva(1, 1), yuva_c),
        "yuva444p" => ("yuva444p", 1, 255, yuva(0, 0), yuva_c),
        "yuv420p10le" => ("yuv420p10le", 2, 1023, yuv(1, 1), yuv_c),
        "yuv422p10le" => ("yuv422p10le", 2, 1023, yuv(1, 0), yuv_c),
        "yuv444p10le" => ("yuv444p10le", 2, 1023, yuv(0, 0), yuv_c),
        "yuv420p16le" => ("yuv420p16le", 2, 65535, yuv(1, 1), yuv_c),
        "yuv444p16le" => ("yuv444p16le", 2, 65535, yuv(0, 0), yuv_c),
        "nv12" => ("nv12", 1, 255, semi(1), vec![c("Y", 0, 0), c("U", 1, 0), c("V", 1, 1)]),
        "nv21" => ("nv21", 1, 255, semi(1), vec![c("Y", 0, 0), c("V", 1, 0), c("U", 1, 1)]),
        "nv16" => ("nv16", 1, 255, semi(0), vec![c("Y", 0, 0), c("U", 1, 0), c("V", 1, 1)]),
        "p010le" => ("p010le", 2, 65535, semi(1), vec![c("Y", 0, 0), c("U", 1, 0), c("V", 1, 1)]),
        "p016le" => ("p016le", 2, 65535, semi(1), vec![c("Y", 0, 0), c("U", 1, 0), c("V", 1, 1)]),
        "bgr0" | "rgb0" | "0rgb" | "0bgr" | "bgra" | "rgba" | "argb" | "abgr" => {
            let (n, order) = match name {
                "bgr0" => ("bgr0", ["B", "G", "R", "X"]),
                "rgb0" => ("rgb0", ["R", "G", "B", "X"]),
                "0rgb" => ("0rgb", ["X", "R", "G", "B"]),
                "0bgr" => ("0bgr", ["X", "B", "G", "R"]),
                "bgra" => ("bgra", ["B", "G", "R", "A"]),
                "rgba" => ("rgba", ["R", "G", "B", "A"]),
                "argb" => ("argb", ["A", "R", "G", "B"]),
                _ => ("abgr", ["A", "B", "G", "R"]),
            };
            let (p, cs) = packed(order);
            (n, 1, 255, p, cs)
        }
        "rgb24" => {
            let (p, cs) = packed3(["R", "G", "B"]);
            ("rgb24", 1, 255, p, cs)
        }
        "bgr24" => {
            let (p, cs) = packed3(["B", "G", "R"]);
            ("bgr24", 1, 255, p, cs)
        }
        _ => bail!(
            "--pix-fmt {name}: not a format parity knows (gray, gray16le, yuv420p, yuv422p, yuv444p, yuva420p, yuva444p, \
             yuv420p10le, yuv422p10le, yuv444p10le, yuv420p16le, yuv444p16le, nv12, nv21, nv16, p010le, p016le, \
             bgr0, rgb0, 0rgb, 0bgr, bgra, rgba, argb, abgr, rgb24, bgr24)"
        ),
    };
    Ok(PixFmt { name: n, bytes, peak, planes, comps })
}

/// A frame geometry: size and format.
#[derive(Debug, Clone)]
pub struct Geometry {
    /// Luma width in samples.
    pub width: u32,
    /// Luma height in rows.
    pub height: u32,
    /// The pixel format: planes, subsampling, sample size.
    pub fmt: PixFmt,
}

impl Geometry {
    /// Samples per row and rows of plane `p`.
    fn plane_dims(&self, p: usize) -> (usize, usize) {
        let pl = self.fmt.planes[p];
        let w = (self.width as usize).div_ceil(1 << pl.w_shift);
        let h = (self.height as usize).div_ceil(1 << pl.h_shift);
        (w * pl.per_pixel, h)
    }

    /// Byte offset of each plane in a frame, and the frame's size.
    fn layout(&self) -> (Vec<usize>, usize) {
        let mut offs = Vec::new();
        let mut at = 0;
        for p in 0..self.fmt.planes.len() {
            offs.push(at);
            let (w, h) = self.plane_dims(p);
            at += w * h * self.fmt.bytes;
        }
        (offs, at)
    }

    /// Bytes of one frame.
    pub fn frame_bytes(&self) -> usize {
        self.layout().1
    }

    fn describe(&self) -> String {
        format!("{}x{} {}", self.width, self.height, self.fmt.name)
    }
}

/// A decoded input: its frames (byte ranges of `data`).
struct Video {
    path: PathBuf,
    container: &'static str,
    geom: Geometry,
    data: Vec<u8>,
    frames: Vec<std::ops::Range<usize>>,
}

/// The y4m colour-space tag as a pixel format (YUV4MPEG2's `C` parameter; 4:2:0 when
/// there is none).
fn y4m_fmt(tag: &str) -> Option<&'static str> {
    Some(match tag {
        "420jpeg" | "420paldv" | "420mpeg2" | "420" => "yuv420p",
        "422" => "yuv422p",
        "444" => "yuv444p",
        "444alpha" => "yuva444p",
        "mono" => "gray",
        "mono16" => "gray16le",
        "420p10" => "yuv420p10le",
        "422p10" => "yuv422p10le",
        "444p10" => "yuv444p10le",
        "420p16" => "yuv420p16le",
        "444p16" => "yuv444p16le",
        _ => return None,
    })
}

/// Parses a YUV4MPEG2 stream: the header's geometry and every frame's bytes.
fn parse_y4m(path: &Path, data: &[u8]) -> Result<(Geometry, Vec<std::ops::Range<usize>>)> {
    let p = path.display();
    const MAGIC: &[u8] = b"YUV4MPEG2";
    if !data.starts_with(MAGIC) {
        bail!("{p}: not a YUV4MPEG2 stream (a .y4m file starts with \"YUV4MPEG2 \"; give raw frames another extension, with -W, -H and --pix-fmt)");
    }
    let end = data
        .iter()
        .take(4096)
        .position(|&b| b == b'\n')
        .ok_or_else(|| anyhow!("{p}: bad y4m header: no end of line in its first 4096 bytes"))?;
    let header = std::str::from_utf8(&data[MAGIC.len()..end]).map_err(|_| anyhow!("{p}: bad y4m header: not ASCII text"))?;
    let (mut w, mut h, mut fmt) = (None, None, "yuv420p");
    for tok in header.split(' ').filter(|t| !t.is_empty()) {
        let (k, v) = tok.split_at(1);
        match k {
            "W" | "H" => {
                let n: u32 = v.parse().ok().filter(|&n| n > 0 && n <= 1 << 16).ok_or_else(|| anyhow!("{p}: bad y4m header: {k}{v} is not a frame {} from 1 to 65536", if k == "W" { "width" } else { "height" }))?;
                if k == "W" {
                    w = Some(n)
                } else {
                    h = Some(n)
                }
            }
            "C" => fmt = y4m_fmt(v).ok_or_else(|| anyhow!("{p}: y4m colour space C{v} is not one parity reads (420jpeg, 420mpeg2, 420paldv, 422, 444, 444alpha, mono, mono16, 420p10, 422p10, 444p10, 420p16, 444p16)"))?,
            "I" if v != "p" && v != "?" => {} // interlacing is a display hint; the samples are the same
            _ => {}
        }
    }
    let (Some(width), Some(height)) = (w, h) else {
        bail!("{p}: bad y4m header: no {} parameter", if w.is_none() { "W (width)" } else { "H (height)" })
    };
    let geom = Geometry { width, height, fmt: pix_fmt(fmt)? };
    let fb = geom.frame_bytes();
    let mut frames = Vec::new();
    let mut at = end + 1;
    while at < data.len() {
        let n = frames.len();
        if !data[at..].starts_with(b"FRAME") {
            bail!("{p}: bad y4m stream: frame {n} at byte {at} does not start with FRAME");
        }
        let eol = data[at..]
            .iter()
            .take(4096)
            .position(|&b| b == b'\n')
            .ok_or_else(|| anyhow!("{p}: bad y4m stream: the FRAME line of frame {n} (byte {at}) has no end"))?;
        let start = at + eol + 1;
        if data.len() - start < fb {
            bail!("{p}: truncated: frame {n} has {} of its {fb} bytes ({})", data.len() - start, geom.describe());
        }
        frames.push(start..start + fb);
        at = start + fb;
    }
    Ok((geom, frames))
}

impl Video {
    /// Reads `path`: a y4m stream (by its extension), else raw frames of `raw`.
    fn read(path: &Path, raw: Option<&Geometry>) -> Result<Video> {
        let y4m = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("y4m"));
        if !y4m && raw.is_none() {
            bail!("{}: raw frames need their geometry: give -W, -H and --pix-fmt (or a .y4m file)", path.display());
        }
        let data = crate::input::read(path, "video")?;
        if y4m {
            let (geom, frames) = parse_y4m(path, &data)?;
            if frames.is_empty() {
                bail!("{}: the y4m stream holds no frames", path.display());
            }
            return Ok(Video { path: path.into(), container: "y4m", geom, data, frames });
        }
        let geom = raw.cloned().expect("checked above");
        let fb = geom.frame_bytes();
        if data.is_empty() {
            bail!("{}: empty file: no frames", path.display());
        }
        if data.len() % fb != 0 {
            bail!(
                "{}: {} bytes is not a whole number of {} frames ({fb} bytes each: {} whole frames and {} bytes left): truncated, or another size or format",
                path.display(),
                data.len(),
                geom.describe(),
                data.len() / fb,
                data.len() % fb
            );
        }
        let frames = (0..data.len() / fb).map(|i| i * fb..(i + 1) * fb).collect();
        Ok(Video { path: path.into(), container: "raw", geom, data, frames })
    }

    fn side_json(&self, label: &str) -> Json {
        json!({"label": label, "source": self.path.display().to_string(), "format": self.container, "frames": self.frames.len(),
               "geometry": self.geom.describe()})
    }
}

/// The differences of one component over one frame, or over all.
#[derive(Debug, Clone, Default)]
struct Stats {
    samples: u64,
    differing: u64,
    beyond: u64,
    max_abs: u32,
    sse: u128,
    /// First differing sample: (frame, x, y, a, b), x and y in the component's own grid.
    first: Option<(usize, usize, usize, u32, u32)>,
    /// Frames where the component is identical (over all frames only).
    identical_frames: u64,
}

impl Stats {
    fn add(&mut self, o: &Stats) {
        self.samples += o.samples;
        self.differing += o.differing;
        self.beyond += o.beyond;
        self.max_abs = self.max_abs.max(o.max_abs);
        self.sse += o.sse;
        if self.first.is_none() {
            self.first = o.first;
        }
        self.identical_frames += u64::from(o.differing == 0);
    }

    /// PSNR in dB against `peak`; None when identical (infinite).
    fn psnr(&self, peak: u32) -> Option<f64> {
        (self.sse > 0).then(|| 10.0 * ((peak as f64).powi(2) * self.samples as f64 / self.sse as f64).log10())
    }
}

fn psnr_text(p: Option<f64>) -> String {
    p.map(|x| format!("{x:.2}")).unwrap_or_else(|| "inf".into())
}

fn psnr_json(p: Option<f64>) -> Json {
    p.map(|x| json!((x * 1e4).round() / 1e4)).unwrap_or(json!("inf"))
}

/// Compares component `k` of two frames.
fn compare_component(g: &Geometry, k: usize, frame: usize, a: &[u8], b: &[u8], tol: u32) -> Stats {
    let comp = g.fmt.comps[k];
    let (offs, _) = g.layout();
    let (row, rows) = g.plane_dims(comp.plane);
    let step = g.fmt.planes[comp.plane].per_pixel;
    let bytes = g.fmt.bytes;
    let get = |d: &[u8], i: usize| -> u32 {
        let o = offs[comp.plane] + i * bytes;
        if bytes == 2 {
            u16::from_le_bytes([d[o], d[o + 1]]) as u32
        } else {
            d[o] as u32
        }
    };
    let mut s = Stats::default();
    for y in 0..rows {
        for x in (comp.offset..row).step_by(step) {
            let i = y * row + x;
            let (va, vb) = (get(a, i), get(b, i));
            s.samples += 1;
            if va != vb {
                let d = va.abs_diff(vb);
                s.differing += 1;
                s.beyond += u64::from(d > tol);
                s.max_abs = s.max_abs.max(d);
                s.sse += (d as u128) * (d as u128);
                if s.first.is_none() {
                    s.first = Some((frame, x / step, y, va, vb));
                }
            }
        }
    }
    s
}

/// `parity frames --video A B`: 0 identical (or within --max-diff), 1 differences;
/// errors (exit 2) for unreadable or mismatched inputs.
/// Runs `parity frames --video`: the raw-video comparison, in a guarded report directory.
pub fn run_video(a: &FramesArgs) -> Result<i32> {
    crate::report::guarded("frames", &a.out, &crate::report::FRAMES_ARTEFACTS, || run(a))
}

fn run(a: &FramesArgs) -> Result<i32> {
    check_args(a)?;
    let raw = match (a.clip.width, a.clip.height) {
        (Some(w), Some(h)) => {
            let fmt = match &a.pix_fmt {
                Some(f) => pix_fmt(f)?,
                None => pix_fmt(&default_fmt(&a.clip.pixfmt, a.clip.bitdepth))?,
            };
            Some(Geometry { width: w, height: h, fmt })
        }
        (None, None) => None,
        _ => bail!("--video: give both -W and -H (raw frames), or neither (y4m files)"),
    };
    let (pa, pb) = (&a.video[0], &a.video[1]);
    // A y4m header gives the other input its geometry when -W/-H are not given.
    let (va, vb) = if raw.is_none() && !is_y4m(pa) && is_y4m(pb) {
        let vb = Video::read(pb, None)?;
        (Video::read(pa, Some(&vb.geom))?, vb)
    } else {
        let va = Video::read(pa, raw.as_ref())?;
        let vb = Video::read(pb, raw.as_ref().or(Some(&va.geom)))?;
        (va, vb)
    };
    if va.geom.describe() != vb.geom.describe() {
        bail!(
            "--video: {} is {} but {} is {}: only frames of one size and format compare",
            pa.display(),
            va.geom.describe(),
            pb.display(),
            vb.geom.describe()
        );
    }
    if let Some(r) = &raw {
        for v in [&va, &vb] {
            if v.container == "y4m" && r.describe() != v.geom.describe() {
                bail!("--video: {}'s header says {}, but -W/-H/--pix-fmt say {}", v.path.display(), v.geom.describe(), r.describe());
            }
        }
    }
    if va.frames.len() != vb.frames.len() {
        bail!(
            "--video: {} holds {} frames but {} holds {} ({}): frame counts differ",
            pa.display(),
            va.frames.len(),
            pb.display(),
            vb.frames.len(),
            va.geom.describe()
        );
    }
    let n = a.frames.map(|n| n as usize).unwrap_or(va.frames.len());
    if n == 0 || n > va.frames.len() {
        bail!("--frames {n}: the inputs hold {} frames", va.frames.len());
    }
    let g = &va.geom;
    let ncomp = g.fmt.comps.len();
    let mut per_frame: Vec<Vec<Stats>> = Vec::with_capacity(n);
    let mut total = vec![Stats::default(); ncomp];
    for f in 0..n {
        let (fa, fb) = (&va.data[va.frames[f].clone()], &vb.data[vb.frames[f].clone()]);
        let row: Vec<Stats> = (0..ncomp).map(|k| compare_component(g, k, f, fa, fb, a.max_diff)).collect();
        for (t, s) in total.iter_mut().zip(&row) {
            t.add(s);
        }
        per_frame.push(row);
    }
    let identical = per_frame.iter().filter(|r| r.iter().all(|s| s.differing == 0)).count();
    let beyond: u64 = total.iter().map(|s| s.beyond).sum();
    let code = if beyond > 0 { 1 } else { 0 };
    let labels = (a.label_a.as_str(), a.label_b.as_str());
    let summary = summary_json(a, &va, &vb, labels, &per_frame, &total, identical, code);
    write_reports(&a.out, &summary, g, &per_frame, labels)?;
    print_summary(&summary, &a.out);
    Ok(code)
}

fn is_y4m(p: &Path) -> bool {
    p.extension().is_some_and(|e| e.eq_ignore_ascii_case("y4m"))
}

/// The format that --pixfmt and --bitdepth name (their defaults: yuv420p).
fn default_fmt(pixfmt: &str, bitdepth: u32) -> String {
    let base = format!("yuv{pixfmt}p");
    match bitdepth {
        8 => base,
        10 | 16 => format!("{base}{bitdepth}le"),
        b => format!("{base}{b}le"),
    }
}

/// --video compares files; the options that run extractors have no place beside it.
fn check_args(a: &FramesArgs) -> Result<()> {
    if a.video.len() != 2 {
        bail!("--video takes two files, A and B");
    }
    let clash: Vec<&str> = [
        ("-r/--reference", a.clip.reference.is_some()),
        ("-d/--distorted", a.clip.distorted.is_some()),
        ("--clips", a.clips.is_some()),
        ("--cpu-cmd", a.cpu_cmd.is_some()),
        ("--cuda-cmd", a.cuda_cmd.is_some()),
        ("--features", a.ex.features.is_some()),
        ("--block-orders", !a.block_orders.is_empty()),
        ("--shard", a.shard.is_some()),
        ("--per-feature", a.per_feature),
    ]
    .into_iter()
    .filter(|(_, given)| *given)
    .map(|(n, _)| n)
    .collect();
    if !clash.is_empty() {
        bail!("--video compares two existing files and runs nothing: {} cannot go with it", clash.join(", "));
    }
    Ok(())
}

fn first_json(g: &Geometry, k: usize, s: &Stats) -> Json {
    match s.first {
        Some((f, x, y, va, vb)) => json!({"frame": f, "component": g.fmt.comps[k].name, "x": x, "y": y, "a": va, "b": vb}),
        None => Json::Null,
    }
}

#[allow(clippy::too_many_arguments)]
fn summary_json(
    a: &FramesArgs,
    va: &Video,
    vb: &Video,
    labels: (&str, &str),
    per_frame: &[Vec<Stats>],
    total: &[Stats],
    identical: usize,
    code: i32,
) -> Json {
    let g = &va.geom;
    let comps: Map<String, Json> = total
        .iter()
        .enumerate()
        .map(|(k, s)| {
            (
                g.fmt.comps[k].name.to_string(),
                json!({
                    "samples": s.samples, "differing_samples": s.differing, "beyond_tolerance": s.beyond,
                    "max_abs_diff": s.max_abs, "psnr_db": psnr_json(s.psnr(g.fmt.peak)),
                    "identical_frames": s.identical_frames, "frames": per_frame.len(),
                    "first_difference": first_json(g, k, s), "pass": s.beyond == 0,
                }),
            )
        })
        .collect();
    // The first differing sample in frame order (then component order).
    let first = per_frame
        .iter()
        .flat_map(|r| r.iter().enumerate())
        .find(|(_, s)| s.first.is_some())
        .map(|(k, s)| first_json(g, k, s))
        .unwrap_or(Json::Null);
    let first_frame = per_frame.iter().position(|r| r.iter().any(|s| s.differing > 0));
    json!({
        "schema": "simtwin-parity-summary/1",
        "command": "frames",
        "mode": "video",
        "verdict": if code == 0 { "parity" } else { "differences" },
        "exit_code": code,
        "a": labels.0, "b": labels.1,
        "sides": [va.side_json(labels.0), vb.side_json(labels.1)],
        "width": g.width, "height": g.height, "pix_fmt": g.fmt.name, "frame_bytes": g.frame_bytes(),
        "frames": per_frame.len(),
        "identical_frames": identical,
        "first_differing_frame": first_frame,
        "first_difference": first,
        "max_diff_allowed": a.max_diff,
        "psnr_peak": g.fmt.peak,
        "components": comps,
    })
}

fn write_reports(dir: &Path, summary: &Json, g: &Geometry, per_frame: &[Vec<Stats>], labels: (&str, &str)) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create report directory {}", dir.display()))?;
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "frame",
        "component",
        "samples",
        "differing_samples",
        "max_abs_diff",
        "psnr_db",
        "first_x",
        "first_y",
        labels.0,
        labels.1,
    ])?;
    for (f, row) in per_frame.iter().enumerate() {
        for (k, s) in row.iter().enumerate() {
            let (fx, fy, fa, fb) =
                s.first.map(|(_, x, y, va, vb)| (x.to_string(), y.to_string(), va.to_string(), vb.to_string())).unwrap_or_default();
            w.write_record([
                f.to_string(),
                g.fmt.comps[k].name.into(),
                s.samples.to_string(),
                s.differing.to_string(),
                s.max_abs.to_string(),
                psnr_text(s.psnr(g.fmt.peak)),
                fx,
                fy,
                fa,
                fb,
            ])?;
        }
    }
    write_atomic(&dir.join("per_frame.csv"), w.into_inner().map_err(|e| anyhow!("{e}"))?)?;
    let cases = cases(summary);
    crate::junit::write(&dir.join("junit.xml"), "parity frames", &[Suite { name: "parity frames".into(), cases, time: None }])?;
    write_atomic(&dir.join("summary.md"), markdown(summary))?;
    // Last: a summary.json on disk means the other files are this run's.
    write_json(&dir.join("summary.json"), summary)
}

fn show(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Null => "-".into(),
        v => v.to_string(),
    }
}

fn component_line(m: &Json) -> String {
    let first = &m["first_difference"];
    let at = if first.is_object() {
        format!(
            "; first difference at frame {} ({}, {}): {} vs {}",
            show(&first["frame"]),
            show(&first["x"]),
            show(&first["y"]),
            show(&first["a"]),
            show(&first["b"])
        )
    } else {
        String::new()
    };
    format!(
        "{}/{} frames identical, {} of {} samples differ ({} beyond tolerance), max |d| {}, PSNR {} dB{at}",
        show(&m["identical_frames"]),
        show(&m["frames"]),
        show(&m["differing_samples"]),
        show(&m["samples"]),
        show(&m["beyond_tolerance"]),
        show(&m["max_abs_diff"]),
        show(&m["psnr_db"])
    )
}

/// JUnit cases: one per component, failed when a sample differs beyond --max-diff.
fn cases(s: &Json) -> Vec<Case> {
    let class = format!("parity.frames.video.{}-vs-{}", show(&s["a"]), show(&s["b"]));
    s["components"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, m)| {
            let line = component_line(m);
            let pass = m["pass"].as_bool() == Some(true);
            let case = Case::check(class.clone(), name.as_str(), (!pass).then(|| (line.clone(), line.clone())));
            if pass {
                case.with_stdout(line)
            } else {
                case
            }
        })
        .collect()
}

fn markdown(s: &Json) -> String {
    let mut m = String::new();
    let _ = writeln!(m, "# parity frames --video\n");
    let _ = writeln!(m, "**Verdict: {}** (exit code {})\n", show(&s["verdict"]).to_uppercase(), show(&s["exit_code"]));
    for side in s["sides"].as_array().into_iter().flatten() {
        let _ = writeln!(
            m,
            "- {}: `{}` ({}, {} frames)",
            show(&side["label"]),
            show(&side["source"]),
            show(&side["format"]),
            show(&side["frames"])
        );
    }
    let _ = writeln!(
        m,
        "\n{}x{} {}, {} frames, {} identical; tolerance: |d| <= {}\n",
        show(&s["width"]),
        show(&s["height"]),
        show(&s["pix_fmt"]),
        show(&s["frames"]),
        show(&s["identical_frames"]),
        show(&s["max_diff_allowed"])
    );
    let _ = writeln!(
        m,
        "| component | identical frames | differing samples | max abs diff | PSNR (dB) | first difference (frame x,y: a vs b) |"
    );
    let _ = writeln!(m, "|---|---|---|---|---|---|");
    for (name, c) in s["components"].as_object().into_iter().flatten() {
        let f = &c["first_difference"];
        let first = if f.is_object() {
            format!("{} {},{}: {} vs {}", show(&f["frame"]), show(&f["x"]), show(&f["y"]), show(&f["a"]), show(&f["b"]))
        } else {
            "-".into()
        };
        let _ = writeln!(
            m,
            "| {name} | {}/{} | {}/{} | {} | {} | {first} |",
            show(&c["identical_frames"]),
            show(&c["frames"]),
            show(&c["differing_samples"]),
            show(&c["samples"]),
            show(&c["max_abs_diff"]),
            show(&c["psnr_db"])
        );
    }
    m
}

fn print_summary(s: &Json, out: &Path) {
    println!(
        "{} vs {}: {}/{} frames identical ({}x{} {})",
        show(&s["a"]),
        show(&s["b"]),
        show(&s["identical_frames"]),
        show(&s["frames"]),
        show(&s["width"]),
        show(&s["height"]),
        show(&s["pix_fmt"])
    );
    for (name, c) in s["components"].as_object().into_iter().flatten() {
        println!("  {name:<2} {}", component_line(c));
    }
    println!("verdict: {} (exit {}); reports in {}", show(&s["verdict"]).to_uppercase(), show(&s["exit_code"]), out.display());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_sizes_follow_ffmpeg() {
        let g = |w, h, f: &str| Geometry { width: w, height: h, fmt: pix_fmt(f).unwrap() }.frame_bytes();
        assert_eq!(g(320, 240, "yuv420p"), 115_200);
        assert_eq!(g(321, 241, "yuv420p"), 321 * 241 + 2 * 161 * 121);
        assert_eq!(g(320, 240, "nv12"), 115_200);
        assert_eq!(g(320, 240, "p010le"), 230_400);
        assert_eq!(g(320, 240, "yuva420p"), 115_200 + 76_800);
        assert_eq!(g(320, 240, "bgr0"), 307_200);
        assert_eq!(g(320, 240, "yuv444p16le"), 460_800);
    }

    #[test]
    fn components_of_interleaved_chroma() {
        let g = Geometry { width: 4, height: 2, fmt: pix_fmt("nv12").unwrap() };
        let a = vec![0u8; g.frame_bytes()];
        let mut b = a.clone();
        b[8 + 3] = 7; // UV plane, pixel 1, V
        let u = compare_component(&g, 1, 0, &a, &b, 0);
        let v = compare_component(&g, 2, 0, &a, &b, 0);
        assert_eq!((u.differing, v.differing, v.max_abs), (0, 1, 7));
        assert_eq!(v.first, Some((0, 1, 0, 0, 7)));
        assert_eq!(u.samples, 2);
    }
}
