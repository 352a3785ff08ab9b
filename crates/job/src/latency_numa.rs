//! The values of fio's latency-target keys (`latency_target`, `latency_window`,
//! `latency_percentile`, `latency_run`: the queue-depth search) and of `numa_mem_policy` (where
//! the kernel places the job's I/O buffers), parsed as fio 3.33's options.c parses them.

use serde::{Deserialize, Serialize};

/// fio's latency-target settings (options.c `latency_*`, init.c scales the target to ns). The
/// runner searches for the deepest queue that keeps `percentile` of the I/Os at or under
/// `target_ns` over each `window_us` (io_u.c, `lat_target_check`); with `target_ns` 0 the keys
/// are only reported, as fio reports them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyTargetSpec {
    /// `latency_target`, ns (0: no search).
    pub target_ns: u64,
    /// `latency_window`, µs: how long each queue depth runs before it is judged (fio keeps µs,
    /// its JSON reports them).
    pub window_us: u64,
    /// `latency_percentile`: the share of I/Os (percent, 0 to 100) that must meet the target.
    pub percentile: f64,
    /// `latency_run`: keep adjusting the depth for the whole job instead of stopping once it
    /// has settled.
    pub run: bool,
}

impl Default for LatencyTargetSpec {
    fn default() -> Self {
        LatencyTargetSpec {
            target_ns: 0,
            window_us: 0,
            percentile: LATENCY_PERCENTILE_DEFAULT,
            run: false,
        }
    }
}

/// `percentile` is never NaN (parsed from 0 to 100), so equality is total.
impl Eq for LatencyTargetSpec {}

impl LatencyTargetSpec {
    /// Whether the job searches for a queue depth (fio: `td->o.latency_target` set).
    pub fn searches(&self) -> bool {
        self.target_ns > 0
    }
}

/// fio's `latency_percentile` default (options.c `.def = "100"`): every I/O must meet it.
pub const LATENCY_PERCENTILE_DEFAULT: f64 = 100.0;

/// `latency_percentile`: one number from 0 to 100 (fio's `FIO_OPT_FLOAT_LIST`, `maxlen` 1,
/// `minfp` 0, `maxfp` 100).
pub fn parse_latency_percentile(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(p) if (0.0..=LATENCY_PERCENTILE_DEFAULT).contains(&p) => Ok(p),
        _ => Err("a percentage from 0 to 100 is needed".into()),
    }
}

/// fio's `numa_mem_policy` (options.c `str_numa_mpol_cb`), applied by storlab with `mbind` to the
/// job's I/O buffers where fio's thread sets it with libnuma before it allocates them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NumaMemPolicy {
    /// `default`: the process's policy (fio changes nothing).
    Default,
    /// `prefer:N`: node N first, others when it is full.
    Prefer(u32),
    /// `bind:NODES`: only these nodes.
    Bind(Vec<u32>),
    /// `interleave[:NODES]`: pages spread round-robin over the nodes (fio's default: all).
    Interleave(Vec<u32>),
    /// `local`: the node of the CPU that touches the page first.
    Local,
}

impl NumaMemPolicy {
    /// Parse fio's `MODE[:NODES]` against the machine's `online` NUMA nodes, with fio's
    /// messages for a wrong mode or node list. fio refuses a node list naming a node this
    /// machine lacks when it parses the job (libnuma's `numa_parse_nodestring`: "node argument
    /// 1 is out of range"); storlab refuses `prefer:N` for such a node too, where fio's
    /// libnuma prints "set_mempolicy: Invalid argument" and runs the job unchanged.
    pub fn parse(text: &str, online: &[u32]) -> Result<Self, String> {
        let (mode, nodes) = match text.split_once(':') {
            Some((mode, nodes)) => (mode, Some(nodes)),
            None => (text, None),
        };
        let parsed_nodes = |list: &str| parse_node_list(list, online);
        match (mode, nodes) {
            ("default" | "local", Some(_)) => Err(format!("NO nodelist for '{mode}'")),
            ("default", None) => Ok(NumaMemPolicy::Default),
            ("local", None) => Ok(NumaMemPolicy::Local),
            ("prefer", None) => Err("one node is needed for 'prefer'".into()),
            ("prefer", Some(node)) => {
                if node.is_empty() || !node.bytes().all(|b| b.is_ascii_digit()) {
                    return Err("one node only for 'prefer'".into());
                }
                let node: u32 = node
                    .parse()
                    .map_err(|_| format!("node {node} is out of range"))?;
                if !online.contains(&node) {
                    return Err(node_missing(node, online));
                }
                Ok(NumaMemPolicy::Prefer(node))
            }
            ("bind", None) => Err("a nodelist is needed for 'bind'".into()),
            ("bind", Some(list)) => Ok(NumaMemPolicy::Bind(parsed_nodes(list)?)),
            ("interleave", None) => Ok(NumaMemPolicy::Interleave(online.to_vec())),
            ("interleave", Some(list)) => Ok(NumaMemPolicy::Interleave(parsed_nodes(list)?)),
            _ => Err("memory policy should be: default, prefer, bind, interleave, local".into()),
        }
    }

    /// The nodes the policy names (none for `default` and `local`).
    pub fn nodes(&self) -> &[u32] {
        match self {
            NumaMemPolicy::Default | NumaMemPolicy::Local => &[],
            NumaMemPolicy::Prefer(node) => std::slice::from_ref(node),
            NumaMemPolicy::Bind(nodes) | NumaMemPolicy::Interleave(nodes) => nodes,
        }
    }
}

