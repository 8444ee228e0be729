//! `E`: the open conversation's bundle, made by the function `memscope export` calls, written
//! whole as a new file in the data directory's `exports` folder.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::slot::{Slot, Tasks, report};
use crate::format::{noun, thousands};
use crate::inspect::document::{conversations_of, key_options};
use crate::inspect::export::{ExportRequest, Exported, NodeSettings, bundle, write_whole};
use crate::memory::budget_view::BudgetSettings;
use crate::sources::conversation::{Command, HistoryRequest, SourceOptions, TreeRequest};
use crate::sources::opened::ConversationKey;
use crate::storage::ObjectStore;
use crate::store::{Part, Store};
use crate::tui::update::LoadReport;

/// What `E` asks for: the conversation, the checkpoint it is shown at, and the settings in
/// effect.
pub(super) struct ExportJob {
    pub key: ConversationKey,
    pub leaf: Option<String>,
    pub budget: BudgetSettings,
    pub message_limit: i64,
}

/// `memscope export ID [--flow F] [--leaf L] [--max-tokens N]`'s request, with the settings
/// that name the conversation (its flow, its app and user, its branch or agent), under the TUI's
/// budget, counter and model.
fn request(job: ExportJob, store: &Store, storage: ObjectStore) -> Result<ExportRequest, String> {
    let source = conversations_of(store).map_err(report)?;
    let options =
        |command| key_options(source, &job.key, command).with("leaf", job.leaf.as_deref());
    let defaults = SourceOptions::default().with("message-limit", Some(job.message_limit));
    let nodes = store
        .profile()
        .has(Part::NodeContexts)
        .then(|| NodeSettings {
            storage,
            list: job.budget.clone(),
            context: job.budget.clone(),
        });
    Ok(ExportRequest {
        conversation: job.key.id.clone(),
        thread: TreeRequest {
            id: job.key.id.clone(),
            options: options(Command::Thread),
            defaults: defaults.clone(),
            details: true,
        },
        history: HistoryRequest {
            id: job.key.id.clone(),
            options: options(Command::History),
            defaults,
            budget: job.budget,
            details: true,
        },
        nodes,
        url: store.url().to_owned(),
    })
}

/// A new file for `id`'s bundle: its id (what a file name can hold of it) and the time.
fn bundle_path(data_dir: &Path, id: &str) -> PathBuf {
    let name: String = id
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || "-_.".contains(c) {
            true => c,
            false => '_',
        })
        .take(60)
        .collect();
    let at = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    data_dir.join("exports").join(format!("{name}-{at}.json"))
}

pub(super) fn export(
    tasks: &mut Tasks,
    generation: u64,
    store: Arc<Store>,
    storage: ObjectStore,
    data_dir: PathBuf,
    job: ExportJob,
) {
    tasks.load(Slot::Export, generation, |reply| async move {
        let written = async {
            let path = bundle_path(&data_dir, &job.key.id);
            let request = request(job, &store, storage)?;
            let Exported {
                bundle,
                secrets_redacted,
            } = bundle(&store, &request).await.map_err(report)?;
            let text = serde_json::to_string_pretty(&bundle).map_err(report)?;
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(report)?;
            }
            write_whole(&path, &text, false)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            Ok(format!(
                "exported to {} ({} bytes, {secrets_redacted} {} redacted)",
                path.display(),
                thousands(text.len() as u64 + 1),
                noun(secrets_redacted as u64, "secret")
            ))
        };
        reply.send(LoadReport::Exported(written.await));
    })
}
