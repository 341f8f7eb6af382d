//! GitHub's 1,223 OpenAPI tools through the gateway, over stdio.
//!
//! - `gateway_tools_list_github`: `tools/list` without cursor (the first page, 200 of
//!   them), the agent already started by a first list (target: within 5 ms). The peer,
//!   FastMCP's `FastMCP.from_openapi` of the same document in pages of 200, takes seconds
//!   per page: it is timed outside criterion (three lists after a warming one) and
//!   printed.
//! - `gateway_tool_search_github`: `search_tools` on `omniagent mcp serve --tool-search`,
//!   one query after another (the index of the tools' words taken by a first search).
//!   The peer is FastMCP's tool search (`BM25SearchTransform`) over the same
//!   `FastMCP.from_openapi`, which takes seconds per search: timed outside criterion
//!   (three searches after a warming one) and printed.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use rmcp::RoleClient;
use rmcp::model::CallToolRequestParams;
use rmcp::service::Peer;
use serde_json::{Value, json};
use tokio::runtime::Runtime;

use super::{fastmcp, home_with, omniagent, runtime, stdio_client};

/// Operations in `@octokit/openapi` 23.0.2's `api.github.com.json`.
const GITHUB_OPERATIONS: usize = 1223;
/// Tools on the gateway's first page (its `PAGE_SIZE`).
const FIRST_PAGE: usize = 200;

/// A config with GitHub's OpenAPI document as the skill `github`, its calls aimed at a
/// closed port (only listing is measured).
fn github_config() -> String {
    format!(
        "storage: {{backend: memory}}\nopenapi:\n  github: {{spec: '{}', base_url: 'http://127.0.0.1:9'}}\n",
        test_peers::github_openapi_or_panic().display()
    )
}

async fn first_page(peer: &Peer<RoleClient>) -> (usize, bool) {
    let page = peer.list_tools(None).await.expect("tools/list answers");
    (page.tools.len(), page.next_cursor.is_some())
}

pub(crate) fn tools_list_github(c: &mut Criterion) {
    let home = home_with(&github_config());
    let runtime = runtime();
    let (gateway, _) = runtime.block_on(stdio_client(omniagent(home.path(), &["mcp", "serve"])));
    let peer = gateway.peer().clone();
    // The first list starts the agent (and loads the document); then check every page.
    let all_tools = runtime.block_on(peer.list_all_tools()).expect("tools/list answers");
    let github_tools = all_tools.iter().filter(|tool| tool.name.starts_with("github__")).count();
    assert_eq!(github_tools, GITHUB_OPERATIONS, "GitHub's tools through the gateway");
    assert_eq!(runtime.block_on(first_page(&peer)), (FIRST_PAGE, true));

    one_after_another(c, &runtime, "gateway_tools_list_github/first_page_warm", |_| first_page(&peer));
    runtime.block_on(async { gateway.cancel().await.expect("the gateway client closes") });

    fastmcp_openapi_first_page(&runtime);
}

/// FastMCP's first page of GitHub's tools, three times after a warming list, printed.
#[expect(clippy::print_stdout, reason = "a figure measured outside criterion, printed beside its report")]
fn fastmcp_openapi_first_page(runtime: &Runtime) {
    let name = "gateway_tools_list_github/fastmcp_from_openapi_first_page";
    if !test_peers::printed_figure_wanted(name) {
        return;
    }
    let spec = test_peers::github_openapi_or_panic();
    let spec = spec.to_str().expect("a UTF-8 path");
    runtime.block_on(async {
        let started = Instant::now();
        let (server, _) = stdio_client(fastmcp(&["openapi", spec])).await;
        let peer = server.peer().clone();
        assert_eq!(first_page(&peer).await, (FIRST_PAGE, true), "FastMCP pages by 200 too");
        let warm = started.elapsed();
        let times = three_times(|_| first_page(&peer)).await;
        println!("{name}: {times} of 3 lists; spawn to the first page {:.1} s", warm.as_secs_f64());
        server.cancel().await.expect("the FastMCP client closes");
    });
}

