//! The whole-table message scan on SQLite, read through SQLite's C API on a blocking thread.
//!
//! sqlx hands every row from its worker thread to the caller through a channel, copying each
//! value into an allocation of its own: over a million rows the threads spend more time waking
//! each other than SQLite spends reading. Here one thread steps the statement on the pool
//! connection's own handle (locked out of sqlx's worker) and builds whole conversations, handed
//! to the caller a few thousand rows at a time.
//!
//! Rows decode exactly as sqlx decodes them: the fast path takes only the plain case (text that
//! is UTF-8, integers, `YYYY-MM-DD HH:MM:SS[.f]` timestamps) and reads any other row again
//! through sqlx, on the same connection, so a row sqlx cannot read is reported with sqlx's own
//! error and an unusual but readable value gets sqlx's own interpretation.
//!
//! A cancelled scan stops on both sides: the thread checks the flag before each step, and the
//! caller hands no further conversation over and drops the channel (a thread blocked on a full
//! channel then wakes up and ends).

use std::borrow::Cow;
use std::ffi::{CStr, c_int};
use std::ptr::{NonNull, null_mut};

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use libsqlite3_sys as ffi;
use sqlx::pool::PoolConnection;
use sqlx::sqlite::SqliteRow;
use sqlx::{FromRow, Sqlite, SqlitePool};
use tokio::sync::mpsc;

use super::bad_row::BadRow;
use super::cancel::CancelFlag;
use crate::memory::model::StoredMessage;

/// Rows per hand-over: large enough that the threads rarely wait on each other, small enough
/// that memory stays flat.
const ROWS_PER_CHUNK: usize = 4_096;
/// Chunks in flight between the scan thread and the caller.
const CHUNKS_IN_FLIGHT: usize = 2;

/// What the scan thread hands over, in scan order.
enum Event {
    /// Complete conversations, oldest message first.
    Conversations(Vec<Vec<StoredMessage>>),
    Unreadable(BadRow),
}

/// Where the scan's SQL comes from: the messages query of the open database's dialect.
pub(crate) struct ScanSql {
    /// The ordered scan, its first column `rowid`, then the columns `MessageRecord` reads.
    pub scan: String,
    /// The text bound to the scan's one parameter (`$1`), where it has one: one conversation's
    /// id, say.
    pub parameter: Option<String>,
    /// One message by `rowid` (`$1`), its columns those `MessageRecord` reads.
    pub by_rowid: &'static str,
}

/// Why the fast path could not start; the caller then scans through sqlx.
pub(crate) enum Unavailable {
    /// SQLite would not prepare the scan (a table without `rowid`, say).
    Prepare,
    Sqlx(sqlx::Error),
}

/// Scans every message in `sql.scan` order, calling `visit` once per conversation (oldest
/// first) and `bad_row` for each row sqlx cannot read. `decode` is sqlx's decoding of one row.
/// Once `stop` is cancelled nothing more is handed over, and the scan thread has ended when
/// this returns.
pub(crate) async fn for_each_conversation<R, V, B>(
    pool: &SqlitePool,
    sql: ScanSql,
    decode: fn(&SqliteRow) -> Result<R, BadRow>,
    stop: &CancelFlag,
    visit: &mut V,
    bad_row: &mut B,
) -> Result<(), Unavailable>
where
    R: Into<StoredMessage> + Send + 'static,
    // Generic rather than `dyn`: the caller's future stays `Send` when its callbacks are.
    V: FnMut(Vec<StoredMessage>),
    B: FnMut(BadRow),
{
    let connection = pool.acquire().await.map_err(Unavailable::Sqlx)?;
    let (sender, mut receiver) = mpsc::channel(CHUNKS_IN_FLIGHT);
    let runtime = tokio::runtime::Handle::current();
    let thread_stop = stop.clone();
    let scan = tokio::task::spawn_blocking(move || {
        scan_blocking(connection, &runtime, &sql, decode, &thread_stop, &sender)
    });
    'receive: while let Some(event) = receiver.recv().await {
        match event {
            Event::Conversations(conversations) => {
                for conversation in conversations {
                    if stop.is_cancelled() {
                        break 'receive;
                    }
                    visit(conversation);
                }
            }
            Event::Unreadable(bad) => bad_row(bad),
        }
    }
    // The thread ends at its next step (cancelled) or hand-over (nobody receives).
    drop(receiver);
    match scan.await {
        Ok(Ok(())) => Ok(()),
        // Nothing was handed over yet: preparing is the scan's first step.
        Ok(Err(ScanFailure::Prepare)) => Err(Unavailable::Prepare),
        Ok(Err(ScanFailure::Sqlx(error))) => Err(Unavailable::Sqlx(error)),
        Err(join) => std::panic::resume_unwind(join.into_panic()),
    }
}

