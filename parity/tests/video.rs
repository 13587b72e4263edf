//! `parity frames --video A B`: raw video outputs compared frame by frame and component
//! by component (identical frames, max |difference|, PSNR, first differing sample), its
//! reports and exit codes, and the clear errors of bad inputs.

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{code, read_json, text};

const W: usize = 8;
const H: usize = 6;
/// yuv420p: 48 Y + 12 U + 12 V.
const FB: usize = W * H + 2 * (W / 2) * (H / 2);

struct Env {
    tmp: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env { tmp: tempfile::tempdir().unwrap() }
    }
    fn p(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }
    fn write(&self, rel: &str, data: &[u8]) -> PathBuf {
        let p = self.p(rel);
        std::fs::write(&p, data).unwrap();
        p
    }
    fn out(&self) -> PathBuf {
        self.p("out")
    }
    fn parity(&self, args: &[&str]) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_parity"));
        c.arg("frames").args(args).arg("--out").arg(self.out());
        c.output().unwrap()
    }
    fn video(&self, a: &Path, b: &Path, extra: &[&str]) -> Output {
        let (a, b) = (a.display().to_string(), b.display().to_string());
        let mut args = vec!["--video", &a, &b];
        args.extend_from_slice(extra);
        self.parity(&args)
    }
    fn summary(&self) -> Value {
        read_json(&self.out().join("summary.json"))
    }
}

/// Frames of a yuv420p 8x6 clip: sample i of frame f is (f * 7 + i) mod 256.
fn clip(frames: usize) -> Vec<u8> {
    (0..frames * FB).map(|i| ((i / FB) * 7 + i % FB) as u8).collect()
}

const RAW: [&str; 6] = ["-W", "8", "-H", "6", "--pix-fmt", "yuv420p"];

