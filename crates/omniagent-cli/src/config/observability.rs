//! The `observability:` section: what the host records of its calls and where it sends
//! it (OTLP traces and metrics, the gateway's Prometheus `/metrics`).

use serde::{Deserialize, Serialize};

/// The `observability:` section.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ObservabilityConfig {
    /// Traces and metrics over OTLP/HTTP (protobuf); absent: no export.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) otlp: Option<OtlpConfig>,
    /// One JSON line per call (see [`crate::audit`]); absent: no audit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) audit: Option<crate::audit::AuditConfig>,
    /// Whether the HTTP gateway serves its metrics as Prometheus text at `GET /metrics`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) metrics: bool,
}

impl ObservabilityConfig {
    /// Whether the section says nothing (`config show` leaves it out then).
    pub(crate) fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// `observability.otlp`: where traces and metrics go. The standard `OTEL_EXPORTER_OTLP_*`
/// variables are honoured: an endpoint set here wins over `OTEL_EXPORTER_OTLP_ENDPOINT`,
/// and the signal-specific variables (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, ...) win over
/// both, as the OpenTelemetry specification orders them.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OtlpConfig {
    /// The collector's base URL (`http://127.0.0.1:4318`); `/v1/traces` and `/v1/metrics`
    /// are added to it. Default: `OTEL_EXPORTER_OTLP_ENDPOINT`, else
    /// `http://localhost:4318`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) endpoint: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_reads_its_fields_and_refuses_others() {
        let read: ObservabilityConfig =
            serde_yaml_ng::from_str("otlp: {endpoint: 'http://127.0.0.1:4318'}\nmetrics: true\n").unwrap();
        assert_eq!(read.otlp.unwrap().endpoint.as_deref(), Some("http://127.0.0.1:4318"));
        assert!(read.metrics);
        assert!(ObservabilityConfig::default().is_empty());
        let error = serde_yaml_ng::from_str::<ObservabilityConfig>("otlp: {endpiont: x}\n").unwrap_err();
        assert!(error.to_string().contains("unknown field `endpiont`"), "{error}");
    }
}
