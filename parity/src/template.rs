//! Extractor command templates and the built-in presets.
//!
//! A template is a command line split into words like a POSIX shell would (single and
//! double quotes, backslash escapes; no variables, globbing or pipes: nothing runs
//! through a shell). Each `{name}` inside a word is replaced by a value; `{{` and `}}`
//! are literal braces. A word that is exactly one of the list placeholders expands into
//! zero or more words.
//!
//! Placeholders: `{ref}` `{dis}` `{width}` `{height}` `{pixfmt}` (420/422/444)
//! `{bitdepth}` `{output}` `{frames}` `{features}` (comma list, may be empty)
//! `{feature}` (the first feature) `{backend}` (cpu|cuda) `{defect}` `{twin}` `{vmaf}`
//! `{simtwin}`; list placeholders (whole word only): `{features_arg}` (`--features LIST`
//! or nothing), `{defect_arg}` (`--defect NAME` or nothing), `{vmaf_features}`
//! (`--no_prediction --feature A --feature B ...` or nothing), `{vmaf_cuda_features}` (the
//! same with each name given upstream VMAF's CUDA extractor name, `NAME_cuda`: `adm` ->
//! `--feature adm_cuda`; a name that already ends in `_cuda` is kept).

use anyhow::{anyhow, bail, Result};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Cpu,
    Cuda,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
        }
    }
}

pub const SCALAR_PLACEHOLDERS: &[&str] = &[
    "ref", "dis", "width", "height", "pixfmt", "bitdepth", "output", "frames", "features", "feature", "backend", "defect", "twin", "vmaf",
    "simtwin",
];
pub const LIST_PLACEHOLDERS: &[&str] = &["features_arg", "defect_arg", "vmaf_features", "vmaf_cuda_features"];

#[derive(Debug, Clone, Default)]
pub struct Vars {
    pub scalars: BTreeMap<String, String>,
    pub lists: BTreeMap<String, Vec<String>>,
}

impl Vars {
    pub fn set(&mut self, k: &str, v: impl Into<String>) {
        self.scalars.insert(k.to_string(), v.into());
    }
    pub fn set_list(&mut self, k: &str, v: Vec<String>) {
        self.lists.insert(k.to_string(), v);
    }
    /// Derives the list placeholders from `features`/`defect`.
    pub fn derive_lists(&mut self) {
        let feats: Vec<String> =
            self.scalars.get("features").map(|f| f.split(',').filter(|s| !s.is_empty()).map(String::from).collect()).unwrap_or_default();
        self.set("feature", feats.first().cloned().unwrap_or_default());
        self.set_list("features_arg", if feats.is_empty() { vec![] } else { vec!["--features".into(), feats.join(",")] });
        let defect = self.scalars.get("defect").cloned().unwrap_or_default();
        self.set_list("defect_arg", if defect.is_empty() { vec![] } else { vec!["--defect".into(), defect] });
        let mut vf = Vec::new();
        if !feats.is_empty() {
            vf.push("--no_prediction".to_string());
            for f in &feats {
                vf.push("--feature".into());
                vf.push(f.clone());
            }
        }
        self.set_list("vmaf_features", vf);
        // Upstream VMAF names each CUDA extractor after its CPU one with `_cuda`
        // (adm/adm_cuda, vif/vif_cuda, motion/motion_cuda); both emit the same metric names.
        let mut vcf = Vec::new();
        if !feats.is_empty() {
            vcf.push("--no_prediction".to_string());
            for f in &feats {
                vcf.push("--feature".into());
                vcf.push(if f.ends_with("_cuda") { f.clone() } else { format!("{f}_cuda") });
            }
        }
        self.set_list("vmaf_cuda_features", vcf);
    }
}

/// Shell-like word splitting (quotes and backslashes; nothing else is special).
pub fn split_words(s: &str) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => bail!("unterminated single quote in command template: {s}"),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(x @ ('"' | '\\')) => cur.push(x),
                            Some(x) => {
                                cur.push('\\');
                                cur.push(x)
                            }
                            None => bail!("unterminated double quote in command template: {s}"),
                        },
                        Some(x) => cur.push(x),
                        None => bail!("unterminated double quote in command template: {s}"),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(x) => cur.push(x),
                    None => bail!("trailing backslash in command template: {s}"),
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c)
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

