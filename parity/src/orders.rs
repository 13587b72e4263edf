//! Block orders (`parity frames --block-orders`): the CUDA side runs once per order of
//! the emulated driver's blocks (EMU_CUDA_BLOCK_ORDER=forward|reverse|shuffle:SEED) and
//! every metric of every frame is compared bit for bit between the orders. A value that
//! changes is an order-dependent result (float atomics summed in block order, a race
//! between blocks): a defect a GPU shows as run-to-run noise, flagged here (exit code 1).

use crate::compare::{compare, Comparison, Kind, Selection};
use crate::num::g17;
use crate::output::Table;
use crate::report::write_atomic;
use crate::tolerance;
use anyhow::{bail, Result};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// Checks one EMU_CUDA_BLOCK_ORDER value: `forward`, `reverse` or `shuffle:SEED`.
pub fn check_order(o: &str) -> Result<()> {
    match o {
        "forward" | "reverse" => Ok(()),
        _ => match o.strip_prefix("shuffle:") {
            Some(seed) if seed.parse::<u64>().is_ok() => Ok(()),
            _ => bail!("block order '{o}': expected forward, reverse or shuffle:SEED (SEED an unsigned integer)"),
        },
    }
}

/// Checks a `--block-orders` list: at least two distinct valid orders.
pub fn check_orders(orders: &[String]) -> Result<()> {
    for o in orders {
        check_order(o)?;
    }
    if orders.len() < 2 {
        bail!("--block-orders needs at least two orders to compare (e.g. forward,reverse,shuffle:1)");
    }
    for (i, o) in orders.iter().enumerate() {
        if orders[..i].contains(o) {
            bail!("--block-orders: '{o}' is given twice");
        }
    }
    Ok(())
}

/// A file-name-safe label suffix of an order: `shuffle:7` -> `shuffle-7`.
pub fn slug(order: &str) -> String {
    order.replace(':', "-")
}

/// The outputs of the CUDA run under each order (the first is the reference order).
pub struct OrderRuns {
    pub orders: Vec<String>,
    pub tables: Vec<Table>,
}

/// What changed between orders.
pub struct OrderCheck {
    pub orders: Vec<String>,
    /// First order against each other order, exact.
    pub comps: Vec<Comparison>,
}

/// One metric that changed between orders.
pub struct Changed {
    pub metric: String,
    /// Frame numbers where some order gave another value.
    pub frames: Vec<u64>,
    /// The orders that differ from the first one on this metric.
    pub orders: Vec<String>,
    pub max_ulp: u64,
    pub max_abs: f64,
}

impl OrderCheck {
    pub fn new(runs: &OrderRuns, sel: &Selection) -> Result<OrderCheck> {
        let exact = tolerance::Table::exact();
        let comps = runs.tables[1..]
            .iter()
            .zip(&runs.orders[1..])
            .map(|(t, o)| compare(&runs.orders[0], &runs.tables[0], o, t, &exact, sel))
            .collect::<Result<Vec<_>>>()?;
        Ok(OrderCheck { orders: runs.orders.clone(), comps })
    }

    /// Metrics whose value changes between orders, in name order.
    pub fn changed(&self) -> Vec<Changed> {
        let mut by: BTreeMap<String, Changed> = BTreeMap::new();
        for c in &self.comps {
            for r in c.rows.iter().filter(|r| r.cell.kind != Kind::Identical) {
                let e = by.entry(r.metric.clone()).or_insert_with(|| Changed {
                    metric: r.metric.clone(),
                    frames: vec![],
                    orders: vec![],
                    max_ulp: 0,
                    max_abs: 0.0,
                });
                if !e.frames.contains(&r.frame) {
                    e.frames.push(r.frame);
                }
                if !e.orders.contains(&c.b_label) {
                    e.orders.push(c.b_label.clone());
                }
                e.max_ulp = e.max_ulp.max(r.cell.ulp.unwrap_or(u64::MAX));
                if let Some(x) = r.cell.abs {
                    e.max_abs = e.max_abs.max(x);
                }
            }
        }
        let mut v: Vec<Changed> = by.into_values().collect();
        for c in &mut v {
            c.frames.sort_unstable();
        }
        v
    }

    pub fn any_changed(&self) -> bool {
        self.comps.iter().any(|c| c.identical_frames != c.frames)
    }

    pub fn to_json(&self) -> Json {
        let changed = self.changed();
        let first = self.comps.iter().find_map(|c| c.first_diff().map(|r| (c, r)));
        json!({
            "orders": self.orders,
            "changed": !changed.is_empty(),
            "metrics_changed": changed.iter().map(|c| (c.metric.clone(), json!({
                "frames_changed": c.frames.len(),
                "frames": c.frames.iter().take(100).collect::<Vec<_>>(),
                "orders": c.orders,
                "max_ulp": c.max_ulp,
                "max_abs": c.max_abs,
            }))).collect::<serde_json::Map<_, _>>(),
            "first_change": first.map(|(c, r)| json!({"frame": r.frame, "metric": r.metric, "order_a": c.a_label, "a": g17(r.a),
                                                       "order_b": c.b_label, "b": g17(r.b), "kind": r.cell.kind.name(), "ulp": r.cell.ulp})),
            "stable_metrics": self.comps.first().map(|c| c.metrics.keys().filter(|k| !changed.iter().any(|x| &x.metric == *k)).cloned().collect::<Vec<_>>()),
        })
    }

