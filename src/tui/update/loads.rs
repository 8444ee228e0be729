//! Where a load's report goes. Every report comes stamped with its request's generation, and
//! [`on_load`] takes it only while that request is the latest of its part ([`latest`]): a report
//! another request overtook, or whose view was closed, is dropped here, once for every kind of
//! load, so no handler checks (or forgets) it.

use super::chat_memory_jobs::MemoryLoaded;
use super::checkpoint_jobs::CheckpointLoaded;
use super::effect::{Effect, LoadReport, Stamped};
use super::memory_base_jobs::MbLoaded;
use super::session_effects::SessionLoaded;
use super::{
    budget, chat_memories, checkpoint_prune, checkpoints, conversation, database, doctor, list,
    memory_base_results, nodes, search, session, session_trim, tree_screen,
};
use crate::tui::state::AppState;

/// Hands a load's report to its screen. `false` when it was stale, or changed nothing.
pub(super) fn on_load(
    state: &mut AppState,
    report: Stamped<LoadReport>,
    effects: &mut Vec<Effect>,
) -> bool {
    let Stamped {
        generation,
        value: report,
    } = report;
    if latest(state, &report) != Some(generation) {
        return false;
    }
    match report {
        LoadReport::Database(result) => database::opened(state, result, effects),
        LoadReport::List(result) => list::listed(state, result, effects),
        LoadReport::ListFound(row) => list::found(state, row),
        LoadReport::Snippet { key, result } => list::snippet_read(state, key, result),
        LoadReport::Exported(result) => super::export::exported(state, result),
        LoadReport::ThreadTokens(tokens) => list::thread_tokens(state, tokens),
        // A view read again keeps its search, found anew among its messages.
        LoadReport::Conversation(result) => {
            let changed = conversation::conversation_loaded(state, result, effects);
            search::reapply(state, search::View::Conversation);
            changed
        }
        LoadReport::Budget(result) => budget::budget_computed(state, result),
        LoadReport::Nodes(result) => nodes::nodes_loaded(state, result, effects),
        LoadReport::NodeContext(result) => nodes::context_loaded(state, result),
        LoadReport::Timeline(result) => nodes::timeline_loaded(state, result),
        LoadReport::MemoryBases(report) => memory_base_results::on_load(state, report, effects),
        LoadReport::ChatMemory(report) => chat_memories::on_load(state, report, effects),
        LoadReport::Doctor(report) => doctor::on_report(state, report),
        LoadReport::Sessions(report) => match report {
            SessionLoaded::Opened(result) => {
                let changed = session::session_loaded(state, result, effects);
                search::reapply(state, search::View::Session);
                changed
            }
            SessionLoaded::Budget(result) => session::budget_computed(state, result),
            SessionLoaded::TrimPlan(result) => session_trim::plan_arrived(state, result),
            SessionLoaded::Tree(result) => tree_screen::loaded(state, result),
        },
        LoadReport::Checkpoints(report) => checkpoints::on_load(state, report, effects),
        LoadReport::PrunePlan(result) => checkpoint_prune::planned(state, result),
        LoadReport::Undo(result) => super::checkpoint_writes::undo_planned(state, result),
    }
}

/// The generation of the latest request `report` can answer, as the part of the state that
/// asked for it keeps it. `None` when that part is gone: a closed view takes no report.
fn latest(state: &AppState, report: &LoadReport) -> Option<u64> {
    let conversation = state.conversation.as_ref();
    let nodes = state.nodes();
    match report {
        LoadReport::Database(_) => state.opening.as_ref().map(|o| o.generation),
        LoadReport::List(_) | LoadReport::ListFound(_) => Some(state.list.generation),
        LoadReport::ThreadTokens(_) => Some(state.list.tokens_generation),
        LoadReport::Snippet { .. } => Some(state.list.snippet_generation),
        LoadReport::Exported(_) => state.exporting,
        LoadReport::Conversation(_) => conversation.map(|c| c.generation),
        LoadReport::Budget(_) => conversation.map(|c| c.budget_generation),
        LoadReport::Nodes(_) => nodes.map(|n| n.generation),
        LoadReport::NodeContext(_) => nodes.map(|n| n.context_generation),
        LoadReport::Timeline(_) => nodes.map(|n| n.timeline_generation),
        LoadReport::MemoryBases(report) => match report {
            MbLoaded::Bases(_) => Some(state.memory_bases.generation),
            MbLoaded::Sessions(_) => Some(state.memory_bases.sessions_generation),
            MbLoaded::Jobs { .. } => Some(state.jobs.generation),
            MbLoaded::Hits(_) => state.memory_bases.search.as_ref().map(|s| s.generation),
        },
        LoadReport::ChatMemory(report) => match report {
            MemoryLoaded::List(_) => Some(state.chat_memories.generation),
            MemoryLoaded::Tokens(_) => Some(state.chat_memories.tokens_generation),
            MemoryLoaded::Page(_) => state.chat_memories.open.as_ref().map(|o| o.generation),
            MemoryLoaded::TrimSource(_) => state.trim.as_ref().map(|t| t.generation),
            // A summary must answer the latest plan, and be the latest summary asked for it.
            MemoryLoaded::Summary(_) => state
                .trim
                .as_ref()
                .filter(|t| t.summary_generation == t.plan_generation)
                .map(|t| t.plan_generation),
        },
        LoadReport::Doctor(_) => state.doctor.as_ref().map(|d| d.generation),
        LoadReport::Sessions(report) => match report {
            SessionLoaded::Opened(_) => state.session.as_ref().map(|s| s.generation),
            SessionLoaded::Budget(_) => state.session.as_ref().map(|s| s.budget_generation),
            SessionLoaded::TrimPlan(_) => state.session.as_ref().map(|s| s.trim_generation),
            SessionLoaded::Tree(_) => state.tree.as_ref().map(|t| t.generation),
        },
        LoadReport::Checkpoints(report) => {
            let thread = state.checkpoints.as_ref();
            match report {
                CheckpointLoaded::Tree(_) => thread.map(|t| t.generation),
                CheckpointLoaded::Shown(_) => thread.map(|t| t.shown_generation),
            }
        }
        // The prune popup's latest rule (a prune from the thread list has no open thread).
        LoadReport::PrunePlan(_) => state.prune.as_ref().map(|p| p.generation),
        LoadReport::Undo(_) => state.undo.as_ref().map(|u| u.generation),
    }
}
