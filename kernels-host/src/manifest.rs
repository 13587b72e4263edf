//! The manifest written next to each kernel library (`<stem>.simtwin.json`), schema
//! `simtwin-kernels/1`. Field order is the documented one.

use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "simtwin-kernels/1";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub schema: String,
    pub library: String,
    pub source: String,
    pub source_hash: String,
    pub nvcc_flags: Vec<String>,
    pub fma_contraction_differs: bool,
    pub entries: Vec<Entry>,
    pub globals: Vec<Global>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    pub name: String,
    pub symbol: String,
    pub param_sizes: Vec<u32>,
    pub param_aligns: Vec<u32>,
    pub max_threads: u32,
    pub min_blocks: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Global {
    pub name: String,
    pub symbol: String,
    pub size: u64,
    pub constant: bool,
}
