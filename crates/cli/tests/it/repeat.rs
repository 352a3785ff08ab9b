//! `run --repeat N` (issue 38): each job, sweep point and what-if target run N times, the
//! headline figures' mean, standard deviation and 95% interval (Student's t) in the table,
//! native JSON, CSV and HTML report, and `compare` marking a difference inside the noise
//! (docs/decisions/0032-repeats.md). On the null engine (wall time) and simulated stacks
//! (deterministic: the spread is what a different seed per repeat meets on the stack).

use crate::common::{run_in, stderr, stdout, storlab_with_db};
use serde_json::Value;

/// scipy.stats.t.ppf(0.975, 2): the half-width factor of three repeats' interval.
const T_975_DF2: f64 = 4.302_652_729_749_464;

/// A small random read on the simulated SATA hard disk: seeks make its figures depend on the
/// offsets drawn, so repeats on different seeds spread.
const HDD_JOB: [&str; 5] = [
    "--target=sim:sata-ahci-hdd",
    "--rw=randread",
    "--bs=4k",
    "--size=16m",
    "--number_ios=60",
];

fn json_of(dir: &std::path::Path, args: &[&str]) -> Value {
    let out = run_in(dir, args);
    assert!(out.status.success(), "storlab {args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("native JSON")
}

fn figure(doc: &Value, path: &[&str]) -> f64 {
    path.iter()
        .fold(doc, |value, key| &value[*key])
        .as_f64()
        .unwrap_or_else(|| panic!("{path:?} in {doc}"))
}

#[test]
fn bad_repeat_counts_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["0", "three", "-1", "1.5", ""] {
        let argument = format!("--repeat={bad}");
        let out = run_in(
            dir.path(),
            &["run", "--no-db", "--ioengine=null", &argument],
        );
        let said = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{argument}: {said}");
        assert_eq!(said.lines().count(), 1, "{argument}: {said}");
        assert!(said.contains("--repeat"), "{argument}: {said}");
        assert!(out.stdout.is_empty(), "{argument}: nothing runs");
    }
}

#[test]
fn null_engine_repeats_give_the_spread_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.html");
    let base = [
        "run",
        "--no-db",
        "--ioengine=null",
        "--rw=read",
        "--size=8m",
    ];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter()
            .chain(extra)
            .map(|s| s.to_string())
            .chain(["--repeat".into(), "3".into()])
            .collect()
    };
    let report_arg = format!("--report={}", report.display());
    let out = run_in(dir.path(), &with(&[&report_arg]));
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    assert!(
        table.contains("repeats: mean, standard deviation and 95% interval"),
        "{table}"
    );
    for figure in ["MB/s", "IOPS", "mean lat", "p99 clat"] {
        assert!(table.contains(figure), "{figure} in {table}");
    }
    assert!(table.contains("3/3"), "{table}");
    assert!(
        stderr(&out).contains("(repeat 3/3) done"),
        "{}",
        stderr(&out)
    );
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(
        html.contains("<h2>Repeats</h2>"),
        "the HTML report has the repeats"
    );
    assert!(html.contains("95% interval"));

    // JSON: the statistics are those of the three repeats' own figures.
    let doc: Value = {
        let args = with(&["--output-format=json"]);
        let out = run_in(dir.path(), &args);
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 3, "one job per repeat");
    let bw: Vec<f64> = jobs
        .iter()
        .map(|job| figure(job, &["read", "bw_bytes_per_s"]))
        .collect();
    let mean = bw.iter().sum::<f64>() / 3.0;
    let sd = (bw.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
    let spread = &doc["repeats"][0]["bw_bytes_per_s"];
    assert_eq!(spread["n"], 3);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    assert!(close(figure(spread, &["mean"]), mean), "{spread}");
    assert!(close(figure(spread, &["stddev"]), sd), "{spread}");
    let half = T_975_DF2 * sd / 3f64.sqrt();
    assert!(
        close(figure(spread, &["ci95_high"]), mean + half),
        "{spread}"
    );
    assert!(
        close(figure(spread, &["ci95_low"]), mean - half),
        "{spread}"
    );
    for (index, job) in jobs.iter().enumerate() {
        assert_eq!(job["job"]["repeat"]["index"], index + 1);
        assert_eq!(job["job"]["repeat"]["of"], 3);
    }

    // CSV: a repeat column, and the statistics' rows.
    let out = run_in(dir.path(), &with(&["--output-format=csv"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = stdout(&out);
    assert!(csv.lines().next().unwrap().ends_with(",repeat"), "{csv}");
    for statistic in ["mean", "stddev", "ci95_low", "ci95_high"] {
        assert!(
            csv.lines()
                .any(|line| line.ends_with(&format!(",{statistic}"))),
            "{statistic} row in {csv}"
        );
    }
    assert_eq!(csv.lines().count(), 1 + 3 + 4, "{csv}");
}

#[test]
fn a_run_without_repeats_is_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["run", "--no-db", "--ioengine=null", "--size=1m"];
    let doc = json_of(dir.path(), &[&args[..], &["--output-format=json"]].concat());
    assert!(doc.get("repeats").is_none(), "no repeats key");
    assert!(doc["jobs"][0]["job"].get("repeat").is_none());
    let once = json_of(
        dir.path(),
        &[&args[..], &["--output-format=json", "--repeat=1"]].concat(),
    );
    assert!(once.get("repeats").is_none(), "--repeat 1 is one run");
    let out = run_in(dir.path(), &[&args[..], &["--output-format=csv"]].concat());
    assert!(!stdout(&out).lines().next().unwrap().contains("repeat"));
}

#[test]
fn simulated_repeats_differ_by_seed_and_are_reproducible() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        &["run", "--no-db", "--output-format=json", "--repeat=3"][..],
        &HDD_JOB,
    ]
    .concat();
    let first = json_of(dir.path(), &args);
    let again = json_of(dir.path(), &args);
    assert_eq!(
        first["repeats"], again["repeats"],
        "the same seeds on the same stack give the same figures"
    );
    let jobs = first["jobs"].as_array().unwrap();
    let seeds: Vec<u64> = jobs.iter().map(|j| j["seed"].as_u64().unwrap()).collect();
    assert_eq!(
        seeds[1],
        seeds[0].wrapping_add(1),
        "repeat k runs on seed + k"
    );
    assert_eq!(seeds[2], seeds[0].wrapping_add(2));
    let iops: Vec<f64> = jobs.iter().map(|j| figure(j, &["read", "iops"])).collect();
    assert!(
        iops[0] != iops[1] || iops[1] != iops[2],
        "different offsets meet different seeks: {iops:?}"
    );
    assert!(figure(&first["repeats"][0], &["iops", "stddev"]) > 0.0);
    // Repeat 1 is the job as written: the same figures as a run without --repeat.
    let once_args = [&["run", "--no-db", "--output-format=json"][..], &HDD_JOB].concat();
    let once = json_of(dir.path(), &once_args);
    assert_eq!(once["jobs"][0]["read"]["iops"], jobs[0]["read"]["iops"]);
}

