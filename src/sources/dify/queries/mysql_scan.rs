//! `doctor`'s scan of every message on MySQL and MariaDB, in parts sorted at once.
//!
//! The scan needs the messages in conversation order, and the server sorts all of them before
//! it sends the first row. MySQL and MariaDB run a query on one thread, so the messages are
//! split into ranges of their primary key (one range scan each, no row read twice), each range
//! sorted by its own query on its own connection at the same time, and the sorted parts merged
//! here. Every part is sorted by the bytes of its keys, which the merge compares as they are, so
//! the merged rows come out in one order whatever the columns' collation, and a conversation's
//! rows stay together although they lie in every part.

use std::cmp::Ordering;

use futures_util::TryStreamExt;
use futures_util::future::join_all;
use futures_util::stream::BoxStream;
use sqlx::FromRow;
use sqlx::mysql::{MySqlPool, MySqlRow};

use super::columns::MessageRecord;
use crate::memory::model::StoredMessage;
use crate::store::bad_row::{BadRow, unreadable_row_id};
use crate::store::cancel::CancelFlag;
use crate::store::profile::Dialect;
use crate::store::sql::dialect_text;

/// How many parts the messages are sorted in: two server threads at once, while a third
/// connection serves the checks `doctor` runs beside the scan.
pub(super) const PARTS: usize = 2;

/// The select over `m` with the part's range in `$range`, sorted by bytes. The `LIMIT` keeps the
/// derived table from being merged into the outer query: with `LONGTEXT` columns the servers
/// sort only keys and row ids and then read each row again by primary key, one random read per
/// message once the table outgrows the buffer pool (60 s at 1M messages against a 128 MiB pool);
/// copied once in table order into a temporary table, the rows are sorted from there (13 s).
macro_rules! part_sql {
    ($range:literal) => {
        concat!(
            "SELECT * FROM (SELECT ",
            message_columns!(),
            " FROM messages m WHERE ",
            $range,
            "m.conversation_id NOT IN (SELECT c.id FROM conversations c WHERE c.is_deleted) \
             LIMIT 18446744073709551615) ordered \
             ORDER BY CAST(ordered.conversation_id AS BINARY), ordered.created_at, \
             CAST(ordered.id AS BINARY)"
        )
    };
}

const WHOLE_SQL: &str = part_sql!("");
const BELOW_SQL: &str = part_sql!("m.id < $1 AND ");
const BETWEEN_SQL: &str = part_sql!("m.id >= $1 AND m.id < $2 AND ");
const FROM_SQL: &str = part_sql!("m.id >= $1 AND ");

/// The primary key's ends: the servers read them off the index.
const KEY_ENDS_SQL: &str = "SELECT MIN(m.id) AS low, MAX(m.id) AS high FROM messages m";

/// Streams every message in conversation order (conversation, then time, then id, by bytes),
/// handing each to `message` and each row that does not decode to `bad_row`, until `stop`.
pub(super) async fn for_each_message(
    pool: &MySqlPool,
    dialect: Dialect,
    stop: &CancelFlag,
    mut message: impl FnMut(StoredMessage),
    mut bad_row: impl FnMut(BadRow),
) -> Result<(), sqlx::Error> {
    let (low, high): (Option<String>, Option<String>) =
        sqlx::query_as(dialect_text(dialect, KEY_ENDS_SQL))
            .fetch_one(pool)
            .await?;
    let splits = match (low, high) {
        (Some(low), Some(high)) => split_points(&low, &high, PARTS),
        _ => Vec::new(),
    };
    let mut parts: Vec<BoxStream<'_, Result<MySqlRow, sqlx::Error>>> = part_queries(&splits)
        .into_iter()
        .map(|(sql, binds)| {
            let mut query = sqlx::query(dialect_text(dialect, sql));
            for bound in binds {
                query = query.bind(bound);
            }
            query.fetch(pool)
        })
        .collect();
    // Every part's query goes out now, so the servers sort them side by side.
    let firsts = join_all(parts.iter_mut().map(next)).await;
    let mut heads = Vec::with_capacity(parts.len());
    for first in firsts {
        let (head, skipped) = first?;
        skipped.into_iter().for_each(&mut bad_row);
        heads.push(head);
    }
    while !stop.is_cancelled() {
        let Some(smallest) = smallest_head(&heads) else {
            break;
        };
        let (head, skipped) = next(&mut parts[smallest]).await?;
        skipped.into_iter().for_each(&mut bad_row);
        if let Some(taken) = std::mem::replace(&mut heads[smallest], head) {
            message(taken);
        }
    }
    Ok(())
}

/// The part's next message, with the rows before it that did not decode.
async fn next(
    part: &mut BoxStream<'_, Result<MySqlRow, sqlx::Error>>,
) -> Result<(Option<StoredMessage>, Vec<BadRow>), sqlx::Error> {
    let mut skipped = Vec::new();
    while let Some(raw) = part.try_next().await? {
        match MessageRecord::from_row(&raw) {
            Ok(record) => return Ok((Some(record.into()), skipped)),
            Err(error) => skipped.push(BadRow {
                table: "messages",
                id: unreadable_row_id(&raw),
                error: error.to_string(),
            }),
        }
    }
    Ok((None, skipped))
}

/// The index of the part whose next message comes first in the parts' common order.
fn smallest_head(heads: &[Option<StoredMessage>]) -> Option<usize> {
    heads
        .iter()
        .enumerate()
        .filter_map(|(index, head)| head.as_ref().map(|head| (index, head)))
        .min_by(|(_, a), (_, b)| scan_order(a, b))
        .map(|(index, _)| index)
}

