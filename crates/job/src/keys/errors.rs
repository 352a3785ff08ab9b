//! fio's error handling keys: `continue_on_error`, `ignore_error` and `error_dump`.

use super::values::set_if;
use super::{ApplyError, JobDraft, KeyDef};
use crate::model::JobSpec;
use crate::paths::KeyPath;
use crate::size::parse_bool;

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "continue_on_error",
        aliases: &[],
        bare: false,
        meaning: "count failed I/Os of these kinds and go on (none, read, write, io, verify, all; 0/1 as none/all): EIO and EILSEQ unless ignore_error lists others",
        field: "continue_on_error",
        path: KeyPath::None,
        apply: apply_continue_on_error,
    },
    KeyDef {
        name: "ignore_error",
        aliases: &[],
        bare: false,
        meaning: "the errors continue_on_error passes, per kind: READ,WRITE,VERIFY lists of errno names or numbers joined by ':' (ignore_error=,ENOSPC:EIO); a list turns its kind on",
        field: "ignore_error",
        path: KeyPath::None,
        apply: apply_ignore_error,
    },
    KeyDef {
        name: "error_dump",
        aliases: &[],
        bare: true,
        meaning: "fio's dump of each error continue_on_error passes: only 0, fio's default, is accepted (the count and the first error are in the outputs)",
        field: "error_dump",
        path: KeyPath::None,
        apply: |_, v| {
            if parse_bool(v)? {
                return Err(ApplyError::Unsupported(
                    "telling each passed error on stderr is not supported; the outputs give \
                     their count and the first one (total_err, first_error)"
                        .into(),
                ));
            }
            Ok(())
        },
    },
];

/// The errno names fio 3.33's `ignore_error` knows (options.c, `str2error`), each the Linux
/// errno one more than its index: any other error must be given by number.
const FIO_ERRNO_NAMES: [&str; 34] = [
    "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF", "ECHILD",
    "EAGAIN", "ENOMEM", "EACCES", "EFAULT", "ENOTBLK", "EBUSY", "EEXIST", "EXDEV", "ENODEV",
    "ENOTDIR", "EISDIR", "EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC",
    "ESPIPE", "EROFS", "EMLINK", "EPIPE", "EDOM", "ERANGE",
];

/// C's `atoi` as fio uses it: leading blanks, a sign, then as many digits as there are; 0 when
/// there are none (and on overflow, where C's is undefined).
fn c_atoi(text: &str) -> i32 {
    let text = text.trim_start();
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let end = digits
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    let value = digits[..end].parse::<i32>().unwrap_or(0);
    if negative {
        -value
    } else {
        value
    }
}

/// fio's `ignore_error` (options.c, `str_ignore_error_cb`): up to three lists separated by
/// ',' for read, write and verify errors, each of errors separated by ':', an `E` name fio
/// knows or a number (its sign dropped). A list replaces fio's default (EIO, EILSEQ) for its
/// kind and turns `continue_on_error` on for it; an empty list (`ignore_error=,ENOSPC`) leaves
/// the kind as it was, and an empty entry ends its list, as fio's `strsep` loop.
fn apply_ignore_error(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    const KINDS: usize = 3;
    let parts: Vec<&str> = v.trim().split(',').collect();
    if parts.len() > KINDS {
        return Err(ApplyError::Invalid(
            "at most three lists (read,write,verify); errors within a list are separated by ':'"
                .into(),
        ));
    }
    let mut on_error = d.continue_on_error.clone().unwrap_or_default();
    for (kind, part) in parts.into_iter().enumerate() {
        let mut errnos = Vec::new();
        for name in part.split(':') {
            if name.is_empty() {
                break;
            }
            let errno = if name.starts_with('E') {
                FIO_ERRNO_NAMES
                    .iter()
                    .position(|known| *known == name)
                    .map_or(0, |index| index as i32 + 1)
            } else {
                c_atoi(name).saturating_abs()
            };
            if errno == 0 {
                return Err(ApplyError::Invalid(format!(
                    "unknown error '{name}': fio knows EPERM to ERANGE by name, give others by number"
                )));
            }
            errnos.push(errno);
        }
        if errnos.is_empty() {
            continue;
        }
        let (passes, list) = match kind {
            0 => (&mut on_error.read, &mut on_error.ignored_read),
            1 => (&mut on_error.write, &mut on_error.ignored_write),
            _ => (&mut on_error.verify, &mut on_error.ignored_verify),
        };
        *passes = true;
        *list = Some(errnos);
    }
    d.continue_on_error = Some(on_error);
    Ok(())
}

/// fio's `continue_on_error` values (options.c): a kind, a pair of them, or all.
fn apply_continue_on_error(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    let (read, write, verify) = match v.trim().to_ascii_lowercase().as_str() {
        "none" | "0" => (false, false, false),
        "read" => (true, false, false),
        "write" => (false, true, false),
        "io" => (true, true, false),
        "verify" => (false, false, true),
        "all" | "1" => (true, true, true),
        other => {
            return Err(ApplyError::Invalid(format!(
                "'{other}' is not one of none, read, write, io, verify, all, 0, 1"
            )))
        }
    };
    // fio's continue_on_error sets the kinds alone; lists an ignore_error gave stay.
    let mut on_error = d.continue_on_error.clone().unwrap_or_default();
    on_error.read = read;
    on_error.write = write;
    on_error.verify = verify;
    d.continue_on_error = Some(on_error);
    Ok(())
}

