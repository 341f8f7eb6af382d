//! A rate limit's token buckets in the process: one a client, each the theoretical
//! arrival time of the next call (GCRA), as the shared buckets keep it in Redis, so that
//! both answer alike and the console reads either the same way.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The buckets of one limit: `burst` tokens each, one back every `interval`.
pub(crate) struct Buckets {
    /// Nanoseconds between two tokens.
    interval: u64,
    burst: u32,
    /// The times below are nanoseconds since this instant.
    epoch: Instant,
    clients: Mutex<HashMap<String, Bucket>>,
}

/// One client's bucket.
#[derive(Default)]
struct Bucket {
    /// When the bucket will be full again (0: it has never been drawn from).
    full_at: u64,
    /// The calls it refused.
    refused: u64,
}

/// A client's bucket as it is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketView {
    /// The client it counts.
    pub client: String,
    /// The calls it would let through now, back to back.
    pub available: u32,
    /// How long until it lets a call through (zero while `available` is not).
    pub next_in: Duration,
    /// How long until it is full again.
    pub full_in: Duration,
    /// The calls of this client the limit refused, as this process counted them.
    pub refused: u64,
}

impl BucketView {
    /// The bucket of `client` that holds `burst` tokens, one back every `interval`, and
    /// is full again after `debt`.
    pub(crate) fn of(client: String, debt: Duration, interval: Duration, burst: u32, refused: u64) -> Self {
        let (debt, interval) = (nanos(debt), nanos(interval).max(1));
        let tolerance = interval * u64::from(burst.saturating_sub(1));
        let available = (interval * u64::from(burst)).saturating_sub(debt) / interval;
        Self {
            client,
            available: u32::try_from(available).unwrap_or(u32::MAX),
            next_in: Duration::from_nanos(debt.saturating_sub(tolerance)),
            full_in: Duration::from_nanos(debt),
            refused,
        }
    }
}

impl Buckets {
    pub(crate) fn new(per_minute: NonZeroU32, burst: NonZeroU32) -> Self {
        Self {
            interval: (60_000_000_000 / u64::from(per_minute.get())).max(1),
            burst: burst.get(),
            epoch: Instant::now(),
            clients: Mutex::default(),
        }
    }

    /// Takes a token from `client`'s bucket; when it has none, counts the refusal and
    /// answers how long until it has one.
    pub(crate) fn take(&self, client: &str) -> Result<(), Duration> {
        self.take_at(client, self.now())
    }

    /// [`Self::take`] at `now` (nanoseconds since the epoch).
    fn take_at(&self, client: &str, now: u64) -> Result<(), Duration> {
        let tolerance = self.interval * u64::from(self.burst - 1);
        let mut clients = self.lock();
        let bucket = match clients.get_mut(client) {
            Some(bucket) => bucket,
            // A client's first call is the only one that makes its bucket's key.
            None => clients.entry(client.to_owned()).or_default(),
        };
        let full_at = bucket.full_at.max(now);
        if full_at - now > tolerance {
            bucket.refused += 1;
            return Err(Duration::from_nanos(full_at - now - tolerance));
        }
        bucket.full_at = full_at + self.interval;
        Ok(())
    }

    /// Counts a refusal of `client`'s call by the same limit's shared bucket.
    #[cfg(feature = "redis")]
    pub(crate) fn refused(&self, client: &str) {
        let mut clients = self.lock();
        match clients.get_mut(client) {
            Some(bucket) => bucket.refused += 1,
            None => {
                clients.insert(client.to_owned(), Bucket { full_at: 0, refused: 1 });
            }
        }
    }

    /// Every client's bucket as it is now, by client name.
    pub(crate) fn views(&self) -> Vec<BucketView> {
        self.views_at(self.now())
    }

    /// [`Self::views`] at `now` (nanoseconds since the epoch).
    fn views_at(&self, now: u64) -> Vec<BucketView> {
        let interval = Duration::from_nanos(self.interval);
        let mut views: Vec<BucketView> = self
            .lock()
            .iter()
            .map(|(client, bucket)| {
                let debt = Duration::from_nanos(bucket.full_at.saturating_sub(now));
                BucketView::of(client.clone(), debt, interval, self.burst, bucket.refused)
            })
            .collect();
        views.sort_by(|a, b| a.client.cmp(&b.client));
        views
    }

    /// The refusals this process counted, by client (for the shared buckets' views).
    #[cfg(feature = "redis")]
    pub(crate) fn refusals(&self) -> HashMap<String, u64> {
        self.lock().iter().map(|(client, bucket)| (client.clone(), bucket.refused)).collect()
    }

    fn now(&self) -> u64 {
        nanos(self.epoch.elapsed())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Bucket>> {
        self.clients.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buckets(per_minute: u32, burst: u32) -> Buckets {
        Buckets::new(NonZeroU32::new(per_minute).unwrap(), NonZeroU32::new(burst).unwrap())
    }

    const SECOND: u64 = 1_000_000_000;

    #[test]
    fn a_bucket_lets_its_burst_through_then_names_the_wait_and_counts_the_refusals() {
        // Three tokens, one back a second.
        let buckets = buckets(60, 3);
        let start = 5 * SECOND;
        for _ in 0..3 {
            assert_eq!(buckets.take_at("bob", start), Ok(()));
        }
        assert_eq!(buckets.take_at("bob", start + SECOND / 4), Err(Duration::from_millis(750)));
        assert_eq!(buckets.take_at("bob", start + SECOND / 2), Err(Duration::from_millis(500)));
        assert_eq!(buckets.take_at("bob", start + SECOND), Ok(()));
        assert_eq!(buckets.take_at("alice", start + SECOND), Ok(()));
        let views = buckets.views_at(start + SECOND);
        let names: Vec<&str> = views.iter().map(|view| view.client.as_str()).collect();
        assert_eq!(names, ["alice", "bob"]);
        let (alice, bob) = (&views[0], &views[1]);
        assert_eq!(
            (alice.available, alice.refused, alice.next_in, alice.full_in),
            (2, 0, Duration::ZERO, Duration::from_secs(1))
        );
        assert_eq!(
            (bob.available, bob.refused, bob.next_in, bob.full_in),
            (0, 2, Duration::from_secs(1), Duration::from_secs(3))
        );
        // Once full again, a bucket lets its whole burst through.
        let later = start + 10 * SECOND;
        assert_eq!(buckets.views_at(later)[1].available, 3);
        for _ in 0..3 {
            assert_eq!(buckets.take_at("bob", later), Ok(()));
        }
        assert!(buckets.take_at("bob", later).is_err());
    }

    #[test]
    fn a_view_counts_the_tokens_back_since_the_last_call() {
        let second = Duration::from_secs(1);
        // Ten tokens, one a second, full again in 3.5 s: six and a half are there.
        let view = BucketView::of("bob".to_owned(), Duration::from_millis(3500), second, 10, 1);
        assert_eq!((view.available, view.next_in, view.full_in), (6, Duration::ZERO, Duration::from_millis(3500)));
        // Full again in 9.5 s: none is there, and the next comes in half a second.
        let view = BucketView::of("bob".to_owned(), Duration::from_millis(9500), second, 10, 1);
        assert_eq!((view.available, view.next_in), (0, Duration::from_millis(500)));
        assert_eq!(BucketView::of("bob".to_owned(), Duration::ZERO, second, 10, 0).available, 10);
    }
}
