//! The manifest kernels-host writes beside each kernel library (`<stem>.simtwin.json`)
//! and the emulated driver reads to bind module images to libraries.
//!
//! Entry `i` describes kernel `i` of the library's descriptor and global `i` its global
//! `i`; `build_id` equals the descriptor's, so a manifest never describes another build
//! of its library.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The schema string of this version.
pub const SCHEMA: &str = "simtwin-kernels/2";
/// File name suffix the driver scans directories for.
pub const SUFFIX: &str = ".simtwin.json";

/// One library's manifest.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    /// [`SCHEMA`]
    pub schema: String,
    /// The library's file name, relative to the manifest's directory.
    pub library: String,
    /// The .cu file (absolute path).
    pub source: String,
    /// sha256 hex of the .cu bytes.
    pub source_hash: String,
    /// The library's build id (see `simtwin_abi::kernel::Module::build_id`).
    pub build_id: String,
    /// The nvcc flags of the user's real build, as given.
    pub nvcc_flags: Vec<String>,
    /// True when nvcc would contract a*b+c into FMA and the host build does not.
    pub fma_contraction_differs: bool,
    /// The kernels, in descriptor order.
    pub entries: Vec<Entry>,
    /// The namespace-scope `__device__`/`__constant__` variables, in descriptor order.
    pub globals: Vec<Global>,
    /// Differences from the device the build knows of.
    pub warnings: Vec<String>,
    /// The library's checking variant (`kernels-host build --checks`), relative to the
    /// manifest's directory: the same kernels, instrumented so that the driver sees their
    /// memory accesses (`EMU_CUDA_CHECKS=race`). Absent when not built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks_library: Option<String>,
    /// Whose math the library's math functions and fast intrinsics compute. Absent in
    /// manifests of builds before device math.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_math: Option<DeviceMath>,
}

/// The device math a library was built with (kernels-host `libdevice`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DeviceMath {
    /// The device profile (`h200`).
    pub profile: String,
    /// True when every math function and fast intrinsic the library provides computes
    /// the profile's results bit for bit (libdevice translated, the SFU modelled).
    pub exact: bool,
    /// What computes them: `libdevice (<flag set>)` or `host libm`.
    pub library: String,
    /// Why not device-exact (`not device-exact: ...`), when not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One kernel.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    /// The name as written (template-id for instantiations).
    pub name: String,
    /// The exported symbol (nvcc's `.entry` name: Itanium mangling, or the plain name of
    /// an `extern "C"` kernel).
    pub symbol: String,
    /// `sizeof` each parameter.
    pub param_sizes: Vec<u32>,
    /// `alignof` each parameter.
    pub param_aligns: Vec<u32>,
    /// `__launch_bounds__` max threads per block, 0 if none.
    pub max_threads: u32,
    /// `__launch_bounds__` min blocks per SM, 0 if none.
    pub min_blocks: u32,
}

/// One `__device__`/`__constant__` variable.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Global {
    /// Qualified name as written.
    pub name: String,
    /// Exported symbol (the `.global`/`.const` name of the image).
    pub symbol: String,
    /// `sizeof`
    pub size: u64,
    /// `__constant__`
    pub constant: bool,
}

/// Why a file is not a usable manifest.
#[derive(Debug, Clone, PartialEq)]
pub enum ManifestError {
    /// Not JSON of the manifest's shape.
    Malformed(String),
    /// Another schema (e.g. written by an older kernels-host).
    Schema(String),
}

impl std::fmt::Display for ManifestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ManifestError::Malformed(e) => write!(f, "not a kernels-host manifest: {e}"),
            ManifestError::Schema(s) => {
                write!(f, "manifest schema {s:?}, this simtwin reads {SCHEMA:?}: rebuild the kernels with this kernels-host")
            }
        }
    }
}

impl Manifest {
    /// Parses a manifest's text, checking the schema.
    pub fn parse(text: &str) -> Result<Manifest, ManifestError> {
        #[derive(Deserialize)]
        struct Probe {
            schema: String,
        }
        let probe: Probe = serde_json::from_str(text).map_err(|e| ManifestError::Malformed(e.to_string()))?;
        if probe.schema != SCHEMA {
            return Err(ManifestError::Schema(probe.schema));
        }
        serde_json::from_str(text).map_err(|e| ManifestError::Malformed(e.to_string()))
    }

    /// The manifest as written to disk (pretty JSON, final newline).
    pub fn to_text(&self) -> String {
        serde_json::to_string_pretty(self).expect("a manifest serializes") + "\n"
    }

    /// The library beside a manifest read from `manifest_path`.
    pub fn library_path(&self, manifest_path: &Path) -> PathBuf {
        manifest_path.parent().unwrap_or(Path::new(".")).join(&self.library)
    }

    /// The checking variant beside a manifest read from `manifest_path`, if it was built.
    pub fn checks_library_path(&self, manifest_path: &Path) -> Option<PathBuf> {
        let c = self.checks_library.as_ref()?;
        Some(manifest_path.parent().unwrap_or(Path::new(".")).join(c))
    }

    /// The entries' symbols.
    pub fn symbols(&self) -> BTreeSet<&str> {
        self.entries.iter().map(|e| e.symbol.as_str()).collect()
    }

    /// The manifest file name for a library stem.
    pub fn file_name(stem: &str) -> String {
        format!("{stem}{SUFFIX}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        Manifest {
            device_math: None,
            schema: SCHEMA.into(),
            library: "k.so".into(),
            source: "/src/k.cu".into(),
            source_hash: "ab".into(),
            build_id: "cd".into(),
            nvcc_flags: vec!["--fmad=false".into()],
            fma_contraction_differs: false,
            entries: vec![Entry {
                name: "k".into(),
                symbol: "_Z1kPi".into(),
                param_sizes: vec![8],
                param_aligns: vec![8],
                max_threads: 0,
                min_blocks: 0,
            }],
            globals: vec![Global { name: "g".into(), symbol: "g".into(), size: 4, constant: false }],
            warnings: vec![],
            checks_library: None,
        }
    }

    #[test]
    fn round_trip_and_schema_check() {
        let m = sample();
        assert_eq!(Manifest::parse(&m.to_text()).unwrap(), m);
        // The checking variant is optional: absent from the text when not built.
        assert!(!m.to_text().contains("checks_library"));
        let mut c = m.clone();
        c.checks_library = Some("k.checks.so".into());
        assert_eq!(Manifest::parse(&c.to_text()).unwrap(), c);
        assert_eq!(c.checks_library_path(Path::new("/out/k.simtwin.json")), Some(PathBuf::from("/out/k.checks.so")));
        let old = m.to_text().replace(SCHEMA, "simtwin-kernels/1");
        assert!(matches!(Manifest::parse(&old), Err(ManifestError::Schema(s)) if s == "simtwin-kernels/1"));
        assert!(matches!(Manifest::parse("{"), Err(ManifestError::Malformed(_))));
        assert_eq!(m.library_path(Path::new("/d/k.simtwin.json")), PathBuf::from("/d/k.so"));
        assert_eq!(Manifest::file_name("k"), "k.simtwin.json");
    }
}
