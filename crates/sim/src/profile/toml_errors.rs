//! Parsing a profile file's TOML: the tag that picks a link kind or drive model, and errors
//! turned into one line naming the file, the key and the line.

use super::{
    BridgeProfile, ControllerProfile, DriveProfile, HostProfile, LinkProfile, SataLinkProfile,
    StackFile, Usb2LinkProfile, Usb3LinkProfile,
};
use crate::error::SimError;
use serde::Deserialize;

/// A profile file's type, built from its TOML table. Tagged files (links by `kind`, drives by
/// `model`) pick their variant first, so an error inside it still names its key (serde's
/// internally tagged enums buffer the table and lose the key and the line).
pub(super) trait ProfileFile: Sized {
    fn from_table(table: toml::Table) -> Result<Self, TableError>;
}

macro_rules! untagged_profile_file {
    ($($t:ty),*) => {$(
        impl ProfileFile for $t {
            fn from_table(table: toml::Table) -> Result<Self, TableError> {
                Ok(<$t>::deserialize(toml::Value::Table(table))?)
            }
        }
    )*};
}

untagged_profile_file!(HostProfile, ControllerProfile, BridgeProfile, StackFile);

/// Takes the tag key out of `table`: the variant's name, which must be one of `variants`.
pub(super) fn take_tag(
    table: &mut toml::Table,
    tag: &'static str,
    variants: &'static [&'static str],
) -> Result<String, TableError> {
    let wrong = |what: String| TableError {
        key: Some(tag.to_string()),
        message: format!(
            "{what}, expected one of {}",
            variants
                .iter()
                .map(|v| format!("`{v}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    match table.remove(tag) {
        None => Err(TableError {
            key: Some(tag.to_string()),
            message: format!("missing field `{tag}`"),
        }),
        Some(toml::Value::String(s)) if variants.contains(&s.as_str()) => Ok(s),
        Some(toml::Value::String(s)) => Err(wrong(format!("unknown variant `{s}`"))),
        Some(other) => Err(wrong(format!("invalid type: {}", other.type_str()))),
    }
}

/// The `kind` of a link profile, one per [`LinkProfile`] variant: its parser matches them all
/// by name, so a new link kind cannot fall into another's parser.
#[derive(Clone, Copy)]
enum LinkKind {
    Usb2Hs,
    Usb3Ss,
    Sata,
}

impl LinkKind {
    const ALL: [LinkKind; 3] = [LinkKind::Usb2Hs, LinkKind::Usb3Ss, LinkKind::Sata];
    const NAMES: &'static [&'static str] = &[
        LinkKind::ALL[0].name(),
        LinkKind::ALL[1].name(),
        LinkKind::ALL[2].name(),
    ];

    const fn name(self) -> &'static str {
        match self {
            LinkKind::Usb2Hs => "usb2-hs",
            LinkKind::Usb3Ss => "usb3-ss",
            LinkKind::Sata => "sata",
        }
    }
}

impl ProfileFile for LinkProfile {
    fn from_table(mut table: toml::Table) -> Result<Self, TableError> {
        let name = take_tag(&mut table, "kind", LinkKind::NAMES)?;
        let rest = toml::Value::Table(table);
        // `take_tag` accepted only these names: the search finds the one it took.
        let kind = LinkKind::ALL.into_iter().find(|k| k.name() == name);
        Ok(match kind {
            Some(LinkKind::Usb2Hs) => LinkProfile::Usb2Hs(Usb2LinkProfile::deserialize(rest)?),
            Some(LinkKind::Usb3Ss) => LinkProfile::Usb3Ss(Usb3LinkProfile::deserialize(rest)?),
            Some(LinkKind::Sata) => LinkProfile::Sata(SataLinkProfile::deserialize(rest)?),
            None => {
                return Err(TableError {
                    key: Some("kind".to_string()),
                    message: format!("unknown variant `{name}`"),
                })
            }
        })
    }
}

impl ProfileFile for DriveProfile {
    fn from_table(mut table: toml::Table) -> Result<Self, TableError> {
        let model = take_tag(&mut table, "model", crate::drive::DRIVE_MODELS)?;
        Ok(DriveProfile::deserialize_model(
            &model,
            toml::Value::Table(table),
        )?)
    }
}

/// A deserialisation error of a profile table: the dotted key it concerns (when known) and
/// what is wrong, in one line.
pub(super) struct TableError {
    pub(super) key: Option<String>,
    pub(super) message: String,
}

impl From<toml::de::Error> for TableError {
    fn from(e: toml::de::Error) -> TableError {
        // Without a source span toml names the key on a line of its own: "in `pcie.lanes`".
        let shown = e.to_string();
        let key = shown
            .lines()
            .filter_map(|l| l.strip_prefix("in `")?.strip_suffix('`'))
            .next_back()
            .map(str::to_string)
            .or_else(|| {
                // Unknown and missing fields name themselves in the message.
                ["unknown field `", "missing field `"].iter().find_map(|p| {
                    let rest = e.message().strip_prefix(p)?;
                    Some(rest[..rest.find('`')?].to_string())
                })
            });
        TableError {
            key,
            message: one_line(e.message()),
        }
    }
}

/// `message` on one line, with the hundreds of digits serde prints for a float such as 1e308
/// written in exponent form.
pub(super) fn one_line(message: &str) -> String {
    let mut out = String::new();
    for (i, piece) in message.replace('\n', " ").split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        match piece.parse::<f64>() {
            Ok(v) if i % 2 == 1 && piece.len() > 24 => out += &format!("{v:e}"),
            _ => out += piece,
        }
    }
    out
}

