//! Command-line definitions (clap). fio-style job flags (`--rw=randread`) are not declared here:
//! `split_job_flags` hands them to the job crate, whose one key table also reads fio files.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

/// storlab: a storage I/O lab for real drives and a simulated USB/SATA storage stack.
#[derive(Debug, Parser)]
#[command(name = "storlab", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per process and matched at once: `run`'s many flags make its variant the largest,
// which costs nothing worth boxing it for.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a job: a fio job file, fio-style flags, or (with neither) the built-in quick set.
    Run(RunArgs),
    /// Run a job as fio would: fio's command line, output formats and quiet stderr.
    ///
    /// `storlab fio ARGS` (or storlab installed as `fio`) is `storlab run` with fio's
    /// output-format names (normal, json, json+, terse), no results database and fio's quiet
    /// stderr.
    Fio(FioArgs),
    /// List the simulated stacks (use one with --target sim:NAME).
    Stacks(StacksArgs),
    /// List the I/O engines.
    Engines,
    /// Print the protocol view of a usbmon pcap capture (BOT, UAS, SCSI, control requests).
    Decode(DecodeArgs),
    /// List saved runs, newest first (filter by target, preset, date).
    History(HistoryArgs),
    /// Show one saved run.
    Show(ShowArgs),
    /// Compare saved runs side by side, with ratios to the first.
    Compare(CompareArgs),
    /// Export a saved run as JSON, fio-shaped JSON or CSV.
    Export(ExportArgs),
    /// Delete saved runs.
    Rm(RmArgs),
    /// Write a self-contained HTML report (SVG charts and tables) of saved runs.
    Report(ReportArgs),
    /// List the presets (published test suites; run one with `run --preset NAME`).
    Presets,
    /// Run a reference file in the simulator: published vs simulated (docs/validation.md).
    Validate(ValidateArgs),
    /// Show what a file or device really is (driver chain, link, bridge, limits); read-only.
    ///
    /// For a file: its filesystem, mount and the block device beneath. For a block device: the
    /// driver chain, USB link and bridge, PCIe link, queue limits and the device's own answers
    /// (INQUIRY, VPD, READ CAPACITY, ATA IDENTIFY), and what they imply. Never writes.
    Probe(ProbeArgs),
    /// Print the man page or a shell completion script (generated from these definitions).
    Generate(GenerateArgs),
    /// Record Linux's usbmon binary interface as a pcap until Ctrl-C (the Linux oracle
    /// harness's capture inside its QEMU guest; not a user command).
    #[command(hide = true)]
    UsbmonCapture(UsbmonCaptureArgs),
}

/// `storlab fio`'s arguments, as fio takes them (rewritten into `storlab run` before parsing,
/// `as_fio`; declared here for the help).
#[derive(Debug, Args)]
pub struct FioArgs {
    /// fio's options and job files.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<OsString>,
}

#[derive(Debug, Args)]
pub struct UsbmonCaptureArgs {
    /// The usbmon binary device: /dev/usbmon0 (every bus) or /dev/usbmonN (bus N).
    #[arg(long)]
    pub device: PathBuf,
    /// The pcap file to write when the capture stops.
    #[arg(long)]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Only runs with a target containing this text (a path, /dev/sdb, sim:usb3-uas-ssd).
    #[arg(long)]
    pub target: Option<String>,
    /// Only runs of this preset.
    #[arg(long)]
    pub preset: Option<String>,
    /// Only runs started at or after this time: YYYY-MM-DD, YYYY-MM-DDTHH:MM (UTC), or 7d/12h/30m ago.
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only runs started before this time (a bare date includes that whole day).
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// At most this many runs (the newest).
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run: rN as `storlab history` prints it, N, or last.
    pub run: String,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Two or more runs (rN, N, or last); the first is the baseline of the ratios.
    #[arg(required = true, num_args = 2..)]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The run: rN, N, or last.
    pub run: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Json)]
    pub format: OutputFormat,
    /// Write to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, Args)]
