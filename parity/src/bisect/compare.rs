//! The bisection proper: aligned pairs of launches compared buffer by buffer (by
//! name: allocation order, module globals by module and symbol), copies by the hash of
//! their bytes; the first pair that differs, the last that agreed, the sequence
//! divergences, and (from dumped bytes) the first differing element.

use super::align::{align, Step};
use super::load::{Event, Trace};
use super::types::{Elem, Param, Types};
use simtwin_abi::trace as fmt;
use std::collections::HashMap;

/// What to compare.
pub struct Options {
    pub frames: Option<(u64, u64)>,
    pub kernels: Vec<String>,
    pub per_frame: bool,
}

/// A buffer that differs at the first divergent launch.
#[derive(Debug, Clone)]
pub struct BufDiff {
    pub name: String,
    pub kind: String,
    pub size: u64,
    pub params: Vec<u32>,
    pub hash_a: String,
    pub hash_b: String,
    /// The last aligned launch pair before this one at which this buffer was hashed
    /// and agreed (`A #n / B #n`), if any.
    pub last_agreed: Option<String>,
}

/// The first differing element of a buffer or copy.
#[derive(Debug, Clone)]
pub struct ElementDiff {
    /// Element type (`u8`, `f32`, ...; `bytes` when unknown).
    pub elem: String,
    /// Index of the element from the start of the buffer (or copy).
    pub index: u64,
    pub byte_offset: u64,
    pub a: String,
    pub b: String,
    /// Elements that differ in all.
    pub differing: u64,
    pub total: u64,
    /// (x, y) with --width.
    pub xy: Option<(u64, u64)>,
}

/// The first aligned pair that differs.
#[derive(Debug, Clone)]
pub struct FirstDiff {
    pub a: Event,
    pub b: Event,
    /// Launch pairs whose kernels differ (a substitution) say so.
    pub same_kernel: bool,
    /// The buffer named as the divergent one (launches), and the others that differ.
    pub buffer: Option<BufDiff>,
    pub other_buffers: Vec<BufDiff>,
    pub element: Option<ElementDiff>,
    /// Why there is no element (no dump, a non-deterministic rerun, ...).
    pub element_note: Option<String>,
}

impl FirstDiff {
    /// EMU_CUDA_TRACE_DUMP values that dump this pair's bytes in A and in B.
    pub fn dump_keys(&self) -> (String, String) {
        let k = |e: &Event| match e {
            Event::Launch(l) => l.n.to_string(),
            Event::Copy(c) => format!("c{}", c.n),
        };
        (k(&self.a), k(&self.b))
    }
}

/// A place where the sequences diverge: what each side has there.
#[derive(Debug, Clone)]
pub struct SeqDiv {
    pub frame: Option<u64>,
    pub a: Vec<String>,
    pub b: Vec<String>,
    /// Where: the events just before (the last common one).
    pub after: Option<String>,
}

/// The first pair of launches whose value (non-buffer) arguments differ.
#[derive(Debug, Clone)]
pub struct ArgDiff {
    pub a: String,
    pub b: String,
    pub param: u32,
    pub value_a: String,
    pub value_b: String,
}

/// One row of launches.csv.
#[derive(Debug, Clone)]
pub struct Row {
    pub a: Option<String>,
    pub b: Option<String>,
    pub frame: Option<u64>,
    pub status: &'static str,
}

/// Per frame (--per-frame).
#[derive(Debug, Clone)]
pub struct FrameResult {
    pub frame: u64,
    pub events_a: usize,
    pub events_b: usize,
    pub sequence_divergences: usize,
    pub first: Option<String>,
}

/// Everything the report says.
#[derive(Debug, Clone, Default)]
pub struct Bisection {
    pub first: Option<FirstDiff>,
    pub last_agreed: Option<String>,
    pub sequence: Vec<SeqDiv>,
    pub first_args: Option<ArgDiff>,
    pub rows: Vec<Row>,
    pub compared: usize,
    pub agreed: usize,
    pub frames: Vec<FrameResult>,
    pub notes: Vec<String>,
    /// Aligned launch pairs whose buffer sets differ by name.
    pub name_mismatches: usize,
    /// Buffers not compared because one side could not read them back.
    pub unreadable: usize,
}

