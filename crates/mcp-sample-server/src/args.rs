//! Command-line flags, parsed by hand: the server has a handful of flags and no other
//! arguments.

use std::{fmt, net::SocketAddr};

/// What the command line asks for.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Config {
    /// Serve `tools/list` in pages of this many tools, with a numeric `nextCursor`.
    pub(crate) page_size: Option<usize>,
    /// Megabytes of text written to stderr before serving.
    pub(crate) stderr_at_start_megabytes: u64,
    /// Write `fatal: sample failure` to stderr and exit with code 7 before serving.
    pub(crate) exit_at_start: bool,
    /// Read stdin and never answer, not even `initialize`.
    pub(crate) silent: bool,
    /// Also serve the MCP conformance suite's fixture tools, prompts and resources.
    pub(crate) conformance: bool,
    /// Serve streamable HTTP at `/mcp` on this address instead of stdio.
    pub(crate) http: Option<SocketAddr>,
    /// Also list `bad_schema` (an input schema that does not compile) and `remote_ref`
    /// (one with a `$ref` to a URL).
    pub(crate) odd_schemas: bool,
    /// Also list the tools of [`crate::hostile`], which each try one thing a sandbox denies.
    pub(crate) hostile: bool,
    /// With `http`: require OAuth access tokens of this issuer (see the `oauth` module).
    pub(crate) oauth_issuer: Option<String>,
}

/// A command line that [`parse`] refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArgsError(String);

impl fmt::Display for ArgsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ArgsError {}

pub(crate) const USAGE: &str = "usage: mcp-sample-server [--page-size N] [--stderr-at-start MB] [--exit-at-start] \
                                  [--silent] [--conformance] [--odd-schemas] [--hostile] [--http ADDR [--oauth-issuer URL]]";

/// Parses the arguments that follow the program name.
pub(crate) fn parse(args: impl IntoIterator<Item = String>) -> Result<Config, ArgsError> {
    let mut config = Config::default();
    let mut args = args.into_iter();
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--page-size" => {
                let page_size = number_after(&flag, args.next())?;
                if page_size == 0 {
                    return Err(ArgsError("--page-size must be at least 1".to_owned()));
                }
                config.page_size = Some(
                    usize::try_from(page_size)
                        .map_err(|_| ArgsError(format!("--page-size {page_size} is too large")))?,
                );
            }
            "--stderr-at-start" => {
                config.stderr_at_start_megabytes = number_after(&flag, args.next())?;
            }
            "--exit-at-start" => config.exit_at_start = true,
            "--silent" => config.silent = true,
            "--conformance" => config.conformance = true,
            "--odd-schemas" => config.odd_schemas = true,
            "--hostile" => config.hostile = true,
            "--http" => {
                let value = args
                    .next()
                    .ok_or_else(|| ArgsError("--http needs an address such as 127.0.0.1:8123".to_owned()))?;
                config.http = Some(value.parse().map_err(|_| {
                    ArgsError(format!("--http needs an address such as 127.0.0.1:8123, not `{value}`"))
                })?);
            }
            "--oauth-issuer" => {
                let value = args.next().filter(|value| value.starts_with("http://") || value.starts_with("https://"));
                let value = value.ok_or_else(|| ArgsError("--oauth-issuer needs an http(s) URL".to_owned()))?;
                config.oauth_issuer = Some(value);
            }
            _ => return Err(ArgsError(format!("unknown argument `{flag}`\n{USAGE}"))),
        }
    }
    if config.oauth_issuer.is_some() && config.http.is_none() {
        return Err(ArgsError("--oauth-issuer needs --http".to_owned()));
    }
    Ok(config)
}

fn number_after(flag: &str, value: Option<String>) -> Result<u64, ArgsError> {
    let value = value.ok_or_else(|| ArgsError(format!("{flag} needs a number")))?;
    value.parse().map_err(|_| ArgsError(format!("{flag} needs a number, not `{value}`")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(args: &str, expected: Result<Config, &str>) {
        let parsed = parse(args.split_whitespace().map(str::to_owned));
        let expected = expected.map_err(|message| ArgsError(message.to_owned()));
        assert_eq!(parsed, expected, "arguments: {args:?}");
    }

    #[test]
    fn flags() {
        check("", Ok(Config::default()));
        check("--page-size 2", Ok(Config { page_size: Some(2), ..Config::default() }));
        check(
            "--stderr-at-start 3 --exit-at-start",
            Ok(Config { stderr_at_start_megabytes: 3, exit_at_start: true, ..Config::default() }),
        );
        check("--silent", Ok(Config { silent: true, ..Config::default() }));
        check(
            "--conformance --http 127.0.0.1:0",
            Ok(Config { conformance: true, http: Some(([127, 0, 0, 1], 0).into()), ..Config::default() }),
        );
        check("--http [::1]:8123", Ok(Config { http: Some("[::1]:8123".parse().unwrap()), ..Config::default() }));
        check(
            "--http 127.0.0.1:0 --oauth-issuer http://127.0.0.1:9/",
            Ok(Config {
                http: Some(([127, 0, 0, 1], 0).into()),
                oauth_issuer: Some("http://127.0.0.1:9/".to_owned()),
                ..Config::default()
            }),
        );
    }

    #[test]
    fn refused() {
        check("--page-size", Err("--page-size needs a number"));
        check("--page-size 0", Err("--page-size must be at least 1"));
        check("--stderr-at-start -1", Err("--stderr-at-start needs a number, not `-1`"));
        check("--http", Err("--http needs an address such as 127.0.0.1:8123"));
        check("--http localhost:80", Err("--http needs an address such as 127.0.0.1:8123, not `localhost:80`"));
        check("--oauth-issuer http://127.0.0.1:9", Err("--oauth-issuer needs --http"));
        check("--http 127.0.0.1:0 --oauth-issuer 127.0.0.1:9", Err("--oauth-issuer needs an http(s) URL"));
        check("--verbose", Err(&format!("unknown argument `--verbose`\n{USAGE}")));
    }
}
