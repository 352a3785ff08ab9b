//! Faults a simulated stack met and recovered from (a dropped command answered by an ABORT
//! TASK and a retry, USB CRC retries) show wherever the run's figures do: the table `run`
//! prints, `show`, and the HTML report, not only the JSON.

use crate::common::{run_ok_with_db as run_ok, stdout};

#[test]
fn recovered_faults_show_in_the_table_show_and_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let out = run_ok(
        &db,
        &[
            "run",
            "--target=sim:usb3-uas-ssd",
            "--size=4m",
            "--rw=randread",
            "--number_ios=200",
            "--faults=seed=7,drop@cmd=40",
        ],
    );
    let line =
        "[job] faults and recovery: faults injected 1, commands retried 1, UAS ABORT TASKs 1";
    let table = stdout(&out);
    assert!(table.contains(line), "{table}");
    let shown = stdout(&run_ok(&db, &["show", "r1"]));
    assert!(shown.contains(line), "{shown}");
    let html_path = dir.path().join("report.html");
    run_ok(&db, &["report", "r1", "-o", html_path.to_str().unwrap()]);
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(
        html.contains("<h2>Faults and recovery</h2>"),
        "no faults section"
    );
    assert!(
        html.contains("faults injected 1, commands retried 1, UAS ABORT TASKs 1"),
        "no fault counts in the report"
    );
}
