//! `init`, `demo`, and the embedded default database's first run.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::cli::Context;
use crate::cli::args::{DemoArgs, Scale};
use crate::cli::output::{CliError, CliResult, ExitCode, emit, table, thousands};
use crate::config::sqlite_url;
use crate::demo::{Demo, DemoOptions, DemoSummary};
use crate::store::rows::Batch;
use crate::store::{Access, Store};

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

fn create_dir(dir: &Path) -> CliResult<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::failure(format!("cannot create {}: {e}", dir.display())))
}

/// The demo's options; its knowledge-base files go to `store`'s own KB directory.
fn options(context: &Context, store: &Store, scale: Scale, seed: u64) -> DemoOptions {
    DemoOptions {
        scale: match scale {
            Scale::Small => crate::demo::Scale::Small,
            Scale::Large => crate::demo::Scale::Large,
        },
        seed,
        storage_root: context.resolved.storage_root.clone(),
        kb_root: crate::kb::database_kb_root(&context.resolved.kb_root, store.database_id()),
    }
}

/// Generates on a thread and writes on the runtime, so generation overlaps the inserts.
async fn fill(store: &Store, options: DemoOptions) -> CliResult<DemoSummary> {
    let (sender, mut receiver) = tokio::sync::mpsc::channel::<Result<Batch, String>>(4);
    let generator = std::thread::spawn(move || {
        let mut demo = Demo::new(&options);
        for batch in demo.by_ref() {
            if sender
                .blocking_send(batch.map_err(|e| e.to_string()))
                .is_err()
            {
                break;
            }
        }
        demo.into_summary()
    });
    let mut failure = None;
    while let Some(batch) = receiver.recv().await {
        let written = match batch {
            Ok(batch) => store.insert_batch(&batch).await.map_err(CliError::from),
            Err(e) => Err(CliError::failure(format!("writing demo files failed: {e}"))),
        };
        if let Err(e) = written {
            failure = Some(e);
            break;
        }
    }
    // Dropping the receiver stops the generator at its next batch.
    drop(receiver);
    let summary = generator
        .join()
        .map_err(|_| CliError::failure("the demo generator panicked"))?;
    match failure {
        Some(e) => Err(e),
        None => Ok(summary),
    }
}

/// Writes the vectors of every demo memory base that has ingestion records and whose KB the
/// demo created (it wrote the metadata), from those records (the rows say what was ingested;
/// the vectors are computed here), so those bases `mb check` clean. The mismatch story's KB is
/// never created, and stays missing.
async fn build_demo_kbs(context: &Context, store: &Store) -> CliResult<()> {
    let settings = crate::sync::MbSettings::from_config(&context.resolved);
    for base in store.memory_bases().await? {
        if base.ingestion_records == 0 {
            continue;
        }
        let syncer = settings
            .syncer(store.clone(), &base.embedding_model)
            .map_err(CliError::from)?;
        if !syncer.kb_path(&base).map_err(CliError::from)?.exists() {
            continue;
        }
        syncer
            .rebuild_from_records(&base)
            .await
            .map_err(CliError::from)?;
    }
    Ok(())
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
        stories: summary
            .stories
            .iter()
            .map(|s| StoryReport {
                title: s.title.to_owned(),
                table: s.table.to_owned(),
                id: s.id.clone(),
                demonstrates: s.demonstrates.to_owned(),
            })
            .collect(),
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

pub async fn run(context: &Context, args: &DemoArgs) -> CliResult {
    let url = &context.resolved.database_url;
    if let Some(parent) = sqlite_file(url).as_deref().and_then(Path::parent) {
        create_dir(parent)?;
    }
    let store = Store::init(url).await?;
    ensure_empty(&store).await?;
    let started = Instant::now();
    let summary = fill(&store, options(context, &store, args.scale, args.seed)).await?;
    build_demo_kbs(context, &store).await?;
    let report = report(store.url(), started, &summary);
    store.close().await;
    emit(context.global.json, &report, render)?;
    Ok(ExitCode::Ok)
}

/// First run of the embedded default: the demo is built under a temporary name and renamed into
/// place only once complete, so an interrupted first run never leaves a half-filled database.
pub async fn create_default_database(context: &Context, file: &Path) -> CliResult<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    create_dir(dir)?;
    let partial = file.with_extension("db.partial");
    for stale in [
        partial.clone(),
        wal(&partial, "-wal"),
        wal(&partial, "-shm"),
    ] {
        // Leftovers of an interrupted first run; absent files are fine.
        let _ = std::fs::remove_file(stale);
    }
    eprintln!(
        "memscope: first run: creating the demo database at {}",
        file.display()
    );
    let store = Store::init(&sqlite_url(&partial)).await?;
    fill(&store, options(context, &store, Scale::Small, 42)).await?;
    build_demo_kbs(context, &store).await?;
    store.close().await;
    std::fs::rename(&partial, file).map_err(|e| {
        CliError::failure(format!(
            "cannot move {} to {}: {e}",
            partial.display(),
            file.display()
        ))
    })?;
    // The store reopens it read-write only if memscope created it: check that it did.
    Store::open(&sqlite_url(file), Access::Auto)
        .await?
        .close()
        .await;
    Ok(())
}

fn wal(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
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
