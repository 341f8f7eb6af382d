//! The `AAuth-Requirement` response header: what a server needs before it serves a request.
//!
//! The header is an RFC 8941 Dictionary whose `requirement` member is a Token naming the
//! requirement; its parameters carry the data (`resource-token`, `url`, `code`). Unknown
//! parameters are ignored; an unknown requirement value is an error, because an agent must
//! not treat a requirement it does not understand as satisfiable (protocol draft,
//! "Requirement Responses").

use std::fmt;

use sfv::{BareItem, Dictionary, ListEntry, Parser};
use skill_core::SecretString;
use url::Url;

/// The response header carrying a requirement.
pub const AAUTH_REQUIREMENT: &str = "aauth-requirement";

/// What a server asks of the agent before it serves the request.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Requirement {
    /// `401 requirement=agent-token`: present the agent token.
    AgentToken,
    /// `401 requirement=person-token`: get a person token for this resource and retry.
    PersonToken,
    /// `requirement=auth-token; resource-token="…"`: exchange the resource token for an auth
    /// token at the person server. On `401` (or `402`) the agent retries the request; on
    /// `202` the resource holds the call and the agent completes it at `Location`.
    AuthToken {
        /// The resource token, a JWT the agent checks and sends to its person server.
        resource_token: SecretString,
    },
    /// `202 requirement=interaction; url="…"; code="…"`: a person must act at `url`.
    Interaction {
        /// Where the person goes (`{url}?code={code}`).
        url: Url,
        /// The code the person compares and enters there.
        code: String,
    },
    /// `202 requirement=approval`: someone else approves; the agent only polls.
    Approval,
    /// `202 requirement=clarification`: the body carries a question for the agent.
    Clarification,
}

