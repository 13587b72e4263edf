//! Command-line errors (those clap reports) still leave the command's report directory
//! in a known state: cleared of an earlier run's files, with an error summary.

/// What command `name` leaves in its report directory (None for commands without one).
fn artefacts_of(name: &str) -> Option<&'static crate::report::Artefacts<'static>> {
    Some(match name {
        "frames" => &crate::report::FRAMES_ARTEFACTS,
        "diff" => &crate::report::DIFF_ARTEFACTS,
        "transfers" => &crate::transfers::ARTEFACTS,
        "bench" => &crate::bench::ARTEFACTS,
        "faults" => &crate::faults::ARTEFACTS,
        "demo" => &crate::demo::DEMO_ARTEFACTS,
        _ => return None,
    })
}

/// A command-line error of command `name`: its report directory `dir` (if it exists) is
/// cleared of an earlier run's files and gets an error summary holding `message`.
pub fn report_command_line_error(name: &str, dir: &std::path::Path, message: &str) {
    if let Some(a) = artefacts_of(name) {
        crate::report::command_line_error(name, dir, a, message);
    }
}
