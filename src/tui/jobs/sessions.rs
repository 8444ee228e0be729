//! Loads of the session list and an open session or thread: a page, a conversation and its
//! budget, counted on a worker with the shared token cache.

use std::sync::{Arc, Mutex};

use super::slot::{Slot, Tasks, report, with_cache};
use crate::inspect::sessions::{conversation_page, open_conversation};
use crate::memory::tokens::CountCache;
use crate::store::Store;
use crate::tui::update::{SessionLoad, SessionLoaded};

/// Starts `load` in its slot: the list's page, the conversation, its budget.
pub(super) fn load(
    tasks: &mut Tasks,
    generation: u64,
    store: Arc<Store>,
    cache: Arc<Mutex<CountCache>>,
    load: SessionLoad,
) {
    match load {
        SessionLoad::Page {
            search,
            after,
            limit,
        } => tasks.load(Slot::List, generation, |reply| async move {
            let result = conversation_page(&store, search, after.clone(), limit)
                .await
                .map_err(report);
            reply.send(SessionLoaded::Page { after, result });
        }),
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
            perspective,
            settings,
        } => tasks.load(Slot::Budget, generation, |reply| async move {
            let result = with_cache(cache, move |cache| {
                view.memory
                    .fed_in(perspective, window, &settings, cache)
                    .map(Box::new)
            })
            .await
            .and_then(|counted| counted);
            reply.send(SessionLoaded::Budget(result));
        }),
    }
}
