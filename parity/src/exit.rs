//! Exit codes of parity's errors: a run that cannot happen on this machine is a skip (77),
//! every other error is 2.

/// A run that cannot happen on this machine (no real device): exit code 77.
#[derive(Debug)]
pub struct Skip(pub String);

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Skip {}

/// The exit code of an error: 77 for [`Skip`], 2 for everything else.
pub fn exit_code_of(e: &anyhow::Error) -> i32 {
    if e.downcast_ref::<Skip>().is_some() {
        77
    } else {
        2
    }
}
