//! Cancelling `doctor` stops its scan of the messages where it is: on SQLite the thread that
//! steps SQLite's C API, on PostgreSQL the row stream. Measured in progress reports and
//! conversations handed over, never in time.

#[macro_use]
mod common;

use memscope::demo::{BulkGenerator, BulkPlan};
use memscope::inspect::doctor::{DoctorSettings, messages_to_scan, run_until};
use memscope::memory::tokens::{CounterKind, TokenCounter};
use memscope::sources::doctor::DEFAULT_KEEP_LAST;
use memscope::store::{CancelFlag, Store};

/// 40,000 messages: ten times what the SQLite scan hands over in one chunk, so a scan that
/// went on after the cancel would hand more over.
const PLAN: BulkPlan = BulkPlan {
    conversations: 2_000,
    rows_per_conversation: 20,
    conversations_per_batch: 500,
};

const TENANT: &str = "00000000-0000-4000-8000-000000000001";

async fn bulk_store(db: &common::TestDb) -> Store {
    let store = Store::init(db.url()).await.expect("init");
    for batch in BulkGenerator::new(7, TENANT, PLAN) {
        store.insert_batch(&batch).await.expect("insert");
    }
    store
}

fn settings() -> DoctorSettings {
    DoctorSettings {
        counter: TokenCounter::for_model(CounterKind::Raw, "gpt-4o"),
        budget: 2_000,
        storage: None,
        keep_last: DEFAULT_KEEP_LAST,
        options: Default::default(),
    }
}

db_tests! {
    async fn cancelling_stops_the_scan_where_it_is(db) {
        let store = bulk_store(&db).await;
        let total = messages_to_scan(&store).await.expect("count");
        assert_eq!(total, PLAN.messages());

        let stop = CancelFlag::default();
        let mut reports = Vec::new();
        let report = run_until(&store, &settings(), &stop, |scanned| {
            reports.push(scanned);
            if reports.len() == 3 {
                stop.cancel();
            }
        })
        .await
        .expect("scan");
        assert!(report.is_none(), "a cancelled scan has no report");
        // One report per conversation: none came after the cancel.
        assert_eq!(reports, [20, 40, 60]);

        // The store's scan itself hands nothing over once cancelled, and returns.
        let stop = CancelFlag::default();
        let mut handed_over = 0;
        store
            .for_each_conversation_until(
                &stop,
                |rows| {
                    handed_over += rows.len();
                    stop.cancel();
                },
                |bad| panic!("{bad:?}"),
            )
            .await
            .expect("scan");
        assert_eq!(handed_over, 20);

        // Not cancelled, the same scan reads every message, one report per conversation.
        let mut calls = 0;
        let report = run_until(&store, &settings(), &CancelFlag::default(), |_| calls += 1)
            .await
            .expect("scan")
            .expect("a report");
        assert_eq!(report.messages as u64, total);
        assert_eq!(calls, PLAN.conversations);
    }
}
