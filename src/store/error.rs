//! What can go wrong opening or using the memory database, in terms an operator can act on.
//! Every message names the database by its URL with the password redacted.

/// Errors of the memory database layer.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The forms memscope takes are the hint's: the message does not list them again.
    #[error("{url}: not a database URL memscope understands{}", did_you_mean(url))]
    BadUrl { url: String },

    #[error("{path} does not exist: there is no database at {url}")]
    NoSuchFile { url: String, path: String },

    #[error("{path} is a directory, not a database file")]
    IsADirectory { url: String, path: String },

    #[error("{path} is not a SQLite database: the file does not start as one does")]
    NotSqlite { url: String, path: String },

    #[error(
        "{log} is there without the log's index beside it (-shm): reading the database would \
         create one, and memscope reads without changing a file"
    )]
    LogWithoutIndex { url: String, log: String },

    #[error("cannot connect to {url}: {}", error_text(source))]
    Unreachable {
        url: String,
        #[source]
        source: sqlx::Error,
    },

    #[error(
        "{url} is not a memory database: it has neither Dify's `messages` and `conversations` \
         tables, nor Langflow's `message` table, nor memscope's `memscope_meta`"
    )]
    NotAMemoryDatabase { url: String },

    #[error(
        "{url} has memscope schema version {found}, newer than this memscope (version {supported}); \
         upgrade memscope"
    )]
    SchemaTooNew {
        url: String,
        found: i64,
        supported: i64,
    },

    #[error("{url} has an unreadable memscope schema version {value:?} in memscope_meta")]
    BadSchemaVersion { url: String, value: String },

    #[error(
        "{url} has memscope schema version {found}, older than this memscope (version {supported}); \
         it needs migrating first"
    )]
    SchemaOutdated {
        url: String,
        found: i64,
        supported: i64,
    },

    #[error(
        "{url} already holds tables memscope did not create; refusing to add memscope's schema to it"
    )]
    ForeignDatabase { url: String },

    #[error(
        "{url} is open read-only: memscope did not create it, so it is never changed by accident; \
         pass --write to change it"
    )]
    ReadOnly { url: String },

    #[error("migrating {url} failed: {source}")]
    Migration {
        url: String,
        #[source]
        source: sqlx::migrate::MigrateError,
    },

    /// A write memscope does not make in this database's source's formats: `why` says so and
    /// names the way out.
    #[error("{url}: {why}")]
    ForeignWrite { url: String, why: String },

    /// A layout of its source that memscope does not read.
    #[error("{url} is {kind} {reason}")]
    UnreadableLayout {
        url: String,
        kind: String,
        reason: String,
    },

    /// The command needs a part of memscope's view that this kind of database does not hold.
    #[error("{url} is {explanation}")]
    Lacks { url: String, explanation: String },

    #[error("{url}: {row}: {source}")]
    BadTimestamp {
        url: String,
        /// The row whose timestamp it is, e.g. `message 0f3c…`.
        row: String,
        #[source]
        source: crate::memory::instant::InstantError,
    },

    #[error("query on {url} failed: {}", error_text(source))]
    Query {
        url: String,
        #[source]
        source: sqlx::Error,
    },
}

impl StoreError {
    /// The way out, for the operator: what to run or pass instead.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            StoreError::BadUrl { .. } => "give a file path, sqlite://PATH or \
                                          postgres://USER@HOST/DB (mysql://USER@HOST/DB for Dify on MySQL)"
                .to_owned(),
            StoreError::NoSuchFile { url, .. } => format!(
                "`memscope init --db {url}` creates an empty memory database there, \
                 `memscope demo --db {url}` one filled with demo data"
            ),
            StoreError::IsADirectory { path, .. } => format!(
                "name the database file inside it, e.g. --db {}",
                std::path::Path::new(path).join("memscope.db").display()
            ),
            StoreError::NotSqlite { .. } => "point --db at the SQLite file of a Dify, Langflow \
                                             or memscope database, or give a postgres:// or \
                                             mysql:// URL"
                .to_owned(),
            StoreError::LogWithoutIndex { .. } => "a copy of a database in WAL mode needs its -wal \
                                                   and -shm files beside it: copy the -shm too; \
                                                   or open it with --write, which lets SQLite \
                                                   rebuild the index and fold the log into the file"
                .to_owned(),
            StoreError::Unreachable { url, .. }
                if url.starts_with("postgres") || super::mysql_url::is_mysql_url(url) =>
            {
                "check that the server runs and that the URL's host, port, user and database \
                 are right"
                    .to_owned()
            }
            StoreError::NotAMemoryDatabase { url } => format!(
                "point --db at a Dify, Langflow or memscope database; `memscope init --db {url}` \
                 adds memscope's schema to an empty one"
            ),
            StoreError::SchemaOutdated { url, .. } => {
                format!("pass --write to migrate it as it opens, or run `memscope init --db {url}`")
            }
            StoreError::ReadOnly { url } if super::mysql_url::is_mysql_url(url) => {
                "memscope only reads a MySQL database: --write does not change that".to_owned()
            }
            StoreError::ReadOnly { .. } => {
                "run the command again with --write if this database may be changed".to_owned()
            }
            StoreError::Lacks { .. } => {
                "`memscope info` says what this database holds and which commands read it"
                    .to_owned()
            }
            StoreError::Query { source, .. } if is_disk_full(source) => {
                "the disk (or the database's size limit) is full: the change was rolled back, \
                 nothing was written; free space and run the command again"
                    .to_owned()
            }
            StoreError::ForeignDatabase { .. } => {
                "give an empty database, or a memscope database, to `init`".to_owned()
            }
            _ => return None,
        })
    }
}