pub struct RmArgs {
    /// The runs to delete: rN, N, or last.
    #[arg(required = true)]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The runs to chart: rN, N, or last.
    #[arg(required = true)]
    pub runs: Vec<String>,
    /// The HTML file to write.
    #[arg(long, short = 'o', value_name = "FILE", default_value = "report.html")]
    pub output: PathBuf,
    #[command(flatten)]
    pub db: DbArgs,
}

/// Output formats of `storlab validate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ValidateFormat {
    /// A readable table (default).
    Table,
    /// {"entries": [{id, source, stack, metric, published, simulated, error_percent}],
    /// "within_10_percent", "within_15_percent"} (shares as fractions 0..1).
    Json,
    /// One row per entry.
    Csv,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Reference file of published measurements and their scenarios (docs/validation.md).
    pub reference: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ValidateFormat::Table)]
    pub output_format: ValidateFormat,
    /// Write the output to FILE instead of stdout (written whole at the end, never half).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Directory of extra simulator profiles (added to, and overriding, the built-in ones).
    #[arg(long, value_name = "DIR")]
    pub profiles: Option<PathBuf>,
    /// Run only the entries whose id contains SUBSTRING (the whole file is still checked).
    #[arg(long, value_name = "SUBSTRING")]
    pub filter: Option<String>,
    /// Exit with code 1 when any entry's |error| exceeds X percent.
    #[arg(long, value_name = "X", value_parser = parse_percent)]
    pub max_error_percent: Option<f64>,
    /// Read and plan the file (every stack, preset, point and key) without running it: exit 0
    /// when it is good, 2 with one line naming the mistake when not.
    #[arg(long)]
    pub check: bool,
}

#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// A file, directory or block device; without it, every whole disk in /sys/block.
    pub path: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ProbeFormat::Table)]
    pub output_format: ProbeFormat,
    /// Read sysfs from DIR instead of /sys (a recorded or fixture tree; PATH is then a block
    /// device name such as sda, and the device itself is not asked).
    #[arg(long, value_name = "DIR")]
    pub sys_root: Option<PathBuf>,
}

/// Output formats of `probe`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ProbeFormat {
    /// A readable table (default).
    Table,
    /// JSON (schema in docs/probe.md).
    Json,
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    #[command(subcommand)]
    pub what: Generated,
}

#[derive(Debug, Subcommand)]
pub enum Generated {
    /// The man page (roff) on stdout, every subcommand and the job keys in one page:
    /// `storlab generate man > storlab.1`.
    Man,
    /// A completion script for SHELL on stdout (README.md says where to put it).
    Complete {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// `--db PATH`, shared by every command that uses the database.
#[derive(Clone, Debug, Default, Args)]
pub struct DbArgs {
    /// Results database (default: $STORLAB_DB, else $XDG_DATA_HOME/storlab/results.sqlite,
    /// else ~/.local/share/storlab/results.sqlite).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}
fn parse_faults(text: &str) -> Result<Box<storlab_sim::FaultPlan>, String> {
    storlab_sim::FaultPlan::parse(text).map(Box::new)
}

fn parse_percent(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        _ => Err(format!(
            "'{text}': give a percentage of 0 or more (e.g. 15)"
        )),
    }
}

/// `--repeat`: a whole number of runs, 1 or more.
fn parse_repeats(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(count) if count >= 1 => Ok(count),
        _ => Err(format!(
            "'{text}': give a whole number of runs, 1 or more (e.g. 3)"
        )),
    }
}

/// When to draw the progress bar (fio's `--eta`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EtaMode {
    /// When stderr is a terminal (default).
    Auto,
    /// Accepted as fio's; a bar still needs a terminal.
    Always,
    /// Never: one plain line per finished job instead.
    Never,
}

