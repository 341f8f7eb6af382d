//! Secrets: redacted values ([`Secrets`]), references to where they live ([`SecretRef`])
//! and their resolution ([`SecretResolver`]).
//!
//! A value is held in a [`SecretString`], whose `Debug` prints `[REDACTED]` and which has
//! no `Display`; the only way to the text is [`ExposeSecret::expose_secret`], which
//! callers use at the last moment (an environment variable, a header). Errors and logs
//! name the reference, never the value.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::str::FromStr;
use std::time::Duration;

pub use secrecy::{ExposeSecret, SecretString};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::Error;

/// Where a secret's value comes from, as written in a config file.
///
/// | written as | means |
/// |---|---|
/// | `env:NAME` | the environment variable `NAME` (set and non-empty) |
/// | `file:PATH` | the file's content, one trailing newline removed; `~/` expands to the home folder |
/// | `op://VAULT/ITEM/FIELD` | the 1Password CLI's `op read` of that reference |
/// | `literal:VALUE` | `VALUE` itself |
/// | anything else without a `scheme:` prefix | the text itself |
///
/// A `word:` prefix that is none of these schemes is an error, so that a typo such as
/// `evn:TOKEN` is caught rather than taken as the secret itself.
///
/// `Display` and `Debug` show the reference, and `[REDACTED]` for a literal.
#[derive(Clone)]
pub enum SecretRef {
    /// The value itself.
    Literal(SecretString),
    /// An environment variable's name.
    Env(String),
    /// A file's path, as written.
    File(String),
    /// A 1Password reference, `op://vault/item/field`.
    OnePassword(String),
}

impl FromStr for SecretRef {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        let invalid = |problem| Error::InvalidSecretReference { reference: text.to_owned(), problem };
        if text.starts_with("op://") {
            if text.len() == "op://".len() {
                return Err(invalid("expected op://VAULT/ITEM/FIELD"));
            }
            return Ok(SecretRef::OnePassword(text.to_owned()));
        }
        let Some((scheme, rest)) = scheme_of(text) else {
            return Ok(SecretRef::Literal(SecretString::from(text)));
        };
        match scheme {
            "env" if rest.is_empty() => Err(invalid("expected env:NAME")),
            "env" => Ok(SecretRef::Env(rest.to_owned())),
            "file" if rest.is_empty() => Err(invalid("expected file:PATH")),
            "file" => Ok(SecretRef::File(rest.to_owned())),
            "literal" => Ok(SecretRef::Literal(SecretString::from(rest))),
            other => Err(Error::UnknownSecretScheme { suggestion: likely_scheme(other) }),
        }
    }
}

/// Splits `scheme:rest` where `scheme` looks like a URI scheme (RFC 3986: a letter, then
/// letters, digits, `+`, `-`, `.`).
pub(crate) fn scheme_of(text: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = text.split_once(':')?;
    let mut chars = scheme.chars();
    let first_is_letter = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let rest_is_scheme = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    (first_is_letter && rest_is_scheme).then_some((scheme, rest))
}

/// The scheme `word` is one edit away from, if any (`evn`, `fiel`, `litteral`): a typo
/// worth naming. Anything further is more likely the start of a value, and gets no hint.
fn likely_scheme(word: &str) -> Option<&'static str> {
    let word = word.to_ascii_lowercase();
    ["env", "file", "literal", "op"]
        .into_iter()
        .find(|scheme| strsim::damerau_levenshtein(&word, scheme) == 1 && word.len() >= 2)
}

impl fmt::Display for SecretRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SecretRef::Literal(_) => f.write_str("[REDACTED]"),
            SecretRef::Env(name) => write!(f, "env:{name}"),
            SecretRef::File(path) => write!(f, "file:{path}"),
            SecretRef::OnePassword(reference) => f.write_str(reference),
        }
    }
}

