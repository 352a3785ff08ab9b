//! Helpers the sim crate's integration tests share.

/// Whether tshark (the independent decoder the pcap tests check against) is installed. Outside
/// CI a missing tshark skips the test (printed); under CI (`CI` set) it fails it.
pub fn tshark_available() -> bool {
    let available = std::process::Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !available {
        assert!(
            std::env::var_os("CI").is_none(),
            "tshark is required in CI but was not found"
        );
        eprintln!("skipped: tshark not installed");
    }
    available
}
