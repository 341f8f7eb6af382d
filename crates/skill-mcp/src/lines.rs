//! MCP over newline-delimited JSON, the stdio transport (an upstream server's pipes, and
//! the gateway's own stdin and stdout): rmcp's framing and rules, with the two messages
//! on every tool call's path read directly.
//!
//! rmcp reads each line as its whole message union: untagged enums that buffer the
//! message and try each variant in turn (a `tools/call` result is the sixteenth of
//! twenty). That was half a client's work per call. Here a tool call's result (on the
//! client side, for a call this transport sent) and a tool call's request (on the
//! server side) are read as their own types. Every other line, and every line the direct
//! read refuses, goes to rmcp's codec, so what is accepted, ignored or answered as
//! invalid stays rmcp's.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::StreamExt;
use rmcp::model::{ErrorData, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::{DEFAULT_MAX_LINE_LENGTH, JsonRpcMessageCodec, JsonRpcMessageCodecError};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;
use tokio_util::bytes::{Buf, BytesMut};
use tokio_util::codec::{Decoder, FramedRead};
use tokio_util::sync::CancellationToken;

#[cfg(all(any(fuzzing, test), feature = "server"))]
mod check;
mod direct;
mod lane;

#[cfg(all(any(fuzzing, test), feature = "server"))]
pub use check::check_against_rmcp;
pub(crate) use direct::Direct;
#[cfg(feature = "server")]
pub(crate) use lane::{AnswerCall, ServedCalls};
pub(crate) use lane::{LaneCall, UpstreamLane};

/// The stdio transport of one side of an MCP connection: messages read from `R`,
/// written to `W`, one JSON text per line.
pub(crate) struct Lines<Role: Direct, R> {
    read: FramedRead<R, Decode<Role>>,
    output: Output,
    heard: Heard,
    /// An invalid-request answer not yet written; `receive` finishes it first, so a
    /// cancelled `receive` loses no answer.
    reply: Option<Pin<Box<dyn Future<Output = io::Result<()>> + Send>>>,
    /// Cancelled when nothing more can be read.
    ended: Option<CancellationToken>,
}

impl<Role: Direct, R: AsyncRead> Lines<Role, R> {
    pub(crate) fn new(read: R, write: impl AsyncWrite + Send + 'static) -> Self {
        let decode = Decode::new(DEFAULT_MAX_LINE_LENGTH, Role::Sent::default());
        let output = Output(Arc::new(Mutex::new(Some(Box::pin(write)))));
        Self { read: FramedRead::new(read, decode), output, heard: Heard::default(), reply: None, ended: None }
    }

    /// The same transport, cancelling `ended` when its input ends (or fails): from then
    /// on the peer asks nothing more, though it may still read answers.
    #[cfg(feature = "server")]
    pub(crate) fn ending(mut self, ended: CancellationToken) -> Self {
        self.ended = Some(ended);
        self
    }

    /// The count of the requests and notifications this transport reads.
    pub(crate) fn heard(&self) -> Heard {
        self.heard.clone()
    }
}

/// How many requests and notifications a transport has read from its peer. rmcp handles
/// each in a task of its own: a caller that finds the count unchanged since its request
/// went out knows that no such task, for anything read before its answer, is still to run.
#[derive(Clone, Default)]
pub(crate) struct Heard(Arc<AtomicU64>);

impl Heard {
    pub(crate) fn count(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    fn note(&self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}

/// Where a transport writes, shared by rmcp's sends and the lane's; `None` once closed.
#[derive(Clone)]
pub(crate) struct Output(Arc<Mutex<Option<Writer>>>);

type Writer = Pin<Box<dyn AsyncWrite + Send>>;

impl Output {
    /// Writes `message` as one line.
    async fn write(&self, message: &impl serde::Serialize) -> io::Result<()> {
        let line = line_of(message)?;
        self.write_line(&line).await
    }

    /// Writes `line`, a message with its newline, whole.
    async fn write_line(&self, line: &[u8]) -> io::Result<()> {
        let mut write = self.0.lock().await;
        let write = write.as_mut().ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "Transport is closed"))?;
        write.write_all(line).await?;
        write.flush().await
    }

    /// Writes nothing more.
    async fn close(&self) {
        self.0.lock().await.take();
    }
}

/// `message` as a line: its JSON text and a newline.
fn line_of(message: &impl serde::Serialize) -> io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    Ok(line)
}

