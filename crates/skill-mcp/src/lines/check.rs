//! The transport's reading of lines checked against rmcp's codec alone: for the fuzz
//! targets (built with `--cfg fuzzing`) and the tests only.

use rmcp::model::{ClientRequest, JsonRpcMessage, RequestId, ServerResult};
use rmcp::service::ServiceRole;
use rmcp::transport::async_rw::JsonRpcMessageCodec;
use tokio_util::bytes::BytesMut;
use tokio_util::codec::Decoder as _;

use super::{Decode, Direct, Line, rmcp_read};

/// Reads each line of `text` as the transport reads it and as rmcp's codec alone reads
/// it, and panics where the two differ. The client reads each line as though its `id`
/// were one of its calls.
///
/// Both must accept, ignore or refuse as invalid the same lines, and accept each as the
/// same message. The one difference allowed: a tool call's answer that also holds the
/// fields of a result rmcp tries first is read as the tool call's result.
pub fn check_against_rmcp(text: &[u8]) {
    use rmcp::model::RequestMetaObject;
    use rmcp::{RoleClient, RoleServer};

    /// What the transport's decoder makes of `line`, `sent` being what its side keeps.
    fn ours<Role: Direct>(sent: Role::Sent, line: &[u8]) -> Option<Line<Role>> {
        Decode::<Role>::new(usize::MAX, sent)
            .decode(&mut BytesMut::from([line, b"\n"].concat().as_slice()))
            .expect("no I/O")
    }

    /// What rmcp's codec alone makes of `line`.
    fn theirs<Role: ServiceRole>(line: &[u8]) -> Option<Line<Role>> {
        rmcp_read(&mut JsonRpcMessageCodec::default(), &mut BytesMut::from([line, b"\n"].concat().as_slice()))
    }

    /// A read as one comparable value: the message's wire form, `"invalid"` or `"ignored"`.
    fn outcome<Role: ServiceRole>(read: &Option<Line<Role>>) -> serde_json::Value {
        match read {
            Some(Line::Message(message)) => serde_json::to_value(message).expect("a message serializes"),
            Some(Line::Invalid) => "invalid".into(),
            Some(Line::Oversized) => unreachable!("no bound"),
            None => "ignored".into(),
        }
    }

    fn tool_result(read: &Option<Line<RoleClient>>) -> bool {
        let Some(Line::Message(JsonRpcMessage::Response(response))) = read else { return false };
        matches!(response.result, ServerResult::CallToolResult(_))
    }

    fn tool_call_meta(
        read: &Option<Line<RoleServer>>,
    ) -> Option<(Option<RequestMetaObject>, Option<RequestMetaObject>)> {
        let Some(Line::Message(JsonRpcMessage::Request(request))) = read else { return None };
        let ClientRequest::CallToolRequest(call) = &request.request else { return None };
        Some((call.params.meta.clone(), call.extensions.get::<RequestMetaObject>().cloned()))
    }

    for line in text.split(|byte| *byte == b'\n') {
        let id = serde_json::from_slice::<serde_json::Value>(line)
            .ok()
            .and_then(|message| serde_json::from_value::<RequestId>(message.get("id")?.clone()).ok());
        let (client, rmcp_client) = (
            ours::<RoleClient>(super::direct::Calls { rmcp: id.into_iter().collect(), ..Default::default() }, line),
            theirs::<RoleClient>(line),
        );
        let another_result =
            matches!(rmcp_client, Some(Line::Message(JsonRpcMessage::Response(_)))) && !tool_result(&rmcp_client);
        if !(tool_result(&client) && another_result) {
            assert_eq!(outcome(&client), outcome(&rmcp_client));
        }
        let (server, rmcp_server) = (ours::<RoleServer>(None, line), theirs::<RoleServer>(line));
        assert_eq!(outcome(&server), outcome(&rmcp_server));
        assert_eq!(tool_call_meta(&server), tool_call_meta(&rmcp_server), "where a tool call's `_meta` is kept");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fuzz target's seeds, checked here too: what they hold is read as rmcp reads it.
    #[test]
    fn the_fuzz_seeds_read_as_rmcp_reads_them() {
        let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/mcp_lines");
        let mut checked = 0;
        for seed in std::fs::read_dir(seeds).unwrap() {
            check_against_rmcp(&std::fs::read(seed.unwrap().path()).unwrap());
            checked += 1;
        }
        assert!(checked > 5, "the seeds are there");
    }
}