#[test]
fn identical_clips_pass_with_every_report() {
    let e = Env::new();
    let a = e.write("a.yuv", &clip(3));
    let b = e.write("b.yuv", &clip(3));
    let o = e.video(&a, &b, &RAW);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let s = e.summary();
    assert_eq!(s["verdict"], "parity");
    assert_eq!(s["mode"], "video");
    assert_eq!((s["frames"].as_u64(), s["identical_frames"].as_u64()), (Some(3), Some(3)));
    assert_eq!(s["components"]["Y"]["psnr_db"], "inf");
    assert_eq!(s["components"]["U"]["samples"], 3 * 12);
    assert!(s["first_difference"].is_null());
    let csv = std::fs::read_to_string(e.out().join("per_frame.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 3 * 3, "{csv}");
    let junit = std::fs::read_to_string(e.out().join("junit.xml")).unwrap();
    assert!(junit.contains("tests=\"3\"") && junit.contains("failures=\"0\""), "{junit}");
    assert!(e.out().join("summary.md").exists());
}

#[test]
fn a_difference_is_located_measured_and_fails() {
    let e = Env::new();
    let a = e.write("a.yuv", &clip(3));
    let mut d = clip(3);
    // Frame 1, V plane (offset 48 + 12), sample (x 2, y 1): index 1 * 4 + 2.
    let at = FB + 48 + 12 + 4 + 2;
    let orig = d[at];
    d[at] = orig.wrapping_add(5);
    // Frame 2, Y (3, 4) off by 1.
    d[2 * FB + 4 * W + 3] ^= 1;
    let b = e.write("b.yuv", &d);
    let o = e.video(&a, &b, &[&RAW[..], &["--label-a", "cpu", "--label-b", "cuda"]].concat());
    assert_eq!(code(&o), 1, "{}", text(&o));
    let s = e.summary();
    assert_eq!(s["verdict"], "differences");
    assert_eq!(s["identical_frames"], 1);
    assert_eq!(s["first_differing_frame"], 1);
    let f = &s["first_difference"];
    assert_eq!((f["frame"].as_u64(), f["component"].as_str(), f["x"].as_u64(), f["y"].as_u64()), (Some(1), Some("V"), Some(2), Some(1)));
    assert_eq!((f["a"].as_u64(), f["b"].as_u64()), (Some(orig as u64), Some(orig.wrapping_add(5) as u64)));
    let v = &s["components"]["V"];
    assert_eq!((v["max_abs_diff"].as_u64(), v["differing_samples"].as_u64(), v["identical_frames"].as_u64()), (Some(5), Some(1), Some(2)));
    // PSNR of one sample off by 5 among 36: 10 log10(255^2 * 36 / 25).
    let want = 10.0 * (255.0f64 * 255.0 * 36.0 / 25.0).log10();
    assert!((v["psnr_db"].as_f64().unwrap() - want).abs() < 1e-3, "{v}");
    assert_eq!(s["components"]["Y"]["max_abs_diff"], 1);
    assert_eq!(s["components"]["U"]["psnr_db"], "inf");
    let csv = std::fs::read_to_string(e.out().join("per_frame.csv")).unwrap();
    assert!(csv.starts_with("frame,component,samples,differing_samples,max_abs_diff,psnr_db,first_x,first_y,cpu,cuda\n"), "{csv}");
    assert!(csv.contains("\n1,V,12,1,5,"), "{csv}");
    let junit = std::fs::read_to_string(e.out().join("junit.xml")).unwrap();
    assert!(junit.contains("failures=\"2\"") && junit.contains("cpu-vs-cuda"), "{junit}");
    // Within --max-diff 5 the same clips pass (the statistics stay).
    let o = e.video(&a, &b, &[&RAW[..], &["--max-diff", "5"]].concat());
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(e.summary()["components"]["V"]["max_abs_diff"], 5);
    let o = e.video(&a, &b, &[&RAW[..], &["--max-diff", "4"]].concat());
    assert_eq!(code(&o), 1);
    assert_eq!(e.summary()["components"]["V"]["beyond_tolerance"], 1);
    assert_eq!(e.summary()["components"]["Y"]["beyond_tolerance"], 0);
}

#[test]
fn interleaved_and_16_bit_formats_split_into_components() {
    let e = Env::new();
    // nv12 8x6: Y 48, then UV interleaved 4x3 pairs.
    let a = vec![10u8; 72];
    let mut b = a.clone();
    b[48 + 2 * 5 + 1] = 13; // pair 5 = (x 1, y 1), V
    let (pa, pb) = (e.write("a.nv12", &a), e.write("b.nv12", &b));
    let o = e.video(&pa, &pb, &["-W", "8", "-H", "6", "--pix-fmt", "nv12"]);
    assert_eq!(code(&o), 1, "{}", text(&o));
    let s = e.summary();
    let f = &s["first_difference"];
    assert_eq!((f["component"].as_str(), f["x"].as_u64(), f["y"].as_u64(), f["b"].as_u64()), (Some("V"), Some(1), Some(1), Some(13)));
    assert_eq!(s["components"]["U"]["differing_samples"], 0);
    // p010le: 16-bit little-endian samples, PSNR against 65535.
    let mut a = vec![0u8; 144];
    let mut b = vec![0u8; 144];
    a[2..4].copy_from_slice(&(0x0100u16 << 6).to_le_bytes());
    b[2..4].copy_from_slice(&(0x0101u16 << 6).to_le_bytes());
    let (pa, pb) = (e.write("a.p010", &a), e.write("b.p010", &b));
    let o = e.video(&pa, &pb, &["-W", "8", "-H", "6", "--pix-fmt", "p010le"]);
    assert_eq!(code(&o), 1, "{}", text(&o));
    let s = e.summary();
    assert_eq!(s["components"]["Y"]["max_abs_diff"], 64);
    assert_eq!(s["first_difference"]["x"], 1);
    assert_eq!(s["psnr_peak"], 65535);
}

fn y4m(w: usize, h: usize, tag: &str, frames: &[Vec<u8>]) -> Vec<u8> {
    let mut v = format!("YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1{tag}\n").into_bytes();
    for f in frames {
        v.extend_from_slice(b"FRAME\n");
        v.extend_from_slice(f);
    }
    v
}

#[test]
fn y4m_headers_give_the_geometry() {
    let e = Env::new();
    let frames: Vec<Vec<u8>> = clip(2).chunks(FB).map(|c| c.to_vec()).collect();
    let a = e.write("a.y4m", &y4m(W, H, " C420jpeg", &frames));
    let b = e.write("b.y4m", &y4m(W, H, "", &frames));
    let o = e.video(&a, &b, &[]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(e.summary()["pix_fmt"], "yuv420p");
    assert_eq!(e.summary()["frames"], 2);
    // A raw file beside a y4m one takes the y4m's geometry.
    let raw = e.write("c.yuv", &clip(2));
    let o = e.video(&raw, &a, &[]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    // 4:4:4 in the header, 4:2:0 on the other side: no comparison.
    let f444: Vec<Vec<u8>> = vec![vec![0u8; W * H * 3]; 2];
    let c = e.write("c444.y4m", &y4m(W, H, " C444", &f444));
    let o = e.video(&a, &c, &[]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(text(&o).contains("8x6 yuv444p"), "{}", text(&o));
}

/// Exit 2 with a message naming the file and the problem; the summary says error.
fn expect_error(e: &Env, o: &Output, needle: &str) {
    assert_eq!(code(o), 2, "{}", text(o));
    assert!(text(o).contains(needle), "wanted {needle:?} in: {}", text(o));
    let s = e.summary();
    assert_eq!(s["verdict"], "error");
    assert!(s["error"].as_str().unwrap().contains(needle), "{s}");
    assert!(!e.out().join("per_frame.csv").exists());
}

#[test]
fn bad_inputs_get_clear_errors() {
    let e = Env::new();
    let a = e.write("a.yuv", &clip(3));
    // A truncated file: 2 frames and 10 bytes.
    let t = e.write("t.yuv", &clip(3)[..2 * FB + 10]);
    expect_error(&e, &e.video(&a, &t, &RAW), "2 whole frames and 10 bytes left");
    // Wrong size given: 8x6 frames read as 8x8.
    expect_error(&e, &e.video(&a, &a, &["-W", "8", "-H", "8"]), "not a whole number of 8x8 yuv420p frames");
    // Frame counts differ.
    let two = e.write("two.yuv", &clip(2));
    expect_error(&e, &e.video(&a, &two, &RAW), "frame counts differ");
    // Empty file.
    let z = e.write("z.yuv", &[]);
    expect_error(&e, &e.video(&z, &a, &RAW), "empty file");
    // Raw without geometry.
    expect_error(&e, &e.video(&a, &a, &[]), "give -W, -H and --pix-fmt");
    // Unknown format.
    expect_error(&e, &e.video(&a, &a, &["-W", "8", "-H", "6", "--pix-fmt", "yuv411p"]), "not a format parity knows");
    // Bad y4m: no magic, no width, truncated frame, a missing FRAME marker.
    let frames: Vec<Vec<u8>> = clip(2).chunks(FB).map(|c| c.to_vec()).collect();
    let good = y4m(W, H, "", &frames);
    let bad = e.write("bad1.y4m", b"YUV4MPEF2 W8 H6\n");
    expect_error(&e, &e.video(&bad, &bad, &[]), "not a YUV4MPEG2 stream");
    let bad = e.write("bad2.y4m", b"YUV4MPEG2 H6 F25:1\nFRAME\n");
    expect_error(&e, &e.video(&bad, &bad, &[]), "no W (width) parameter");
    let bad = e.write("bad3.y4m", &good[..good.len() - 5]);
    expect_error(&e, &e.video(&bad, &bad, &[]), "truncated: frame 1 has 67 of its 72 bytes");
    let mut g = good.clone();
    let second = g.len() - FB - 6;
    g[second] = b'X';
    let bad = e.write("bad4.y4m", &g);
    expect_error(&e, &e.video(&bad, &bad, &[]), "frame 1 at byte");
    let bad = e.write("bad5.y4m", b"YUV4MPEG2 W8 H6 C411\n");
    expect_error(&e, &e.video(&bad, &bad, &[]), "C411 is not one parity reads");
    // Not regular files: a FIFO (would block forever), /dev/zero (never ends), a directory.
    let fifo = e.p("fifo.yuv");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    expect_error(&e, &e.video(&a, &fifo, &RAW), "a FIFO (named pipe)");
    expect_error(&e, &e.video(Path::new("/dev/zero"), &a, &RAW), "a character device");
    expect_error(&e, &e.video(&e.p(""), &a, &RAW), "a directory");
    // Missing file.
    expect_error(&e, &e.video(&e.p("nope.yuv"), &a, &RAW), "nope.yuv");
    // Over the size limit.
    let o = Command::new(env!("CARGO_BIN_EXE_parity"))
        .args(["--max-input", "100", "frames", "--video"])
        .arg(&a)
        .arg(&a)
        .args(RAW)
        .arg("--out")
        .arg(e.out())
        .output()
        .unwrap();
    expect_error(&e, &o, "over the input size limit of 100 bytes");
    // Extractor options have no place beside --video.
    expect_error(&e, &e.video(&a, &a, &[&RAW[..], &["--features", "sse"]].concat()), "--features cannot go with it");
}

#[test]
fn an_earlier_runs_reports_do_not_survive_a_failed_run() {
    let e = Env::new();
    let a = e.write("a.yuv", &clip(2));
    let o = e.video(&a, &a, &RAW);
    assert_eq!(code(&o), 0);
    assert!(e.out().join("per_frame.csv").exists());
    let t = e.write("t.yuv", &clip(2)[..FB + 1]);
    let o = e.video(&a, &t, &RAW);
    assert_eq!(code(&o), 2);
    assert!(!e.out().join("per_frame.csv").exists());
    assert_eq!(e.summary()["verdict"], "error");
}