/// Two references are equal when they are written alike (for literals: the same value),
/// so that a changed config can be told from an unchanged one.
impl PartialEq for SecretRef {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (SecretRef::Literal(a), SecretRef::Literal(b)) => a.expose_secret() == b.expose_secret(),
            (SecretRef::Env(a), SecretRef::Env(b))
            | (SecretRef::File(a), SecretRef::File(b))
            | (SecretRef::OnePassword(a), SecretRef::OnePassword(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for SecretRef {}

impl fmt::Debug for SecretRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretRef({self})")
    }
}

/// Serializes as the reference, with a literal shown as `[REDACTED]`.
impl Serialize for SecretRef {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SecretRef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SecretRefVisitor)
    }
}

/// Reads a reference from a string, and refuses anything else *without* echoing the
/// value: serde's default type errors quote the offending value, which here may be a
/// secret written with the wrong type.
struct SecretRefVisitor;

impl SecretRefVisitor {
    fn not_a_string<E: de::Error>(found: &str) -> E {
        E::custom(format_args!("expected a secret reference string, found {found}"))
    }
}

impl<'de> Visitor<'de> for SecretRefVisitor {
    type Value = SecretRef;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a secret reference string")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<SecretRef, E> {
        text.parse().map_err(E::custom)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<SecretRef, E> {
        Err(Self::not_a_string("a boolean"))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<SecretRef, E> {
        Err(Self::not_a_string("a number (quote it)"))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<SecretRef, E> {
        Err(Self::not_a_string("a number (quote it)"))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<SecretRef, E> {
        Err(Self::not_a_string("a number (quote it)"))
    }

    fn visit_unit<E: de::Error>(self) -> Result<SecretRef, E> {
        Err(Self::not_a_string("nothing"))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, _: A) -> Result<SecretRef, A::Error> {
        Err(Self::not_a_string("a list"))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, _: A) -> Result<SecretRef, A::Error> {
        Err(Self::not_a_string("a mapping"))
    }
}

/// Resolves [`SecretRef`]s to values.
#[derive(Debug, Clone)]
pub struct SecretResolver {
    /// The 1Password CLI to run for `op://` references (default `op`, looked up on PATH).
    pub op_program: OsString,
    /// How long `op read` may take before it is killed (default 10 s).
    pub op_timeout: Duration,
}

impl Default for SecretResolver {
    fn default() -> Self {
        Self { op_program: OsString::from("op"), op_timeout: Duration::from_secs(10) }
    }
}

/// The largest `file:` secret read: far more than any token or key, and a bound on what
/// a reference to the wrong file (a log, `/dev/zero`) can make the agent read.
pub const MAX_SECRET_FILE_BYTES: u64 = 64 * 1024;

/// A `file:` secret's text, read up to [`MAX_SECRET_FILE_BYTES`] (more is
/// `FileTooLarge`). Any file that can be read will do, a pipe (`/dev/fd/N`) included.
fn read_secret_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(MAX_SECRET_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SECRET_FILE_BYTES {
        return Err(std::io::ErrorKind::FileTooLarge.into());
    }
    String::from_utf8(bytes).map_err(|_| std::io::ErrorKind::InvalidData.into())
}

impl SecretResolver {
    /// Resolves one reference to its value.
    pub async fn resolve(&self, reference: &SecretRef) -> Result<SecretString, Error> {
        match reference {
            SecretRef::Literal(value) => Ok(value.clone()),
            SecretRef::Env(name) => match std::env::var(name) {
                Ok(value) if !value.is_empty() => Ok(SecretString::from(value)),
                _ => Err(Error::SecretEnvNotSet { reference: reference.to_string(), name: name.clone() }),
            },
            SecretRef::File(path) => {
                let path = expand_home(path);
                let read = {
                    let path = path.clone();
                    crate::off_runtime(move || read_secret_file(&path))
                        .await
                        .unwrap_or_else(|stopped| Err(stopped.into()))
                };
                match read {
                    Ok(mut value) => {
                        trim_one_newline(&mut value);
                        Ok(SecretString::from(value))
                    }
                    Err(error) => Err(Error::SecretFile { reference: reference.to_string(), path, kind: error.kind() }),
                }
            }
            SecretRef::OnePassword(op_reference) => self.op_read(op_reference).await,
        }
    }

    async fn op_read(&self, reference: &str) -> Result<SecretString, Error> {
        let mut command = tokio::process::Command::new(&self.op_program);
        command
            .args(["read", "--no-newline", reference])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let child = command.spawn().map_err(|error| Error::OpUnavailable {
            reference: reference.to_owned(),
            program: self.op_program.to_string_lossy().into_owned(),
            kind: error.kind(),
        })?;
        let output = tokio::time::timeout(self.op_timeout, child.wait_with_output())
            .await
            .map_err(|_| Error::OpTimeout { reference: reference.to_owned(), after: self.op_timeout })?
            .map_err(|error| Error::OpUnavailable {
                reference: reference.to_owned(),
                program: self.op_program.to_string_lossy().into_owned(),
                kind: error.kind(),
            })?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(Error::OpFailed {
                reference: reference.to_owned(),
                status: output.status.to_string(),
                stderr: stderr.lines().next().unwrap_or_default().trim().to_owned(),
            });
        }
        let mut value = String::from_utf8_lossy(&output.stdout).into_owned();
        trim_one_newline(&mut value);
        Ok(SecretString::from(value))
    }
}

fn trim_one_newline(value: &mut String) {
    if value.ends_with('\n') {
        value.pop();
        if value.ends_with('\r') {
            value.pop();
        }
    }
}

/// Expands a leading `~/` to the person's home folder ([`user_home`]).
pub fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), user_home()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(path),
    }
}

