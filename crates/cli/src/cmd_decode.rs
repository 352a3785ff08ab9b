//! `storlab decode FILE.pcap`: prints the protocol view of a usbmon capture.

use crate::args::DecodeArgs;
use crate::exit::{bad_input, Failure};
use std::io::Write;

pub fn run(args: DecodeArgs) -> Result<(), Failure> {
    let path = &args.file;
    if path.is_dir() {
        return Err(bad_input(format!(
            "{}: is a directory, not a pcap file",
            path.display()
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| bad_input(format!("{}: {e}", path.display())))?;
    let text = storlab_wire::decode_pcap(&bytes)
        .map_err(|e| bad_input(format!("{}: {e}", path.display())))?;
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush());
    Ok(())
}