impl<Role, R> Transport<Role> for Lines<Role, R>
where
    Role: Direct,
    R: AsyncRead + Send + Unpin,
{
    type Error = io::Error;

    fn send(&mut self, item: TxJsonRpcMessage<Role>) -> impl Future<Output = io::Result<()>> + Send + 'static {
        Role::sent(&mut self.read.decoder_mut().sent, &item);
        // Written out now, not in the future: rmcp spawns the future inside one of its
        // own, and each copy of it would otherwise hold the message (about 500 bytes).
        let line = line_of(&item);
        let output = self.output.clone();
        async move { output.write_line(&line?).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<Role>> {
        let message = self.next_message().await;
        if message.is_none() {
            Role::ended(&mut self.read.decoder_mut().sent);
            if let Some(ended) = &self.ended {
                ended.cancel();
            }
        }
        message
    }

    async fn close(&mut self) -> io::Result<()> {
        Role::finish(&mut self.read.decoder_mut().sent).await;
        self.output.close().await;
        Ok(())
    }
}

impl<Role, R> Lines<Role, R>
where
    Role: Direct,
    R: AsyncRead + Send + Unpin,
{
    /// The next message, answering and skipping the lines that are none; `None` once
    /// nothing more can be read.
    async fn next_message(&mut self) -> Option<RxJsonRpcMessage<Role>> {
        loop {
            if let Some(reply) = self.reply.as_mut() {
                reply.await.ok()?;
                self.reply = None;
            }
            match self.read.next().await? {
                Ok(Line::Message(message)) => {
                    if matches!(message, JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_)) {
                        self.heard.note();
                    }
                    if let Some(message) = Role::divert(&mut self.read.decoder_mut().sent, message) {
                        return Some(message);
                    }
                }
                Ok(Line::Invalid) => {
                    let answer =
                        TxJsonRpcMessage::<Role>::error(ErrorData::invalid_request("Invalid request", None), None);
                    self.reply = Some(Box::pin(self.send(answer)));
                }
                Ok(Line::Oversized) => {
                    tracing::error!(
                        max_line_length = DEFAULT_MAX_LINE_LENGTH,
                        "incoming message exceeded the maximum line length, discarding it"
                    );
                }
                Err(error) => {
                    tracing::error!("error reading from stream: {error}");
                    return None;
                }
            }
        }
    }
}

/// One line read.
enum Line<Role: ServiceRole> {
    Message(RxJsonRpcMessage<Role>),
    /// JSON that is no message: answered as an invalid request, as rmcp does.
    Invalid,
    /// A line longer than the bound, skipped.
    Oversized,
}

/// Splits lines, bounded like rmcp's, and reads each: directly where it can, through
/// rmcp's codec otherwise.
struct Decode<Role: Direct> {
    max_line: usize,
    /// How much of the buffer holds no newline.
    scanned: usize,
    /// Skipping the rest of an oversized line.
    discarding: bool,
    sent: Role::Sent,
    rmcp: JsonRpcMessageCodec<RxJsonRpcMessage<Role>>,
}

impl<Role: Direct> Decode<Role> {
    /// Lines of at most `max_line` bytes, read by a side that keeps `sent`.
    fn new(max_line: usize, sent: Role::Sent) -> Self {
        Self { max_line, scanned: 0, discarding: false, sent, rmcp: JsonRpcMessageCodec::default() }
    }
}

impl<Role: Direct> Decoder for Decode<Role> {
    type Item = Line<Role>;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> io::Result<Option<Line<Role>>> {
        loop {
            let end = buf.len().min(self.max_line.saturating_add(1));
            let newline = buf[self.scanned..end].iter().position(|byte| *byte == b'\n');
            let Some(newline) = newline.map(|at| self.scanned + at) else {
                self.scanned = 0;
                if self.discarding {
                    buf.advance(end);
                    if buf.is_empty() {
                        return Ok(None);
                    }
                    continue;
                }
                if buf.len() > self.max_line {
                    buf.advance(end);
                    self.discarding = true;
                    return Ok(Some(Line::Oversized));
                }
                self.scanned = end;
                return Ok(None);
            };
            self.scanned = 0;
            let mut line = buf.split_to(newline + 1);
            if std::mem::take(&mut self.discarding) {
                continue;
            }
            let text = line[..newline].strip_suffix(b"\r").unwrap_or(&line[..newline]);
            // Text only: serde skips the fields it ignores unchecked, where rmcp, which
            // buffers every field, refuses a line that is not UTF-8.
            let direct = std::str::from_utf8(text).ok().and_then(|text| Role::read(&mut self.sent, text));
            if let Some(message) = direct {
                return Ok(Some(Line::Message(message)));
            }
            if let Some(read) = rmcp_read(&mut self.rmcp, &mut line) {
                return Ok(Some(read));
            }
        }
    }

    /// An unfinished last line is dropped: it holds no whole message.
    fn decode_eof(&mut self, buf: &mut BytesMut) -> io::Result<Option<Line<Role>>> {
        let line = self.decode(buf)?;
        if line.is_none() {
            buf.clear();
        }
        Ok(line)
    }
}

