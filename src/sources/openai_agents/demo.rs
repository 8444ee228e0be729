//! An OpenAI Agents SDK session file, as `SQLiteSession` and `AdvancedSQLiteSession` of
//! openai-agents 0.24.0 write it: their tables exactly as they create them (WAL mode), each item
//! one JSON row in `agent_messages`, an advanced session's structure, branch and usage rows.
//! The sessions an operator of such agents meets: a tool-using agent, a run that stopped while
//! its tool call waited (the call is stored without output, and the SDK drops it silently), a
//! long session whose windows start inside tool calls, and an advanced session with a branch.

use std::path::{Path, PathBuf};

use chrono::NaiveDateTime;
use serde_json::{Value as Json, json};
use sqlx::Connection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};

use crate::demo::chapter::{OPENAI_AGENTS_STREAM, Story};
use crate::demo::ids::{DemoRng, base_time, seconds};
use crate::demo::text::{prose, short_answer, short_query};

/// The tables of `SQLiteSession` and `AdvancedSQLiteSession(create_tables=True)`.
const SETUP: &str = "
    PRAGMA journal_mode=WAL;
    CREATE TABLE IF NOT EXISTS agent_sessions (
        session_id TEXT PRIMARY KEY,
        created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
    );
    CREATE TABLE IF NOT EXISTS agent_messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        message_data TEXT NOT NULL,
        created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        FOREIGN KEY (session_id) REFERENCES agent_sessions (session_id) ON DELETE CASCADE
    );
    CREATE INDEX IF NOT EXISTS idx_agent_messages_session_id ON agent_messages (session_id, id);
    CREATE TABLE IF NOT EXISTS message_structure (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        message_id INTEGER NOT NULL,
        branch_id TEXT NOT NULL DEFAULT 'main',
        message_type TEXT NOT NULL,
        sequence_number INTEGER NOT NULL,
        user_turn_number INTEGER,
        branch_turn_number INTEGER,
        tool_name TEXT,
        created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        FOREIGN KEY (session_id) REFERENCES agent_sessions(session_id) ON DELETE CASCADE,
        FOREIGN KEY (message_id) REFERENCES agent_messages(id) ON DELETE CASCADE
    );
    CREATE TABLE IF NOT EXISTS turn_usage (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        branch_id TEXT NOT NULL DEFAULT 'main',
        user_turn_number INTEGER NOT NULL,
        requests INTEGER DEFAULT 0,
        input_tokens INTEGER DEFAULT 0,
        output_tokens INTEGER DEFAULT 0,
        total_tokens INTEGER DEFAULT 0,
        input_tokens_details JSON,
        output_tokens_details JSON,
        created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        FOREIGN KEY (session_id) REFERENCES agent_sessions(session_id) ON DELETE CASCADE,
        UNIQUE(session_id, branch_id, user_turn_number)
    );
    CREATE TABLE IF NOT EXISTS branch_reservations (
        session_id TEXT NOT NULL,
        branch_id TEXT NOT NULL,
        PRIMARY KEY (session_id, branch_id)
    );
    CREATE TABLE IF NOT EXISTS session_clear_generations (
        session_id TEXT PRIMARY KEY,
        generation INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX IF NOT EXISTS idx_structure_session_seq ON message_structure(session_id, sequence_number);
    CREATE INDEX IF NOT EXISTS idx_structure_branch ON message_structure(session_id, branch_id);
    CREATE INDEX IF NOT EXISTS idx_structure_turn ON message_structure(session_id, branch_id, user_turn_number);
    CREATE INDEX IF NOT EXISTS idx_structure_branch_seq ON message_structure(session_id, branch_id, sequence_number);
    CREATE INDEX IF NOT EXISTS idx_turn_usage_session_turn ON turn_usage(session_id, branch_id, user_turn_number);
";

/// Turns of the long session.
const LONG_TURNS: usize = 60;

#[derive(Debug, thiserror::Error)]
pub enum OpenAiAgentsDemoError {
    #[error("{0} exists; the OpenAI Agents demo goes into a new file")]
    Exists(PathBuf),
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: sqlx::Error },
}

