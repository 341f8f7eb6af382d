//! What the agent adds to an MCP tool call and to a server's start-up, measured against
//! rmcp's bare client on the same server: the in-repo `mcp-sample-server`, over stdio.
//!
//! - `call_sequential`: one caller, one `echo` call after another, on a server started
//!   once and kept alive. `agent` calls `Agent::call_tool("sample__echo", {"text": "x"})`
//!   (name lookup, schema check, span, `McpSkill`'s liveness check, the call timeout and
//!   the result conversion); `bare_rmcp` calls `Peer::call_tool` on a client from
//!   `ClientConfig::serve_with_lifecycle(TokioChildProcess::new(..), Auto)`: both speak
//!   2026-07-28, and the bare client declares the agent's name and capabilities
//!   (elicitation), which that version sends in every request's `_meta`, so the server
//!   gets the same bytes from both (checked before any timing, with the sample server's
//!   `client` tool). The difference is the agent's own work less what its stdio
//!   transport saves: it reads a tool call's result as that type, where rmcp's tries the
//!   variants of its result union in turn (half the bare client's instructions).
//!   `agent` calls a server run sandboxed (the default on Linux); `agent_unsandboxed`
//!   calls a second one with `sandbox: off`, so the difference is what the sandbox adds
//!   to a call (the seccomp filter on each of the server's system calls, Landlock's
//!   checks on what it opens).
//! - `call_concurrent_16`: the same, with 16 callers at once on one connection. Each
//!   iteration is one call of each caller; the time reported is the wall time divided by
//!   16, so it is the time per call (its inverse is the throughput).
//! - `startup`: spawn + `initialize` + `tools/list`. `agent` is `Agent::init_compiled_skills`
//!   with one `McpSkill` (fresh environment, process group, stderr drain, the handshake
//!   and the listing turned into tools and registered); `bare_rmcp` is `serve` then
//!   `list_all_tools`. The `_with_close` variants add the shutdown (stdin EOF; the server
//!   exits at once); in the other two it runs after each iteration, outside the timing.
//!   `agent` runs the server sandboxed (the default on Linux); `agent_unsandboxed` is
//!   the same with `sandbox: off`, so the difference is what the sandbox adds.
//!
//! - `*/paired` (printed, under `cargo bench` only): the agent's time over `bare_rmcp`'s
//!   for each of the two call benchmarks, as the median (and quartiles) of 31 rounds,
//!   each timing one batch of each side back to back, the first side alternating. On a
//!   shared machine a slow spell then falls on both sides of one ratio, where criterion's
//!   figures, measured one side after the other, can differ by more than the targets.
//!   Where the sequential ratio still swings between runs (on a 2-vCPU VM it did, from
//!   where the scheduler put the two servers and the two workers), run the bench pinned
//!   to one CPU (`taskset -c 0 cargo bench -p skill-mcp --bench round_trip`): the
//!   ratios then compare the CPU each side's calls cost, client, server and kernel.
//! - `call_sequential/sandbox_paired` (printed too): `agent` over `agent_unsandboxed`,
//!   paired the same way: what the sandbox adds to a call, as a ratio.
//! - `startup/sandbox_paired` (printed too): `startup/agent` less `agent_unsandboxed`,
//!   in milliseconds a start, paired the same way (rounds of 10 starts each).
//!
//! Targets: the agent path at most 5% slower than `bare_rmcp` sequentially and 10% with
//! 16 callers; at least 10,000 calls/s sequential; spawn to listed tools under 10 ms.
//!
//! The callers run as tasks on a multi-thread tokio runtime with 2 workers, as an agent's
//! own tasks would; each `iter_custom` batch is one `block_on`. The server binary is
//! `$OMNIAGENT_MCP_SAMPLE_SERVER`, or `mcp-sample-server` of this target folder (release,
//! then debug): build it first with `cargo build --release -p mcp-sample-server`.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rmcp::model::{CallToolRequestParams, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{Value, json};
use skill_core::{Agent, ToolOutput};
use skill_mcp::{McpSkill, ServerConfig};
use tokio::runtime::Runtime;

