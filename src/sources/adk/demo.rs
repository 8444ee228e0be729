//! A Google ADK session file, as google-adk 2.13.0's `SqliteSessionService` writes it (what
//! `adk web` and `adk run` keep in `.adk/session.db`): its four tables exactly as it creates
//! them, each event one `event_data` JSON row, app-wide and per-user state beside the sessions.
//! The sessions an operator of a multi-agent app meets: a coordinator that calls a tool, a
//! transfer to a sub-agent that then answers, and a long session with a tool call every few
//! turns, whose user state grows with each.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json, json};
use sqlx::Connection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};

use crate::demo::chapter::{ADK_STREAM, Story};
use crate::demo::ids::{DemoRng, base_time};
use crate::demo::text::{prose, short_answer, short_query};

/// The tables of `SqliteSessionService` (`sessions/sqlite_session_service.py`).
const SETUP: &str = "
    CREATE TABLE IF NOT EXISTS app_states (
        app_name TEXT PRIMARY KEY,
        state TEXT NOT NULL,
        update_time REAL NOT NULL
    );
    CREATE TABLE IF NOT EXISTS user_states (
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        state TEXT NOT NULL,
        update_time REAL NOT NULL,
        PRIMARY KEY (app_name, user_id)
    );
    CREATE TABLE IF NOT EXISTS sessions (
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        id TEXT NOT NULL,
        state TEXT NOT NULL,
        create_time REAL NOT NULL,
        update_time REAL NOT NULL,
        PRIMARY KEY (app_name, user_id, id)
    );
    CREATE TABLE IF NOT EXISTS events (
        id TEXT NOT NULL,
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        invocation_id TEXT NOT NULL,
        timestamp REAL NOT NULL,
        event_data TEXT NOT NULL,
        PRIMARY KEY (app_name, user_id, session_id, id),
        FOREIGN KEY (app_name, user_id, session_id) REFERENCES sessions(app_name, user_id, id) ON DELETE CASCADE
    );
";

/// The app and user every demo session is under.
pub const ADK_DEMO_APP: &str = "memscope-demo";
pub const ADK_DEMO_USER: &str = "operator";
/// The agents: the root and its one sub-agent.
const COORDINATOR: &str = "coordinator";
const SPECIALIST: &str = "specialist";
/// Turns of the long session.
const LONG_TURNS: usize = 40;

#[derive(Debug, thiserror::Error)]
pub enum AdkDemoError {
    #[error("{0} exists; the Google ADK demo goes into a new file")]
    Exists(PathBuf),
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: sqlx::Error },
}

/// What the demo wrote.
#[derive(Debug, Clone)]
pub struct AdkDemoSummary {
    pub path: PathBuf,
    pub sessions: usize,
    pub events: usize,
    pub stories: Vec<Story>,
}

struct Row {
    session: &'static str,
    id: String,
    invocation: String,
    at: f64,
    data: Json,
}

struct Writer<'a> {
    rows: Vec<Row>,
    clock: f64,
    rng: &'a mut DemoRng,
    invocation: String,
    /// `user:lookups`, as the tool keeps it.
    lookups: Vec<String>,
}

