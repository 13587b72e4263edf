//! Which code runs a module (EMU_CUDA_EXEC): its host twin (`load`) or its own PTX
//! (`ptx`).

use super::load::{self, Prepared};
use super::ptx;
use crate::image;
use crate::registry;
use crate::state::CuResult;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Which code runs a module, per EMU_CUDA_EXEC: a host twin if one matches (`auto`
/// falls back to the image's PTX when no twin library shares any entry with the image;
/// an ambiguous or partial match stays an error, never a silent pick), or the PTX.
pub fn prepare_any(
    kernel_paths: &[PathBuf],
    img: image::Image,
    race: bool,
    mode: crate::config::ExecMode,
    sm_count: u32,
    opt_level: u8,
) -> CuResult<Prepared> {
    use crate::config::ExecMode;
    match mode {
        ExecMode::Twin => load::prepare(kernel_paths, img, race),
        ExecMode::Ptx => ptx::prepare(img, sm_count, opt_level),
        ExecMode::Auto => {
            if kernel_paths.is_empty() {
                return ptx::prepare(img, sm_count, opt_level);
            }
            let kernel_names: BTreeSet<String> = img.kernels.iter().map(|k| k.name.clone()).collect();
            let global_names: BTreeSet<String> = img.globals.iter().map(|g| g.name.clone()).collect();
            let scan = registry::scan(kernel_paths);
            let want = registry::Wanted { kernels: &kernel_names, globals: &global_names };
            if !race && !img.ptx.is_empty() && !registry::shares_any(&scan, &want) {
                return ptx::prepare(img, sm_count, opt_level);
            }
            load::prepare(kernel_paths, img, race)
        }
    }
}