/// What the benchmark searches for, and a tool each search must find among the first 10.
const QUERIES: [(&str, &str); 3] = [
    ("list issues of a repository", "issues_list-for-repo"),
    ("add a label to an issue", "issues_add-labels"),
    ("merge a pull request", "pulls_merge"),
];

/// The names `search_tools` gives for `query` (each as the server names it).
async fn search(peer: &Peer<RoleClient>, query: &str) -> Vec<String> {
    let arguments = json!({"query": query}).as_object().cloned().expect("an object");
    let params = CallToolRequestParams::new("search_tools").with_arguments(arguments);
    let result = peer.call_tool(params).await.expect("search_tools answers");
    let found = match result.structured_content {
        Some(Value::Object(mut content)) => content.remove("tools").or_else(|| content.remove("result")),
        _ => None,
    };
    let found = found.and_then(|found| found.as_array().cloned()).unwrap_or_default();
    found.iter().filter_map(|tool| tool["name"].as_str().map(str::to_owned)).collect()
}

pub(crate) fn tool_search_github(c: &mut Criterion) {
    let home = home_with(&github_config());
    let runtime = runtime();
    let (gateway, _) = runtime.block_on(stdio_client(omniagent(home.path(), &["mcp", "serve", "--tool-search"])));
    let peer = gateway.peer().clone();
    for (query, wanted) in QUERIES {
        let found = runtime.block_on(search(&peer, query));
        assert!(found.iter().any(|name| name == &format!("github__{wanted}")), "{query}: {found:?}");
    }
    let figure = "gateway_tool_search_github/search_tools_warm";
    one_after_another(c, &runtime, figure, |round| search(&peer, QUERIES[round % QUERIES.len()].0));
    runtime.block_on(async { gateway.cancel().await.expect("the gateway client closes") });
    fastmcp_search(&runtime);
}

/// FastMCP's tool search over GitHub's tools, three searches after a warming one, printed.
#[expect(clippy::print_stdout, reason = "a figure measured outside criterion, printed beside its report")]
fn fastmcp_search(runtime: &Runtime) {
    let name = "gateway_tool_search_github/fastmcp_bm25_search";
    if !test_peers::printed_figure_wanted(name) {
        return;
    }
    let spec = test_peers::github_openapi_or_panic();
    let spec = spec.to_str().expect("a UTF-8 path");
    runtime.block_on(async {
        let (server, _) = stdio_client(fastmcp(&["openapi-search", spec])).await;
        let peer = server.peer().clone();
        assert!(!search(&peer, QUERIES[0].0).await.is_empty(), "FastMCP's search finds tools");
        let times = three_times(|round| search(&peer, QUERIES[round].0)).await;
        println!("{name}: {times} of 3 searches");
        server.cancel().await.expect("the FastMCP client closes");
    });
}

/// Criterion's `figure` (`group/function`): `each` request after the last (given the
/// round), on `runtime`.
fn one_after_another<F: Future>(c: &mut Criterion, runtime: &Runtime, figure: &str, mut each: impl FnMut(usize) -> F) {
    let (group, function) = figure.split_once('/').expect("a figure is `group/function`");
    let mut group = c.benchmark_group(group);
    group.sample_size(30).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    group.bench_function(function, |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let started = Instant::now();
                for round in 0..usize::try_from(iters).expect("a count") {
                    black_box(each(round).await);
                }
                started.elapsed()
            })
        })
    });
    group.finish();
}

/// Times `each` three times (given the round, 0 to 2), and says the median, the lowest
/// and the highest time, as the printed figures give them.
async fn three_times<F: Future>(mut each: impl FnMut(usize) -> F) -> String {
    let mut times = Vec::new();
    for round in 0..3 {
        let started = Instant::now();
        black_box(each(round).await);
        times.push(started.elapsed());
    }
    times.sort();
    format!("median {:.1} ms (min {:.1} ms, max {:.1} ms)", millis(times[1]), millis(times[0]), millis(times[2]))
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