enum ScanFailure {
    Prepare,
    Sqlx(sqlx::Error),
}

/// A prepared statement, finalized when dropped.
struct Statement(NonNull<ffi::sqlite3_stmt>);

impl Drop for Statement {
    fn drop(&mut self) {
        // SAFETY: prepared by `prepare` and finalized once; finalizing needs no lock on the
        // connection beyond SQLite's own mutex (the library is threadsafe).
        unsafe { ffi::sqlite3_finalize(self.0.as_ptr()) };
    }
}

fn prepare(db: *mut ffi::sqlite3, sql: &str) -> Option<Statement> {
    let mut statement = null_mut();
    // SAFETY: `db` is an open handle locked by this thread; the text outlives the call.
    let code = unsafe {
        ffi::sqlite3_prepare_v2(
            db,
            sql.as_ptr().cast(),
            c_int::try_from(sql.len()).ok()?,
            &mut statement,
            null_mut(),
        )
    };
    let statement = NonNull::new(statement);
    if code != ffi::SQLITE_OK {
        if let Some(statement) = statement {
            drop(Statement(statement));
        }
        return None;
    }
    statement.map(Statement)
}

/// Binds `text` to the statement's first parameter.
fn bind_text(db: *mut ffi::sqlite3, statement: &Statement, text: &str) -> Result<(), ScanFailure> {
    let length = c_int::try_from(text.len()).map_err(|_| ScanFailure::Prepare)?;
    // SAFETY: the statement belongs to `db`, which this thread has locked; SQLite copies the
    // text (`SQLITE_TRANSIENT`) before the call returns.
    let code = unsafe {
        ffi::sqlite3_bind_text(
            statement.0.as_ptr(),
            1,
            text.as_ptr().cast(),
            length,
            ffi::SQLITE_TRANSIENT(),
        )
    };
    if code == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(ScanFailure::Sqlx(step_error(db, code)))
    }
}

/// The scan thread: steps the statement with the handle locked, and unlocks it only to read an
/// unusual row through sqlx.
fn scan_blocking<R>(
    mut connection: PoolConnection<Sqlite>,
    runtime: &tokio::runtime::Handle,
    sql: &ScanSql,
    decode: fn(&SqliteRow) -> Result<R, BadRow>,
    stop: &CancelFlag,
    sender: &mpsc::Sender<Event>,
) -> Result<(), ScanFailure>
where
    R: Into<StoredMessage>,
{
    let mut locked = runtime
        .block_on(connection.lock_handle())
        .map_err(ScanFailure::Sqlx)?;
    let db = locked.as_raw_handle().as_ptr();
    let statement = prepare(db, &sql.scan).ok_or(ScanFailure::Prepare)?;
    if let Some(parameter) = &sql.parameter {
        bind_text(db, &statement, parameter)?;
    }
    let mut batch = Batcher::new(sender);
    loop {
        if stop.is_cancelled() {
            return Ok(());
        }
        // SAFETY: the statement belongs to `db`, which this thread has locked.
        let code = unsafe { ffi::sqlite3_step(statement.0.as_ptr()) };
        match code {
            ffi::SQLITE_ROW => {}
            ffi::SQLITE_DONE => break,
            _ => return Err(ScanFailure::Sqlx(step_error(db, code))),
        }
        // SAFETY: the statement has a current row.
        let row = unsafe { RowReader::new(statement.0.as_ptr()) };
        if let Some(message) = row.message() {
            if !batch.push(message) {
                return Ok(());
            }
            continue;
        }
        // An unusual row: sqlx reads it on this connection (our statement stays where it is,
        // sqlx's worker never sees it), then the handle is locked again.
        let rowid = row.rowid();
        drop(locked);
        let reread = runtime.block_on(
            sqlx::query(sqlx::AssertSqlSafe(sql.by_rowid))
                .bind(rowid)
                .fetch_one(&mut *connection),
        );
        let delivered = match reread.map(|raw| decode(&raw)) {
            Ok(Ok(record)) => batch.push(record.into()),
            Ok(Err(bad)) => batch.unreadable(bad),
            Err(error) => return Err(ScanFailure::Sqlx(error)),
        };
        if !delivered {
            return Ok(());
        }
        locked = runtime
            .block_on(connection.lock_handle())
            .map_err(ScanFailure::Sqlx)?;
    }
    batch.finish();
    drop(statement);
    drop(locked);
    Ok(())
}

