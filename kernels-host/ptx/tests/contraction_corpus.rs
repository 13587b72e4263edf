//! The contraction pass against ptxas: every kernel of the corpus
//! (`kernels-host/ptx-corpus/contraction/`, 316 hand-made PTX files) at every
//! configuration recorded in its `expectations.json` (ptxas 13.5 -O3, the primary; -O0,
//! -O1, -O2; 13.0 -O3 and -O0), compared line by line with the SASS ptxas made:
//! a contractable add/sub is fused iff its SASS is an FMA, with the multiply the SASS
//! trace names (`fused`); a contractable multiply keeps its own instruction iff its SASS
//! has one; merged (CSE'd) lines have one instruction between them; removed lines none.
//! The same comparison as `scripts/ptxas-contraction/check.py` does for the Python
//! prototype (reports/ptxas-contraction/README.md §4).
//!
//! Known exceptions: the `unexplained_*` cases (README §7), which must still disagree
//! (if one starts to agree, the rule changed: rename the case), and lines of a loop that
//! ptxas unrolled into copies that decide differently (`dist_loop_carried`, README §3).

use serde_json::Value;
use simtwin_ptx::contract::{contractable_add, Fusions};
use simtwin_ptx::resolve::{Func, Node};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ptx-corpus/contraction")
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Kind {
    Fma,
    Mul,
    Add,
    None,
    Mixed,
}

/// The kind of the SASS float ops ptxas attributed to one PTX line (`=add`/`=mul` mark an
/// FMA-kind instruction the observation classified).
fn kind(ops: &[String]) -> Kind {
    let mut ks = BTreeSet::new();
    for o in ops {
        if let Some((_, k)) = o.split_once('=') {
            ks.insert(match k {
                "add" => 2,
                "mul" => 1,
                _ => 0,
            });
            continue;
        }
        let base = o.trim_start_matches('@').split('.').next().unwrap_or("");
        match base {
            "FFMA" | "DFMA" | "HFMA2" => ks.insert(0),
            "FMUL" | "DMUL" | "HMUL2" => ks.insert(1),
            "FADD" | "DADD" | "HADD2" => ks.insert(2),
            _ => false,
        };
    }
    match (ks.len(), ks.first()) {
        (0, _) => Kind::None,
        (1, Some(0)) => Kind::Fma,
        (1, Some(1)) => Kind::Mul,
        (1, _) => Kind::Add,
        _ => Kind::Mixed,
    }
}

