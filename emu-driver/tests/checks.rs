//! The checking modes of the emulated driver, on small kernels (tests/checks/checks.cu)
//! run by a driver-API client (tests/checks/client.c): each scenario with a clean
//! control.
//!
//! Needs `scripts/build` to have produced target/simtwin/.

mod client_support;

use client_support::{build_per_process, on_emulated_driver, text};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The fatbin (nvcc), host twins (kernels-host) and the client, built once per process.
fn built() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| build_per_process("checks", &[]))
}

fn run(mode: &str, env: &[(&str, &str)]) -> (Output, String, String) {
    let dir = built();
    let mut cmd = Command::new(dir.join("client"));
    cmd.arg(dir.join("checks.fatbin")).arg(mode);
    let o = on_emulated_driver(&mut cmd, &dir.join("kernels")).envs(env.iter().copied()).output().unwrap();
    let (out, err) = text(&o);
    (o, out, err)
}

#[test]
fn an_overrun_faults_on_the_guard_page_and_names_block_thread_and_allocation() {
    let (o, out, err) = run("overrun", &[]);
    assert!(o.status.success(), "{out}\n{err}");
    // As on a device, the launch returns success and the next call reports the error,
    // which stays.
    assert!(out.contains("launch=0\nsync=700\nsync_again=700\n"), "{out}\n{err}");
    // The report: kernel, the first faulting block and thread, the address.
    assert!(err.contains("kernel overrun") && err.contains("block (4,0,0)") && err.contains("illegal address"), "{err}");
    // ... and the allocation it ran out of: the first byte past the 4096-byte buffer.
    assert!(err.contains("nearest allocation: offset 4096 (past its end) of the device allocation of 4096 bytes at 0x"), "{err}");
    // Control: the same kernel writing exactly to the end.
    let (o, out, err) = run("inbounds", &[]);
    assert!(o.status.success() && out.contains("launch=0\nsync=0\nsync_again=0\n"), "{out}\n{err}");
}

#[test]
fn work_queued_behind_a_fault_does_not_run_in_either_mode() {
    // Eager mode refuses the later calls with the sticky error; deferred mode accepts
    // them (as a device does: the fault is not known yet) and then does not run them.
    for (env, queued) in [(None, "refused"), (Some(("EMU_CUDA_ASYNC", "deferred")), "accepted")] {
        let (o, out, err) = run("fault-then-work", &env.into_iter().collect::<Vec<_>>());
        assert!(o.status.success(), "{out}\n{err}");
        assert!(out.contains(&format!("fault=0\nsync=700\nqueued={queued}\npinned=-1,-1\n")), "{env:?}: {out}\n{err}");
        assert!(err.contains("kernel read_at") && err.contains("illegal address"), "{err}");
    }
}

#[test]
fn reading_before_synchronising_sees_stale_data_in_deferred_mode_only() {
    let counts = built().join(format!("early-read-{}.json", std::process::id()));
    let c = counts.display().to_string();
    let (o, out, err) = run("early-read", &[("EMU_CUDA_ASYNC", "deferred"), ("EMU_CUDA_COUNTS", &c), ("EMU_CUDA_LOG", "info")]);
    assert!(o.status.success(), "{out}\n{err}");
    // Before the synchronisation the pinned buffer still holds zeros; the query answers
    // CUDA_ERROR_NOT_READY (600) and runs the work; after it, 2*i (the pageable source was
    // staged at the call: src[5] changed later does not show).
    assert!(out.contains("launch=0\ncopy=0\nbefore=0,0\nquery=600\nsync=0\nafter=10,2046\n"), "{out}\n{err}");
    // The report names the work that ran late and what forced it, and the work that never ran.
    assert!(err.contains("cuStreamQuery runs 3 item(s)") && err.contains("launch of twice (cuLaunchKernel, call #"), "{err}");
    let never = simtwin_abi::counters::Counters::read(&counts).unwrap().never_ran;
    assert_eq!(never.len(), 1, "{never:?}");
    assert!(never[0].starts_with("launch of twice (cuLaunchKernel"), "{never:?}");
    // Control: by default work runs when it is submitted.
    let (o, out, err) = run("early-read", &[]);
    assert!(o.status.success() && out.contains("before=10,2046\nquery=0\nsync=0\nafter=10,2046\n"), "{out}\n{err}");
}
