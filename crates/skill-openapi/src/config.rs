//! One OpenAPI skill's settings, as the `openapi.<name>` section of the config file holds
//! them, and the credentials they name.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use skill_core::{SecretRef, Secrets};

use crate::call::{ApiKeyLocation, Credential};
use crate::filter::{OperationFilter, OperationMatcher};
use skill_core::redact::url_text as redacted_text;

/// An OpenAPI skill: which document, which of its operations, where to send requests and
/// how to authenticate them.
///
/// Unknown keys are refused, so a typo is reported rather than ignored. Its `Debug` and
/// serialized forms (what `config show` prints) show `spec` (when a URL) and `base_url`
/// redacted: no user info, each query value as `REDACTED`.
#[derive(Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct OpenApiConfig {
    /// The document: a file path or an http(s) URL.
    #[serde(serialize_with = "shown_url")]
    pub spec: String,
    /// The server to call, overriding the document's `servers`.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "shown_optional_url")]
    pub base_url: Option<String>,
    /// Origins besides the skill's server (`base_url`, else the document's first server)
    /// that may receive its credentials and AAuth signatures, for operations or paths with
    /// `servers` of their own (`https://uploads.example.com`). A call to any other origin
    /// that would carry them is refused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub origins: Vec<String>,
    /// The operations to offer, by operationId, `tag:NAME` or path glob (`/repos/**`);
    /// empty offers all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<OperationMatcher>,
    /// The operations to leave out, even when included.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<OperationMatcher>,
    /// Credentials, matched to the document's `securitySchemes`.
    #[serde(default, skip_serializing_if = "AuthConfig::is_empty")]
    pub auth: AuthConfig,
    /// Where the `*_env` names of `auth` get their values, by name; a name missing here is
    /// read from the environment variable of that name (`env:NAME`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: BTreeMap<String, SecretRef>,
    /// The bound on one call, e.g. `30s` or `1m` (default 60 s).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "skill_core::duration::option")]
    pub timeout: Option<std::time::Duration>,
    /// The largest response body kept; longer bodies are cut with a note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_response_bytes: Option<usize>,
    /// The folder binary arguments may name files in (`file:report.pdf`); without it,
    /// binary data is given as base64 only, and no file is ever read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload_folder: Option<String>,
    /// Send this skill's calls through the agent's AAuth client, signed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub aauth: bool,
    /// Whether the tools of a document given by URL are pinned, over `trust.tools`
    /// (`None`: as that says); a document read from a file is the user's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<skill_core::TrustMode>,
}

impl OpenApiConfig {
    /// A skill for the document at `spec` (a file path or an http(s) URL), everything else
    /// at its default.
    pub fn new(spec: impl Into<String>) -> Self {
        OpenApiConfig {
            spec: spec.into(),
            base_url: None,
            origins: Vec::new(),
            include: Vec::new(),
            exclude: Vec::new(),
            auth: AuthConfig::default(),
            secrets: BTreeMap::new(),
            timeout: None,
            max_response_bytes: None,
            upload_folder: None,
            aauth: false,
            trust: None,
        }
    }

    /// Whether `spec` is an http(s) URL, fetched; otherwise it is a file path.
    pub fn spec_is_url(&self) -> bool {
        crate::document::is_http_url(&self.spec)
    }

    /// `spec` as messages show it: a URL redacted, a path as is.
    pub(crate) fn shown_spec(&self) -> String {
        if self.spec_is_url() { redacted_text(&self.spec) } else { self.spec.clone() }
    }

