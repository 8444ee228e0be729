//! Conversation search through the message-text index and by scanning, on both backends: the
//! index finds exactly what the scan finds, an older database gets the index when it is
//! migrated, and a foreign database's scan streams and stops when dropped.

#[macro_use]
mod common;

use common::fixtures::{app, conversation, id, message};
use memscope::sources::dify::queries::ConversationFilter;
use memscope::sources::dify::queries::search::{SearchPath, TextIndex};
use memscope::store::rows::{Batch, ConversationRow};
use memscope::store::{Access, Backend, Store};

/// Characters the generated texts draw from: ASCII in both cases, letters whose case folding
/// goes beyond ASCII, LIKE's wildcards and escape, FTS5's quote, spaces.
const ALPHABET: &[char] = &[
    'a', 'b', 'c', 'A', 'B', 'C', 'x', 'é', 'É', 'ß', 'Σ', 'σ', 'İ', 'i', '%', '_', '\\', '"', ' ',
    '1',
];

/// A small deterministic generator (xorshift), so a failure names its case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn text(&mut self, max: usize) -> String {
        let len = self.below(max + 1);
        (0..len)
            .map(|_| ALPHABET[self.below(ALPHABET.len())])
            .collect()
    }
}

/// 40 conversations of 1..=6 messages with random query and answer texts.
fn random_batch(rng: &mut Rng) -> Batch {
    let bot = app(10, "Bot", "chat");
    let mut conversations: Vec<ConversationRow> = Vec::new();
    let mut messages = Vec::new();
    for c in 0..40u128 {
        let conv = conversation(100 + c, &bot, &format!("conv {c}"), c as i64);
        for m in 0..=rng.below(6) {
            let mut row = message(1000 + c * 10 + m as u128, &conv, m as i64);
            row.message.query = rng.text(14);
            row.message.answer = rng.text(14);
            messages.push(row);
        }
        conversations.push(conv);
    }
    Batch {
        apps: vec![bot],
        conversations,
        messages,
        ..Batch::default()
    }
}

/// Search texts: pieces of stored texts with their case changed, and random texts.
fn queries(rng: &mut Rng, batch: &Batch) -> Vec<String> {
    let mut out = Vec::new();
    for _ in 0..150 {
        let row = &batch.messages[rng.below(batch.messages.len())].message;
        let source: Vec<char> = if rng.below(2) == 0 {
            &row.query
        } else {
            &row.answer
        }
        .chars()
        .collect();
        let text: String = if source.is_empty() || rng.below(4) == 0 {
            rng.text(5)
        } else {
            let start = rng.below(source.len());
            let len = 1 + rng.below(source.len() - start);
            source[start..start + len]
                .iter()
                .map(|c| match rng.below(3) {
                    0 => c.to_uppercase().next().unwrap_or(*c),
                    1 => c.to_lowercase().next().unwrap_or(*c),
                    _ => *c,
                })
                .collect()
        };
        out.push(text);
    }
    out
}

fn searching(text: &str) -> ConversationFilter {
    ConversationFilter {
        search: Some(text.to_owned()),
        limit: 1_000,
        ..ConversationFilter::default()
    }
}

async fn results(store: &Store, texts: &[String]) -> Vec<Vec<String>> {
    let mut all = Vec::new();
    for text in texts {
        let rows = store
            .list_conversations(&searching(text))
            .await
            .expect("search");
        all.push(rows.into_iter().map(|c| c.id).collect());
    }
    all
}

fn expected_index(db: &common::TestDb) -> TextIndex {
    match db.backend {
        Backend::Sqlite => TextIndex::Fts5Trigram,
        Backend::Postgres => TextIndex::PgTrigram,
        Backend::Mysql => unreachable!("db_tests! runs on SQLite and PostgreSQL"),
    }
}

/// Makes the database look as schema version 4 left it: no index, no meta row, and sqlx's
/// record of the search migration gone, so opening it for writing runs that migration.
async fn downgrade_to_version_4(db: &common::TestDb) {
    match db.backend {
        Backend::Sqlite => {
            db.execute(
                "DROP TRIGGER messages_fts_after_insert; DROP TRIGGER messages_fts_after_delete; \
                 DROP TRIGGER messages_fts_after_update; DROP TABLE messages_fts;",
            )
            .await
        }
        Backend::Postgres => {
            db.execute("DROP INDEX message_query_trgm_idx; DROP INDEX message_answer_trgm_idx;")
                .await
        }
        Backend::Mysql => unreachable!("db_tests! runs on SQLite and PostgreSQL"),
    }
    db.execute(
        "DELETE FROM memscope_meta WHERE key = 'message_search'; \
         UPDATE memscope_meta SET value = '4' WHERE key = 'schema_version'; \
         DELETE FROM _sqlx_migrations WHERE version = 5;",
    )
    .await;
}