fn node_missing(node: u32, online: &[u32]) -> String {
    format!(
        "node {node} is out of range: this machine's NUMA nodes are {}",
        format_node_list(online)
    )
}

/// A node list as libnuma's `numa_parse_nodestring` reads it: `all`, or comma-separated nodes
/// and ranges (`0-3,6`), each node one this machine has.
fn parse_node_list(list: &str, online: &[u32]) -> Result<Vec<u32>, String> {
    if list == "all" {
        return Ok(online.to_vec());
    }
    let number = |text: &str| -> Result<u32, String> {
        text.parse()
            .map_err(|_| format!("'{list}' is not a node list such as 0-1,3 or all"))
    };
    let mut nodes = Vec::new();
    for part in list.split(',') {
        let (low, high) = match part.split_once('-') {
            Some((low, high)) => (number(low)?, number(high)?),
            None => (number(part)?, number(part)?),
        };
        if low > high {
            return Err(format!("'{part}' is a range from high to low"));
        }
        for node in low..=high {
            if !online.contains(&node) {
                return Err(node_missing(node, online));
            }
            if !nodes.contains(&node) {
                nodes.push(node);
            }
        }
    }
    nodes.sort_unstable();
    Ok(nodes)
}

fn format_node_list(nodes: &[u32]) -> String {
    nodes
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Where Linux lists the NUMA nodes that are online (drivers/base/node.c), as `0` or `0-1,4`.
const ONLINE_NODES_PATH: &str = "/sys/devices/system/node/online";

/// This machine's online NUMA nodes. A kernel without NUMA has no such file and one node, 0
/// (libnuma then treats the machine as node 0 alone, as here).
pub fn online_numa_nodes() -> Vec<u32> {
    std::fs::read_to_string(ONLINE_NODES_PATH)
        .ok()
        .and_then(|text| parse_range_list(text.trim()))
        .filter(|nodes| !nodes.is_empty())
        .unwrap_or_else(|| vec![0])
}

/// The kernel's range-list format (`0-3,6`), as sysfs prints node and CPU masks.
fn parse_range_list(text: &str) -> Option<Vec<u32>> {
    let mut nodes = Vec::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (low, high) = match part.split_once('-') {
            Some((low, high)) => (low.parse::<u32>().ok()?, high.parse::<u32>().ok()?),
            None => (part.parse::<u32>().ok()?, part.parse::<u32>().ok()?),
        };
        nodes.extend(low..=high);
    }
    Some(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE_NODE: &[u32] = &[0];
    const TWO_NODES: &[u32] = &[0, 1];

    #[test]
    fn modes_parse_as_fio_with_its_messages() {
        let parse = |text| NumaMemPolicy::parse(text, TWO_NODES);
        assert_eq!(parse("default"), Ok(NumaMemPolicy::Default));
        assert_eq!(parse("local"), Ok(NumaMemPolicy::Local));
        assert_eq!(parse("prefer:1"), Ok(NumaMemPolicy::Prefer(1)));
        assert_eq!(parse("bind:0-1"), Ok(NumaMemPolicy::Bind(vec![0, 1])));
        assert_eq!(parse("bind:1,0"), Ok(NumaMemPolicy::Bind(vec![0, 1])));
        assert_eq!(
            parse("interleave"),
            Ok(NumaMemPolicy::Interleave(vec![0, 1]))
        );
        assert_eq!(
            parse("interleave:all"),
            Ok(NumaMemPolicy::Interleave(vec![0, 1]))
        );
        assert_eq!(parse("local:0").unwrap_err(), "NO nodelist for 'local'");
        assert_eq!(
            parse("prefer").unwrap_err(),
            "one node is needed for 'prefer'"
        );
        assert_eq!(
            parse("prefer:0-1").unwrap_err(),
            "one node only for 'prefer'"
        );
        assert_eq!(
            parse("bind").unwrap_err(),
            "a nodelist is needed for 'bind'"
        );
        assert_eq!(
            parse("bogus").unwrap_err(),
            "memory policy should be: default, prefer, bind, interleave, local"
        );
    }

    #[test]
    fn a_node_the_machine_lacks_is_refused_with_the_nodes_it_has() {
        for text in ["bind:1", "interleave:0-3", "prefer:1"] {
            let error = NumaMemPolicy::parse(text, ONE_NODE).unwrap_err();
            assert!(error.contains("out of range"), "{text}: {error}");
            assert!(error.ends_with("NUMA nodes are 0"), "{text}: {error}");
        }
        assert!(NumaMemPolicy::parse("bind:x", ONE_NODE).is_err());
        assert!(NumaMemPolicy::parse("bind:1-0", TWO_NODES).is_err());
    }

    #[test]
    fn sysfs_range_lists_read_as_the_kernel_prints_them() {
        assert_eq!(parse_range_list("0"), Some(vec![0]));
        assert_eq!(parse_range_list("0-2,5"), Some(vec![0, 1, 2, 5]));
        assert_eq!(parse_range_list("x"), None);
    }

    #[test]
    fn latency_percentile_takes_0_to_100() {
        assert_eq!(parse_latency_percentile("99.9"), Ok(99.9));
        assert_eq!(parse_latency_percentile("0"), Ok(0.0));
        assert!(parse_latency_percentile("100.5").is_err());
        assert!(parse_latency_percentile("-1").is_err());
        assert!(parse_latency_percentile("x").is_err());
    }
}