/// The skill's (and so the tool prefix's) name.
const SKILL: &str = "sample";
/// The tool as the agent names it.
const AGENT_TOOL: &str = "sample__echo";
/// Concurrent callers in `call_concurrent_16`.
const CALLERS: u32 = 16;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a tokio runtime")
}

/// An agent with the sample server as the skill `sample`, its tools listed.
async fn start_agent(server: &Path) -> Agent {
    start_agent_with(json!({"command": server})).await
}

/// The agent of [`start_agent`] with the server `sandbox: off`.
async fn start_agent_unsandboxed(server: &Path) -> Agent {
    start_agent_with(json!({"command": server, "sandbox": "off"})).await
}

async fn start_agent_with(config: Value) -> Agent {
    let config: ServerConfig = serde_json::from_value(config).expect("a server config");
    let agent = Agent::builder().with_compiled_skill(McpSkill::new(SKILL, config)).build();
    let report = agent.init_compiled_skills().await;
    assert_eq!(report.loaded, [SKILL], "the sample server did not load: {:?}", report.skipped);
    agent
}

/// rmcp's client on the sample server, started as `McpSkill` starts it (2026-07-28 when
/// the server speaks it, which it does), declaring what the agent declares: on
/// 2026-07-28 every request carries the client's name and capabilities, so both sides
/// send the server the same request.
async fn start_bare(server: &Path) -> RunningService<RoleClient, ClientConfig> {
    let transport = TokioChildProcess::new(tokio::process::Command::new(server)).expect("the sample server starts");
    let lifecycle =
        ClientLifecycleMode::Auto { preferred_versions: vec![ProtocolVersion::V_2026_07_28], legacy_version: None };
    let capabilities = serde_json::from_value(json!({"elicitation": {"form": {}, "url": {}}})).expect("capabilities");
    let declared = ClientConfig::new(capabilities, Implementation::new("omniagent", env!("CARGO_PKG_VERSION")));
    declared.serve_with_lifecycle(transport, lifecycle).await.expect("the sample server starts")
}

fn echo_arguments() -> Value {
    json!({"text": "x"})
}

fn echo_params() -> CallToolRequestParams {
    let Value::Object(arguments) = echo_arguments() else { unreachable!("echo's arguments are an object") };
    CallToolRequestParams::new("echo").with_arguments(arguments)
}

/// `calls` echo calls through the agent, one after the other.
async fn agent_calls(agent: Agent, arguments: Value, calls: u64) {
    for _ in 0..calls {
        black_box(agent.call_tool(AGENT_TOOL, arguments.clone()).await.expect("echo answers through the agent"));
    }
}

/// `calls` echo calls through rmcp's bare client, one after the other.
async fn bare_calls(peer: Peer<RoleClient>, params: CallToolRequestParams, calls: u64) {
    for _ in 0..calls {
        black_box(peer.call_tool(params.clone()).await.expect("echo answers through rmcp"));
    }
}

/// Runs `callers` tasks made by `caller` at once, and returns the wall time until the
/// last one ends.
fn batch<Fut>(runtime: &Runtime, callers: u32, mut caller: impl FnMut() -> Fut) -> Duration
where
    Fut: Future<Output = ()> + Send + 'static,
{
    runtime.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        let started = Instant::now();
        for _ in 0..callers {
            tasks.spawn(caller());
        }
        while let Some(joined) = tasks.join_next().await {
            joined.expect("a caller task");
        }
        started.elapsed()
    })
}

