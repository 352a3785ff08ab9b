//! `say!`: the one way the CLI writes a diagnostic line to stderr (a leaf module: every other
//! module may use it, it uses none of them).

/// `eprintln!` that cannot panic: a diagnostic line for stderr. When stderr is gone (its reader
/// closed), the line is lost and the command goes on; `eprintln!` would panic instead. Control
/// characters (a line break or terminal escape from a job name or path) are escaped, so the
/// line stays one line and cannot drive the terminal.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let line = format!($($arg)*);
        let _ = writeln!(std::io::stderr(), "{}", storlab_report::escape_control(&line));
    }};
}
pub(crate) use say;
