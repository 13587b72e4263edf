//! Cooperative launches through the driver, as a program meets them (tests/coop/client.c
//! dlopens the emulated libcuda.so.1 and runs nvcc's PTX of tests/coop/coop.cu in PTX
//! mode): `cooperative_groups::this_grid().sync()` over 1-D and 3-D grids with several
//! syncs, launched by cuLaunchCooperativeKernel and by cuLaunchKernelEx with
//! CU_LAUNCH_ATTRIBUTE_COOPERATIVE, on one worker and on two, every element checked against
//! what the client computes; the same kernel launched by cuLaunchKernel traps (no grid
//! workspace: CUDA_ERROR_LAUNCH_FAILED at the next call); a grid over occupancy x SMs is
//! refused with CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE; the environment registers a
//! kernel reads (the workspace in %envreg1:%envreg2, zeroed, only in a cooperative launch);
//! a block that leaves before the sync ends the launch with the watchdog's
//! CUDA_ERROR_LAUNCH_TIMEOUT, not a hang; and libcudadevrt.a given to cuLink* as a
//! library: unused when the PTX leaves nothing undefined, standing in for the
//! cooperative-groups entry points a kernel calls (which then synchronise the grid), and
//! failing the link naming any other symbol only its SASS could define. Twin mode: the
//! same grid sync through kernels-host's cooperative_groups `grid_group` (tests/coop/twin.cu
//! bound from nvcc's fatbin), and its trap outside a cooperative launch.

mod client_support;
use client_support::{cc_client, fatbin, host_twins, root, run_ok, simtwin, text};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

struct Built {
    dir: PathBuf,
    /// The toolkit's libcudadevrt.a (beside nvcc's bin/, in lib/ or lib64/).
    devrt: PathBuf,
}

/// target/coop/run-PID with coop.ptx, devrt.ptx, other.ptx, twin.fatbin and its host
/// twins (kernels/), and the client.
fn built() -> &'static Built {
    static B: OnceLock<Built> = OnceLock::new();
    B.get_or_init(|| {
        let dir = root().join("target/coop").join(format!("run-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = root().join("emu-driver/tests/coop");
        let nvcc = Command::new(root().join("scripts/nvcc-path")).output().expect("scripts/nvcc-path");
        let nvcc = PathBuf::from(String::from_utf8(nvcc.stdout).unwrap().trim());
        run_ok(
            Command::new(&nvcc).args(["-ptx", "-arch=compute_90", "-o"]).arg(dir.join("coop.ptx")).arg(src.join("coop.cu")),
            "nvcc -ptx coop.cu",
        );
        for name in ["devrt", "other"] {
            run_ok(
                Command::new(&nvcc)
                    .args(["-rdc=true", "-ptx", "-arch=compute_90", "-o"])
                    .arg(dir.join(format!("{name}.ptx")))
                    .arg(src.join(format!("{name}.cu"))),
                "nvcc -rdc -ptx",
            );
        }
        cc_client(&src.join("client.c"), &dir.join("client"), &[]);
        fatbin(&src.join("twin.cu"), &dir.join("twin.fatbin"));
        host_twins(&src.join("twin.cu"), &dir.join("kernels"), &[]);
        let top = nvcc.parent().and_then(Path::parent).expect("nvcc in a bin/ directory");
        let devrt = ["lib", "lib64", "targets/x86_64-linux/lib"]
            .iter()
            .map(|l| top.join(l).join("libcudadevrt.a"))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("no libcudadevrt.a beside {}", nvcc.display()));
        Built { dir, devrt }
    })
}

/// Runs the client on `ptx` (a file of the run directory) with `args` and `env`; it must
/// run (exit 0). Its `key=value` lines, and its stderr.
fn run(ptx: &str, args: &[&str], env: &[(&str, &str)]) -> (HashMap<String, String>, String) {
    let b = built();
    let mut cmd = Command::new(b.dir.join("client"));
    cmd.arg(b.dir.join(ptx))
        .args(args)
        .env("LD_LIBRARY_PATH", simtwin("lib"))
        .env("SIMTWIN_CACHE_DIR", b.dir.join("cache"))
        .env_remove("EMU_CUDA_KERNELS")
        .env_remove("EMU_CUDA_EXEC")
        .env_remove("EMU_CUDA_WORKERS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "client {args:?} failed:\n{out}\n{err}");
    let kv = out.lines().filter_map(|l| l.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect();
    (kv, err)
}

fn get<'a>(kv: &'a HashMap<String, String>, k: &str, err: &str) -> &'a str {
    kv.get(k).map(String::as_str).unwrap_or_else(|| panic!("no `{k}=` line: {kv:?}\n{err}"))
}

