//! The crate's error type: one enum, each variant naming the step that failed and the
//! file, URL or header it concerns, so the message can go to the user unchanged. Key
//! material and tokens never appear in a message.

use std::path::PathBuf;

use url::Url;

use crate::jwt::TokenKind;
use crate::metadata::Role;
use crate::requirement::RequirementError;

/// Why an AAuth step failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A JWK given to [`AgentKey::from_jwk`](crate::AgentKey::from_jwk) is not an Ed25519
    /// private key (`kty` `OKP`, `crv` `Ed25519`, `d` and, when present, a matching `x`)
    /// nor a P-256 one (`kty` `EC`, `crv` `P-256`, `d`, and matching `x` and `y`).
    #[error("agent key: the JWK is not an Ed25519 or P-256 private key: {reason}")]
    InvalidJwk {
        /// What is wrong with it; never the key material itself.
        reason: String,
    },
    /// The agent key file exists but does not hold an Ed25519 private JWK.
    #[error("agent key {}: {reason}", path.display())]
    InvalidKeyFile {
        /// The key file.
        path: PathBuf,
        /// What is wrong with it; never the key material itself.
        reason: String,
    },
    /// The agent key file can be read by its group or by others.
    #[error(
        "agent key {}: readable by group or others (mode {mode:o}); run `chmod 600 {}` or remove the file",
        path.display(),
        path.display()
    )]
    KeyFilePermissions {
        /// The key file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The agent key file, or its folder, could not be read or written.
    #[error("agent key {}: cannot {action}: {error}", path.display())]
    KeyFileIo {
        /// The file or folder.
        path: PathBuf,
        /// What was being done: `read`, `create the folder`, `write`, ….
        action: &'static str,
        /// The operating system's error, shown in the message (not a `source`).
        error: std::io::Error,
    },
    /// The request body is a stream: signing needs the body in memory for `Content-Digest`
    /// (and the request may have to be sent again after a token round).
    #[error("cannot sign {method} {url}: its body is a stream; AAuth signs and retries only bodies held in memory")]
    StreamingBody {
        /// The request method.
        method: String,
        /// The request URL, without query or fragment.
        url: String,
    },
    /// The request has a body but no `Content-Type`, which AAuth signatures cover.
    #[error("cannot sign {method} {url}: it has a body but no Content-Type header")]
    BodyWithoutContentType {
        /// The request method.
        method: String,
        /// The request URL, without query or fragment.
        url: String,
    },
    /// A token for `Signature-Key: sig=jwt;jwt="…"` holds characters a structured-field
    /// string cannot carry (a JWT has only base64url characters and dots).
    #[error("cannot sign {method} {url}: the token for Signature-Key is not a valid structured-field string")]
    InvalidToken {
        /// The request method.
        method: String,
        /// The request URL, without query or fragment.
        url: String,
    },
    /// The signature base could not be built: a covered header is missing or not visible
    /// ASCII, a component is unknown or repeated, or the signature parameters are malformed.
    #[error("cannot build the signature base of {method} {url}: {reason}")]
    SignatureBase {
        /// The request method.
        method: String,
        /// The request URL, without query or fragment.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// A configured or advertised server is not a server identifier: `https://host`, no
    /// port, path, query or fragment (`allow_http_loopback` admits `http` and a port on
    /// `127.0.0.1` and `[::1]`).
    #[error("{role} `{url}` is not a valid server identifier: {reason}")]
    InvalidServerIdentifier {
        /// Which server.
        role: Role,
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An endpoint in a metadata document is not an `https` URL without query or fragment.
    #[error("{role} metadata: `{field}` `{value}` is not a valid endpoint: {reason}")]
    InvalidEndpoint {
        /// Which server's metadata.
        role: Role,
        /// The metadata member.
        field: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A metadata document has no `issuer` (the draft's `issuer_missing`).
    #[error("{url}: the metadata document has no `issuer` (issuer_missing)")]
    IssuerMissing {
        /// The document's URL.
        url: String,
    },
    /// A metadata document's `issuer` is not the identifier it was fetched from (the
    /// draft's `issuer_mismatch`).
    #[error("{url}: the metadata `issuer` `{issuer}` is not the server it was fetched from (issuer_mismatch)")]
    IssuerMismatch {
        /// The document's URL.
        url: String,
        /// The `issuer` it names.
        issuer: String,
    },
    /// A request could not be sent, or its answer not read.
    #[error("{step}: request to {url} failed")]
    Http {
        /// The step.
        step: Step,
        /// The URL requested.
        url: String,
        /// The transport's error.
        source: reqwest_middleware::Error,
    },
    /// A server answered with a status the step cannot go on with.
    #[error(
        "{step}: {url} answered {status}{}{}",
        .error.as_deref().map(|error| format!(" ({error})")).unwrap_or_default(),
        .detail.as_deref().map(|detail| format!(": {detail}")).unwrap_or_default()
    )]
    HttpStatus {
        /// The step.
        step: Step,
        /// The URL requested.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The problem details' `error` code, when the body had one.
        error: Option<String>,
        /// The problem details' `detail`, when the body had one.
        detail: Option<String>,
    },
    /// A server's answer to one of the client's own exchanges (metadata, enrollment, a
    /// token request, a pending answer it reads) is larger than the client reads.
    #[error("{step}: {url} answered with more than {limit} bytes")]
    ResponseTooLarge {
        /// The step.
        step: Step,
        /// The URL requested.
        url: String,
        /// The most the client reads, in bytes.
        limit: usize,
    },
    /// A server's answer is not what the step expects (not JSON, a member missing, …).
    #[error("{step}: {url}: {reason}")]
    InvalidResponse {
        /// The step.
        step: Step,
        /// The URL requested.
        url: String,
        /// What is wrong with the answer.
        reason: String,
    },
    /// A token is not a compact JWT with a JSON header and claims.
    #[error("{token}: {reason}")]
    MalformedToken {
        /// Which token.
        token: TokenKind,
        /// What is wrong with it; never the token itself.
        reason: String,
    },
    /// A token's `typ` is not the one expected (a person token is never an auth token).
    #[error("{token}: `typ` is `{found}`, expected `{}`", .token.typ())]
    TokenType {
        /// The token expected.
        token: TokenKind,
        /// The `typ` it has.
        found: String,
    },
    /// A token claim the agent checks is missing or wrong: `cnf` not our key, a resource
    /// token's `agent_jkt` not our thumbprint, `iss`, `aud`, `ps` or `sub` not the server
    /// or person expected.
    #[error("{token}: claim `{claim}` {reason}")]
    TokenClaim {
        /// Which token.
        token: TokenKind,
        /// The claim.
        claim: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A token has expired.
    #[error("{token} expired (exp {exp})")]
    TokenExpired {
        /// Which token.
        token: TokenKind,
        /// Its `exp` (Unix seconds).
        exp: u64,
    },
    /// An `AAuth-Requirement` header cannot be used: malformed, or a requirement this
    /// client does not implement.
    #[error("{url}: AAuth-Requirement: {problem}")]
    Requirement {
        /// The URL that answered.
        url: String,
        /// What is wrong.
        problem: RequirementError,
    },
    /// A requirement came with a status the draft does not pair it with.
    #[error("{url}: `requirement={requirement}` came with status {status}")]
    RequirementStatus {
        /// The URL that answered.
        url: String,
        /// The requirement.
        requirement: &'static str,
        /// The status.
        status: u16,
    },
    /// The server asked again for what the agent had just presented.
    #[error("{url}: asked again for `requirement={requirement}` right after the agent presented it")]
    RequirementNotMet {
        /// The URL that answered.
        url: String,
        /// The requirement.
        requirement: &'static str,
    },
    /// More requirement rounds than allowed for one request.
    #[error("{url}: more than {rounds} AAuth requirement rounds for one request (the last asked for `{last}`)")]
    TooManyRounds {
        /// The request URL.
        url: String,
        /// The limit.
        rounds: usize,
        /// The last requirement.
        last: &'static str,
    },
    /// A resource asks for a person or auth token, and the agent has no person server.
    #[error(
        "{url}: `requirement={requirement}` needs a person server, and the agent has none (no `ps` claim in its agent token and no `person_server` configured)"
    )]
    NoPersonServer {
        /// The request URL.
        url: String,
        /// The requirement.
        requirement: &'static str,
    },
    /// A `202` pending response has no `Location`, or one on another origin.
    #[error("{url}: a 202 pending response without a usable Location: {reason}")]
    PendingLocation {
        /// The URL that answered.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// An interaction URL is not `https`, or has a query or fragment.
    #[error("{url}: interaction URL `{interaction_url}` is not usable: {reason}")]
    InvalidInteractionUrl {
        /// The URL that answered.
        url: String,
        /// The interaction URL.
        interaction_url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A person must act, and no `on_interaction` callback is set to tell them.
    #[error(
        "{url}: a person must go to {interaction_url} and enter code {code}, but no on_interaction callback is set"
    )]
    InteractionUnhandled {
        /// The URL that answered.
        url: String,
        /// Where the person must go.
        interaction_url: String,
        /// The code they enter there.
        code: String,
    },
    /// Polling ended with `403`: the person or approver denied the request (`denied`), or
    /// left the interaction unfinished (`abandoned`).
    #[error(
        "{url}: the request was refused ({error}){}",
        .detail.as_deref().map(|detail| format!(": {detail}")).unwrap_or_default()
    )]
    Denied {
        /// The pending URL.
        url: String,
        /// The problem details' `error`: `denied`, `abandoned`, or what the server sent.
        error: String,
        /// The problem details' `detail`.
        detail: Option<String>,
    },
    /// Polling ended with `408`: the pending request expired; a fresh request may work.
    #[error(
        "{url}: the pending request expired{}",
        .detail.as_deref().map(|detail| format!(": {detail}")).unwrap_or_default()
    )]
    Expired {
        /// The pending URL.
        url: String,
        /// The problem details' `detail`.
        detail: Option<String>,
    },
    /// Polling ended with `410`: the pending request is gone (finished, withdrawn, or an
    /// invalid code); it must not be retried.
    #[error(
        "{url}: the pending request is gone{}",
        .detail.as_deref().map(|detail| format!(": {detail}")).unwrap_or_default()
    )]
    Gone {
        /// The pending URL.
        url: String,
        /// The problem details' `detail`.
        detail: Option<String>,
    },
    /// Polling ended with `403 revoked`: a token the pending request depends on was
    /// revoked (its `detail` says which); a new request starts over with fresh tokens.
    #[error(
        "{url}: a token the pending request depends on was revoked (revoked){}",
        .detail.as_deref().map(|detail| format!(": {detail}")).unwrap_or_default()
    )]
    Revoked {
        /// The pending URL.
        url: String,
        /// The problem details' `detail`.
        detail: Option<String>,
    },
    /// A server refused the signature with `Signature-Error: clock_skew` again after the
    /// agent signed with the server's own time (from its `Date`): the `iat` of a token is
    /// ahead of the server's clock, which a fresh token from the same issuer would repeat.
    #[error(
        "{url}: the server's clock disagrees with the signature's `created` or a token's `iat` (clock_skew){}; check the clocks of this machine and of the token issuers",
        .skew.map(|skew| format!(", this machine is {skew} s ahead of it")).unwrap_or_default()
    )]
    ClockSkew {
        /// The URL that answered.
        url: String,
        /// How far this machine's clock is ahead of the server's, from its `Date` (seconds).
        skew: Option<u64>,
    },
    /// The person server could not reach the resource's access server (`502
    /// as_unreachable`), again after the agent waited and called the resource anew.
    #[error(
        "{url}: the person server could not reach the resource's access server (as_unreachable){}",
        .detail.as_deref().map(|detail| format!(": {detail}")).unwrap_or_default()
    )]
    AccessServerUnreachable {
        /// The person server endpoint.
        url: String,
        /// The problem details' `detail`.
        detail: Option<String>,
        /// The `Retry-After` the person server sent.
        retry_after: Option<std::time::Duration>,
    },
    /// The mission has ended (`mission_terminated`): completed, expired (a new proposal may
    /// be made) or revoked (none should be).
    #[error(
        "{url}: the mission has ended (mission_terminated{}){}",
        .reason.as_deref().map(|reason| format!(": {reason}")).unwrap_or_default(),
        .detail.as_deref().map(|detail| format!(": {detail}")).unwrap_or_default()
    )]
    MissionTerminated {
        /// The URL that answered.
        url: String,
        /// The `termination_reason`: `completed`, `expired`, `revoked`, ….
        reason: Option<String>,
        /// The problem details' `detail`.
        detail: Option<String>,
    },
    /// The person server knows no such mission for this agent (`mission_not_found`).
    #[error(
        "{url}: the person server knows no such mission (mission_not_found){}",
        .detail.as_deref().map(|detail| format!(": {detail}")).unwrap_or_default()
    )]
    MissionNotFound {
        /// The URL that answered.
        url: String,
        /// The problem details' `detail`.
        detail: Option<String>,
    },
    /// A server asks a clarification question, and no `on_clarification` callback is set.
    #[error(
        "{url}: the server asks \"{question}\", but no on_clarification callback is set; the request was withdrawn"
    )]
    ClarificationUnhandled {
        /// The pending URL.
        url: String,
        /// The question.
        question: String,
    },
    /// The `on_clarification` callback gave no answer; the request was withdrawn.
    #[error("{url}: the clarification question was not answered; the request was withdrawn")]
    ClarificationDeclined {
        /// The pending URL.
        url: String,
    },
    /// A self-hosted agent's identifier cannot be made of the configured local part.
    #[error("self-hosted agent `{local}`: {reason}")]
    InvalidSelfHostedAgent {
        /// The local part.
        local: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// The `on_clarification_answer` callback answered with an updated request that
    /// cannot replace the pending one; the request was withdrawn.
    #[error("{url}: the updated request cannot replace the pending one: {reason}")]
    UpdatedRequest {
        /// The updated request's URL, or the pending URL.
        url: String,
        /// Why.
        reason: String,
    },
    /// A token cache file (agent token, or person and auth tokens), or its folder, could
    /// not be read or written.
    #[error("token cache {}: cannot {action}: {error}", path.display())]
    TokenCacheIo {
        /// The file or folder.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The operating system's error, shown in the message (not a `source`).
        error: std::io::Error,
    },
    /// The folder of the agent key or of the token cache can be written by its group
    /// or by others, who could replace the file in it.
    #[error(
        "{purpose} folder {}: writable by group or others (mode {mode:o}); run `chmod go-w {}`",
        path.display(),
        path.display()
    )]
    FolderPermissions {
        /// Whose folder: `agent key` or `token cache`.
        purpose: &'static str,
        /// The folder.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The agent's state in Redis (tokens, signature times) cannot be used: the server is
    /// down or refuses. Nothing is signed meanwhile, since another replica might sign the
    /// same request in the same second. The server's URL is not shown: it may hold a
    /// password.
    #[cfg(feature = "redis")]
    #[error("AAuth state in Redis: cannot {action}: {reason}")]
    RedisState {
        /// What was being done.
        action: &'static str,
        /// Why it failed.
        reason: String,
    },
    /// The `ca_file` cannot be read or holds no PEM certificate.
    #[error("CA file {}: {reason}", path.display())]
    CaFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The HTTP client could not be built (TLS setup).
    #[error("cannot build the HTTP client")]
    HttpClient {
        /// reqwest's error.
        source: reqwest::Error,
    },
}

