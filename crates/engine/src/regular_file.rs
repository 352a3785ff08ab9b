//! Reading a small input file that must be a regular file (a sysfs attribute, a simulator
//! profile, a verify state file) without ever blocking or reading without end: a FIFO in its
//! place would block the open until a writer comes, and a link to `/dev/zero` would be read
//! until memory runs out.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The contents of the regular file at `path` (symlinks followed), at most `max_bytes` long.
/// Anything else is refused before it is opened, as an `InvalidInput` error whose text says
/// what it is ("a FIFO, not a regular file"); the open itself is non-blocking, so a FIFO put
/// there after the look is refused by the check on the descriptor instead of blocking. A file
/// longer than `max_bytes` is refused after reading one byte past the limit.
pub fn read_regular_file(path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
    refuse_unless_regular(&std::fs::metadata(path)?.file_type())?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    refuse_unless_regular(&file.metadata()?.file_type())?;
    read_at_most(file, max_bytes)
}

/// [`read_regular_file`] as UTF-8 text.
pub fn read_regular_text(path: &Path, max_bytes: u64) -> io::Result<String> {
    String::from_utf8(read_regular_file(path, max_bytes)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "is not UTF-8 text"))
}

fn read_at_most(file: File, max_bytes: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("is larger than {max_bytes} bytes, more than such a file holds"),
        ));
    }
    Ok(bytes)
}

fn refuse_unless_regular(kind: &std::fs::FileType) -> io::Result<()> {
    let what = if kind.is_file() {
        return Ok(());
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "a special file"
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("is {what}, not a regular file"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_and_a_device_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let error = read_regular_file(&fifo, 100).unwrap_err();
        assert_eq!(error.to_string(), "is a FIFO, not a regular file");
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let error = read_regular_file(&zero, 100).unwrap_err();
        assert_eq!(
            error.to_string(),
            "is a character device, not a regular file"
        );
    }

    #[test]
    fn a_file_past_the_limit_is_refused_and_one_within_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        std::fs::write(&path, [7u8; 10]).unwrap();
        assert_eq!(read_regular_file(&path, 10).unwrap(), [7u8; 10]);
        let error = read_regular_file(&path, 9).unwrap_err();
        assert!(error.to_string().contains("larger than 9 bytes"), "{error}");
    }
}
