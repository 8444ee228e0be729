//! Loads of an open session or thread: the conversation and its
//! budget, counted on a worker with the shared token cache.

use std::sync::{Arc, Mutex};

use std::path::PathBuf;

use super::slot::{Slot, Tasks, report, with_cache};
use crate::format::count;
use crate::inspect::sessions::open_conversation;
use crate::inspect::stored_trim::{self, stored_trim_of};
use crate::inspect::tree::thread_of_key;
use crate::memory::budget_view::BudgetSettings;
use crate::memory::tokens::CountCache;
use crate::sources::conversation::{HistoryRequest, SourceOptions};
use crate::sources::stored_trim::{Keep, TrimRequest, archive_dir};
use crate::store::{CancelFlag, Store};
use crate::tui::state::confirm::StoredTrimWrite;
use crate::tui::update::{SessionLoad, SessionLoaded, TrimFigures, TrimWritten};

/// Starts `load` in its slot: the list's page, the conversation, its budget.
pub(super) fn load(
    tasks: &mut Tasks,
    generation: u64,
    store: Arc<Store>,
    cache: Arc<Mutex<CountCache>>,
    load: SessionLoad,
) {
    match load {
        SessionLoad::Open { key, settings } => {
            tasks.load(Slot::Conversation, generation, |reply| async move {
                let result = open_conversation(&store, &key, &settings)
                    .await
                    .map(Arc::new)
                    .map_err(report);
                reply.send(SessionLoaded::Opened(result));
            })
        }
        SessionLoad::Budget {
            view,
            window,
            settings,
        } => tasks.load(Slot::Budget, generation, |reply| async move {
            let result = with_cache(cache, move |cache| {
                view.memory.fed(window, &settings, cache).map(Box::new)
            })
            .await
            .and_then(|counted| counted);
            reply.send(SessionLoaded::Budget(result));
        }),
        SessionLoad::Tree { key } => tasks.load(Slot::Tree, generation, |reply| async move {
            let result = thread_of_key(&store, &key)
                .await
                .map(Arc::new)
                .map_err(report);
            reply.send(SessionLoaded::Tree(result));
        }),
        SessionLoad::TrimPlan { id, keep, settings } => {
            tasks.load(Slot::Conversation, generation, |reply| async move {
                let result = trim_plan(&store, id, keep, settings).await;
                reply.send(SessionLoaded::TrimPlan(result));
            })
        }
    }
}

/// The trim in place `keep` asks of session `id`, as the command line's `trim` takes it.
fn request(id: String, keep: Keep, budget: BudgetSettings) -> TrimRequest {
    TrimRequest {
        history: HistoryRequest {
            id,
            options: SourceOptions::default(),
            defaults: SourceOptions::default(),
            budget,
            details: false,
        },
        keep,
    }
}

async fn trim_plan(
    store: &Store,
    id: String,
    keep: Keep,
    settings: BudgetSettings,
) -> Result<TrimFigures, String> {
    let trim = stored_trim_of(store).ok_or("this database's sessions are not trimmed in place")?;
    let plan = stored_trim::preview(store, trim, &request(id, keep, settings))
        .await
        .map_err(report)?;
    Ok(TrimFigures {
        id: plan.id,
        keep,
        rows_deleted: plan.rows_deleted,
        items_before: plan.messages_before,
        items_after: plan.messages_after,
        tokens_before: plan.tokens_before,
        tokens_after: plan.tokens_after,
        moved: plan.moved,
    })
}

/// Carries a confirmed trim in place, or its undo, out to its end, and says what it did.
pub(super) fn write_trim(
    tasks: &mut Tasks,
    store: Arc<Store>,
    data_dir: PathBuf,
    write: StoredTrimWrite,
) {
    let reply = tasks.reply();
    tasks.write(CancelFlag::default(), async move {
        let id = write.id().to_owned();
        let result = trim_written(&store, &data_dir, write).await;
        reply.send(TrimWritten { id, result });
    });
}

async fn trim_written(
    store: &Store,
    data_dir: &std::path::Path,
    write: StoredTrimWrite,
) -> Result<String, String> {
    let trim = stored_trim_of(store).ok_or("this database's sessions are not trimmed in place")?;
    let archives = archive_dir(data_dir).map_err(|e| format!("{}: {e}", data_dir.display()))?;
    match write {
        StoredTrimWrite::Apply { id, keep, settings } => {
            let request = request(id, keep, settings);
            let applied = stored_trim::apply(store, trim, &request, &archives)
                .await
                .map_err(report)?;
            Ok(match applied.archive {
                Some(archive) => format!(
                    "session {}: deleted {}, archived in {}; u puts them back",
                    applied.id,
                    count(applied.rows_deleted as u64, "row"),
                    archive.display()
                ),
                None => format!("session {}: nothing to delete", applied.id),
            })
        }
        StoredTrimWrite::Undo { id } => {
            let undone = stored_trim::undo(store, trim, &id, &archives)
                .await
                .map_err(report)?;
            Ok(format!(
                "session {id}: put back {} from {}",
                count(undone.undone.rows_restored as u64, "row"),
                undone.undone.archive.display()
            ))
        }
    }
}
