//! Pointer confusion (EMU_CUDA_CHECKS=pointers): device memory in an arena host code
//! cannot touch, so a host dereference of a device pointer dies of SIGSEGV with a report
//! (as it does with a discrete GPU), while kernels, copies and memsets work as without
//! the mode; and zero-copy kernel arguments (pinned, managed) are counted. Small kernels
//! (tests/pointers/pointers.cu) run by a driver-API client (tests/pointers/client.c).
//!
//! Needs `scripts/build` to have produced target/simtwin/.

mod client_support;

use client_support::{build_per_process, on_emulated_driver, text};
use simtwin_abi::counters::{Counters, State};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The fatbin (nvcc), host twins (kernels-host) and the client, built once per process;
/// the client with -rdynamic so that the driver's report can name `peek`/`poke`.
fn built() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| build_per_process("pointers", &["-rdynamic"]))
}

struct Run {
    o: Output,
    out: String,
    err: String,
    counts: Option<Counters>,
}

/// Runs the client in `mode`, with EMU_CUDA_CHECKS=pointers when `checked`, with a
/// counters file, and without core dumps (some runs are meant to die of SIGSEGV).
fn run(mode: &str, checked: bool, env: &[(&str, &str)]) -> Run {
    let dir = built();
    let counts = dir.join(format!("{mode}-{checked}.json"));
    let _ = std::fs::remove_file(&counts);
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg("ulimit -c 0; exec \"$0\" \"$@\"").arg(dir.join("client")).arg(dir.join("pointers.fatbin")).arg(mode);
    on_emulated_driver(&mut cmd, &dir.join("kernels")).env("EMU_CUDA_COUNTS", &counts).env_remove("EMU_CUDA_CHECKS");
    if checked {
        cmd.env("EMU_CUDA_CHECKS", "pointers");
    }
    let o = cmd.envs(env.iter().copied()).output().unwrap();
    let (out, err) = text(&o);
    let counts = counts.exists().then(|| Counters::read(&counts).unwrap());
    Run { o, out, err, counts }
}

const CLEAN: &str = "alloc=0,0
htod=0
launch=0,0
dtod=0
memset=0
dtoh=0
b=2,5,3071 sum=1573376
dtoh=0
a=0x1010101,50
pitch=0
memset2d=0
launch=0
dtoh=0
m=5,8,12
async=0
host=0
memset=0
launch=0
dtoh=0
sync=0
c=8,8
free=0,0,0,0
stale=1
sync=0
";

#[test]
fn device_memory_works_the_same_in_the_arena() {
    // Copies (HtoD, DtoD, DtoH, async into pinned), memsets (1D, 2D, async) and kernels
    // on device, pitched and stream-ordered memory: identical results with and without
    // the mode, and the expected ones (3i + 2; the first 16 ints set to 0x01010101; ...).
    let plain = run("clean", false, &[]);
    assert!(plain.o.status.success(), "{}\n{}", plain.out, plain.err);
    assert_eq!(plain.out, CLEAN, "{}", plain.err);
    let checked = run("clean", true, &[]);
    assert!(checked.o.status.success(), "{}\n{}", checked.out, checked.err);
    assert_eq!(checked.out, CLEAN, "{}", checked.err);
    // Nothing reported: a clean program does not trip the mode.
    let c = checked.counts.expect("counters file");
    assert_eq!(c.state, State::Exit);
    assert!(c.hazards.is_empty(), "{:?}", c.hazards);
    assert_eq!(c.launches["add_one"].count, 3);
    // Blocks on several worker threads, and work deferred until forced: the same.
    for env in [("EMU_CUDA_WORKERS", "4"), ("EMU_CUDA_ASYNC", "deferred")] {
        let r = run("clean", true, &[env]);
        assert!(r.o.status.success(), "{env:?}: {}\n{}", r.out, r.err);
        assert_eq!(r.out, CLEAN, "{env:?}: {}", r.err);
    }
}

#[test]
fn a_host_read_of_a_device_pointer_dies_of_sigsegv_with_a_report() {
    // Without the mode the emulated driver's device memory is host memory: the read
    // succeeds (the value after the kernel added one), where a discrete GPU would fault.
    let plain = run("host-read", false, &[]);
    assert!(plain.o.status.success(), "{}\n{}", plain.out, plain.err);
    assert!(plain.out.ends_with("launch=0\nsync=0\nread=0x5a5a0006\n"), "{}", plain.out);
    // With it: killed by SIGSEGV before printing, after a report naming the access, the
    // allocation and offset (int 5 = byte 20), and the code (the client's `peek`).
    let r = run("host-read", true, &[]);
    assert_eq!(r.o.status.signal(), Some(libc::SIGSEGV), "{}\n{}", r.out, r.err);
    assert!(r.out.ends_with("launch=0\nsync=0\n"), "{}", r.out);
    assert!(r.err.contains("host code dereferenced a device pointer; on a discrete GPU this faults too: host read of 0x"), "{}", r.err);
    assert!(r.err.contains("; offset 20 (inside it) of the device allocation of 4096 bytes at 0x"), "{}", r.err);
    assert!(r.err.contains("(peek+0x") && r.err.contains("/client)"), "{}", r.err);
    // The counters survive: written on the signal, with the report as a hazard.
    let c = r.counts.expect("counters file written on SIGSEGV");
    assert_eq!(c.state, State::Signal("SIGSEGV".into()));
    assert_eq!(c.launches["add_one"].count, 1);
    assert_eq!(c.hazards.len(), 1, "{:?}", c.hazards);
    assert_eq!(c.hazards[0].kind, "host-device-pointer");
    assert!(c.hazards[0].message.contains("offset 20 (inside it) of the device allocation of 4096 bytes"), "{:?}", c.hazards[0]);
}