/// The person's home folder: `$HOME`, else `%USERPROFILE%` (Windows); an empty one is
/// none.
pub fn user_home() -> Option<PathBuf> {
    ["HOME", "USERPROFILE"]
        .into_iter()
        .find_map(|name| std::env::var_os(name).filter(|home| !home.is_empty()))
        .map(PathBuf::from)
}

/// The secret values one skill of one agent receives, by name.
///
/// `Debug` lists the names only.
#[derive(Clone, Default)]
pub struct Secrets {
    values: BTreeMap<String, SecretString>,
    /// Where each value came from, as a reference shows it (none for a literal, whose
    /// reference is the value): what the secret egress guard names.
    references: BTreeMap<String, String>,
}

impl Secrets {
    /// No secrets.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) one value.
    pub fn insert(&mut self, name: impl Into<String>, value: SecretString) {
        let name = name.into();
        self.references.remove(&name);
        self.values.insert(name, value);
    }

    /// Adds (or replaces) one value, resolved from `reference`, which messages about it
    /// may then name (a literal's is never shown).
    pub fn insert_resolved(&mut self, name: impl Into<String>, reference: &SecretRef, value: SecretString) {
        let name = name.into();
        match reference {
            SecretRef::Literal(_) => self.references.remove(&name),
            other => self.references.insert(name.clone(), other.to_string()),
        };
        self.values.insert(name, value);
    }

    /// The reference the value of `name` was resolved from (`env:TOKEN`, `op://…`), unless
    /// it was a literal or not given.
    pub fn reference(&self, name: &str) -> Option<&str> {
        self.references.get(name).map(String::as_str)
    }

    /// The value of `name`, if there is one.
    pub fn get(&self, name: &str) -> Option<&SecretString> {
        self.values.get(name)
    }

    /// Whether `name` has a non-empty value.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some_and(|value| !value.expose_secret().is_empty())
    }

    /// The names that have values, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.values.keys().map(String::as_str)
    }

    /// Every name and value, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &SecretString)> {
        self.values.iter().map(|(name, value)| (name.as_str(), value))
    }
}

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Secrets").field("names", &self.values.keys().collect::<Vec<_>>()).finish()
    }
}

impl FromIterator<(String, SecretString)> for Secrets {
    fn from_iter<I: IntoIterator<Item = (String, SecretString)>>(iter: I) -> Self {
        Self { values: iter.into_iter().collect(), references: BTreeMap::new() }
    }
}

