//! rmcp's errors as people read them: without the transport's type name that rmcp puts
//! in its messages (`Transport [rmcp::transport::worker::WorkerTransport<…>] error: …`),
//! and with each cause that reqwest and hyper keep out of their own messages
//! (`Connection refused`), once.

use std::error::Error as StdError;

use rmcp::ServiceError;
use rmcp::service::ClientInitializeError;
use rmcp::transport::DynamicTransportError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

/// An error of rmcp's, as a message may say it.
pub(crate) trait Described {
    /// What went wrong, for people.
    fn described(&self) -> String;
}

impl Described for ServiceError {
    fn described(&self) -> String {
        match self {
            ServiceError::TransportSend(transport) => chain(transport.error.as_ref()),
            other => chain(other),
        }
    }
}

impl Described for ClientInitializeError {
    fn described(&self) -> String {
        match self {
            ClientInitializeError::TransportError { error, context } => {
                format!("{}, when {context}", chain(error.error.as_ref()))
            }
            other => chain(other),
        }
    }
}

/// `error`'s message, then each cause's that is not in the text yet, joined by `: `; a
/// transport error stands for the error it wraps.
fn chain(error: &(dyn StdError + 'static)) -> String {
    let mut text = String::new();
    let mut next = Some(error);
    while let Some(current) = next {
        if let Some(transport) = current.downcast_ref::<DynamicTransportError>() {
            next = Some(transport.error.as_ref());
            continue;
        }
        let shown = current.to_string();
        if !text.contains(&shown) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&shown);
        }
        next = match current.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            // Not a `source` of rmcp's, though it is where the cause is.
            Some(StreamableHttpError::Client(sending)) => Some(sending),
            _ => current.source(),
        };
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("error sending request for url (http://127.0.0.1:9/mcp)")]
    struct Sending(#[source] std::io::Error);

    #[test]
    fn the_transports_name_is_left_out_and_each_cause_said_once() {
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused");
        let transport = DynamicTransportError::from_parts(
            "rmcp::transport::worker::WorkerTransport<Client>",
            std::any::TypeId::of::<Sending>(),
            Box::new(Sending(refused)),
        );
        let init = ClientInitializeError::TransportError { error: transport, context: "send discover request".into() };
        assert_eq!(
            init.described(),
            "error sending request for url (http://127.0.0.1:9/mcp): Connection refused, when send discover request"
        );
        assert_eq!(ServiceError::TransportClosed.described(), "Transport closed");
    }
}
