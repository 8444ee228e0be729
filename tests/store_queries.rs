//! The queries the CLI, the TUI and `doctor` make, on both backends.

#[macro_use]
mod common;

use std::collections::HashSet;

use common::fixtures::{
    app, at, conversation, full_batch, id, message, message_file, node_execution, upload_file,
    workflow_run,
};
use memscope::sources::dify::queries::{ConversationCursor, ConversationFilter};
use memscope::store::rows::{Batch, ConversationRow};
use memscope::store::{Access, Backend, Store};

/// The conversation whose app row is missing; its id has a prefix no other id shares.
const ORPHAN: u128 = 0xabcdef12_0000_4000_8000_000000000024;

/// Two apps; conversations 20..=23 and [`ORPHAN`], with `updated_at` chosen so 21 and 22 tie.
fn listing_batch() -> Batch {
    let support = app(10, "Support Bot", "advanced-chat");
    let sales = app(11, "Sales", "chat");
    let conversations = vec![
        conversation(20, &support, "Refund question", 100),
        conversation(21, &support, "Shipping", 300),
        conversation(22, &sales, "Pricing 50% off", 300),
        conversation(23, &sales, "Demo request", 200),
        // Its app row is missing: the list still shows it.
        ConversationRow {
            app_id: id(99),
            ..conversation(ORPHAN, &sales, "Orphan", 50)
        },
    ];
    let mut messages = vec![
        message(50, &conversations[0], 10),
        message(51, &conversations[0], 90),
        message(52, &conversations[3], 150),
    ];
    messages[1].message.answer = "Your PARCEL is on its way".to_owned();
    Batch {
        apps: vec![support, sales],
        conversations,
        messages,
        ..Batch::default()
    }
}

/// Dify's own tables (with columns memscope does not model, and no `apps.memory_window`).
const DIFY_OWN_SCHEMA: &str = "
    CREATE TABLE apps (id uuid PRIMARY KEY, tenant_id uuid NOT NULL, name varchar(255) NOT NULL,
        mode varchar(255) NOT NULL, icon varchar(255), enable_site boolean NOT NULL,
        created_at timestamp NOT NULL, updated_at timestamp NOT NULL);
    CREATE TABLE conversations (id uuid PRIMARY KEY, app_id uuid NOT NULL,
        mode varchar(255) NOT NULL, name varchar(255) NOT NULL, inputs json NOT NULL,
        status varchar(255) NOT NULL, from_source varchar(255) NOT NULL,
        dialogue_count int NOT NULL DEFAULT 0, created_at timestamp NOT NULL,
        updated_at timestamp NOT NULL, is_deleted boolean NOT NULL DEFAULT false);
    CREATE TABLE messages (id uuid PRIMARY KEY, app_id uuid NOT NULL, conversation_id uuid NOT NULL,
        inputs json NOT NULL, query text NOT NULL, message json NOT NULL,
        message_tokens int NOT NULL DEFAULT 0, answer text NOT NULL,
        answer_tokens int NOT NULL DEFAULT 0, parent_message_id uuid, currency varchar(255) NOT NULL,
        status varchar(255) NOT NULL DEFAULT 'normal', error text, invoke_from varchar(255),
        from_source varchar(255) NOT NULL, workflow_run_id uuid,
        created_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP, updated_at timestamp NOT NULL);
    INSERT INTO apps VALUES ('00000000-0000-0000-0000-00000000000a'::uuid,
        '00000000-0000-0000-0000-000000000001'::uuid, 'Dify bot', 'chat', NULL, true,
        '2025-01-01 00:00:00', '2025-01-01 00:00:00');
    INSERT INTO conversations VALUES ('00000000-0000-0000-0000-000000000014'::uuid,
        '00000000-0000-0000-0000-00000000000a'::uuid, 'chat', 'Live chat', '{}', 'normal', 'api', 1,
        '2025-01-01 00:00:00', '2025-01-01 00:01:00', false);
    INSERT INTO messages VALUES ('00000000-0000-0000-0000-000000000032'::uuid,
        '00000000-0000-0000-0000-00000000000a'::uuid, '00000000-0000-0000-0000-000000000014'::uuid,
        '{}', 'hi', '\"\"', 3, 'hello', 4, NULL, 'USD', 'normal', NULL, 'service-api', 'api',
        NULL, '2025-01-01 00:00:10', '2025-01-01 00:00:10');
