//! What the two benchmarks of 16 concurrent HTTP clients share, so that their figures
//! compare: the gateway's `gateway_http_16_clients` and `replicas_http_16_clients`.

use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};

/// Concurrent clients; an iteration is one call of each, so throughput is calls/s.
pub(crate) const CLIENTS: u32 = 16;

/// The group `name`, measured alike in both benchmarks: throughput in calls, flat
/// sampling, 20 samples in 4 s after 1 s of warm-up.
pub(crate) fn group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .throughput(Throughput::Elements(u64::from(CLIENTS)))
        .sampling_mode(SamplingMode::Flat)
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    group
}
