use super::*;

#[test]
fn the_session_lock_key_is_langflows() {
    // Python: int(hashlib.sha256(b"m:s").hexdigest()[:16], 16) % (2**63 - 1)
    assert_eq!(session_lock_key("m:s"), 998_997_573_268_126_682);
}

#[test]
fn langflows_sqlite_instants_are_naive_with_microseconds() {
    let at = DateTime::parse_from_rfc3339("2026-01-05T09:00:01.5Z")
        .unwrap()
        .with_timezone(&Utc);
    assert_eq!(StoredTime::naive_text(at), "2026-01-05 09:00:01.500000");
}

#[test]
fn stale_or_dead_jobs_are_abandoned_and_fresh_ones_of_others_are_not() {
    let now = Utc::now();
    let fresh = heartbeat_metadata("jobs:1:ab", now);
    let stale = heartbeat_metadata("jobs:1:ab", now - chrono::Duration::seconds(90));
    assert!(!abandoned(Some(&fresh), now, true));
    assert!(abandoned(Some(&stale), now, true));
    // Another owner's job is only judged within the locked session.
    assert!(!abandoned(Some(&stale), now, false));
    assert!(abandoned(None, now, true));
    let ours_stale = heartbeat_metadata(&job_owner(), now - chrono::Duration::seconds(90));
    assert!(abandoned(Some(&ours_stale), now, false));
    let ours_fresh = heartbeat_metadata(&job_owner(), now);
    assert!(!abandoned(Some(&ours_fresh), now, false));
}