    /// The origins of `origins`, each an http(s) URL with nothing but scheme, host and
    /// port (a trailing `/` aside), so that what is trusted is plain to see.
    pub(crate) fn credential_origins(&self) -> Result<Vec<url::Origin>, String> {
        self.origins
            .iter()
            .map(|text| {
                let refused = |why: &str| format!("origins: `{}` {why}", redacted_text(text));
                let url = url::Url::parse(text).map_err(|error| refused(&format!("is not a URL: {error}")))?;
                if !matches!(url.scheme(), "http" | "https") {
                    return Err(refused("is not http or https"));
                }
                let bare = url.username().is_empty()
                    && url.password().is_none()
                    && url.path() == "/"
                    && url.query().is_none()
                    && url.fragment().is_none();
                if !bare {
                    return Err(refused("is not an origin (write scheme://host, or scheme://host:port)"));
                }
                Ok(url.origin())
            })
            .collect()
    }

    /// The operations that become tools.
    pub fn filter(&self) -> OperationFilter {
        OperationFilter { include: self.include.clone(), exclude: self.exclude.clone() }
    }

    /// Every secret the credentials need, by the name the skill looks it up under: the
    /// host resolves these and hands the values to the skill
    /// ([`Skill::set_secrets`](skill_core::Skill::set_secrets)); the skill requires them all.
    pub fn secret_refs(&self) -> BTreeMap<String, SecretRef> {
        self.auth
            .secrets()
            .map(|(name, setting)| {
                let reference = match setting {
                    SecretSetting::Value(reference) => reference.clone(),
                    SecretSetting::Env(variable) => {
                        self.secrets.get(variable).cloned().unwrap_or_else(|| SecretRef::Env(variable.clone()))
                    }
                };
                (name, reference)
            })
            .collect()
    }

    /// The credentials, with their values taken from `secrets` (resolved from
    /// [`OpenApiConfig::secret_refs`]); one whose secret is missing is left out.
    pub fn credentials(&self, secrets: &Secrets) -> Vec<Credential> {
        let value = |setting: &SecretSetting, field: &str| secrets.get(&setting.name(field)).cloned();
        let mut credentials = Vec::new();
        if let Some(api_key) = &self.auth.api_key
            && let Some(value) = value(&api_key.value, ApiKeyAuth::FIELD)
        {
            credentials.push(Credential::ApiKey { value, name: api_key.name.clone(), location: api_key.location });
        }
        if let Some(bearer) = &self.auth.bearer
            && let Some(token) = value(&bearer.token, BearerAuth::FIELD)
        {
            credentials.push(Credential::Bearer { token });
        }
        if let Some(basic) = &self.auth.basic
            && let Some(password) = value(&basic.password, BasicAuth::FIELD)
        {
            credentials.push(Credential::Basic { username: basic.username.clone(), password });
        }
        credentials
    }
}

impl fmt::Debug for OpenApiConfig {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let OpenApiConfig {
            spec: _,
            base_url,
            origins,
            include,
            exclude,
            auth,
            secrets,
            timeout,
            max_response_bytes,
            upload_folder,
            aauth,
            trust,
        } = self;
        formatter
            .debug_struct("OpenApiConfig")
            .field("spec", &self.shown_spec())
            .field("base_url", &base_url.as_deref().map(redacted_text))
            .field("origins", origins)
            .field("include", include)
            .field("exclude", exclude)
            .field("auth", auth)
            .field("secrets", secrets)
            .field("timeout", timeout)
            .field("max_response_bytes", max_response_bytes)
            .field("upload_folder", upload_folder)
            .field("aauth", aauth)
            .field("trust", trust)
            .finish()
    }
}

/// A URL as it may be shown; a file path as is.
fn shown_url<S: serde::Serializer>(text: &str, serializer: S) -> Result<S::Ok, S::Error> {
    if crate::document::is_http_url(text) {
        serializer.serialize_str(&redacted_text(text))
    } else {
        serializer.serialize_str(text)
    }
}

fn shown_optional_url<S: serde::Serializer>(text: &Option<String>, serializer: S) -> Result<S::Ok, S::Error> {
    match text {
        Some(text) => shown_url(text, serializer),
        None => serializer.serialize_none(),
    }
}

