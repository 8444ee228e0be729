//! `mb` (memory bases), `kbs`, `capture` and `watch`.
//!
//! `run` hands each `mb` subcommand to its function: the bases themselves in `bases`, ingestion
//! jobs in `jobs`. Each starts from an [`context::MbContext`] (the opened store and the flags)
//! and resolves, acts and emits through it; the tables are drawn in `render`.

mod bases;
mod capture;
mod context;
mod jobs;
mod render;
mod watch;

pub use capture::capture;
pub use watch::watch;

use crate::cli::args::{MbArgs, MbCommand};
use crate::cli::context::Context;
use crate::cli::output::{CliResult, ExitCode, emit, table};
use crate::format::thousands;
use crate::inspect::memory_bases::NewBaseRequest;
use crate::store::memory_bases::MemoryBaseUpdate;
use context::MbContext;

/// Every knowledge base of the database, as Langflow lists them, memory bases marked: the
/// database's own KB directory (see `kb::database_home`).
pub async fn kbs(context: &Context) -> CliResult {
    let store = context.open().await?;
    if store.profile().capabilities().knowledge_bases == crate::store::KbHome::AppRows {
        // The app keeps its knowledge bases as rows of its own, not in memscope's directories.
        return Err(crate::store::StoreError::Lacks {
            url: store.url().to_owned(),
            explanation: format!(
                "{}, whose knowledge bases memscope lists per memory base only (`mb show BASE`, \
                 `mb check`); it holds {}",
                store.profile().describe(),
                store.profile().holdings()
            ),
        }
        .into());
    }
    let root = &crate::kb::database_home(&context.resolved.kb_root, &store).root;
    let kbs = crate::kb::list_kbs(root);
    emit(context.global.json, &kbs, |kbs| {
        if kbs.is_empty() {
            return format!("no knowledge bases under {}", root.display());
        }
        let rows: Vec<Vec<String>> = kbs
            .iter()
            .map(|kb| {
                vec![
                    kb.username.clone(),
                    kb.kb_name.clone(),
                    if kb.is_memory_base { "memory base" } else { "" }.to_owned(),
                    kb.chunks.map_or_else(|| "?".to_owned(), thousands),
                    kb.embedding_model.clone().unwrap_or_default(),
                ]
            })
            .collect();
        format!(
            "{}\n{}",
            root.display(),
            table(
                &["user", "knowledge base", "kind", "chunks", "model"],
                &rows
            )
        )
    })?;
    Ok(ExitCode::Ok)
}

pub async fn run(context: &Context, args: &MbArgs) -> CliResult {
    let mb = MbContext::open(context, &args.sync).await?;
    match &args.command {
        MbCommand::List => bases::list(&mb).await,
        MbCommand::Create {
            name,
            flow,
            threshold,
            unit,
            auto_capture,
            embedding_model,
        } => {
            let request = NewBaseRequest {
                name: name.clone(),
                flow: flow.clone(),
                threshold: *threshold,
                unit: (*unit).into(),
                auto_capture: *auto_capture,
                embedding_model: embedding_model.clone(),
            };
            bases::create(&mb, &request).await
        }
        MbCommand::Show { base } => bases::show(&mb, base).await,
        MbCommand::Update {
            base,
            name,
            threshold,
            unit,
            auto_capture,
        } => {
            let update = MemoryBaseUpdate {
                name: name.clone(),
                threshold: *threshold,
                unit: unit.map(Into::into),
                auto_capture: *auto_capture,
            };
            bases::update(&mb, base, &update).await
        }
        MbCommand::Delete { base, yes } => bases::delete(&mb, base, *yes).await,
        MbCommand::Sessions { base } => bases::sessions(&mb, base).await,
        MbCommand::Check { base } => bases::check(&mb, base.as_deref()).await,
        MbCommand::Search {
            base,
            query,
            session,
            top_k,
        } => bases::search(&mb, base, query, session.as_deref(), *top_k).await,
        MbCommand::Sync {
            base,
            session,
            wait,
        } => jobs::sync(&mb, base, session.as_deref(), *wait).await,
        MbCommand::Regenerate { base, yes } => jobs::regenerate(&mb, base, *yes).await,
        MbCommand::Jobs { base, limit } => jobs::jobs(&mb, base.as_deref(), *limit).await,
        MbCommand::Cancel { job } => jobs::cancel(&mb, job).await,
    }
}