/// `--status-interval`: a time as fio writes it (seconds by default).
fn parse_interval(text: &str) -> Result<std::time::Duration, String> {
    const NS_PER_S: u64 = 1_000_000_000;
    match storlab_job::size::parse_time_ns(text, NS_PER_S) {
        Ok(ns) if ns > 0 => Ok(std::time::Duration::from_nanos(ns)),
        _ => Err(format!("'{text}': give a time above 0 (e.g. 2, 500ms, 1m)")),
    }
}

/// Machine and human output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// A readable table (default).
    Table,
    /// storlab's own versioned JSON schema (docs/json-output.md).
    Json,
    /// JSON shaped like `fio --output-format=json`, for existing fio tooling.
    #[value(name = "fio-json")]
    FioJson,
    /// fio's json+: fio-json with each direction's completion-latency histogram (`bins`), as
    /// `fio_jsonplus_clat2csv` reads it.
    #[value(name = "fio-json+", alias = "json+")]
    FioJsonPlus,
    /// fio's human report (`fio --output-format=normal`, fio's default): each job's block,
    /// each group's run status and the disks' counters, in fio's layout.
    #[value(name = "fio-normal")]
    FioNormal,
    /// fio's terse format, version 3: one `;`-separated line per job (as `--minimal`).
    Terse,
    /// One row per job and direction.
    Csv,
}

