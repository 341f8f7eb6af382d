//! Missions (protocol -11, "Missions"; optional in the draft, required by some person
//! servers before they issue auth tokens): proposing one at the person server's
//! `mission_endpoint` and waiting for the person's approval, and proposing its
//! completion. The approved mission's `mission_s256` then goes in the person token
//! requests of a client built with [`AAuthClientBuilder::mission`](super::AAuthClientBuilder::mission).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest as _, Sha256};
use skill_core::SecretString;
use url::Url;

use super::{AAuthClient, Inner, now};
use crate::error::{Step, url_for_errors};
use crate::jwt::TokenKind;
use crate::metadata::{PersonServerMetadata, Role, ServerId};
use crate::{Error, tokens};

/// A mission the person approved, as the person server answered it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mission {
    /// `s256`: the base64url SHA-256 of the mission's bytes, which name it everywhere.
    pub s256: String,
    /// The person server that approved it.
    pub person_server: String,
    /// The mission's bytes as the person server approved them (a JSON document, for
    /// `introspection-aauth`), checked against `s256`.
    pub mission: String,
    /// The capabilities the approval grants, when the person server lists them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
    /// The resources the approval sent person tokens for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
}

#[derive(Deserialize)]
struct Approval {
    s256: String,
    mission: String,
    #[serde(default)]
    capabilities: Vec<String>,
    #[serde(default)]
    person_tokens: std::collections::BTreeMap<String, String>,
}

impl AAuthClient {
    /// Proposes a mission to the person server (`POST {mission_endpoint}` with
    /// `description`, the `resources` it will use, and the configured `login_hint` and
    /// `tenant`), waits while the person decides (polling, as for any pending answer:
    /// `on_interaction` is told when the person must act), checks the approval's `s256`
    /// against the mission's bytes, and keeps the person tokens it carries for the
    /// resources. A denial is [`Error::Denied`].
    pub async fn propose_mission(&self, description: &str, resources: &[Url]) -> Result<Mission, Error> {
        let inner = &self.inner;
        let agent = inner.agent_token().await?;
        let here = inner.agent_provider.url();
        let person_server = inner.person_server_for(&agent, &here, "mission")?;
        let metadata = inner.person_server_metadata(&person_server).await?;
        let endpoint = mission_endpoint(&person_server, &metadata)?;
        let resources = resources
            .iter()
            .map(|url| ServerId::of(Role::Resource, url, inner.allow_http_loopback))
            .collect::<Result<Vec<_>, _>>()?;
        let mut body = json!({"description": description,
            "resources": resources.iter().map(ServerId::as_str).collect::<Vec<_>>()});
        for (member, value) in [("login_hint", &inner.hints.login_hint), ("tenant", &inner.hints.tenant)] {
            if let Some(value) = value {
                body[member] = json!(value);
            }
        }
        let answer = inner.call_person_server(Step::Mission, &endpoint, body.to_string(), &agent, None).await?;
        let invalid =
            |reason: String| Error::InvalidResponse { step: Step::Mission, url: url_for_errors(&endpoint), reason };
        let approval: Approval = serde_json::from_slice(&answer)
            .map_err(|_| invalid("not a JSON object with string `s256` and `mission`".to_owned()))?;
        let bytes =
            URL_SAFE_NO_PAD.decode(&approval.mission).map_err(|_| invalid("`mission` is not base64url".to_owned()))?;
        let computed = URL_SAFE_NO_PAD.encode(Sha256::digest(&bytes));
        if computed != approval.s256 {
            return Err(invalid(format!("`s256` `{}` is not the SHA-256 of the mission, `{computed}`", approval.s256)));
        }
        let mission = String::from_utf8(bytes).map_err(|_| invalid("the mission is not UTF-8".to_owned()))?;
        let mut kept = Vec::new();
        for (resource, token) in approval.person_tokens {
            let Ok(url) = Url::parse(&resource) else { continue };
            let Ok(resource) = ServerId::of(Role::Resource, &url, inner.allow_http_loopback) else { continue };
            let person = tokens::check_person_token(
                SecretString::from(token),
                None,
                &resource,
                &person_server,
                &inner.key,
                now(),
            )?;
            inner.tokens.insert(resource.as_str(), TokenKind::Person, person);
            inner.share_tokens(&resource, &person_server).await;
            kept.push(resource.as_str().to_owned());
        }
        tracing::info!(s256 = %approval.s256, "mission approved");
        Ok(Mission {
            s256: approval.s256,
            person_server: person_server.as_str().to_owned(),
            mission,
            capabilities: approval.capabilities,
            resources: kept,
        })
    }

    /// Proposes the completion of the mission `s256` (`POST {mission_endpoint}/{s256}`,
    /// `{"action": "completion", "summary": …}`), and waits while the person accepts it.
    /// A mission that has ended is [`Error::MissionTerminated`], one the person server
    /// does not know [`Error::MissionNotFound`].
    pub async fn complete_mission(&self, s256: &str, summary: &str) -> Result<(), Error> {
        self.inner.mission_action(s256, json!({"action": "completion", "summary": summary})).await
    }

    /// Records progress on the mission `s256` in its log (`{"action": "update",
    /// "description": …}`).
    pub async fn update_mission(&self, s256: &str, description: &str) -> Result<(), Error> {
        self.inner.mission_action(s256, json!({"action": "update", "description": description})).await
    }
}

impl Inner {
    async fn mission_action(&self, s256: &str, mut body: serde_json::Value) -> Result<(), Error> {
        let agent = self.agent_token().await?;
        let here = self.agent_provider.url();
        let person_server = self.person_server_for(&agent, &here, "mission")?;
        let metadata = self.person_server_metadata(&person_server).await?;
        let mut endpoint = mission_endpoint(&person_server, &metadata)?;
        let shown = url_for_errors(&endpoint);
        endpoint
            .path_segments_mut()
            .map_err(|()| Error::InvalidResponse {
                step: Step::Mission,
                url: shown,
                reason: "`mission_endpoint` cannot take a path segment".to_owned(),
            })?
            .push(s256);
        if let Some(tenant) = &self.hints.tenant {
            body["tenant"] = json!(tenant);
        }
        self.call_person_server(Step::Mission, &endpoint, body.to_string(), &agent, None).await.map(|_| ())
    }
}

fn mission_endpoint(person_server: &ServerId, metadata: &PersonServerMetadata) -> Result<Url, Error> {
    metadata.mission_endpoint.clone().ok_or_else(|| Error::InvalidResponse {
        step: Step::PersonMetadata,
        url: url_for_errors(&person_server.well_known(crate::metadata::PERSON_METADATA)),
        reason: "no `mission_endpoint`: this person server takes no missions".to_owned(),
    })
}
