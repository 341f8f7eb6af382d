//! GitHub's REST description (`@octokit/openapi`, `api.github.com.json`: 13 MB, 1,223
//! operations) from its file to ready tools, beside a bare parse of the same bytes.
//!
//! The group `github`:
//! - `serde_json_from_slice`: `serde_json::from_slice::<Value>` of the file's bytes, read
//!   once outside the loop. The floor: any loader that reads the document as JSON pays it.
//! - `document_from_file`: `Document::from_file`, which reads the file, parses it and
//!   checks the version: what a skill pays before it looks at any operation.
//! - `file_to_tools`: `Document::from_file` then `Document::tools` with the default
//!   filter (every operation): reading, parsing, merging parameters, naming the tools and
//!   building each input schema with the `$defs` it reaches.
//!
//! Every iteration frees what it built inside the timing (criterion's `iter`), so all three
//! pay alike for freeing the parsed document.
//!
//! Targets (issue 5): `file_to_tools` at most 250 ms and at most 3× `serde_json_from_slice`.
//! Its peak RSS (target: 200 MB) and the comparison with FastMCP's `FastMCP.from_openapi`
//! are measured outside criterion, with a program of their own.
//!
//! The document is `$OMNIAGENT_GITHUB_OPENAPI`, else the copy in the peers cache; without
//! it the benchmark panics with what to run (`cargo xtask peers`).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use serde_json::Value;
use skill_openapi::{Document, OperationFilter};

/// Operations in `@octokit/openapi` 23.0.2's `api.github.com.json`.
const GITHUB_OPERATIONS: usize = 1223;

fn github(c: &mut Criterion) {
    let path = test_peers::github_openapi_or_panic();
    let bytes = std::fs::read(&path).expect("GitHub's OpenAPI description is readable");
    let filter = OperationFilter::default();
    // Timing a load that skips operations would flatter it, so check the whole load first.
    let set = Document::from_file(&path).and_then(|document| document.tools(&filter)).expect("GitHub's document loads");
    assert!(set.skipped.is_empty(), "skipped: {:?}", set.skipped);
    assert_eq!(set.tools.len(), GITHUB_OPERATIONS);
    drop(set);

    let mut group = c.benchmark_group("github");
    // Each iteration takes tens of milliseconds: few samples, each of the same number of
    // iterations, keep the whole run near a minute.
    group.sample_size(10).sampling_mode(SamplingMode::Flat).measurement_time(Duration::from_secs(7));
    group.bench_function("serde_json_from_slice", |b| {
        b.iter(|| serde_json::from_slice::<Value>(black_box(&bytes)).expect("GitHub's document is JSON"))
    });
    group.bench_function("document_from_file", |b| {
        b.iter(|| Document::from_file(black_box(&path)).expect("GitHub's document loads"))
    });
    group.bench_function("file_to_tools", |b| {
        b.iter(|| {
            let document = Document::from_file(black_box(&path)).expect("GitHub's document loads");
            document.tools(&filter).expect("GitHub's paths are an object")
        })
    });
    group.finish();
}

criterion_group!(benches, github);
criterion_main!(benches);
