//! Pass `cfg`: the basic blocks of a function and their successors. A block starts at a
//! label or after a branch, return or exit; the contraction model walks it, and a later
//! pass (regions between barriers as loops over threads) will too.

use crate::resolve::{Func, Node, Op};

/// A basic block: the node range `[start, end)` of the flat body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// First node.
    pub start: usize,
    /// One past the last node.
    pub end: usize,
    /// Successor blocks.
    pub succs: Vec<usize>,
}

/// The control-flow graph of one function.
#[derive(Clone, Debug, Default)]
pub struct Cfg {
    /// Blocks in body order; block 0 is the entry.
    pub blocks: Vec<Block>,
    /// The block of every node.
    pub block_of: Vec<usize>,
}

impl Cfg {
    /// Predecessors of every block.
    pub fn preds(&self) -> Vec<Vec<usize>> {
        let mut p = vec![Vec::new(); self.blocks.len()];
        for (i, b) in self.blocks.iter().enumerate() {
            for &s in &b.succs {
                p[s].push(i);
            }
        }
        p
    }

    /// The dominators of every block (`dom[b][a]`: every path from the entry to `b` passes
    /// through `a`; a block unreachable from the entry is dominated by every block).
    pub fn dominators(&self) -> Vec<Vec<bool>> {
        let nb = self.blocks.len();
        let preds = self.preds();
        let mut dom = vec![vec![true; nb]; nb];
        if nb == 0 {
            return dom;
        }
        dom[0] = (0..nb).map(|a| a == 0).collect();
        let mut changed = true;
        while changed {
            changed = false;
            for b in 1..nb {
                let mut d = vec![true; nb];
                for &p in &preds[b] {
                    for a in 0..nb {
                        d[a] &= dom[p][a];
                    }
                }
                d[b] = true;
                if d != dom[b] {
                    dom[b] = d;
                    changed = true;
                }
            }
        }
        dom
    }
}

fn ends_block(op: &str) -> bool {
    matches!(op, "bra" | "brx" | "ret" | "exit" | "trap")
}

/// Builds the graph.
pub fn build(f: &Func) -> Cfg {
    let n = f.body.len();
    let mut starts = vec![false; n + 1];
    if n > 0 {
        starts[0] = true;
    }
    for (i, node) in f.body.iter().enumerate() {
        match node {
            Node::Label(_) => starts[i] = true,
            Node::Instr(ins) if ends_block(&ins.src.op) => starts[i + 1] = true,
            _ => {}
        }
    }
    let mut blocks = Vec::new();
    let mut block_of = vec![0; n];
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && !starts[j] {
            j += 1;
        }
        for b in block_of.iter_mut().take(j).skip(i) {
            *b = blocks.len();
        }
        blocks.push(Block { start: i, end: j, succs: Vec::new() });
        i = j;
    }
    let mut label_block = vec![usize::MAX; f.labels.len()];
    for (bi, b) in blocks.iter().enumerate() {
        for node in &f.body[b.start..b.end] {
            if let Node::Label(l) = node {
                label_block[*l] = bi;
            }
        }
    }
    let nb = blocks.len();
    let mut all_succs = Vec::with_capacity(nb);
    for (bi, b) in blocks.iter().enumerate() {
        let mut succs = Vec::new();
        let last = if b.end > b.start { f.body.get(b.end - 1) } else { None };
        let mut falls = true;
        if let Some(Node::Instr(ins)) = last {
            let guarded = ins.guard.is_some();
            match ins.src.op.as_str() {
                "bra" => {
                    if let Some(Op::Label(l)) = ins.args.first() {
                        if label_block[*l] != usize::MAX {
                            succs.push(label_block[*l]);
                        }
                    }
                    falls = guarded;
                }
                "brx" => {
                    if let Some(Op::Named(n)) = ins.args.get(1) {
                        for l in f.branch_targets.get(n).into_iter().flatten() {
                            succs.push(label_block[*l]);
                        }
                    }
                    falls = guarded;
                }
                "ret" | "exit" | "trap" => falls = guarded,
                _ => {}
            }
        }
        if falls && bi + 1 < nb {
            succs.push(bi + 1);
        }
        succs.sort_unstable();
        succs.dedup();
        all_succs.push(succs);
    }
    for (b, s) in blocks.iter_mut().zip(all_succs) {
        b.succs = s;
    }
    Cfg { blocks, block_of }
}
