//! Rows per table, for the summary, `info` and `demo`: the tables the database's source
//! counts (`MemorySource::counted_tables`), those of them the database has.

use super::error::StoreError;
use super::handle::Store;

/// Rows in one table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableCount {
    pub table: &'static str,
    pub rows: i64,
}

impl Store {
    /// Rows per table, for the tables of its source's list this database has, in that order.
    pub async fn table_counts(&self) -> Result<Vec<TableCount>, StoreError> {
        let mut counts = Vec::new();
        for counted in self.profile().source.counted_tables() {
            if !self.has_table(counted.table) {
                continue;
            }
            let rows: i64 = on_pool!(self.pool, counted.count_sql, |pool, sql| {
                sqlx::query_scalar(sql).fetch_one(pool).await
            })
            .map_err(|e| self.query_failed(e))?;
            counts.push(TableCount {
                table: counted.table,
                rows,
            });
        }
        Ok(counts)
    }
}
