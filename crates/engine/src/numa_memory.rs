//! NUMA placement of I/O buffers with the kernel's memory-policy calls (`mbind`,
//! `get_mempolicy`; mm/mempolicy.c), for fio's `numa_mem_policy`. fio 3.33 sets the policy on
//! its job thread with libnuma before it allocates the buffers; storlab's buffers exist before
//! the job's thread runs, so the policy is bound to the buffers' pages themselves, and the
//! pages already touched are moved to match (`MPOL_MF_MOVE`). No libnuma needed.

use std::io;

/// linux/mempolicy.h `enum { MPOL_DEFAULT, MPOL_PREFERRED, MPOL_BIND, MPOL_INTERLEAVE,
/// MPOL_LOCAL }`: the kernel's memory-policy modes, numbered as fio's option order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum PolicyMode {
    /// The thread's (by default the process's) policy: no policy of the range's own.
    Default = 0,
    /// The node first, others when it is full.
    Preferred = 1,
    /// Only the nodes.
    Bind = 2,
    /// Pages round-robin over the nodes.
    Interleave = 3,
    /// The node of the CPU that first touches the page (Linux 3.8 on).
    Local = 4,
}

impl PolicyMode {
    fn from_kernel(mode: libc::c_int) -> Option<Self> {
        [
            PolicyMode::Default,
            PolicyMode::Preferred,
            PolicyMode::Bind,
            PolicyMode::Interleave,
            PolicyMode::Local,
        ]
        .into_iter()
        .find(|m| *m as libc::c_int == mode)
    }
}

/// linux/mempolicy.h `MPOL_MF_MOVE`: move the range's pages that this process alone maps to
/// the policy's nodes.
const MPOL_MF_MOVE: libc::c_uint = 1 << 1;
/// linux/mempolicy.h `MPOL_F_ADDR`: `get_mempolicy` reports the policy of the range holding
/// the address, not the thread's.
const MPOL_F_ADDR: libc::c_ulong = 1 << 1;
/// Nodes a node mask here can name: the kernel's `MAX_NUMNODES` is at most 1 << 10
/// (`CONFIG_NODES_SHIFT` ≤ 10).
const MASK_NODES: usize = 1 << 10;
const BITS_PER_WORD: usize = libc::c_ulong::BITS as usize;
const MASK_WORDS: usize = MASK_NODES / BITS_PER_WORD;

fn node_mask(nodes: &[u32]) -> io::Result<[libc::c_ulong; MASK_WORDS]> {
    let mut mask = [0; MASK_WORDS];
    for &node in nodes {
        let node = node as usize;
        if node >= MASK_NODES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("NUMA node {node} is past the kernel's largest ({MASK_NODES} nodes)"),
            ));
        }
        mask[node / BITS_PER_WORD] |= 1 << (node % BITS_PER_WORD);
    }
    Ok(mask)
}

fn page_bytes() -> usize {
    // SAFETY: sysconf reads a constant of the system and touches no memory of ours.
    let bytes = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(bytes).unwrap_or(4096).max(1)
}

/// Bind the pages holding `memory` to `mode` over `nodes` (none for `Default` and `Local`),
/// moving those already placed elsewhere. The range is widened to whole pages.
pub fn bind(memory: &[u8], mode: PolicyMode, nodes: &[u32]) -> io::Result<()> {
    if memory.is_empty() {
        return Ok(());
    }
    let page = page_bytes();
    let start = memory.as_ptr() as usize & !(page - 1);
    let end = (memory.as_ptr() as usize + memory.len()).next_multiple_of(page);
    let mask = node_mask(nodes)?;
    let (mask_ptr, max_node) = if nodes.is_empty() {
        (std::ptr::null(), 0)
    } else {
        // The kernel reads `maxnode - 1` bits (mm/mempolicy.c, `get_nodes`).
        (mask.as_ptr(), (MASK_NODES + 1) as libc::c_ulong)
    };
    // SAFETY: mbind changes the policy of pages of our own mapping (the range covers `memory`,
    // widened to its pages) and reads `MASK_WORDS` words from `mask`, which lives until the
    // call returns. It neither frees nor moves the virtual range; moved pages keep their data.
    let result = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            start as *mut libc::c_void,
            (end - start) as libc::c_ulong,
            mode as libc::c_int,
            mask_ptr,
            max_node,
            MPOL_MF_MOVE,
        )
    };
    if result < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The policy of the page holding `address` and the nodes it names, as the kernel reports it
