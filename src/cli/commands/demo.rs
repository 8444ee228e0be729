//! `init` and `demo`; the fill they share with the default database's first run is in
//! [`crate::cli::demo_database`].

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::cli::args::DemoArgs;
use crate::cli::context::Context;
use crate::cli::demo_database::{build_demo_kbs, create_dir, fill, options};
use crate::cli::output::{CliError, CliResult, ExitCode, emit, table};
use crate::demo::{
    DemoSummary, Story, write_adk_demo, write_langgraph_demo, write_openai_agents_demo,
};
use crate::format::{byte_size, count, thousands};
use crate::store::Store;

pub async fn init(context: &Context) -> CliResult {
    let url = &context.resolved.database_url;
    if let Some(parent) = sqlite_file(url).as_deref().and_then(Path::parent) {
        create_dir(parent)?;
    }
    let store = Store::init(url).await?;
    #[derive(Serialize)]
    struct Initialized<'a> {
        url: &'a str,
        schema_version: Option<i64>,
    }
    let report = Initialized {
        url: store.url(),
        schema_version: store.schema_version(),
    };
    emit(context.global.json, &report, |r| {
        format!(
            "initialized {} (schema version {})",
            r.url,
            r.schema_version.unwrap_or_default()
        )
    })?;
    Ok(ExitCode::Ok)
}

/// The path of a `sqlite:` URL, if it names a file.
fn sqlite_file(url: &str) -> Option<PathBuf> {
    let path = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = path.split('?').next().unwrap_or(path);
    (!path.is_empty() && path != ":memory:").then(|| PathBuf::from(path))
}

/// Refuses to mix demo rows into a database that already holds memory.
async fn ensure_empty(store: &Store) -> CliResult<()> {
    let counts = store.table_counts().await?;
    let occupied: Vec<String> = counts
        .iter()
        .filter(|c| c.rows > 0 && matches!(c.table, "conversations" | "message" | "chat_memories"))
        .map(|c| format!("{} {}", thousands(c.rows), c.table))
        .collect();
    if occupied.is_empty() {
        Ok(())
    } else {
        Err(CliError::failure(format!(
            "{} already holds data ({}); the demo goes into an empty database",
            store.url(),
            occupied.join(", ")
        )))
    }
}

#[derive(Serialize)]
struct DemoReport {
    url: String,
    seconds: f64,
    tables: Vec<(String, u64)>,
    stories: Vec<StoryReport>,
}

#[derive(Serialize)]
struct StoryReport {
    title: String,
    table: String,
    id: String,
    demonstrates: String,
}

fn report(url: &str, started: Instant, summary: &DemoSummary) -> DemoReport {
    DemoReport {
        url: url.to_owned(),
        seconds: started.elapsed().as_secs_f64(),
        tables: summary
            .counts
            .tables()
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|&(t, n)| (t.to_owned(), n))
            .collect(),
        stories: summary.stories.iter().map(story_report).collect(),
    }
}

fn story_report(s: &Story) -> StoryReport {
    StoryReport {
        title: s.title.to_owned(),
        table: s.table.to_owned(),
        id: s.id.clone(),
        demonstrates: s.demonstrates.to_owned(),
    }
}

fn render(r: &DemoReport) -> String {
    let rows: Vec<Vec<String>> = r
        .tables
        .iter()
        .map(|(t, n)| vec![t.clone(), thousands(*n as i128)])
        .collect();
    let stories: Vec<Vec<String>> = r
        .stories
        .iter()
        .map(|s| vec![s.title.clone(), s.id.clone(), s.demonstrates.clone()])
        .collect();
    format!(
        "filled {} in {:.1} s\n\n{}\n\n{}",
        r.url,
        r.seconds,
        table(&["table", "rows"], &rows),
        table(&["story", "id", "shows"], &stories)
    )
}

/// A demo file written beside memscope's own database: what it holds, counted under the names
/// its JSON gives them, and its stories.
#[derive(Serialize)]
struct DemoFileReport {
    path: PathBuf,
    /// The URL memscope opens it with.
    url: String,
    #[serde(flatten)]
    counts: serde_json::Map<String, serde_json::Value>,
    /// What the counts say, in words: "3 threads, 40 checkpoints, 12 writes (1.2 MB)".
    #[serde(skip)]
    holds: String,
    /// What the stories' ids name: "thread", "session".
    #[serde(skip)]
    story_id: &'static str,
    stories: Vec<StoryReport>,
}

fn render_demo_file(r: &DemoFileReport) -> String {
    let stories: Vec<Vec<String>> = r
        .stories
        .iter()
        .map(|s| vec![s.title.clone(), s.id.clone(), s.demonstrates.clone()])
        .collect();
    format!(
        "wrote {}: {}\n\n{}\n\nopen it with: memscope --db {} conversations",
        r.path.display(),
        r.holds,
        table(&["story", r.story_id, "shows"], &stories),
        r.url,
    )
}

