//! Blocking work (reading files, parsing a large document, `fsync`) kept off the async
//! runtime, so that one skill's slow start never stalls the others or a server.

/// `work` run on the runtime's blocking threads ([`tokio::task::spawn_blocking`]), so that
/// it never stalls the other tasks of the thread it was called from (another skill
/// starting, a server answering). A panic in `work` goes on in the caller, as if `work`
/// had run there; the error says the runtime shut down before `work` could start.
/// Outside a tokio runtime, `work` runs in place.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let caller = std::thread::current().id();
/// let worker = skill_core::off_runtime(|| std::thread::current().id()).await.unwrap();
/// assert_ne!(worker, caller);
/// # }
/// ```
pub async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Ok(work());
    }
    match tokio::task::spawn_blocking(work).await {
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        outcome => outcome,
    }
}

/// Drops `value` on the runtime's blocking threads without waiting for it: freeing a
/// large tree (a parsed document of many megabytes) takes milliseconds the caller need
/// not spend. Outside a tokio runtime, it is dropped in place.
pub fn drop_off_runtime<T: Send + 'static>(value: T) {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => drop(runtime.spawn_blocking(move || drop(value))),
        Err(_) => drop(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_off_the_runtime_goes_on_in_the_caller() {
        let caller = tokio::spawn(off_runtime(|| panic!("a parser bug")));
        let payload = caller.await.unwrap_err().into_panic();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"a parser bug"));
    }

    #[test]
    fn outside_a_runtime_the_work_runs_in_place() {
        let caller = std::thread::current().id();
        let ran = std::pin::pin!(off_runtime(|| std::thread::current().id()));
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        let std::task::Poll::Ready(worker) = ran.poll(&mut context) else { panic!("the work waited") };
        assert_eq!(worker.unwrap(), caller);
    }

    /// Sends the id of the thread it is dropped on.
    struct Dropped(std::sync::mpsc::Sender<std::thread::ThreadId>);

    impl Drop for Dropped {
        fn drop(&mut self) {
            let _ = self.0.send(std::thread::current().id());
        }
    }

    #[tokio::test]
    async fn a_value_is_dropped_on_a_blocking_thread() {
        let (sender, dropped_on) = std::sync::mpsc::channel();
        drop_off_runtime(Dropped(sender));
        let thread = tokio::task::spawn_blocking(move || dropped_on.recv()).await.unwrap().unwrap();
        assert_ne!(thread, std::thread::current().id());
    }

    #[test]
    fn outside_a_runtime_a_value_is_dropped_in_place() {
        let (sender, dropped_on) = std::sync::mpsc::channel();
        drop_off_runtime(Dropped(sender));
        assert_eq!(dropped_on.try_recv(), Ok(std::thread::current().id()));
    }
}