/// The `auth` section: at most one credential of each kind.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AuthConfig {
    /// An API key in a header, query parameter or cookie.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<ApiKeyAuth>,
    /// A bearer token (`Authorization: Bearer …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer: Option<BearerAuth>,
    /// HTTP basic authentication.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basic: Option<BasicAuth>,
}

impl AuthConfig {
    fn is_empty(&self) -> bool {
        self.api_key.is_none() && self.bearer.is_none() && self.basic.is_none()
    }

    /// Each credential's secret, by the name the skill looks it up under.
    fn secrets(&self) -> impl Iterator<Item = (String, &SecretSetting)> {
        let api_key = self.api_key.iter().map(|auth| (&auth.value, ApiKeyAuth::FIELD));
        let bearer = self.bearer.iter().map(|auth| (&auth.token, BearerAuth::FIELD));
        let basic = self.basic.iter().map(|auth| (&auth.password, BasicAuth::FIELD));
        api_key.chain(bearer).chain(basic).map(|(setting, field)| (setting.name(field), setting))
    }
}

/// Where a credential's secret comes from: written in the config (a secret reference:
/// `env:`, `file:`, `op://` or a literal), or named by a `*_env` field.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SecretSetting {
    /// A secret reference written in the config (`token: op://Private/Petstore/token`).
    Value(SecretRef),
    /// The name of a secret (`token_env: PETSTORE_TOKEN`): the skill's `secrets` entry of
    /// that name, else the environment variable.
    Env(String),
}

impl SecretSetting {
    /// The name the skill looks the value up under: the variable's for `*_env`, else
    /// `auth.{field}`, which no environment variable can be called.
    fn name(&self, field: &str) -> String {
        match self {
            SecretSetting::Env(variable) => variable.clone(),
            SecretSetting::Value(_) => format!("auth.{field}"),
        }
    }

    /// Exactly one of `{field}` and `{field}_env` must be set.
    fn from_fields(section: &str, field: &str, value: Option<SecretRef>, env: Option<String>) -> Result<Self, String> {
        match (value, env) {
            (Some(value), None) => Ok(SecretSetting::Value(value)),
            (None, Some(variable)) if !variable.is_empty() => Ok(SecretSetting::Env(variable)),
            (None, Some(_)) => Err(format!("auth.{section}.{field}_env is empty")),
            (Some(_), Some(_)) => Err(format!("auth.{section}: set `{field}` or `{field}_env`, not both")),
            (None, None) => Err(format!("auth.{section}: set `{field}` (a secret reference) or `{field}_env`")),
        }
    }

    /// The setting as the two fields it is written with.
    fn into_fields(self) -> (Option<SecretRef>, Option<String>) {
        match self {
            SecretSetting::Value(value) => (Some(value), None),
            SecretSetting::Env(variable) => (None, Some(variable)),
        }
    }
}

/// `auth.api_key`: the key and, when the document's `securitySchemes` do not say it
/// (or say it more than once), where it goes.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(try_from = "ApiKeyFields", into = "ApiKeyFields")]
#[non_exhaustive]
pub struct ApiKeyAuth {
    /// The header, query parameter or cookie name.
    pub name: Option<String>,
    /// Where the key goes.
    pub location: Option<ApiKeyLocation>,
    /// The key.
    pub value: SecretSetting,
}

impl ApiKeyAuth {
    const FIELD: &str = "api_key";
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct ApiKeyFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, rename = "in", skip_serializing_if = "Option::is_none")]
    location: Option<ApiKeyLocation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    api_key: Option<SecretRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    api_key_env: Option<String>,
}

impl TryFrom<ApiKeyFields> for ApiKeyAuth {
    type Error = String;

    fn try_from(fields: ApiKeyFields) -> Result<Self, String> {
        let value = SecretSetting::from_fields("api_key", ApiKeyAuth::FIELD, fields.api_key, fields.api_key_env)?;
        Ok(ApiKeyAuth { name: fields.name, location: fields.location, value })
    }
}

