//! fio's help switches on storlab's own tables: `--cmdhelp[=KEY]` (every job key, or one with
//! its aliases) and `--enghelp[=ENGINE]` (the engines, or one engine's own keys), laid out as
//! fio 3.33 prints them (parse.c `show_option_help`, ioengines.c `fio_show_ioengine_help`), so a
//! script that greps fio's help finds the same lines. The text comes from the key table that
//! reads job files (`storlab_job::keys::KEYS`), so help cannot drift from what is accepted.

use crate::exit::{bad_input, Failure};
use storlab_job::keys::{find_key, KeyDef, KEYS};

/// fio pads a key's name to this many characters before its meaning in a key list.
const LIST_NAME_COLUMN: usize = 24;
/// fio right-aligns the labels of one key's help to this many characters.
const DETAIL_LABEL_COLUMN: usize = 20;

/// `--cmdhelp`: every key (`None`, fio's bare switch, or `all`), or the one `name` asks for.
pub(crate) fn cmdhelp(name: Option<&str>) -> Result<String, Failure> {
    let name = name.filter(|name| !name.is_empty() && *name != "all");
    let Some(name) = name else {
        return Ok(key_list(KEYS.iter()));
    };
    let key = find_key(name).ok_or_else(|| {
        bad_input(format!(
            "--cmdhelp={name}: no such job key (`storlab fio --cmdhelp` lists them)"
        ))
    })?;
    let mut text = detail_line(key.name, key.meaning);
    for alias in key.aliases {
        text.push_str(&detail_line("alias", alias));
    }
    text.push('\n');
    Ok(text)
}

/// `--enghelp`: storlab's engines (`None`), or the keys of the engine `name` asks for.
pub(crate) fn enghelp(name: Option<&str>) -> Result<String, Failure> {
    let engines = storlab_engine::registry::engine_names();
    let Some(name) = name.filter(|name| !name.is_empty()) else {
        let mut text = String::from("Available IO engines:\n");
        for engine in engines {
            text.push('\t');
            text.push_str(engine);
            text.push('\n');
        }
        return Ok(text);
    };
    if !engines.contains(&name) {
        return Err(bad_input(format!(
            "--enghelp={name}: storlab has no such engine (`storlab fio --enghelp` lists them)"
        )));
    }
    let own = KEYS.iter().filter(|key| engines_of(key).any(|e| e == name));
    Ok(key_list(own))
}

/// The engines a key belongs to: its meaning starts with them ("io_uring, libaio: ..."), the
/// table's convention for an engine's own options; none for a key of every engine.
fn engines_of(key: &KeyDef) -> impl Iterator<Item = &'static str> {
    let names = key.meaning.split_once(": ").map_or("", |(head, _)| head);
    let listed = names
        .split(", ")
        .all(|engine| storlab_engine::registry::engine_names().contains(&engine));
    names.split(", ").filter(move |_| listed)
}

fn key_list<'a>(keys: impl Iterator<Item = &'a KeyDef>) -> String {
    keys.map(|key| format!("{:<LIST_NAME_COLUMN$}: {}\n", key.name, key.meaning))
        .collect()
}

fn detail_line(label: &str, value: &str) -> String {
    format!("{label:>DETAIL_LABEL_COLUMN$}: {value}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_key_shows_its_meaning_and_aliases_as_fio_lays_them_out() {
        let text = cmdhelp(Some("blocksize")).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            lines.next().unwrap(),
            format!("{:>20}: {}", "bs", find_key("bs").unwrap().meaning)
        );
        assert_eq!(lines.next().unwrap(), format!("{:>20}: blocksize", "alias"));
        assert!(cmdhelp(Some("no_such_key")).is_err());
    }

    #[test]
    fn the_bare_switch_lists_every_key() {
        let text = cmdhelp(None).unwrap();
        assert_eq!(text.lines().count(), KEYS.len());
        assert_eq!(text, cmdhelp(Some("all")).unwrap());
        assert!(text.lines().any(|line| line.starts_with("iodepth ")));
    }

    #[test]
    fn an_engine_lists_its_own_keys_and_no_other_engines() {
        let uring = enghelp(Some("io_uring")).unwrap();
        assert!(uring.lines().any(|line| line.starts_with("sqthread_poll ")));
        assert!(!uring
            .lines()
            .any(|line| line.starts_with("userspace_reap ")));
        let libaio = enghelp(Some("libaio")).unwrap();
        assert!(libaio
            .lines()
            .any(|line| line.starts_with("userspace_reap ")));
        assert!(libaio.lines().any(|line| line.starts_with("cmdprio ")));
        assert!(!libaio.lines().any(|line| line.starts_with("iodepth ")));
        assert!(enghelp(Some("psync")).unwrap().is_empty());
        let all = enghelp(None).unwrap();
        assert!(all.starts_with("Available IO engines:\n\t"));
        assert!(all.contains("\tlibaio\n"));
        assert!(enghelp(Some("windowsaio")).is_err());
    }
}
