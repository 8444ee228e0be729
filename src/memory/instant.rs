//! Stored timestamps read as instants. Writers store a message's time in many text forms (Python's
//! `isoformat()`, JavaScript's `toISOString()`, PostgreSQL's text output, naive UTC times, other
//! offsets); compared as text they order wrongly (`…:00.000000+00:00` sorts after `…:00+00:00`),
//! so every comparison goes through [`parse_instant`] first.

use chrono::{DateTime, NaiveDate, NaiveTime, TimeDelta, Utc};

/// Why a stored timestamp is not a date and time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "timestamp {text:?} is not a date and time (YYYY-MM-DD HH:MM:SS, an optional fraction of \
     up to 9 digits and an optional zone such as Z or +02:00): {reason}"
)]
pub struct InstantError {
    pub text: String,
    pub reason: &'static str,
}

/// The instant a stored timestamp names, to the nanosecond. Accepted: `YYYY-MM-DD`, then `T` or a
/// space, `HH:MM` or `HH:MM:SS`, an optional fraction of 1 to 9 digits, then an optional zone:
/// `Z`, `UTC`, or an offset `±HH`, `±HHMM`, `±HH:MM` (`±HH:MM:SS` as PostgreSQL prints historical
/// offsets), with or without a space before it. No zone means UTC (Langflow stores naive UTC).
pub fn parse_instant(text: &str) -> Result<DateTime<Utc>, InstantError> {
    let fail = |reason| InstantError {
        text: text.to_owned(),
        reason,
    };
    let mut reader = Reader(text.trim().as_bytes());
    let year = reader.digits(4).ok_or_else(|| fail("no 4-digit year"))?;
    reader
        .expect(b'-')
        .ok_or_else(|| fail("no '-' after the year"))?;
    let month = reader.digits(2).ok_or_else(|| fail("no 2-digit month"))?;
    reader
        .expect(b'-')
        .ok_or_else(|| fail("no '-' after the month"))?;
    let day = reader.digits(2).ok_or_else(|| fail("no 2-digit day"))?;
    let date = NaiveDate::from_ymd_opt(year as i32, month, day)
        .ok_or_else(|| fail("no such calendar date"))?;
    match reader.next() {
        Some(b'T' | b't' | b' ') => {}
        _ => return Err(fail("no 'T' or space between the date and the time")),
    }
    let hour = reader.digits(2).ok_or_else(|| fail("no 2-digit hour"))?;
    reader
        .expect(b':')
        .ok_or_else(|| fail("no ':' after the hour"))?;
    let minute = reader.digits(2).ok_or_else(|| fail("no 2-digit minute"))?;
    let second = if reader.peek() == Some(b':') {
        reader.next();
        reader.digits(2).ok_or_else(|| fail("no 2-digit second"))?
    } else {
        0
    };
    let mut nanos = 0;
    if matches!(reader.peek(), Some(b'.' | b',')) {
        reader.next();
        let fraction = reader.take_while(|b| b.is_ascii_digit());
        if fraction.is_empty() || fraction.len() > 9 {
            return Err(fail("a fraction of a second has 1 to 9 digits"));
        }
        nanos = fraction
            .iter()
            .fold(0u32, |n, digit| n * 10 + u32::from(digit - b'0'))
            * 10u32.pow(9 - fraction.len() as u32);
    }
    let time = NaiveTime::from_hms_nano_opt(hour, minute, second, nanos)
        .ok_or_else(|| fail("no such time of day"))?;
    let offset = zone_offset(&mut reader).ok_or_else(|| fail("unreadable zone"))?;
    if !reader.0.is_empty() {
        return Err(fail("unexpected text after the time"));
    }
    Ok(date.and_time(time).and_utc() - offset)
}

