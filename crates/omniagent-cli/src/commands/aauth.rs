//! `omniagent aauth enroll|whoami|fetch|mission|publish`: the AAuth agent from the shell.

use std::process::ExitCode;

use anyhow::Context;
use omniagent_host::{AAuthOverrides, aauth_client, current_mission, keep_mission};

use super::{Session, on_interaction};
use crate::UsageError;
use crate::args::{AauthCommand, MissionCommand};
use crate::render;

pub(crate) async fn run(session: &Session, command: AauthCommand) -> anyhow::Result<ExitCode> {
    let config = session.location.load()?.for_agent(session.agent.as_deref())?;
    match command {
        AauthCommand::Enroll { agent_provider, ps } => {
            let overrides = AAuthOverrides { agent_provider, person_server: ps };
            let client = aauth_client(&config, &session.home, overrides, Some(on_interaction())).await?;
            let identity = client.enroll().await.context("enrollment failed")?;
            render::aauth_identity(&identity, session.json)?;
            Ok(ExitCode::SUCCESS)
        }
        AauthCommand::Whoami => {
            let client =
                aauth_client(&config, &session.home, AAuthOverrides::default(), Some(on_interaction())).await?;
            let identity = client.agent_identity().await.context("cannot get an agent token")?;
            render::aauth_identity(&identity, session.json)?;
            Ok(ExitCode::SUCCESS)
        }
        AauthCommand::Fetch { method, headers, data, url } => {
            let client =
                aauth_client(&config, &session.home, AAuthOverrides::default(), Some(on_interaction())).await?;
            let method = method.unwrap_or_else(|| if data.is_some() { "POST" } else { "GET" }.to_owned());
            let url = url::Url::parse(&url).map_err(|error| UsageError::new(format!("{url} is not a URL: {error}")))?;
            // Messages show the URL without what may be secret in it (user info, query).
            let shown = aauth_client::url_for_errors(&url);
            let request = build_request(&client.http_client(), &method, &headers, data, url)?;
            let response =
                request.send().await.map_err(without_url).with_context(|| format!("{method} {shown} failed"))?;
            let status = response.status();
            let body = response
                .bytes()
                .await
                .map_err(reqwest::Error::without_url)
                .with_context(|| format!("cannot read the response of {shown}"))?;
            render::fetched(status, &body)?;
            Ok(if status.is_success() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        AauthCommand::Mission(command) => mission(session, &config, command).await,
        AauthCommand::Publish { dir } => {
            let client = aauth_client(&config, &session.home, AAuthOverrides::default(), None).await?;
            let Some(documents) = client.self_hosted_documents() else {
                return Err(UsageError::new("aauth publish is for a self-hosted agent: set aauth.self_hosted").into());
            };
            for (path, document) in
                [(".well-known/aauth-agent.json", &documents.metadata), ("jwks.json", &documents.jwks)]
            {
                let path = dir.join(path);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
                }
                let text = serde_json::to_string_pretty(document)?;
                std::fs::write(&path, text + "\n").with_context(|| format!("cannot write {}", path.display()))?;
                render::aauth_note(&format!("wrote {}", path.display()));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `aauth mission propose|status|complete`: the current mission is kept in the home's
/// `aauth/mission.json` until it is completed.
async fn mission(
    session: &Session,
    config: &omniagent_host::AgentConfig,
    command: MissionCommand,
) -> anyhow::Result<ExitCode> {
    let client = || aauth_client(config, &session.home, AAuthOverrides::default(), Some(on_interaction()));
    match command {
        MissionCommand::Propose { description, resources } => {
            let resources = resources
                .iter()
                .map(|text| {
                    url::Url::parse(text).map_err(|error| UsageError::new(format!("--resource {text}: {error}")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let client = client().await?;
            render::aauth_note("waiting for the person to approve the mission…");
            let mission =
                client.propose_mission(&description, &resources).await.context("the mission was not approved")?;
            keep_mission(&session.home, Some(&mission))?;
            render::aauth_mission(&mission, session.json)?;
            Ok(ExitCode::SUCCESS)
        }
        MissionCommand::Status => match current_mission(&session.home) {
            Some(mission) => {
                render::aauth_mission(&mission, session.json)?;
                Ok(ExitCode::SUCCESS)
            }
            None => {
                render::aauth_note("no current mission: `omniagent aauth mission propose TEXT` proposes one");
                Ok(ExitCode::FAILURE)
            }
        },
        MissionCommand::Complete { summary } => {
            let Some(mission) = current_mission(&session.home) else {
                return Err(UsageError::new("no current mission to complete").into());
            };
            let client = client().await?;
            render::aauth_note("waiting for the person to accept the completion…");
            client.complete_mission(&mission.s256, &summary).await.context("the mission was not completed")?;
            keep_mission(&session.home, None)?;
            render::aauth_note(&format!("mission {} completed", mission.s256));
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The request `aauth fetch` sends: `-X`, each `-H Name: value`, and `-d` (`@FILE` reads
/// the body from a file; `Content-Type: application/x-www-form-urlencoded` unless a `-H`
/// gives one, as curl does).
fn build_request(
    client: &reqwest_middleware::ClientWithMiddleware,
    method: &str,
    headers: &[String],
    data: Option<String>,
    url: url::Url,
) -> Result<reqwest_middleware::RequestBuilder, UsageError> {
    let method = reqwest::Method::from_bytes(method.to_ascii_uppercase().as_bytes())
        .map_err(|_| UsageError::new(format!("-X {method}: not an HTTP method")))?;
    let mut request = client.request(method, url);
    for header in headers {
        let Some((name, value)) = header.split_once(':') else {
            return Err(UsageError::new(format!("-H {header}: write it as `Name: value`")));
        };
        let name = reqwest::header::HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| UsageError::new(format!("-H {header}: `{}` is not a header name", name.trim())))?;
        let value = reqwest::header::HeaderValue::from_str(value.trim())
            .map_err(|_| UsageError::new(format!("-H {header}: the value has characters a header cannot carry")))?;
        request = request.header(name, value);
    }
    if let Some(data) = data {
        let body = match data.strip_prefix('@') {
            Some(path) => {
                std::fs::read(path).map_err(|error| UsageError::new(format!("cannot read -d file {path}: {error}")))?
            }
            None => data.into_bytes(),
        };
        // A signed body needs its type; curl's default for -d, unless -H gives one.
        if !headers.iter().any(|header| header.trim_start().to_ascii_lowercase().starts_with("content-type:")) {
            request = request.header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        }
        request = request.body(body);
    }
    Ok(request)
}

/// A failed request's error without the URL reqwest puts in its message: the caller
/// names the URL, redacted.
fn without_url(error: reqwest_middleware::Error) -> anyhow::Error {
    match error {
        reqwest_middleware::Error::Reqwest(error) => error.without_url().into(),
        other => other.into(),
    }
}