fn calls(c: &mut Criterion) {
    let server = test_peers::sample_server_or_panic();
    let runtime = runtime();
    let agent = runtime.block_on(start_agent(&server));
    let unsandboxed = runtime.block_on(start_agent_unsandboxed(&server));
    let bare = runtime.block_on(start_bare(&server));
    let peer = bare.peer().clone();

    // Measuring an error path by mistake would flatter either side: check both answers.
    let arguments = echo_arguments();
    let params = echo_params();
    for agent in [&agent, &unsandboxed] {
        let answer = runtime.block_on(agent.call_tool(AGENT_TOOL, arguments.clone())).expect("echo answers");
        assert_eq!(answer, ToolOutput::text("x"));
    }
    let answer = runtime.block_on(peer.call_tool(params.clone())).expect("echo answers");
    assert_eq!(answer.content.first().and_then(|content| content.as_text()).map(|text| text.text.as_str()), Some("x"));
    // Both send the server the same declaration, or the bare side's requests differ.
    let agent_declared =
        runtime.block_on(agent.call_tool(&format!("{SKILL}__client"), json!({}))).expect("`client` answers");
    let bare_declared =
        runtime.block_on(peer.call_tool(CallToolRequestParams::new("client"))).expect("`client` answers");
    let bare_declared = bare_declared.content.first().and_then(|content| content.as_text()).expect("a text answer");
    assert_eq!(
        agent_declared,
        ToolOutput::text(bare_declared.text.as_str()),
        "the bare client declares as the agent does"
    );
    let on = |agent: &Agent, calls| {
        let (agent, arguments) = (agent.clone(), arguments.clone());
        move || agent_calls(agent.clone(), arguments.clone(), calls)
    };
    let on_agent = |calls| on(&agent, calls);
    let on_unsandboxed = |calls| on(&unsandboxed, calls);
    let on_peer = |calls| {
        let (peer, params) = (peer.clone(), params.clone());
        move || bare_calls(peer.clone(), params.clone(), calls)
    };

    let mut group = c.benchmark_group("call_sequential");
    group.throughput(Throughput::Elements(1));
    group.bench_function("agent", |b| b.iter_custom(|iters| batch(&runtime, 1, on_agent(iters))));
    group.bench_function("agent_unsandboxed", |b| b.iter_custom(|iters| batch(&runtime, 1, on_unsandboxed(iters))));
    group.bench_function("bare_rmcp", |b| b.iter_custom(|iters| batch(&runtime, 1, on_peer(iters))));
    group.finish();

    let mut group = c.benchmark_group("call_concurrent_16");
    group.throughput(Throughput::Elements(1));
    group.bench_function("agent", |b| b.iter_custom(|iters| batch(&runtime, CALLERS, on_agent(iters)) / CALLERS));
    group.bench_function("bare_rmcp", |b| b.iter_custom(|iters| batch(&runtime, CALLERS, on_peer(iters)) / CALLERS));
    group.finish();

    #[expect(clippy::print_stdout, reason = "a figure measured outside criterion, printed beside its report")]
    for (name, callers, calls) in [("call_sequential", 1, 400), ("call_concurrent_16", CALLERS, 100)] {
        if test_peers::printed_figure_wanted(&format!("{name}/paired")) {
            let ratios = paired_ratios(
                || batch(&runtime, callers, on_agent(calls)),
                || batch(&runtime, callers, on_peer(calls)),
            );
            let quartile = |q: usize| ratios[(ratios.len() - 1) * q / 4];
            println!(
                "{name}/paired: agent / bare_rmcp = {:.3} (quartiles {:.3} to {:.3}, {} rounds)",
                quartile(2),
                quartile(1),
                quartile(3),
                ratios.len()
            );
        }
    }
    #[expect(clippy::print_stdout, reason = "a figure measured outside criterion, printed beside its report")]
    if test_peers::printed_figure_wanted("call_sequential/sandbox_paired") {
        let ratios = paired_ratios(|| batch(&runtime, 1, on_agent(400)), || batch(&runtime, 1, on_unsandboxed(400)));
        let quartile = |q: usize| ratios[(ratios.len() - 1) * q / 4];
        println!(
            "call_sequential/sandbox_paired: sandboxed / unsandboxed = {:.3} (quartiles {:.3} to {:.3}, {} rounds)",
            quartile(2),
            quartile(1),
            quartile(3),
            ratios.len()
        );
    }

    runtime.block_on(async {
        agent.close().await;
        unsandboxed.close().await;
        bare.cancel().await.expect("the rmcp client closes");
    });
}

/// Rounds of a paired comparison.
const PAIRED_ROUNDS: usize = 31;

