//! Durations as people write them in config files: `500ms`, `30s`, `2m`, `1h`, or a
//! number of seconds.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serializer};

/// Reads `500ms`, `30s`, `1.5s`, `2m` or `1h`; `None` for anything else, zero included.
pub fn parse(text: &str) -> Option<Duration> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit() && c != '.')?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let seconds = match unit.trim() {
        "ms" => number / 1000.0,
        "s" => number,
        "m" => number * 60.0,
        "h" => number * 3600.0,
        _ => return None,
    };
    positive_seconds(seconds)
}

/// A config value as a duration: a string [`parse`] reads, or a positive number of
/// seconds. The error says how to write one.
pub fn from_json(value: &serde_json::Value) -> Result<Duration, String> {
    let parsed = match value {
        serde_json::Value::Number(seconds) => seconds.as_f64().and_then(positive_seconds),
        serde_json::Value::String(text) => parse(text),
        _ => None,
    };
    parsed.ok_or_else(|| format!("timeout `{value}` is not a duration (write e.g. 500ms, 30s, 2m)"))
}

/// A positive number of seconds as a duration; `None` for zero, negatives, and what no
/// `Duration` can hold (`1e300s`).
fn positive_seconds(seconds: f64) -> Option<Duration> {
    if seconds > 0.0 { Duration::try_from_secs_f64(seconds).ok() } else { None }
}

/// A duration written the way [`parse`] reads it: whole minutes as `2m`, whole seconds as
/// `30s`, else milliseconds.
pub fn format(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis.is_multiple_of(60_000) && millis > 0 {
        format!("{}m", millis / 60_000)
    } else if millis.is_multiple_of(1000) {
        format!("{}s", millis / 1000)
    } else {
        format!("{millis}ms")
    }
}

/// `#[serde(with = "skill_core::duration::option")]` for an `Option<Duration>` field
/// written as `30s` (or a number of seconds).
pub mod option {
    use super::*;

    /// Writes the duration as [`format`](super::format) does.
    pub fn serialize<S: Serializer>(duration: &Option<Duration>, serializer: S) -> Result<S::Ok, S::Error> {
        match duration {
            Some(duration) => serializer.serialize_str(&format(*duration)),
            None => serializer.serialize_none(),
        }
    }

    /// Reads a duration string or a number of seconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Duration>, D::Error> {
        let value = Option::<serde_json::Value>::deserialize(deserializer)?;
        value.map(|value| from_json(&value)).transpose().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_and_print_alike() {
        for (text, millis) in [("500ms", 500), ("30s", 30_000), ("2m", 120_000), ("1.5s", 1500), ("1h", 3_600_000)] {
            assert_eq!(parse(text), Some(Duration::from_millis(millis)), "{text}");
            assert_eq!(parse(&format(Duration::from_millis(millis))), Some(Duration::from_millis(millis)));
        }
        for bad in ["0s", "30", "s", "3 weeks", "-1s", "99999999999999999999h", "1e300s", "NaNs"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert_eq!(format(Duration::from_millis(120_000)), "2m");
        assert_eq!(format(Duration::from_millis(1500)), "1500ms");
        assert_eq!(from_json(&serde_json::json!(2.5)), Ok(Duration::from_millis(2500)));
        assert!(from_json(&serde_json::json!(1e300)).is_err());
        assert_eq!(
            from_json(&serde_json::json!(true)),
            Err("timeout `true` is not a duration (write e.g. 500ms, 30s, 2m)".to_owned())
        );
    }
}
