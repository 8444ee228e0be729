//! Opening and creating memory databases: checks, read-only mode, migrations.

#[macro_use]
mod common;

use common::fixtures::{app, full_batch};
use memscope::store::rows::Batch;
use memscope::store::{Access, Backend, SCHEMA_VERSION, Store, StoreError};

/// The smallest Dify-shaped database memscope did not create.
const FOREIGN_DIFY_SCHEMA: &str = "
    CREATE TABLE conversations (id uuid PRIMARY KEY, app_id uuid NOT NULL, name varchar(255) NOT NULL);
    CREATE TABLE messages (id uuid PRIMARY KEY, conversation_id uuid NOT NULL, query text NOT NULL);
    INSERT INTO conversations VALUES ('00000000-0000-0000-0000-000000000001'::uuid,
        '00000000-0000-0000-0000-000000000002'::uuid, 'hello');
";

fn one_app_batch() -> Batch {
    Batch {
        apps: vec![app(10, "Bot", "chat")],
        ..Batch::default()
    }
}

async fn unwrap_err(result: Result<Store, StoreError>) -> StoreError {
    match result {
        Ok(store) => {
            store.close().await;
            panic!("expected an error");
        }
        Err(e) => e,
    }
}

db_tests! {
    async fn init_creates_schema_and_reopens(db) {
        let store = Store::init(db.url()).await.expect("init");
        assert!(store.created_by_memscope());
        assert!(!store.is_read_only());
        assert_eq!(store.schema_version(), Some(SCHEMA_VERSION));
        assert_eq!(store.backend(), db.backend);
        store.insert_batch(&full_batch()).await.expect("insert");
        store.close().await;

        let reopened = Store::open(db.url(), Access::Auto).await.expect("open");
        assert!(reopened.created_by_memscope());
        assert!(!reopened.is_read_only());
        assert_eq!(reopened.schema_version(), Some(SCHEMA_VERSION));
        let counts = reopened.table_counts().await.expect("counts");
        let messages = counts.iter().find(|c| c.table == "messages").expect("messages");
        assert_eq!(messages.rows, 2);
        reopened.close().await;
    }

    async fn init_is_idempotent(db) {
        let first = Store::init(db.url()).await.expect("first init");
        let id = first.database_id().expect("a database id").to_owned();
        first.close().await;
        let store = Store::init(db.url()).await.expect("second init");
        assert_eq!(store.schema_version(), Some(SCHEMA_VERSION));
        assert_eq!(store.database_id(), Some(id.as_str()), "the identity is written once");
        let meta = db
            .fetch("SELECT COUNT(*) FROM memscope_meta", &[common::Kind::Int])
            .await;
        // created_by, schema_version, database_id, message_search
        assert_eq!(meta, vec![vec![common::Value::Int(4)]]);
        store.close().await;
    }

    async fn newer_schema_is_refused(db) {
        Store::init(db.url()).await.expect("init").close().await;
        db.execute("UPDATE memscope_meta SET value = '99' WHERE key = 'schema_version'")
            .await;
        for access in [Access::Auto, Access::ReadOnly, Access::Write] {
            let error = unwrap_err(Store::open(db.url(), access).await).await;
            assert!(
                matches!(error, StoreError::SchemaTooNew { found: 99, supported: SCHEMA_VERSION, .. }),
                "{error}"
            );
            assert!(error.to_string().contains("upgrade memscope"), "{error}");
        }
        let error = unwrap_err(Store::init(db.url()).await).await;
        assert!(matches!(error, StoreError::SchemaTooNew { .. }), "{error}");
    }

    async fn older_schema_is_not_read_without_migrating(db) {
        Store::init(db.url()).await.expect("init").close().await;
        db.execute("UPDATE memscope_meta SET value = '0' WHERE key = 'schema_version'")
            .await;
        let error = unwrap_err(Store::open(db.url(), Access::ReadOnly).await).await;
        assert!(
            matches!(error, StoreError::SchemaOutdated { found: 0, supported: SCHEMA_VERSION, .. }),
            "{error}"
        );
        // Opened for writing, pending migrations run instead.
        let store = Store::open(db.url(), Access::Auto).await.expect("open");
        assert!(!store.is_read_only());
        store.close().await;
    }

    async fn other_databases_are_not_memory_databases(db) {
        db.execute("CREATE TABLE users (id int PRIMARY KEY); CREATE TABLE messages (id int);")
            .await;
        let error = unwrap_err(Store::open(db.url(), Access::Auto).await).await;
        assert!(matches!(error, StoreError::NotAMemoryDatabase { .. }), "{error}");
        assert!(error.to_string().contains("not a memory database"), "{error}");
    }

    async fn foreign_database_opens_read_only_and_refuses_writes(db) {
        db.execute(FOREIGN_DIFY_SCHEMA).await;
        let store = Store::open(db.url(), Access::Auto).await.expect("open");
        assert!(store.is_read_only());
        assert!(!store.created_by_memscope());
        assert_eq!(store.schema_version(), None);
        let error = store.insert_batch(&one_app_batch()).await.expect_err("read-only");
        assert!(matches!(error, StoreError::ReadOnly { .. }), "{error}");
        assert!(error.to_string().contains("read-only"), "{error}");
        store.close().await;
    }

    async fn foreign_database_opens_for_write_when_asked(db) {
        db.execute(FOREIGN_DIFY_SCHEMA).await;
        db.execute(
            "CREATE TABLE apps (id uuid PRIMARY KEY, tenant_id uuid NOT NULL, name text NOT NULL, \
             mode text NOT NULL, memory_window int NULL, created_at timestamp NOT NULL)",
        )
        .await;
        let writer = Store::open(db.url(), Access::Write).await.expect("open for write");
        assert!(!writer.is_read_only());
        assert!(!writer.created_by_memscope());
        writer.insert_batch(&one_app_batch()).await.expect("requested write");
        writer.close().await;
        let rows = db.fetch("SELECT name FROM apps", &[common::Kind::Text]).await;
        assert_eq!(rows, vec![vec![common::Value::from("Bot")]]);
    }

    async fn init_refuses_foreign_database(db) {
        db.execute(FOREIGN_DIFY_SCHEMA).await;
        let error = unwrap_err(Store::init(db.url()).await).await;
        assert!(matches!(error, StoreError::ForeignDatabase { .. }), "{error}");
    }

    async fn explicit_read_only_refuses_writes_to_own_database(db) {
        Store::init(db.url()).await.expect("init").close().await;
        let store = Store::open(db.url(), Access::ReadOnly).await.expect("open");
        assert!(store.is_read_only());
        assert!(store.created_by_memscope());
        let error = store.insert_batch(&one_app_batch()).await.expect_err("read-only");
        assert!(matches!(error, StoreError::ReadOnly { .. }), "{error}");
        store.close().await;
    }

    async fn unreachable_database_is_reported(db) {
        let url = match db.backend {
            Backend::Sqlite => format!("{}-missing/none.db", db.url()),
            Backend::Postgres => "postgres://postgres:hunter2@127.0.0.1:1/test".to_owned(),
            Backend::Mysql => "mysql://root:hunter2@127.0.0.1:1/test".to_owned(),
        };
        let error = unwrap_err(Store::open(&url, Access::Auto).await).await;
        match db.backend {
            // A file that is not there is named as such, not as the driver's "code 14".
            Backend::Sqlite => assert!(matches!(error, StoreError::NoSuchFile { .. }), "{error}"),
            Backend::Postgres | Backend::Mysql => {
                assert!(matches!(error, StoreError::Unreachable { .. }), "{error}")
            }
        }
        assert!(!error.to_string().contains("hunter2"), "{error}");
    }
}

