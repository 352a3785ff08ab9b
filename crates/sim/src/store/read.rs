//! Reading the store back: each extent rendered from what generated it (regenerated verify
//! granules and fio blocks, a source's bytes with each write's stamp), zeros elsewhere.

use super::{fio_blocks, Content, Extent, Store, STAMP_BYTES, STAMP_OFFSET_BYTES};
use std::ops::Bound::Excluded;
use storlab_pattern::{regenerate_verifiable, VerifiableHeader};

impl Store {
    /// Fill `out` with the bytes at `offset`.
    pub fn read(&self, offset: u64, out: &mut [u8]) {
        self.read_into(offset, out, false);
    }

    /// Fill `out` with the bytes at `offset`; when the caller knows `out` already holds only
    /// zeros (`out_is_zero`), never-written ranges are left as they are instead of zeroed
    /// again. Returns whether `out` holds only zeros afterwards (false when unsure).
    pub fn read_into(&self, offset: u64, out: &mut [u8], out_is_zero: bool) -> bool {
        if self.extents.is_empty() || out.is_empty() {
            // Nothing was ever written (read-only sessions): every byte reads as zero.
            if !out_is_zero {
                out.fill(0);
            }
            return true;
        }
        let end = offset + out.len() as u64;
        let first = self
            .extents
            .range(..=offset)
            .next_back()
            .filter(|(&start, e)| start + e.len > offset);
        let rest = self.extents.range((Excluded(offset), Excluded(end)));
        let mut all_zero = true;
        let mut pos = offset;
        let mut scratch = Vec::new();
        for (&start, extent) in first.into_iter().chain(rest) {
            let from = start.max(offset);
            let to = (start + extent.len).min(end);
            if from > pos && !out_is_zero {
                out[(pos - offset) as usize..(from - offset) as usize].fill(0);
            }
            let target = &mut out[(from - offset) as usize..(to - offset) as usize];
            self.render(start, extent, from - start, target, &mut scratch);
            all_zero = false;
            pos = to;
        }
        if pos < end && !out_is_zero {
            out[(pos - offset) as usize..].fill(0);
        }
        all_zero
    }

    /// Write into `out` the extent's bytes from `skip` bytes past its start at `start`.
    pub(super) fn render(
        &self,
        start: u64,
        extent: &Extent,
        skip: u64,
        out: &mut [u8],
        scratch: &mut Vec<u8>,
    ) {
        match extent.content {
            Content::Zeros => out.fill(0),
            Content::FioData { block, phase } => {
                fio_blocks::render(&block, u64::from(phase) + skip, out);
            }
            Content::Verifiable {
                seed,
                granule_base_bytes,
                generation,
                granule_bytes,
                pattern,
            } => {
                let header = VerifiableHeader {
                    offset_bytes: granule_base_bytes,
                    generation,
                    seed,
                    granule_bytes,
                    pattern,
                };
                regenerate_verifiable(out, start + skip, &header, granule_base_bytes, scratch);
            }
            Content::Source {
                source,
                source_offset,
                period,
                phase,
                counter,
                stamped,
            } => {
                let bytes = &self.sources[&source].bytes;
                self.render_writes(
                    start,
                    skip,
                    out,
                    source_offset,
                    period,
                    phase,
                    counter,
                    stamped,
                    |_| bytes,
                );
            }
            Content::Sequence {
                sequence,
                source_offset,
                period,
                phase,
                counter,
            } => {
                let seq = &self.sequences[&sequence];
                let source_of = |write_counter: u64| -> &[u8] {
                    let pick = seq.picks[(write_counter - seq.first_counter) as usize];
                    &self.sources[&seq.palette[usize::from(pick)]].bytes
                };
                self.render_writes(
                    start,
                    skip,
                    out,
                    source_offset,
                    period,
                    phase,
                    counter,
                    true,
                    source_of,
                );
            }
        }
    }

    /// Write into `out` the bytes from `skip` past `start` of an extent of writes of `period`
    /// bytes, the first starting `phase` bytes before it, write k from `source_of(counter + k)`
    /// at `source_offset`, stamped (its offset, `counter + k`) when `stamped`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn render_writes<'a>(
        &self,
        start: u64,
        skip: u64,
        out: &mut [u8],
        source_offset: u32,
        period: u32,
        phase: u32,
        counter: u64,
        stamped: bool,
        source_of: impl Fn(u64) -> &'a [u8],
    ) {
        let period = u64::from(period);
        let mut done = 0usize;
        while done < out.len() {
            let relative = u64::from(phase) + skip + done as u64;
            let write_counter = counter + relative / period;
            let within = (relative % period) as usize;
            let n = (period as usize - within).min(out.len() - done);
            let from = source_offset as usize + within;
            out[done..done + n].copy_from_slice(&source_of(write_counter)[from..from + n]);
            if stamped && within < STAMP_BYTES {
                let write_start = start + skip + done as u64 - within as u64;
                let mut stamp = [0u8; STAMP_BYTES];
                stamp[..STAMP_OFFSET_BYTES].copy_from_slice(&write_start.to_le_bytes());
                stamp[STAMP_OFFSET_BYTES..].copy_from_slice(&write_counter.to_le_bytes());
                let m = (STAMP_BYTES - within).min(n);
                out[done..done + m].copy_from_slice(&stamp[within..within + m]);
            }
            done += n;
        }
    }
}