/// The model's decisions keyed by PTX line.
struct Pred {
    fused: BTreeMap<u32, u32>,
    materialized: BTreeMap<u32, bool>,
    merged: BTreeMap<u32, u32>,
    scaled: BTreeMap<u32, (u32, &'static str)>,
    dead: BTreeSet<u32>,
}

fn by_line(f: &Func, fu: &Fusions) -> Pred {
    let line = |k: usize| match &f.body[k] {
        Node::Instr(i) => i.src.line,
        Node::Label(_) => 0,
    };
    Pred {
        fused: fu.pairs().into_iter().map(|(m, a)| (line(a), line(m))).collect(),
        materialized: fu.materialized.iter().map(|(&m, &k)| (line(m), k)).collect(),
        merged: fu.repeats.iter().chain(&fu.merged).map(|(&a, &b)| (line(a), line(b))).collect(),
        scaled: fu.scaled.iter().map(|(&m, &(c, s))| (line(m), (line(c), s))).collect(),
        dead: fu.removed.iter().map(|&k| line(k)).collect(),
    }
}

/// Disagreements of one kernel: (is an unrolled-copies note, message).
fn check_kernel(f: &Func, fu: &Fusions, obs: &Value) -> Vec<(bool, String)> {
    let p = by_line(f, fu);
    let rep = |mut l: u32| {
        let mut seen = BTreeSet::new();
        while let Some(&n) = p.merged.get(&l) {
            if !seen.insert(l) {
                break;
            }
            l = n;
        }
        l
    };
    let mut groups: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    for &l in p.merged.keys() {
        let r = rep(l);
        groups.entry(r).or_insert_with(|| BTreeSet::from([r])).insert(l);
    }
    let in_group: HashMap<u32, u32> = groups.iter().flat_map(|(&r, g)| g.iter().map(move |&l| (l, r))).collect();
    let lines: HashMap<u32, Vec<String>> = obs["lines"]
        .as_object()
        .expect("lines")
        .iter()
        .map(|(l, v)| (l.parse().expect("line"), v.as_array().expect("ops").iter().map(|o| o.as_str().unwrap_or("").to_string()).collect()))
        .collect();
    let mut traced: HashMap<u32, Vec<Option<u32>>> = HashMap::new();
    for fz in obs["fused"].as_array().expect("fused") {
        traced.entry(fz["add"].as_u64().expect("add") as u32).or_default().push(fz["mul"].as_u64().map(|m| m as u32));
    }
    let empty = Vec::new();
    let ops = |l: u32| lines.get(&l).unwrap_or(&empty);
    let mut out = Vec::new();
    for node in &f.body {
        let Node::Instr(i) = node else { continue };
        let ln = i.src.line;
        let Some(here) = lines.get(&ln) else { continue };
        let mut k = kind(here);
        let half = matches!(i.src.last_ty(), Some(simtwin_ptx::ast::Ty::F16 | simtwin_ptx::ast::Ty::Bf16));
        if k == Kind::None && half {
            continue; // two scalar f16 ops packed into one HMUL2/HADD2/HFMA2, named after one
        }
        if p.dead.contains(&ln) {
            if k != Kind::None {
                out.push((false, format!("line {ln}: predicted removed, SASS {here:?}")));
            }
            continue;
        }
        let group_check = |r: u32, want: Option<Kind>| -> Option<String> {
            let g: Vec<u32> = groups[&r].iter().copied().collect();
            let ks: Vec<Kind> = g.iter().map(|&x| kind(ops(x))).collect();
            let some: BTreeSet<_> = ks.iter().filter(|k| **k != Kind::None).map(|k| *k as u8).collect();
            let n = ks.iter().filter(|k| **k != Kind::None).count();
            let bad = n != 1 || want.is_some_and(|w| some != BTreeSet::from([w as u8]));
            bad.then(|| {
                format!("lines {g:?}: predicted merged into one {want:?}, SASS {:?}", g.iter().map(|&x| ops(x)).collect::<Vec<_>>())
            })
        };
        if contractable_add(i) {
            if k == Kind::Mixed {
                out.push((true, format!("line {ln}: copies disagree ({here:?})")));
                continue;
            }
            if let Some(&r) = in_group.get(&ln) {
                if ln == r {
                    let want = if p.fused.contains_key(&r) { Kind::Fma } else { Kind::Add };
                    out.extend(group_check(r, Some(want)).map(|m| (false, m)));
                }
                continue;
            }
            let want = p.fused.get(&ln);
            let got = matches!(k, Kind::Fma | Kind::Mul); // an FMA with a -0 addend is p + -0 fused
            if want.is_some() != got {
                out.push((
                    false,
                    format!(
                        "line {ln} ({}): predicted {}, SASS {here:?}",
                        i.src.text(),
                        want.map(|m| format!("fused with line {m}")).unwrap_or("not fused".into())
                    ),
                ));
            } else if let (Some(&m), Some(t)) = (want, traced.get(&ln)) {
                if t.iter().all(|x| x.is_some()) && t.iter().any(|&x| x != Some(m)) {
                    out.push((false, format!("line {ln}: predicted mul line {m}, SASS took {t:?}")));
                }
            }
        } else if let Some(&kept) = p.materialized.get(&ln) {
            if i.src.op == "div" {
                // div.approx/full: the scaling FMULs are guarded, the multiply is not
                let unguarded: Vec<String> = here.iter().filter(|o| !o.starts_with('@')).cloned().collect();
                k = kind(&unguarded);
            }
            if k == Kind::Mixed {
                continue;
            }
            if let Some(&r) = in_group.get(&ln) {
                if ln == r {
                    out.extend(group_check(r, None).map(|m| (false, m)));
                }
                continue;
            }
            if let Some(&(o, sc)) = p.scaled.get(&ln) {
                let nones = [kind(here), kind(ops(o))].iter().filter(|k| **k == Kind::None).count();
                if nones != 1 || !here.iter().chain(ops(o)).any(|x| x.contains(sc)) {
                    out.push((
                        false,
                        format!("mul line {ln}: predicted folded with line {o} into FMUL.{sc}, SASS {here:?} / {:?}", ops(o)),
                    ));
                }
                continue;
            }
            if p.scaled.values().any(|&(o, _)| o == ln) {
                continue;
            }
            let got = matches!(k, Kind::Mul | Kind::Fma);
            if kept != got {
                out.push((false, format!("mul line {ln}: predicted {}, SASS {here:?}", if kept { "own multiply" } else { "absorbed" })));
            }
        }
    }
    // Every pair the SASS trace names is a pair of the model (or of a merged group).
    for (&add, muls) in &traced {
        if in_group.contains_key(&add) || kind(ops(add)) == Kind::Mixed {
            continue;
        }
        match p.fused.get(&add) {
            None => out.push((false, format!("SASS fuses into line {add}, the model does not"))),
            Some(&m) if muls.iter().any(|x| x.is_some_and(|x| x != m)) => {
                out.push((false, format!("line {add}: SASS fused mul line(s) {muls:?}, the model line {m}")))
            }
            _ => {}
        }
    }
    out
}

const CONFIGS: [(&str, u8); 6] = [("13.5 -O3", 3), ("13.5 -O0", 0), ("13.5 -O1", 1), ("13.5 -O2", 2), ("13.0 -O3", 3), ("13.0 -O0", 0)];

#[test]
fn corpus_agrees_with_ptxas() {
    let dir = corpus();
    let exp: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expectations.json")).expect("expectations.json")).expect("json");
    let cases = exp["cases"].as_object().expect("cases");
    assert_eq!(cases.len(), 316, "the corpus has 316 cases");
    let mut failures = Vec::new();
    let mut summary = Vec::new();
    for (cfg, opt) in CONFIGS {
        let (mut ok, mut bad, mut unrolled, mut unexplained) = (0, 0, 0, 0);
        for (name, c) in cases {
            let file = c["file"].as_str().expect("file");
            let src = std::fs::read_to_string(dir.join(file)).expect("corpus file");
            let fs = simtwin_ptx::fusions(&[&src], opt).unwrap_or_else(|e| panic!("{file}: {e}"));
            let kernels = if cfg == "13.5 -O3" { &c["kernels"] } else { c["differs_in"].get(cfg).unwrap_or(&c["kernels"]) };
            for (k, obs) in kernels.as_object().expect("kernels") {
                let ff = fs.iter().find(|f| f.func.decl.name == *k).unwrap_or_else(|| panic!("{file}: no function {k}"));
                let res = check_kernel(&ff.func, &ff.fusions, obs);
                let errs: Vec<&String> = res.iter().filter(|(u, _)| !u).map(|(_, m)| m).collect();
                if name.starts_with("unexplained_") {
                    unexplained += 1;
                    if errs.is_empty() && cfg == "13.5 -O3" {
                        failures.push(format!("[{cfg}] {name}/{k} now agrees with ptxas: the rule changed, rename the case"));
                    }
                    continue;
                }
                if !errs.is_empty() {
                    bad += 1;
                    failures.push(format!("[{cfg}] {name}/{k}: {}", errs.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("; ")));
                } else if !res.is_empty() {
                    unrolled += 1;
                } else {
                    ok += 1;
                }
            }
        }
        summary.push(format!("ptxas {cfg}: {ok} kernels agree, {bad} disagree, {unrolled} with unrolled copies that disagree, {unexplained} known unexplained"));
    }
    for s in &summary {
        eprintln!("{s}");
    }
    assert!(failures.is_empty(), "the contraction model disagrees with ptxas:\n{}", failures.join("\n"));
}
