//! docs/simulator.md lists the simulator's events by name ("One thread, one closed `Event`
//! enum"): the list must be the `Event` enum's variants in `event.rs`, all of them, in order,
//! so the doc cannot fall behind the code again (it named 7 kinds while the enum had 9).

use std::path::Path;

fn crate_file(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The variant names of `pub enum Event { … }` in event.rs, in declaration order.
fn event_variants(source: &str) -> Vec<String> {
    let start = source
        .find("pub enum Event {")
        .expect("event.rs declares `pub enum Event`");
    let body = &source[start + "pub enum Event {".len()..];
    let body = &body[..body.find("\n}").expect("the enum ends")];
    body.lines()
        .map(str::trim)
        .filter(|line| !line.starts_with("//") && !line.is_empty())
        .filter_map(|line| {
            let name: String = line
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty() && name.starts_with(char::is_uppercase)).then_some(name)
        })
        .collect()
}

/// The backticked names in the doc's bullet about the `Event` enum that are event variants
/// (capitalised identifiers other than `Event` itself), in the order the doc gives them.
fn documented_events(doc: &str) -> Vec<String> {
    let start = doc
        .find("- **One thread, one closed `Event` enum**")
        .expect("docs/simulator.md has the `Event` enum bullet");
    let bullet = &doc[start..];
    let end = bullet[2..].find("\n- ").map_or(bullet.len(), |i| i + 2);
    let bullet = &bullet[..end];
    let mut names = Vec::new();
    for (i, piece) in bullet.split('`').enumerate() {
        let is_identifier = piece.chars().all(|c| c.is_alphanumeric() || c == '_');
        let is_variant = i % 2 == 1 && is_identifier && piece.starts_with(char::is_uppercase);
        if is_variant && piece != "Event" && !names.iter().any(|n| n == piece) {
            names.push(piece.to_string());
        }
    }
    names
}

#[test]
fn the_simulator_doc_lists_every_event() {
    let variants = event_variants(&crate_file("src/event.rs"));
    assert!(variants.len() >= 9, "found only {variants:?} in event.rs");
    let documented = documented_events(&crate_file("../../docs/simulator.md"));
    assert_eq!(
        documented, variants,
        "docs/simulator.md's `Event` bullet (\"Core\") names other events than event.rs declares: \
         list every variant, in declaration order"
    );
}
