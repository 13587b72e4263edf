//! CUDA graphs and stream capture on the emulated driver: a driver-API client
//! (tests/graphs/client.c, kernels in tests/graphs/graphs.cu) runs one diamond of work
//! (copy in, two kernels and a memset, a kernel joining them, copy out, a host node)
//! directly on two streams joined by events, as a graph built node by node, and as a graph
//! captured from the same two streams. The three give the same bytes, the host node sees
//! the copied-back result, and the counters (copies by direction, memsets, launches by
//! kernel) are equal: a graph's work is counted when the graph runs, not when it is
//! built or captured. Further runs check graph queries and parameter changes, and the
//! error codes of capture invalidation, destroyed executable graphs and bad handles.
//!
//! Needs `scripts/build` to have produced target/simtwin/.

mod client_support;

use client_support::{build_per_process, on_emulated_driver, text};
use simtwin_abi::counters::Counters;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

fn built() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| build_per_process("graphs", &[]))
}

struct Run {
    out: String,
    counts: Counters,
}

fn run(mode: &str, env: &[(&str, &str)]) -> Run {
    let dir = built();
    let tag = env.iter().map(|(k, v)| format!("-{k}{v}")).collect::<String>();
    let counts = dir.join(format!("{mode}{tag}.json"));
    let _ = std::fs::remove_file(&counts);
    let mut cmd = Command::new(dir.join("client"));
    cmd.arg(dir.join("graphs.fatbin")).arg(mode);
    on_emulated_driver(&mut cmd, &dir.join("kernels")).env("EMU_CUDA_COUNTS", &counts).env_remove("EMU_CUDA_ASYNC");
    let o = cmd.envs(env.iter().copied()).output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success() && out.ends_with("done\n"), "{mode} {env:?}: {}\n{out}\n{err}", o.status);
    let counts = Counters::read(&counts).unwrap_or_else(|e| panic!("{mode}: counters: {e}\n{out}\n{err}"));
    Run { out, counts }
}

/// The `iter=` lines: the result's hash after each run and what the host node saw.
fn results(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.starts_with("iter=")).collect()
}

/// What the device did: (count, bytes) of HtoD, DtoH, DtoD copies and of memsets, and
/// launches by kernel (count, threads, blocks).
type Work = ([(u64, u64); 4], BTreeMap<String, (u64, u64, u64)>);

fn work(c: &Counters) -> Work {
    let t = |x: &simtwin_abi::counters::Traffic| (x.count, x.bytes);
    (
        [t(&c.copies.htod), t(&c.copies.dtoh), t(&c.copies.dtod), t(&c.memsets)],
        c.launches.iter().map(|(k, v)| (k.clone(), (v.count, v.threads, v.blocks))).collect(),
    )
}

fn expected_hashes() -> Vec<String> {
    // The result computed here: out = (in*3) * (in+7) + 0x01010101, as the kernels do.
    (0..2)
        .map(|iter| {
            let mut h: u64 = 1469598103934665603;
            let mut first = 0;
            let mut last = 0;
            for i in 0..1000i32 {
                let v = (i * 37 + iter * 1001) % 977 - 400;
                let out = (v * 3).wrapping_mul(v + 7).wrapping_add(0x01010101);
                if i == 0 {
                    first = out;
                }
                last = out;
                for b in out.to_le_bytes() {
                    h = (h ^ b as u64).wrapping_mul(1099511628211);
                }
            }
            format!("iter={iter} hash={h:016x} seen={h:016x} out0={first} out999={last}")
        })
        .collect()
}