impl Requirement {
    /// Parses an `AAuth-Requirement` header value.
    pub fn parse(value: &str) -> Result<Self, RequirementError> {
        let dictionary: Dictionary =
            Parser::new(value).parse().map_err(|error| RequirementError::Malformed(error.to_string()))?;
        let Some(member) = dictionary.get("requirement") else {
            return Err(RequirementError::MissingRequirement);
        };
        let ListEntry::Item(item) = member else {
            return Err(RequirementError::NotAToken);
        };
        let BareItem::Token(token) = &item.bare_item else {
            return Err(RequirementError::NotAToken);
        };
        let string_parameter = |name: &'static str| -> Result<String, RequirementError> {
            match item.params.get(name) {
                Some(BareItem::String(text)) => Ok(text.as_str().to_owned()),
                Some(_) => {
                    Err(RequirementError::NotAString { requirement: token.as_str().to_owned(), parameter: name })
                }
                None => {
                    Err(RequirementError::MissingParameter { requirement: token.as_str().to_owned(), parameter: name })
                }
            }
        };
        match token.as_str() {
            "agent-token" => Ok(Self::AgentToken),
            "person-token" => Ok(Self::PersonToken),
            "auth-token" => {
                let resource_token = string_parameter("resource-token")?;
                Ok(Self::AuthToken { resource_token: SecretString::from(resource_token) })
            }
            "interaction" => {
                let url = string_parameter("url")?;
                let url = Url::parse(&url).map_err(|error| RequirementError::InvalidUrl {
                    requirement: token.as_str().to_owned(),
                    reason: error.to_string(),
                })?;
                let code = string_parameter("code")?;
                if code.is_empty() {
                    return Err(RequirementError::MissingParameter {
                        requirement: "interaction".into(),
                        parameter: "code",
                    });
                }
                Ok(Self::Interaction { url, code })
            }
            "approval" => Ok(Self::Approval),
            "clarification" => Ok(Self::Clarification),
            other => Err(RequirementError::Unsupported { value: other.to_owned() }),
        }
    }

    /// The requirement's name as it appears on the wire.
    pub fn name(&self) -> &'static str {
        match self {
            Self::AgentToken => "agent-token",
            Self::PersonToken => "person-token",
            Self::AuthToken { .. } => "auth-token",
            Self::Interaction { .. } => "interaction",
            Self::Approval => "approval",
            Self::Clarification => "clarification",
        }
    }

    /// Whether the draft allows this requirement with this status: the token requirements
    /// come with `401` (and `auth-token` also with `402`, or `202` for deferred delivery);
    /// the pending ones with `202`.
    pub fn allowed_with(&self, status: u16) -> bool {
        match self {
            Self::AgentToken | Self::PersonToken => status == 401,
            Self::AuthToken { .. } => matches!(status, 401 | 402 | 202),
            Self::Interaction { .. } | Self::Approval | Self::Clarification => status == 202,
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why an `AAuth-Requirement` header could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequirementError {
    /// The value is not an RFC 8941 Dictionary.
    #[error("not a structured-field dictionary ({0})")]
    Malformed(String),
    /// The dictionary has no `requirement` member.
    #[error("no `requirement` member")]
    MissingRequirement,
    /// The `requirement` member is not a Token.
    #[error("`requirement` is not a token")]
    NotAToken,
    /// A parameter the requirement needs is absent.
    #[error("`requirement={requirement}` lacks its `{parameter}` parameter")]
    MissingParameter {
        /// The requirement value.
        requirement: String,
        /// The missing parameter.
        parameter: &'static str,
    },
    /// A parameter that must be a String is another kind of item.
    #[error("`requirement={requirement}`: parameter `{parameter}` is not a string")]
    NotAString {
        /// The requirement value.
        requirement: String,
        /// The parameter.
        parameter: &'static str,
    },
    /// The interaction `url` is not an absolute URL.
    #[error("`requirement={requirement}`: `url` is not an absolute URL ({reason})")]
    InvalidUrl {
        /// The requirement value.
        requirement: String,
        /// What the URL parser said.
        reason: String,
    },
    /// A requirement value this client does not implement (`claims`, or an extension).
    #[error("unsupported requirement `{value}`")]
    Unsupported {
        /// The value the server sent.
        value: String,
    },
}

#[cfg(test)]
mod tests {
    use skill_core::ExposeSecret;

    use super::*;

    fn parse(value: &str) -> Result<Requirement, RequirementError> {
        Requirement::parse(value)
    }

    #[test]
    fn token_requirements_without_parameters() {
        assert!(matches!(parse("requirement=agent-token"), Ok(Requirement::AgentToken)));
        assert!(matches!(parse("requirement=person-token"), Ok(Requirement::PersonToken)));
        assert!(matches!(parse("requirement=approval"), Ok(Requirement::Approval)));
        assert!(matches!(parse("requirement=clarification"), Ok(Requirement::Clarification)));
    }

    #[test]
    fn auth_token_carries_the_resource_token() {
        let parsed = parse(r#"requirement=auth-token; resource-token="eyJhbGciOiJFZDI1NTE5In0.e30.c2ln""#).unwrap();
        let Requirement::AuthToken { resource_token } = parsed else { panic!("expected auth-token, got {parsed:?}") };
        assert_eq!(resource_token.expose_secret(), "eyJhbGciOiJFZDI1NTE5In0.e30.c2ln");
    }

    #[test]
    fn interaction_carries_url_and_code_across_folded_whitespace() {
        let parsed = parse(r#"requirement=interaction;url="https://example.com/interact";code="A1B2-C3D4""#).unwrap();
        let Requirement::Interaction { url, code } = parsed else { panic!("expected interaction, got {parsed:?}") };
        assert_eq!(url.as_str(), "https://example.com/interact");
        assert_eq!(code, "A1B2-C3D4");
        // The draft folds the header over lines; a proxy joins them with spaces after `;`.
        let folded = r#"requirement=interaction; url="https://ps.example/interaction"; code="A1B2-C3D4""#;
        assert!(matches!(parse(folded), Ok(Requirement::Interaction { .. })));
    }

    #[test]
    fn unknown_parameters_and_members_are_ignored() {
        assert!(matches!(parse("requirement=person-token; realm=\"x\", other=1"), Ok(Requirement::PersonToken)));
    }

    #[test]
    fn unknown_values_are_typed_errors() {
        assert_eq!(parse("requirement=claims").unwrap_err(), RequirementError::Unsupported { value: "claims".into() });
        assert_eq!(
            parse("requirement=payment-token").unwrap_err(),
            RequirementError::Unsupported { value: "payment-token".into() }
        );
    }

    #[test]
    fn malformed_headers() {
        assert!(matches!(parse("requirement=\"auth-token\""), Err(RequirementError::NotAToken)));
        assert!(matches!(parse("requirement=(a b)"), Err(RequirementError::NotAToken)));
        assert!(matches!(parse("resource-token=\"x\""), Err(RequirementError::MissingRequirement)));
        assert!(matches!(parse("requirement=auth-token, ;;"), Err(RequirementError::Malformed(_))));
        assert_eq!(
            parse("requirement=auth-token").unwrap_err(),
            RequirementError::MissingParameter { requirement: "auth-token".into(), parameter: "resource-token" }
        );
        assert_eq!(
            parse("requirement=auth-token; resource-token=abc").unwrap_err(),
            RequirementError::NotAString { requirement: "auth-token".into(), parameter: "resource-token" }
        );
        assert_eq!(
            parse(r#"requirement=interaction; url="https://ps.example/i""#).unwrap_err(),
            RequirementError::MissingParameter { requirement: "interaction".into(), parameter: "code" }
        );
        assert!(matches!(
            parse(r#"requirement=interaction; url="/relative"; code="A1B2""#),
            Err(RequirementError::InvalidUrl { .. })
        ));
    }

    #[test]
    fn statuses_the_draft_pairs_with_each_requirement() {
        let auth = parse(r#"requirement=auth-token; resource-token="t""#).unwrap();
        assert!(auth.allowed_with(401) && auth.allowed_with(402) && auth.allowed_with(202));
        assert!(!auth.allowed_with(200));
        assert!(Requirement::PersonToken.allowed_with(401) && !Requirement::PersonToken.allowed_with(202));
        assert!(Requirement::Approval.allowed_with(202) && !Requirement::Approval.allowed_with(401));
    }

    #[test]
    fn debug_hides_the_resource_token() {
        let parsed = parse(r#"requirement=auth-token; resource-token="secret.token.value""#).unwrap();
        assert!(!format!("{parsed:?}").contains("secret.token.value"));
    }
}
