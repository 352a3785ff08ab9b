//! Proves the hot-path promise: once constructed (with the series reserved for the run),
//! recording an I/O performs no heap allocation. Alone in its test binary because it counts
//! allocations through a wrapping global allocator. Only allocations made on the thread that
//! records count: libtest's main thread may still be allocating (its bookkeeping of the test it
//! just spawned) while the test runs, and on a loaded machine that landed inside the window.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use storlab_stats::{LatencyHistogram, WorkerStats};

struct CountingAllocator;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Set on the recording thread while it is measured; a `const` initialiser, so reading it
    /// from inside the allocator never allocates.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

/// Counts one allocation if the calling thread is the one being measured.
fn count() {
    if COUNTING.with(Cell::get) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwards the caller's layout unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was returned by `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: `ptr`/`layout` come from this allocator, which forwards to `System`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn recording_does_not_allocate() {
    const MS: u64 = 1_000_000;
    const RUN_NS: u64 = 2_000 * MS;
    let mut histogram = LatencyHistogram::new();
    let mut worker = WorkerStats::with_expected_duration(100 * MS, RUN_NS);

    let before = ALLOCATIONS.load(Ordering::Relaxed);
    COUNTING.with(|counting| counting.set(true));
    for index in 0..100_000u64 {
        let t_ns = index * (RUN_NS / 100_000);
        let latency_ns = 1 + index * 7_919 % 50_000_000;
        histogram.record(latency_ns);
        worker.read.record(t_ns, 4096, 500, latency_ns);
        worker.write.record(t_ns, 4096, 500, latency_ns);
        worker.trim.record(t_ns, 4096, 500, latency_ns);
        if index % 1_000 == 0 {
            worker.read.record_error();
        }
    }
    COUNTING.with(|counting| counting.set(false));
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    assert_eq!(allocations, 0, "recording allocated {allocations} times");
    assert_eq!(worker.read.ios, 100_000);
    assert_eq!(worker.read.series.bins().len(), 20);
}
