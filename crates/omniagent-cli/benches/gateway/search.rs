//! `gateway_tool_search_github`: `search_tools` over GitHub's 1,223 OpenAPI tools on
//! `omniagent mcp serve --tool-search` over stdio, one query after another (the index of
//! the tools' words taken by a first search). The peer is FastMCP's tool search
//! (`BM25SearchTransform`) over `FastMCP.from_openapi` of the same document, which takes
//! seconds per search: it is timed outside criterion (three searches after a warming
//! one) and printed.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use rmcp::RoleClient;
use rmcp::model::CallToolRequestParams;
use rmcp::service::Peer;
use serde_json::{Value, json};

use super::{fastmcp, github_config, home_with, millis, omniagent, runtime, stdio_client};

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
    let mut group = c.benchmark_group("gateway_tool_search_github");
    group.sample_size(30).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    group.bench_function("search_tools_warm", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let started = Instant::now();
                for query in QUERIES.iter().cycle().take(usize::try_from(iters).expect("a count")) {
                    black_box(search(&peer, query.0).await);
                }
                started.elapsed()
            })
        })
    });
    group.finish();
    runtime.block_on(async { gateway.cancel().await.expect("the gateway client closes") });
    fastmcp_search(&runtime);
}

/// FastMCP's tool search over GitHub's tools, three searches after a warming one, printed.
#[expect(clippy::print_stdout, reason = "a figure measured outside criterion, printed beside its report")]
fn fastmcp_search(runtime: &tokio::runtime::Runtime) {
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
        let mut times = Vec::new();
        for (query, _) in QUERIES {
            let started = Instant::now();
            black_box(search(&peer, query).await);
            times.push(started.elapsed());
        }
        times.sort();
        println!(
            "{name}: median {:.1} ms (min {:.1} ms, max {:.1} ms) of 3 searches",
            millis(times[1]),
            millis(times[0]),
            millis(times[2])
        );
        server.cancel().await.expect("the FastMCP client closes");
    });
}
