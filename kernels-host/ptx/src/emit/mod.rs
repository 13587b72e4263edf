//! Pass `emit`: the C++ translation unit of a module.
//!
//! One C++ function per `.func` (`F<i>(Thread &, uint8_t *const *params)`: the return
//! and parameter buffers by pointer, so direct and indirect calls share one signature)
//! and per `.entry` (`K<i>(Thread &, const uint8_t *params)`), a runner per kernel with
//! the ABI's `run` signature (the parameter buffer copied once, then the block's threads
//! `[first, first+count)` one after another, as kernels-host's runners do), module
//! variables as host arrays, and the descriptor `simtwin_module_v2`.

mod func;
mod mbarrier;
mod ops;
mod texture;

use crate::ast::{FloatLit, Init, Space};
use crate::contract::Fusions;
use crate::layout::Layout;
use crate::resolve::{Module, Node, Op};
use crate::uniform::{Path, Plan};
use crate::{Error, GlobalInfo, KernelInfo, Options, Translation};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write;

/// The C++ identifier of a PTX name: `%`, `$`, `.` and `_` escaped so that distinct PTX
/// names stay distinct.
pub(crate) fn ident(prefix: &str, name: &str) -> String {
    let mut s = String::with_capacity(prefix.len() + name.len() + 4);
    s.push_str(prefix);
    for c in name.chars() {
        match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' => s.push(c),
            '_' => s.push_str("__"),
            '%' => s.push_str("_p"),
            '$' => s.push_str("_d"),
            '.' => s.push_str("_o"),
            other => {
                let _ = write!(s, "_x{:x}_", other as u32);
            }
        }
    }
    s
}

/// A runner's table: `static const TY NAME[] = {ITEMS END};` (each item ends in a comma; the
/// end entry keeps an empty table valid C++).
pub(crate) fn c_table(ty: &str, name: &str, items: impl Iterator<Item = String>, end: &str) -> String {
    let mut out = format!("static const {ty} {name}[] = {{");
    items.for_each(|i| out.push_str(&i));
    out.push_str(end);
    out.push_str("};\n");
    out
}

/// A C string literal of `s`.
pub(crate) fn c_str(s: &str) -> String {
    let mut o = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' => o.push_str("\\\""),
            b'\\' => o.push_str("\\\\"),
            0x20..=0x7e => o.push(b as char),
            _ => {
                let _ = write!(o, "\\{b:03o}");
            }
        }
    }
    o.push('"');
    o
}

/// An address an initializer stores: (byte offset in the variable, target name, addend).
pub(crate) type Reloc = (u64, String, i64);

/// The bytes of a numeric initializer for a variable of element type `ty` (`size` bytes
/// per element), plus address relocations.
pub(crate) fn init_bytes(init: &Init, elem: crate::ast::Ty, total: u64, line: u32) -> Result<(Vec<u8>, Vec<Reloc>), Error> {
    let esize = elem.size() as u64;
    let mut bytes = Vec::new();
    let mut relocs = Vec::new();
    fn flat<'a>(i: &'a Init, out: &mut Vec<&'a Init>) {
        match i {
            Init::List(v) => v.iter().for_each(|x| flat(x, out)),
            other => out.push(other),
        }
    }
    let mut items = Vec::new();
    flat(init, &mut items);
    for it in items {
        let at = bytes.len() as u64;
        let v: u64 = match it {
            Init::Int(v) => {
                if elem.float() {
                    match elem {
                        crate::ast::Ty::F32 => (*v as i64 as f32).to_bits() as u64,
                        crate::ast::Ty::F64 => (*v as i64 as f64).to_bits(),
                        _ => *v,
                    }
                } else {
                    *v
                }
            }
            Init::Float(f) => float_bits(*f, elem),
            Init::Addr { name, offset, .. } => {
                relocs.push((at, name.clone(), *offset));
                0
            }
            Init::List(_) => 0,
        };
        bytes.extend_from_slice(&v.to_le_bytes()[..esize.min(8) as usize]);
        if esize > 8 {
            bytes.extend(std::iter::repeat_n(0, (esize - 8) as usize));
        }
    }
    if bytes.len() as u64 > total && total > 0 {
        return Err(Error::parse(line, format!("initializer of {} bytes for a variable of {total}", bytes.len())));
    }
    Ok((bytes, relocs))
}