fn uuid(rng: &mut DemoRng) -> String {
    let hex: String = (0..4).map(|_| rng.hex8()).collect();
    format!(
        "{}-{}-4{}-a{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}

fn actions(extra: Json) -> Json {
    let mut actions = json!({"state_delta": {}, "artifact_delta": {},
        "requested_auth_configs": {}, "requested_tool_confirmations": {}});
    if let (Some(base), Json::Object(more)) = (actions.as_object_mut(), extra) {
        base.extend(more);
    }
    actions
}

impl Writer<'_> {
    fn push(
        &mut self,
        session: &'static str,
        author: &str,
        content: Json,
        extra: Map<String, Json>,
    ) {
        self.clock += 0.5 + self.rng.below(40) as f64 / 10.0;
        let id = uuid(self.rng);
        let mut data = json!({
            "content": content,
            "invocation_id": self.invocation,
            "author": author,
            "actions": actions(Json::Object(Map::new())),
            "node_info": {"path": if author == "user" { String::new() } else { format!("{author}@1") }},
            "id": id,
            "timestamp": self.clock,
        });
        if let Some(fields) = data.as_object_mut() {
            fields.extend(extra);
        }
        self.rows.push(Row {
            session,
            id,
            invocation: self.invocation.clone(),
            at: self.clock,
            data,
        });
    }

    fn user(&mut self, session: &'static str, text: &str) {
        self.invocation = format!("e-{}", uuid(self.rng));
        self.push(
            session,
            "user",
            json!({"parts": [{"text": text}], "role": "user"}),
            Map::new(),
        );
    }

    fn usage(&mut self) -> Map<String, Json> {
        let prompt = 200 + self.rng.below(800) as i64;
        let out = 10 + self.rng.below(60) as i64;
        let mut extra = Map::new();
        extra.insert(
            "usage_metadata".to_owned(),
            json!({"candidates_token_count": out, "prompt_token_count": prompt, "total_token_count": prompt + out}),
        );
        extra
    }

    fn answer(&mut self, session: &'static str, author: &str, text: &str) {
        let usage = self.usage();
        self.push(
            session,
            author,
            json!({"parts": [{"text": text}], "role": "model"}),
            usage,
        );
    }

    /// A call (with the id ADK makes up for a Gemini model) and its response.
    fn call(
        &mut self,
        session: &'static str,
        author: &str,
        name: &str,
        args: Json,
        result: Json,
        delta: Json,
    ) {
        let call_id = format!("adk-{}", uuid(self.rng));
        let mut extra = self.usage();
        extra.insert("long_running_tool_ids".to_owned(), json!([]));
        self.push(
            session,
            author,
            json!({"parts": [{"function_call": {"id": call_id, "args": args, "name": name}}], "role": "model"}),
            extra,
        );
        let mut extra = Map::new();
        extra.insert("actions".to_owned(), actions(delta));
        self.push(
            session,
            author,
            json!({"parts": [{"function_response": {"id": call_id, "name": name, "response": result}}], "role": "user"}),
            extra,
        );
    }

    /// The `lookup` tool: its result, and the state it writes.
    fn lookup(&mut self, session: &'static str, author: &str, query: &str) {
        self.lookups.push(query.to_owned());
        let delta = json!({"state_delta": {"user:lookups": self.lookups, "app:region": "eu"}});
        let result = json!({"query": query, "answer": format!("fact about {query}"), "source": null, "verified": true});
        self.call(
            session,
            author,
            "lookup",
            json!({"query": query}),
            result,
            delta,
        );
    }
}

fn story(title: &'static str, session: &str, demonstrates: &'static str) -> Story {
    Story {
        title,
        table: "sessions",
        id: session.to_owned(),
        demonstrates,
    }
}

fn adk_story(seed: u64) -> (Vec<Row>, Vec<Story>) {
    let mut rng = DemoRng::new(seed, ADK_STREAM);
    let mut words = DemoRng::new(seed, ADK_STREAM + 1);
    let mut w = Writer {
        rows: Vec::new(),
        clock: base_time().and_utc().timestamp() as f64,
        rng: &mut rng,
        invocation: String::new(),
        lookups: Vec::new(),
    };
    let mut stories = Vec::new();

    w.user("weather-desk", "Will it rain in Lisbon tomorrow?");
    w.lookup("weather-desk", COORDINATOR, "Lisbon forecast");
    w.answer(
        "weather-desk",
        COORDINATOR,
        "Light rain and 17 °C: take an umbrella.",
    );
    w.user("weather-desk", "Thanks!");
    w.answer("weather-desk", COORDINATOR, "You are welcome.");
    stories.push(story(
        "A tool-using agent",
        "weather-desk",
        "a function call and its response, ADK's own call ids removed as for Gemini",
    ));

    w.user(
        "escalation",
        "My invoice shows a charge twice. Can someone look?",
    );
    let transfer = json!({"state_delta": {}});
    w.call(
        "escalation",
        COORDINATOR,
        "transfer_to_agent",
        json!({"agent_name": SPECIALIST}),
        json!({"result": null}),
        transfer,
    );
    if let Some(last) = w.rows.last_mut() {
        last.data["actions"]["transfer_to_agent"] = json!(SPECIALIST);
    }
    w.lookup("escalation", SPECIALIST, "invoice 4411 charges");
    w.answer(
        "escalation",
        SPECIALIST,
        "The second charge is a pending hold; it drops off in three days.",
    );
    stories.push(story(
        "A transfer to a sub-agent",
        "escalation",
        "the specialist continues the session and sees the coordinator's work quoted",
    ));

    for turn in 1..=LONG_TURNS {
        let question = short_query(&mut words);
        w.user("support-long", &question);
        if turn % 5 == 0 {
            let query = format!("order {}", 1000 + turn);
            w.lookup("support-long", COORDINATOR, &query);
            let answer = short_answer(&mut words);
            w.answer("support-long", COORDINATOR, &answer);
        } else {
            let answer = prose(&mut words, 1 + turn % 3);
            w.answer("support-long", COORDINATOR, &answer);
        }
    }
    stories.push(story(
        "A long session",
        "support-long",
        "a budget that cuts it, and user state that grows with every tool call",
    ));
    (w.rows, stories)
}

/// Writes the demo session file at `path`, which must not exist.
pub async fn write_adk_demo(path: &Path, seed: u64) -> Result<AdkDemoSummary, AdkDemoError> {
    if path.exists() {
        return Err(AdkDemoError::Exists(path.to_owned()));
    }
    let failed = |source| AdkDemoError::Write {
        path: path.to_owned(),
        source,
    };
    let (rows, stories) = adk_story(seed);
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true);
    let mut connection = SqliteConnection::connect_with(&options)
        .await
        .map_err(failed)?;
    let mut tx = connection.begin().await.map_err(failed)?;
    sqlx::raw_sql(SETUP)
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
    let mut sessions: Vec<(&'static str, f64, f64)> = Vec::new();
    for row in &rows {
        match sessions.iter_mut().find(|(s, _, _)| *s == row.session) {
            Some(session) => session.2 = row.at,
            None => sessions.push((row.session, row.at - 1.0, row.at)),
        }
    }
    for (session, created, updated) in &sessions {
        sqlx::query("INSERT INTO sessions (app_name, user_id, id, state, create_time, update_time) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
            .bind(ADK_DEMO_APP)
            .bind(ADK_DEMO_USER)
            .bind(session)
            .bind(json!({"topic": session}).to_string())
            .bind(created)
            .bind(updated)
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
    }
    for row in &rows {
        sqlx::query("INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp, event_data) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
            .bind(&row.id)
            .bind(ADK_DEMO_APP)
            .bind(ADK_DEMO_USER)
            .bind(row.session)
            .bind(&row.invocation)
            .bind(row.at)
            .bind(row.data.to_string())
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
    }
    let last = rows.last().map_or(0.0, |r| r.at);
    let lookups: Vec<&Json> = rows
        .iter()
        .filter_map(|r| r.data["actions"]["state_delta"].get("user:lookups"))
        .collect();
    sqlx::query("INSERT INTO app_states (app_name, state, update_time) VALUES (?1, ?2, ?3)")
        .bind(ADK_DEMO_APP)
        .bind(json!({"region": "eu"}).to_string())
        .bind(last)
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
    sqlx::query(
        "INSERT INTO user_states (app_name, user_id, state, update_time) VALUES (?1, ?2, ?3, ?4)",
    )
    .bind(ADK_DEMO_APP)
    .bind(ADK_DEMO_USER)
    .bind(json!({"lookups": lookups.last().copied().cloned().unwrap_or(json!([]))}).to_string())
    .bind(last)
    .execute(&mut *tx)
    .await
    .map_err(failed)?;
    tx.commit().await.map_err(failed)?;
    connection.close().await.map_err(failed)?;
    Ok(AdkDemoSummary {
        path: path.to_owned(),
        sessions: sessions.len(),
        events: rows.len(),
        stories,
    })
}