#[derive(Clone, Debug, Args)]
#[command(after_help = JOB_FLAGS_HELP)]
pub struct RunArgs {
    /// fio job file to run (a practical subset of fio's format; see docs/job-format.md); `-`
    /// reads it from stdin, as fio does.
    pub job_file: Option<PathBuf>,
    /// More fio job files, run after the first as fio 3.33 runs several: each file's jobs
    /// with its own `[global]` only (neither the first file's nor the job flags carry over),
    /// the first job of each after a stonewall.
    #[arg(value_name = "MORE_JOB_FILES")]
    pub more_job_files: Vec<PathBuf>,
    /// Target for every job: a file, a block device, or sim:STACK (replaces filename=,
    /// directory= and ioengine=; a job without size= covers the whole target). Given several
    /// times (real and simulated mixed), the same jobs or preset run on each target in turn,
    /// one saved run each, printed side by side with ratios to the first target.
    #[arg(long = "target", value_name = "PATH|sim:STACK")]
    pub targets: Vec<OsString>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub output_format: OutputFormat,
    /// More formats written after the first, into the same output (fio's comma list,
    /// `--output-format=normal,json`, as `storlab fio` passes it).
    #[arg(long, value_enum, hide = true)]
    pub also_output_format: Vec<OutputFormat>,
    /// Write the output to FILE instead of stdout (written whole at the end, never half; also
    /// the finished jobs' results when the run fails part-way). FILE must be a regular file or
    /// new: a device, FIFO, symbolic link or the results database is refused before the run.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Allow writing to this block device even though it carries data (a partition table or
    /// any signature libblkid knows). Name the exact device (compared by device number). A
    /// device that is mounted or held is never written.
    #[arg(long, value_name = "DEVICE")]
    pub destructive: Option<PathBuf>,
    /// Simulated targets: write the USB session as a usbmon pcap (Wireshark, storlab decode).
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<PathBuf>,
    /// Simulated targets: inject faults, e.g. seed=7,usb_crc=1e-4,media_error@lba=123456,
    /// drop@cmd=40 (kinds usb_crc, media_error, drop, phase_error, hang, bridge_reset,
    /// disconnect, power_loss; KIND=RATE, KIND@cmd=N, KIND@t=2s, power_loss placed only;
    /// timeout=, retries=, reset_delay=, tm_timeout=, hang_recovery=, disconnect_for=;
    /// docs/simulator.md, "Faults").
    #[arg(long, value_name = "SPEC", value_parser = parse_faults)]
    pub faults: Option<Box<storlab_sim::FaultPlan>>,
    /// Directory of extra simulator profiles (added to, and overriding, the built-in ones).
    #[arg(long, value_name = "DIR")]
    pub profiles: Option<PathBuf>,
    /// Run a preset (a published test suite, see `storlab presets`); job flags then override
    /// the preset's settings for every point (e.g. --size=64m --runtime=1).
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
    /// Put the job's region in this state first: as-found, fresh (discard/TRIM it), seq-filled
    /// (fresh, then one sequential 128 KiB write pass; what a partition delete leaves: the data
    /// stays), or fragmented:SIZE, which first TRIMs and fills the whole region (the whole
    /// drive when no --offset/--size narrows it) and only then makes 4 KiB random writes
    /// totalling SIZE. Chain states with commas, each link on what the one before left:
    /// trim-all discards the region (a file delete or a quick format), randwrite:SIZE makes the
    /// random writes alone; e.g. fresh,randwrite:4g (a virgin drive, then 4 GiB of random
    /// writes) or seq-filled,trim-all. The region is what the jobs or preset points measure
    /// (--offset, --size, workers; N% resolved on the target); no byte outside it is discarded
    /// or written, and disjoint areas are prepared apart, not the gap between them. Recorded in
    /// every result.
    #[arg(long, value_name = "STATE")]
    pub state: Option<String>,
    /// Discard (TRIM) each job's or sweep point's own region before it runs.
    #[arg(long)]
    pub trim_between_steps: bool,
    /// Run every job N times over (each sweep point, each what-if target's jobs; repeat k
    /// with the seed plus k) and give each figure's mean, standard deviation and 95% interval
    /// in every output format (docs/decisions/0032-repeats.md).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = parse_repeats)]
    pub repeat: u32,
    /// fctest on a directory: where the copy-across phase copies to (another partition or
    /// drive; default: a second directory beside the first).
    #[arg(long, value_name = "DIR")]
    pub second_dir: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
    /// Do not save this run in the results database.
    #[arg(long)]
    pub no_db: bool,
    /// Also write the HTML report of this run to FILE.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Run only this section of the job file (fio's `--section`; give it again for more). The
    /// file's `[global]` options still apply.
    #[arg(long = "section", value_name = "NAME")]
    pub sections: Vec<String>,
    /// Read and check the job file or flags, then exit without running (fio's `--parse-only`).
    #[arg(long)]
    pub parse_only: bool,
    /// Print the job file or flags as one fio command line, then exit (fio's `--showcmd`).
    #[arg(long)]
    pub showcmd: bool,
    /// fio's `--minimal`: the same as `--output-format=terse`.
    #[arg(long)]
    pub minimal: bool,
    /// The live view (fio's `--eta`): auto and always draw its chart when stderr is a terminal
    /// (elsewhere status lines, docs/job-format.md), never prints only each finished job's line.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = EtaMode::Auto)]
    pub eta: EtaMode,
    /// Print a status line on stderr every INTERVAL while jobs run (fio's `--status-interval`;
    /// 2, 500ms, 1m): totals since the start, the last second's rates and latency, the ETA; on
    /// a terminal, the live chart's redraw interval.
    #[arg(long, value_name = "INTERVAL", value_parser = parse_interval)]
    pub status_interval: Option<std::time::Duration>,
    /// Accepted and ignored, as fio 3.33 ignores it (fio's old cap on its process table).
    #[arg(long, value_name = "N")]
    pub max_jobs: Option<u64>,
    /// Accepted and ignored (fio's `--alloc-size`, KiB of its shared-memory pool for its job
    /// processes: storlab's jobs are threads and need no such pool).
    #[arg(long, value_name = "KIB")]
    pub alloc_size: Option<u64>,
    /// fio's `--append-terse`: fio's terse lines are written too, before the other formats.
    #[arg(long, num_args = 0..=1, require_equals = true, value_name = "IGNORED")]
    pub append_terse: Option<Option<String>>,
    /// Print the job keys with their meaning (fio's `--cmdhelp`), or one key and its aliases
    /// (`--cmdhelp=KEY`), then exit.
    #[arg(long, num_args = 0..=1, require_equals = true, value_name = "KEY")]
    pub cmdhelp: Option<Option<String>>,
    /// List storlab's engines (fio's `--enghelp`), or one engine's own keys
    /// (`--enghelp=ENGINE`), then exit.
    #[arg(long, num_args = 0..=1, require_equals = true, value_name = "ENGINE")]
    pub enghelp: Option<Option<String>>,
    /// Refuse any job that writes or trims (fio's `--readonly`), before anything runs.
    #[arg(long)]
    pub readonly: bool,
    /// Make warnings about the jobs errors (fio's `--warnings-fatal`): a job with one is refused.
    #[arg(long)]
    pub warnings_fatal: bool,
    /// fio's conventions (set by `storlab fio`): fio's quiet stderr, storlab's advice kept in
    /// the output.
    #[arg(long, hide = true)]
    pub as_fio: bool,
    /// fio-style job flags, collected by `split_job_flags` (not parsed by clap).
    #[arg(skip)]
    pub job_flags: Vec<String>,
}