/// The bits of a float literal as a value of type `ty` (f32/f64 numerically converted;
/// for bit and integer types the literal's own bits).
pub(crate) fn float_bits(f: FloatLit, ty: crate::ast::Ty) -> u64 {
    use crate::ast::Ty;
    let as_f64 = |f: FloatLit| match f {
        FloatLit::F32(b) => f32::from_bits(b) as f64,
        FloatLit::F64(b) => f64::from_bits(b),
        FloatLit::Dec(v) => v,
    };
    match ty {
        Ty::F32 => match f {
            FloatLit::F32(b) => b as u64,
            other => (as_f64(other) as f32).to_bits() as u64,
        },
        Ty::F64 => match f {
            FloatLit::F64(b) => b,
            other => as_f64(other).to_bits(),
        },
        _ => match f {
            FloatLit::F32(b) => b as u64,
            FloatLit::F64(b) => b,
            FloatLit::Dec(v) => {
                if ty.size() == 4 {
                    (v as f32).to_bits() as u64
                } else {
                    v.to_bits()
                }
            }
        },
    }
}

/// Emits the translation units: unit 0 holds the module variables, the runners and the
/// descriptor; the function bodies are spread over `opts.units` units (0: by size and
/// the machine's cores) that the host compiler builds in parallel. Every name is in the
/// namespace `simtwin_module`, hidden: nothing but `simtwin_module_v2` is exported.
pub fn emit(m: &Module, layout: &Layout, fused: &[Fusions], plans: &[Plan], opts: &Options) -> Result<Translation, Error> {
    emit_as(m, layout, fused, plans, opts, false)
}

/// Emits a module of device functions as a host library to link into other code (the
/// libdevice functions twins call, `kernels-host/libdevice/`): the functions and module
/// variables as [`emit`] makes them, no runners, descriptor or runtime slot, and for
/// every `.visible .func` a C entry point `__simtwin_ptxlib_NAME(uint8_t *const *P)` (NAME
/// as in the PTX where it is a C identifier, else escaped as [`ident`] does)
/// (hidden) taking the return buffers, then the parameter buffers, as the functions do.
/// The functions run with an empty `Thread`: they may use registers, local memory and
/// module variables, not special registers, shared memory or the runtime table.
pub fn emit_library(m: &Module, layout: &Layout, fused: &[Fusions], plans: &[Plan], opts: &Options) -> Result<Translation, Error> {
    emit_as(m, layout, fused, plans, opts, true)
}

