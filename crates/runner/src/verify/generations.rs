//! The write record's map from granule to the generation that last wrote it (0: never
//! written), in pages of [`PAGE_GRANULES`] granules. A page holds its written granules as a
//! sorted list until it has more than [`MAX_SPARSE_GRANULES`], then as an array: random writes
//! over a large region touch a page per write, and an array each (4 KiB) made 60 s of verified
//! 4 KiB random writes over a 2 TB drive cost 1.3 GB (issue 37, ADR 0047).

use super::PAGE_GRANULES;

/// Written granules a page keeps as a list (8 bytes each: at this count a quarter of the array).
const MAX_SPARSE_GRANULES: usize = PAGE_GRANULES / 16;

/// One page's granules.
enum Page {
    /// (granule in the page, generation), sorted by granule; no zero generations.
    Sparse(Vec<(u16, u32)>),
    Dense(Box<[u32; PAGE_GRANULES]>),
}

/// Generation per granule of a region, allocated by the pages written.
pub(super) struct Generations {
    pages: Vec<Option<Box<Page>>>,
}

impl Generations {
    /// A map of `granules` granules, none written.
    pub(super) fn new(granules: u64) -> Generations {
        let pages = granules.div_ceil(PAGE_GRANULES as u64) as usize;
        Generations {
            pages: (0..pages).map(|_| None).collect(),
        }
    }

    fn split(index: u64) -> (usize, usize) {
        (
            (index / PAGE_GRANULES as u64) as usize,
            index as usize % PAGE_GRANULES,
        )
    }

    pub(super) fn get(&self, index: u64) -> u32 {
        let (page, at) = Self::split(index);
        match self.pages.get(page).and_then(|p| p.as_deref()) {
            None => 0,
            Some(Page::Dense(values)) => values[at],
            Some(Page::Sparse(entries)) => entries
                .binary_search_by_key(&(at as u16), |e| e.0)
                .map_or(0, |i| entries[i].1),
        }
    }

    /// Set granule `index` to `generation`; the generation it had, or `None` past the region.
    pub(super) fn replace(&mut self, index: u64, generation: u32) -> Option<u32> {
        let (page, at) = Self::split(index);
        let slot = self.pages.get_mut(page)?;
        if slot.is_none() && generation == 0 {
            return Some(0);
        }
        let page = slot.get_or_insert_with(|| Box::new(Page::Sparse(Vec::new())));
        let previous = match &mut **page {
            Page::Dense(values) => std::mem::replace(&mut values[at], generation),
            Page::Sparse(entries) => {
                match (
                    entries.binary_search_by_key(&(at as u16), |e| e.0),
                    generation,
                ) {
                    (Ok(i), 0) => entries.remove(i).1,
                    (Ok(i), _) => std::mem::replace(&mut entries[i].1, generation),
                    (Err(_), 0) => 0,
                    (Err(i), _) => {
                        entries.insert(i, (at as u16, generation));
                        0
                    }
                }
            }
        };
        if let Page::Sparse(entries) = &**page {
            if entries.len() > MAX_SPARSE_GRANULES {
                let mut values = Box::new([0u32; PAGE_GRANULES]);
                for &(at, generation) in entries {
                    values[usize::from(at)] = generation;
                }
                **page = Page::Dense(values);
            }
        }
        Some(previous)
    }

    /// Set every granule of generation `first_generation` or later to 0, calling `forgotten`
    /// with each one's index.
    pub(super) fn forget_from(&mut self, first_generation: u32, mut forgotten: impl FnMut(u64)) {
        for (page_index, page) in self.pages.iter_mut().enumerate() {
            let base = (page_index * PAGE_GRANULES) as u64;
            match page.as_deref_mut() {
                None => {}
                Some(Page::Dense(values)) => {
                    for (at, generation) in values.iter_mut().enumerate() {
                        if *generation >= first_generation && *generation != 0 {
                            *generation = 0;
                            forgotten(base + at as u64);
                        }
                    }
                }
                Some(Page::Sparse(entries)) => entries.retain(|&(at, generation)| {
                    let keep = generation < first_generation;
                    if !keep {
                        forgotten(base + u64::from(at));
                    }
                    keep
                }),
            }
        }
    }

