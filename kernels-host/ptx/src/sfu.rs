//! The special-function unit's instruction forms and which of them simtwin models bit for
//! bit (`kernels-host/runtime/sfu_exact.txt`, kept by the device-math work beside the
//! models in `runtime/simtwin_sfu.cpp`). A kernel that uses a form not in the list is
//! marked not device-exact.

/// Forms modelled bit for bit on the H200, one per line (`ex2.approx.ftz.f32`).
const EXACT: &str = include_str!("../../runtime/sfu_exact.txt");

/// Whether `form` (opcode and modifiers as the table spells them) is modelled exactly.
pub fn exact(form: &str) -> bool {
    EXACT.lines().map(str::trim).any(|l| !l.starts_with('#') && l == form)
}

/// The host function of an SFU form and its canonical name (for reports), or None if
/// the instruction is not an SFU form. `op` is the opcode, `mods` its modifiers.
pub fn function(op: &str, mods: &[String]) -> Option<(&'static str, String)> {
    let has = |m: &str| mods.iter().any(|x| x == m);
    let ftz = has(".ftz");
    let ty = mods.iter().rev().find(|m| matches!(m.as_str(), ".f32" | ".f64" | ".f16" | ".f16x2" | ".bf16" | ".bf16x2"))?;
    let approx = has(".approx");
    let f = match (op, ty.as_str(), approx) {
        ("ex2", ".f32", true) => {
            if ftz {
                "__simtwin_sfu_ex2_ftz_f32"
            } else {
                "__simtwin_sfu_ex2_f32"
            }
        }
        ("ex2", ".f16", true) => "__simtwin_sfu_ex2_f16",
        ("ex2", ".f16x2", true) => "__simtwin_sfu_ex2_f16x2",
        ("ex2", ".bf16", true) => "__simtwin_sfu_ex2_bf16",
        ("ex2", ".bf16x2", true) => "__simtwin_sfu_ex2_bf16x2",
        ("lg2", ".f32", true) => {
            if ftz {
                "__simtwin_sfu_lg2_ftz_f32"
            } else {
                "__simtwin_sfu_lg2_f32"
            }
        }
        ("rcp", ".f32", true) => {
            if ftz {
                "__simtwin_sfu_rcp_ftz_f32"
            } else {
                "__simtwin_sfu_rcp_f32"
            }
        }
        ("rcp", ".f64", true) => "__simtwin_sfu_rcp_ftz_f64",
        ("rsqrt", ".f32", true) => {
            if ftz {
                "__simtwin_sfu_rsqrt_ftz_f32"
            } else {
                "__simtwin_sfu_rsqrt_f32"
            }
        }
        ("rsqrt", ".f64", true) => {
            if ftz {
                "__simtwin_sfu_rsqrt_ftz_f64"
            } else {
                "__simtwin_sfu_rsqrt_f64"
            }
        }
        ("sin", ".f32", true) => {
            if ftz {
                "__simtwin_sfu_sin_ftz_f32"
            } else {
                "__simtwin_sfu_sin_f32"
            }
        }
        ("cos", ".f32", true) => {
            if ftz {
                "__simtwin_sfu_cos_ftz_f32"
            } else {
                "__simtwin_sfu_cos_f32"
            }
        }
        ("tanh", ".f32", true) => "__simtwin_sfu_tanh_f32",
        ("tanh", ".f16", true) => "__simtwin_sfu_tanh_f16",
        ("tanh", ".f16x2", true) => "__simtwin_sfu_tanh_f16x2",
        ("tanh", ".bf16", true) => "__simtwin_sfu_tanh_bf16",
        ("tanh", ".bf16x2", true) => "__simtwin_sfu_tanh_bf16x2",
        ("sqrt", ".f32", true) => {
            if ftz {
                "__simtwin_sfu_sqrt_ftz_f32"
            } else {
                "__simtwin_sfu_sqrt_f32"
            }
        }
        ("div", ".f32", true) => {
            if ftz {
                "__simtwin_sfu_div_approx_ftz_f32"
            } else {
                "__simtwin_sfu_div_approx_f32"
            }
        }
        ("div", ".f32", false) if has(".full") => {
            if ftz {
                "__simtwin_sfu_div_full_ftz_f32"
            } else {
                "__simtwin_sfu_div_full_f32"
            }
        }
        _ => return None,
    };
    let mut form = op.to_string();
    for m in mods {
        if matches!(m.as_str(), ".approx" | ".full" | ".ftz") || m == ty {
            form.push_str(m);
        }
    }
    // rcp.approx.f64 exists only with .ftz
    Some((f, form))
}

#[cfg(test)]
mod tests {
    use super::*;
    fn m(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }
    #[test]
    fn forms() {
        assert_eq!(function("ex2", &m(&[".approx", ".ftz", ".f32"])).unwrap(), ("__simtwin_sfu_ex2_ftz_f32", "ex2.approx.ftz.f32".into()));
        assert_eq!(function("div", &m(&[".full", ".f32"])).unwrap().0, "__simtwin_sfu_div_full_f32");
        assert!(function("div", &m(&[".rn", ".f32"])).is_none());
        assert!(function("sqrt", &m(&[".rn", ".f32"])).is_none());
        assert!(function("rcp", &m(&[".rn", ".f64"])).is_none());
    }
}