#[derive(Debug, Args)]
pub struct StacksArgs {
    /// Directory of extra simulator profiles.
    #[arg(long, value_name = "DIR")]
    pub profiles: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// A pcap file with LINKTYPE_USB_LINUX_MMAPPED (usbmon) records.
    pub file: PathBuf,
}

const JOB_FLAGS_HELP: &str = "\
Job flags use fio's names and forms (--key=value, bare booleans):
  storlab run --rw=randread --bs=4k --iodepth=32 --ioengine=io_uring --direct=1 \\
              --filename=F --size=1G --runtime=10 --time_based
  --name=NAME starts another job, as in fio. `storlab run --help` lists every key;
  docs/job-format.md explains them with fio-compatibility notes.

With neither a job file nor job flags, `storlab run` runs a quick CrystalDiskMark-like set
(sequential 1 MiB Q8, random 4 KiB Q32 and Q1, read and write) on a temporary file in the
current directory, and deletes the file afterwards.";

/// Characters the job keys' column of `run --help` pads names to (the longest key but one).
const HELP_KEY_COLUMN_WIDTH: usize = 26;

/// The clap command with `run --help` extended by the job keys, generated from the job crate's
/// key table (the same table that reads fio files and flags, so help cannot drift from it).
pub fn command_with_job_keys() -> clap::Command {
    use clap::CommandFactory;
    // A fixed column, not the longest key's: adding a long key (fio's
    // `dedupe_working_set_percentage`) then changes its own line, not every line of the help.
    // A longer key prints its meaning two spaces after its name.
    let width = HELP_KEY_COLUMN_WIDTH;
    let mut keys = String::from("Job keys (--key=value, or key=value in a job file):\n");
    for key in storlab_job::keys::KEYS {
        let aliases = if key.aliases.is_empty() {
            String::new()
        } else {
            format!(" (also {})", key.aliases.join(", "))
        };
        keys.push_str(&format!(
            "  {:<width$}  {}{aliases}\n",
            key.name, key.meaning
        ));
    }
    Cli::command().mut_subcommand("run", |run| {
        let base = run
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        run.after_long_help(format!("{base}\n\n{keys}"))
    })
}