/// The AAuth step an [`Error`] happened in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// Fetching `/.well-known/aauth-agent.json`.
    AgentMetadata,
    /// Getting a first agent token at `bootstrap_endpoint`.
    Bootstrap,
    /// Renewing the agent token at `refresh_endpoint`.
    Refresh,
    /// Fetching `/.well-known/aauth-person.json`.
    PersonMetadata,
    /// Asking the person server for a person token.
    PersonToken,
    /// Exchanging a resource token for an auth token.
    AuthToken,
    /// Sending the caller's request to the resource.
    Request,
    /// Polling a pending (`202`) request's `Location`.
    Poll,
    /// Answering a clarification question at the pending URL.
    Clarification,
    /// Proposing a mission, or asking for its update or completion.
    Mission,
    /// Relaying an interaction to the person through the person server.
    Interaction,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::AgentMetadata => "fetching the agent provider metadata",
            Self::Bootstrap => "enrolling at the agent provider",
            Self::Refresh => "refreshing the agent token",
            Self::PersonMetadata => "fetching the person server metadata",
            Self::PersonToken => "requesting a person token",
            Self::AuthToken => "requesting an auth token",
            Self::Request => "sending the request",
            Self::Poll => "polling the pending request",
            Self::Clarification => "answering a clarification",
            Self::Mission => "at the mission endpoint",
            Self::Interaction => "relaying the interaction through the person server",
        })
    }
}

