//! The `host:port` patterns of a `network` list, checked as the config is read.

/// Whether `text` is a `host:port` pattern: a host name (or `*.suffix`, or `*`, or an
/// address, IPv6 in brackets) and a port (or `*`).
pub(crate) fn is_pattern(text: &str) -> bool {
    let Some((host, port)) = text.rsplit_once(':') else { return false };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port_fits = port == "*" || port.parse::<u16>().is_ok_and(|port| port != 0);
    !host.is_empty() && !host.contains(char::is_whitespace) && port_fits
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
}
