//! A program simtwin has no source for: Debian's ffmpeg binary (5.1, `apt-get install
//! ffmpeg`, installed by scripts/setup), whose CUDA filters carry their kernels as PTX
//! that clang made (`.version 3.2`, `.target sm_30`, gzip-compressed in the binary). Its
//! overlay_cuda filter runs on the emulated driver in PTX mode (no twin exists) and its
//! frames must equal, byte for byte, those of the CPU `overlay` filter on the same
//! inputs; the counters must show the module translated from PTX, device-exact, and no
//! unsupported driver call.
//!
//! Both sides are FFmpeg's own filters; they agree where they compute the same thing (an
//! opaque overlay inside the frame, yuv420p or nv12, even offsets). Alpha blending (float
//! in the CUDA kernel, integer on the CPU) and an overlay crossing the frame's edge differ
//! between FFmpeg's two filters by construction and are not compared here.

mod client_support;
use client_support::simtwin;
use std::path::Path;
use std::process::Command;

/// Runs ffmpeg with `args` in `dir`, on the emulated driver in PTX mode or on no driver.
fn ffmpeg(dir: &Path, args: &[&str], emulated: bool) -> std::process::Output {
    let mut c = Command::new("ffmpeg");
    c.args(["-hide_banner", "-loglevel", "error", "-nostdin", "-y"]).args(args).current_dir(dir);
    c.env_remove("EMU_CUDA_KERNELS");
    if emulated {
        c.env("LD_LIBRARY_PATH", simtwin("lib"))
            .env("EMU_CUDA_EXEC", "ptx")
            .env("EMU_CUDA_COUNTS", dir.join("counts.json"))
            .env("SIMTWIN_CACHE_DIR", dir.join("cache"));
    } else {
        c.env_remove("LD_LIBRARY_PATH");
    }
    c.output().expect("ffmpeg is missing: scripts/setup installs Debian's ffmpeg")
}

/// The overlay of `ov` (an lavfi source) on testsrc2 at (x, y), 5 frames of `fmt`, by the
/// CUDA filter on the emulated driver and by the CPU filter; both outputs' bytes.
fn both(dir: &Path, fmt: &str, ov: &str, x: u32, y: u32) -> (Vec<u8>, Vec<u8>) {
    let main = "testsrc2=size=320x240:rate=5";
    let cuda_graph =
        format!("[0:v]format={fmt},hwupload[a];[1:v]format={fmt},hwupload[b];[a][b]overlay_cuda=x={x}:y={y},hwdownload,format={fmt}");
    let cpu_graph = format!("[0:v]format={fmt}[a];[1:v]format={fmt}[b];[a][b]overlay=x={x}:y={y}:format=yuv420,format={fmt}");
    let common = |graph: &str, out: &str| -> Vec<String> {
        ["-f", "lavfi", "-i", main, "-f", "lavfi", "-i", ov, "-filter_complex", graph, "-frames:v", "5", "-f", "rawvideo", out]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let mut cuda_args = vec!["-init_hw_device".to_string(), "cuda=cu".into(), "-filter_hw_device".into(), "cu".into()];
    cuda_args.extend(common(&cuda_graph, "cuda.yuv"));
    let o = ffmpeg(dir, &cuda_args.iter().map(String::as_str).collect::<Vec<_>>(), true);
    assert!(o.status.success(), "overlay_cuda ({fmt}) on the emulated driver failed: {}", String::from_utf8_lossy(&o.stderr));
    let cpu_args = common(&cpu_graph, "cpu.yuv");
    let o = ffmpeg(dir, &cpu_args.iter().map(String::as_str).collect::<Vec<_>>(), false);
    assert!(o.status.success(), "overlay ({fmt}) on the CPU failed: {}", String::from_utf8_lossy(&o.stderr));
    (std::fs::read(dir.join("cuda.yuv")).unwrap(), std::fs::read(dir.join("cpu.yuv")).unwrap())
}

#[test]
fn debian_ffmpegs_overlay_cuda_runs_its_own_ptx_and_equals_the_cpu_overlay() {
    let dir = tempfile::tempdir().unwrap();
    for (fmt, x, y) in [("yuv420p", 20, 30), ("nv12", 40, 50), ("yuv420p", 0, 0)] {
        let (cuda, cpu) = both(dir.path(), fmt, "testsrc=size=128x96:rate=5", x, y);
        assert_eq!(cuda.len(), 320 * 240 * 3 / 2 * 5, "{fmt}: 5 frames of 320x240");
        let first = cuda.iter().zip(&cpu).position(|(a, b)| a != b);
        assert!(cuda == cpu, "{fmt} at ({x},{y}): the CUDA filter's frames differ from the CPU filter's, first at byte {first:?}");
        // The overlay changed the frame (the comparison is not of two copies of the input).
        let (plain, _) = both(dir.path(), fmt, "testsrc2=size=128x96:rate=5", x, y);
        assert_ne!(plain, cuda, "{fmt}: overlaying another picture gives another frame");
        let counts: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("counts.json")).unwrap()).unwrap();
        assert_eq!(counts["unsupported"], serde_json::json!({}), "{fmt}: unsupported driver calls: {}", counts["unsupported"]);
        // One launch per plane: three per frame for yuv420p, two for nv12.
        assert!(counts["launches"]["Overlay_Cuda"]["count"].as_u64().unwrap_or(0) >= 10, "{fmt}: {}", counts["launches"]);
        let modules = counts["modules"].as_array().expect("the counters list the modules");
        assert!(!modules.is_empty());
        for m in modules {
            assert_eq!(m["mode"], "ptx", "{m}");
            assert_eq!(m["device_exact"], true, "{m}");
            assert!(m["image"].as_str().unwrap_or("").contains("compute_30"), "clang's sm_30 PTX: {m}");
        }
    }
}
