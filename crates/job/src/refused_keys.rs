//! fio options storlab knows by name but does not do, each with the one-line reason its refusal
//! gives (instead of "unknown key", which would suggest a typo): found running fio 3.33's own
//! example job files (`bench/fio-examples.sh`).

/// A fio option storlab refuses, and why (said after the key in the refusal).
struct RefusedKey {
    /// fio's option names (lower case) this reason covers.
    names: &'static [&'static str],
    /// What storlab does not do, and what it offers instead where it has something.
    reason: &'static str,
}

/// fio 3.33 options (fio's HOWTO names each) storlab refuses, by what they ask for.
const REFUSED_KEYS: &[RefusedKey] = &[];

/// The reason storlab refuses fio option `key`, when it is one it knows by name.
pub(crate) fn refusal_reason(key: &str) -> Option<&'static str> {
    let key = key.to_ascii_lowercase();
    REFUSED_KEYS
        .iter()
        .find(|refused| refused.names.contains(&key.as_str()))
        .map(|refused| refused.reason)
}

/// Every fio option name storlab refuses with a reason (the docs test checks each is listed).
pub fn refused_key_names() -> impl Iterator<Item = &'static str> {
    REFUSED_KEYS
        .iter()
        .flat_map(|refused| refused.names.iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_keys_are_no_keys_of_the_table() {
        for name in refused_key_names() {
            assert!(
                crate::keys::find_key(name).is_none(),
                "{name} is both a key and refused"
            );
        }
    }

    #[test]
    fn lookup_ignores_case() {
        for name in refused_key_names() {
            assert!(refusal_reason(&name.to_ascii_uppercase()).is_some());
        }
        assert!(refusal_reason("iodepth").is_none());
    }
}
