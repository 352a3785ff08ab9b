//! fio's sync keys (its I/O type section): `fsync`, `fdatasync`, `end_fsync`, `fsync_on_close` and `sync`.

use super::values::to_u32;
use super::{ApplyError, JobDraft, KeyDef};
use crate::model::JobSpec;
use crate::model::OpenSync;
use crate::model::SyncSpec;
use crate::paths::KeyPath;
use crate::size::{parse_bool, parse_count};

/// The sync keys as set.
#[derive(Clone, Debug, Default)]
pub(super) struct SyncDraft {
    pub(super) fsync_every_writes: Option<u32>,
    pub(super) fdatasync_every_writes: Option<u32>,
    pub(super) end_fsync: Option<bool>,
    pub(super) fsync_on_close: Option<bool>,
    pub(super) open_sync: Option<OpenSync>,
}

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "fsync",
        aliases: &[],
        bare: false,
        meaning: "fsync after every N writes, once the worker's I/O has finished (0 = never)",
        field: "fsync",
        path: KeyPath::None,
        apply: |d, v| {
            d.sync.fsync_every_writes = Some(parse_sync_every(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "fdatasync",
        aliases: &[],
        bare: false,
        meaning: "fdatasync after every N writes, once the worker's I/O has finished (0 = never)",
        field: "fdatasync",
        path: KeyPath::None,
        apply: |d, v| {
            d.sync.fdatasync_every_writes = Some(parse_sync_every(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "end_fsync",
        aliases: &[],
        bare: true,
        meaning: "fsync once when the job's writes are done",
        field: "end_fsync",
        path: KeyPath::None,
        apply: |d, v| {
            d.sync.end_fsync = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "fsync_on_close",
        aliases: &[],
        bare: true,
        meaning: "fsync when the worker closes the target",
        field: "fsync_on_close",
        path: KeyPath::None,
        apply: |d, v| {
            d.sync.fsync_on_close = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "sync",
        aliases: &[],
        bare: true,
        meaning: "open the target with O_SYNC (sync or 1) or O_DSYNC (dsync); none or 0 = neither",
        field: "sync",
        path: KeyPath::None,
        apply: apply_open_sync,
    },
];

/// `sync=`: fio 3.33's `none`/`0`, `sync`/`1` (O_SYNC) or `dsync` (O_DSYNC).
fn apply_open_sync(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    d.sync.open_sync = Some(match v.to_ascii_lowercase().as_str() {
        "0" | "none" | "false" | "no" | "off" => OpenSync::None,
        "1" | "sync" | "true" | "yes" | "on" => OpenSync::Sync,
        "dsync" => OpenSync::Dsync,
        _ => {
            return Err(ApplyError::Invalid(
                "use none (or 0), sync (or 1, O_SYNC) or dsync (O_DSYNC)".into(),
            ))
        }
    });
    Ok(())
}

/// A count of writes between two syncs (`fsync=N`, `fdatasync=N`): 0 turns them off.
fn parse_sync_every(v: &str) -> Result<u32, ApplyError> {
    to_u32(parse_count(v)?, v)
}

impl JobDraft {
    /// The sync keys.
    pub(super) fn build_sync(&self, spec: &mut JobSpec) {
        spec.sync = SyncSpec {
            fsync_every_writes: self.sync.fsync_every_writes.unwrap_or(0),
            fdatasync_every_writes: self.sync.fdatasync_every_writes.unwrap_or(0),
            end_fsync: self.sync.end_fsync.unwrap_or(false),
            fsync_on_close: self.sync.fsync_on_close.unwrap_or(false),
            open_sync: self.sync.open_sync.unwrap_or_default(),
        };
    }
}

#[cfg(test)]
mod tests {
    use crate::keys::draft;
    use crate::model::{OpenSync, SyncSpec};

    #[test]
    fn sync_keys_follow_fio() {
        let spec = draft(&[
            ("size", Some("1M")),
            ("fsync", Some("32")),
            ("fdatasync", Some("8")),
            ("end_fsync", None),
            ("fsync_on_close", Some("1")),
            ("sync", Some("none")),
        ])
        .unwrap();
        assert_eq!(
            spec.sync,
            SyncSpec {
                fsync_every_writes: 32,
                fdatasync_every_writes: 8,
                end_fsync: true,
                fsync_on_close: true,
                open_sync: OpenSync::None,
            }
        );
        assert_eq!(
            draft(&[("fsync", Some("x"))]).unwrap_err().key.as_deref(),
            Some("fsync")
        );
        assert_eq!(
            draft(&[("sync", Some("maybe"))]).unwrap_err().to_string(),
            "--sync=maybe: use none (or 0), sync (or 1, O_SYNC) or dsync (O_DSYNC)"
        );
        // Files and devices are opened with O_DSYNC; only mmap's stores cannot be made so.
        let spec = draft(&[("size", Some("1M")), ("sync", Some("dsync"))]).unwrap();
        assert_eq!(spec.sync.open_sync, OpenSync::Dsync);
        let refused = draft(&[
            ("size", Some("1M")),
            ("ioengine", Some("mmap")),
            ("sync", Some("dsync")),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            refused.starts_with("--sync=dsync: ioengine=mmap writes by storing into a mapping"),
            "{refused}"
        );
        // The simulated stacks flush their drive's cache, and make writes synchronous.
        let spec = draft(&[
            ("filename", Some("sim:usb3-uas-ssd")),
            ("end_fsync", None),
            ("fsync", Some("4")),
            ("sync", Some("1")),
        ])
        .unwrap();
        assert!(spec.sync.end_fsync && spec.sync.open_sync == OpenSync::Sync);
    }
}
