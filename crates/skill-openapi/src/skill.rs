//! [`OpenApiSkill`]: a document's operations as an agent's tools; `pinned` the tools of
//! a URL document offered from the trust lock before it is fetched.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use reqwest_middleware::ClientWithMiddleware;
use serde_json::Value;
use skill_core::trust::Recorded;
use skill_core::{
    BoxError, Icon, Secrets, Skill, SkillHandle, SourceKind, Tool, ToolAnnotations, ToolContext, ToolError, ToolOutput,
    drop_off_runtime, off_runtime,
};

use crate::call::{Endpoint, default_client};
use crate::config::OpenApiConfig;
use crate::document::Document;
use crate::fetch::LoadOptions;
use crate::operation::{Method, OperationTool};

mod pinned;

/// An OpenAPI document as a skill (source kind `openapi`): `init` loads the document
/// (a file, or a URL fetched, under the [`LoadOptions`]' rules), makes one tool per operation
/// the config's filter keeps, and settles the server URL and credentials; each tool call
/// is one HTTP request through the skill's client.
///
/// The credentials' secrets come from the agent ([`Skill::set_secrets`]), under the names
/// [`OpenApiConfig::secret_refs`] gives; the skill requires them all, so an agent without
/// one skips the skill rather than calling unauthenticated.
pub struct OpenApiSkill {
    name: String,
    config: OpenApiConfig,
    load_options: LoadOptions,
    client: Option<ClientWithMiddleware>,
    secrets: Secrets,
    description: String,
    /// The document's tools, once loaded.
    tools: Vec<Arc<OperationCall>>,
    /// The tools offered from the lock instead, until the document is fetched.
    stand_ins: Vec<Arc<dyn Tool>>,
    /// The skill's handle on its agent, through which the document's own tools replace
    /// those offered from the lock.
    handle: Option<SkillHandle>,
    /// The tools pinned in the trust lock, which `init` offers without fetching the
    /// document.
    pinned: Option<Recorded>,
}

impl std::fmt::Debug for OpenApiSkill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenApiSkill")
            .field("name", &self.name)
            .field("config", &self.config)
            .field("secrets", &self.secrets)
            .field("tools", &self.tools)
            .field("stand_ins", &self.stand_ins.len())
            .finish_non_exhaustive()
    }
}

impl OpenApiSkill {
    /// The skill `name` for the document and settings of `config`.
    pub fn new(name: impl Into<String>, config: OpenApiConfig) -> Self {
        let name = name.into();
        let description = format!("Operations of the OpenAPI document {}", config.shown_spec());
        OpenApiSkill {
            name,
            config,
            load_options: LoadOptions::default(),
            client: None,
            secrets: Secrets::new(),
            description,
            tools: Vec::new(),
            stand_ins: Vec::new(),
            handle: None,
            pinned: None,
        }
    }

    /// Offers `recorded`'s tools, the document's as the trust lock holds them, from
    /// `init` on without fetching the document: it is fetched at the first call of one of
    /// them, its own tools then replace these (the agent's trust compares them with the
    /// lock), and a call of a tool whose definition changed is refused as withheld.
    #[must_use]
    pub fn with_pinned(mut self, recorded: Recorded) -> Self {
        self.pinned = Some(recorded);
        self
    }

    /// Sends the calls through `client` (for instance one that signs every request)
    /// instead of a plain one.
    pub fn with_client(mut self, client: ClientWithMiddleware) -> Self {
        self.client = Some(client);
        self
    }

    /// Loads the document (and the documents it refers to) under `options`' rules, such
    /// as their limits and the private paths a file spec may not reference, instead of the
    /// defaults. Its private paths are never sent from the upload folder either
    /// ([`Endpoint::with_private_paths`]).
    pub fn with_load_options(mut self, options: LoadOptions) -> Self {
        self.load_options = options;
        self
    }
}

#[async_trait]
impl Skill for OpenApiSkill {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn source_type(&self) -> SourceKind {
        SourceKind::Openapi
    }

    fn set_agent(&mut self, handle: SkillHandle) {
        self.handle = Some(handle);
    }

    fn set_secrets(&mut self, secrets: Secrets) {
        self.secrets = secrets;
    }

    fn required_secrets(&self) -> Vec<String> {
        self.config.secret_refs().into_keys().collect()
    }