/// Split `argv` (program name first) into what clap parses and the fio-style job flags.
/// For `run`, every `--key[=value]` that is not one of `run`'s own options is a job flag, so an
/// unknown key gets the job reader's one-line error ("unknown key 'foo'; did you mean ...").
/// Job flags are text, as the job reader takes them: one that is not UTF-8 is refused by name
/// (a path that is not UTF-8 can be given with `--target`).
pub fn split_job_flags(argv: Vec<OsString>) -> Result<(Vec<OsString>, Vec<String>), String> {
    use clap::CommandFactory;
    let is_run = argv.get(1).is_some_and(|a| a == "run");
    if !is_run {
        return Ok((argv, Vec::new()));
    }
    let command = Cli::command();
    let own_options: Vec<String> = command
        .find_subcommand("run")
        .map(|run| {
            run.get_arguments()
                .filter_map(|a| a.get_long().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let mut clap_args = Vec::with_capacity(argv.len());
    let mut job_flags = Vec::new();
    let mut after_double_dash = false;
    for arg in argv {
        let job_flag = arg.to_str().filter(|_| !after_double_dash).and_then(|s| {
            let key = s.strip_prefix("--")?.split('=').next()?;
            let own = key.is_empty()
                || key == "help"
                || key == "version"
                || own_options.iter().any(|o| o == key);
            (!own).then(|| s.to_string())
        });
        if arg.to_str().is_none() && !after_double_dash {
            let bytes = arg.as_encoded_bytes();
            let key = bytes
                .strip_prefix(b"--")
                .and_then(|rest| rest.split(|&b| b == b'=').next())
                .and_then(|key| std::str::from_utf8(key).ok());
            if key.is_some_and(|k| !k.is_empty() && !own_options.iter().any(|o| o == k)) {
                return Err(format!(
                    "{}: not valid UTF-8 text; job flags take text (give such a path with --target)",
                    arg.to_string_lossy()
                ));
            }
        }
        if arg == "--" {
            after_double_dash = true;
        }
        match job_flag {
            Some(flag) => job_flags.push(flag),
            None => clap_args.push(arg),
        }
    }
    Ok((clap_args, job_flags))
}

/// A clap error as storlab's one line: what is wrong with which argument (clap's own statement,
/// its indented continuation lines such as the possible values joined on), clap's suggestion
/// when it has one, and where to read more (`see `storlab run --help``). clap itself would
/// print usage and tips over four or five lines. `argv` is what clap parsed (program first).
pub fn clap_error_line(error: &clap::Error, argv: &[OsString]) -> String {
    use clap::error::{ContextKind, ContextValue};
    let rendered = error.to_string();
    let mut statement = rendered
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    if let Some(rest) = statement.strip_prefix("error: ") {
        statement = rest.to_string();
    }
    if error.kind() == clap::error::ErrorKind::InvalidUtf8 {
        // clap does not say which argument: name it (and the option it is the value of).
        let arguments = argv.get(1..).unwrap_or_default();
        if let Some(index) = arguments.iter().position(|arg| arg.to_str().is_none()) {
            let text = arguments[index].to_string_lossy();
            let option = index
                .checked_sub(1)
                .and_then(|before| arguments[before].to_str())
                .filter(|o| o.starts_with('-'));
            statement = match option {
                Some(option) => format!("{option} '{text}': not valid UTF-8 text"),
                None => format!("'{text}': not valid UTF-8 text"),
            };
        }
    }
    let suggestions: Vec<String> = [
        ContextKind::SuggestedArg,
        ContextKind::SuggestedSubcommand,
        ContextKind::SuggestedValue,
    ]
    .into_iter()
    .filter_map(|kind| match error.get(kind)? {
        ContextValue::String(one) => Some(vec![one.clone()]),
        ContextValue::Strings(several) => Some(several.clone()),
        _ => None,
    })
    .flatten()
    .map(|suggestion| format!("'{suggestion}'"))
    .collect();
    if !suggestions.is_empty() {
        statement.push_str(&format!("; did you mean {}?", suggestions.join(" or ")));
    }
    let command = Cli::command_name_in(argv)
        .map_or_else(|| "storlab".to_string(), |name| format!("storlab {name}"));
    format!("{statement} (see `{command} --help`)")
}

impl Cli {
    /// The subcommand `argv` names, when its first argument is one.
    fn command_name_in(argv: &[OsString]) -> Option<String> {
        use clap::CommandFactory;
        let name = argv.get(1)?.to_str()?;
        Self::command()
            .find_subcommand(name)
            .map(|sub| sub.get_name().to_string())
    }
}
