//! Messages to stderr, prefixed `simtwin:`, filtered by EMU_CUDA_LOG.

use crate::config::{log_level_from_env, LogLevel};
use std::sync::OnceLock;

pub fn level() -> LogLevel {
    static LEVEL: OnceLock<LogLevel> = OnceLock::new();
    *LEVEL.get_or_init(|| log_level_from_env().unwrap_or(LogLevel::Warn))
}

pub fn emit(at: LogLevel, msg: std::fmt::Arguments) {
    if level() >= at {
        eprintln!("simtwin: {msg}");
    }
}

#[macro_export]
macro_rules! log_error { ($($t:tt)*) => { $crate::log::emit($crate::config::LogLevel::Error, format_args!($($t)*)) } }
#[macro_export]
macro_rules! log_warn { ($($t:tt)*) => { $crate::log::emit($crate::config::LogLevel::Warn, format_args!($($t)*)) } }
#[macro_export]
macro_rules! log_info { ($($t:tt)*) => { $crate::log::emit($crate::config::LogLevel::Info, format_args!($($t)*)) } }
