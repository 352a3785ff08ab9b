//! `storlab decode FILE.pcap`: prints the protocol view of a usbmon capture.

use crate::args::DecodeArgs;
use crate::exit::{bad_input, Failure};

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
    crate::output::print(&text)
}
