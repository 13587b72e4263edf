//! What kind of file a path is, in words, for the errors of every crate that refuses
//! anything but a regular file (the driver's trace, parity's inputs): a FIFO would block,
//! a device never ends, a directory is not a file.

use std::fs::FileType;
use std::os::unix::fs::FileTypeExt;

/// "a directory", "a FIFO (named pipe)", ... : the kind of a file that is not a regular
/// one, to complete "`path` is ...".
pub fn kind_of(ft: FileType) -> &'static str {
    if ft.is_file() {
        "a regular file"
    } else if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO (named pipe)"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(p: &std::path::Path) -> &'static str {
        kind_of(std::fs::metadata(p).unwrap().file_type())
    }

    #[test]
    fn each_kind_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        assert_eq!(kind(&file), "a regular file");
        assert_eq!(kind(dir.path()), "a directory");
        assert_eq!(kind(std::path::Path::new("/dev/null")), "a character device");
        let fifo = dir.path().join("p");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path that lives across the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(kind(&fifo), "a FIFO (named pipe)");
        let sock = std::os::unix::net::UnixListener::bind(dir.path().join("s")).unwrap();
        assert_eq!(kind(&dir.path().join("s")), "a socket");
        drop(sock);
    }
}