/// An error as an operator reads it. PostgreSQL's errors are their message alone: sqlx adds the
/// line of PostgreSQL's own C source that raised it (`… does not exist at line 948`), which
/// says nothing about the database.
pub fn error_text(error: &(dyn std::error::Error + 'static)) -> String {
    use sqlx::error::DatabaseError;
    use sqlx::postgres::PgDatabaseError;
    // The cause under sqlx's `Error::Database` is the boxed database error itself.
    if let Some(postgres) = error
        .downcast_ref::<Box<dyn DatabaseError>>()
        .and_then(|database| database.try_downcast_ref::<PgDatabaseError>())
    {
        return postgres.message().to_owned();
    }
    match error.downcast_ref::<sqlx::Error>() {
        Some(sqlx::Error::Database(database)) => {
            match database.try_downcast_ref::<PgDatabaseError>() {
                Some(postgres) => format!("error returned from database: {}", postgres.message()),
                None => error.to_string(),
            }
        }
        _ => error.to_string(),
    }
}

/// An error with the chain of its causes, each as [`error_text`] reads it, so "cannot open …:
/// permission denied" keeps its reason; a cause the text already holds is not repeated.
pub fn error_chain_text(error: &(dyn std::error::Error + 'static)) -> String {
    let mut message = error_text(error);
    let mut source = error.source();
    while let Some(cause) = source {
        let text = error_text(cause);
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

/// `postgresql//u@h/db` as it was meant, `postgresql://u@h/db`: a database scheme whose colon
/// was left out (taken as it is, it would be a relative file path).
pub fn with_missing_colon(url: &str) -> Option<String> {
    const SCHEMES: [&str; 5] = ["postgresql", "postgres", "mysql", "mariadb", "sqlite"];
    SCHEMES.iter().find_map(|scheme| {
        let head = url.get(..scheme.len())?;
        let rest = url[scheme.len()..].strip_prefix("//")?;
        head.eq_ignore_ascii_case(scheme)
            .then(|| format!("{head}://{rest}"))
    })
}

fn did_you_mean(url: &str) -> String {
    with_missing_colon(url).map_or_else(String::new, |meant| format!(": did you mean {meant}?"))
}

/// SQLITE_FULL, or PostgreSQL's disk_full (53100).
fn is_disk_full(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .and_then(|e| e.code())
        .is_some_and(|code| code == "13" || code == "53100")
}

/// A SQLite database file that is not there, or is a directory, named as such before the driver
/// says "unable to open database file". `create` allows a missing file (its directory must exist).
pub(super) fn check_sqlite_file(
    url: &str,
    path: &std::path::Path,
    create: bool,
) -> Result<(), StoreError> {
    let name = path.to_string_lossy();
    if name.is_empty()
        || name == ":memory:"
        || name.starts_with("file:")
        || url.contains("mode=memory")
    {
        return Ok(());
    }
    let problem = |is_dir: bool| {
        let (url, path) = (url.to_owned(), path.display().to_string());
        if is_dir {
            StoreError::IsADirectory { url, path }
        } else {
            StoreError::NoSuchFile { url, path }
        }
    };
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(problem(true)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !create => Err(problem(false)),
        // An empty file is an empty database to SQLite; any other starts with its header.
        Ok(meta) if meta.len() > 0 && !starts_as_sqlite(path) => Err(StoreError::NotSqlite {
            url: url.to_owned(),
            path: path.display().to_string(),
        }),
        _ => Ok(()),
    }
}

/// Whether the file starts with SQLite's header; an unreadable file is left to SQLite to report.
fn starts_as_sqlite(path: &std::path::Path) -> bool {
    use std::io::Read;
    const HEADER: &[u8; 16] = b"SQLite format 3\0";
    let mut start = [0u8; 16];
    match std::fs::File::open(path).and_then(|mut file| file.read_exact(&mut start)) {
        Ok(()) => &start == HEADER,
        Err(e) => e.kind() != std::io::ErrorKind::UnexpectedEof,
    }
}

/// A SQLite URL naming its file relative to the working directory made absolute (an archive
/// records where it came from, and its command runs from anywhere); any other URL as it is.
pub fn absolute_url(url: &str) -> String {
    let Some(rest) = url.strip_prefix("sqlite://") else {
        return url.to_owned();
    };
    let (path, query) = rest.split_at(rest.find('?').unwrap_or(rest.len()));
    if path.is_empty() || path.starts_with('/') || path.starts_with(':') {
        return url.to_owned();
    }
    match std::path::absolute(path) {
        Ok(absolute) => format!("sqlite://{}{query}", absolute.display()),
        Err(_) => url.to_owned(),
    }
}

/// The URL with its password (in the credentials or a `password=` parameter) replaced by `***`,
/// fit for messages and logs.
pub fn redact_url(url: &str) -> String {
    redact_password_parameter(&redact_credentials(url))
}

fn redact_credentials(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let authority_start = scheme_end + 3;
    let authority_end = url[authority_start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| authority_start + i);
    let authority = &url[authority_start..authority_end];
    // The last `@` ends the credentials: a password may itself contain `@`.
    let Some(at) = authority.rfind('@') else {
        return url.to_owned();
    };
    // An empty password (`user:@host`) hides nothing: shown as it is, so it reads as empty.
    let Some(colon) = authority[..at].find(':').filter(|&colon| colon + 1 < at) else {
        return url.to_owned();
    };
    format!(
        "{}{}:***{}",
        &url[..authority_start],
        &authority[..colon],
        &url[authority_start + at..]
    )
}

fn redact_password_parameter(url: &str) -> String {
    let Some((base, rest)) = url.split_once('?') else {
        return url.to_owned();
    };
    let (query, fragment) = rest
        .split_once('#')
        .map_or((rest, None), |(q, f)| (q, Some(f)));
    let parameters: Vec<String> = query
        .split('&')
        .map(|parameter| match parameter.split_once('=') {
            Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
            _ => parameter.to_owned(),
        })
        .collect();
    let mut redacted = format!("{base}?{}", parameters.join("&"));
    if let Some(fragment) = fragment {
        redacted.push('#');
        redacted.push_str(fragment);
    }
    redacted
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn password_is_replaced() {
        assert_eq!(
            redact_url("postgres://admin:s3cret@db.local:5432/dify"),
            "postgres://admin:***@db.local:5432/dify"
        );
    }

    #[test]
    fn password_containing_at_and_slash_free_authority() {
        assert_eq!(
            redact_url("postgresql://u:p@ss@host/db?sslmode=require"),
            "postgresql://u:***@host/db?sslmode=require"
        );
    }

    #[test]
    fn password_parameter_is_replaced() {
        assert_eq!(
            redact_url("postgres://admin@db/dify?sslmode=require&password=s3cret&x=1"),
            "postgres://admin@db/dify?sslmode=require&password=***&x=1"
        );
        assert_eq!(
            redact_url("postgres://a:b@db/dify?PASSWORD=c#frag"),
            "postgres://a:***@db/dify?PASSWORD=***#frag"
        );
    }

    #[test]
    fn urls_without_password_are_unchanged() {
        for url in [
            "postgres://postgres@127.0.0.1:5432/test",
            "postgres://127.0.0.1/test",
            "sqlite:///tmp/memory.db",
            "sqlite:memory.db",
            "sqlite:///tmp/m.db?mode=ro",
            "postgres://h/db?options[search_path]=s&user=u",
            "not a url",
        ] {
            assert_eq!(redact_url(url), url);
        }
    }

    #[test]
    fn an_empty_password_is_shown_empty() {
        assert_eq!(
            redact_url("postgres://postgres:@db:5432/dify"),
            "postgres://postgres:@db:5432/dify"
        );
    }

    #[test]
    fn a_scheme_without_its_colon_is_named() {
        use super::with_missing_colon;
        assert_eq!(
            with_missing_colon("postgresql//u@h/db").as_deref(),
            Some("postgresql://u@h/db")
        );
        assert_eq!(
            with_missing_colon("mysql//root@h/dify").as_deref(),
            Some("mysql://root@h/dify")
        );
        assert_eq!(with_missing_colon("postgresql://u@h/db"), None);
        assert_eq!(with_missing_colon("./postgresql.db"), None);
    }

    #[test]
    fn at_sign_in_path_is_not_credentials() {
        assert_eq!(
            redact_url("postgres://host/db?user=a:b@c"),
            "postgres://host/db?user=a:b@c"
        );
    }
}