/// (`get_mempolicy(..., MPOL_F_ADDR)`). A local policy may read back as `Local` or, on kernels
/// before 5.14, as `Preferred` with no node.
pub fn policy_at(address: *const u8) -> io::Result<(PolicyMode, Vec<u32>)> {
    let mut mode: libc::c_int = 0;
    let mut mask = [0 as libc::c_ulong; MASK_WORDS];
    // SAFETY: get_mempolicy writes one int to `mode` and at most `MASK_NODES` bits to `mask`,
    // both ours and alive for the call; `address` is only looked up, never dereferenced.
    let result = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut mode as *mut libc::c_int,
            mask.as_mut_ptr(),
            (MASK_NODES + 1) as libc::c_ulong,
            address as *mut libc::c_void,
            MPOL_F_ADDR,
        )
    };
    if result < 0 {
        return Err(io::Error::last_os_error());
    }
    let mode = PolicyMode::from_kernel(mode)
        .ok_or_else(|| io::Error::other(format!("get_mempolicy returned unknown mode {mode}")))?;
    let nodes = (0..MASK_NODES)
        .filter(|n| mask[n / BITS_PER_WORD] & (1 << (n % BITS_PER_WORD)) != 0)
        .map(|n| n as u32)
        .collect();
    Ok((mode, nodes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two pages of our own, page-aligned, touched so they are placed before the policy.
    fn touched_pages() -> crate::buffers::AlignedBuffers {
        let page = page_bytes();
        let mut buffers = crate::buffers::AlignedBuffers::new(2, page, page).unwrap();
        buffers.slot_mut(0).fill(1);
        buffers.slot_mut(1).fill(2);
        buffers
    }

    #[test]
    fn each_mode_binds_the_pages_and_reads_back_from_the_kernel() {
        let buffers = touched_pages();
        let memory = buffers.slot(0);
        assert_eq!(policy_at(memory.as_ptr()).unwrap().0, PolicyMode::Default);
        for (mode, nodes) in [
            (PolicyMode::Bind, vec![0]),
            (PolicyMode::Interleave, vec![0]),
            (PolicyMode::Preferred, vec![0]),
        ] {
            bind(memory, mode, &nodes).unwrap();
            assert_eq!(policy_at(memory.as_ptr()).unwrap(), (mode, nodes.clone()));
            // The data stays where it was (a move copies the page).
            assert!(memory.iter().all(|b| *b == 1));
        }
        bind(memory, PolicyMode::Local, &[]).unwrap();
        let local = policy_at(memory.as_ptr()).unwrap();
        assert!(
            local == (PolicyMode::Local, vec![]) || local == (PolicyMode::Preferred, vec![]),
            "{local:?}"
        );
        // Only the bound range changed: the next slot keeps the default.
        assert_eq!(
            policy_at(buffers.slot(1).as_ptr()).unwrap().0,
            PolicyMode::Default
        );
        bind(memory, PolicyMode::Default, &[]).unwrap();
        assert_eq!(policy_at(memory.as_ptr()).unwrap().0, PolicyMode::Default);
    }

    #[test]
    fn a_node_this_machine_lacks_is_refused_by_the_kernel() {
        let buffers = touched_pages();
        let error = bind(buffers.slot(0), PolicyMode::Bind, &[MASK_NODES as u32 - 1]).unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc::EINVAL), "{error}");
        assert!(bind(buffers.slot(0), PolicyMode::Bind, &[MASK_NODES as u32]).is_err());
    }
}
