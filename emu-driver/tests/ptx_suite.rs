//! PTX mode against the H200, instruction by instruction: the suite of
//! kernels-host/ptx/suite (one kernel per instruction form, 858 of them, over edge and
//! random inputs that its runner generates) runs on the emulated driver in PTX mode and
//! every output is compared bit for bit with what the same runner read on an H200
//! (kernels-host/ptx/suite/data/h200.bin.zst; driver 580.159.04, see the suite's README).
//!
//! Every case must be identical, except the special-function unit's forms that are not
//! yet modelled bit for bit (kernels-host/runtime/sfu_exact.txt lists those that are):
//! their differences are counted and printed, not hidden.

mod client_support;
use client_support::{root, runner_records, simtwin, suite_runner_dir};
use std::collections::BTreeMap;
use std::process::Command;

/// One case's record of a runner output file.
struct Record {
    status: i32,
    outputs: Vec<u8>,
}

fn read_records(bytes: &[u8]) -> Vec<(String, Record)> {
    runner_records(bytes, 16, true).into_iter().map(|(name, status, outputs)| (name, Record { status, outputs })).collect()
}

#[test]
fn ptx_suite_matches_the_h200_bit_for_bit_except_unmodelled_sfu_forms() {
    let suite = root().join("kernels-host/ptx/suite");
    let dir = suite_runner_dir("ptx-suite");
    let runner = dir.join("runner");
    let out = dir.join("emulated.bin");
    let o = Command::new(&runner)
        .arg(suite.join("suite.ptx"))
        .arg(suite.join("cases.txt"))
        .arg(&out)
        .env("LD_LIBRARY_PATH", simtwin("lib"))
        .env("EMU_CUDA_EXEC", "ptx")
        .env("EMU_CUDA_LOG", "error")
        .env_remove("EMU_CUDA_KERNELS")
        .output()
        .unwrap();
    assert!(o.status.success(), "runner failed:\n{}", String::from_utf8_lossy(&o.stderr));
    let emulated = read_records(&std::fs::read(&out).unwrap());
    let recorded = zstd::decode_all(&std::fs::read(suite.join("data/h200.bin.zst")).unwrap()[..]).unwrap();
    let recorded: BTreeMap<String, Record> = read_records(&recorded).into_iter().collect();
    // The SFU form of each case (cases.txt, last column) and the forms modelled exactly.
    let cases = std::fs::read_to_string(suite.join("cases.txt")).unwrap();
    let sfu: BTreeMap<&str, &str> = cases
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 6 && f[5] != "-").then(|| (f[0], f[5]))
        })
        .collect();
    let exact_text = std::fs::read_to_string(root().join("kernels-host/runtime/sfu_exact.txt")).unwrap();
    let exact: Vec<&str> = exact_text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    assert_eq!(emulated.len(), recorded.len(), "the emulated run has {} cases, the H200 record {}", emulated.len(), recorded.len());
    let mut wrong = Vec::new();
    let mut sfu_report = Vec::new();
    for (name, e) in &emulated {
        let r = recorded.get(name).unwrap_or_else(|| panic!("case {name} is not in the H200 record"));
        assert_eq!(e.status, r.status, "case {name}: status {} emulated, {} on the H200", e.status, r.status);
        let differing = e.outputs.chunks(16).zip(r.outputs.chunks(16)).filter(|(a, b)| a != b).count();
        if differing == 0 {
            continue;
        }
        match sfu.get(name.as_str()) {
            Some(form) if !exact.contains(form) => sfu_report.push(format!("{form}: {differing}/{}", e.outputs.len() / 16)),
            _ => {
                let t = e.outputs.chunks(16).zip(r.outputs.chunks(16)).position(|(a, b)| a != b).unwrap();
                wrong.push(format!(
                    "{name}: {differing} threads differ, first thread {t}: emulated {:02x?}, H200 {:02x?}",
                    &e.outputs[t * 16..t * 16 + 16],
                    &r.outputs[t * 16..t * 16 + 16]
                ))
            }
        }
    }
    eprintln!("SFU forms not yet device-exact (threads differing / run): {}", sfu_report.join(", "));
    assert!(wrong.is_empty(), "{} cases differ from the H200:\n{}", wrong.len(), wrong.join("\n"));
    assert!(emulated.len() >= 800, "the suite shrank to {} cases", emulated.len());
}