fn subst_word(w: &str, vars: &Vars) -> Result<String> {
    let mut out = String::new();
    let b = w.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if w[i..].starts_with("{{") {
            out.push('{');
            i += 2;
        } else if w[i..].starts_with("}}") {
            out.push('}');
            i += 2;
        } else if b[i] == b'{' {
            let end = w[i..].find('}').ok_or_else(|| anyhow!("unclosed '{{' in template word '{w}'"))?;
            let name = &w[i + 1..i + end];
            if LIST_PLACEHOLDERS.contains(&name) {
                bail!("{{{name}}} expands to several words and must stand alone as one word, not inside '{w}'");
            }
            let v = vars.scalars.get(name).ok_or_else(|| {
                anyhow!(
                    "unknown placeholder {{{name}}} in template (known: {}, and list placeholders {})",
                    SCALAR_PLACEHOLDERS.join(" "),
                    LIST_PLACEHOLDERS.join(" ")
                )
            })?;
            out.push_str(v);
            i += end + 1;
        } else {
            let ch = w[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    Ok(out)
}

/// Expands a template into an argv.
pub fn expand(template: &str, vars: &Vars) -> Result<Vec<String>> {
    let mut argv = Vec::new();
    for w in split_words(template)? {
        if let Some(name) = w.strip_prefix('{').and_then(|x| x.strip_suffix('}')) {
            if LIST_PLACEHOLDERS.contains(&name) {
                argv.extend(vars.lists.get(name).cloned().unwrap_or_default());
                continue;
            }
        }
        argv.push(subst_word(&w, vars)?);
    }
    if argv.is_empty() {
        bail!("empty command template");
    }
    Ok(argv)
}

/// Quotes an argv for display (copy-pasteable into a POSIX shell).
pub fn display(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty() && a.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+%@".contains(&b)) {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub struct Preset {
    pub name: &'static str,
    pub cpu: &'static str,
    pub cuda: &'static str,
    /// The flags that select the backend and precision, printed with every run.
    pub cpu_flags: &'static str,
    pub cuda_flags: &'static str,
}

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "twin",
        // simtwin's fixture twin (simtwin-twin), VMAF JSON with %.17g
        cpu: "{twin} --backend cpu --reference {ref} --distorted {dis} --width {width} --height {height} --bitdepth {bitdepth} --frames {frames} {features_arg} --output {output}",
        cuda: "{twin} --backend cuda --reference {ref} --distorted {dis} --width {width} --height {height} --bitdepth {bitdepth} --frames {frames} {features_arg} {defect_arg} --output {output}",
        cpu_flags: "--backend cpu",
        cuda_flags: "--backend cuda",
    },
    Preset {
        name: "vmaf-fork",
        // a VMAF CLI fork with --backend cpu|cuda and --precision max
        cpu: "{vmaf} --reference {ref} --distorted {dis} --width {width} --height {height} --pixel_format {pixfmt} --bitdepth {bitdepth} --frame_cnt {frames} {vmaf_features} --backend cpu --precision max --json --output {output}",
        cuda: "{vmaf} --reference {ref} --distorted {dis} --width {width} --height {height} --pixel_format {pixfmt} --bitdepth {bitdepth} --frame_cnt {frames} {vmaf_features} --backend cuda --precision max --json --output {output}",
        cpu_flags: "--backend cpu --precision max --json",
        cuda_flags: "--backend cuda --precision max --json",
    },
    Preset {
        name: "vmaf-upstream",
        // upstream VMAF CLI (Netflix/vmaf built with -Denable_cuda=true): no --backend; the CPU
        // runs with --gpumask -1 and CPU extractor names (adm, vif, motion), CUDA with
        // --gpumask 0 and the `_cuda` extractors (adm_cuda, ...); no --features runs the
        // default model (vmaf_v0.6.1) on each side; prints %.6f (%.16f below 1e-6), no
        // --precision
        cpu: "{vmaf} --reference {ref} --distorted {dis} --width {width} --height {height} --pixel_format {pixfmt} --bitdepth {bitdepth} --frame_cnt {frames} {vmaf_features} --gpumask -1 --json --output {output}",
        cuda: "{vmaf} --reference {ref} --distorted {dis} --width {width} --height {height} --pixel_format {pixfmt} --bitdepth {bitdepth} --frame_cnt {frames} {vmaf_cuda_features} --gpumask 0 --json --output {output}",
        cpu_flags: "--gpumask -1 --json",
        cuda_flags: "--gpumask 0 --json",
    },
];