db_tests! {
    async fn the_index_finds_what_the_scan_finds(db) {
        let mut rng = Rng(0x5eed_1234_abcd_0001);
        let batch = random_batch(&mut rng);
        let texts = queries(&mut rng, &batch);
        let store = Store::init(db.url()).await.expect("init");
        store.insert_batch(&batch).await.expect("insert");
        assert_eq!(store.text_index(), Some(expected_index(&db)));
        let indexed_paths = texts
            .iter()
            .filter(|t| matches!(store.search_path(Some(t.as_str())), SearchPath::Indexed(_)))
            .count();
        assert!(indexed_paths > 50, "most generated searches use the index: {indexed_paths}");
        let indexed = results(&store, &texts).await;
        store.close().await;

        // Without its meta row the same database is searched by scanning.
        db.execute("DELETE FROM memscope_meta WHERE key = 'message_search'").await;
        let store = Store::open(db.url(), Access::ReadOnly).await.expect("open");
        assert_eq!(store.text_index(), None);
        assert_eq!(store.search_path(Some("abc")), SearchPath::Scan);
        let scanned = results(&store, &texts).await;
        store.close().await;
        let found = scanned.iter().filter(|ids| !ids.is_empty()).count();
        assert!(found > 50, "most generated searches find something: {found}");
        for ((text, with_index), by_scan) in texts.iter().zip(&indexed).zip(&scanned) {
            assert_eq!(with_index, by_scan, "search {text:?}");
        }
    }

    async fn the_index_follows_inserts_updates_and_deletes(db) {
        let bot = app(10, "Bot", "chat");
        let conv = conversation(20, &bot, "Chat", 10);
        let mut first = message(30, &conv, 1);
        first.message.answer = "the parcel left Lyon".to_owned();
        let store = Store::init(db.url()).await.expect("init");
        store
            .insert_batch(&Batch {
                apps: vec![bot],
                conversations: vec![conv],
                messages: vec![first],
                ..Batch::default()
            })
            .await
            .expect("insert");
        let ids = |rows: Vec<memscope::sources::dify::queries::ConversationSummary>| -> Vec<String> {
            rows.into_iter().map(|c| c.id).collect()
        };
        let found = store.list_conversations(&searching("PARCEL")).await.expect("search");
        assert_eq!(ids(found), [id(20)]);
        db.execute(&format!(
            "UPDATE messages SET answer = 'the box left Lyon' WHERE id = '{}'::uuid",
            id(30)
        ))
        .await;
        assert!(store.list_conversations(&searching("parcel")).await.expect("search").is_empty());
        let found = store.list_conversations(&searching("box left")).await.expect("search");
        assert_eq!(ids(found), [id(20)]);
        db.execute(&format!("DELETE FROM messages WHERE id = '{}'::uuid", id(30))).await;
        assert!(store.list_conversations(&searching("box left")).await.expect("search").is_empty());
        store.close().await;
    }

    async fn migrating_an_older_database_indexes_its_messages(db) {
        let mut rng = Rng(0x01d_da7a_0000_0002);
        let batch = random_batch(&mut rng);
        let texts = queries(&mut rng, &batch);
        let store = Store::init(db.url()).await.expect("init");
        store.insert_batch(&batch).await.expect("insert");
        let before = results(&store, &texts).await;
        store.close().await;
        downgrade_to_version_4(&db).await;

        let old = Store::open(db.url(), Access::Write).await.expect("open migrates");
        assert_eq!(old.schema_version(), Some(memscope::store::SCHEMA_VERSION));
        assert_eq!(old.text_index(), Some(expected_index(&db)));
        assert_eq!(results(&old, &texts).await, before, "messages written before are indexed");
        old.close().await;
    }

    async fn a_foreign_database_is_scanned_and_streamed(db) {
        db.execute(FOREIGN_DIFY).await;
        let store = Store::open(db.url(), Access::Auto).await.expect("open");
        assert!(store.is_read_only());
        assert_eq!(store.text_index(), None);
        let mut streamed = Vec::new();
        let path = store
            .stream_conversations(&searching("needle"), |row| streamed.push(row.id))
            .await
            .expect("search");
        assert_eq!(path, SearchPath::Scan);
        assert_eq!(streamed, [id(22), id(20)]);
        store.close().await;
    }

    async fn a_dropped_scan_leaves_the_store_usable(db) {
        db.execute(FOREIGN_DIFY).await;
        db.execute(match db.backend {
            Backend::Sqlite => MANY_NEEDLES_SQLITE,
            Backend::Postgres => MANY_NEEDLES_POSTGRES,
            Backend::Mysql => unreachable!("db_tests! runs on SQLite and PostgreSQL"),
        })
        .await;
        let store = Store::open(db.url(), Access::Auto).await.expect("open");
        let everything = ConversationFilter { limit: 10_000, ..searching("needle") };
        // Stop after the first rows: the rest of the scan is abandoned mid-statement.
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut scan = Box::pin(store.stream_conversations(&everything, move |row| {
            let _ = tx.send(row.id);
        }));
        let first = tokio::select! {
            biased;
            first = rx.recv() => first,
            _ = &mut scan => rx.recv().await,
        };
        assert!(first.is_some());
        drop(scan);
        // Every pooled connection still answers, none left interrupted.
        for _ in 0..8 {
            let all = store.list_conversations(&everything).await.expect("search");
            assert_eq!(all.len(), 2 + NEEDLES);
        }
        store.close().await;
    }
}