/// The ratios `agent / bare` of the times of `PAIRED_ROUNDS` rounds, sorted: each round
/// times one batch of each, back to back, the first alternating.
fn paired_ratios(agent: impl FnMut() -> Duration, bare: impl FnMut() -> Duration) -> Vec<f64> {
    paired(agent, bare, |agent, bare| agent.as_secs_f64() / bare.as_secs_f64())
}

/// `compare` of the times of `PAIRED_ROUNDS` rounds of `one` and `other`, sorted: each
/// round times one batch of each, back to back, the first alternating.
fn paired(
    mut one: impl FnMut() -> Duration,
    mut other: impl FnMut() -> Duration,
    compare: impl Fn(Duration, Duration) -> f64,
) -> Vec<f64> {
    let mut compared: Vec<f64> = (0..PAIRED_ROUNDS)
        .map(|round| {
            let (one, other) = if round % 2 == 0 {
                let one = one();
                (one, other())
            } else {
                let other = other();
                (one(), other)
            };
            compare(one, other)
        })
        .collect();
    compared.sort_by(f64::total_cmp);
    compared
}

/// Starts in one round of `startup/sandbox_paired`.
const PAIRED_STARTS: u32 = 10;

/// The time from spawning the sample server to its listed tools, `starts` times, with
/// or without the sandbox; the close after each start is left out.
fn time_to_listed(runtime: &Runtime, server: &Path, sandboxed: bool, starts: u64) -> Duration {
    runtime.block_on(async {
        let mut listed = Duration::ZERO;
        for _ in 0..starts {
            let started = Instant::now();
            let agent = if sandboxed { start_agent(server).await } else { start_agent_unsandboxed(server).await };
            listed += started.elapsed();
            agent.close().await;
        }
        listed
    })
}

fn startup(c: &mut Criterion) {
    let server = test_peers::sample_server_or_panic();
    let runtime = runtime();
    let mut group = c.benchmark_group("startup");
    // The time to listed tools; the close after each iteration is left out.
    group.bench_function("agent", |b| b.iter_custom(|iters| time_to_listed(&runtime, &server, true, iters)));
    // The same with the sandbox off: the difference is what confining the server costs.
    group.bench_function("agent_unsandboxed", |b| {
        b.iter_custom(|iters| time_to_listed(&runtime, &server, false, iters))
    });
    group.bench_function("bare_rmcp", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let mut listed = Duration::ZERO;
                for _ in 0..iters {
                    let started = Instant::now();
                    let bare = start_bare(&server).await;
                    black_box(bare.peer().list_all_tools().await.expect("the sample server lists its tools"));
                    listed += started.elapsed();
                    bare.cancel().await.expect("the rmcp client closes");
                }
                listed
            })
        })
    });
    group.bench_function("agent_with_close", |b| {
        b.iter(|| {
            runtime.block_on(async {
                start_agent(&server).await.close().await;
            })
        })
    });
    group.bench_function("bare_rmcp_with_close", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let bare = start_bare(&server).await;
                black_box(bare.peer().list_all_tools().await.expect("the sample server lists its tools"));
                bare.cancel().await.expect("the rmcp client closes");
            })
        })
    });
    group.finish();

    #[expect(clippy::print_stdout, reason = "a figure measured outside criterion, printed beside its report")]
    if test_peers::printed_figure_wanted("startup/sandbox_paired") {
        let starts = u64::from(PAIRED_STARTS);
        let added = paired(
            || time_to_listed(&runtime, &server, true, starts),
            || time_to_listed(&runtime, &server, false, starts),
            |sandboxed, unsandboxed| {
                (sandboxed.as_secs_f64() - unsandboxed.as_secs_f64()) * 1e3 / f64::from(PAIRED_STARTS)
            },
        );
        let quartile = |q: usize| added[(added.len() - 1) * q / 4];
        println!(
            "startup/sandbox_paired: the sandbox adds {:.2} ms to a start (quartiles {:.2} to {:.2}, {} rounds of {} starts)",
            quartile(2),
            quartile(1),
            quartile(3),
            added.len(),
            PAIRED_STARTS
        );
    }
}

criterion_group!(benches, calls, startup);
criterion_main!(benches);