pub fn preset(name: &str) -> Result<&'static Preset> {
    PRESETS
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| anyhow!("unknown preset '{name}' (known: {})", PRESETS.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")))
}

/// Resolves `--cpu-cmd`/`--cuda-cmd`: `preset:NAME` (or a bare preset name) takes that
/// preset's command for the backend; anything else is a template. Returns the template
/// and the note on the flags it uses.
pub fn resolve(cmd: Option<&str>, default_preset: &str, backend: Backend) -> Result<(String, String)> {
    let pick = |p: &Preset| {
        let (t, f) = match backend {
            Backend::Cpu => (p.cpu, p.cpu_flags),
            Backend::Cuda => (p.cuda, p.cuda_flags),
        };
        (t.to_string(), format!("preset {} ({}): {}", p.name, backend.name(), f))
    };
    match cmd {
        None => Ok(pick(preset(default_preset)?)),
        Some(c) => {
            let name = c.strip_prefix("preset:").unwrap_or(c);
            if let Some(p) = PRESETS.iter().find(|p| p.name == name) {
                return Ok(pick(p));
            }
            if c.starts_with("preset:") {
                preset(name)?;
            }
            Ok((c.to_string(), format!("custom template ({})", backend.name())))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::template::*;
    #[test]
    fn split_and_expand() {
        assert_eq!(split_words(r#"a 'b c' "d \"e\"" f\ g"#).unwrap(), vec!["a", "b c", "d \"e\"", "f g"]);
        let mut v = Vars::default();
        v.set("ref", "/r x.yuv");
        v.set("features", "sse,topk");
        v.set("defect", "");
        v.derive_lists();
        let argv = expand("tool --ref={ref} {vmaf_features} {defect_arg} {{lit}}", &v).unwrap();
        assert_eq!(argv, vec!["tool", "--ref=/r x.yuv", "--no_prediction", "--feature", "sse", "--feature", "topk", "{lit}"]);
        assert!(expand("tool {nope}", &v).is_err());
        assert!(expand("tool x{features_arg}", &v).is_err());
        assert_eq!(display(&["a b".into(), "c".into()]), "'a b' c");
        let argv = expand("vmaf {vmaf_cuda_features}", &v).unwrap();
        assert_eq!(argv, vec!["vmaf", "--no_prediction", "--feature", "sse_cuda", "--feature", "topk_cuda"]);
    }

    #[test]
    fn vmaf_upstream_preset_names_cuda_extractors() {
        let p = preset("vmaf-upstream").unwrap();
        let mut v = Vars::default();
        for (k, x) in [
            ("ref", "r.yuv"),
            ("dis", "d.yuv"),
            ("width", "576"),
            ("height", "324"),
            ("pixfmt", "420"),
            ("bitdepth", "8"),
            ("output", "o.json"),
            ("frames", "4"),
            ("vmaf", "vmaf"),
        ] {
            v.set(k, x);
        }
        v.set("features", "adm,motion_cuda");
        v.derive_lists();
        let cpu = expand(p.cpu, &v).unwrap().join(" ");
        let cuda = expand(p.cuda, &v).unwrap().join(" ");
        assert!(cpu.contains("--no_prediction --feature adm --feature motion_cuda --gpumask -1"), "{cpu}");
        assert!(cuda.contains("--no_prediction --feature adm_cuda --feature motion_cuda --gpumask 0"), "{cuda}");
        // No features: the default model on both sides, told apart only by --gpumask.
        v.set("features", "");
        v.derive_lists();
        let cpu = expand(p.cpu, &v).unwrap();
        let cuda = expand(p.cuda, &v).unwrap();
        assert!(!cpu.iter().any(|w| w == "--feature" || w == "--no_prediction"));
        assert_eq!(
            cpu.iter().filter(|w| *w != "-1" && *w != "0").collect::<Vec<_>>(),
            cuda.iter().filter(|w| *w != "-1" && *w != "0").collect::<Vec<_>>()
        );
    }
}
