//! `gateway_host_pace`: what the gateway adds to a call over stdio, measured with a
//! client that is not rmcp's (JSON-RPC lines written and read by hand, as any host's own
//! stdio code does), beside the floor of one extra process hop.
//!
//! Four routes to the same `echo` tool of npm `@modelcontextprotocol/server-everything`
//! (the peers cache): `direct` (the client spawns the server), `relay` (`socat` copying
//! bytes between the client and the server, the floor of any process in between),
//! `gateway` (`omniagent mcp serve` with the server as its upstream `everything`) and
//! `gateway_busy_poll` (the same with `--busy-poll 500`, polling after each wake-up). Each is timed at two paces:
//! `back_to_back` (one call right after another) and `every_10ms` (a call 10 ms after the
//! last answer, as a host calls while its model works: each process has gone to sleep in
//! between, and only the call is timed).
//!
//! `gateway_host_pace/added` (printed): the routes' calls interleaved (a block of calls
//! of each route in turn, so that a change of the machine's state costs every route
//! alike; the first calls of a block, which a polling gateway's last window may still
//! overlap, are not counted), each route's median, and what each route adds to
//! `direct`'s median. Beside it, `gateway_host_pace/cpu_per_call`: the CPU time
//! (user + system, from /proc) of the process in between, per call at each pace.
//!
//! Peers: server-everything from the peers cache and `socat` on `PATH` (`cargo xtask
//! bench` installs it where it can).

use std::hint::black_box;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode};
use serde_json::{Value, json};

use super::{home_with, omniagent};

/// The pause before each call at a host's pace.
const HOST_PAUSE: Duration = Duration::from_millis(10);
/// Blocks of calls of each route, in turn, for the printed figures.
const FIGURE_BLOCKS: usize = 20;
/// Calls in a block; the first [`UNCOUNTED`] are not counted.
const BLOCK_CALLS: usize = 25;
const UNCOUNTED: usize = 5;
/// Calls counted for each route at each pace.
const FIGURE_CALLS: usize = FIGURE_BLOCKS * (BLOCK_CALLS - UNCOUNTED);

/// A client that writes JSON-RPC lines to a server's stdin and reads its answers from its
/// stdout, one request at a time, as a host's own stdio code does.
struct LineClient {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    line: String,
}

impl LineClient {
    /// Spawns `command` and initializes it (2025-11-25, no capabilities).
    fn start(mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let stdin = child.stdin.take().expect("a piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("a piped stdout"));
        let mut client = Self { child, stdin, stdout, next_id: 1, line: String::new() };
        let answer = client.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}),
        );
        assert!(answer["result"]["protocolVersion"].is_string(), "not an initialize result: {answer}");
        client.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        client
    }

    fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).expect("the server reads stdin");
        self.stdin.write_all(b"\n").expect("the server reads stdin");
        self.stdin.flush().expect("the server reads stdin");
    }

    /// Sends one request and reads lines until its answer (skipping notifications).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        loop {
            self.line.clear();
            let read = self.stdout.read_line(&mut self.line).expect("the server's stdout is readable");
            assert!(read > 0, "the server closed its stdout");
            let message: Value = serde_json::from_str(&self.line).expect("a JSON-RPC line");
            if message["id"] == id {
                return message;
            }
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for LineClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One way to `echo`: its name, the client, the tool's name on that route and the
/// process in between (for its CPU time), if any.
struct Route {
    name: &'static str,
    client: LineClient,
    tool: &'static str,
    between: Option<u32>,
}

impl Route {
    /// The route through `command`, a process in between the client and the server if
    /// `between`.
    fn start(name: &'static str, command: Command, tool: &'static str, between: bool) -> Self {
        let client = LineClient::start(command);
        let between = between.then(|| client.pid());
        Self { name, client, tool, between }
    }

    /// One `echo` call, and its answer.
    fn call(&mut self) -> Value {
        self.client.request("tools/call", json!({"name": self.tool, "arguments": {"message": "x"}}))
    }

    /// One call, checked: measuring an error path by mistake would flatter a route.
    fn check(&mut self) {
        let answer = self.call();
        let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains('x') && answer["result"]["isError"] != true, "{}: {answer}", self.name);
    }

    /// `calls` calls, each `pause` after the last answer; the time spent in the calls.
    fn timed_calls(&mut self, calls: u64, pause: Duration) -> Duration {
        let mut spent = Duration::ZERO;
        for _ in 0..calls {
            if !pause.is_zero() {
                std::thread::sleep(pause);
            }
            let started = Instant::now();
            black_box(self.call());
            spent += started.elapsed();
        }
        spent
    }
}