/// What the demo wrote.
#[derive(Debug, Clone)]
pub struct OpenAiAgentsDemoSummary {
    pub path: PathBuf,
    pub sessions: usize,
    pub items: usize,
    pub stories: Vec<Story>,
}

/// One stored item: its session, its JSON, when it was written.
struct Row {
    session: &'static str,
    item: Json,
    at: NaiveDateTime,
}

/// An advanced session's structure row: the item (by its index in the rows), its branch, its
/// sequence and turn.
struct Structure {
    row: usize,
    branch: &'static str,
    sequence: i64,
    turn: i64,
    /// When the row was written: a branch's copies are written when it is made.
    at: NaiveDateTime,
}

#[derive(Default)]
struct Rows {
    rows: Vec<Row>,
    structure: Vec<Structure>,
    /// (branch, turn, requests, input tokens, output tokens).
    usage: Vec<(&'static str, i64, i64, i64, i64)>,
}

struct Writer<'a> {
    story: Rows,
    clock: NaiveDateTime,
    rng: &'a mut DemoRng,
}

impl Writer<'_> {
    fn push(&mut self, session: &'static str, item: Json) -> usize {
        self.clock += seconds(1 + self.rng.below(20) as i64);
        self.story.rows.push(Row {
            session,
            item,
            at: self.clock,
        });
        self.story.rows.len() - 1
    }

    fn user(&mut self, session: &'static str, text: &str) -> usize {
        self.push(session, json!({"content": text, "role": "user"}))
    }

    fn answer(&mut self, session: &'static str, text: &str) -> usize {
        let id = format!("msg_{}", self.rng.hex8());
        self.push(
            session,
            json!({"id": id, "type": "message", "role": "assistant", "status": "completed",
                   "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]}),
        )
    }

    /// A reasoning item, then the call; the call's id.
    fn call(&mut self, session: &'static str, name: &str, arguments: Json) -> (Vec<usize>, String) {
        let call_id = format!("call_{}", self.rng.hex8());
        let reasoning_id = format!("rs_{}", self.rng.hex8());
        let item_id = format!("fc_{}", self.rng.hex8());
        let reasoning = self.push(
            session,
            json!({"id": reasoning_id, "type": "reasoning",
                   "summary": [{"type": "summary_text", "text": format!("I should call {name}.")}]}),
        );
        let call = self.push(
            session,
            json!({"arguments": arguments.to_string(), "call_id": call_id, "name": name,
                   "type": "function_call", "id": item_id, "status": "completed"}),
        );
        (vec![reasoning, call], call_id)
    }

    fn output(&mut self, session: &'static str, call_id: &str, text: &str) -> usize {
        self.push(
            session,
            json!({"call_id": call_id, "output": text, "type": "function_call_output"}),
        )
    }

    /// A turn with a tool call answered: its rows.
    fn tool_turn(
        &mut self,
        session: &'static str,
        question: &str,
        tool: &str,
        arguments: Json,
        result: &str,
        answer: &str,
    ) -> Vec<usize> {
        let mut rows = vec![self.user(session, question)];
        let (call_rows, call_id) = self.call(session, tool, arguments);
        rows.extend(call_rows);
        rows.push(self.output(session, &call_id, result));
        rows.push(self.answer(session, answer));
        rows
    }
}

fn story(title: &'static str, session: &str, demonstrates: &'static str) -> Story {
    Story {
        title,
        table: "agent_sessions",
        id: session.to_owned(),
        demonstrates,
    }
}

fn openai_agents_story(seed: u64) -> (Rows, Vec<Story>) {
    let mut rng = DemoRng::new(seed, OPENAI_AGENTS_STREAM);
    let mut words = DemoRng::new(seed, OPENAI_AGENTS_STREAM + 1);
    let mut w = Writer {
        story: Rows::default(),
        clock: base_time(),
        rng: &mut rng,
    };
    let mut stories = Vec::new();

    w.tool_turn(
        "trip-planner",
        "What is the weather in Lisbon tomorrow?",
        "get_forecast",
        json!({"city": "Lisbon"}),
        "light rain, 17 °C, 4 mm",
        "Light rain and 17 °C: take an umbrella.",
    );
    w.tool_turn(
        "trip-planner",
        "And in Porto?",
        "get_forecast",
        json!({"city": "Porto"}),
        "showers, 15 °C, 9 mm",
        "Showers and 15 °C in Porto.",
    );
    stories.push(story(
        "A tool-using agent",
        "trip-planner",
        "reasoning, function calls and their outputs, as the Runner sends them",
    ));

    w.user("payments", "Send 100 EUR to Bob.");
    w.call(
        "payments",
        "transfer_money",
        json!({"to": "Bob", "amount": 100}),
    );
    w.user("payments", "Did it go through?");
    w.answer("payments", "I cannot confirm a transfer: none was made.");
    stories.push(story(
        "A run that stopped",
        "payments",
        "a tool call stored without its output: the SDK drops it (and its reasoning) silently",
    ));

    for turn in 1..=LONG_TURNS {
        let question = short_query(&mut words);
        if turn % 5 == 0 {
            let result = prose(&mut words, 2);
            let answer = short_answer(&mut words);
            w.tool_turn(
                "support-long",
                &question,
                "lookup_order",
                json!({"order": 1000 + turn}),
                &result,
                &answer,
            );
        } else {
            w.user("support-long", &question);
            let answer = prose(&mut words, 1 + turn % 3);
            w.answer("support-long", &answer);
        }
    }
    stories.push(story(
        "A long session",
        "support-long",
        "--limit windows that start inside a tool call: the SDK drops the orphaned output",
    ));

    // An advanced session: three turns on main, then a branch from turn 2 with turns of its own.
    let branched = "branched";
    let mut sequence = 0;
    let mut turns: Vec<Vec<usize>> = Vec::new();
    let main_turns = [
        w.tool_turn(
            branched,
            "Find me a hotel in Lisbon for May 3.",
            "search_hotels",
            json!({"city": "Lisbon", "date": "2026-05-03"}),
            "Hotel Alfama, 140 EUR; Casa Baixa, 95 EUR",
            "Casa Baixa is the cheaper one, at 95 EUR.",
        ),
        vec![
            w.user(branched, "Book the cheaper one."),
            w.answer(branched, "Booked Casa Baixa for May 3."),
        ],
        vec![
            w.user(branched, "Thanks!"),
            w.answer(branched, "Enjoy Lisbon."),
        ],
    ];
    for (index, rows) in main_turns.iter().enumerate() {
        for &row in rows {
            sequence += 1;
            let at = w.story.rows[row].at;
            w.story.structure.push(Structure {
                row,
                branch: "main",
                sequence,
                turn: index as i64 + 1,
                at,
            });
        }
        w.story.usage.push((
            "main",
            index as i64 + 1,
            1 + i64::from(index == 0),
            180 + 60 * index as i64,
            24,
        ));
        turns.push(rows.clone());
    }
    w.clock += seconds(30);
    for &row in &turns[0] {
        sequence += 1;
        let at = w.clock;
        w.story.structure.push(Structure {
            row,
            branch: "cheaper-first",
            sequence,
            turn: 1,
            at,
        });
    }
    let retry = [
        vec![
            w.user(branched, "Actually, book the one with the better view."),
            w.answer(branched, "Booked Hotel Alfama, with a river view."),
        ],
        vec![
            w.user(branched, "How much was it?"),
            w.answer(branched, "140 EUR for the night."),
        ],
    ];
    for (index, rows) in retry.iter().enumerate() {
        for &row in rows {
            sequence += 1;
            let at = w.story.rows[row].at;
            w.story.structure.push(Structure {
                row,
                branch: "cheaper-first",
                sequence,
                turn: index as i64 + 2,
                at,
            });
        }
        w.story.usage.push((
            "cheaper-first",
            index as i64 + 2,
            1,
            250 + 40 * index as i64,
            18,
        ));
    }
    stories.push(story(
        "A session with a branch",
        branched,
        "an AdvancedSQLiteSession branched from turn 2, each turn's usage: `thread` and `--branch`",
    ));
    (w.story, stories)
}

/// The structure row's `message_type` and `tool_name`, as `AdvancedSQLiteSession` classifies an item.
fn classified(item: &Json) -> (String, Option<String>) {
    let kind = match (item["role"].as_str(), item["type"].as_str()) {
        (Some("user"), _) => "user".to_owned(),
        (Some("assistant"), _) => "assistant".to_owned(),
        (_, Some(kind)) => kind.to_owned(),
        _ => "other".to_owned(),
    };
    (kind, item["name"].as_str().map(str::to_owned))
}

fn timestamp(at: NaiveDateTime) -> String {
    at.format("%Y-%m-%d %H:%M:%S").to_string()
}

/// Writes the story for `seed` into a new SQLite file at `path`, as the SDK's sessions would have.
pub async fn write_openai_agents_demo(
    path: &Path,
    seed: u64,
) -> Result<OpenAiAgentsDemoSummary, OpenAiAgentsDemoError> {
    if path.exists() {
        return Err(OpenAiAgentsDemoError::Exists(path.to_owned()));
    }
    let failed = |source| OpenAiAgentsDemoError::Write {
        path: path.to_owned(),
        source,
    };
    let (story, stories) = openai_agents_story(seed);
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true);
    let mut conn = SqliteConnection::connect_with(&options)
        .await
        .map_err(failed)?;
    sqlx::raw_sql(SETUP)
        .execute(&mut conn)
        .await
        .map_err(failed)?;
    let mut tx = conn.begin().await.map_err(failed)?;
    let mut sessions: Vec<&str> = Vec::new();
    for (index, row) in story.rows.iter().enumerate() {
        if !sessions.contains(&row.session) {
            sessions.push(row.session);
            sqlx::query(
                "INSERT INTO agent_sessions (session_id, created_at, updated_at) VALUES (?, ?, ?)",
            )
            .bind(row.session)
            .bind(timestamp(row.at))
            .bind(timestamp(row.at))
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
        }
        sqlx::query("INSERT INTO agent_messages (id, session_id, message_data, created_at) VALUES (?, ?, ?, ?)")
            .bind(index as i64 + 1).bind(row.session).bind(row.item.to_string()).bind(timestamp(row.at))
            .execute(&mut *tx).await.map_err(failed)?;
        sqlx::query("UPDATE agent_sessions SET updated_at = ? WHERE session_id = ?")
            .bind(timestamp(row.at))
            .bind(row.session)
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
    }
    for s in &story.structure {
        let row = &story.rows[s.row];
        let (kind, tool) = classified(&row.item);
        sqlx::query(
            "INSERT INTO message_structure (session_id, message_id, branch_id, message_type, \
             sequence_number, user_turn_number, branch_turn_number, tool_name, created_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(row.session)
        .bind(s.row as i64 + 1)
        .bind(s.branch)
        .bind(kind)
        .bind(s.sequence)
        .bind(s.turn)
        .bind(s.turn)
        .bind(tool)
        .bind(timestamp(s.at))
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
    }
    for (branch, turn, requests, input, output) in &story.usage {
        sqlx::query(
            "INSERT INTO turn_usage (session_id, branch_id, user_turn_number, requests, \
             input_tokens, output_tokens, total_tokens, input_tokens_details, output_tokens_details) \
             VALUES ('branched', ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(branch).bind(turn).bind(requests).bind(input).bind(output).bind(input + output)
        .bind(json!({"cached_tokens": 0}).to_string()).bind(json!({"reasoning_tokens": 0}).to_string())
        .execute(&mut *tx).await.map_err(failed)?;
    }
    for branch in ["main", "cheaper-first"] {
        sqlx::query(
            "INSERT INTO branch_reservations (session_id, branch_id) VALUES ('branched', ?)",
        )
        .bind(branch)
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
    }
    sqlx::query(
        "INSERT INTO session_clear_generations (session_id, generation) VALUES ('branched', 0)",
    )
    .execute(&mut *tx)
    .await
    .map_err(failed)?;
    tx.commit().await.map_err(failed)?;
    // Closing the last connection folds the WAL back into the file.
    conn.close().await.map_err(failed)?;
    Ok(OpenAiAgentsDemoSummary {
        path: path.to_owned(),
        sessions: sessions.len(),
        items: story.rows.len(),
        stories,
    })
}
