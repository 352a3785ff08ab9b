//! The 2013 review's Windows 7 → Windows 8 comparisons, from its own text (HardWare.fr,
//! "USB 3.0 : xHCI, BOT, UASP, Windows 7 et 8... pas si simple !", G. Louel, 21/03/2013;
//! `../shared/reference/seeds/hwfr2013-usb3-xhci-bot-uasp.txt`), written down as data in
//! `validation/hwfr2013-windows-7-to-8.toml`: every sentence that says which way a port went from
//! Windows 7 to Windows 8 (and which way its Windows 8 scenarios stand against each other), the
//! two simulated stacks it compares, and the sign (and figure, where the text gives one). The
//! tests run them on the shipped stacks, print each table (`--nocapture`) and count the signs
//! that agree (decision 0048).
//!
//! The review's charts are not in its text, so the tests compare the direction of each change,
//! not absolute figures: a change within ±[`SAME_BAND_PERCENT`] counts as "same", which is what
//! the review says of the MCCI driver ("des performances similaires indépendamment du système")
//! and of its two xHCI drivers under MCCI's UAS ("à la marge d'erreur près, identiques"). Its
//! tests: IOMeter, sequential 2 MiB and 4 KiB, highly compressible data, its recap at queue
//! depth 1 (the depth its Windows 7 page quotes its gains at).

use super::*;
use serde::Deserialize;

/// A change smaller than this share of the first figure is "the same" (the review's margin of
/// error: it calls its two xHCI drivers under MCCI's UAS "identical" and MCCI's Windows 7 and 8
/// figures "similar"; its smallest stated change is 30 MB/s on ~250, 12%).
const SAME_BAND_PERCENT: f64 = 5.0;

/// The review's comparisons, as data.
const COMPARISONS_TOML: &str =
    include_str!("../../../../../validation/hwfr2013-windows-7-to-8.toml");

/// Signs of `[[windows7_to_8]]` that agree (23 of 25; on main before decision 0048, 17 of 25):
/// the count can only rise. The two that differ: the Etron port's 2 MB writes (the review: -100
/// MB/s under Windows 8; the model: up, as the ASMedia port's, with no mechanism known that
/// separates the two controllers' writes) and the Intel port's 2 MB writes from Windows 7's BOT
/// to Windows 8's UAS (derived: the same; the model: up).
const WINDOWS7_TO_8_AGREE_AT_LEAST: usize = 23;

/// Signs of `[[windows8]]` that agree (5 of 13; on main before decision 0048, 8 of 13): the
/// count can only rise. The eight that differ are the Etron port "closing the march": with
/// transfers up to 2 MiB its BOT reads and writes as fast as the ASMedia port's, above the UAS
/// ports at 256 KiB per command; nothing known of the EJ168 slows its large transfers under the
/// in-box driver (with 64 KiB transfers, on main, it was last only because every Windows 8 BOT
/// port was, against the review's ASMedia figures above 300 MB/s).
const WINDOWS8_AGREE_AT_LEAST: usize = 5;

/// Which way a figure went from the first scenario to the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Change {
    Up,
    Down,
    Same,
}

impl Change {
    fn of(before: f64, after: f64) -> Change {
        let percent = (after - before) / before * 100.0;
        if percent > SAME_BAND_PERCENT {
            Change::Up
        } else if percent < -SAME_BAND_PERCENT {
            Change::Down
        } else {
            Change::Same
        }
    }
    fn symbol(self) -> &'static str {
        match self {
            Change::Up => "up",
            Change::Down => "down",
            Change::Same => "same",
        }
    }
}

/// The review's two block sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
enum Block {
    #[serde(rename = "2m")]
    TwoMib,
    #[serde(rename = "4k")]
    FourKib,
}

