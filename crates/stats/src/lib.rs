//! storlab-stats: latency histograms, percentiles, IOPS/bandwidth series and CPU accounting.
//!
//! Pure data structures: the runner records every I/O into a per-worker [`WorkerStats`]
//! (no allocation, no locks on the hot path), merges workers after the run, and turns each
//! direction into a serializable [`DirectionSummary`] for `storlab-report`.

#![forbid(unsafe_code)]

mod cpu;
mod depth;
mod direction;
mod fio_bins;
mod histogram;
mod preparation;
mod series;
mod summary;

pub use cpu::{CpuTime, ResourceUsage};
pub use depth::{DepthCounts, DEPTH_BUCKETS};
pub use direction::{DirectionStats, PriorityLatency, WorkerStats};
pub use fio_bins::{fio_bucket_index, fio_bucket_value_ns};
pub use histogram::{
    HistogramWire, LatencyHistogram, HIGHEST_TRACKABLE_NS, LATENCY_DISTRIBUTION_EDGES_NS,
    LOWEST_DISCERNIBLE_NS, SIGNIFICANT_DIGITS,
};
pub use preparation::StatePreparation;
pub use series::{IntervalBin, IntervalSeries, DEFAULT_INTERVAL_NS, MAX_INTERVALS};
pub use summary::{
    DirectionSummary, IntervalRateSummary, LatencyBinCount, LatencySummary, PrioritySummary,
    FIO_DEFAULT_PERCENTILES,
};