#[test]
fn grid_sync_gives_every_element_over_1d_and_3d_grids_on_one_and_two_workers() {
    // (how, grid x, y, z, block x, y, z, rounds): 2 syncs per round.
    let cases: &[(&str, [&str; 7])] = &[
        ("sync", ["33", "2", "2", "32", "2", "2", "3"]),
        ("sync", ["132", "1", "1", "128", "1", "1", "4"]),
        ("sync", ["5", "3", "2", "16", "4", "1", "5"]),
        ("ex", ["12", "1", "3", "64", "1", "1", "2"]),
    ];
    for workers in ["1", "2"] {
        for (how, dims) in cases {
            let args: Vec<&str> = std::iter::once(*how).chain(dims.iter().copied()).collect();
            let (kv, err) = run("coop.ptx", &args, &[("EMU_CUDA_WORKERS", workers), ("EMU_CUDA_WATCHDOG", "60")]);
            assert_eq!(get(&kv, "launch", &err), "0", "{args:?} workers={workers}: {err}");
            assert_eq!(get(&kv, "sync", &err), "ok", "{args:?} workers={workers}: {err}");
        }
    }
}

/// A cooperative grid sized as programs size it, occupancy x SMs (2112 blocks of 128
/// threads on the H200's profile: 270 336 threads suspended at the grid barrier at once):
/// more stacks than a process may map one by one (`vm.max_map_count`), so this runs only
/// because stacks are carved from chunk mappings (exec/stacks.rs), and more spinning
/// blocks than the 1024 helper threads the executor allowed before.
#[test]
fn a_grid_of_occupancy_times_sms_blocks_completes() {
    let (kv, err) = run("coop.ptx", &["limits"], &[]);
    let sms: u32 = get(&kv, "sms", &err).parse().unwrap();
    let occ: u32 = get(&kv, "occupancy", &err).parse().unwrap();
    let grid = (sms * occ).to_string();
    assert!(sms * occ * 128 > 65_530 / 2, "the grid needs more stacks than one mapping pair each allows: {sms} x {occ}");
    // Guard pages that do not split a mapping need Linux 6.13 (MADV_GUARD_INSTALL); before
    // it such a grid ends with the watchdog's 702, as docs/driver.md says.
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let mut v = release.trim().split(|c: char| !c.is_ascii_digit()).map(|x| x.parse::<u32>().unwrap_or(0));
    let light_guards = (v.next().unwrap_or(0), v.next().unwrap_or(0)) >= (6, 13);
    let watchdog = if light_guards { "120" } else { "5" };
    let (kv, err) = run("coop.ptx", &["sync", &grid, "1", "1", "128", "1", "1", "2"], &[("EMU_CUDA_WATCHDOG", watchdog)]);
    assert_eq!(get(&kv, "launch", &err), "0", "{err}");
    let want = if light_guards { "ok" } else { "702" };
    assert_eq!(get(&kv, "sync", &err), want, "{grid} blocks, Linux {}: {err}", release.trim());
}

/// A grid sync in a plain launch: in a context with no grid workspace yet it traps
/// (nvcc's code checks the pointer): CUDA_ERROR_LAUNCH_FAILED (719) at the next call, as
/// on an H100; after a cooperative launch made the workspace, a resident grid's sync
/// completes, as it does there (reports/reference/h200/coop-graphs/).
#[test]
fn grid_sync_in_a_plain_launch_traps_until_a_cooperative_launch_made_the_workspace() {
    let (kv, err) = run("coop.ptx", &["plain", "4", "1", "1", "64", "1", "1", "2"], &[]);
    assert_eq!(get(&kv, "launch", &err), "0");
    assert_eq!(get(&kv, "sync", &err), "719", "{err}");
    assert!(err.contains("trap"), "the report names the trap: {err}");
    let (kv, err) = run("coop.ptx", &["after", "4", "1", "1", "64", "1", "1", "2"], &[]);
    assert_eq!(get(&kv, "first", &err), "0", "{err}");
    assert_eq!(get(&kv, "launch", &err), "0");
    assert_eq!(get(&kv, "sync", &err), "ok", "{err}");
}

#[test]
fn a_grid_over_what_the_device_holds_at_once_is_refused_with_720() {
    let (kv, err) = run("coop.ptx", &["limits"], &[]);
    assert_eq!(get(&kv, "attr", &err), "1", "CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH");
    let sms: u32 = get(&kv, "sms", &err).parse().unwrap();
    let occ: u32 = get(&kv, "occupancy", &err).parse().unwrap();
    assert!(sms > 0 && occ > 0, "{kv:?}");
    assert_eq!(get(&kv, "too_large", &err), "720", "{err}");
    assert_eq!(get(&kv, "too_large_2d", &err), "720", "{err}");
    assert!(err.contains(&format!("at most {} of 128 threads", sms * occ)), "{err}");
}