";

async fn store_with(db: &common::TestDb, batch: &Batch) -> Store {
    let store = Store::init(db.url()).await.expect("init");
    store.insert_batch(batch).await.expect("insert");
    store
}

async fn listed_ids(store: &Store, filter: ConversationFilter) -> Vec<String> {
    store
        .list_conversations(&filter)
        .await
        .expect("list")
        .into_iter()
        .map(|c| c.id)
        .collect()
}

fn searching(text: &str) -> ConversationFilter {
    ConversationFilter {
        search: Some(text.to_owned()),
        ..ConversationFilter::default()
    }
}

db_tests! {
    async fn conversations_are_listed_newest_first_with_id_tie_breaker(db) {
        let store = store_with(&db, &listing_batch()).await;
        let rows = store
            .list_conversations(&ConversationFilter::default())
            .await
            .expect("list");
        let ids: Vec<&str> = rows.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, [id(22), id(21), id(23), id(20), id(ORPHAN)]);

        let refund = rows.iter().find(|c| c.id == id(20)).expect("conversation 20");
        assert_eq!(refund.name, "Refund question");
        assert_eq!(refund.app_id, id(10));
        assert_eq!(refund.app_name.as_deref(), Some("Support Bot"));
        assert_eq!(refund.app_mode.as_deref(), Some("advanced-chat"));
        assert_eq!(refund.mode, "advanced-chat");
        assert_eq!(refund.message_count, 2);
        assert_eq!(refund.last_activity, at(90));
        assert_eq!(refund.updated_at, at(100));

        let orphan = rows.iter().find(|c| c.id == id(ORPHAN)).expect("orphan");
        assert_eq!(orphan.app_name, None);
        assert_eq!(orphan.message_count, 0);
        assert_eq!(orphan.last_activity, at(50), "no messages: updated_at");
        store.close().await;
    }

    async fn keyset_paging_visits_every_conversation_once(db) {
        let store = store_with(&db, &listing_batch()).await;
        let everything = listed_ids(&store, ConversationFilter::default()).await;
        let mut paged = Vec::new();
        let mut after: Option<ConversationCursor> = None;
        loop {
            let page = store
                .list_conversations(&ConversationFilter {
                    limit: 2,
                    after: after.clone(),
                    ..ConversationFilter::default()
                })
                .await
                .expect("page");
            assert!(page.len() <= 2);
            let Some(last) = page.last() else { break };
            after = Some(last.cursor());
            paged.extend(page.iter().map(|c| c.id.clone()));
        }
        assert_eq!(paged, everything);
        store.close().await;
    }

    async fn conversations_filter_by_app(db) {
        let store = store_with(&db, &listing_batch()).await;
        let by_app = |app_id: &str| ConversationFilter {
            app_id: Some(app_id.to_owned()),
            ..ConversationFilter::default()
        };
        assert_eq!(listed_ids(&store, by_app(&id(11))).await, [id(22), id(23)]);
        assert_eq!(
            listed_ids(&store, by_app(&id(10).to_uppercase())).await,
            [id(21), id(20)],
            "ids are matched case-insensitively"
        );
        assert!(listed_ids(&store, by_app("not-a-uuid")).await.is_empty());
        store.close().await;
    }

    async fn conversations_are_searched_by_name_id_app_and_text(db) {
        let store = store_with(&db, &listing_batch()).await;
        assert_eq!(listed_ids(&store, searching("refund")).await, [id(20)], "name");
        assert_eq!(listed_ids(&store, searching("SUPPORT bot")).await, [id(21), id(20)], "app");
        assert_eq!(listed_ids(&store, searching("question 52")).await, [id(23)], "query");
        assert_eq!(listed_ids(&store, searching("parcel")).await, [id(20)], "answer");
        assert_eq!(listed_ids(&store, searching("ABCDEF1")).await, [id(ORPHAN)], "id prefix");
        assert_eq!(listed_ids(&store, searching(&id(23))).await, [id(23)], "whole id");
        assert_eq!(listed_ids(&store, searching("50%")).await, [id(22)], "% is literal");
        assert!(listed_ids(&store, searching("_x_")).await.is_empty(), "_ is literal");
        assert!(listed_ids(&store, searching("nothing like this")).await.is_empty());
        assert_eq!(listed_ids(&store, searching("  ")).await.len(), 5, "blank: no filter");
        let paged = ConversationFilter {
            limit: 1,
            ..searching("support bot")
        };
        assert_eq!(listed_ids(&store, paged).await, [id(21)]);
        store.close().await;
    }

    async fn conversation_info_includes_app_and_memory_window(db) {
        let store = store_with(&db, &listing_batch()).await;
        let info = store
            .conversation_info(&id(21))
            .await
            .expect("info")
            .expect("conversation 21");
        assert_eq!(info.name, "Shipping");
        assert_eq!(info.app_name.as_deref(), Some("Support Bot"));
        assert_eq!(info.app_mode.as_deref(), Some("advanced-chat"));
        assert_eq!(info.memory_window, Some(10));
        assert_eq!(info.status, "normal");
        assert_eq!(info.from_source, "api");
        assert_eq!(info.updated_at, at(300));
        assert_eq!(store.conversation_info(&id(77)).await.expect("info"), None);
        assert_eq!(store.conversation_info("garbage").await.expect("info"), None);
        store.close().await;
    }

    async fn difys_own_database_is_read_unchanged(db) {
        db.execute(DIFY_OWN_SCHEMA).await;
        let store = Store::open(db.url(), Access::Auto).await.expect("open");
        assert!(store.is_read_only());
        let info = store
            .conversation_info(&id(20))
            .await
            .expect("info")
            .expect("conversation 20");
        assert_eq!(info.app_name.as_deref(), Some("Dify bot"));
        assert_eq!(info.memory_window, None);
        assert_eq!(info.dialogue_count, 1);
        let history = store.history_messages(&id(20), 500).await.expect("history");
        assert_eq!(history.len(), 1);
        assert_eq!((history[0].query.as_str(), history[0].answer.as_str()), ("hi", "hello"));
        assert_eq!(history[0].created_at, at(10));
        assert_eq!(history[0].message_tokens, 3);
        let listed = listed_ids(&store, searching("hello")).await;
        assert_eq!(listed, [id(20)]);
        store.close().await;
    }

    async fn history_is_newest_first_with_id_tie_breaker(db) {
        let support = app(10, "Bot", "chat");
        let chat = conversation(20, &support, "Chat", 0);
        let other = conversation(21, &support, "Other", 0);
        let batch = Batch {
            apps: vec![support],
            conversations: vec![chat.clone(), other.clone()],
            messages: vec![
                message(53, &chat, 5),
                message(51, &chat, 5),
                message(52, &chat, 5),
                message(50, &chat, 1),
                message(54, &chat, 9),
                message(60, &other, 7),
            ],
            ..Batch::default()
        };
        let store = store_with(&db, &batch).await;
        let ids = |messages: Vec<memscope::memory::model::StoredMessage>| -> Vec<String> {
            messages.into_iter().map(|m| m.id).collect()
        };
        let newest = store.history_messages(&chat.id, 500).await.expect("history");
        assert_eq!(ids(newest), [id(54), id(53), id(52), id(51), id(50)]);
        let limited = store.history_messages(&chat.id, 3).await.expect("history");
        assert_eq!(ids(limited), [id(54), id(53), id(52)]);
        let oldest = store.all_messages(&chat.id).await.expect("all");
        assert_eq!(ids(oldest), [id(50), id(51), id(52), id(53), id(54)]);
        assert!(store.history_messages("nope", 10).await.expect("history").is_empty());
        store.close().await;
    }

    async fn messages_read_back_every_field(db) {
        let batch = full_batch();
        let store = store_with(&db, &batch).await;
        let stored = store.all_messages(&batch.conversations[0].id).await.expect("all");
        let expected: Vec<_> = batch.messages.iter().map(|m| m.message.clone()).collect();
        assert_eq!(stored, expected);
        store.close().await;
    }

    async fn message_files_are_batched_and_named(db) {
        let support = app(10, "Bot", "chat");
        let chat = conversation(20, &support, "Chat", 0);
        let messages: Vec<_> = (0..300).map(|i| message(1_000 + i, &chat, i as i64)).collect();
        let upload = upload_file(30, "receipt.png");
        let mut files: Vec<_> = messages
            .iter()
            .enumerate()
            .map(|(i, m)| message_file(5_000 + i as u128, m, None))
            .collect();
        files[0] = message_file(5_000, &messages[0], Some(&upload));
        files[299].belongs_to = Some("assistant".to_owned());
        let batch = Batch {
            apps: vec![support],
            conversations: vec![chat],
            upload_files: vec![upload],
            messages: messages.clone(),
            message_files: files,
            ..Batch::default()
        };
        let store = store_with(&db, &batch).await;
        let mut wanted: Vec<String> = messages.iter().map(|m| m.message.id.clone()).collect();
        wanted.push("not-a-uuid".to_owned());
        let found = store.message_files(&wanted).await.expect("files");
        assert_eq!(found.len(), 300);
        assert_eq!(found[0].name.as_deref(), Some("receipt.png"));
        assert_eq!(found[0].label(), "receipt.png");
        assert_eq!(found[1].name, None);
        assert_eq!(found[299].belongs_to.as_deref(), Some("assistant"));
        let ids: HashSet<&str> = found.iter().map(|f| f.message_id.as_str()).collect();
        assert_eq!(ids.len(), 300);
        let some = store.message_files(&wanted[3..5]).await.expect("files");
        assert_eq!(
            some.iter().map(|f| f.message_id.clone()).collect::<Vec<_>>(),
            wanted[3..5]
        );
        assert!(store.message_files(&[]).await.expect("files").is_empty());
        store.close().await;
    }

    async fn a_conversations_files_are_its_messages_files_in_one_read(db) {
        let support = app(10, "Bot", "chat");
        let chat = conversation(20, &support, "Chat", 0);
        let other = conversation(21, &support, "Other", 0);
        let messages: Vec<_> = (0..300).map(|i| message(1_000 + i, &chat, i as i64)).collect();
        let elsewhere = message(2_000, &other, 5);
        let upload = upload_file(30, "receipt.png");
        let mut files: Vec<_> = messages
            .iter()
            .step_by(7)
            .enumerate()
            .map(|(i, m)| message_file(5_000 + i as u128, m, None))
            .collect();
        // Two files of one message, the later one written first: the read orders them in time.
        let mut later = message_file(6_001, &messages[3], Some(&upload));
        later.created_at = messages[3].message.created_at + chrono::TimeDelta::seconds(9);
        files.push(later);
        files.push(message_file(6_002, &messages[3], None));
        files.push(message_file(6_003, &elsewhere, None));
        let mut all = messages.clone();
        all.push(elsewhere);
        let batch = Batch {
            apps: vec![support],
            conversations: vec![chat.clone(), other],
            upload_files: vec![upload],
            messages: all,
            message_files: files,
            ..Batch::default()
        };
        let store = store_with(&db, &batch).await;
        let ids: Vec<String> = messages.iter().map(|m| m.message.id.clone()).collect();
        let one_read = store.conversation_files(&chat.id).await.expect("files");
        assert_eq!(one_read.len(), 300_usize.div_ceil(7) + 2);
        assert_eq!(one_read, store.message_files(&ids).await.expect("files"));
        let third: Vec<_> = one_read
            .iter()
            .filter(|f| f.message_id == messages[3].message.id)
            .map(|f| f.name.as_deref())
            .collect();
        assert_eq!(third, [None, Some("receipt.png")]);
        assert!(
            store
                .conversation_files("not-a-uuid")
                .await
                .expect("files")
                .is_empty()
        );
        store.close().await;
    }

    async fn a_whole_conversation_reads_as_its_history_window_reads_it(db) {
        let support = app(10, "Bot", "chat");
        let chat = conversation(20, &support, "Chat", 0);
        let other = conversation(21, &support, "Other", 0);
        let mut messages: Vec<_> = (0..40).map(|i| message(1_000 + i, &chat, i as i64)).collect();
        // Two messages of one second: ties go by id.
        messages[7].message.created_at = messages[6].message.created_at;
        let elsewhere = message(2_000, &other, 3);
        let mut all = messages.clone();
        all.push(elsewhere);
        let batch = Batch {
            apps: vec![support],
            conversations: vec![chat.clone(), other],
            messages: all,
            ..Batch::default()
        };
        let store = store_with(&db, &batch).await;
        if db.backend == Backend::Sqlite {
            // Instants as other programs write them, which SQLite's own reader leaves to sqlx.
            for (update, n) in [
                ("created_at = '2025-01-01T00:00:20'", 1_020),
                ("created_at = '2025-01-01 00:00:21Z'", 1_021),
                ("created_at = '2025-01-01 00:00:22.250'", 1_022),
            ] {
                db.execute(&format!(
                    "UPDATE messages SET {update} WHERE id = '{}'",
                    id(n)
                ))
                .await;
            }
        }
        let whole = store.all_messages(&chat.id).await.expect("messages");
        let mut window = store.history_messages(&chat.id, 1_000).await.expect("window");
        window.reverse();
        assert_eq!(whole.len(), 40);
        assert_eq!(whole, window);
        assert!(store.all_messages("not-a-uuid").await.expect("none").is_empty());

        if db.backend == Backend::Sqlite {
            // A row no reader can read fails the conversation, as it always did.
            db.execute(&format!(
                "UPDATE messages SET created_at = 'not a time' WHERE id = '{}'",
                id(1_030)
            ))
            .await;
            assert!(store.all_messages(&chat.id).await.is_err());
        }
        store.close().await;
    }

    async fn existing_workflow_runs_are_found(db) {
        let support = app(10, "Bot", "chat");
        let runs: Vec<_> = (0..300).map(|i| workflow_run(2_000 + i, &support)).collect();
        let batch = Batch {
            apps: vec![support],
            workflow_runs: runs,
            ..Batch::default()
        };
        let store = store_with(&db, &batch).await;
        let mut asked: Vec<String> = (1_900..2_100).map(id).collect();
        asked.push(id(2_299));
        asked.push("bogus".to_owned());
        let found = store.existing_workflow_runs(&asked).await.expect("runs");
        let expected: HashSet<String> = (2_000..2_100).map(id).chain([id(2_299)]).collect();
        assert_eq!(found, expected);
        store.close().await;
    }

    async fn every_conversation_is_streamed_as_one_group(db) {
        let support = app(10, "Bot", "chat");
        let chats: Vec<_> = (0..3).map(|i| conversation(20 + i, &support, "c", 0)).collect();
        let empty = conversation(30, &support, "empty", 0);
        let mut messages = Vec::new();
        for (c, chat) in chats.iter().enumerate() {
            for m in 0..4u128 {
                // Created in reverse of id order, so grouping must not rely on insertion order.
                messages.push(message(100 * (c as u128 + 1) + m, chat, 10 - m as i64));
            }
        }
        let batch = Batch {
            apps: vec![support],
            conversations: chats.iter().cloned().chain([empty]).collect(),
            messages,
            ..Batch::default()
        };
        let store = store_with(&db, &batch).await;
        let mut groups = Vec::new();
        store
            .for_each_conversation(|messages| groups.push(messages), |bad| panic!("{bad:?}"))
            .await
            .expect("stream");
        assert_eq!(groups.len(), 3, "conversations without messages are not visited");
        for group in &groups {
            assert_eq!(group.len(), 4);
            assert!(group.iter().all(|m| m.conversation_id == group[0].conversation_id));
            assert!(group.windows(2).all(|w| w[0].created_at <= w[1].created_at));
        }
        let mut seen: Vec<&str> = groups.iter().map(|g| g[0].conversation_id.as_str()).collect();
        seen.sort();
        assert_eq!(seen, [id(20), id(21), id(22)]);
        store.close().await;
    }

    async fn dangling_workflow_runs_are_found(db) {
        let support = app(10, "Bot", "chat");
        let chat = conversation(20, &support, "Chat", 0);
        let run = workflow_run(40, &support);
        let mut linked = message(50, &chat, 1);
        linked.message.workflow_run_id = Some(run.id.clone());
        let mut dangling = message(51, &chat, 2);
        dangling.message.workflow_run_id = Some(id(41));
        let plain = message(52, &chat, 3);
        let batch = Batch {
            apps: vec![support],
            conversations: vec![chat],
            workflow_runs: vec![run],
            messages: vec![linked, dangling, plain],
            ..Batch::default()
        };
        let store = store_with(&db, &batch).await;
        let found = store.dangling_workflow_runs(|bad| panic!("{bad:?}")).await.expect("dangling");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].message_id, id(51));
        assert_eq!(found[0].conversation_id, id(20));
        assert_eq!(found[0].workflow_run_id, id(41));
        store.close().await;
    }

    async fn bad_node_json_is_detected(db) {
        let support = app(10, "Bot", "chat");
        let run = workflow_run(40, &support);
        let good = node_execution(70, &run, "{\"text\": \"fine\"}");
        let truncated = node_execution(71, &run, "{\"text\": \"cut of");
        let mut bad_inputs = node_execution(72, &run, "[]");
        bad_inputs.inputs = Some("not json".to_owned());
        bad_inputs.process_data = Some(String::new());
        let batch = Batch {
            apps: vec![support],
            workflow_runs: vec![run],
            node_executions: vec![good, truncated, bad_inputs],
            ..Batch::default()
        };
        let store = store_with(&db, &batch).await;
        let bad = store.bad_node_json(|bad| panic!("{bad:?}")).await.expect("scan");
        let found: Vec<(String, &str)> = bad
            .iter()
            .map(|b| (b.node_execution_id.clone(), b.column))
            .collect();
        assert_eq!(
            found,
            [
                (id(71), "outputs"),
                (id(72), "inputs"),
                (id(72), "process_data"),
            ]
        );
        assert!(bad.iter().all(|b| b.workflow_run_id == Some(id(40)) && !b.error.is_empty()));
        store.close().await;
    }

    async fn table_counts_cover_every_table(db) {
        let store = store_with(&db, &full_batch()).await;
        let counts = store.table_counts().await.expect("counts");
        assert_eq!(counts.len(), 20);
        let rows = |table: &str| counts.iter().find(|c| c.table == table).map(|c| c.rows);
        assert_eq!(rows("messages"), Some(2));
        assert_eq!(rows("job"), Some(2));
        assert_eq!(rows("user"), Some(1));
        assert_eq!(rows("chat_memory_trims"), Some(0));
        store.close().await;
    }

    async fn table_counts_skip_tables_a_foreign_database_lacks(db) {
        db.execute(
            "CREATE TABLE message (id uuid PRIMARY KEY, text text NOT NULL);
             INSERT INTO message VALUES ('00000000-0000-0000-0000-000000000001'::uuid, 'hi');",
        )
        .await;
        let store = Store::open(db.url(), Access::Auto).await.expect("open");
        let counts = store.table_counts().await.expect("counts");
        assert_eq!(counts.len(), 1);
        assert_eq!((counts[0].table, counts[0].rows), ("message", 1));
        store.close().await;
    }
}
