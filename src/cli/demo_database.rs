//! Filling a database with the demo: what `init` and `demo` share with the embedded default
//! database's first run, which opening any database may start. Below the commands, so opening
//! a database does not reach into one of them.

use std::path::{Path, PathBuf};

use crate::cli::args::Scale;
use crate::cli::output::{CliError, CliResult};
use crate::config::{Resolved, sqlite_url};
use crate::demo::{Demo, DemoOptions, DemoSummary};
use crate::store::rows::Batch;
use crate::store::{Access, Store};

pub(super) fn create_dir(dir: &Path) -> CliResult<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::failure(format!("cannot create {}: {e}", dir.display())))
}

/// The demo's options; its knowledge-base files go to `store`'s own KB directory.
pub(super) fn options(resolved: &Resolved, store: &Store, scale: Scale, seed: u64) -> DemoOptions {
    DemoOptions {
        scale: match scale {
            Scale::Small => crate::demo::Scale::Small,
            Scale::Large => crate::demo::Scale::Large,
        },
        seed,
        storage_root: resolved.storage_root.clone(),
        kb_root: crate::kb::database_home(&resolved.kb_root, store).root,
    }
}

/// Generates on a thread and writes on the runtime, so generation overlaps the inserts.
pub(super) async fn fill(store: &Store, options: DemoOptions) -> CliResult<DemoSummary> {
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
pub(super) async fn build_demo_kbs(resolved: &Resolved, store: &Store) -> CliResult<()> {
    let settings = crate::sync::MbSettings::from_config(resolved);
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

/// First run of the embedded default: the demo is built under a temporary name and renamed into
/// place only once complete, so an interrupted first run never leaves a half-filled database.
pub(super) async fn create_default_database(resolved: &Resolved, file: &Path) -> CliResult<()> {
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
    fill(&store, options(resolved, &store, Scale::Small, 42)).await?;
    build_demo_kbs(resolved, &store).await?;
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
