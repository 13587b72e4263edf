//! The runner's command-line options, shared by the driver loop and the cases.

#[derive(Default, Clone)]
pub struct Opts {
    pub lib: Option<String>,
    pub fatbin: Option<String>,
    pub fatbin_nosm90: Option<String>,
    pub kernels: Option<String>,
    pub out: Option<String>,
    pub only: Option<Vec<String>>,
    pub case: Option<String>,
    pub timeout: u64,
    pub jobs: usize,
    pub list: bool,
}
