//! The shared-memory checks (`EMU_CUDA_CHECKS=race,poison`) on small kernels
//! (tests/shared/shared.cu) run through the emulated libcuda.so.1 by a driver-API client
//! (tests/shared/client.c): each race class with its clean control, the intra-warp
//! rule, atomics, what a report names (both threads, both call sites as exact file:line,
//! the variable), error mode, poisoning, and that the default path loads the plain
//! library.
//!
//! Needs `scripts/build` to have produced target/simtwin/.

mod client_support;

use client_support::{cc_client, fatbin, fatbin_with_ptx, host_twins, on_emulated_driver, root, simtwin, text, CLIENT_H};
use simtwin_abi::counters::{Counters, Hazard};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

fn source() -> PathBuf {
    root().join("emu-driver/tests/shared/shared.cu")
}

/// The fatbin (nvcc), host twins with their checking variants (`kernels/`) and without
/// (`plain/`), and the client: built once for the sources and kernels-host in use, and
/// shared by the test processes (built aside, then renamed into place).
fn built() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let kh = simtwin("bin/kernels-host");
        let client = root().join("emu-driver/tests/shared/client.c");
        let mut key = std::collections::hash_map::DefaultHasher::new();
        for p in [
            source(),
            client.clone(),
            root().join(CLIENT_H),
            // How the images are built (fatbin, fatbin_with_ptx).
            root().join("emu-driver/tests/client_support/mod.rs"),
            kh.clone(),
            simtwin("include/simtwin/atomics.h"),
            simtwin("runtime/simtwin_checks.cpp"),
        ] {
            std::hash::Hash::hash(&std::fs::read(&p).unwrap_or_default(), &mut key);
        }
        let out = root().join("target/shared-checks").join(format!("{:016x}", std::hash::Hasher::finish(&key)));
        if out.join("client").exists() {
            return out;
        }
        let tmp = out.with_extension(format!("tmp{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        fatbin(&source(), &tmp.join("shared.fatbin"));
        fatbin_with_ptx(&source(), &tmp.join("shared-ptx.fatbin"));
        host_twins(&source(), &tmp.join("kernels"), &["--checks"]);
        host_twins(&source(), &tmp.join("plain"), &["--no-nvcc-check"]);
        cc_client(&client, &tmp.join("client"), &[]);
        if std::fs::rename(&tmp, &out).is_err() {
            // Another test process finished first: use its build.
            let _ = std::fs::remove_dir_all(&tmp);
        }
        assert!(out.join("client").exists(), "{} was not built", out.display());
        out
    })
}

/// One run of the client: its stdout, stderr and the hazards of the counters file.
struct Run {
    ok: bool,
    out: String,
    err: String,
    hazards: Vec<Hazard>,
}

impl Run {
    fn races(&self) -> Vec<&Hazard> {
        self.hazards.iter().filter(|h| h.kind.starts_with("shared-race-")).collect()
    }

    fn words(&self) -> Vec<u32> {
        let line =
            self.out.lines().find_map(|l| l.strip_prefix("out=")).unwrap_or_else(|| panic!("no out= line:\n{}\n{}", self.out, self.err));
        line.split(',').map(|w| u32::from_str_radix(w, 16).unwrap()).collect()
    }
}

fn run_in(kernels: &str, kernel: &str, mode: u32, threads: u32, dyn_bytes: u32, env: &[(&str, &str)]) -> Run {
    run_image("shared.fatbin", kernels, kernel, mode, threads, dyn_bytes, env)
}