    /// The first written granule from `from` on, below `end`.
    pub(super) fn next_written(&self, from: u64, end: u64) -> Option<u64> {
        let mut index = from;
        while index < end {
            let (page, at) = Self::split(index);
            let page_end = ((page + 1) * PAGE_GRANULES) as u64;
            let found = match self.pages[page].as_deref() {
                None => None,
                Some(Page::Dense(values)) => {
                    values[at..].iter().position(|&g| g != 0).map(|k| at + k)
                }
                Some(Page::Sparse(entries)) => {
                    let i = entries.partition_point(|e| usize::from(e.0) < at);
                    entries.get(i).map(|e| usize::from(e.0))
                }
            };
            if let Some(at) = found {
                let index = (page * PAGE_GRANULES + at) as u64;
                return (index < end).then_some(index);
            }
            index = page_end;
        }
        None
    }

    /// Pages holding memory (tests).
    #[cfg(test)]
    pub(super) fn touched_pages(&self) -> usize {
        self.pages.iter().filter(|p| p.is_some()).count()
    }

    /// Pages kept as arrays (tests).
    #[cfg(test)]
    pub(super) fn dense_pages(&self) -> usize {
        self.pages
            .iter()
            .filter(|p| matches!(p.as_deref(), Some(Page::Dense(_))))
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::{RngCore, SeedableRng};

    /// The map reads back what a plain array would hold, through every change of a page's form,
    /// and its scan finds the same written granules.
    #[test]
    fn reads_back_as_an_array_would() {
        let granules = 5 * PAGE_GRANULES as u64 + 17;
        let mut map = Generations::new(granules);
        let mut plain = vec![0u32; granules as usize];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        // Page 0 scattered (stays a list), page 2 dense, the short last page touched.
        for step in 0..3000u32 {
            let index = match step % 3 {
                0 => u64::from(rng.next_u32()) % PAGE_GRANULES as u64 / 64 * 64,
                1 => 2 * PAGE_GRANULES as u64 + u64::from(rng.next_u32()) % PAGE_GRANULES as u64,
                _ => granules - 1 - u64::from(rng.next_u32()) % 17,
            };
            let generation = if rng.next_u32() % 7 == 0 { 0 } else { step + 1 };
            let previous = map.replace(index, generation);
            assert_eq!(previous, Some(plain[index as usize]));
            plain[index as usize] = generation;
        }
        assert_eq!(map.replace(granules + PAGE_GRANULES as u64, 1), None);
        assert_eq!(
            map.dense_pages(),
            1,
            "only the page written all over is an array"
        );
        let check = |map: &Generations, plain: &[u32]| {
            for (index, &generation) in plain.iter().enumerate() {
                assert_eq!(map.get(index as u64), generation, "granule {index}");
            }
            let written: Vec<u64> = (0..granules).filter(|&i| plain[i as usize] != 0).collect();
            let mut scanned = Vec::new();
            let mut from = 0;
            while let Some(index) = map.next_written(from, granules) {
                scanned.push(index);
                from = index + 1;
            }
            assert_eq!(scanned, written);
        };
        check(&map, &plain);
        let mut forgotten = Vec::new();
        map.forget_from(1500, |index| forgotten.push(index));
        let expected: Vec<u64> = (0..granules)
            .filter(|&i| plain[i as usize] >= 1500)
            .collect();
        forgotten.sort_unstable();
        assert_eq!(forgotten, expected);
        for generation in &mut plain {
            if *generation >= 1500 {
                *generation = 0;
            }
        }
        check(&map, &plain);
    }
}