/// The zone after the time: how far ahead of UTC it is. Nothing means UTC.
fn zone_offset(reader: &mut Reader<'_>) -> Option<TimeDelta> {
    if reader.peek() == Some(b' ') {
        reader.next();
    }
    match reader.peek() {
        None => Some(TimeDelta::zero()),
        Some(b'Z' | b'z') => {
            reader.next();
            Some(TimeDelta::zero())
        }
        Some(b'U') => {
            reader.expect_all(b"UTC")?;
            Some(TimeDelta::zero())
        }
        Some(sign @ (b'+' | b'-')) => {
            reader.next();
            let hours = reader.digits(2)?;
            let mut minutes = 0;
            let mut seconds = 0;
            match reader.peek() {
                Some(b':') => {
                    reader.next();
                    minutes = reader.digits(2)?;
                    if reader.peek() == Some(b':') {
                        reader.next();
                        seconds = reader.digits(2)?;
                    }
                }
                Some(b'0'..=b'9') => minutes = reader.digits(2)?,
                _ => {}
            }
            if hours > 23 || minutes > 59 || seconds > 59 {
                return None;
            }
            let delta = TimeDelta::seconds(i64::from(hours * 3600 + minutes * 60 + seconds));
            Some(if sign == b'-' { -delta } else { delta })
        }
        Some(_) => None,
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.0.first().copied()
    }

    fn next(&mut self) -> Option<u8> {
        let (first, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(*first)
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    fn expect_all(&mut self, bytes: &[u8]) -> Option<()> {
        let rest = self.0.strip_prefix(bytes)?;
        self.0 = rest;
        Some(())
    }

    fn take_while(&mut self, keep: impl Fn(u8) -> bool) -> &[u8] {
        let end = self
            .0
            .iter()
            .position(|b| !keep(*b))
            .unwrap_or(self.0.len());
        let (taken, rest) = self.0.split_at(end);
        self.0 = rest;
        taken
    }

    /// Exactly `count` ASCII digits.
    fn digits(&mut self, count: usize) -> Option<u32> {
        let digits = self.0.get(..count)?;
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.0 = &self.0[count..];
        Some(
            digits
                .iter()
                .fold(0, |n, digit| n * 10 + u32::from(digit - b'0')),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{SecondsFormat, TimeZone};
    use proptest::prelude::*;

    fn utc(text: &str) -> DateTime<Utc> {
        parse_instant(text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn at(h: u32, m: u32, s: u32, nanos: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 1, h, m, s).unwrap() + TimeDelta::nanoseconds(nanos.into())
    }

    #[test]
    fn every_writers_form_of_one_instant_is_the_same_instant() {
        let ten = at(10, 0, 0, 0);
        for text in [
            "2026-03-01T10:00:00",
            "2026-03-01 10:00:00",
            "2026-03-01T10:00",
            "2026-03-01T10:00:00Z",
            "2026-03-01t10:00:00z",
            "2026-03-01T10:00:00.000Z",
            "2026-03-01T10:00:00.000000+00:00",
            "2026-03-01 10:00:00.000000",
            "2026-03-01 10:00:00+00",
            "2026-03-01 10:00:00 UTC",
            "2026-03-01T12:00:00+02:00",
            "2026-03-01T12:00:00+0200",
            "2026-03-01T12:00:00 +02:00",
            "2026-03-01T07:30:00-02:30",
            "2026-03-01 10:53:28+00:53:28",
            "  2026-03-01T10:00:00Z\n",
        ] {
            assert_eq!(utc(text), ten, "{text}");
        }
    }

    #[test]
    fn fractions_of_1_to_9_digits_keep_their_precision() {
        assert_eq!(utc("2026-03-01 10:00:00.5+00"), at(10, 0, 0, 500_000_000));
        assert_eq!(
            utc("2026-03-01T10:00:00.500000+00:00"),
            at(10, 0, 0, 500_000_000)
        );
        assert_eq!(utc("2026-03-01T10:00:00.000001"), at(10, 0, 0, 1_000));
        assert_eq!(
            utc("2026-03-01T10:00:00.123456789Z"),
            at(10, 0, 0, 123_456_789)
        );
        assert_eq!(utc("2026-03-01T10:00:00,25"), at(10, 0, 0, 250_000_000));
        assert!(utc("2026-03-01T10:00:00.000001") > utc("2026-03-01T10:00:00Z"));
    }

    #[test]
    fn offsets_cross_midnight() {
        assert_eq!(
            utc("2026-03-01T01:00:00+02:00"),
            Utc.with_ymd_and_hms(2026, 2, 28, 23, 0, 0).unwrap()
        );
    }

    #[test]
    fn garbage_is_a_clear_error() {
        for text in [
            "",
            "yesterday",
            "2026-03-01",
            "2026-02-30T10:00:00",
            "2026-03-01T25:00:00",
            "2026-03-01T10:00:00.",
            "2026-03-01T10:00:00.1234567890",
            "2026-03-01T10:00:00+25:00",
            "2026-03-01T10:00:00 Europe/Paris",
            "2026-03-01T10:00:00Zjunk",
            "1750000000",
        ] {
            let error = parse_instant(text).expect_err(text);
            assert_eq!(error.text, text);
            assert!(
                error.to_string().contains("is not a date and time"),
                "{error}"
            );
        }
    }

    fn writer_form(instant: DateTime<Utc>, form: u8) -> String {
        let offset = chrono::FixedOffset::east_opt(2 * 3600).unwrap();
        match form % 7 {
            0 => instant.to_rfc3339_opts(SecondsFormat::Nanos, true),
            1 => instant.to_rfc3339_opts(SecondsFormat::Micros, false),
            2 => instant.format("%Y-%m-%d %H:%M:%S%.f").to_string(),
            3 => instant.format("%Y-%m-%d %H:%M:%S%.f+00").to_string(),
            4 => instant
                .with_timezone(&offset)
                .to_rfc3339_opts(SecondsFormat::AutoSi, false),
            5 => instant.to_rfc3339_opts(SecondsFormat::AutoSi, false),
            _ => instant.format("%Y-%m-%dT%H:%M:%S%.9f").to_string(),
        }
    }

    proptest! {
        #[test]
        fn any_writers_form_reads_back_the_same_instant(
            seconds in 0i64..4_000_000_000,
            nanos in 0u32..1_000_000_000,
            form in 0u8..7,
        ) {
            // The microseconds form (1) keeps microseconds only.
            let nanos = if form == 1 { nanos - nanos % 1000 } else { nanos };
            let instant = Utc.timestamp_opt(seconds, nanos).unwrap();
            prop_assert_eq!(utc(&writer_form(instant, form)), instant);
        }
    }
}