impl From<ApiKeyAuth> for ApiKeyFields {
    fn from(auth: ApiKeyAuth) -> Self {
        let (api_key, api_key_env) = auth.value.into_fields();
        ApiKeyFields { name: auth.name, location: auth.location, api_key, api_key_env }
    }
}

/// `auth.bearer`: a token sent as `Authorization: Bearer …`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(try_from = "BearerFields", into = "BearerFields")]
#[non_exhaustive]
pub struct BearerAuth {
    /// The token.
    pub token: SecretSetting,
}

impl BearerAuth {
    const FIELD: &str = "token";
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct BearerFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token: Option<SecretRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token_env: Option<String>,
}

impl TryFrom<BearerFields> for BearerAuth {
    type Error = String;

    fn try_from(fields: BearerFields) -> Result<Self, String> {
        Ok(BearerAuth {
            token: SecretSetting::from_fields("bearer", BearerAuth::FIELD, fields.token, fields.token_env)?,
        })
    }
}

impl From<BearerAuth> for BearerFields {
    fn from(auth: BearerAuth) -> Self {
        let (token, token_env) = auth.token.into_fields();
        BearerFields { token, token_env }
    }
}

/// `auth.basic`: a user name and password.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(try_from = "BasicFields", into = "BasicFields")]
#[non_exhaustive]
pub struct BasicAuth {
    /// The user name.
    pub username: String,
    /// The password.
    pub password: SecretSetting,
}

impl BasicAuth {
    const FIELD: &str = "password";
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct BasicFields {
    username: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    password: Option<SecretRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    password_env: Option<String>,
}

impl TryFrom<BasicFields> for BasicAuth {
    type Error = String;

    fn try_from(fields: BasicFields) -> Result<Self, String> {
        let password = SecretSetting::from_fields("basic", BasicAuth::FIELD, fields.password, fields.password_env)?;
        Ok(BasicAuth { username: fields.username, password })
    }
}

impl From<BasicAuth> for BasicFields {
    fn from(auth: BasicAuth) -> Self {
        let (password, password_env) = auth.password.into_fields();
        BasicFields { username: auth.username, password, password_env }
    }
}

#[cfg(test)]
mod tests {
    use skill_core::{ExposeSecret, SecretString};

    use super::*;

    fn parse(text: &str) -> Result<OpenApiConfig, String> {
        serde_yaml_ng::from_str(text).map_err(|error| error.to_string())
    }

