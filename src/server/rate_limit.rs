//! A token bucket per client, for the endpoints that spend the operator's API key.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::config::RateLimit;

/// The most buckets one limiter keeps. Past it, buckets back at their full allowance are
/// dropped first (forgetting them changes nothing), then the longest untouched eighth: memory
/// stays bounded whatever number of clients or names arrive.
pub const MAX_BUCKETS: usize = 10_000;

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
        if buckets.len() >= MAX_BUCKETS && !buckets.contains_key(&key) {
            make_room(&mut buckets, self.limit, now);
        }
        buckets
            .entry(key)
            .or_insert_with(|| Bucket::full(self.limit, now))
            .take(self.limit, now)
    }

    /// Whether `key` has its whole allowance: no attempt of its counts against it now.
    pub fn is_untouched(&self, key: &K, now: Instant) -> bool {
        self.buckets
            .lock()
            .map(|buckets| buckets.get(key).is_none_or(|b| b.is_full(self.limit, now)))
            .unwrap_or(true)
    }

    /// How many buckets are kept (for the memory bound's test).
    pub fn len(&self) -> usize {
        self.buckets.lock().map(|b| b.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Drops the full buckets, then, if that freed too little, the eighth least recently touched.
fn make_room<K: std::hash::Hash + Eq>(
    buckets: &mut HashMap<K, Bucket>,
    limit: RateLimit,
    now: Instant,
) {
    buckets.retain(|_, b| !b.is_full(limit, now));
    let target = MAX_BUCKETS * 7 / 8;
    if buckets.len() <= target {
        return;
    }
    let excess = buckets.len() - target;
    let mut times: Vec<Instant> = buckets.values().map(|b| b.at).collect();
    let (_, newest_dropped, _) = times.select_nth_unstable(excess - 1);
    let newest_dropped = *newest_dropped;
    let mut left = excess;
    buckets.retain(|_, b| {
        let drop = left > 0 && b.at <= newest_dropped;
        left -= usize::from(drop);
        !drop
    });
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

/// Failed sign-in attempts allowed per client (10 a minute, 5 at once), and per name from one
/// client.
const SIGN_IN_LIMIT: RateLimit = RateLimit {
    per_minute: 10,
    burst: 5,
};

/// Failed sign-in attempts on one name from every client together: the ceiling on guessing one
/// password from many addresses.
const NAME_CEILING: RateLimit = RateLimit {
    per_minute: 30,
    burst: 15,
};

/// A failed attempt on a name from a client costs it its good standing for that name for a
/// minute.
const STANDING: RateLimit = RateLimit {
    per_minute: 1,
    burst: 1,
};

/// A sign-in name as the limits count it: a fixed-size digest of the trimmed, lower-cased
/// name (and of the client, for the per-client count), so what a limiter keeps per name is 16
/// bytes whatever was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NameKey([u8; 16]);

impl NameKey {
    /// The name alone.
    pub fn of(name: &str) -> Self {
        Self::digest(name, None)
    }

    /// The name as tried from one client (by its [`client_key`]).
    pub fn from_client(name: &str, client: Option<IpAddr>) -> Self {
        Self::digest(name, Some(client.map(client_key)))
    }

    fn digest(name: &str, client: Option<Option<IpAddr>>) -> Self {
        use sha2::{Digest, Sha256};
        let mut hash = Sha256::new();
        hash.update(name.trim().to_lowercase().as_bytes());
        if let Some(client) = client {
            hash.update([0xff]);
            hash.update(
                client
                    .map(|ip| ip.to_string())
                    .unwrap_or_default()
                    .as_bytes(),
            );
        }
        let mut key = [0u8; 16];
        key.copy_from_slice(&hash.finalize()[..16]);
        NameKey(key)
    }
}

/// The sign-in limits, shared by every serving thread. Each client has its own bucket, and its
/// own bucket for each name it tries, so nobody's failures lock another client out of a name.
/// Many clients guessing one name together meet `by_name`'s ceiling; past it only a client in
/// good standing for that name (no failed attempt of its own in the window) is let through to
/// check its password: the owner signs in, and a guessing address gets one try a minute.
pub struct SignInLimits {
    pub by_client: RateLimiter<IpAddr>,
    pub by_name_from_client: RateLimiter<NameKey>,
    pub by_name: RateLimiter<NameKey>,
    /// A token taken per failed attempt, per name and client: a client whose bucket here is
    /// full is in good standing for that name.
    pub failed_lately: RateLimiter<NameKey>,
}

impl Default for SignInLimits {
    fn default() -> Self {
        SignInLimits {
            by_client: RateLimiter::new(SIGN_IN_LIMIT),
            by_name_from_client: RateLimiter::new(SIGN_IN_LIMIT),
            by_name: RateLimiter::new(NAME_CEILING),
            failed_lately: RateLimiter::new(STANDING),
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
    fn a_limiter_keeps_a_bounded_number_of_buckets() {
        let limiter: RateLimiter<u32> = RateLimiter::new(LIMIT);
        let now = Instant::now();
        for key in 0..(MAX_BUCKETS as u32 * 3) {
            assert!(limiter.take(key, now).is_ok());
        }
        assert!(limiter.len() <= MAX_BUCKETS, "{}", limiter.len());
        let recent = MAX_BUCKETS as u32 * 3 - 1;
        assert!(limiter.take(recent, now).is_ok());
        assert!(
            limiter.take(recent, now).is_err(),
            "the newest buckets are kept"
        );
    }

    #[test]
    fn name_keys_are_fixed_size_and_fold_case_and_client() {
        let long = "x".repeat(2 * 1024 * 1024);
        assert_eq!(std::mem::size_of_val(&NameKey::of(&long)), 16);
        assert_eq!(NameKey::of(" Alice "), NameKey::of("alice"));
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        assert_ne!(
            NameKey::from_client("alice", Some(a)),
            NameKey::from_client("alice", Some(b))
        );
        assert_ne!(NameKey::from_client("alice", Some(a)), NameKey::of("alice"));
        assert_eq!(
            NameKey::from_client("alice", Some("2001:db8::1".parse().unwrap())),
            NameKey::from_client("alice", Some("2001:db8::2".parse().unwrap()))
        );
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