    async fn init(&mut self) -> Result<(), BoxError> {
        if self.config.aauth && self.client.is_none() {
            // A skill that must call as an AAuth agent never sends an unsigned request.
            return Err("`aauth: true`, but no AAuth client was given to sign its calls".into());
        }
        self.config.credential_origins().map_err(|error| format!("openapi.{}.{error}", self.name))?;
        let loader = Loader {
            name: self.name.clone(),
            config: self.config.clone(),
            load_options: self.load_options.clone(),
            client: self.client.clone(),
            secrets: self.secrets.clone(),
        };
        if let Some(recorded) = self.pinned.take() {
            self.stand_ins = pinned::stand_ins(recorded, loader, self.handle.clone());
            return Ok(());
        }
        let loaded = loader.load().await?;
        if let Some(title) = loaded.title {
            self.description = title;
        }
        self.tools = loaded.tools;
        Ok(())
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let tools = self.tools.iter().map(|tool| Arc::clone(tool) as Arc<dyn Tool>);
        tools.chain(self.stand_ins.iter().cloned()).collect()
    }
}

/// What loading the document takes: the skill's settings, kept by the tools offered
/// from the lock for their first call.
#[derive(Clone)]
struct Loader {
    name: String,
    config: OpenApiConfig,
    load_options: LoadOptions,
    client: Option<ClientWithMiddleware>,
    secrets: Secrets,
}

/// What a loaded document gives: its title and one tool per operation.
struct Loaded {
    title: Option<String>,
    tools: Vec<Arc<OperationCall>>,
}

impl Loader {
    /// Loads the document (fetching a URL's), makes one tool per operation the config's
    /// filter keeps, and settles the server URL and credentials.
    async fn load(&self) -> Result<Loaded, BoxError> {
        let origins = self.config.credential_origins().map_err(|error| format!("openapi.{}.{error}", self.name))?;
        let document = Document::load(&self.config.spec, &self.load_options).await?;
        let title = document.root().pointer("/info/title").and_then(Value::as_str).map(str::to_owned);
        let icons: Arc<[Icon]> = document.logo().into_iter().collect();
        // Resolving refs may read the spec's files, and a large spec makes many tools
        // (GitHub's 1223): off the runtime.
        let (base_url, credentials, filter) =
            (self.config.base_url.clone(), self.config.credentials(&self.secrets), self.config.filter());
        let (document, built) = off_runtime(move || {
            let built = Endpoint::new(&document, base_url.as_deref(), credentials)
                .and_then(|endpoint| Ok((endpoint, document.tools(&filter)?)));
            (document, built)
        })
        .await?;
        // Freeing a large document takes milliseconds (GitHub's: 4 ms) that the tools do
        // not wait for.
        drop_off_runtime(document);
        let (mut endpoint, tool_set) = built?;
        if let Some(timeout) = self.config.timeout {
            endpoint = endpoint.with_timeout(timeout);
        }
        if let Some(limit) = self.config.max_response_bytes {
            endpoint = endpoint.with_max_response_bytes(limit);
        }
        endpoint = endpoint.with_settings(format!("openapi.{}", self.name)).with_credential_origins(origins);
        if let Some(no_server) = endpoint.no_server() {
            tracing::warn!("openapi skill {}: {no_server}", self.name);
        }
        if self.config.aauth {
            endpoint = endpoint.with_signing_client();
        }
        if let Some(folder) = &self.config.upload_folder {
            endpoint = endpoint.with_upload_folder(folder);
        }
        endpoint = endpoint.with_private_paths(self.load_options.private_paths());
        for skipped in &tool_set.skipped {
            let method = skipped.method.as_ref().map_or_else(String::new, |method| format!("{method} "));
            tracing::warn!("openapi skill {}: {method}{} left out: {}", self.name, skipped.path, skipped.error);
        }
        let endpoint = Arc::new(endpoint);
        // The default client is made by the first call: listing tools needs none, and
        // making one reads the system's trust roots.
        let client = Arc::new(OnceLock::new());
        if let Some(given) = &self.client {
            let _ = client.set(given.clone());
        }
        let tools = tool_set
            .tools
            .into_iter()
            .map(|mut operation| {
                if self.config.upload_folder.is_some() {
                    operation.add_file_argument_help();
                }
                for warning in &operation.warnings {
                    tracing::warn!("openapi skill {}: tool {}: {warning}", self.name, operation.name);
                }
                let (endpoint, client, icons) = (Arc::clone(&endpoint), Arc::clone(&client), Arc::clone(&icons));
                Arc::new(OperationCall { operation, endpoint, client, icons })
            })
            .collect();
        Ok(Loaded { title, tools })
    }
}

/// One operation's tool: its call is one request to the skill's server.
#[derive(Debug)]
struct OperationCall {
    operation: OperationTool,
    endpoint: Arc<Endpoint>,
    /// The skill's client, shared by its tools.
    client: Arc<OnceLock<ClientWithMiddleware>>,
    /// The document's logo, shared by its tools.
    icons: Arc<[Icon]>,
}

#[async_trait]
impl Tool for OperationCall {
    fn name(&self) -> &str {
        &self.operation.name
    }

    fn description(&self) -> &str {
        &self.operation.description
    }

    fn input_schema(&self) -> &Value {
        &self.operation.input_schema
    }

    fn annotations(&self) -> ToolAnnotations {
        method_annotations(&self.operation.method)
    }

