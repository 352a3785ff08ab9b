//! fio's substitutions in job files (options.c, `dup_and_sub_options`): `${NAME}` from the
//! environment and the `$pagesize` keyword, the same I/O as fio 3.33 does with them.

use std::path::Path;
use std::process::Command;

const JOB: &str = "[global]\nfilename=data\nrw=write\n[v]\nsize=${STORLAB_T_SIZE}\nbs=$pagesize\n";

/// The write bytes and I/Os of the first job of `tool`'s fio-shaped JSON, run in `dir`.
fn write_totals(dir: &Path, tool: &str) -> Option<(u64, u64)> {
    let mut command = match tool {
        "fio" => Command::new("fio"),
        _ => {
            let mut c = Command::new(env!("CARGO_BIN_EXE_storlab"));
            c.arg("fio");
            c
        }
    };
    let out = command
        .current_dir(dir)
        .env("STORLAB_T_SIZE", "96k")
        .args(["--output-format=json", "job.fio"])
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "{tool}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let json: serde_json::Value = serde_json::from_str(&text[text.find('{')?..]).ok()?;
    let write = &json["jobs"][0]["write"];
    Some((write["io_bytes"].as_u64()?, write["total_ios"].as_u64()?))
}

#[test]
fn environment_variables_and_keywords_expand_as_fio() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::File::create(dir.path().join("data"))
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    std::fs::write(dir.path().join("job.fio"), JOB).unwrap();
    let storlab = write_totals(dir.path(), "storlab").expect("storlab's JSON");
    assert_eq!(storlab, (96 << 10, 24), "96 KiB in 4 KiB writes");
    if crate::fio_diff::fio_present() {
        let fio = write_totals(dir.path(), "fio").expect("fio's JSON");
        assert_eq!(storlab, fio, "storlab against fio");
    }
}