fn routes(everything: &Path, home: &Path) -> Vec<Route> {
    let server = || {
        let mut command = Command::new(everything);
        command.arg("stdio");
        command
    };
    let mut relay = Command::new("socat");
    relay.arg("-").arg(format!("EXEC:{} stdio", everything.display()));
    let gateway = |args: &[&str]| {
        let mut command = omniagent(home, &["mcp", "serve"]);
        command.args(args);
        command
    };
    let mut routes = vec![
        Route::start("direct", server(), "echo", false),
        Route::start("relay", relay, "echo", true),
        Route::start("gateway", gateway(&[]), "everything__echo", true),
        Route::start("gateway_busy_poll", gateway(&["--busy-poll", "500"]), "everything__echo", true),
    ];
    for route in &mut routes {
        // Through the gateway, the first call starts the upstream.
        route.check();
        route.timed_calls(50, Duration::ZERO);
    }
    routes
}

pub(crate) fn host_pace(c: &mut Criterion) {
    let everything = test_peers::server_everything_or_panic();
    let home = home_with(&format!(
        "storage: {{backend: memory}}\nmcp:\n  servers:\n    everything:\n      command: '{}'\n      args: [stdio]\n",
        everything.display()
    ));
    let mut routes = routes(&everything, home.path());

    let mut group = c.benchmark_group("gateway_host_pace");
    group.warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    for route in &mut routes {
        group.bench_function(format!("back_to_back/{}", route.name), |b| {
            b.iter_custom(|iters| route.timed_calls(iters, Duration::ZERO))
        });
    }
    group.sampling_mode(SamplingMode::Flat).sample_size(20).measurement_time(Duration::from_secs(6));
    for route in &mut routes {
        group.bench_function(format!("every_10ms/{}", route.name), |b| {
            b.iter_custom(|iters| route.timed_calls(iters, HOST_PAUSE))
        });
    }
    group.finish();

    if test_peers::printed_figure_wanted("gateway_host_pace/added") {
        for (pace, pause) in [("back_to_back", Duration::ZERO), ("every_10ms", HOST_PAUSE)] {
            print_figures(&mut routes, pace, pause);
        }
    }
}

/// The interleaved medians at one pace, what each route adds to `direct`, and the CPU
/// time per call of each process in between.
#[expect(clippy::print_stdout, reason = "figures measured outside criterion, printed beside its report")]
fn print_figures(routes: &mut [Route], pace: &str, pause: Duration) {
    let cpu_time = |pid: u32| test_peers::proc_stat(pid).expect("the process is running").cpu;
    let cpu_before: Vec<Option<Duration>> = routes.iter().map(|route| route.between.map(cpu_time)).collect();
    let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(FIGURE_CALLS); routes.len()];
    for _ in 0..FIGURE_BLOCKS {
        for (route, samples) in routes.iter_mut().zip(&mut samples) {
            for call in 0..BLOCK_CALLS {
                let spent = route.timed_calls(1, pause);
                if call >= UNCOUNTED {
                    samples.push(spent);
                }
            }
        }
    }
    let medians: Vec<f64> = samples.iter_mut().map(|samples| median_micros(samples)).collect();
    let direct = medians[0];
    let added: Vec<String> = routes
        .iter()
        .zip(&medians)
        .skip(1)
        .map(|(route, median)| format!("{} {median:.0} µs (+{:.0} µs)", route.name, median - direct))
        .collect();
    println!(
        "gateway_host_pace/added/{pace}: direct {direct:.0} µs; {} (medians of {FIGURE_CALLS} calls each, interleaved)",
        added.join(", ")
    );
    let cpu: Vec<String> = routes
        .iter()
        .zip(cpu_before)
        .filter_map(|(route, before)| {
            let spent = cpu_time(route.between?) - before?;
            Some(format!("{} {:.1} µs", route.name, spent.as_secs_f64() * 1e6 / (FIGURE_BLOCKS * BLOCK_CALLS) as f64))
        })
        .collect();
    println!(
        "gateway_host_pace/cpu_per_call/{pace}: {} (user + system time of the process in between)",
        cpu.join(", ")
    );
}

fn median_micros(samples: &mut [Duration]) -> f64 {
    samples.sort_unstable();
    samples[samples.len() / 2].as_secs_f64() * 1e6
}
