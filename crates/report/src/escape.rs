//! Control characters in text printed for people: a job name, path or message taken from the
//! user's input may hold a line break or a terminal escape sequence (`ESC [31m`), which would
//! break a table's rows or a one-line error, or drive the reader's terminal. Machine outputs
//! keep the text as it is (JSON escapes it, CSV quotes it).

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with every control character written as an escape: `\n`, `\r`, `\t`, and `\xNN` for
/// the other C0 controls and DEL, `\u{NN}` for the C1 controls (U+0080..U+009F, which some
/// terminals obey as CSI and friends). Printable text, any script, is kept as it is; a
/// backslash is kept too, so the escaped form is for reading, not for parsing back.
pub fn escape_control(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => escaped.push_str("\\n"),
            '\r' => escaped.push_str("\\r"),
            '\t' => escaped.push_str("\\t"),
            // C0 and DEL fit in one byte: the form people know from shells (`\x1b`).
            c if c.is_control() && (c as u32) <= 0x7f => {
                let _ = write!(escaped, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let _ = write!(escaped, "\\u{{{:x}}}", c as u32);
            }
            c => escaped.push(c),
        }
    }
    Cow::Owned(escaped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_text_is_borrowed_unchanged() {
        assert!(matches!(
            escape_control("seq-read Q8 — Größe 日本"),
            Cow::Borrowed("seq-read Q8 — Größe 日本")
        ));
    }

    #[test]
    fn every_control_character_is_escaped() {
        assert_eq!(escape_control("a\nb\r\tc"), "a\\nb\\r\\tc");
        assert_eq!(escape_control("\x1b[31mred"), "\\x1b[31mred");
        assert_eq!(escape_control("nul\0del\x7f"), "nul\\x00del\\x7f");
        assert_eq!(escape_control("csi\u{9b}2J"), "csi\\u{9b}2J");
        assert!(!escape_control("\u{85}\u{9f}").chars().any(char::is_control));
    }
}