impl Block {
    const BOTH: [Block; 2] = [Block::TwoMib, Block::FourKib];
    fn bytes(self) -> u32 {
        match self {
            Block::TwoMib => 2 * MIB,
            Block::FourKib => 4 * KIB,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Direction {
    Read,
    Write,
}

/// One comparison the review states: from `before` to `after`, at one block size and direction.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Comparison {
    /// Where it says so: page and the sentence (in French, as published).
    source: String,
    before: String,
    after: String,
    block: Block,
    direction: Direction,
    published: Change,
    /// The change in MB/s where the text gives one (its recap's round figures).
    #[serde(default)]
    published_mb_s: Option<f64>,
}

/// The data file: `[[windows7_to_8]]` and `[[windows8]]` tables.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Comparisons {
    windows7_to_8: Vec<Comparison>,
    windows8: Vec<Comparison>,
}

fn comparisons() -> Comparisons {
    toml::from_str(COMPARISONS_TOML)
        .unwrap_or_else(|e| panic!("validation/hwfr2013-windows-7-to-8.toml: {e}"))
}

/// IOMeter's sequential run at QD1: ~100 MB at 2 MiB, 16 MB at 4 KiB (both well inside the test
/// region, so no run wraps onto what it just wrote).
fn sequential(direction: Direction, block: Block) -> Workload {
    let op = match direction {
        Direction::Read => Op::Read,
        Direction::Write => Op::Write,
    };
    let ios = match block {
        Block::TwoMib => 48,
        Block::FourKib => 4000,
    };
    Workload {
        op,
        ..Workload::sequential_read(block.bytes(), 1, ios)
    }
}

type Figures = BTreeMap<(String, Block, Direction), f64>;

/// Each stack's four figures (2 MiB and 4 KiB, read and write, QD1), measured once in a fixed
/// order on one prepared simulator per stack.
fn figures(comparisons: &[Comparison]) -> Figures {
    let mut stacks: Vec<&str> = comparisons
        .iter()
        .flat_map(|c| [c.before.as_str(), c.after.as_str()])
        .collect();
    stacks.sort_unstable();
    stacks.dedup();
    let mut figures = BTreeMap::new();
    for stack in stacks {
        let mut bench = Bench::new(stack);
        for block in Block::BOTH {
            for direction in [Direction::Read, Direction::Write] {
                let mb_s = bench.measure(sequential(direction, block)).mb_per_s();
                figures.insert((stack.to_string(), block, direction), mb_s);
            }
        }
    }
    figures
}

/// Run `comparisons` on the simulated stacks, print each (published sign and figure, simulated
/// figures and sign) and fail when fewer than `agree_at_least` signs agree.
fn check_signs(comparisons: &[Comparison], agree_at_least: usize) {
    let figures = figures(comparisons);
    let mut agree = 0;
    for (i, c) in comparisons.iter().enumerate() {
        let figure = |stack: &str| figures[&(stack.to_string(), c.block, c.direction)];
        let (before, after) = (figure(&c.before), figure(&c.after));
        let simulated = Change::of(before, after);
        let ok = simulated == c.published;
        agree += usize::from(ok);
        eprintln!(
            "{:>2} {} {:>4} KiB {:<5} {} -> {}: published {} {}, simulated {:.1} -> {:.1} MB/s \
             ({:+.1}, {:+.1}%) {}{}\n     {}",
            i + 1,
            if ok { "ok  " } else { "MISS" },
            c.block.bytes() / KIB,
            format!("{:?}", c.direction).to_lowercase(),
            c.before,
            c.after,
            c.published.symbol(),
            c.published_mb_s
                .map_or(String::new(), |mb_s| format!("({mb_s:+.0} MB/s)")),
            before,
            after,
            after - before,
            (after - before) / before * 100.0,
            simulated.symbol(),
            if ok { "" } else { " <- differs" },
            c.source,
        );
    }
    eprintln!(
        "agree: {agree}/{} (a change within ±{SAME_BAND_PERCENT}% counts as same)",
        comparisons.len()
    );
    assert!(
        agree >= agree_at_least,
        "{agree} of {} signs agree, fewer than {agree_at_least}",
        comparisons.len()
    );
}

/// The review's Windows 7 → 8 signs on the simulated stacks.
#[test]
fn the_reviews_windows7_to_windows8_comparisons_keep_their_published_signs() {
    check_signs(&comparisons().windows7_to_8, WINDOWS7_TO_8_AGREE_AT_LEAST);
}

/// The review's Windows 8 scenarios against each other (page 7).
#[test]
fn the_reviews_windows8_scenarios_keep_their_published_order() {
    check_signs(&comparisons().windows8, WINDOWS8_AGREE_AT_LEAST);
}

/// Every stack the data names is shipped, and every sign can be told apart.
#[test]
fn the_review_comparisons_name_shipped_stacks() {
    let profiles = ProfileSet::embedded();
    let all = comparisons();
    assert_eq!(all.windows7_to_8.len(), 25);
    assert_eq!(all.windows8.len(), 13);
    for c in all.windows7_to_8.iter().chain(&all.windows8) {
        for stack in [&c.before, &c.after] {
            profiles
                .resolve(stack)
                .unwrap_or_else(|e| panic!("{stack} ({}): {e}", c.source));
        }
        assert_ne!(c.before, c.after, "{}", c.source);
    }
}

/// Windows 8's in-box xHCI driver (USBXHCI) is one driver under both of Windows 8's class
/// drivers: its per-transfer cost is the same value in both host profiles.
#[test]
fn windows8s_in_box_xhci_driver_costs_the_same_under_its_bot_and_uas_drivers() {
    let profiles = ProfileSet::embedded();
    let host = |stack: &str| profiles.resolve(stack).expect(stack).host;
    let bot = host("hwfr2013/asm1042-win8-bot");
    let uas = host("hwfr2013/intel-win8-uas");
    assert_eq!(bot.driver, storlab_sim::profile::DriverKind::Bot);
    assert_eq!(uas.driver, storlab_sim::profile::DriverKind::Uas);
    assert!(bot.xhci_transfer_cpu_ns > 0);
    assert_eq!(bot.xhci_transfer_cpu_ns, uas.xhci_transfer_cpu_ns);
    // MCCI's stack replaces Microsoft's drivers (p. 4): it does not pay it.
    assert_eq!(
        host("hwfr2013/asm1042-win8-mcci-uas").xhci_transfer_cpu_ns,
        0
    );
}