    #[test]
    fn debug_output_shows_urls_redacted_and_paths_as_they_are() {
        let mut config = OpenApiConfig::new("https://user:pw@host/spec.json?key=s3cret");
        config.base_url = Some("https://api:pw@host/v1?token=s3cret".to_owned());
        let debug = format!("{config:?}");
        assert!(!debug.contains("pw") && !debug.contains("s3cret"), "{debug}");
        assert!(debug.contains(r#"spec: "https://host/spec.json?key=REDACTED""#), "{debug}");
        assert!(debug.contains(r#"base_url: Some("https://host/v1?token=REDACTED")"#), "{debug}");
        let debug = format!("{:?}", OpenApiConfig::new("specs/a?b.yaml"));
        assert!(debug.contains(r#"spec: "specs/a?b.yaml""#), "{debug}");
    }

    #[test]
    fn a_full_section_reads_and_writes_back_the_same() {
        let text = "spec: ./petstore.yaml\nbase_url: http://127.0.0.1:4010\ninclude: [tag:pets, /store/**]\n\
                    exclude: [deletePet]\nauth:\n  api_key: {name: X-Key, in: header, api_key_env: PET_KEY}\n  \
                    bearer: {token: 'op://Private/Petstore/token'}\n  basic: {username: ada, password_env: PET_PASSWORD}\n\
                    secrets: {PET_KEY: 'file:/run/secrets/pet'}\ntimeout: 30s\nmax_response_bytes: 4096\n\
                    upload_folder: ~/uploads\naauth: true\n";
        let config = parse(text).unwrap();
        assert_eq!(
            config.filter().include,
            [OperationMatcher::Tag("pets".into()), OperationMatcher::Path("/store/**".into())]
        );
        assert_eq!(config.timeout, Some(std::time::Duration::from_secs(30)));
        let written = serde_yaml_ng::to_string(&config).unwrap();
        let round_trip = parse(&written).unwrap();
        assert_eq!(serde_yaml_ng::to_string(&round_trip).unwrap(), written);
        assert_eq!(
            serde_yaml_ng::from_str::<serde_json::Value>(&written).unwrap(),
            serde_yaml_ng::from_str::<serde_json::Value>(text).unwrap()
        );
    }

    #[test]
    fn urls_are_written_without_their_credentials() {
        let config =
            parse("spec: 'https://user:pw@host/spec.json?key=s3cret'\nbase_url: 'https://api:pw2@host/v1?t=t0k'\n")
                .unwrap();
        let written = serde_yaml_ng::to_string(&config).unwrap();
        for secret in ["pw", "s3cret", "t0k"] {
            assert!(!written.contains(secret), "{written}");
        }
        assert!(written.contains("https://host/spec.json?key=REDACTED"), "{written}");
        let path = parse("spec: './specs/a#1?.yaml'\n").unwrap();
        assert!(serde_yaml_ng::to_string(&path).unwrap().contains("./specs/a#1?.yaml"));
    }

    #[test]
    fn secrets_are_named_by_their_variable_or_their_field() {
        let config = parse(
            "spec: a.yaml\nauth:\n  api_key: {api_key_env: PET_KEY}\n  bearer: {token: 'env:TOKEN'}\n  \
             basic: {username: ada, password_env: PET_PASSWORD}\nsecrets: {PET_KEY: 'file:/run/secrets/pet'}\n",
        )
        .unwrap();
        let refs: Vec<(String, String)> =
            config.secret_refs().into_iter().map(|(name, reference)| (name, reference.to_string())).collect();
        assert_eq!(
            refs,
            [
                ("PET_KEY".to_owned(), "file:/run/secrets/pet".to_owned()),
                ("PET_PASSWORD".to_owned(), "env:PET_PASSWORD".to_owned()),
                ("auth.token".to_owned(), "env:TOKEN".to_owned()),
            ]
        );

        let mut secrets = Secrets::new();
        secrets.insert("PET_KEY", SecretString::from("k"));
        secrets.insert("auth.token", SecretString::from("t"));
        let credentials = config.credentials(&secrets);
        assert_eq!(credentials.len(), 2, "basic's password is missing, so basic is left out");
        assert!(matches!(&credentials[0], Credential::ApiKey { value, .. } if value.expose_secret() == "k"));
        assert!(matches!(&credentials[1], Credential::Bearer { token } if token.expose_secret() == "t"));
    }

    #[test]
    fn bad_sections_name_the_field() {
        let error = parse("spec: a.yaml\nauth: {bearer: {}}\n").unwrap_err();
        assert!(error.contains("auth.bearer: set `token` (a secret reference) or `token_env`"), "{error}");
        let error = parse("spec: a.yaml\nauth: {bearer: {token: 'env:A', token_env: A}}\n").unwrap_err();
        assert!(error.contains("set `token` or `token_env`, not both"), "{error}");
        let error = parse("spec: a.yaml\nauth: {api_key: {api_key_env: A, in: body}}\n").unwrap_err();
        assert!(error.contains("unknown variant `body`"), "{error}");
        let error = parse("spec: a.yaml\nbase_ur: http://x\n").unwrap_err();
        assert!(error.contains("unknown field `base_ur`"), "{error}");
        let error = parse("base_url: http://x\n").unwrap_err();
        assert!(error.contains("missing field `spec`"), "{error}");
    }
}