/// `line` (with its newline) read by rmcp's codec: `None` when rmcp ignores it (a
/// notification its compatibility rules skip, or no JSON at all).
fn rmcp_read<Role: ServiceRole>(
    codec: &mut JsonRpcMessageCodec<RxJsonRpcMessage<Role>>,
    line: &mut BytesMut,
) -> Option<Line<Role>> {
    match codec.decode(line) {
        Ok(message) => message.map(Line::Message),
        Err(JsonRpcMessageCodecError::Serde(error))
            if matches!(error.classify(), serde_json::error::Category::Data | serde_json::error::Category::Io) =>
        {
            tracing::debug!("protocol error on incoming message: {error}");
            Some(Line::Invalid)
        }
        Err(error) => {
            tracing::debug!("ignoring unparsable incoming message: {error}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use rmcp::RoleClient;
    use serde_json::{Value, json};
    use tokio::io::AsyncReadExt;

    use super::*;

    fn decoder(max_line: usize) -> Decode<RoleClient> {
        Decode::new(max_line, Default::default())
    }

    const PING: &str = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";

    #[test]
    fn lines_rmcp_ignores_are_skipped_within_one_read_of_the_buffer() {
        let mut decode = decoder(DEFAULT_MAX_LINE_LENGTH);
        let mut buf =
            BytesMut::from(format!("not json\n\r\n{{\"method\":\"$/logTrace\",\"params\":{{}}}}\n{PING}").as_bytes());
        assert!(matches!(decode.decode(&mut buf).unwrap(), Some(Line::Message(JsonRpcMessage::Request(_)))));
        assert!(buf.is_empty());
    }

    #[test]
    fn json_that_is_no_message_is_invalid() {
        let mut buf = BytesMut::from(&b"{\"jsonrpc\":\"2.0\",\"foo\":1}\n"[..]);
        assert!(matches!(decoder(DEFAULT_MAX_LINE_LENGTH).decode(&mut buf).unwrap(), Some(Line::Invalid)));
    }

    #[test]
    fn an_oversized_line_is_skipped_whole_and_the_next_read() {
        let mut decode = decoder(PING.len());
        let long = "x".repeat(3 * PING.len());
        // In one buffer.
        let mut buf = BytesMut::from(format!("{long}\n{PING}").as_bytes());
        assert!(matches!(decode.decode(&mut buf).unwrap(), Some(Line::Oversized)));
        assert!(matches!(decode.decode(&mut buf).unwrap(), Some(Line::Message(_))));
        // Arriving in pieces.
        let mut buf = BytesMut::new();
        let mut lines = Vec::new();
        for piece in [&long[..10], &long[10..], "\n", &PING[..5], &PING[5..]] {
            buf.extend_from_slice(piece.as_bytes());
            while let Some(line) = decode.decode(&mut buf).unwrap() {
                lines.push(line);
            }
        }
        assert!(matches!(lines[..], [Line::Oversized, Line::Message(_)]));
        assert!(buf.is_empty());
    }

    #[tokio::test]
    async fn invalid_json_is_answered_and_the_connection_goes_on() {
        let (ours, mut theirs) = tokio::io::duplex(4096);
        let (read, write) = tokio::io::split(ours);
        let mut transport = Lines::<RoleClient, _>::new(read, write);
        theirs.write_all(format!("{{\"jsonrpc\":\"2.0\",\"foo\":1}}\n{PING}").as_bytes()).await.unwrap();
        assert!(matches!(transport.receive().await, Some(JsonRpcMessage::Request(_))));
        let mut answer = vec![0; 4096];
        let read = theirs.read(&mut answer).await.unwrap();
        let answer: Value = serde_json::from_slice(&answer[..read]).unwrap();
        assert_eq!(answer["error"]["code"], -32600, "{answer}");
        drop(theirs);
        assert!(transport.receive().await.is_none(), "the end of the stream ends the transport");
    }

    #[tokio::test]
    async fn requests_and_notifications_are_counted_answers_are_not() {
        let (ours, mut theirs) = tokio::io::duplex(4096);
        let (read, write) = tokio::io::split(ours);
        let mut transport = Lines::<RoleClient, _>::new(read, write);
        let heard = transport.heard();
        let lines = [
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "no"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
        ];
        for (line, count) in lines.iter().zip([0, 0, 1, 2]) {
            theirs.write_all(format!("{line}\n").as_bytes()).await.unwrap();
            assert!(transport.receive().await.is_some(), "{line}");
            assert_eq!(heard.count(), count, "after {line}");
        }
    }
}