/// As [`run_in`], the client loading `image` (of the build directory).
fn run_image(image: &str, kernels: &str, kernel: &str, mode: u32, threads: u32, dyn_bytes: u32, env: &[(&str, &str)]) -> Run {
    let dir = built();
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let counts =
        dir.join(format!("counts-{kernel}-{mode}-{}-{}.json", std::process::id(), N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
    let mut cmd = Command::new(dir.join("client"));
    cmd.arg(dir.join(image)).args([kernel, &mode.to_string(), &threads.to_string(), &dyn_bytes.to_string()]);
    let o = on_emulated_driver(&mut cmd, &dir.join(kernels)).env("EMU_CUDA_COUNTS", &counts).envs(env.iter().copied()).output().unwrap();
    let hazards = Counters::read(&counts).map(|c| c.hazards).unwrap_or_default();
    let (out, err) = text(&o);
    Run { ok: o.status.success(), out, err, hazards }
}

fn race(kernel: &str, mode: u32, threads: u32) -> Run {
    run_in("kernels", kernel, mode, threads, 4 * threads, &[("EMU_CUDA_CHECKS", "race")])
}

/// `shared.cu:LINE` of the line marked `// @name`.
fn site(name: &str) -> String {
    let text = std::fs::read_to_string(source()).unwrap();
    let marker = format!("// @{name}");
    let line = text.lines().position(|l| l.trim_end().ends_with(&marker)).unwrap_or_else(|| panic!("no {marker} in shared.cu"));
    format!("{}:{}", source().display(), line + 1)
}

#[track_caller]
fn assert_clean(r: &Run) {
    assert!(r.ok && r.out.contains("sync=0\n"), "{}\n{}", r.out, r.err);
    assert!(r.races().is_empty(), "a race was reported for the control: {:?}", r.races());
    assert!(!r.err.contains("shared-race"), "{}", r.err);
}

#[test]
fn read_after_write_across_a_missing_barrier_names_both_threads_both_sites_and_the_variable() {
    let r = race("raw_race", 0, 64);
    assert!(r.ok && r.out.contains("checks_library_mapped=1\n") && r.out.contains("sync=0\n"), "{}\n{}", r.out, r.err);
    let races = r.races();
    assert_eq!(races.len(), 1, "{races:#?}");
    let h = races[0];
    assert_eq!(h.kind, "shared-race-raw");
    assert_eq!(h.kernel, "raw_race");
    assert_eq!(h.block, [0, 0, 0]);
    // The first race the run makes: thread 1 reads what thread 0 wrote; one report for
    // the site pair, counted 63 times (threads 1..63).
    assert_eq!(h.threads, vec![0, 1]);
    assert_eq!(h.occurrences, 63);
    let (w, rd) = (site("raw-write"), site("raw-read"));
    assert!(h.message.contains(&format!("thread (0,0,0) [#0, warp 0 lane 0] wrote it at {w}")), "{}", h.message);
    assert!(h.message.contains(&format!("thread (1,0,0) [#1, warp 0 lane 1] read it at {rd}")), "{}", h.message);
    assert!(h.operation == format!("shared-memory read at {rd} after write at {w}"), "{}", h.operation);
    // The variable, by name (static __shared__ s of raw_race), and the byte offset.
    assert!(h.message.contains("read-after-write race on __shared__ `s` (`raw_race::s`) (4 bytes at 0x"), "{}", h.message);
    // It reaches stderr through the driver's log too.
    assert!(r.err.contains("simtwin hazard [shared-race-raw] kernel raw_race block (0,0,0)"), "{}", r.err);
    assert_clean(&race("raw_race", 1, 64));
}

#[test]
fn write_after_read_and_write_after_write_are_reported_with_clean_controls() {
    let r = race("war_race", 0, 64);
    let races = r.races();
    // After the barrier the thread that completed it (63) goes on first, then 0, 1, ...:
    // thread 0 read s[1] and thread 1 then wrote it (write-after-read); thread 63 wrote
    // s[63] before thread 62 read it (read-after-write). Both orders are races.
    let got: Vec<(&str, Vec<u32>)> = races.iter().map(|h| (h.kind.as_str(), h.threads.clone())).collect();
    assert_eq!(got, vec![("shared-race-war", vec![0, 1]), ("shared-race-raw", vec![63, 62])], "{races:#?}");
    assert!(races[0].message.contains(&format!("read it at {}", site("war-read"))), "{}", races[0].message);
    assert!(races[0].message.contains(&format!("wrote it at {}", site("war-write"))), "{}", races[0].message);
    assert!(races[0].message.contains("`s` + 4"), "{}", races[0].message);
    assert_clean(&race("war_race", 1, 64));

    let r = race("waw_race", 0, 64);
    let races = r.races();
    assert_eq!(races.len(), 1, "{races:#?}");
    assert_eq!((races[0].kind.as_str(), races[0].threads.clone(), races[0].occurrences), ("shared-race-waw", vec![0, 1], 63));
    let w = site("waw-write");
    assert_eq!(races[0].operation, format!("shared-memory write at {w} after write at {w}"));
    assert!(races[0].message.contains("`flag` (`waw_race::flag`)"), "{}", races[0].message);
    assert_clean(&race("waw_race", 1, 64));
}

#[test]
fn lanes_of_one_warp_race_unless_a_syncwarp_of_both_separates_them() {
    // Nothing between write and read: lanes race (as on sm_70+).
    let none = race("warp_exchange", 0, 32);
    assert!(none.races().iter().any(|h| h.kind == "shared-race-raw"), "{:#?}", none.races());
    // A shuffle does not order memory.
    let shfl = race("warp_exchange", 1, 32);
    let raw: Vec<_> = shfl.races().into_iter().filter(|h| h.kind == "shared-race-raw").collect();
    assert_eq!(raw.len(), 1, "{:#?}", shfl.races());
    assert!(raw[0].threads.iter().all(|&t| t < 32) && raw[0].threads[0] ^ 1 == raw[0].threads[1], "{:?}", raw[0].threads);
    assert!(raw[0].message.contains("lanes of one warp"), "{}", raw[0].message);
    assert!(
        raw[0].message.contains(&format!("at {}", site("warp-read"))) && raw[0].message.contains(&format!("at {}", site("warp-write"))),
        "{}",
        raw[0].message
    );
    // __syncwarp orders the lanes that took part.
    assert_clean(&race("warp_exchange", 2, 32));
    let good = race("warp_exchange", 2, 32);
    assert_eq!(good.words()[0], 101, "lane 0 reads lane 1's value");
    // ... and only those: lanes of another warp still race.
    let other = race("warp_exchange", 3, 64);
    assert!(!other.races().is_empty());
    for h in other.races() {
        assert_ne!(h.threads[0] / 32, h.threads[1] / 32, "{h:?}");
        assert!(h.message.contains("with no __syncthreads between them"), "{}", h.message);
    }
}

#[test]
fn atomics_do_not_race_with_atomics_but_a_plain_read_does() {
    let ok = race("atomic_count", 1, 64);
    assert_clean(&ok);
    assert_eq!(ok.words()[0], 64);
    let r = race("atomic_count", 0, 64);
    let races = r.races();
    assert_eq!(races.len(), 1, "{races:#?}");
    // Thread 0 read the counter (plain), thread 1 then added to it (atomically).
    assert_eq!((races[0].kind.as_str(), races[0].threads.clone()), ("shared-race-war", vec![0, 1]));
    assert!(races[0].message.contains(&format!("atomically wrote it at {}", site("atomic-add"))), "{}", races[0].message);
    assert!(races[0].message.contains(&format!("read it at {}", site("atomic-read"))), "{}", races[0].message);
}

#[test]
fn dynamic_shared_memory_is_checked_and_named_by_offset() {
    let r = race("dyn_race", 0, 64);
    let races = r.races();
    assert_eq!(races.len(), 1, "{races:#?}");
    assert_eq!((races[0].kind.as_str(), races[0].threads.clone()), ("shared-race-raw", vec![0, 1]));
    assert!(races[0].message.contains("race on dynamic shared memory (extern __shared__) + 0 (4 bytes"), "{}", races[0].message);
    assert!(races[0].message.contains(&site("dyn-read")) && races[0].message.contains(&site("dyn-write")), "{}", races[0].message);
    assert_clean(&race("dyn_race", 1, 64));
}

#[test]
fn in_error_mode_a_race_fails_the_launch() {
    let r = run_in("kernels", "raw_race", 0, 64, 0, &[("EMU_CUDA_CHECKS", "race"), ("EMU_CUDA_HAZARDS", "error")]);
    // CUDA_ERROR_LAUNCH_FAILED (719) at the next call, as every hazard in error mode.
    assert!(r.out.contains("launch=0\nsync=719\n"), "{}\n{}", r.out, r.err);
    assert!(r.err.contains("shared-race-raw") && r.err.contains("EMU_CUDA_HAZARDS=error"), "{}", r.err);
    let ok = run_in("kernels", "raw_race", 1, 64, 0, &[("EMU_CUDA_CHECKS", "race"), ("EMU_CUDA_HAZARDS", "error")]);
    assert_clean(&ok);
}

#[test]
fn the_default_path_loads_the_plain_library_and_reports_no_race() {
    let r = run_in("kernels", "raw_race", 0, 64, 0, &[]);
    assert!(r.ok && r.out.contains("checks_library_mapped=0\n") && r.out.contains("sync=0\n"), "{}\n{}", r.out, r.err);
    assert!(r.hazards.is_empty(), "{:?}", r.hazards);
    // Poisoning alone needs no checking library either.
    let p = run_in("plain", "raw_race", 0, 64, 256, &[("EMU_CUDA_CHECKS", "poison")]);
    assert!(p.ok && p.out.contains("checks_library_mapped=0\n"), "{}\n{}", p.out, p.err);
}

#[test]
fn race_checks_need_a_checking_library_and_say_how_to_build_one() {
    let r = run_in("plain", "raw_race", 0, 64, 0, &[("EMU_CUDA_CHECKS", "race")]);
    assert!(!r.ok && r.out.contains("load=209\n"), "{}\n{}", r.out, r.err); // CUDA_ERROR_NO_BINARY_FOR_GPU
    assert!(
        r.err.contains("EMU_CUDA_CHECKS=race needs the checking variant") && r.err.contains("kernels-host build --checks"),
        "{}",
        r.err
    );
    let bad = run_in("kernels", "raw_race", 0, 64, 0, &[("EMU_CUDA_CHECKS", "races")]);
    assert!(!bad.ok && bad.out.contains("setup=failed"), "{}\n{}", bad.out, bad.err);
    assert!(
        bad.err.contains("EMU_CUDA_CHECKS=races: expected a comma-separated list of: pointers, race, poison (unknown check \"races\")"),
        "{}",
        bad.err
    );
}

#[test]
fn poison_fills_shared_memory_the_block_did_not_write() {
    // 0xFF bytes: the float reads as NaN (0xffffffff), the int as -1.
    let p = run_in("plain", "read_unwritten", 0, 32, 64, &[("EMU_CUDA_CHECKS", "poison")]);
    assert!(p.ok, "{}\n{}", p.out, p.err);
    let w = p.words();
    assert_eq!(&w[..12], &[0xffff_ffff; 12], "{w:x?}");
    assert!(f32::from_bits(w[0]).is_nan());
    // Without poisoning a fresh process reads zeros (nothing wrote there yet).
    let z = run_in("plain", "read_unwritten", 0, 32, 64, &[]);
    assert_eq!(&z.words()[..12], &[0; 12], "{}", z.out);
    // The checking library with both checks: poisoned too, and reads alone never race.
    let both = run_in("kernels", "read_unwritten", 0, 32, 64, &[("EMU_CUDA_CHECKS", "race,poison")]);
    assert_eq!(&both.words()[..12], &[0xffff_ffff; 12], "{}", both.out);
    assert!(both.races().is_empty(), "{:?}", both.races());
}

#[test]
fn poison_in_ptx_mode_fills_the_window_and_leaves_the_runners_state_alone() {
    // PTX mode: static and dynamic shared memory are one window the executor owns, and
    // the translated library's thread-locals are its loop runners' own state (frames,
    // run queue). Poisoning once filled that thread-local block too, and every kernel
    // with a barrier on the loop path then crashed (found by Rodinia's pathfinder).
    let cache = built().join(format!("ptx-cache-{}", std::process::id()));
    for loops in ["auto", "off"] {
        let env = |checks: &'static str| {
            [
                ("EMU_CUDA_EXEC", "ptx"),
                ("EMU_CUDA_THREAD_LOOPS", loops),
                ("SIMTWIN_CACHE_DIR", cache.to_str().unwrap()),
                ("EMU_CUDA_CHECKS", checks),
            ]
        };
        let p = run_image("shared-ptx.fatbin", "plain", "read_unwritten", 0, 64, 64, &env("poison"));
        assert!(p.ok && p.out.contains("launch=0\n"), "{loops}: {}\n{}", p.out, p.err);
        assert_eq!(&p.words()[..12], &[0xffff_ffff; 12], "{loops}: {}", p.out);
        // A block that writes before it reads sees its own values, as without the check.
        let w = run_image("shared-ptx.fatbin", "plain", "read_unwritten", 1, 64, 64, &env("poison"));
        let plain = run_image("shared-ptx.fatbin", "plain", "read_unwritten", 1, 64, 64, &env("off"));
        assert!(w.ok && w.out.contains("launch=0\n"), "{loops}: {}\n{}", w.out, w.err);
        assert_eq!(w.words(), plain.words(), "{loops}");
        assert_eq!(&w.words()[..4], &[1.0f32.to_bits(); 4], "{loops}: {}", w.out);
    }
    let _ = std::fs::remove_dir_all(&cache);
}
