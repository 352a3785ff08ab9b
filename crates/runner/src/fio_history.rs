//! fio's log of the writes its verify reads back (iolog.c `log_io_piece`, verify.c
//! `get_next_verify`): a list in write order where the file keeps a random map, else a tree by
//! offset in which a write drops every earlier piece it overlaps, whole. Its length is fio's
//! `io_hist_len`, which `verify_backlog` counts, and it hands its pieces out from the head: the
//! oldest of the list, the lowest offset of the tree. Each piece may carry what its reader
//! needs of it (`T`: the header seed for fio's seed check, nothing for the backlog).

use std::collections::{BTreeMap, VecDeque};

/// One fio thread's logged writes: (offset, length) in bytes, and a `T` each.
#[derive(Debug)]
pub(crate) struct FioHistory<T = ()> {
    /// `Some`: fio's list (a random map kept); `None`: its tree.
    list: Option<VecDeque<(u64, u64, T)>>,
    /// The tree: start -> (length, `T`).
    tree: BTreeMap<u64, (u64, T)>,
}

impl<T: Copy> FioHistory<T> {
    /// A list when `list` (`verify_seeds::fio_logs_writes_in_a_list`), else a tree.
    pub(crate) fn new(list: bool) -> FioHistory<T> {
        FioHistory {
            list: list.then(VecDeque::new),
            tree: BTreeMap::new(),
        }
    }

    /// Whether this is fio's list (else its tree).
    pub(crate) fn is_list(&self) -> bool {
        self.list.is_some()
    }

    /// A write of `len_bytes` at `offset_bytes` enters the log with `value`.
    pub(crate) fn log(&mut self, offset_bytes: u64, len_bytes: u64, value: T) {
        if let Some(list) = self.list.as_mut() {
            list.push_back((offset_bytes, len_bytes, value));
            return;
        }
        // Logged pieces never overlap each other, so the overlapped ones are the last few
        // starting before the write's end.
        let end = offset_bytes + len_bytes;
        let overlapped: Vec<u64> = self
            .tree
            .range(..end)
            .rev()
            .take_while(|(start, (len, _))| *start + *len > offset_bytes)
            .map(|(start, _)| *start)
            .collect();
        for start in overlapped {
            self.tree.remove(&start);
        }
        self.tree.insert(offset_bytes, (len_bytes, value));
    }

    /// fio's `io_hist_len`.
    pub(crate) fn len(&self) -> usize {
        self.list.as_ref().map_or(self.tree.len(), VecDeque::len)
    }

    /// The piece fio's verify reads next, left in the log.
    pub(crate) fn peek_next(&self) -> Option<(u64, u64, T)> {
        match self.list.as_ref() {
            Some(list) => list.front().copied(),
            None => self
                .tree
                .first_key_value()
                .map(|(offset, (len, value))| (*offset, *len, *value)),
        }
    }

    /// The piece fio's verify reads next, out of the log.
    pub(crate) fn pop_next(&mut self) -> Option<(u64, u64, T)> {
        match self.list.as_mut() {
            Some(list) => list.pop_front(),
            None => self
                .tree
                .pop_first()
                .map(|(offset, (len, value))| (offset, len, value)),
        }
    }

    /// Every piece in the order fio's verify pass reads them, the log emptied for the next
    /// pass.
    pub(crate) fn drain(&mut self) -> Vec<(u64, u64, T)> {
        match self.list.as_mut() {
            Some(list) => list.drain(..).collect(),
            None => std::mem::take(&mut self.tree)
                .into_iter()
                .map(|(offset, (len, value))| (offset, len, value))
                .collect(),
        }
    }

    /// Takes the piece that starts at `offset_bytes` out of the log, if one does.
    pub(crate) fn remove(&mut self, offset_bytes: u64) {
        match self.list.as_mut() {
            Some(list) => {
                if let Some(at) = list.iter().position(|piece| piece.0 == offset_bytes) {
                    list.remove(at);
                }
            }
            None => {
                self.tree.remove(&offset_bytes);
            }
        }
    }

    /// Each piece in the order fio's verify reads them, the log left as it is.
    pub(crate) fn each(&self, mut piece: impl FnMut(u64, u64, T)) {
        match self.list.as_ref() {
            Some(list) => list.iter().for_each(|&(o, l, v)| piece(o, l, v)),
            None => self.tree.iter().for_each(|(&o, &(l, v))| piece(o, l, v)),
        }
    }

    /// The bytes the log holds, emptied for the next loop.
    pub(crate) fn take_bytes(&mut self) -> u64 {
        self.drain().iter().map(|(_, len, _)| len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_drops_overlapped_pieces_and_hands_out_the_lowest_offset_first() {
        let mut tree = FioHistory::new(false);
        tree.log(8192, 4096, ());
        tree.log(0, 4096, ());
        tree.log(6144, 4096, ());
        assert_eq!(tree.len(), 2, "the write at 6 KiB dropped the one at 8 KiB");
        assert_eq!(tree.pop_next(), Some((0, 4096, ())));
        let mut list = FioHistory::new(true);
        list.log(8192, 4096, ());
        list.log(0, 4096, ());
        list.log(6144, 4096, ());
        assert_eq!(list.len(), 3);
        assert_eq!(list.pop_next(), Some((8192, 4096, ())));
        assert_eq!(list.take_bytes(), 8192);
    }
}