fn emit_as(m: &Module, layout: &Layout, fused: &[Fusions], plans: &[Plan], opts: &Options, library: bool) -> Result<Translation, Error> {
    let mut head = String::new();
    let _ = writeln!(head, "// Generated by simtwin-ptx {} from {}: do not edit.", crate::TRANSLATOR_VERSION, opts.name);
    head.push_str("#include \"ptx_rt.h\"\n#pragma GCC visibility push(hidden)\nnamespace simtwin_module {\nusing namespace ptx;\n");
    let mut out = String::with_capacity(64 * 1024);
    let mut decls = String::new();
    let mut notes = Vec::new();
    if !library {
        out.push_str(
            "} // namespace simtwin_module\nnamespace __simtwin { const simtwin_runtime_t *rt = nullptr; }\nnamespace simtwin_module {\n",
        );
    }
    // Module variables (global, const): host arrays. Shared ones live in windows.
    let mut relocs_all = Vec::new();
    for (i, v) in m.vars.iter().enumerate() {
        let var = &v.var;
        if !matches!(var.space, Space::Global | Space::Const) {
            continue;
        }
        if var.opaque.is_some() {
            // Texture/sampler/surface references: an 8-byte slot holding the handle.
        }
        let size = var.size().max(1);
        let align = var.alignment().max(16);
        let name = ident("G", &var.name);
        let _ = writeln!(decls, "extern uint8_t {name}[{size}];");
        match &var.init {
            Some(init) if var.linkage != crate::ast::Linkage::Extern => {
                let (bytes, relocs) = init_bytes(init, var.ty, var.size(), var.line)?;
                let _ = write!(out, "alignas({align}) uint8_t {name}[{size}] = {{");
                for (k, b) in bytes.iter().enumerate() {
                    if k % 32 == 0 {
                        out.push('\n');
                    }
                    let _ = write!(out, "{b},");
                }
                out.push_str("};\n");
                for (at, target, add) in relocs {
                    relocs_all.push((i, at, target, add, var.line));
                }
            }
            _ => {
                let _ = writeln!(out, "alignas({align}) uint8_t {name}[{size}];");
            }
        }
    }
    // Shared-offset tables per kernel (device functions read them through Thread::soff).
    for (k, kl) in layout.kernels.iter().enumerate() {
        // Declared in every unit: an inlined kernel's runner may be in another.
        let _ = writeln!(decls, "extern const uint32_t SOFF{k}[{}];", m.vars.len().max(1));
        let _ = write!(out, "const uint32_t SOFF{k}[{}] = {{", m.vars.len().max(1));
        for o in &kl.shared {
            let _ = write!(out, "{},", o.unwrap_or(u32::MAX as u64));
        }
        out.push_str("};\n");
    }
    // Barrier-free kernels whose address no instruction takes: the body goes into its
    // runner's unit, always inlined into the runner's loop over the threads (no call per
    // thread; the block's values and the parameters stay in registers across threads).
    let inlined: HashSet<usize> = layout
        .kernels
        .iter()
        .zip(plans)
        .filter(|(kl, plan)| plan.path == Path::Plain && !address_taken(m, kl.func))
        .map(|(kl, _)| kl.func)
        .collect();
    // Forward declarations (every unit has them).
    for (fi, f) in m.funcs.iter().enumerate() {
        if f.decl.entry {
            if f.decl.body.is_some() && !inlined.contains(&fi) {
                let _ = writeln!(decls, "void K{fi}(Thread &T, const uint8_t *P0, const simtwin_dim3_t &TI);");
            }
        } else if f.decl.body.is_some() {
            let _ = writeln!(decls, "void F{fi}(Thread &T, uint8_t *const *P);");
        }
    }
    // Bodies.
    let mut sfu_by_func: Vec<Vec<String>> = vec![Vec::new(); m.funcs.len()];
    let mut exits_in_funcs = false;
    let mut bodies: Vec<String> = Vec::new();
    // Where an inlined kernel's body is in `bodies` (its runner joins it there).
    let mut body_at: HashMap<usize, usize> = HashMap::new();
    // An inlined kernel's alignment checks its runner makes once (`align`).
    let mut checks_of: HashMap<usize, BTreeSet<crate::align::Check>> = HashMap::new();
    // An inlined kernel's row condition for running its threads as vector lanes, or why
    // they do not (`lanes`).
    let mut lanes_of: HashMap<usize, Result<String, String>> = HashMap::new();
    // The initialized `.const` variables' bytes, and per kernel (by function) the
    // condition under which its runner may run its `.const` loads as literals.
    let initial = crate::constants::Initial::of(m);
    let mut guards: HashMap<usize, String> = HashMap::new();
    // The same for a loop-path kernel's `KL` (its runner's, `RL`).
    let mut loop_guards: HashMap<usize, String> = HashMap::new();
    let mut folded: Vec<String> = Vec::new();
    for (fi, f) in m.funcs.iter().enumerate() {
        if f.decl.body.is_none() {
            continue;
        }
        let kernel_layout = layout.kernels.iter().position(|k| k.func == fi);
        let mut e = func::FnEmitter::new(m, fi, kernel_layout.map(|k| &layout.kernels[k]), &fused[fi], opts);
        e.inline_entry = inlined.contains(&fi);
        if let (true, Some(k)) = (e.inline_entry, kernel_layout) {
            e.aligned = crate::align::proven(f, &layout.kernels[k].params);
            e.folds = crate::constants::folds(f, &initial);
            fold_guard(m, &initial, &e.folds, &mut guards, &mut folded, fi);
            checks_of.insert(fi, crate::align::runner_checks(&e.aligned));
            let lanes = match (plans[k].calm, e.aligned.is_empty()) {
                (true, false) => crate::lanes::plan(f, &layout.kernels[k].params, &e.aligned),
                (false, _) => Err("its threads may wait or spin".into()),
                (true, true) => Err("no global access at a parameter plus a multiple of its size".into()),
            };
            match lanes {
                Ok(p) => {
                    lanes_of.insert(fi, Ok(p.check.clone()));
                    e.lanes = Some(p);
                }
                Err(why) => {
                    lanes_of.insert(fi, Err(why));
                }
            }
        }
        e.body()?;
        exits_in_funcs |= e.uses_exit && !f.decl.entry;
        sfu_by_func[fi] = e.sfu.clone();
        if e.inline_entry {
            body_at.insert(fi, bodies.len());
        }
        bodies.push(e.out);
    }
    // The loop-path variants of the kernels that take it (`uniform`), their frames
    // declared in every unit; each in the unit of its runner, which inlines it (one
    // call site: a thread's step is no call, its runner's loop state stays in registers).
    let mut loop_bodies = String::new();
    // A loop-path kernel's alignment checks its runner makes once (`align`).
    let mut loop_checks: HashMap<usize, BTreeSet<crate::align::Check>> = HashMap::new();
    for (k, kl) in layout.kernels.iter().enumerate() {
        let plan = &plans[k];
        if plan.path != Path::Loops {
            continue;
        }
        let fi = kl.func;
        let mut e = func::FnEmitter::new(m, fi, Some(kl), &fused[fi], opts);
        e.aligned = crate::align::proven(&m.funcs[fi], &kl.params);
        e.aligned_arg = "true";
        e.folds = crate::constants::folds(&m.funcs[fi], &initial);
        fold_guard(m, &initial, &e.folds, &mut loop_guards, &mut folded, fi);
        loop_checks.insert(k, crate::align::runner_checks(&e.aligned));
        let frame = e.body_loops(k, plan)?;
        decls.push_str(&frame);
        loop_bodies.push_str(&e.out);
        if plan.probe {
            let mut p = func::FnEmitter::new(m, fi, Some(kl), &fused[fi], opts);
            p.body_probe(k, plan)?;
            loop_bodies.push_str(&p.out);
        }
    }
    // Address relocations of initializers.
    if !relocs_all.is_empty() {
        out.push_str("__attribute__((constructor)) void relocate() {\n");
        for (i, at, target, add, line) in &relocs_all {
            let name = ident("G", &m.vars[*i].var.name);
            let addr = if let Some(t) = m.vars.iter().find(|v| v.var.name == *target) {
                if !matches!(t.var.space, Space::Global | Space::Const) {
                    return Err(Error::parse(
                        *line,
                        format!("initializer takes the address of {target}, which is not a global or constant variable"),
                    ));
                }
                format!("(uint64_t)(uintptr_t){}", ident("G", target))
            } else if let Some(fi) = m.func(target) {
                format!("(uint64_t)(uintptr_t)&F{fi}")
            } else {
                return Err(Error::parse(*line, format!("initializer names {target}, which is not declared")));
            };
            let _ = writeln!(out, "  store<uint64_t>((uint64_t)(uintptr_t)({name} + {at}), {addr} + (uint64_t){add}ll);");
        }
        out.push_str("}\n");
    }
    if library {
        out.push_str("} // namespace simtwin_module\n");
        for (fi, f) in m.funcs.iter().enumerate() {
            if f.decl.entry || f.decl.body.is_none() || f.decl.linkage != crate::ast::Linkage::Visible {
                continue;
            }
            if !sfu_by_func[fi].iter().all(|form| crate::sfu::exact(form)) {
                notes.push(format!("not device-exact: {} uses {}", f.decl.name, sfu_by_func[fi].join(", ")));
            }
            let name = &f.decl.name;
            let entry = if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                format!("__simtwin_ptxlib_{name}")
            } else {
                ident("__simtwin_ptxlib_", name)
            };
            let _ = writeln!(
                out,
                "extern \"C\" void {entry}(uint8_t *const *P) {{ simtwin_module::Thread T{{}}; simtwin_module::F{fi}(T, P); }}"
            );
        }
        out.push_str("#pragma GCC visibility pop\n");
        return Ok(Translation {
            units: split_units(&head, &decls, bodies, out, opts.units),
            kernels: Vec::new(),
            globals: Vec::new(),
            notes,
        });
    }
    out.push_str(&loop_bodies);
    // Runners.
    let mut kernels = Vec::new();
    for (k, kl) in layout.kernels.iter().enumerate() {
        let f = &m.funcs[kl.func];
        let fi = kl.func;
        let mut run = String::new();
        // A lanes runner asks for the vectoriser's cost model that versions a loop on
        // aliasing (-O2's "very cheap" model never does).
        let attr = if matches!(lanes_of.get(&fi), Some(Ok(_))) { "__attribute__((optimize(\"vect-cost-model=dynamic\"))) " } else { "" };
        let _ = writeln!(run, "{attr}void R{k}{RUN_PARAMS} {{");
        runner_setup(&mut run, k, kl);
        let body = |targs: &str| {
            if exits_in_funcs {
                format!("try {{ K{fi}{targs}(T, P0, TI); }} catch (const ptx::Exit &) {{}}")
            } else {
                format!("K{fi}{targs}(T, P0, TI);")
            }
        };
        // The thread's index goes into `ctx` too where the kernel calls a function (which
        // reads it there); the kernel's own code reads `TI`.
        let calls = f.body.iter().any(|n| matches!(n, crate::resolve::Node::Instr(i) if i.src.op == "call"));
        let each = format!("for_each_thread<{}, {calls}>(ctx, first, n, [&](const simtwin_dim3_t &TI)", !plans[k].calm);
        // The runner's checks (`align`'s alignments, `constants`' unwritten variables):
        // where they hold, the kernel's code runs with template argument `A` true.
        let fast = match (checks_of.get(&fi).filter(|c| !c.is_empty()), guards.get(&fi)) {
            (Some(c), Some(g)) => Some(format!("({}) == 0 && {g}", check_expr(c))),
            (Some(c), None) => Some(format!("({}) == 0", check_expr(c))),
            (None, Some(g)) => Some(g.clone()),
            (None, None) => None,
        };
        match (fast, lanes_of.get(&fi).and_then(|l| l.as_ref().ok())) {
            // As below, and the threads of a row run as vector lanes where no affine index
            // of the row reaches 2^31 (`lanes`), unless the executor asks for one thread
            // at a time (a fault's replay: `ctx->lanes`).
            (Some(fast), Some(rows)) => {
                let each_row = "for_each_row(ctx, first, n, [&](const simtwin_dim3_t &TI, uint32_t t, uint32_t xe)";
                let _ = writeln!(run, "  if ({fast} && ctx->lanes == 0) {each_row} {{");
                let _ = writeln!(run, "    if ({rows}) lanes_row(ctx, t, TI, xe, [&](const simtwin_dim3_t &TI, uint64_t TX) {{ K{fi}<true, true>(T, P0, TI, TX); }});");
                let _ = writeln!(
                    run,
                    "    else plain_row(ctx, t, TI, xe, [&](const simtwin_dim3_t &TI) {{ K{fi}<true, false>(T, P0, TI); }});\n  }});"
                );
                let _ = writeln!(run, "  else if ({fast}) {each} {{ {} }});", body("<true, false>"));
                let _ = writeln!(run, "  else {each} {{ {} }});\n}}", body("<false, false>"));
            }
            // The alignment of accesses at a pointer parameter plus a multiple of their
            // size, the same for every thread (`align`), and the `.const` variables the
            // code reads as literals (`constants`): checked here, once.
            (Some(fast), None) => {
                let _ = writeln!(run, "  if ({fast}) {each} {{ {} }});", body("<true>"));
                let _ = writeln!(run, "  else {each} {{ {} }});\n}}", body("<false>"));
            }
            (None, _) => {
                let _ = writeln!(run, "  {each} {{ {} }});\n}}", body(""));
            }
        }
        match body_at.get(&fi) {
            // An inlined kernel's runner goes with its body, wherever the units put it.
            Some(&b) => {
                let _ = writeln!(decls, "void R{k}{RUN_PARAMS};");
                bodies[b].push_str(&run);
            }
            None => out.push_str(&run),
        }
        if plans[k].path == Path::Loops {
            // The loop path's runner: a whole block in one call (a part of one, which
            // the executor never asks for here, runs as the plain runner does).
            // The split points' kinds (`func::sync_kind`), `LOOP_LITERAL` added to a
            // shuffle whose lane operand and clamp hold literals (`Plan::literal`: the
            // runner takes them from `LO`), `LOOP_NOPRED` to one whose predicate result
            // nothing reads; with warp collectives, a block that is not
            // whole warps runs on fibers (its last warp's collectives name lanes that do
            // not exist: the fiber path reports that).
            let kinds: Vec<u8> = plans[k]
                .syncs
                .iter()
                .map(|&n| match &f.body[n] {
                    crate::resolve::Node::Instr(i) => {
                        let mut kind = func::sync_kind(i);
                        if plans[k].literal.contains_key(&n) {
                            kind |= func::LOOP_LITERAL;
                        }
                        if plans[k].pred_unread.contains(&n) {
                            kind |= func::LOOP_NOPRED;
                        }
                        kind
                    }
                    crate::resolve::Node::Label(_) => 0,
                })
                .collect();
            let coll = kinds.iter().any(|&x| x != 0);
            out.push_str(&c_table("uint8_t", &format!("LK{k}"), kinds.iter().map(|x| format!("{x},")), "0"));
            // The literal shuffles' lane operand and clamp, two words per split point.
            let ops = plans[k].syncs.iter().map(|n| {
                let (b, c) = plans[k].literal.get(n).copied().unwrap_or((0, 0));
                format!("{b}u,{c}u,")
            });
            out.push_str(&c_table("uint32_t", &format!("LO{k}"), ops, "0u"));
            let _ = writeln!(out, "void RL{k}{RUN_PARAMS} {{");
            let _ = writeln!(
                out,
                "  const uint32_t all = ctx->block_dim.x * ctx->block_dim.y * ctx->block_dim.z;\n  if (first != 0 || n != all{}) {{ R{k}(params, ctx, first, n); return; }}",
                if coll { " || all % 32u != 0" } else { "" }
            );
            runner_setup(&mut out, k, kl);
            if let Some(checks) = loop_checks.get(&k).filter(|c| !c.is_empty()) {
                // The accesses `align` proved alike in every thread run unchecked here: a
                // block where one is misaligned runs on fibers, whose code checks each
                // access (its first thread to make it traps; nothing has run yet).
                let _ = writeln!(out, "  if (({}) != 0) {{ R{k}(params, ctx, first, n); return; }}", check_expr(checks));
            }
            if let Some(g) = loop_guards.get(&fi) {
                // `.const` loads run as literals here: a block that starts after the
                // program wrote one of those variables runs on fibers, whose code loads.
                let _ = writeln!(out, "  if (!{g}) {{ R{k}(params, ctx, first, n); return; }}");
            }
            if plans[k].late && !plans[k].elide.is_empty() {
                // Lanes may exit anywhere (`Plan::late`): no probe can tell which blocks
                // keep whole warps, so every block takes its elided shuffles as split points.
                let _ = writeln!(out, "  T.partial = 1u;");
            } else if plans[k].probe && plans[k].partial {
                // Early exits before the first split point: a block where a warp would
                // lose only some of its lanes takes its elided shuffles as split points.
                let _ =
                    writeln!(out, "  T.partial = whole_warp_exits<FR{k}>(ctx, [&](FR{k} &S) {{ return KP{fi}(T, P0, S); }}) ? 0u : 1u;");
            } else if plans[k].probe {
                // Early exits before the first split point: a block where a warp would
                // lose only some of its lanes runs on fibers (nothing has run yet).
                let _ = writeln!(
                    out,
                    "  if (!whole_warp_exits<FR{k}>(ctx, [&](FR{k} &S) {{ return KP{fi}(T, P0, S); }})) {{ R{k}(params, ctx, first, n); return; }}"
                );
            }
            let _ = writeln!(
                out,
                "  run_loops<FR{k}>(ctx, {}, LK{k}, LO{k}, LP{fi}, LT{fi}, [&](FR{k} &S, uint32_t at, const simtwin_dim3_t &TI) __attribute__((always_inline)) {{ return KL{fi}(T, P0, S, at, TI); }}, [&](FR{k} *fr, const uint32_t *ids, uint32_t nids, uint32_t at, const simtwin_dim3_t *idx) __attribute__((always_inline)) {{ return KS{fi}(T, P0, fr, ids, nids, at, idx); }}, [](uint32_t s) {{ return LS{fi}(s); }});\n}}",
                c_str(&opts.name)
            );
        }
        // SFU forms reachable from the kernel that are not modelled exactly.
        let mut inexact: Vec<String> =
            kl.reach.iter().flat_map(|g| sfu_by_func[*g].iter().cloned()).filter(|f| !crate::sfu::exact(f)).collect();
        inexact.sort();
        inexact.dedup();
        let (max_threads, reqntid) = match (f.decl.perf.maxntid, f.decl.perf.reqntid) {
            (_, Some(r)) => (r[0] * r[1] * r[2], Some(r)),
            (Some(x), None) => (x[0] * x[1] * x[2], None),
            _ => (0, None),
        };
        kernels.push(KernelInfo {
            name: f.decl.name.clone(),
            params: kl.params.iter().map(|&(s, o)| (s as u32, o as u32)).collect(),
            static_smem: kl.dyn_offset as u32,
            max_threads,
            min_blocks: f.decl.perf.minnctapersm.unwrap_or(0),
            reqntid,
            inexact_sfu: inexact,
            threads: plans[k].path.clone(),
            threads_why: match lanes_of.get(&kl.func) {
                Some(Ok(_)) => format!("{}; as vector lanes (a row's affine indices below 2^31)", plans[k].why),
                Some(Err(why)) => format!("{}; not as vector lanes: {why}", plans[k].why),
                None => plans[k].why.clone(),
            },
            refused: None,
        });
    }
    if exits_in_funcs {
        notes.push("exit inside a device function: threads end through a C++ exception".into());
    }
    if !folded.is_empty() {
        folded.sort();
        folded.dedup();
        notes.push(format!(
            "initialized .const loads as literals: {} (checked once per runner call: a block after the program wrote them loads them)",
            folded.join(", ")
        ));
    }
    // Descriptor.
    for (k, kl) in layout.kernels.iter().enumerate() {
        let f = &m.funcs[kl.func];
        let _ = write!(out, "const uint32_t PS{k}[] = {{");
        for (s, _) in &kl.params {
            let _ = write!(out, "{s},");
        }
        out.push_str("0};\n");
        let _ = write!(out, "const uint32_t PA{k}[] = {{");
        for p in &f.decl.params {
            let _ = write!(out, "{},", p.alignment());
        }
        out.push_str("0};\n");
    }
    out.push_str("const ::__simtwin::simtwin_kernel_t KERNELS[] = {\n");
    for (k, kl) in layout.kernels.iter().enumerate() {
        let f = &m.funcs[kl.func];
        let ki = &kernels[k];
        let _ = writeln!(
            out,
            "  {{{}, (const void *)&R{k}, &R{k}, {}, PS{k}, PA{k}, {}, {}}},",
            c_str(&f.decl.name),
            kl.params.len(),
            ki.max_threads,
            ki.min_blocks
        );
    }
    if layout.kernels.is_empty() {
        out.push_str("  {nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0, 0},\n");
    }
    out.push_str("};\n");
    out.push_str("const ::__simtwin::simtwin_global_t GLOBALS[] = {\n");
    let mut globals = Vec::new();
    for &i in &layout.exported {
        let v = &m.vars[i].var;
        let _ = writeln!(
            out,
            "  {{{}, (void *){}, {}ull, {}, 0}},",
            c_str(&v.name),
            ident("G", &v.name),
            v.size(),
            (v.space == Space::Const) as u32
        );
        globals.push(GlobalInfo { name: v.name.clone(), size: v.size(), constant: v.space == Space::Const });
    }
    if layout.exported.is_empty() {
        out.push_str("  {nullptr, nullptr, 0, 0, 0},\n");
    }
    out.push_str("};\n");
    // The loop path's runners, by kernel (null: the kernel keeps its own runner).
    out.push_str("typedef void (*loop_run_t)(void *const *, simtwin_thread_ctx_t *, uint32_t, uint32_t);\nconst loop_run_t LOOPS[] = {");
    for (k, _) in layout.kernels.iter().enumerate() {
        if plans[k].path == Path::Loops {
            let _ = write!(out, "&RL{k}, ");
        } else {
            out.push_str("nullptr, ");
        }
    }
    out.push_str("nullptr};\n");
    out.push_str("void bind_rt(const ::__simtwin::simtwin_runtime_t *r) { ::__simtwin::rt = r; }\n");
    out.push_str("::__simtwin::simtwin_thread_ctx_t **slot() { return &::__simtwin::tls_ctx; }\n");
    let _ = writeln!(
        out,
        "const ::__simtwin::simtwin_module_t MODULE = {{SIMTWIN_ABI_VERSION, {}, KERNELS, {}, GLOBALS, {}, \"\", BUILD_ID, &bind_rt, &slot}};",
        layout.kernels.len(),
        layout.exported.len(),
        c_str(&opts.name)
    );
    out.push_str("} // namespace simtwin_module\n#pragma GCC visibility pop\n");
    out.push_str("extern \"C\" __attribute__((visibility(\"default\"))) const ::__simtwin::simtwin_module_t *simtwin_module_v2() { return &simtwin_module::MODULE; }\n");
    out.push_str("extern \"C\" __attribute__((visibility(\"default\"))) const void *const *simtwin_ptx_loops_v1() { return (const void *const *)simtwin_module::LOOPS; }\n");
    let inexact: std::collections::BTreeSet<&String> = kernels.iter().flat_map(|k| k.inexact_sfu.iter()).collect();
    if !inexact.is_empty() {
        notes.push(format!(
            "not device-exact: the special-function unit's {} {} modelled by host math, not bit for bit",
            inexact.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "),
            if inexact.len() == 1 { "is" } else { "are" }
        ));
    }
    Ok(Translation { units: split_units(&head, &decls, bodies, out, opts.units), kernels, globals, notes })
}