/// As measured on an H100 (reports/reference/h200/coop-graphs/): the context's first
/// cooperative launch makes its grid workspace, whose first word is 16 and whose barrier
/// word is 0, and every later launch, cooperative or not, reads the same address;
/// %envreg0 reads a driver value simtwin does not model (0 here).
#[test]
fn the_workspace_made_by_a_cooperative_launch_reaches_later_plain_launches() {
    let (kv, err) = run("coop.ptx", &["env"], &[]);
    let words = |k: &str| -> Vec<u32> { get(&kv, k, &err).split(' ').map(|w| u32::from_str_radix(w, 16).unwrap()).collect() };
    let (coop, plain) = (words("coop"), words("plain"));
    assert_eq!((coop[0], coop[3]), (0, 0), "%envreg0, %envreg3");
    let ws = (u64::from(coop[1]) << 32) | u64::from(coop[2]);
    assert!(ws != 0 && ws % 256 == 0, "workspace {ws:#x}");
    assert_eq!(&coop[4..], &[16, 0], "the workspace's size word, then the barrier counter at 0");
    assert_eq!(plain, coop, "the plain launch after it reads the same registers and words");
}

#[test]
fn a_block_that_leaves_before_the_grid_sync_ends_the_launch_with_702() {
    let (kv, err) = run("coop.ptx", &["deserter"], &[("EMU_CUDA_WATCHDOG", "2")]);
    assert_eq!(get(&kv, "launch", &err), "0");
    assert_eq!(get(&kv, "sync", &err), "702", "{err}");
    assert!(err.contains("watchdog"), "{err}");
}

#[test]
fn libcudadevrt_links_as_a_static_library() {
    let devrt = built().devrt.to_str().unwrap().to_string();
    // Nothing undefined: accepted and unused.
    let (kv, err) = run("coop.ptx", &["link", &devrt], &[("EMU_CUDA_LOG", "info")]);
    assert_eq!(get(&kv, "add_library", &err), "0");
    assert_eq!(get(&kv, "complete", &err), "0", "{err}");
    assert!(err.contains("accepted and unused"), "{err}");
    // The cooperative-groups entry points: from simtwin's PTX, and they synchronise the grid.
    let (kv, err) = run("devrt.ptx", &["link", &devrt, "run"], &[("EMU_CUDA_LOG", "info")]);
    assert_eq!(get(&kv, "complete", &err), "0", "{err}");
    assert!(err.contains("cudaCGGetIntrinsicHandle, cudaCGSynchronize from simtwin's PTX"), "{err}");
    assert_eq!(get(&kv, "status", &err), "0", "cudaCGSynchronize's answer");
    assert_eq!(get(&kv, "rotate", &err), "ok", "{err}");
    // Anything else only the archive's SASS could define: the link fails naming it.
    let (kv, err) = run("other.ptx", &["link", &devrt], &[]);
    assert_eq!(get(&kv, "complete", &err), "200", "{err}");
    assert!(err.contains("undefined reference to `__cudaCDP2GetDevice`") && err.contains("libcudadevrt.a"), "{err}");
    // Not an archive: refused when added.
    let bogus = built().dir.join("not-an-archive.a");
    std::fs::write(&bogus, b"hello").unwrap();
    let (kv, err) = run("coop.ptx", &["link", bogus.to_str().unwrap()], &[]);
    assert_eq!(get(&kv, "add_library", &err), "200", "{err}");
}

#[test]
fn host_twins_sync_the_grid_through_kernels_hosts_grid_group() {
    let kernels = built().dir.join("kernels");
    let env = [("EMU_CUDA_KERNELS", kernels.to_str().unwrap()), ("EMU_CUDA_EXEC", "twin"), ("EMU_CUDA_WATCHDOG", "60")];
    for dims in [["33", "2", "2", "32", "2", "2", "3"], ["132", "1", "1", "128", "1", "1", "4"]] {
        let args: Vec<&str> = std::iter::once("sync").chain(dims.iter().copied()).collect();
        let (kv, err) = run("twin.fatbin", &args, &env);
        assert_eq!(get(&kv, "launch", &err), "0", "{args:?}: {err}");
        assert_eq!(get(&kv, "sync", &err), "ok", "{args:?}: {err}");
    }
    let (kv, err) = run("twin.fatbin", &["plain", "4", "1", "1", "64", "1", "1", "2"], &env);
    assert_eq!(get(&kv, "sync", &err), "719", "{err}");
    assert!(err.contains("__trap()") && err.contains("twin.cu"), "{err}");
    let (kv, err) = run("twin.fatbin", &["after", "4", "1", "1", "64", "1", "1", "2"], &env);
    assert_eq!(get(&kv, "sync", &err), "ok", "{err}");
}