#[tokio::test]
async fn unknown_url_scheme_is_a_bad_url() {
    for url in ["oracle://root:pw@localhost/dify", "/tmp/memory.db", ""] {
        let error = unwrap_err(Store::open(url, Access::Auto).await).await;
        assert!(matches!(error, StoreError::BadUrl { .. }), "{url}: {error}");
        assert!(!error.to_string().contains(":pw@"), "{error}");
    }
}

#[tokio::test]
async fn missing_sqlite_file_is_not_created_by_open() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("absent.db");
    let url = format!("sqlite://{}", path.display());
    let error = unwrap_err(Store::open(&url, Access::Write).await).await;
    assert!(matches!(error, StoreError::NoSuchFile { .. }), "{error}");
    assert!(
        error.hint().is_some_and(|h| h.contains("memscope init")),
        "{error}"
    );
    assert!(!path.exists());
    let error =
        unwrap_err(Store::open(&format!("sqlite://{}", dir.path().display()), Access::Auto).await)
            .await;
    assert!(matches!(error, StoreError::IsADirectory { .. }), "{error}");
}

async fn journal_mode(db: &common::TestDb) -> Vec<Vec<common::Value>> {
    db.fetch("PRAGMA journal_mode", &[common::Kind::Text]).await
}

#[tokio::test]
async fn memscope_sqlite_file_uses_wal() {
    common::run_sqlite(|db| async move {
        Store::init(db.url()).await.expect("init").close().await;
        assert_eq!(journal_mode(&db).await, [[common::Value::from("wal")]]);
    })
    .await;
}

#[tokio::test]
async fn foreign_sqlite_file_keeps_its_journal_mode() {
    common::run_sqlite(|db| async move {
        db.execute(FOREIGN_DIFY_SCHEMA).await;
        let store = Store::open(db.url(), Access::Write).await.expect("open");
        assert!(!store.is_read_only());
        store.close().await;
        assert_eq!(journal_mode(&db).await, [[common::Value::from("delete")]]);
    })
    .await;
}