    /// `block_orders.csv`: per frame and metric the value under each order and whether
    /// it changed.
    pub fn write_csv(&self, path: &Path) -> Result<()> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut head = vec!["frame".to_string(), "metric".to_string()];
        head.extend(self.orders.iter().cloned());
        head.push("changed".into());
        w.write_record(&head)?;
        if let Some(first) = self.comps.first() {
            for (j, r) in first.rows.iter().enumerate() {
                let mut rec = vec![r.frame.to_string(), r.metric.clone(), g17(r.a)];
                let mut changed = false;
                for c in &self.comps {
                    rec.push(g17(c.rows[j].b));
                    changed |= c.rows[j].cell.kind != Kind::Identical;
                }
                rec.push(if changed { "yes" } else { "no" }.into());
                w.write_record(&rec)?;
            }
        }
        write_atomic(path, w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?)
    }

    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "\n## Block orders: {}\n", self.orders.join(", "));
        let changed = self.changed();
        if changed.is_empty() {
            let _ = writeln!(s, "Every metric of every frame is bit-identical under every order.");
        } else {
            let _ = writeln!(
                s,
                "**ORDER-DEPENDENT**: {} metric(s) change with the order of the blocks (float atomics summed in block order, or a race between blocks).\n",
                changed.len()
            );
            let _ = writeln!(
                s,
                "| metric | frames changed | orders that differ from {} | max ULP | max abs |\n|---|---|---|---|---|",
                self.orders[0]
            );
            for c in &changed {
                let _ = writeln!(
                    s,
                    "| {} | {} ({}) | {} | {} | {} |",
                    c.metric,
                    c.frames.len(),
                    frames_list(&c.frames),
                    c.orders.join(", "),
                    c.max_ulp,
                    g17(c.max_abs)
                );
            }
        }
        let _ = writeln!(s, "\nFile: `block_orders.csv` (every frame and metric under every order).");
        s
    }

    /// Lines for stdout.
    pub fn print(&self) {
        let changed = self.changed();
        if changed.is_empty() {
            println!("block orders {}: every output identical under every order", self.orders.join(","));
        } else {
            println!("block orders {}: ORDER-DEPENDENT outputs:", self.orders.join(","));
            for c in &changed {
                println!(
                    "  {:<28} {} frame(s) change ({}) under {}; max {} ULP",
                    c.metric,
                    c.frames.len(),
                    frames_list(&c.frames),
                    c.orders.join(", "),
                    c.max_ulp
                );
            }
        }
    }
}

fn frames_list(f: &[u64]) -> String {
    let mut s = f.iter().take(8).map(|x| x.to_string()).collect::<Vec<_>>().join(",");
    if f.len() > 8 {
        s.push_str(",...");
    }
    format!("frames {s}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_lists() {
        assert!(check_orders(&["forward".into(), "reverse".into(), "shuffle:12".into()]).is_ok());
        assert!(check_orders(&["forward".into()]).is_err());
        assert!(check_orders(&["forward".into(), "forward".into()]).is_err());
        let e = check_orders(&["forward".into(), "sideways".into()]).unwrap_err().to_string();
        assert!(e.contains("sideways") && e.contains("shuffle:SEED"), "{e}");
        assert!(check_order("shuffle:x").is_err());
        assert!(check_order("shuffle").is_err());
        assert_eq!(slug("shuffle:3"), "shuffle-3");
    }

    #[test]
    fn flags_the_frames_and_metrics_that_change() {
        let t = |v: f64| {
            crate::output::parse(
                &format!(r#"{{"frames":[{{"frameNum":0,"metrics":{{"x":1,"y":2}}}},{{"frameNum":1,"metrics":{{"x":{v},"y":2}}}}]}}"#),
                "t",
            )
            .unwrap()
        };
        let runs = OrderRuns {
            orders: vec!["forward".into(), "reverse".into(), "shuffle:1".into()],
            tables: vec![t(0.5), t(0.5), t(0.5000000000000001)],
        };
        let c = OrderCheck::new(&runs, &Selection::default()).unwrap();
        assert!(c.any_changed());
        let ch = c.changed();
        assert_eq!(ch.len(), 1);
        assert_eq!(ch[0].metric, "x");
        assert_eq!(ch[0].frames, vec![1]);
        assert_eq!(ch[0].orders, vec!["shuffle:1".to_string()]);
        assert_eq!(ch[0].max_ulp, 1);
        let j = c.to_json();
        assert_eq!(j["changed"], true);
        assert_eq!(j["first_change"]["frame"], 1);
        assert_eq!(j["stable_metrics"], json!(["y"]));
        let same = OrderRuns { orders: vec!["forward".into(), "reverse".into()], tables: vec![t(0.5), t(0.5)] };
        let c = OrderCheck::new(&same, &Selection::default()).unwrap();
        assert!(!c.any_changed() && c.changed().is_empty());
        assert!(c.markdown().contains("bit-identical"));
    }
}