impl Error {
    /// The AAuth error inside an error of the signing middleware, if it is one (the
    /// middleware reports its failures as `reqwest_middleware::Error::Middleware`).
    pub fn from_middleware(error: &reqwest_middleware::Error) -> Option<&Error> {
        match error {
            reqwest_middleware::Error::Middleware(error) => error.downcast_ref::<Error>(),
            reqwest_middleware::Error::Reqwest(_) => None,
        }
    }

    /// An [`Error::Http`]: the URL as [`url_for_errors`] shows it, and the transport error
    /// without its copy of the URL.
    pub(crate) fn http(step: Step, url: &Url, source: impl Into<reqwest_middleware::Error>) -> Self {
        Error::Http { step, url: url_for_errors(url), source: source.into().without_url() }
    }

    /// The error for a `status` answer with the problem details of `body`: the mission
    /// errors as themselves, anything else as an [`Error::HttpStatus`].
    pub(crate) fn status(step: Step, url: &Url, status: u16, body: &[u8]) -> Self {
        let problem = crate::interaction::Problem::from_body(body);
        let url = url_for_errors(url);
        match problem.error.as_deref() {
            Some("mission_terminated") => {
                Error::MissionTerminated { url, reason: problem.termination_reason, detail: problem.detail }
            }
            Some("mission_not_found") => Error::MissionNotFound { url, detail: problem.detail },
            _ => Error::HttpStatus { step, url, status, error: problem.error, detail: problem.detail },
        }
    }

    /// The problem details' `error` code of an answer the client could not go on with.
    pub(crate) fn error_code(&self) -> Option<&str> {
        match self {
            Error::HttpStatus { error, .. } => error.as_deref(),
            _ => None,
        }
    }
}

/// A URL as every error and log line of this crate shows it: without user name, password,
/// query and fragment, any of which may carry the caller's secrets (credentials in the
/// URL, API keys in a query).
pub fn url_for_errors(url: &Url) -> String {
    let mut shown = url.clone();
    // Only URLs that cannot have a host refuse these; they have no user info either.
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_in_errors_lose_user_info_query_and_fragment() {
        let shown = |text: &str| url_for_errors(&Url::parse(text).unwrap());
        assert_eq!(shown("https://user:pass@api.example/items?api_key=secret#top"), "https://api.example/items");
        assert_eq!(shown("https://token@api.example:8443/a/b"), "https://api.example:8443/a/b");
        assert_eq!(shown("http://127.0.0.1:3000/"), "http://127.0.0.1:3000/");
        let status = Error::status(Step::AuthToken, &Url::parse("https://u:p@ps.example/token?k=v").unwrap(), 500, b"");
        assert_eq!(status.to_string(), "requesting an auth token: https://ps.example/token answered 500");
    }
}
