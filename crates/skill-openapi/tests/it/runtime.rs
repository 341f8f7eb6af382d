//! Initializing a skill from a large document (GitHub's, 13 MB, 1223 operations) keeps off
//! the async runtime's thread: reading, parsing and building the tools run on blocking
//! threads, so the runtime's other tasks (other skills starting, a server answering) keep
//! running meanwhile. Checked on a current-thread runtime, where any blocking work stops
//! everything else: a ticker task beside `init` must keep ticking.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::http::header::CONTENT_TYPE;
use axum::routing::get;
use skill_core::Skill;
use skill_openapi::{LoadOptions, OpenApiConfig, OpenApiSkill};

/// `skill`'s `init` on a current-thread runtime beside a task that ticks every
/// millisecond: the time `init` took, and the longest the ticker waited between two ticks.
async fn init_beside_a_ticker(skill: &mut OpenApiSkill) -> (Duration, Duration) {
    let running = Arc::new(AtomicBool::new(true));
    let ticker = tokio::spawn({
        let running = Arc::clone(&running);
        async move {
            let mut longest_gap = Duration::ZERO;
            let mut last_tick = Instant::now();
            while running.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(1)).await;
                longest_gap = longest_gap.max(last_tick.elapsed());
                last_tick = Instant::now();
            }
            longest_gap
        }
    });
    // The ticker's first tick is due before `init` starts.
    tokio::task::yield_now().await;
    let started = Instant::now();
    skill.init().await.unwrap_or_else(|error| panic!("{error}"));
    let init_time = started.elapsed();
    running.store(false, Ordering::Relaxed);
    (init_time, ticker.await.unwrap())
}

/// The ticker's longest gap is a small part of the whole `init`: blocking work would make
/// it nearly all of it. A ratio rather than a figure, so that a slow or loaded machine
/// passes too.
fn assert_the_ticker_kept_ticking(spec: &str, (init_time, longest_gap): (Duration, Duration)) {
    assert!(
        longest_gap < init_time / 5,
        "{spec}: the ticker waited {longest_gap:?} at once, during an init of {init_time:?}"
    );
}

fn current_thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

#[test]
fn a_large_file_spec_initializes_without_stalling_the_runtime() {
    let spec = test_peers::github_openapi_or_panic();
    let spec = spec.to_str().unwrap();
    current_thread_runtime().block_on(async {
        let mut skill = OpenApiSkill::new("github", OpenApiConfig::new(spec));
        assert_the_ticker_kept_ticking(spec, init_beside_a_ticker(&mut skill).await);
        assert_eq!(skill.tools().len(), 1223);
    });
}

#[test]
fn a_large_fetched_spec_initializes_without_stalling_the_runtime() {
    // Bytes, so that the server's answers share them rather than copy 13 MB on the runtime.
    let text = Bytes::from(std::fs::read(test_peers::github_openapi_or_panic()).unwrap());
    current_thread_runtime().block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/api.github.com.json", listener.local_addr().unwrap());
        let app = Router::new()
            .route("/api.github.com.json", get(move || async move { ([(CONTENT_TYPE, "application/json")], text) }));
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        // The document is larger than the default limit of 10 MiB.
        let options = LoadOptions::new().with_max_bytes(32 * 1024 * 1024);
        let mut skill = OpenApiSkill::new("github", OpenApiConfig::new(&url)).with_load_options(options);
        assert_the_ticker_kept_ticking(&url, init_beside_a_ticker(&mut skill).await);
        assert_eq!(skill.tools().len(), 1223);
    });
}
