//! The HTML report through the binary: its structure (snapshot of chart titles and element
//! counts from a fixed-seed simulated run), its size for 20 runs, and a render in headless
//! Chromium whose screenshot must show every visible chart with ink in it.

use crate::common::{run_ok_with_db as run_ok, storlab_with_db as storlab};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Plot-area fill of every chart (storlab_report::html::PLOT_BACKGROUND).
const PLOT_RGB: [u8; 3] = [0xf4, 0xf6, 0xfa];
/// Pixels of plot fill in a row for the row to belong to a chart's plot area.
const MIN_PLOT_ROW_PIXELS: usize = 300;
/// Rows inside a plot area that may show little fill: grid lines, and a layer's group of
/// near-full-width bars in the utilisation chart (4 bars of 12 px). Charts are separated by far
/// more (axis labels, legend, table, next title: over 150 px).
const MAX_GAP_ROWS_IN_PLOT: usize = 80;
/// Report size limit for 20 runs.
const MAX_REPORT_BYTES_20_RUNS: u64 = 2 * 1024 * 1024;

/// A database with one simulated sweep (block sizes × queue depths), returned with its path.
fn simulated_run(dir: &Path) -> PathBuf {
    let db = dir.join("results.sqlite");
    let mut args = vec![
        "run".to_string(),
        "--target".into(),
        "sim:usb3-uas-ssd".into(),
        "--size=64m".into(),
        "--seed=7".into(),
    ];
    for (bs, depth) in [("4k", 1), ("4k", 32), ("64k", 1), ("1m", 8)] {
        args.extend([
            format!("--name=read-{bs}-q{depth}"),
            "--rw=randread".into(),
            format!("--bs={bs}"),
            format!("--iodepth={depth}"),
            "--number_ios=300".into(),
        ]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_ok(&db, &args);
    db
}

/// Chart titles and the count of drawn elements per chart: what the report shows, without
/// pixel coordinates, so layout tweaks do not churn the snapshot but a lost chart does.
fn structure(html: &str) -> String {
    let mut out = String::new();
    for figure in html.split("<figure class=\"chart\">").skip(1) {
        let title = figure
            .split("<figcaption>")
            .nth(1)
            .and_then(|t| t.split("</figcaption>").next())
            .unwrap_or("?");
        let count = |needle: &str| figure.matches(needle).count();
        out.push_str(&format!(
            "{title}: bars={} lines={} cells={} legend={} table_rows={}\n",
            count("class=\"bar\""),
            count("<polyline"),
            count("class=\"cell\""),
            count("class=\"legend\""),
            count("<tr>") - 1,
        ));
    }
    out
}

#[test]
fn report_structure_is_stable() {
    let dir = tempfile::tempdir().unwrap();
    let db = simulated_run(dir.path());
    let html_path = dir.path().join("report.html");
    run_ok(&db, &["report", "r1", "-o", html_path.to_str().unwrap()]);
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(
        !html.contains("http://") || !html.contains("src=\"http"),
        "no remote resources"
    );
    assert!(!html.contains("<script"), "no scripts");
    insta::assert_snapshot!("report_structure", structure(&html));
}

/// h2benchw's zones draw the zone curve: one line per direction, 20 points each, falling from
/// the outer to the inner tracks of a simulated HDD.
#[test]
fn zones_are_charted_across_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    run_ok(
        &db,
        &[
            "run",
            "--preset",
            "h2benchw",
            "--target",
            "sim:lucidport/caviarblack-sata-ide",
            "--runtime=50ms",
        ],
    );
    let html_path = dir.path().join("report.html");
    run_ok(&db, &["report", "r1", "-o", html_path.to_str().unwrap()]);
    let html = std::fs::read_to_string(&html_path).unwrap();
    let start = html
        .rfind("Sequential throughput across the target (zones)")
        .expect("a zone chart");
    let chart = &html[start..];
    let chart = &chart[..chart.find("</table>").expect("the chart's table")];
    for line in ["64 KiB read", "64 KiB write"] {
        let rates: Vec<f64> = chart
            .split("<tr>")
            .filter(|row| row.starts_with(&format!("<th>{line}</th>")))
            .map(|row| {
                let value = row
                    .rsplit("<td>")
                    .next()
                    .and_then(|cell| cell.split("</td>").next())
                    .unwrap();
                value.parse().unwrap_or_else(|_| panic!("a rate: {value}"))
            })
            .collect();
        assert_eq!(rates.len(), 20, "{line}: {rates:?}");
        assert!(
            rates[0] > 1.5 * rates[19],
            "{line}: outer tracks faster than inner: {rates:?}"
        );
    }
}

/// An unusable output path is named by the flag this command takes (`-o/--output`).
#[test]
fn a_directory_as_the_report_file_names_the_output_flag() {
    let dir = tempfile::tempdir().unwrap();
    let db = simulated_run(dir.path());
    let out = storlab(&db)
        .args(["report", "r1", "-o", dir.path().to_str().unwrap()])
        .output()
        .expect("storlab runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--output ") && err.contains("is a directory"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn report_of_20_runs_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let db = simulated_run(dir.path());
    {
        let mut database = storlab_db::Database::open(&db).unwrap();
        let first = database.load_run(storlab_db::RunRef::Last).unwrap();
        for index in 1..20u64 {
            let run = database
                .begin_run(&storlab_db::NewRun {
                    tool: first.report.tool.clone(),
                    host: first.report.host.clone(),
                    started_unix_ms: first.report.started_unix_ms + index,
                    command: "copy".into(),
                    preset: None,
                })
                .unwrap();
            for job in &first.report.jobs {
                database.add_point(run, job).unwrap();
            }
        }
    }
    let ids: Vec<String> = (1..=20).map(|i| format!("r{i}")).collect();
    let html_path = dir.path().join("report20.html");
    let mut args = vec![
        "report".to_string(),
        "-o".into(),
        html_path.display().to_string(),
    ];
    args.extend(ids);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let started = Instant::now();
    run_ok(&db, &args);
    let elapsed = started.elapsed();
    let size_bytes = std::fs::metadata(&html_path).unwrap().len();
    eprintln!(
        "report of 20 runs: {size_bytes} bytes, {:.0} ms (storlab report, incl. process start and database reads)",
        elapsed.as_secs_f64() * 1e3
    );
    assert!(size_bytes < MAX_REPORT_BYTES_20_RUNS, "{size_bytes} bytes");
}

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|name| {
            Command::new(name)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

#[test]
fn report_renders_in_headless_chromium_with_ink_in_every_chart() {
    let Some(browser) = chromium() else {
        if std::env::var_os("CI").is_some() {
            panic!("chromium is required in CI (.ci/run installs it)");
        }
        eprintln!("skipped: chromium not installed");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = simulated_run(dir.path());
    let html_path = dir.path().join("report.html");
    run_ok(&db, &["report", "r1", "-o", html_path.to_str().unwrap()]);
    let html = std::fs::read_to_string(&html_path).unwrap();
    let charts_in_html = html.matches("<svg class=\"chart\"").count();
    let screenshot = std::env::var_os("STORLAB_KEEP_SCREENSHOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.path().join("shot.png"));
    let profile = dir.path().join("profile");
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--force-color-profile=srgb",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", screenshot.display()))
        .arg("--window-size=1400,4000")
        .arg(format!("file://{}", html_path.display()))
        .output()
        .unwrap();
    assert!(
        screenshot.exists(),
        "no screenshot: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&screenshot).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    let channels = frame.color_type.samples();
    let (width, height) = (frame.width as usize, frame.height as usize);
    let rgb = |x: usize, y: usize| {
        let at = (y * width + x) * channels;
        [pixels[at], pixels[at + 1], pixels[at + 2]]
    };
    // Plot areas are bands of rows full of the plot fill; inside each, count the "ink"
    // (pixels that are neither plot fill nor near-white).
    let mut bands: Vec<(usize, usize)> = Vec::new();
    for y in 0..height {
        let fill = (0..width).filter(|&x| rgb(x, y) == PLOT_RGB).count();
        if fill >= MIN_PLOT_ROW_PIXELS {
            // Grid lines and bars cross the plot area: rows a few pixels apart are one chart.
            match bands.last_mut() {
                Some((_, end)) if y - *end <= MAX_GAP_ROWS_IN_PLOT + 1 => *end = y,
                _ => bands.push((y, y)),
            }
        }
    }
    bands.retain(|(start, end)| end - start > 20);
    assert!(
        bands.len() >= charts_in_html.min(4),
        "{} plot areas found in the screenshot, the HTML has {charts_in_html} charts",
        bands.len()
    );
    for (start, end) in &bands {
        let ink = (*start..=*end)
            .flat_map(|y| (0..width).map(move |x| (x, y)))
            .filter(|&(x, y)| {
                let pixel = rgb(x, y);
                pixel != PLOT_RGB && pixel.iter().any(|&c| c < 200)
            })
            .count();
        assert!(
            ink > 500,
            "chart at rows {start}..{end} is empty ({ink} ink pixels)"
        );
    }
    eprintln!(
        "chromium: {} charts with ink found in the screenshot ({charts_in_html} in the HTML)",
        bands.len()
    );
}