/// The dotted key each line of `text` sets (None for headers, comments and blank lines),
/// following `[table]` headers.
pub(super) fn keys_by_line(text: &str) -> impl Iterator<Item = Option<String>> + '_ {
    let mut table = String::new();
    text.lines().map(move |line| {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            table = header
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
            return None;
        }
        if line.starts_with('#') {
            return None;
        }
        let (k, _) = line.split_once('=')?;
        let k = k.trim().trim_matches('"');
        Some(if table.is_empty() {
            k.to_string()
        } else {
            format!("{table}.{k}")
        })
    })
}

/// The line (1-based) where `text` sets the dotted `key`.
pub(super) fn line_of_key(text: &str, key: &str) -> Option<usize> {
    keys_by_line(text)
        .position(|k| k.as_deref() == Some(key))
        .map(|i| i + 1)
}

/// The TOML table of a profile file; a syntax error names its line (and key, when the line
/// sets one).
pub(super) fn parse_table(origin: &str, text: &str) -> Result<toml::Table, SimError> {
    toml::from_str::<toml::Table>(text).map_err(|e| {
        let reason = one_line(e.message());
        let Some(span) = e.span() else {
            return SimError::profile(origin, "-", reason);
        };
        let start = span.start.min(text.len());
        let line = text[..start].matches('\n').count() + 1;
        // The key whose value the error is in, when the line before the error sets one.
        let key = text[..start]
            .rsplit('\n')
            .next()
            .filter(|before| before.contains('='))
            .and_then(|_| keys_by_line(text).nth(line - 1).flatten())
            .filter(|k| !k.is_empty());
        match key {
            Some(k) => SimError::profile(origin, &k, format!("{reason} (line {line})")),
            None => SimError::profile(origin, &format!("line {line}"), reason),
        }
    })
}

/// Parse one profile file, turning TOML errors into one line naming file, key and line.
pub(super) fn parse<T: ProfileFile>(origin: &str, text: &str) -> Result<T, SimError> {
    let table = parse_table(origin, text)?;
    T::from_table(table).map_err(|e| match e.key {
        Some(key) => {
            let reason = match line_of_key(text, &key) {
                Some(line) => format!("{} (line {line})", e.message),
                None => e.message,
            };
            SimError::profile(origin, &key, reason)
        }
        None => SimError::profile(origin, "-", e.message),
    })
}
