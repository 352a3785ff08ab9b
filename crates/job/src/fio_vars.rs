//! fio's substitutions in a job file's option lines (options.c, `dup_and_sub_options`): every
//! `${NAME}` becomes the environment variable's value (nothing when unset, as fio), and fio's
//! keywords `$pagesize`, `$mb_memory` and `$ncpus` become this machine's figures, after which
//! fio hands the value to `bc` (`size=8*$mb_memory`): storlab computes that integer arithmetic
//! itself (`+ - * /`, bc's default scale 0) and leaves a value it cannot compute as written.

/// `line` with fio's substitutions made.
pub(crate) fn substitute(line: &str) -> String {
    let expanded = expand_environment(line);
    replace_keywords(&expanded)
}

/// options.c, `fio_option_dup_subs`: `${NAME}` to `getenv(NAME)`, an unset one to nothing.
fn expand_environment(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start + 2..].find('}').filter(|len| *len > 0) else {
            break;
        };
        out.push_str(&rest[..start]);
        let name = &rest[start + 2..start + 2 + len];
        out.push_str(&std::env::var(name).unwrap_or_default());
        rest = &rest[start + 2 + len + 1..];
    }
    out.push_str(rest);
    out
}

/// options.c, `fio_keyword_replace`: the keywords, then the value's arithmetic when one was
/// replaced.
fn replace_keywords(line: &str) -> String {
    let keywords = [
        ("$pagesize", page_size_bytes()),
        ("$mb_memory", memory_mib()),
        ("$ncpus", online_cpus()),
    ];
    if !keywords.iter().any(|(word, _)| line.contains(word)) {
        return line.to_string();
    }
    let mut replaced = line.to_string();
    for (word, value) in keywords {
        replaced = replaced.replace(word, &value.to_string());
    }
    let Some((key, value)) = replaced.split_once('=') else {
        return replaced;
    };
    match evaluate(value.trim()) {
        Some(number) => format!("{}={number}", key.trim_end()),
        None => replaced,
    }
}

/// fio's `page_size` (x86-64 Linux: 4 KiB pages).
fn page_size_bytes() -> u64 {
    4096
}

/// fio's `$mb_memory`: the machine's memory in MiB (`/proc/meminfo`'s MemTotal).
fn memory_mib() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kib| kib / 1024)
}

/// fio's `$ncpus`: the CPUs online.
fn online_cpus() -> u64 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u64)
}

/// Integer arithmetic as `bc` with scale 0 computes it: `+ - * /`, `*` and `/` first, left to
/// right; `None` for anything else (then fio's value stays as written).
fn evaluate(text: &str) -> Option<u64> {
    let mut total: i128 = 0;
    let mut sign: i128 = 1;
    let mut term: Option<i128> = None;
    let mut pending_op = '*';
    let mut digits = String::new();
    let flush = |digits: &mut String, term: &mut Option<i128>, op: char| -> Option<()> {
        let number: i128 = digits.parse().ok()?;
        digits.clear();
        *term = Some(match (*term, op) {
            (None, _) => number,
            (Some(t), '*') => t.checked_mul(number)?,
            (Some(t), '/') => t.checked_div(number)?,
            _ => return None,
        });
        Some(())
    };
    for c in text.chars().filter(|c| !c.is_whitespace()) {
        match c {
            '0'..='9' => digits.push(c),
            '*' | '/' => {
                flush(&mut digits, &mut term, pending_op)?;
                pending_op = c;
            }
            '+' | '-' => {
                flush(&mut digits, &mut term, pending_op)?;
                total = total.checked_add(sign * term.take()?)?;
                sign = if c == '-' { -1 } else { 1 };
                pending_op = '*';
            }
            _ => return None,
        }
    }
    flush(&mut digits, &mut term, pending_op)?;
    total = total.checked_add(sign * term?)?;
    u64::try_from(total).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_variables_expand_and_unset_ones_vanish() {
        std::env::set_var("STORLAB_FIO_VARS_TEST", "128k");
        assert_eq!(substitute("size=${STORLAB_FIO_VARS_TEST}"), "size=128k");
        assert_eq!(
            substitute("filename=/tmp/${STORLAB_UNSET_VAR_X}a"),
            "filename=/tmp/a"
        );
        assert_eq!(substitute("name=${}"), "name=${}");
        assert_eq!(substitute("name=a${b"), "name=a${b");
    }

    #[test]
    fn keywords_are_replaced_and_computed_as_bc() {
        assert_eq!(substitute("bs=$pagesize"), "bs=4096");
        assert_eq!(substitute("size=2*$pagesize+4096"), "size=12288");
        assert_eq!(substitute("size=$pagesize/2-48"), "size=2000");
        let cpus = online_cpus();
        assert_eq!(substitute("numjobs=$ncpus"), format!("numjobs={cpus}"));
        // What bc would not compute stays as written.
        assert_eq!(substitute("size=2k*$pagesize"), "size=2k*4096");
    }
}
