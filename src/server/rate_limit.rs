//! A token bucket per client, for the endpoints that spend the operator's API key.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::config::RateLimit;

/// Buckets kept before full ones (clients that came back to their allowance) are dropped.
const SWEEP_AT: usize = 10_000;

/// One client's allowance: `tokens` left as of `at`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    /// A client seen for the first time starts with the whole burst.
    pub fn full(limit: RateLimit, now: Instant) -> Self {
        Bucket {
            tokens: f64::from(limit.burst),
            at: now,
        }
    }

    fn refill(&mut self, limit: RateLimit, now: Instant) {
        let per_sec = f64::from(limit.per_minute) / 60.0;
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * per_sec).min(f64::from(limit.burst));
        self.at = now;
    }

    /// Takes one token, or says how long until one is there.
    pub fn take(&mut self, limit: RateLimit, now: Instant) -> Result<(), Duration> {
        self.refill(limit, now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return Ok(());
        }
        let per_sec = f64::from(limit.per_minute) / 60.0;
        Err(Duration::from_secs_f64((1.0 - self.tokens) / per_sec))
    }

    fn is_full(&self, limit: RateLimit, now: Instant) -> bool {
        let mut probe = *self;
        probe.refill(limit, now);
        probe.tokens >= f64::from(limit.burst)
    }
}

/// The key a client's address is counted under: an IPv6 client by its /64 (which one host
/// holds), an IPv4-mapped address as its IPv4.
pub fn client_key(client: IpAddr) -> IpAddr {
    match client {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & (u128::MAX << 64)).into()),
        },
        v4 => v4,
    }
}

/// The buckets of every client (by address, or by any other key such as a user name).
#[derive(Debug)]
pub struct RateLimiter<K = IpAddr> {
    limit: RateLimit,
    buckets: Mutex<HashMap<K, Bucket>>,
}

impl<K: std::hash::Hash + Eq> RateLimiter<K> {
    pub fn new(limit: RateLimit) -> Self {
        RateLimiter {
            limit,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Lets `key` take one more token, or says how long it has to wait.
    pub fn take(&self, key: K, now: Instant) -> Result<(), Duration> {
        let Ok(mut buckets) = self.buckets.lock() else {
            return Ok(());
        };
        if buckets.len() >= SWEEP_AT {
            let limit = self.limit;
            buckets.retain(|_, b| !b.is_full(limit, now));
        }
        buckets
            .entry(key)
            .or_insert_with(|| Bucket::full(self.limit, now))
            .take(self.limit, now)
    }
}

impl<K: std::hash::Hash + Eq> RateLimiter<K> {
    /// Gives back the token `key` took (an attempt that turned out not to count).
    pub fn refund(&self, key: &K) {
        if let Ok(mut buckets) = self.buckets.lock() {
            if let Some(b) = buckets.get_mut(key) {
                b.tokens = (b.tokens + 1.0).min(f64::from(self.limit.burst));
            }
        }
    }
}

impl RateLimiter<IpAddr> {
    /// Lets `client` start one more turn, or says how long it has to wait.
    pub fn check(&self, client: IpAddr, now: Instant) -> Result<(), Duration> {
        self.take(client_key(client), now)
    }
}

/// Failed sign-in attempts allowed: 10 a minute, 5 at once, per client address and per user
/// name.
const SIGN_IN_LIMIT: RateLimit = RateLimit {
    per_minute: 10,
    burst: 5,
};

/// The sign-in limits, shared by every serving thread: one bucket per client address and one
/// per user name, so neither a single client nor many clients can guess one password fast.
pub struct SignInLimits {
    pub by_client: RateLimiter<IpAddr>,
    pub by_name: RateLimiter<String>,
}

impl Default for SignInLimits {
    fn default() -> Self {
        SignInLimits {
            by_client: RateLimiter::new(SIGN_IN_LIMIT),
            by_name: RateLimiter::new(SIGN_IN_LIMIT),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: RateLimit = RateLimit {
        per_minute: 6,
        burst: 2,
    };

    #[test]
    fn a_burst_then_one_token_per_interval() {
        let t0 = Instant::now();
        let mut b = Bucket::full(LIMIT, t0);
        assert!(b.take(LIMIT, t0).is_ok());
        assert!(b.take(LIMIT, t0).is_ok());
        let wait = b.take(LIMIT, t0).unwrap_err();
        assert_eq!(wait.as_secs(), 10, "6 a minute: one every 10 s");
        assert!(b.take(LIMIT, t0 + Duration::from_secs(5)).is_err());
        assert!(b.take(LIMIT, t0 + Duration::from_secs(10)).is_ok());
        // A long pause refills to the burst, never beyond.
        let later = t0 + Duration::from_secs(3600);
        assert!(b.take(LIMIT, later).is_ok());
        assert!(b.take(LIMIT, later).is_ok());
        assert!(b.take(LIMIT, later).is_err());
    }

    #[test]
    fn clients_have_their_own_buckets_and_ipv6_counts_by_its_64() {
        let limiter = RateLimiter::new(LIMIT);
        let now = Instant::now();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        assert!(limiter.check(a, now).is_ok());
        assert!(limiter.check(a, now).is_ok());
        assert!(limiter.check(a, now).is_err());
        assert!(limiter.check(b, now).is_ok());
        let v6a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let v6b: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        assert!(limiter.check(v6a, now).is_ok());
        assert!(limiter.check(v6b, now).is_ok());
        assert!(limiter.check(v6a, now).is_err(), "same /64, same bucket");
        let mapped: IpAddr = "::ffff:192.0.2.2".parse().unwrap();
        assert!(limiter.check(mapped, now).is_ok());
        assert!(
            limiter.check(mapped, now).is_err(),
            "mapped IPv4 is that IPv4"
        );
    }
}