    fn icons(&self) -> &[Icon] {
        &self.icons
    }

    async fn call(&self, _context: &ToolContext, arguments: Value) -> Result<ToolOutput, ToolError> {
        self.endpoint.call(self.client.get_or_init(default_client), &self.operation, &arguments).await
    }
}

/// What the HTTP method says of an operation (RFC 9110, sections 9.2.1 and 9.2.2): the
/// safe methods (and QUERY) only read, PUT and DELETE may be repeated, DELETE destroys. Of
/// a method it does not know (an `additionalOperations` key), the tool says only that it
/// may write: whether it destroys or may be repeated is left unsaid. Every operation
/// reaches a server outside the agent.
fn method_annotations(method: &Method) -> ToolAnnotations {
    let read_only = method.is_safe();
    let known = !matches!(method, Method::Other(_));
    ToolAnnotations {
        read_only_hint: Some(read_only),
        destructive_hint: (!read_only && known).then_some(*method == Method::Delete),
        idempotent_hint: (read_only || known).then_some(method.is_idempotent()),
        open_world_hint: Some(true),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::call::{BINARY_ARGUMENT_HELP, FILE_ARGUMENT_HELP};

    #[test]
    fn methods_give_their_hints() {
        let check = |method: Method, (read_only, destructive, idempotent): (bool, Option<bool>, Option<bool>)| {
            let hints = method_annotations(&method);
            assert_eq!(
                (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint),
                (Some(read_only), destructive, idempotent, Some(true)),
                "{method}"
            );
        };
        check(Method::Get, (true, None, Some(true)));
        check(Method::Head, (true, None, Some(true)));
        check(Method::Query, (true, None, Some(true)));
        check(Method::Post, (false, Some(false), Some(false)));
        check(Method::Put, (false, Some(false), Some(true)));
        check(Method::Patch, (false, Some(false), Some(false)));
        check(Method::Delete, (false, Some(true), Some(true)));
        check(Method::Other("PURGE".into()), (false, None, None));
    }

    /// The `body` description of the skill's one tool, with and without an upload folder.
    async fn body_description(upload_folder: Option<&str>) -> String {
        let folder = tempfile::tempdir().unwrap();
        let spec = folder.path().join("spec.json");
        let document = json!({
            "openapi": "3.1.0",
            "paths": {"/photo": {"put": {"operationId": "putPhoto", "requestBody": {"content": {"image/png": {}}}}}}
        });
        std::fs::write(&spec, document.to_string()).unwrap();
        let mut config = OpenApiConfig::new(spec.to_str().unwrap());
        config.base_url = Some("http://127.0.0.1:9".to_owned());
        config.upload_folder = upload_folder.map(str::to_owned);
        let mut skill = OpenApiSkill::new("photos", config);
        skill.init().await.unwrap();
        let tools = skill.tools();
        tools[0].input_schema()["properties"]["body"]["description"].as_str().unwrap().to_owned()
    }

    #[tokio::test]
    async fn the_load_options_private_paths_are_never_uploaded() {
        // The upload folder is the agent's home, which holds its config file too.
        let home = tempfile::tempdir().unwrap();
        let spec = home.path().join("spec.json");
        let document = json!({
            "openapi": "3.1.0",
            "paths": {"/photo": {"put": {"operationId": "putPhoto", "requestBody": {"content": {"image/png": {}}}}}}
        });
        std::fs::write(&spec, document.to_string()).unwrap();
        std::fs::write(home.path().join("config.yaml"), "token: 1").unwrap();
        let mut config = OpenApiConfig::new(spec.to_str().unwrap());
        config.base_url = Some("http://127.0.0.1:9".to_owned());
        config.upload_folder = Some(home.path().to_str().unwrap().to_owned());
        let options = LoadOptions::new().with_private_path(home.path().join("config.yaml"));
        let mut skill = OpenApiSkill::new("photos", config).with_load_options(options);
        skill.init().await.unwrap();
        let tool = &skill.tools()[0];
        let source = skill_core::ToolSource {
            kind: SourceKind::Openapi,
            skill: "photos".to_owned(),
            tool: tool.name().to_owned(),
        };
        let error = tool
            .call(&ToolContext::new("photos__putPhoto", source), json!({"body": "file:config.yaml"}))
            .await
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid arguments for `putPhoto`: /body: cannot read `config.yaml`: it is private to the agent \
             (its configuration, keys or tokens)"
        );
    }

    #[tokio::test]
    async fn tools_offer_files_only_when_the_skill_has_an_upload_folder() {
        assert_eq!(body_description(None).await, BINARY_ARGUMENT_HELP);
        assert_eq!(
            body_description(Some("/srv/uploads")).await,
            format!("{BINARY_ARGUMENT_HELP} {FILE_ARGUMENT_HELP}")
        );
    }
}