/// The order the parts' `ORDER BY` sorts in: conversation and id by their bytes.
fn scan_order(a: &StoredMessage, b: &StoredMessage) -> Ordering {
    a.conversation_id
        .as_bytes()
        .cmp(b.conversation_id.as_bytes())
        .then(a.created_at.cmp(&b.created_at))
        .then(a.id.as_bytes().cmp(b.id.as_bytes()))
}

/// Each part's query with its bounds: below the first split, between two, from the last.
fn part_queries(splits: &[String]) -> Vec<(&'static str, Vec<String>)> {
    let Some((first, _)) = splits.split_first() else {
        return vec![(WHOLE_SQL, Vec::new())];
    };
    let mut parts = vec![(BELOW_SQL, vec![first.clone()])];
    parts.extend(
        splits
            .windows(2)
            .map(|pair| (BETWEEN_SQL, vec![pair[0].clone(), pair[1].clone()])),
    );
    parts.push((FROM_SQL, vec![splits[splits.len() - 1].clone()]));
    parts
}

/// Where to cut the ids between `low` and `high` into `parts` ranges of about as many ids, for
/// Dify's hyphenated uuids: their first 16 hex digits read as a number, cut evenly, written back
/// in the same layout (`7fffffff-ffff-ffff`). Any cut is correct (every id is below the first,
/// between two or from the last), an even one only faster; ids of another shape, or too few
/// distinct ones, give none and the scan is one query.
pub(super) fn split_points(low: &str, high: &str, parts: usize) -> Vec<String> {
    let (Some(low), Some(high)) = (uuid_prefix(low), uuid_prefix(high)) else {
        return Vec::new();
    };
    let span = high.saturating_sub(low);
    let parts = parts as u64;
    if parts < 2 || span < parts {
        return Vec::new();
    }
    (1..parts)
        .map(|k| {
            let digits = format!("{:016x}", low + span / parts * k);
            format!("{}-{}-{}", &digits[..8], &digits[8..12], &digits[12..])
        })
        .collect()
}

/// The first 16 hex digits of a hyphenated uuid (`xxxxxxxx-xxxx-xxxx…`) as a number.
fn uuid_prefix(id: &str) -> Option<u64> {
    let bytes = id.as_bytes();
    if bytes.len() < 18 || bytes[8] != b'-' || bytes[13] != b'-' {
        return None;
    }
    let digits = [&id[..8], &id[9..13], &id[14..18]].concat();
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(&digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_uuids_are_cut_in_the_middle() {
        let cuts = split_points(
            "00000f3e-1d2c-4b5a-8c9d-0e1f2a3b4c5d",
            "fffff2a1-0b9c-4d8e-9f0a-1b2c3d4e5f60",
            2,
        );
        assert_eq!(cuts.len(), 1);
        assert!(cuts[0].starts_with("800000"), "{cuts:?}");
        assert_eq!(cuts[0].len(), 18);
        assert_eq!(&cuts[0][8..9], "-");
        assert_eq!(&cuts[0][13..14], "-");
    }

    #[test]
    fn time_ordered_uuids_are_cut_between_their_ends() {
        // UUID version 7: the first 48 bits are milliseconds, so ids share a long prefix.
        let low = "019a0000-0000-7000-8000-000000000000";
        let high = "019a1000-0000-7000-8000-000000000000";
        let cuts = split_points(low, high, 4);
        assert_eq!(cuts.len(), 3);
        assert_eq!(cuts[1], "019a0800-0000-7000");
        for pair in cuts.windows(2) {
            assert!(pair[0] < pair[1]);
        }
        assert!(low < cuts[0].as_str() && cuts[2].as_str() < high);
    }

    #[test]
    fn ids_of_another_shape_are_not_cut() {
        assert!(split_points("m1", "m9", 2).is_empty());
        assert!(split_points("msg-00000001", "msg-99999999", 2).is_empty());
        assert!(split_points("zzzzzzzz-zzzz-zzzz", "ffffffff-ffff-ffff", 2).is_empty());
    }

    #[test]
    fn one_id_or_one_part_is_not_cut() {
        let id = "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f";
        assert!(split_points(id, id, 2).is_empty());
        assert!(split_points("00000000-0000-0000", "ffffffff-ffff-ffff", 1).is_empty());
    }

    #[test]
    fn every_id_falls_in_exactly_one_part() {
        let splits = split_points(
            "00000000-0000-0000-0000-000000000000",
            "ffffffff-ffff-ffff-ffff-ffffffffffff",
            3,
        );
        let parts = part_queries(&splits);
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0], (BELOW_SQL, vec![splits[0].clone()]));
        assert_eq!(parts[1], (BETWEEN_SQL, splits.clone()));
        assert_eq!(parts[2], (FROM_SQL, vec![splits[1].clone()]));
        assert_eq!(part_queries(&[]), vec![(WHOLE_SQL, Vec::new())]);
    }

    fn record(conversation: &str, second: u32, id: &str) -> StoredMessage {
        let at = chrono::NaiveDate::from_ymd_opt(2026, 1, 1)
            .and_then(|day| day.and_hms_opt(0, 0, second))
            .unwrap();
        StoredMessage::turn(id, conversation, None, "", "", at)
    }

    #[test]
    fn the_merge_takes_conversation_then_time_then_id_by_bytes() {
        let heads = vec![
            Some(record("b", 1, "x")),
            Some(record("a", 2, "y")),
            Some(record("a", 2, "X")),
            None,
        ];
        // "X" (0x58) sorts before "y" by bytes, whatever a case-insensitive collation says.
        assert_eq!(smallest_head(&heads), Some(2));
        assert_eq!(smallest_head(&[None, None]), None);
    }
}
