//! Deterministic randomness, ids and clocks: everything the demo varies comes from here, so one
//! seed always gives the same bytes.

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeDelta, Utc};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The demo's "now": every timestamp is an offset from it, never from the wall clock.
pub(crate) fn base_time() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 3, 2)
        .and_then(|day| day.and_hms_opt(9, 0, 0))
        .expect("2026-03-02 09:00:00 is a valid time")
}

/// One independent random stream. Each part of the demo owns a stream of its own, so changing one
/// story does not shift the ids of every other.
pub(crate) struct DemoRng {
    rng: ChaCha8Rng,
    /// For time-ordered ids: the millisecond the next id carries.
    next_millis: Option<u64>,
}

/// Ids one ordered stream can hand out before reaching the next stream's first millisecond.
pub(crate) const ORDERED_IDS_PER_STREAM: u64 = 1 << 24;

/// The millisecond of the first time-ordered id (2024-01-01T00:00:00Z): ids of ordered streams
/// count up from here, [`ORDERED_IDS_PER_STREAM`] apart per stream.
const ORDERED_ORIGIN_MILLIS: u64 = 1_704_067_200_000;

impl DemoRng {
    pub(crate) fn new(seed: u64, stream: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        DemoRng {
            rng,
            next_millis: None,
        }
    }

    /// A stream whose [`DemoRng::uuid`]s are time-ordered (version 7, one millisecond apart,
    /// increasing with `stream`), so rows inserted in generation order append to every index
    /// keyed by them instead of landing at random places. Everything else it draws is what
    /// [`DemoRng::new`] draws.
    pub(crate) fn with_ordered_ids(seed: u64, stream: u64) -> Self {
        DemoRng {
            next_millis: Some(ORDERED_ORIGIN_MILLIS + stream * ORDERED_IDS_PER_STREAM),
            ..DemoRng::new(seed, stream)
        }
    }

    /// A random (version 4, or 7 for an ordered stream) UUID in the lowercase hyphenated form
    /// Dify and Langflow store.
    pub(crate) fn uuid(&mut self) -> String {
        let bytes = self.rng.random::<u128>().to_le_bytes();
        let builder = match self.next_millis.as_mut() {
            None => uuid::Builder::from_random_bytes(bytes),
            Some(millis) => {
                let at = *millis;
                *millis += 1;
                let mut random = [0u8; 10];
                random.copy_from_slice(&bytes[..10]);
                uuid::Builder::from_unix_timestamp_millis(at, &random)
            }
        };
        builder.into_uuid().hyphenated().to_string()
    }

    /// Eight lowercase hex digits, as Langflow appends to knowledge-base names.
    pub(crate) fn hex8(&mut self) -> String {
        format!("{:08x}", self.rng.random::<u32>())
    }

    pub(crate) fn below(&mut self, bound: usize) -> usize {
        self.rng.random_range(0..bound)
    }

    pub(crate) fn between(&mut self, low: i64, high_inclusive: i64) -> i64 {
        self.rng.random_range(low..=high_inclusive)
    }

    pub(crate) fn chance(&mut self, probability: f64) -> bool {
        self.rng.random_bool(probability)
    }

    pub(crate) fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// Langflow's timestamps are timezone-aware; the demo derives them from the same base.
pub(crate) fn utc(at: NaiveDateTime) -> DateTime<Utc> {
    at.and_utc()
}

pub(crate) fn seconds(count: i64) -> TimeDelta {
    TimeDelta::seconds(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_stream_repeat_and_streams_differ() {
        let mut first = DemoRng::new(7, 1);
        let mut again = DemoRng::new(7, 1);
        let mut other_stream = DemoRng::new(7, 2);
        let a: Vec<String> = (0..4).map(|_| first.uuid()).collect();
        let b: Vec<String> = (0..4).map(|_| again.uuid()).collect();
        let c: Vec<String> = (0..4).map(|_| other_stream.uuid()).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn ordered_ids_increase_within_and_across_streams_and_draw_the_same_randomness() {
        let mut first = DemoRng::with_ordered_ids(7, 1_000);
        let mut next = DemoRng::with_ordered_ids(7, 1_001);
        let mut plain = DemoRng::new(7, 1_000);
        let mut ids: Vec<String> = (0..50).map(|_| first.uuid()).collect();
        ids.extend((0..50).map(|_| next.uuid()));
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        for id in &ids {
            let parsed = uuid::Uuid::parse_str(id).expect("a valid uuid");
            assert_eq!(parsed.get_version_num(), 7, "{id}");
            assert_eq!(id, &id.to_lowercase());
        }
        // The ids take the place of random ones: later draws do not shift.
        (0..50).for_each(|_| drop(plain.uuid()));
        assert_eq!(first.below(1_000_000), plain.below(1_000_000));
        assert_eq!(
            DemoRng::with_ordered_ids(7, 1_000).uuid(),
            DemoRng::with_ordered_ids(7, 1_000).uuid()
        );
    }

    #[test]
    fn uuids_are_lowercase_hyphenated_v4() {
        let mut rng = DemoRng::new(1, 0);
        for _ in 0..100 {
            let id = rng.uuid();
            assert_eq!(id.len(), 36);
            assert_eq!(id, id.to_lowercase());
            let parsed = uuid::Uuid::parse_str(&id).expect("a valid uuid");
            assert_eq!(parsed.get_version_num(), 4, "{id}");
        }
    }

    #[test]
    fn hex8_has_eight_hex_digits() {
        let mut rng = DemoRng::new(3, 0);
        let hex = rng.hex8();
        assert_eq!(hex.len(), 8);
        assert!(hex.chars().all(|c| c.is_ascii_hexdigit()));
    }
}