/// Dify's tables, as Dify creates them (the columns memscope reads), with three conversations:
/// two hold "needle" in a message.
const FOREIGN_DIFY: &str = "
    CREATE TABLE apps (id uuid PRIMARY KEY, tenant_id uuid NOT NULL, name varchar(255) NOT NULL,
        mode varchar(255) NOT NULL, created_at timestamp NOT NULL);
    CREATE TABLE conversations (id uuid PRIMARY KEY, app_id uuid NOT NULL,
        mode varchar(255) NOT NULL, name varchar(255) NOT NULL, status varchar(255) NOT NULL,
        from_source varchar(255) NOT NULL, dialogue_count int NOT NULL DEFAULT 0,
        created_at timestamp NOT NULL, updated_at timestamp NOT NULL,
        is_deleted boolean NOT NULL DEFAULT false);
    CREATE TABLE messages (id uuid PRIMARY KEY, app_id uuid NOT NULL, conversation_id uuid NOT NULL,
        query text NOT NULL, answer text NOT NULL, message_tokens int NOT NULL DEFAULT 0,
        answer_tokens int NOT NULL DEFAULT 0, parent_message_id uuid,
        status varchar(255) NOT NULL DEFAULT 'normal', error text, invoke_from varchar(255),
        workflow_run_id uuid, created_at timestamp NOT NULL);
    INSERT INTO apps VALUES ('00000000-0000-0000-0000-00000000000a'::uuid,
        '00000000-0000-0000-0000-000000000001'::uuid, 'Dify bot', 'chat', '2025-01-01 00:00:00');
    INSERT INTO conversations VALUES
        ('00000000-0000-0000-0000-000000000014'::uuid, '00000000-0000-0000-0000-00000000000a'::uuid,
         'chat', 'First', 'normal', 'api', 1, '2025-01-01 00:00:00', '2025-01-01 00:01:00', false),
        ('00000000-0000-0000-0000-000000000015'::uuid, '00000000-0000-0000-0000-00000000000a'::uuid,
         'chat', 'Second', 'normal', 'api', 1, '2025-01-01 00:00:00', '2025-01-01 00:02:00', false),
        ('00000000-0000-0000-0000-000000000016'::uuid, '00000000-0000-0000-0000-00000000000a'::uuid,
         'chat', 'Third', 'normal', 'api', 1, '2025-01-01 00:00:00', '2025-01-01 00:03:00', false);
    INSERT INTO messages (id, app_id, conversation_id, query, answer, created_at) VALUES
        ('00000000-0000-0000-0000-000000000032'::uuid, '00000000-0000-0000-0000-00000000000a'::uuid,
         '00000000-0000-0000-0000-000000000014'::uuid, 'a NEEDLE here', 'ok', '2025-01-01 00:00:10'),
        ('00000000-0000-0000-0000-000000000033'::uuid, '00000000-0000-0000-0000-00000000000a'::uuid,
         '00000000-0000-0000-0000-000000000015'::uuid, 'hay', 'only hay', '2025-01-01 00:00:10'),
        ('00000000-0000-0000-0000-000000000034'::uuid, '00000000-0000-0000-0000-00000000000a'::uuid,
         '00000000-0000-0000-0000-000000000016'::uuid, 'hay', 'a needle', '2025-01-01 00:00:10');
";

/// Conversations [`MANY_NEEDLES_SQLITE`] and [`MANY_NEEDLES_POSTGRES`] add, each with a needle.
const NEEDLES: usize = 3_000;

const MANY_NEEDLES_SQLITE: &str = "
    INSERT INTO conversations
    WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 3000)
    SELECT printf('10000000-0000-4000-8000-%012d', n), '00000000-0000-0000-0000-00000000000a',
        'chat', 'bulk ' || n, 'normal', 'api', 1, '2024-01-01 00:00:00',
        datetime('2024-01-01 00:00:00', '+' || n || ' seconds'), 0 FROM g;
    INSERT INTO messages (id, app_id, conversation_id, query, answer, created_at)
    SELECT '2' || substr(id, 2), app_id, id, 'a needle', 'ok', '2024-01-01 00:00:00'
    FROM conversations WHERE name LIKE 'bulk %';
";

const MANY_NEEDLES_POSTGRES: &str = "
    INSERT INTO conversations
    SELECT md5('c' || n)::uuid, '00000000-0000-0000-0000-00000000000a'::uuid, 'chat',
        'bulk ' || n, 'normal', 'api', 1, '2024-01-01 00:00:00',
        timestamp '2024-01-01 00:00:00' + n * interval '1 second', false
    FROM generate_series(1, 3000) AS n;
    INSERT INTO messages (id, app_id, conversation_id, query, answer, created_at)
    SELECT md5('m' || id::text)::uuid, app_id, id, 'a needle', 'ok', '2024-01-01 00:00:00'
    FROM conversations WHERE name LIKE 'bulk %';
";
