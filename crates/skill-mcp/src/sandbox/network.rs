//! The `host:port` patterns of a `network` list, checked as the config is read.

/// Whether `text` is a `host:port` pattern: a host name (or `*.suffix`, or `*`, or an
/// address, IPv6 in brackets) and a port (or `*`).
pub(crate) fn is_pattern(text: &str) -> bool {
    let Some((host, port)) = text.rsplit_once(':') else { return false };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port_fits = port == "*" || port.parse::<u16>().is_ok_and(|port| port != 0);
    !host.is_empty() && !host.contains(char::is_whitespace) && port_fits
}

/// Whether `host` and `port` fit the pattern `pattern` (one [`is_pattern`] accepts):
/// `*.example.com` fits every name below `example.com`, not the name itself; `*` fits all.
pub(crate) fn allows(pattern: &str, host: &str, port: u16) -> bool {
    let Some((allowed_host, allowed_port)) = pattern.rsplit_once(':') else { return false };
    let allowed_host = allowed_host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
    let host = host.to_ascii_lowercase();
    let host_fits = match allowed_host.strip_prefix('*') {
        Some("") => true,
        Some(suffix) if suffix.starts_with('.') => host.ends_with(suffix) && host.len() > suffix.len(),
        _ => host == allowed_host,
    };
    host_fits && (allowed_port == "*" || allowed_port.parse::<u16>() == Ok(port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_host_and_port() {
        for pattern in ["api.github.com:443", "*.example.com:*", "[::1]:80", "127.0.0.1:8080"] {
            assert!(is_pattern(pattern), "{pattern}");
        }
        for refused in ["github.com", "github.com:0", "github.com:http", ":443", "a b:1"] {
            assert!(!is_pattern(refused), "{refused}");
        }
    }

    #[test]
    fn patterns_fit_names_and_ports() {
        assert!(allows("API.github.com:443", "api.github.com", 443));
        assert!(!allows("api.github.com:443", "api.github.com", 80));
        assert!(!allows("api.github.com:443", "github.com", 443));
        assert!(allows("*.example.com:*", "a.b.example.com", 8443));
        assert!(!allows("*.example.com:*", "example.com", 443));
        assert!(!allows("*.example.com:*", "badexample.com", 443));
        assert!(allows("[::1]:80", "::1", 80));
        assert!(allows("*:443", "anything.org", 443));
    }
}