impl JobDraft {
    /// `continue_on_error`.
    pub(super) fn build_error_handling(&self, spec: &mut JobSpec) {
        set_if(&mut spec.continue_on_error, self.continue_on_error.clone());
    }
}

#[cfg(test)]
mod tests {
    use crate::keys::draft;
    use crate::model::ContinueOnError;

    #[test]
    fn continue_on_error_takes_fios_values_and_passes_fios_errors() {
        use crate::model::{ERRNO_EILSEQ, ERRNO_EIO};
        const ERRNO_ENODATA: i32 = 61;
        let of = |value: &str| {
            draft(&[("size", Some("1M")), ("continue_on_error", Some(value))])
                .map(|spec| spec.continue_on_error)
        };
        let none = ContinueOnError::default();
        assert_eq!(of("none").unwrap(), none);
        assert_eq!(of("0").unwrap(), none);
        assert_eq!(of("1").unwrap(), of("all").unwrap());
        assert_eq!(of("IO").unwrap(), of("io").unwrap());
        assert!(of("sometimes").is_err());
        let read = of("read").unwrap();
        assert!(read.passes(true, ERRNO_EIO));
        assert!(
            !read.passes(false, ERRNO_EIO),
            "a write error is not a read error"
        );
        assert!(
            !read.passes(true, ERRNO_ENODATA),
            "not in fio's default list"
        );
        assert!(!read.passes(true, ERRNO_EILSEQ), "EILSEQ is a verify error");
        let write = of("write").unwrap();
        assert!(write.passes(false, ERRNO_EIO) && !write.passes(true, ERRNO_EIO));
        let verify = of("verify").unwrap();
        assert!(verify.passes(true, ERRNO_EILSEQ) && !verify.passes(true, ERRNO_EIO));
        // Accepted with verify (fio drops a failed write from its read-back), and when nothing
        // is read back.
        let verifying = [("size", Some("1M")), ("rw", Some("write"))];
        let with = |extra: &[(&str, Option<&str>)]| {
            let mut all = verifying.to_vec();
            all.extend_from_slice(extra);
            draft(&all)
        };
        assert!(with(&[("verify", Some("md5")), ("continue_on_error", Some("all"))]).is_ok());
        assert!(with(&[
            ("verify", Some("md5")),
            ("do_verify", Some("0")),
            ("continue_on_error", Some("all"))
        ])
        .is_ok());
        assert!(with(&[("ignore_error", Some("EIO"))]).is_ok());
    }

    #[test]
    fn ignore_error_reads_fios_lists_per_kind() {
        use crate::model::{ERRNO_EIO, ERRNO_ENOSPC};
        let of = |settings: &[(&str, Option<&str>)]| {
            let mut all = vec![("size", Some("1M"))];
            all.extend_from_slice(settings);
            draft(&all).map(|spec| spec.continue_on_error)
        };
        // fio's enospc-pressure example: the write list alone, which turns writes on.
        let write_enospc = of(&[("ignore_error", Some(",ENOSPC"))]).unwrap();
        assert!(write_enospc.write && !write_enospc.read && !write_enospc.verify);
        assert!(write_enospc.passes(false, ERRNO_ENOSPC));
        assert!(
            !write_enospc.passes(false, ERRNO_EIO),
            "a list replaces fio's default"
        );
        assert!(!write_enospc.passes(true, ERRNO_ENOSPC));
        // Names and numbers, ':' within a list, a negative number's sign dropped, as fio.
        let mixed = of(&[("ignore_error", Some("EIO:-61:28x,,84"))]).unwrap();
        assert_eq!(mixed.ignored_read, Some(vec![ERRNO_EIO, 61, ERRNO_ENOSPC]));
        assert_eq!(mixed.ignored_write, None);
        assert_eq!(mixed.ignored_verify, Some(vec![84]));
        // An empty entry ends its list (fio's strsep loop).
        let cut = of(&[("ignore_error", Some("EIO::ENOSPC"))]).unwrap();
        assert_eq!(cut.ignored_read, Some(vec![ERRNO_EIO]));
        // continue_on_error after it sets the kinds and keeps the lists, as fio's two fields.
        let none = of(&[
            ("ignore_error", Some(",ENOSPC")),
            ("continue_on_error", Some("none")),
        ])
        .unwrap();
        assert!(!none.passes(false, ERRNO_ENOSPC));
        assert_eq!(none.ignored_write, Some(vec![ERRNO_ENOSPC]));
        // fio knows 34 names (EILSEQ is not one of them) and at most three kinds.
        assert!(of(&[("ignore_error", Some("EILSEQ"))]).is_err());
        assert!(of(&[("ignore_error", Some("eio"))]).is_err());
        assert!(of(&[("ignore_error", Some("EIO,EIO,EIO,EIO"))]).is_err());
        // fio's default error_dump=0 changes nothing; dumping each passed error is refused.
        assert!(of(&[("error_dump", Some("0"))]).is_ok());
        assert!(of(&[("error_dump", Some("1"))]).is_err());
    }
}