/// A runner's parameters (the ABI's `run` signature).
const RUN_PARAMS: &str = "(void *const *params, simtwin_thread_ctx_t *ctx, uint32_t first, uint32_t n)";

/// A runner's first statements, the same in the plain and the loop-path runner of kernel
/// `k`: the parameter buffer copied once, the context published, the thread's `Thread`
/// with the block's values.
fn runner_setup(out: &mut String, k: usize, kl: &crate::layout::KernelLayout) {
    let _ = writeln!(out, "  alignas(16) uint8_t P0[{}];", kl.param_bytes.max(16));
    for (i, (size, off)) in kl.params.iter().enumerate() {
        if *size > 0 {
            let _ = writeln!(out, "  memcpy(P0 + {off}, params[{i}], {size});");
        }
    }
    let _ = writeln!(out, "  ::__simtwin::tls_ctx = ctx;");
    let _ = writeln!(
        out,
        "  Thread T{{ctx, (uint8_t *)ctx->dyn_smem - {dyn}, SOFF{k}, {dyn} + ctx->dyn_smem_size, 0, ctx->block_idx, ctx->block_dim, ctx->grid_dim}};",
        dyn = kl.dyn_offset
    );
}

/// Whether an instruction of the module takes the address of function `fi` (anything
/// but a direct call).
fn address_taken(m: &Module, fi: usize) -> bool {
    m.funcs.iter().flat_map(|f| &f.body).any(|node| match node {
        Node::Instr(i) => i.src.op != "call" && i.args.contains(&Op::Func(fi)),
        Node::Label(_) => false,
    })
}