#[test]
fn a_graph_built_by_hand_and_a_captured_one_give_the_direct_bytes_and_counts() {
    let direct = run("direct", &[]);
    let manual = run("manual", &[]);
    let capture = run("capture", &[]);
    let want = expected_hashes();
    assert_eq!(results(&direct.out), want, "direct:\n{}", direct.out);
    assert_eq!(results(&manual.out), want, "manual:\n{}", manual.out);
    assert_eq!(results(&capture.out), want, "capture:\n{}", capture.out);
    // A, B, C, M, D, E, F; roots A and M; edges A-B, A-C, B-D, C-D (capture: C-M, M-D in
    // s2's order instead of C-D), M-D, D-E, E-F.
    assert!(manual.out.contains("nodes=7 roots=2 edges=7"), "{}", manual.out);
    assert!(capture.out.contains("nodes=7 roots=1 edges=7"), "{}", capture.out);
    // While capturing: s1 active, s2 joined (status 1), s1's dependencies one node; after
    // the end neither captures, the graph is the one GetCaptureInfo named, and the host
    // function did not run during the capture.
    assert!(capture.out.contains("capturing=1 joined=1 deps=1"), "{}", capture.out);
    assert!(capture.out.contains("after=0,0 same_graph=1 ran_during_capture=0"), "{}", capture.out);
    let w = work(&direct.counts);
    assert_eq!(work(&manual.counts), w, "manual vs direct counters");
    assert_eq!(work(&capture.counts), w, "capture vs direct counters");
    // Two runs: 2 x 4000 bytes each way, two memsets of 4000 bytes, two launches of each.
    assert_eq!(w.0, [(2, 8000), (2, 8000), (0, 0), (2, 8000)], "{w:?}");
    for k in ["scale", "offset", "combine"] {
        assert_eq!(w.1[k], (2, 2 * 8 * 128, 2 * 8), "{k}: {w:?}");
    }
    for c in [&manual.counts, &capture.counts] {
        assert!(c.unsupported.is_empty(), "{:?}", c.unsupported);
        assert!(c.failures.is_empty(), "{:?}", c.failures);
        assert_eq!(c.calls.get("cuGraphLaunch"), Some(&2));
    }
}

#[test]
fn deferred_work_runs_a_graph_in_stream_order() {
    // EMU_CUDA_ASYNC=deferred: the graph launch is one queued item, run when s1 is
    // synchronised; the bytes are the same.
    let want = expected_hashes();
    for mode in ["manual", "capture"] {
        let r = run(mode, &[("EMU_CUDA_ASYNC", "deferred")]);
        assert_eq!(results(&r.out), want, "{mode} deferred:\n{}", r.out);
    }
}

#[test]
fn graph_queries_and_parameter_changes() {
    let r = run("api", &[]);
    let o = &r.out;
    // Node types: memcpy 1, kernel 0, kernel, memset 2, kernel, memcpy, host 3.
    assert!(o.contains("types=1,0,0,2,0,1,3"), "{o}");
    assert!(o.contains("d_deps=3 in_order=1 padded=1"), "{o}");
    assert!(o.contains("a_dependents=2"), "{o}");
    assert!(o.contains("kparams func=1 grid=8 block=128 k=3"), "{o}");
    let lines = results(o);
    let want = expected_hashes();
    // Run 0: arguments copied at add time (k=3 although the variable became 100).
    assert_eq!(lines[0], want[0], "{o}");
    // Run 1: the exec's scale node takes k=5: a different result, checked in the client.
    assert!(o.contains("exec_set_params_ok=1"), "{o}");
    assert_ne!(lines[1], want[0], "{o}");
    assert!(o.contains("clone_found=1 distinct=1"), "{o}");
    // Updated from the clone (k=3 as cloned): run 2 gives the k=3 result for input 1.
    assert!(o.contains("update_same=0\nupdate_same_result=0"), "{o}");
    assert_eq!(lines[2].replace("iter=2", "iter=1"), want[1], "{o}");
    // A removed edge: CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE (910), topology changed (2),
    // naming the node whose dependencies differ.
    assert!(o.contains("update_topology=910\nupdate_topology_result=2 error_node=1"), "{o}");
    // The clone as a child graph behind an empty node runs the same work.
    assert_eq!(lines[3].replace("iter=3", "iter=1"), want[1], "{o}");
    assert!(o.contains("child_type=4 outer_nodes=1 outer_roots=1"), "{o}");
    assert!(o.contains("child_graph_nodes=8 destroy_owned=1"), "{o}");
}

