//! The one writer to stderr: messages prefixed `simtwin:`, filtered by EMU_CUDA_LOG
//! (`off` silences everything, hazards and refusals included).

use crate::config::LogLevel;

/// The level in effect.
pub fn level() -> LogLevel {
    crate::config::log_level()
}

/// Writes a message at level `at` when EMU_CUDA_LOG allows it.
pub fn emit(at: LogLevel, msg: std::fmt::Arguments) {
    if level() >= at {
        eprintln!("simtwin: {msg}");
    }
}

/// `format!`-style message at level error (see `log::emit`); exported only so that
/// every module of the crate reaches it as `crate::log_error!`.
#[macro_export]
macro_rules! log_error { ($($t:tt)*) => { $crate::log::emit($crate::config::LogLevel::Error, format_args!($($t)*)) } }
/// `format!`-style message at level warn (see `log::emit`); exported only so that
/// every module of the crate reaches it as `crate::log_warn!`.
#[macro_export]
macro_rules! log_warn { ($($t:tt)*) => { $crate::log::emit($crate::config::LogLevel::Warn, format_args!($($t)*)) } }
/// `format!`-style message at level info (see `log::emit`); exported only so that
/// every module of the crate reaches it as `crate::log_info!`.
#[macro_export]
macro_rules! log_info { ($($t:tt)*) => { $crate::log::emit($crate::config::LogLevel::Info, format_args!($($t)*)) } }
/// `format!`-style message at level calls (see `log::emit`); exported only so that
/// every module of the crate reaches it as `crate::log_calls!`.
#[macro_export]
macro_rules! log_calls { ($($t:tt)*) => { $crate::log::emit($crate::config::LogLevel::Calls, format_args!($($t)*)) } }
