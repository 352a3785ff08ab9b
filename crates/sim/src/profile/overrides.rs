//! A stack's `[overrides]`: merged into each part's TOML table before the part is parsed, with
//! errors that name the stack file and `overrides.ROLE.KEY`.

use super::toml_errors::{parse, parse_table, ProfileFile};
use crate::error::SimError;

/// One part as a stack uses it: its file, plus the stack's overrides for its role.
pub(super) struct PartText<'a> {
    pub(super) origin: &'a str,
    pub(super) text: &'a str,
    pub(super) overrides: Option<&'a toml::Table>,
    pub(super) stack_origin: &'a str,
    pub(super) role: &'a str,
}

impl PartText<'_> {
    /// The part's profile with the stack's overrides merged in (tables key by key, values
    /// replaced), validated. A mistake the overrides make names the stack file and
    /// `overrides.ROLE.KEY`; a mistake of the part file itself names that file.
    pub(super) fn load<T: ProfileFile>(
        &self,
        validate: fn(&str, &T) -> Result<(), SimError>,
    ) -> Result<T, SimError> {
        let Some(overrides) = self.overrides else {
            let part: T = parse(self.origin, self.text)?;
            validate(self.origin, &part)?;
            return Ok(part);
        };
        let mut table = parse_table(self.origin, self.text)?;
        merge_table(&mut table, overrides);
        let merged = match T::from_table(table) {
            Ok(merged) => merged,
            Err(e) => {
                if !e.key.as_deref().is_some_and(|k| has_path(overrides, k)) {
                    // The part's own file may be at fault: then report it as alone.
                    parse::<T>(self.origin, self.text)?;
                }
                return Err(self.override_error(overrides, e.key.as_deref(), &e.message));
            }
        };
        match validate(self.origin, &merged) {
            Ok(()) => Ok(merged),
            Err(SimError::Profile { key, reason, .. }) => {
                // Without the overrides the part may already be wrong: then its file is.
                let plain: T = parse(self.origin, self.text)?;
                validate(self.origin, &plain)?;
                Err(self.override_error(overrides, Some(&key), &reason))
            }
            Err(other) => Err(other),
        }
    }

    /// An error the stack's overrides cause: `overrides.ROLE.KEY` when the overrides set the
    /// key, else `overrides.ROLE` with the key in the reason (a limit involving several keys).
    fn override_error(&self, overrides: &toml::Table, key: Option<&str>, reason: &str) -> SimError {
        let (key, reason) = match key {
            Some(k) if has_path(overrides, k) => {
                (format!("overrides.{}.{k}", self.role), reason.to_string())
            }
            Some(k) => (format!("overrides.{}", self.role), format!("{k}: {reason}")),
            None => (format!("overrides.{}", self.role), reason.to_string()),
        };
        SimError::profile(
            self.stack_origin,
            &key,
            format!("{reason} (applied to {})", self.origin),
        )
    }
}

/// Whether the dotted `path` names a value in `table`.
pub(super) fn has_path(table: &toml::Table, path: &str) -> bool {
    match path.split_once('.') {
        Some((head, rest)) => table
            .get(head)
            .and_then(|v| v.as_table())
            .is_some_and(|t| has_path(t, rest)),
        None => table.contains_key(path),
    }
}

/// Merges `overrides` into `base`: nested tables merge, every other value replaces.
pub(super) fn merge_table(base: &mut toml::Table, overrides: &toml::Table) {
    for (key, value) in overrides {
        match (base.get_mut(key), value) {
            (Some(toml::Value::Table(inner)), toml::Value::Table(over)) => merge_table(inner, over),
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}