/// Groups rows into conversations and conversations into chunks.
struct Batcher<'a> {
    sender: &'a mpsc::Sender<Event>,
    current: Vec<StoredMessage>,
    done: Vec<Vec<StoredMessage>>,
    rows: usize,
}

impl<'a> Batcher<'a> {
    fn new(sender: &'a mpsc::Sender<Event>) -> Self {
        Batcher {
            sender,
            current: Vec::new(),
            done: Vec::new(),
            rows: 0,
        }
    }

    /// False once the caller has gone away.
    fn push(&mut self, message: StoredMessage) -> bool {
        if self
            .current
            .last()
            .is_some_and(|m| m.conversation_id != message.conversation_id)
        {
            self.done.push(std::mem::take(&mut self.current));
            if self.rows >= ROWS_PER_CHUNK && !self.flush() {
                return false;
            }
        }
        self.current.push(message);
        self.rows += 1;
        true
    }

    /// Hands over what is complete, then the unreadable row, keeping scan order.
    fn unreadable(&mut self, bad: BadRow) -> bool {
        self.flush() && self.sender.blocking_send(Event::Unreadable(bad)).is_ok()
    }

    fn flush(&mut self) -> bool {
        self.rows = self.current.len();
        if self.done.is_empty() {
            return true;
        }
        let chunk = std::mem::take(&mut self.done);
        self.sender
            .blocking_send(Event::Conversations(chunk))
            .is_ok()
    }

    fn finish(mut self) {
        if !self.current.is_empty() {
            let last = std::mem::take(&mut self.current);
            self.done.push(last);
        }
        self.flush();
    }
}

/// The columns of the current row, in `ScanSql::scan` order.
struct RowReader(*mut ffi::sqlite3_stmt);

impl RowReader {
    /// # Safety
    /// `statement` has a current row and stays on it while the reader is used.
    unsafe fn new(statement: *mut ffi::sqlite3_stmt) -> Self {
        RowReader(statement)
    }

    fn kind(&self, column: c_int) -> c_int {
        // SAFETY: see `new`.
        unsafe { ffi::sqlite3_column_type(self.0, column) }
    }

    fn rowid(&self) -> i64 {
        // SAFETY: see `new`.
        unsafe { ffi::sqlite3_column_int64(self.0, 0) }
    }

    fn int(&self, column: c_int) -> Option<i64> {
        // SAFETY: see `new`.
        (self.kind(column) == ffi::SQLITE_INTEGER)
            .then(|| unsafe { ffi::sqlite3_column_int64(self.0, column) })
    }

    /// Text that is UTF-8, borrowed until the next step.
    fn text(&self, column: c_int) -> Option<&str> {
        if self.kind(column) != ffi::SQLITE_TEXT {
            return None;
        }
        // SAFETY: see `new`; `column_text` before `column_bytes`, as SQLite asks, and the
        // pointer is valid for that many bytes until the statement moves.
        let bytes = unsafe {
            let text = ffi::sqlite3_column_text(self.0, column);
            let len = usize::try_from(ffi::sqlite3_column_bytes(self.0, column)).ok()?;
            if text.is_null() {
                return Some("");
            }
            std::slice::from_raw_parts(text, len)
        };
        std::str::from_utf8(bytes).ok()
    }

    /// `Some(None)` for NULL, `None` for a value the fast path does not take.
    fn optional_text(&self, column: c_int) -> Option<Option<String>> {
        if self.kind(column) == ffi::SQLITE_NULL {
            return Some(None);
        }
        self.text(column).map(|text| Some(text.to_owned()))
    }

    /// The row, or `None` when any value needs sqlx's full decoding.
    fn message(&self) -> Option<StoredMessage> {
        Some(StoredMessage {
            id: self.text(1)?.to_owned(),
            conversation_id: self.text(2)?.to_owned(),
            parent_message_id: self.optional_text(3)?,
            query: self.text(4)?.to_owned(),
            answer: self.text(5)?.to_owned(),
            message_tokens: self.int(6)?,
            answer_tokens: self.int(7)?,
            status: self.text(8)?.to_owned(),
            error: self.optional_text(9)?,
            invoke_from: self.optional_text(10)?,
            workflow_run_id: self.optional_text(11)?,
            created_at: plain_timestamp(self.text(12)?)?,
            app_mode: self.optional_text(13)?.filter(|mode| !mode.is_empty()),
        })
    }
}