/// Units: bodies spread by size over as many units as asked (0: a unit per ~160 KB of
/// C++, at most one per core), unit 0 also holding the module's own parts (`own`, which
/// closes the namespace and the visibility pragma itself).
fn split_units(head: &str, decls: &str, bodies: Vec<String>, own: String, units: usize) -> Vec<String> {
    let total: usize = bodies.iter().map(|b| b.len()).sum();
    let n = if units > 0 {
        units
    } else {
        let cores = std::thread::available_parallelism().map(|c| c.get()).unwrap_or(1);
        (total / 160_000 + 1).min(cores).max(1)
    };
    let mut parts: Vec<String> = vec![String::new(); n];
    let mut sizes = vec![0usize; n];
    sizes[0] = own.len();
    let mut order: Vec<usize> = (0..bodies.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(bodies[i].len()));
    let mut placed: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in order {
        let k = (0..n).min_by_key(|&k| sizes[k]).unwrap_or(0);
        sizes[k] += bodies[i].len();
        placed[k].push(i);
    }
    for (k, part) in parts.iter_mut().enumerate() {
        part.push_str(head);
        part.push_str(decls);
        let mut mine = placed[k].clone();
        mine.sort_unstable();
        for i in mine {
            part.push_str(&bodies[i]);
        }
        if k == 0 {
            part.push_str(&own);
        } else {
            part.push_str("} // namespace simtwin_module\n#pragma GCC visibility pop\n");
        }
    }
    parts
}

