//! What the memory bases tab's forms (threshold, search, new base) do when submitted, and what
//! yes to a change of a base starts (its confirmation is the one popup every write asks in).
//! Submitting one is a request to the job runner.

use super::effect::Effect;
use super::memory_base_jobs::{MbEffect, MbLoad};
use crate::memory::memory_base::Mismatch;
use crate::store::memory_bases::MemoryBaseUpdate;
use crate::tui::state::form::Form;
use crate::tui::state::memory_bases::{
    BaseForm, MemoryBaseWrite, SearchState, new_base_request, threshold_of,
};
use crate::tui::state::{AppState, LoadStatus, Overlay};
use crate::tui::state::{FormPopup, FormPurpose};

/// A form of the tab, for the one form popup.
pub(super) fn base_form(title: String, which: BaseForm, form: Form) -> FormPopup {
    FormPopup::new(title, FormPurpose::MemoryBase(which), form)
}

/// The new-base form: opened by its key, and again as typed after a "no" or a refusal.
pub(super) fn new_base_form(form: Form) -> FormPopup {
    base_form(" New memory base ".to_owned(), BaseForm::Create, form)
}

/// Yes to a change of a memory base: its job starts, and the status line says so.
pub(super) fn start_change(
    state: &mut AppState,
    change: MemoryBaseWrite,
    effects: &mut Vec<Effect>,
) {
    let effect = match change {
        MemoryBaseWrite::Create(request) => {
            state.message = Some(format!("creating memory base {}…", request.name));
            MbEffect::Create(request)
        }
        MemoryBaseWrite::Delete(base) => {
            state.message = Some(format!("deleting memory base {}…", base.name));
            MbEffect::Delete(base)
        }
        MemoryBaseWrite::Regenerate(base) => {
            state.message = Some(format!("regenerating memory base {}…", base.name));
            MbEffect::Regenerate(base)
        }
    };
    effects.push(Effect::MemoryBases(effect));
}

/// A submitted form: a threshold saved, a search started, or a new base checked by a job before
/// anything is asked. A refusal opens the form again with the reason.
pub(super) fn submit(
    state: &mut AppState,
    which: BaseForm,
    popup: FormPopup,
    effects: &mut Vec<Effect>,
) {
    match which {
        BaseForm::Threshold { base_id, base_name } => match threshold_of(&popup.form) {
            Ok((threshold, unit)) => {
                let Some(base) = state
                    .memory_bases
                    .bases
                    .iter()
                    .find(|b| b.base.id == base_id)
                    .map(|b| Box::new(b.base.clone()))
                else {
                    state.message = Some(format!("memory base {base_name} is gone"));
                    return;
                };
                let update = MemoryBaseUpdate {
                    threshold: Some(threshold),
                    unit: Some(unit).filter(|u| *u != base.unit()),
                    ..MemoryBaseUpdate::default()
                };
                effects.push(Effect::MemoryBases(MbEffect::Update { base, update }));
            }
            Err(error) => {
                state.overlay = Overlay::Form(popup.refused(format!("threshold: {error}")))
            }
        },
        BaseForm::Search { base } => {
            let query = popup.form.text("query").trim().to_owned();
            if query.is_empty() {
                return;
            }
            let generation = state.generation();
            let missing_folder = state
                .memory_bases
                .bases
                .iter()
                .find(|status| status.base.id == base.id)
                .filter(|status| status.mismatches.contains(&Mismatch::DirectoryMissing))
                .map(|status| status.kb_path.display().to_string());
            state.memory_bases.search = Some(SearchState {
                base_name: base.name.clone(),
                query: query.clone(),
                status: LoadStatus::Loading,
                generation,
                hits: Vec::new(),
                selected: 0,
                missing_folder,
            });
            let search = MbLoad::Search {
                base,
                query,
                top_k: crate::tui::state::memory_bases::SEARCH_TOP_K,
            };
            effects.push(Effect::load(generation, search));
        }
        BaseForm::Create => {
            state.overlay = Overlay::Form(match new_base_request(&popup.form) {
                // The database decides whether the flow exists: a job checks before "yes".
                Ok(request) => {
                    effects.push(Effect::MemoryBases(MbEffect::CheckCreate(request)));
                    popup.waiting_for("checking the flow, the name and the model…")
                }
                Err(error) => popup.refused(error),
            });
        }
    }
}