/// Expands `${VAR}`, `${env:VAR}` and `${VAR:-default}` in `text`, looking names up in
/// `lookup`. An unset name without a default is an error naming it; no error shows the
/// rest of `text`, which may hold a credential.
pub fn expand_vars(text: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut expanded = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        expanded.push_str(&rest[..start]);
        let Some(end) = rest[start..].find('}') else {
            return Err("a `${` is not closed by `}`".to_owned());
        };
        let inner = &rest[start + 2..start + end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        let name = name.strip_prefix("env:").unwrap_or(name);
        match (lookup(name), default) {
            (Some(value), _) => expanded.push_str(&value),
            (None, Some(default)) => expanded.push_str(default),
            (None, None) => return Err(format!("`${{{inner}}}` names a variable that is not set")),
        }
        rest = &rest[start + end + 1..];
    }
    expanded.push_str(rest);
    Ok(expanded)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CANARY: &str = "canary-7f3a9c";

    fn parse(text: &str) -> Result<SecretRef, String> {
        text.parse::<SecretRef>().map_err(|error| error.to_string())
    }

    #[test]
    fn references_parse_by_scheme() {
        let check = |text: &str, expect: &str| assert_eq!(format!("{:?}", parse(text)), expect, "{text}");
        check("env:GITHUB_TOKEN", "Ok(SecretRef(env:GITHUB_TOKEN))");
        check("file:~/token", "Ok(SecretRef(file:~/token))");
        check("op://Private/GitHub/token", "Ok(SecretRef(op://Private/GitHub/token))");
        check("plain value with spaces", "Ok(SecretRef([REDACTED]))");
        check("literal:has:colons", "Ok(SecretRef([REDACTED]))");
        check("1234:5678", "Ok(SecretRef([REDACTED]))");
        check("env:", "Err(\"secret reference `env:`: expected env:NAME\")");
        check("op://", "Err(\"secret reference `op://`: expected op://VAULT/ITEM/FIELD\")");
    }

    #[test]
    fn an_unknown_scheme_shows_no_part_of_the_value() {
        for value in [format!("vault:{CANARY}"), format!("admin:{CANARY}")] {
            let message = parse(&value).unwrap_err();
            assert!(message.starts_with("the value starts with an unknown secret reference scheme (use"), "{message}");
            assert!(!message.contains("admin") && !message.contains("vault"), "{message}");
            assert!(!message.contains(CANARY), "{message}");
        }
        // A near miss of a scheme is named: the scheme, not what was written.
        let message = parse("evn:GITHUB_TOKEN").unwrap_err();
        assert!(message.contains("scheme (did you mean `env:`?)"), "{message}");
        assert!(!message.contains("evn") && !message.contains("GITHUB_TOKEN"), "{message}");
    }

    #[test]
    fn literal_never_shows_in_debug_display_or_serde() {
        let reference = parse(CANARY).unwrap();
        let secrets: Secrets = [("TOKEN".to_owned(), SecretString::from(CANARY))].into_iter().collect();
        let shown = [
            format!("{reference}"),
            format!("{reference:?}"),
            format!("{secrets:?}"),
            format!("{:?}", secrets.get("TOKEN")),
            serde_json::to_string(&reference).unwrap(),
        ];
        for text in shown {
            assert!(!text.contains(CANARY), "{text}");
        }
        assert_eq!(format!("{secrets:?}"), r#"Secrets { names: ["TOKEN"] }"#);
    }

    #[test]
    fn mistyped_value_is_refused_without_echoing_it() {
        let error = serde_json::from_str::<SecretRef>("7319864201").unwrap_err().to_string();
        assert!(!error.contains("7319864201"), "{error}");
        assert!(error.contains("expected a secret reference string"), "{error}");
    }

    #[tokio::test]
    async fn env_and_file_references_resolve() {
        let resolver = SecretResolver::default();
        let path_value = std::env::var("PATH").unwrap();
        let value = resolver.resolve(&parse("env:PATH").unwrap()).await.unwrap();
        assert_eq!(value.expose_secret(), path_value);

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, format!("{CANARY}\n")).unwrap();
        let reference = parse(&format!("file:{}", file.display())).unwrap();
        assert_eq!(resolver.resolve(&reference).await.unwrap().expose_secret(), CANARY);
    }

    #[tokio::test]
    async fn a_file_secret_is_read_up_to_its_bound() {
        let resolver = SecretResolver::default();
        // Endless: the read stops at the bound.
        let error = resolver.resolve(&parse("file:/dev/zero").unwrap()).await.unwrap_err();
        assert_eq!(error.to_string(), "secret reference `file:/dev/zero`: cannot read /dev/zero: file too large");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "k".repeat(MAX_SECRET_FILE_BYTES as usize)).unwrap();
        let reference = parse(&format!("file:{}", file.display())).unwrap();
        assert_eq!(resolver.resolve(&reference).await.unwrap().expose_secret().len(), MAX_SECRET_FILE_BYTES as usize);
    }

    #[tokio::test]
    async fn failures_name_the_reference() {
        let resolver = SecretResolver::default();
        let error = resolver.resolve(&parse("env:OMNIAGENT_TEST_SURELY_UNSET").unwrap()).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            "secret reference `env:OMNIAGENT_TEST_SURELY_UNSET`: environment variable `OMNIAGENT_TEST_SURELY_UNSET` is not set"
        );
        let error = resolver.resolve(&parse("file:/nonexistent/token").unwrap()).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            "secret reference `file:/nonexistent/token`: cannot read /nonexistent/token: entity not found"
        );
    }

    /// A stand-in for the 1Password CLI (which cannot run here): a script with `op`'s
    /// interface, to check how its output, failure and slowness are handled.
    fn fake_op(dir: &Path, body: &str) -> OsString {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("op");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.into_os_string()
    }

    #[tokio::test]
    async fn op_references_run_op_read() {
        let dir = tempfile::tempdir().unwrap();
        let reference = parse("op://Private/GitHub/token").unwrap();

        let resolver = SecretResolver {
            op_program: fake_op(
                dir.path(),
                &format!("[ \"$1 $2 $3\" = 'read --no-newline op://Private/GitHub/token' ] && printf {CANARY}"),
            ),
            ..SecretResolver::default()
        };
        assert_eq!(resolver.resolve(&reference).await.unwrap().expose_secret(), CANARY);

        let resolver = SecretResolver {
            op_program: fake_op(dir.path(), "echo '[ERROR] not signed in' >&2; exit 1"),
            ..SecretResolver::default()
        };
        let error = resolver.resolve(&reference).await.unwrap_err().to_string();
        assert_eq!(
            error,
            "secret reference `op://Private/GitHub/token`: `op read` failed (exit status: 1): [ERROR] not signed in"
        );

        let resolver =
            SecretResolver { op_program: fake_op(dir.path(), "sleep 5"), op_timeout: Duration::from_millis(200) };
        let error = resolver.resolve(&reference).await.unwrap_err().to_string();
        assert_eq!(error, "secret reference `op://Private/GitHub/token`: `op read` timed out after 200ms");

        let resolver = SecretResolver { op_program: dir.path().join("missing-op").into(), ..SecretResolver::default() };
        let error = resolver.resolve(&reference).await.unwrap_err().to_string();
        assert!(
            error.starts_with("secret reference `op://Private/GitHub/token`: cannot run the 1Password CLI"),
            "{error}"
        );
    }

    #[test]
    fn expansion_reads_both_spellings_and_defaults() {
        let lookup = |name: &str| (name == "TOKEN").then(|| "t0k".to_owned());
        let check = |text: &str, expect: Result<&str, &str>| {
            assert_eq!(expand_vars(text, lookup), expect.map(str::to_owned).map_err(str::to_owned), "{text}");
        };
        check("Bearer ${TOKEN}", Ok("Bearer t0k"));
        check("Bearer ${env:TOKEN}", Ok("Bearer t0k"));
        check("${MISSING:-fallback}/x", Ok("fallback/x"));
        check("plain $TOKEN", Ok("plain $TOKEN"));
        check("${MISSING}", Err("`${MISSING}` names a variable that is not set"));
        check("Bearer s3cret ${TOKEN", Err("a `${` is not closed by `}`"));
    }
}