/// C: nonzero when any of `checks` fails (the runner's parameter buffer `P0`).
/// Kernel `fi`'s condition for running `folds` as literals (its `.const` variables hold
/// their initial bytes over the loads' spans), into `guards`; what was folded, into
/// `folded` (the module note).
fn fold_guard(
    m: &Module,
    initial: &crate::constants::Initial,
    folds: &std::collections::BTreeMap<usize, crate::constants::Fold>,
    guards: &mut HashMap<usize, String>,
    folded: &mut Vec<String>,
    fi: usize,
) {
    let spans = crate::constants::spans(folds.values());
    if spans.is_empty() {
        return;
    }
    let terms: Vec<String> = spans
        .iter()
        .map(|(&v, &(lo, hi))| {
            let bytes = crate::constants::initial_bytes(initial, v, (lo, hi));
            let lit: String = bytes.iter().map(|b| format!("\\x{b:02x}")).collect();
            format!("memcmp({} + {lo}, \"{lit}\", {}) == 0", ident("G", &m.vars[v].var.name), hi - lo)
        })
        .collect();
    guards.insert(fi, format!("({})", terms.join(" && ")));
    for v in spans.keys() {
        folded.push(format!("{} in {}", m.vars[*v].var.name, m.funcs[fi].decl.name));
    }
}

fn check_expr(checks: &BTreeSet<crate::align::Check>) -> String {
    let v: Vec<String> =
        checks.iter().map(|c| format!("((pload<uint64_t>(P0, {}) + {}ull) & {}u)", c.param_at, c.offset, c.bytes - 1)).collect();
    format!("({})", v.join(" | "))
}
