//! A row a whole-table scan could not read, and its id as far as it reads: both scans (sqlx's
//! row stream and the SQLite one) report such rows and go on.

/// A row a whole-table scan could not read (text that is not UTF-8, a value of the wrong
/// type): the scan reports it and goes on with the next row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRow {
    pub table: &'static str,
    /// The row's id, as far as it reads (undecodable bytes replaced).
    pub id: String,
    /// The driver's description, naming the column.
    pub error: String,
}

/// The `id` column of a row that did not decode, as far as it reads.
pub(crate) fn unreadable_row_id<R: sqlx::Row>(raw: &R) -> String
where
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Vec<u8>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'a> &'a str: sqlx::ColumnIndex<R>,
{
    raw.try_get::<String, _>("id")
        .or_else(|_| {
            raw.try_get::<Vec<u8>, _>("id")
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        })
        .unwrap_or_else(|_| "(unreadable id)".to_owned())
}