/// A demo file as written: where, what it holds (by the names its JSON gives them, and in
/// words), and its stories.
struct DemoFile {
    path: PathBuf,
    counts: Vec<(&'static str, usize)>,
    holds: String,
    story_id: &'static str,
    stories: Vec<Story>,
}

/// Writes a demo file at `path` with `write`, beside memscope's own database, never into it,
/// and reports it.
async fn demo_file<E>(
    context: &Context,
    path: &Path,
    write: impl std::future::Future<Output = Result<DemoFile, E>>,
) -> CliResult
where
    CliError: From<E>,
{
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_dir(parent)?;
    }
    let file = write.await?;
    let path = std::path::absolute(&file.path).unwrap_or(file.path);
    let report = DemoFileReport {
        url: format!("sqlite://{}", path.display()),
        path,
        counts: file
            .counts
            .into_iter()
            .map(|(key, n)| (key.to_owned(), serde_json::Value::from(n)))
            .collect(),
        holds: file.holds,
        story_id: file.story_id,
        stories: file.stories.iter().map(story_report).collect(),
    };
    emit(context.global.json, &report, render_demo_file)?;
    Ok(ExitCode::Ok)
}

/// A LangGraph checkpoint file of the story.
async fn langgraph(context: &Context, path: &Path, seed: u64) -> CliResult {
    let write = async {
        let s = write_langgraph_demo(path, seed).await?;
        Ok::<_, crate::demo::LangGraphDemoError>(DemoFile {
            holds: format!(
                "{}, {}, {} ({})",
                count(s.threads as u64, "thread"),
                count(s.checkpoints as u64, "checkpoint"),
                count(s.writes as u64, "write"),
                byte_size(s.bytes as u64)
            ),
            counts: vec![
                ("threads", s.threads),
                ("checkpoints", s.checkpoints),
                ("writes", s.writes),
                ("bytes", s.bytes),
            ],
            path: s.path,
            story_id: "thread",
            stories: s.stories,
        })
    };
    demo_file(context, path, write).await
}

/// An OpenAI Agents SDK session file of the story.
async fn openai_agents(context: &Context, path: &Path, seed: u64) -> CliResult {
    let write = async {
        let s = write_openai_agents_demo(path, seed).await?;
        Ok::<_, crate::demo::OpenAiAgentsDemoError>(DemoFile {
            holds: format!(
                "{}, {}",
                count(s.sessions as u64, "session"),
                count(s.items as u64, "item")
            ),
            counts: vec![("sessions", s.sessions), ("items", s.items)],
            path: s.path,
            story_id: "session",
            stories: s.stories,
        })
    };
    demo_file(context, path, write).await
}

/// A Google ADK session file of the story.
async fn adk(context: &Context, path: &Path, seed: u64) -> CliResult {
    let write = async {
        let s = write_adk_demo(path, seed).await?;
        Ok::<_, crate::demo::AdkDemoError>(DemoFile {
            holds: format!(
                "{}, {}",
                count(s.sessions as u64, "session"),
                count(s.events as u64, "event")
            ),
            counts: vec![("sessions", s.sessions), ("events", s.events)],
            path: s.path,
            story_id: "session",
            stories: s.stories,
        })
    };
    demo_file(context, path, write).await
}

pub async fn run(context: &Context, args: &DemoArgs) -> CliResult {
    if let Some(path) = &args.langgraph {
        return langgraph(context, path, args.seed).await;
    }
    if let Some(path) = &args.openai_agents {
        return openai_agents(context, path, args.seed).await;
    }
    if let Some(path) = &args.adk {
        return adk(context, path, args.seed).await;
    }
    let url = &context.resolved.database_url;
    if let Some(parent) = sqlite_file(url).as_deref().and_then(Path::parent) {
        create_dir(parent)?;
    }
    let store = Store::init(url).await?;
    ensure_empty(&store).await?;
    let started = Instant::now();
    let summary = fill(
        &store,
        options(&context.resolved, &store, args.scale, args.seed),
    )
    .await?;
    build_demo_kbs(&context.resolved, &store).await?;
    let report = report(store.url(), started, &summary);
    store.close().await;
    emit(context.global.json, &report, render)?;
    Ok(ExitCode::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_urls_name_their_files() {
        assert_eq!(sqlite_file("sqlite:///tmp/a.db"), Some("/tmp/a.db".into()));
        assert_eq!(sqlite_file("sqlite:rel.db?mode=rwc"), Some("rel.db".into()));
        assert_eq!(sqlite_file("sqlite::memory:"), None);
        assert_eq!(sqlite_file("postgres://h/db"), None);
    }
}