impl Bisection {
    pub fn agree(&self) -> bool {
        self.first.is_none() && self.sequence.is_empty()
    }
}

fn keep(e: &Event, o: &Options) -> bool {
    if let Some((f0, f1)) = o.frames {
        if !(f0..=f1).contains(&e.frame()) {
            return false;
        }
    }
    match e {
        Event::Launch(l) => o.kernels.is_empty() || o.kernels.iter().any(|p| glob(p, &l.kernel)),
        Event::Copy(_) => true,
    }
}

/// `*` wildcards.
fn glob(p: &str, t: &str) -> bool {
    let parts: Vec<&str> = p.split('*').collect();
    if parts.len() == 1 {
        return p == t;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !t.starts_with(first) || t.len() < first.len() + last.len() || !t.ends_with(last) {
        return false;
    }
    let mut rest = &t[first.len()..t.len() - last.len()];
    for q in &parts[1..parts.len() - 1] {
        match rest.find(q) {
            Some(i) => rest = &rest[i + q.len()..],
            None => return false,
        }
    }
    true
}

/// Bisects two traces.
pub fn bisect(ta: &Trace, tb: &Trace, types: &Types, o: &Options) -> anyhow::Result<Bisection> {
    let mut r = Bisection::default();
    for (t, label) in [(ta, "A"), (tb, "B")] {
        match &t.end {
            None => r.notes.push(format!(
                "trace {label} ({}) has no end record: the process was cut short; compared as far as it goes",
                t.path.display()
            )),
            Some(e) if e.traced_launches == 0 => r.notes.push(format!("trace {label} recorded no launch ({} made)", e.launches)),
            _ => {}
        }
    }
    if ta.header.frame_rule != tb.header.frame_rule {
        r.notes.push(format!("the traces tell frames apart differently: A {}, B {}", ta.header.frame_rule, tb.header.frame_rule));
    }
    let ea: Vec<&Event> = ta.events.iter().filter(|e| keep(e, o)).collect();
    let eb: Vec<&Event> = tb.events.iter().filter(|e| keep(e, o)).collect();
    if ea.is_empty() && eb.is_empty() {
        anyhow::bail!("neither trace has a launch or copy to compare (after --frames/--kernels)");
    }
    let mut state = Walk::default();
    if o.per_frame {
        let max = ea.iter().chain(&eb).map(|e| e.frame()).max().unwrap_or(0);
        let min = ea.iter().chain(&eb).map(|e| e.frame()).min().unwrap_or(0);
        let fa = ea.iter().map(|e| e.frame()).max();
        let fb = eb.iter().map(|e| e.frame()).max();
        if fa != fb {
            r.notes.push(format!("the traces have different numbers of frames: A up to {fa:?}, B up to {fb:?}"));
        }
        for f in min..=max {
            let a: Vec<&Event> = ea.iter().copied().filter(|e| e.frame() == f).collect();
            let b: Vec<&Event> = eb.iter().copied().filter(|e| e.frame() == f).collect();
            let before_first = r.first.is_some();
            let seq_before = r.sequence.len();
            let frame_first = walk(&a, &b, types, Some(f), &mut r, &mut state);
            r.frames.push(FrameResult {
                frame: f,
                events_a: a.len(),
                events_b: b.len(),
                sequence_divergences: r.sequence.len() - seq_before,
                first: frame_first.map(|d| describe_first(&d)),
            });
            let _ = before_first;
        }
    } else {
        walk(&ea, &eb, types, None, &mut r, &mut state);
    }
    Ok(r)
}

/// What the walk remembers across frames: per buffer name, the last pair at which it
/// agreed.
#[derive(Default)]
struct Walk {
    last_agreed_buf: HashMap<String, String>,
}

fn describe_first(d: &FirstDiff) -> String {
    let mut s = format!("A {} / B {}", d.a.describe(), d.b.describe());
    if let Some(b) = &d.buffer {
        s.push_str(&format!(": buffer {} ({} bytes)", b.name, b.size));
    }
    s
}

fn pair_name(a: &Event, b: &Event) -> String {
    format!("A {} / B {}", a.describe(), b.describe())
}

/// Aligns and compares one stretch (the whole trace or one frame); returns the first
/// difference of this stretch and records the overall first in `r`.
fn walk(a: &[&Event], b: &[&Event], types: &Types, frame: Option<u64>, r: &mut Bisection, w: &mut Walk) -> Option<FirstDiff> {
    let ka: Vec<String> = a.iter().map(|e| e.key()).collect();
    let kb: Vec<String> = b.iter().map(|e| e.key()).collect();
    let (steps, divs) = align(&ka, &kb);
    for d in &divs {
        let after = if d.a.0 > 0 { Some(format!("A {}", a[d.a.0 - 1].describe())) } else { None };
        r.sequence.push(SeqDiv {
            frame,
            a: a[d.a.0..d.a.1].iter().map(|e| e.describe()).collect(),
            b: b[d.b.0..d.b.1].iter().map(|e| e.describe()).collect(),
            after,
        });
    }
    let mut first_here: Option<FirstDiff> = None;
    for s in steps {
        let (i, j, substitute) = match s {
            Step::Pair(i, j) => (i, j, false),
            Step::Substitute(i, j) => (i, j, true),
            Step::OnlyA(i) => {
                r.rows.push(Row { a: Some(a[i].describe()), b: None, frame, status: "only in A" });
                continue;
            }
            Step::OnlyB(j) => {
                r.rows.push(Row { a: None, b: Some(b[j].describe()), frame, status: "only in B" });
                continue;
            }
        };
        let (x, y) = (a[i], b[j]);
        r.compared += 1;
        let diff = match (x, y) {
            (Event::Launch(la), Event::Launch(lb)) => compare_launch(la, lb, types, r, w, pair_name(x, y)),
            (Event::Copy(ca), Event::Copy(cb)) => {
                if ca.hash != cb.hash {
                    Some((None, Vec::new()))
                } else {
                    None
                }
            }
            _ => Some((None, Vec::new())),
        };
        let status = match (&diff, substitute) {
            (None, false) => "agree",
            (None, true) => "agree (kernels differ)",
            (Some(_), false) => "DIFFER",
            (Some(_), true) => "DIFFER (kernels differ)",
        };
        r.rows.push(Row { a: Some(x.describe()), b: Some(y.describe()), frame, status });
        match diff {
            None => {
                r.agreed += 1;
                if r.first.is_none() {
                    r.last_agreed = Some(pair_name(x, y));
                }
            }
            Some((buffer, others)) => {
                let fd = FirstDiff {
                    a: x.clone(),
                    b: y.clone(),
                    same_kernel: !substitute,
                    buffer,
                    other_buffers: others,
                    element: None,
                    element_note: None,
                };
                if first_here.is_none() {
                    first_here = Some(fd.clone());
                }
                if r.first.is_none() {
                    r.first = Some(fd);
                }
            }
        }
    }
    first_here
}

/// The bytes of a launch's value parameters (not pointing into any written buffer).
fn value_params(l: &fmt::Launch) -> Vec<(u32, Vec<u8>)> {
    let args = fmt::from_hex(&l.args).unwrap_or_default();
    l.params
        .iter()
        .enumerate()
        .filter(|(i, _)| !l.written.iter().any(|b| b.params.contains(&(*i as u32))))
        .map(|(i, &[o, s])| (i as u32, args.get(o as usize..(o + s) as usize).map(<[u8]>::to_vec).unwrap_or_default()))
        .collect()
}

/// Compares two launches' written buffers: None when all agree, else the named
/// divergent buffer and the other differing ones.
fn compare_launch(
    la: &fmt::Launch,
    lb: &fmt::Launch,
    types: &Types,
    r: &mut Bisection,
    w: &mut Walk,
    pair: String,
) -> Option<(Option<BufDiff>, Vec<BufDiff>)> {
    if r.first_args.is_none() && la.params == lb.params {
        let (va, vb) = (value_params(la), value_params(lb));
        if let Some(((p, x), (_, y))) = va.iter().zip(&vb).find(|((pa, x), (pb, y))| pa == pb && x != y) {
            let ty = types.params(&la.kernel).and_then(|t| t.get(*p as usize).copied());
            let show = |v: &[u8]| match ty {
                Some(Param::Value(e)) if v.len() == e.size() => e.format(v),
                _ => format!("0x{}", fmt::to_hex(v)),
            };
            r.first_args = Some(ArgDiff {
                a: format!("launch #{} {}", la.n, la.kernel),
                b: format!("launch #{} {}", lb.n, lb.kernel),
                param: *p,
                value_a: show(x),
                value_b: show(y),
            });
        }
    }
    let mut diffs = Vec::new();
    let names_a: Vec<&str> = la.written.iter().map(|b| b.name.as_str()).collect();
    let names_b: Vec<&str> = lb.written.iter().map(|b| b.name.as_str()).collect();
    if names_a.iter().collect::<std::collections::BTreeSet<_>>() != names_b.iter().collect() {
        r.name_mismatches += 1;
        if r.name_mismatches == 1 {
            r.notes.push(format!("{pair}: the buffer sets differ by name (A {names_a:?}, B {names_b:?}): allocations made in another order, arguments pointing elsewhere, or a pass-through trace without the kernel's parameter layout (every allocation hashed); buffers are compared where both name them"));
        }
    }
    for ba in &la.written {
        let Some(bb) = lb.written.iter().find(|b| b.name == ba.name) else { continue };
        if ba.hash == "unreadable" || bb.hash == "unreadable" {
            // Pass-through could not copy it back: not compared, and said so.
            r.unreadable += 1;
            if r.unreadable == 1 {
                r.notes.push(format!(
                    "{pair}: buffer {} could not be read back in pass-through (its hash says `unreadable`): not compared",
                    ba.name
                ));
            }
            continue;
        }
        if ba.hash == bb.hash {
            w.last_agreed_buf.insert(ba.name.clone(), pair.clone());
            continue;
        }
        diffs.push(BufDiff {
            name: ba.name.clone(),
            kind: ba.kind.clone(),
            size: ba.size,
            // A pass-through trace without a layout names no parameters: take the other side's.
            params: if ba.params.is_empty() { bb.params.clone() } else { ba.params.clone() },
            hash_a: ba.hash.clone(),
            hash_b: bb.hash.clone(),
            last_agreed: w.last_agreed_buf.get(&ba.name).cloned(),
        });
    }
    if diffs.is_empty() {
        return None;
    }
    // The buffer this launch made differ: one that agreed at an earlier launch, else
    // the last differing one in parameter order (outputs tend to come last).
    let pick = diffs.iter().position(|d| d.last_agreed.is_some()).unwrap_or(diffs.len() - 1);
    let named = diffs.remove(pick);
    Some((Some(named), diffs))
}

/// The element type of a buffer at a launch: the pointee of the first typed pointer
/// parameter pointing into it.
fn elem_type(types: &Types, kernel: &str, params: &[u32]) -> Option<Elem> {
    let t = types.params(kernel)?;
    params.iter().find_map(|&p| match t.get(p as usize) {
        Some(Param::Pointer(Some(e))) => Some(*e),
        _ => None,
    })
}

/// The first differing element of two byte strings.
pub fn first_element(a: &[u8], b: &[u8], elem: Option<Elem>, width: Option<u64>) -> Option<ElementDiff> {
    let size = elem.map(Elem::size).unwrap_or(1);
    let n = a.len().min(b.len()) / size;
    let mut first = None;
    let mut differing = 0u64;
    for k in 0..n {
        if a[k * size..(k + 1) * size] != b[k * size..(k + 1) * size] {
            differing += 1;
            first.get_or_insert(k);
        }
    }
    if a.len() != b.len() && first.is_none() {
        first = Some(n);
    }
    let k = first?;
    let show = |v: &[u8]| -> String {
        let Some(bytes) = v.get(k * size..(k + 1) * size) else { return "(absent)".into() };
        match elem {
            Some(e) => e.format(bytes),
            None => {
                let w = k & !3;
                let word = v
                    .get(w..w + 4)
                    .map(|x| format!(", aligned u32 at {w}: 0x{:08x}", u32::from_le_bytes(x.try_into().unwrap())))
                    .unwrap_or_default();
                format!("0x{:02x}{word}", bytes[0])
            }
        }
    };
    Some(ElementDiff {
        elem: elem.map(|e| e.name().to_string()).unwrap_or_else(|| "bytes".into()),
        index: k as u64,
        byte_offset: (k * size) as u64,
        a: show(a),
        b: show(b),
        differing,
        total: n as u64,
        xy: width.filter(|&w| w > 0).map(|w| (k as u64 % w, k as u64 / w)),
    })
}

/// The dumped bytes of the first difference in a trace: the launch `n` (or copy) with
/// the divergent buffer's name; also checks that its hash is the one compared.
fn dumped(t: &Trace, e: &Event, buffer: Option<&BufDiff>, want_hash: &str) -> Result<Vec<u8>, String> {
    let found = t.events.iter().find(|x| match (x, e) {
        (Event::Launch(p), Event::Launch(q)) => p.n == q.n,
        (Event::Copy(p), Event::Copy(q)) => p.n == q.n,
        _ => false,
    });
    let (hash, dump) = match (found, buffer) {
        (Some(Event::Launch(l)), Some(bd)) => match l.written.iter().find(|b| b.name == bd.name) {
            Some(b) => (b.hash.clone(), b.dump),
            None => return Err(format!("{} of {} has no buffer {}", e.describe(), t.path.display(), bd.name)),
        },
        (Some(Event::Copy(c)), _) => (c.hash.clone(), c.dump),
        _ => return Err(format!("{} is not in {}", e.describe(), t.path.display())),
    };
    if hash != want_hash {
        return Err(format!(
            "{} ran differently in {} (hash {hash}, first run {want_hash}): the program is not deterministic, so no element is given",
            e.describe(),
            t.path.display()
        ));
    }
    let d = dump.ok_or_else(|| format!("{} has no dumped bytes (EMU_CUDA_TRACE_DUMP)", t.path.display()))?;
    t.read_dump(&d).map_err(|e| format!("{e:#}"))
}

fn fill_element(xa: &Trace, xb: &Trace, types: &Types, r: &mut Bisection, width: Option<u64>) {
    let Some(f) = r.first.as_mut() else { return };
    let (ha, hb, elem) = match (&f.a, &f.b, &f.buffer) {
        (Event::Launch(la), Event::Launch(lb), Some(bd)) => (
            bd.hash_a.clone(),
            bd.hash_b.clone(),
            elem_type(types, &la.kernel, &bd.params).or_else(|| elem_type(types, &lb.kernel, &bd.params)),
        ),
        (Event::Copy(ca), Event::Copy(cb), _) => (ca.hash.clone(), cb.hash.clone(), None),
        _ => {
            f.element_note = Some("the first difference is between a launch and a copy: no element to compare".into());
            return;
        }
    };
    match (dumped(xa, &f.a, f.buffer.as_ref(), &ha), dumped(xb, &f.b, f.buffer.as_ref(), &hb)) {
        (Ok(a), Ok(b)) => {
            f.element = first_element(&a, &b, elem, width);
            if f.element.is_none() {
                f.element_note = Some(
                    "the dumped bytes are equal although the hashes differ (a hash collision cannot produce this; the dump is corrupt?)"
                        .into(),
                );
            }
        }
        (Err(e), _) | (_, Err(e)) => f.element_note = Some(e),
    }
}

/// Traces given as files: the element from their own dumps, when they have them.
pub fn element_from_dumps(ta: &Trace, tb: &Trace, types: &Types, r: &mut Bisection, width: Option<u64>) {
    fill_element(ta, tb, types, r, width);
    if let Some(f) = r.first.as_mut() {
        if f.element.is_none() {
            let (da, db) = f.dump_keys();
            let why = f.element_note.take().unwrap_or_default();
            f.element_note = Some(format!("{why}; run both again with EMU_CUDA_TRACE_DUMP={da} (A) and ={db} (B), or use parity bisect --run, for the first differing element"));
        }
    }
}

/// --run: the element from the second runs' dumps.
pub fn element_from_rerun(xa: &Trace, xb: &Trace, types: &Types, r: &mut Bisection, width: Option<u64>) {
    fill_element(xa, xb, types, r, width);
}
