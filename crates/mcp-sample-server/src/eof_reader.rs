//! A reader that tells when its input ends, so the server can exit on stdin EOF even
//! while a handler (such as `hang` or an open subscription) has not finished.

use std::{
    io,
    pin::Pin,
    task::{Context, Poll},
};

use tokio::{
    io::{AsyncRead, ReadBuf},
    sync::watch,
};

/// Wraps a reader and sets a flag once it has returned end of input.
#[derive(Debug)]
pub(crate) struct EofNotifyingReader<R> {
    inner: R,
    input_closed: watch::Sender<bool>,
}

impl<R> EofNotifyingReader<R> {
    /// `input_closed` becomes `true` at end of input.
    pub(crate) fn new(inner: R, input_closed: watch::Sender<bool>) -> Self {
        Self { inner, input_closed }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for EofNotifyingReader<R> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let filled_before = buf.filled().len();
        let poll = Pin::new(&mut this.inner).poll_read(cx, buf);
        // A successful read that adds nothing to a buffer with room left is end of input.
        if let Poll::Ready(Ok(())) = poll
            && buf.filled().len() == filled_before
            && buf.remaining() > 0
        {
            this.input_closed.send_replace(true);
        }
        poll
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    #[tokio::test]
    async fn flags_end_of_input_after_the_last_byte() {
        let (input_closed, mut closed_seen) = watch::channel(false);
        let mut reader = EofNotifyingReader::new(&b"line\n"[..], input_closed);
        let mut text = String::new();
        reader.read_exact(&mut [0; 5]).await.unwrap();
        assert!(!*closed_seen.borrow_and_update());
        reader.read_to_string(&mut text).await.unwrap();
        assert_eq!(text, "");
        assert!(*closed_seen.borrow_and_update());
    }
}
