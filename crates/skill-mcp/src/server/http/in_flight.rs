//! The requests the gateway is still answering, so that a stop answers them before it
//! ends the sessions: rmcp drops a request whose service is cancelled unanswered (its
//! client reads an "empty response" error, and the gateway logs one for each).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use tokio::sync::Notify;

/// How many requests are being answered, and who waits for none to be.
#[derive(Clone, Default)]
pub(super) struct InFlight(Arc<Count>);

#[derive(Default)]
struct Count {
    answering: AtomicUsize,
    idle: Notify,
}

/// One request being answered, until its response's body has ended (or was dropped).
struct Answering(InFlight);

impl Drop for Answering {
    fn drop(&mut self) {
        if self.0.0.answering.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.0.idle.notify_waiters();
        }
    }
}

impl InFlight {
    fn enter(&self) -> Answering {
        self.0.answering.fetch_add(1, Ordering::AcqRel);
        Answering(self.clone())
    }

    /// Returns once no request is being answered.
    pub(super) async fn idle(&self) {
        loop {
            let notified = self.0.idle.notified();
            tokio::pin!(notified);
            // Registered before the count is read, so a last answer in between wakes it.
            notified.as_mut().enable();
            if self.0.answering.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// Counts each request until its response has been sent whole. A `GET` is left out: it
/// opens a 2025-11-25 session's stream, which only the end of the session ends.
pub(super) async fn track(State(in_flight): State<InFlight>, request: Request, next: Next) -> Response {
    if request.method() == axum::http::Method::GET {
        return next.run(request).await;
    }
    let answering = in_flight.enter();
    next.run(request).await.map(|body| Body::new(Tracked { body, _answering: answering }))
}

/// A response's body, counted as being answered until it ends or is dropped.
struct Tracked {
    body: Body,
    _answering: Answering,
}

impl HttpBody for Tracked {
    type Data = <Body as HttpBody>::Data;
    type Error = <Body as HttpBody>::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn idle_waits_for_the_last_answer() {
        let in_flight = InFlight::default();
        in_flight.idle().await;
        let first = in_flight.enter();
        let second = in_flight.enter();
        let waiting = tokio::spawn({
            let in_flight = in_flight.clone();
            async move { in_flight.idle().await }
        });
        drop(first);
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "one request is still being answered");
        drop(second);
        waiting.await.unwrap();
    }
}
