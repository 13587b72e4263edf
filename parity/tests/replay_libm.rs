//! `parity libm` against the checked-in reference reports of glibc's log2f: the first
//! listed misrounded inputs of [1, 1024) are reproduced exactly.

use parity::replay::crlog2gen::parse_hex;
use parity::replay::engine::{self, Options};
use parity::replay::host::LibFn;
use parity::replay::reference::RefFn;

#[test]
fn glibc_log2f_reference_report_reproduces() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../reports/reference/replay/glibc_log2f_1_1024");
    let csv = std::fs::read_to_string(format!("{dir}/misrounded.csv")).unwrap();
    let listed: Vec<(u32, u32, u32)> = csv
        .lines()
        .skip(1)
        .take(200)
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            (parse_hex(c[0]).unwrap(), parse_hex(c[2]).unwrap(), parse_hex(c[4]).unwrap())
        })
        .collect();
    assert_eq!(listed.len(), 200);
    let f = LibFn::load("libm.so.6", "log2f").unwrap();
    let end = listed.last().unwrap().0 as u64 + 1;
    let o = engine::replay(&f, &RefFn::Log2, 0x3f80_0000, end, &Options::default(), "log2f");
    let got: Vec<(u32, u32, u32)> = o.list.iter().map(|m| (m.input, m.got, m.expected)).collect();
    assert_eq!(got, listed, "glibc's log2f on this machine differs from the reference report");
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(format!("{dir}/summary.json")).unwrap()).unwrap();
    assert_eq!(s["inputs"], 83_886_080);
    assert!(s["misrounded"].as_u64().unwrap() > 0);
}
