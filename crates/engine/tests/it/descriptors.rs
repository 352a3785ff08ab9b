//! `use_private_descriptor_table`: after it, what the calling thread opens is not in the table
//! the other threads share, and what was open before (the standard streams) still is in both.

use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use storlab_engine::descriptors::use_private_descriptor_table;

/// The (device, inode) a descriptor number names in the calling thread's table, if any.
fn names(fd: i32) -> Option<(u64, u64)> {
    // SAFETY: an all-zero `stat` is a valid value of it (integers), and fstat writes only
    // into the struct it is given.
    unsafe {
        let mut stat: libc::stat = std::mem::zeroed();
        (libc::fstat(fd, &mut stat) == 0).then_some((stat.st_dev, stat.st_ino))
    }
}

#[test]
fn a_file_opened_after_unsharing_is_not_in_the_shared_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("private");
    let stderr_before = names(2);
    let (fd, file_names, stderr_inside) = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                use_private_descriptor_table().unwrap();
                let file = std::fs::File::create(&path).unwrap();
                let meta = file.metadata().unwrap();
                // The file stays open in this thread's table until the spawning thread has
                // looked at the same number in its own.
                let fd = file.as_raw_fd();
                std::mem::forget(file);
                (fd, (meta.dev(), meta.ino()), names(2))
            })
            .join()
            .unwrap()
    });
    // The thread has ended, and with it its table: the number names something else here, or
    // nothing, never the file (other tests' threads may have opened that number meanwhile).
    assert_ne!(names(fd), Some(file_names));
    assert_eq!(
        stderr_inside, stderr_before,
        "the standard streams stay in both tables"
    );
}