/// `YYYY-MM-DD HH:MM:SS` with an optional fraction of 1 to 9 digits: the form sqlx writes and
/// reads first (`%F %T%.f`); any other form is left to sqlx.
fn plain_timestamp(text: &str) -> Option<NaiveDateTime> {
    let b = text.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || b[10] != b' ' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' {
        return None;
    }
    let digits = |range: std::ops::Range<usize>| -> Option<u32> {
        b[range].iter().try_fold(0u32, |n, &d| {
            d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
        })
    };
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    let nanos = match &b[19..] {
        [] => 0,
        [b'.', fraction @ ..] if (1..=9).contains(&fraction.len()) => {
            let value = digits(20..b.len())?;
            value * 10u32.pow(9 - fraction.len() as u32)
        }
        _ => return None,
    };
    // A leap second (`:60`) is left to sqlx.
    if second > 59 {
        return None;
    }
    let date = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, day)?;
    let time = NaiveTime::from_hms_nano_opt(hour, minute, second, nanos)?;
    Some(date.and_time(time))
}

/// A failed step, as a database error with SQLite's code and message.
fn step_error(db: *mut ffi::sqlite3, code: c_int) -> sqlx::Error {
    // SAFETY: `db` is open and locked by this thread; the message is copied at once.
    let message = unsafe {
        let text = ffi::sqlite3_errmsg(db);
        if text.is_null() {
            String::new()
        } else {
            CStr::from_ptr(text).to_string_lossy().into_owned()
        }
    };
    sqlx::Error::Database(Box::new(StepError { code, message }))
}

#[derive(Debug)]
struct StepError {
    code: c_int,
    message: String,
}

impl std::fmt::Display for StepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The form sqlx gives SQLite's errors.
        write!(f, "(code: {}) {}", self.code, self.message)
    }
}

impl std::error::Error for StepError {}

impl sqlx::error::DatabaseError for StepError {
    fn message(&self) -> &str {
        &self.message
    }

    fn code(&self) -> Option<Cow<'_, str>> {
        Some(self.code.to_string().into())
    }

    fn as_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn as_error_mut(&mut self) -> &mut (dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn into_error(self: Box<Self>) -> Box<dyn std::error::Error + Send + Sync + 'static> {
        self
    }

    fn kind(&self) -> sqlx::error::ErrorKind {
        sqlx::error::ErrorKind::Other
    }
}

/// sqlx's decoding of one row into `R`, the unreadable case reported as [`BadRow`] the way
/// every other scan reports it.
pub(crate) fn decode_row<R>(raw: &SqliteRow, table: &'static str) -> Result<R, BadRow>
where
    R: for<'r> FromRow<'r, SqliteRow>,
{
    R::from_row(raw).map_err(|error| BadRow {
        table,
        id: super::bad_row::unreadable_row_id(raw),
        error: error.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Option<NaiveDateTime> {
        NaiveDateTime::parse_from_str(text, "%F %T%.f").ok()
    }

    #[test]
    fn plain_timestamps_parse_as_sqlx_parses_them() {
        for text in [
            "2026-03-02 09:00:00",
            "1999-12-31 23:59:59.5",
            "2026-01-01 00:00:00.000001",
            "2026-01-01 00:00:00.123456789",
            "2024-02-29 12:34:56.120",
        ] {
            assert_eq!(plain_timestamp(text), parsed(text), "{text}");
            assert!(plain_timestamp(text).is_some(), "{text}");
        }
    }

    #[test]
    fn other_forms_are_left_to_sqlx() {
        for text in [
            "2026-03-02T09:00:00",
            "2026-03-02 09:00",
            "2026-03-02 09:00:00Z",
            "2026-03-02 09:00:00+02:00",
            "2026-02-30 09:00:00",
            "2026-03-02 24:00:00",
            "2016-12-31 23:59:60",
            "2026-03-02 09:00:00.",
            "2026-03-02 09:00:00.1234567890",
            "+2026-03-02 09:00:0",
            "",
        ] {
            assert_eq!(plain_timestamp(text), None, "{text}");
        }
    }
}