#[test]
fn capture_invalidation_destroyed_execs_and_bad_handles_give_the_documented_codes() {
    let r = run("errors", &[]);
    let o = &r.out;
    for line in [
        // A synchronous copy on the legacy stream while a blocking stream captures:
        // CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, and the capture is invalidated (status 2):
        // later work answers CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, as does the end,
        // which returns no graph and ends the capture.
        "sync_copy_during_capture=906",
        "status_after_implicit=2",
        "launch_on_invalidated=901",
        "end_invalidated=901",
        "end_invalidated_graph_null=1",
        "status_after_end=0",
        // Synchronising the capturing stream, or the context in global mode:
        // CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, and the capture is invalidated.
        "stream_sync_during_capture=900",
        "end_after_stream_sync=901",
        "ctx_sync_global=900",
        "end_after_ctx_sync=901",
        // In relaxed mode too (it would wait for the capturing stream; measured on an
        // H100); a synchronous copy that does not wait for it is allowed there.
        "previous_mode=0",
        "ctx_sync_relaxed=900",
        "end_after_relaxed=901",
        "sync_copy_relaxed=0",
        "end_after_sync_copy_relaxed=0",
        // The legacy stream cannot capture; ending without a capture and beginning twice
        // are CUDA_ERROR_ILLEGAL_STATE; a bad mode CUDA_ERROR_INVALID_VALUE.
        "begin_on_null_stream=900",
        "end_not_capturing=401",
        "begin_twice=401",
        "status_after_begin_twice=1",
        "bad_mode=1",
        // An event recorded in a capture: CUDA_ERROR_CAPTURED_EVENT, and the capture is
        // invalidated; a wait for that event is then CUDA_ERROR_INVALID_VALUE, and the
        // end CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (all as on an H100).
        "query_captured_event=907",
        "status_after_query=2",
        "wait_after_query=1",
        "status_after_wait=2",
        "end_unjoined=901",
        "joined_status_after_end=0",
        // A stream forked from the capture and never joined back:
        // CUDA_ERROR_STREAM_CAPTURE_UNJOINED; the capture is over for both streams.
        "end_unjoined_clean=904",
        "joined_status_after_clean_end=0",
        // Stream-ordered allocation in a capture: not emulated (801), capture invalidated.
        "alloc_async_in_capture=801",
        "end_after_alloc=901",
        // Captured 2D and 3D copies: three nodes, nothing copied before the launch, the
        // memset's value copied through both after it. A synchronous 2D copy while a
        // non-blocking stream captures in global mode: allowed, as on an H100 (stream-
        // ordered allocation in a capture is a difference: the H100 captures it).
        "copies2d3d nodes=3 before=0 ok=1",
        "sync_2d_copy_global=0",
        "end_after_sync_2d=0",
        // Bad handles and graph structure: CUDA_ERROR_INVALID_VALUE, as cuda.h lists.
        "add_edge_twice=1",
        "dependency_from_other_graph=1",
        "node_type_garbage=1",
        "node_type_destroyed=1",
        "mem_alloc_node=801",
        "conditional_node=801",
        "launch_destroyed_exec=1",
        "destroy_exec_twice=1",
        "launch_null_exec=1",
        "device_launch_flag=801",
        "instantiate_cycle=1",
        "destroy_graph_twice=1",
    ] {
        assert!(o.lines().any(|l| l == line), "no {line:?} in\n{o}");
    }
    // Every set-up call of the cases succeeded.
    assert!(!o.lines().any(|l| l.starts_with("soft ")), "a set-up call failed:\n{o}");
    // The node types that are not emulated are counted as unsupported, by name.
    for k in ["graph node: memory allocation", "graph node: conditional"] {
        assert!(r.counts.unsupported.contains_key(k), "{k}: {:?}", r.counts.unsupported);
    }
}

#[test]
fn every_graph_entry_point_answers_null_arguments_with_an_error() {
    let r = run("nulls", &[]);
    let lines: Vec<&str> = r.out.lines().filter_map(|l| l.strip_prefix("null ")).collect();
    assert_eq!(lines.len(), 88, "{}", r.out);
    for l in lines {
        let (name, code) = l.split_once('=').unwrap();
        assert_ne!(code, "0", "{name} succeeded with null arguments");
    }
}