#[test]
fn preset_points_are_repeated_and_their_cells_give_the_interval() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "--no-db",
        "--target=sim:sata-ahci-hdd",
        "--preset=iometer-response-time",
        "--runtime=200ms",
        "--repeat=2",
    ];
    let out = run_in(dir.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    let preset_rows: Vec<&str> = table.lines().take_while(|l| !l.is_empty()).collect();
    assert!(
        preset_rows.iter().skip(3).all(|row| row.contains('±')),
        "each cell is a mean with its interval: {table}"
    );
    assert!(table.contains("2/2"), "{table}");
    let json = json_of(dir.path(), &[&args[..], &["--output-format=json"]].concat());
    assert_eq!(
        json["jobs"].as_array().unwrap().len(),
        4,
        "2 points x 2 repeats"
    );
    assert_eq!(json["repeats"].as_array().unwrap().len(), 2);
}

#[test]
fn compare_marks_a_difference_inside_the_noise() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let save = |target: &str| {
        let mut args = vec!["run", "--repeat=3"];
        args.extend(HDD_JOB.iter().skip(1));
        args.push(target);
        let out = storlab_with_db(&db)
            .current_dir(dir.path())
            .args(&args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    };
    save("--target=sim:sata-ahci-hdd");
    save("--target=sim:sata-ahci-hdd");
    save("--target=sim:sata-ahci-ssd");
    let out = storlab_with_db(&db)
        .args(["compare", "r1", "r2", "r3"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    let row = table
        .lines()
        .find(|line| line.starts_with("randread") || line.contains(" read "))
        .unwrap_or_else(|| panic!("{table}"));
    let ratios: Vec<&str> = row
        .split("  ")
        .filter(|c| c.trim().starts_with('x'))
        .collect();
    assert_eq!(ratios.len(), 2, "{table}");
    assert!(
        ratios[0].contains("(noise)"),
        "the same drive twice: {table}"
    );
    assert!(
        !ratios[1].contains("(noise)"),
        "an SSD against a disk: {table}"
    );
    assert!(table.contains("Welch"), "{table}");
}

#[test]
fn each_what_if_target_is_repeated_with_its_own_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["run", "--no-db", "--repeat=2", "--target=sim:sata-ahci-ssd"];
    args.extend(HDD_JOB);
    let doc = json_of(dir.path(), &[&args[..], &["--output-format=json"]].concat());
    let targets = doc["what_if"].as_array().unwrap();
    assert_eq!(targets.len(), 2);
    for target in targets {
        let report = &target["report"];
        assert_eq!(
            report["jobs"].as_array().unwrap().len(),
            2,
            "{}",
            target["target"]
        );
        assert_eq!(report["repeats"][0]["iops"]["n"], 2, "{}", target["target"]);
    }
    let out = run_in(dir.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    assert_eq!(table.matches("repeats: mean").count(), 2, "{table}");
}
