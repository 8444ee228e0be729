//! The figures `info` shows of a LangGraph database: which saver wrote it (with PostgresSaver's
//! newest migration) and the threads, checkpoints, writes and bytes of stored values it holds.

use serde_json::json;

use super::LangGraphPool;
use super::saver::CheckpointStats;
use crate::format::{noun, thousands};
use crate::sources::stored_figures::StoredFigures;
use crate::store::{Store, StoreError};

/// The saver's figures, read with a scan of every table.
pub async fn stored_figures(store: &Store) -> Result<StoredFigures, StoreError> {
    let stats = LangGraphPool::of(store)
        .stats(super::newest_migration(store.catalog()))
        .await
        .map_err(|e| store.query_failed(e))?;
    Ok(figures(&stats))
}

/// "SqliteSaver: 2 threads, 9 checkpoints, 4 writes, 1,234 bytes of stored values", and the
/// same figures under the names scripts read.
fn figures(stats: &CheckpointStats) -> StoredFigures {
    let count =
        |n: i64, what: &str| format!("{} {}", thousands(i128::from(n)), noun(n as u64, what));
    let line = format!(
        "{:?}{}: {}, {}, {}, {} bytes of stored values",
        stats.saver,
        stats
            .migration
            .map_or(String::new(), |v| format!(" (migration v{v})")),
        count(stats.threads, "thread"),
        count(stats.checkpoints, "checkpoint"),
        count(stats.writes, "write"),
        thousands(i128::from(stats.bytes)),
    );
    StoredFigures {
        line,
        figures: vec![
            ("saver", json!(stats.saver)),
            ("migration", json!(stats.migration)),
            ("threads", json!(stats.threads)),
            ("checkpoints", json!(stats.checkpoints)),
            ("writes", json!(stats.writes)),
            ("bytes", json!(stats.bytes)),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::langgraph::saver::Saver;

    #[test]
    fn the_figures_read_as_the_savers_and_keep_their_names_and_order() {
        let stats = CheckpointStats {
            saver: Saver::PostgresSaver,
            migration: Some(9),
            threads: 1,
            checkpoints: 1_204,
            writes: 0,
            bytes: 56_789,
        };
        let figures = figures(&stats);
        assert_eq!(
            figures.line,
            "PostgresSaver (migration v9): 1 thread, 1,204 checkpoints, 0 writes, 56,789 bytes \
             of stored values"
        );
        assert_eq!(
            serde_json::to_string(&figures).unwrap(),
            r#"{"saver":"PostgresSaver","migration":9,"threads":1,"checkpoints":1204,"writes":0,"bytes":56789}"#
        );
    }
}