#[test]
fn host_writes_and_freed_pointers_fault_too() {
    let plain = run("host-write", false, &[]);
    assert!(plain.o.status.success() && plain.out.ends_with("wrote=42\n"), "{}\n{}", plain.out, plain.err);
    let r = run("host-write", true, &[]);
    assert_eq!(r.o.status.signal(), Some(libc::SIGSEGV), "{}\n{}", r.out, r.err);
    assert!(
        r.err.contains("host write to 0x") && r.err.contains("offset 28 (inside it) of the device allocation of 4096 bytes"),
        "{}",
        r.err
    );
    assert!(r.err.contains("(poke+0x"), "{}", r.err);
    // A freed device pointer: still in the arena, in no live allocation.
    let r = run("host-read-freed", true, &[]);
    assert_eq!(r.o.status.signal(), Some(libc::SIGSEGV), "{}\n{}", r.out, r.err);
    assert!(r.out.ends_with("free=0\n"), "{}", r.out);
    assert!(r.err.contains("in the device arena but in no live allocation (freed, or never allocated"), "{}", r.err);
}

#[test]
fn the_programs_own_sigsegv_handler_still_runs_after_the_report() {
    let r = run("handler", true, &[]);
    assert_eq!(r.o.status.code(), Some(3), "{}\n{}", r.out, r.err);
    assert!(r.out.ends_with("handler=called\n"), "{}", r.out);
    assert!(r.err.contains("host code dereferenced a device pointer"), "{}", r.err);
    // The program may go on after its handler: the file is a checkpoint, not final.
    let c = r.counts.expect("counters checkpoint");
    assert_eq!(c.state, State::Checkpoint);
    assert_eq!(c.hazards.len(), 1);
}

#[test]
fn guard_pages_stay_around_arena_allocations() {
    let r = run("overrun", true, &[]);
    assert!(r.o.status.success(), "{}\n{}", r.out, r.err);
    assert!(r.out.ends_with("launch=0\nsync=700\n"), "{}\n{}", r.out, r.err);
    assert!(
        r.err.contains("kernel fill")
            && r.err.contains("nearest allocation: offset 4096 (past its end) of the device allocation of 4096 bytes at 0x"),
        "{}",
        r.err
    );
}

#[test]
fn zero_copy_arguments_are_counted_and_device_pointers_are_not() {
    for checked in [false, true] {
        let r = run("zero-copy", checked, &[]);
        assert!(r.o.status.success(), "{}\n{}", r.out, r.err);
        assert!(r.out.ends_with("read_at=11\nread_at=22\nread_at=33\nread_struct=111\nread_struct=133\nsync=0\n"), "{}\n{}", r.out, r.err);
        let c = r.counts.expect("counters file");
        // read_at: pinned and managed arguments count, the device one does not.
        assert_eq!(c.launches["read_at"].count, 3);
        assert_eq!(c.zero_copy.get("read_at"), Some(&2), "{:?}", c.zero_copy);
        // A pointer inside a struct passed by value counts too.
        assert_eq!(c.launches["read_struct"].count, 2);
        assert_eq!(c.zero_copy.get("read_struct"), Some(&1), "{:?}", c.zero_copy);
        assert_eq!(c.zero_copy.len(), 2, "{:?}", c.zero_copy);
    }
}

#[test]
fn a_bad_checks_value_is_refused_by_cuinit() {
    let r = run("clean", false, &[("EMU_CUDA_CHECKS", "pointers,bogus")]);
    assert_eq!(r.o.status.code(), Some(2), "{}\n{}", r.out, r.err);
    assert!(r.out.contains("init=1\n"), "{}", r.out);
    assert!(
        r.err.contains(
            "EMU_CUDA_CHECKS=pointers,bogus: expected a comma-separated list of: pointers, race, poison (unknown check \"bogus\")"
        ),
        "{}",
        r.err
    );
    // Pass-through forwards to a real device, whose memory is out of host reach anyway.
    let real = built().join("client").display().to_string();
    let r = run("clean", true, &[("EMU_CUDA_REAL", &real)]);
    assert_eq!(r.o.status.code(), Some(2), "{}\n{}", r.out, r.err);
    assert!(
        r.out.contains("init=1\n") && r.err.contains("EMU_CUDA_CHECKS=pointers cannot be combined with EMU_CUDA_REAL"),
        "{}\n{}",
        r.out,
        r.err
    );
}
