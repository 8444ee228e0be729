//! Conversation trees whose threads Dify's memory reads: the README's regeneration example, a
//! deep regeneration tree, legacy and service-API chains, and issue #39031's early stop.

use chrono::NaiveDateTime;

use super::builder::{ConversationBuilder, Parent};
use crate::demo::chapter::{Story, conversation_story};
use crate::demo::ids::{DemoRng, base_time, seconds};
use crate::demo::text::{short_answer, short_query};
use crate::store::rows::{AppRow, Batch};

/// The memory README's example. Its tree draws user and assistant messages as separate nodes:
///
/// ```text
/// A ─ A' ─ B ─ B'
///   └ A'' ─ C ─ C'      (A'' regenerates A')
/// ```
///
/// Dify stores one row per user turn together with its answer, and regenerating an answer
/// re-asks the same query with the regenerated row's parent, so the tree is four rows:
///
/// ```text
/// r1: A → A'   parent NULL   first turn: a root
/// r2: B → B'   parent r1
/// r3: A → A''  parent NULL   regeneration of r1: a sibling of r1, hence another root
/// r4: C → C'   parent r3
/// ```
///
/// Newest first, the walk takes r4, follows its parent to r3, and stops at r3 because it has no
/// parent: the thread is [r3, r4], which is A, A'', C, C' as the README says.
pub(super) fn readme_regeneration(rng: &mut DemoRng, app: &AppRow, batch: &mut Batch) -> Story {
    let started = base_time() - seconds(6 * 24 * 3600);
    let mut conversation =
        ConversationBuilder::new(rng, app, "Naming the café", "web-app", started);
    let question_a = "What's a good name for a café inside a bookshop?";
    let first = conversation.turn(
        rng,
        Parent::Root,
        question_a.to_owned(),
        "How about \"Chapter One\"? It hints at books and at the first coffee of the day."
            .to_owned(),
        0,
    );
    conversation.turn(
        rng,
        Parent::Row(first),
        "Can you make it sound less corporate?".to_owned(),
        "Try \"The Dog-Eared Page\": a little worn, a little cosy.".to_owned(),
        95,
    );
    let regenerated = conversation.turn(
        rng,
        Parent::Root,
        question_a.to_owned(),
        "\"Marginalia\": the notes readers leave in books, and the talk they have over coffee."
            .to_owned(),
        40,
    );
    conversation.turn(
        rng,
        Parent::Row(regenerated),
        "Love it. Write a one-line tagline for Marginalia.".to_owned(),
        "Marginalia: where every cup comes with a story.".to_owned(),
        70,
    );
    conversation_story(
        "README regeneration example",
        conversation.finish(batch),
        "rows A→A', B→B' (child of A), A→A'' (regenerated root), C→C' (child of A''): \
         Dify's thread is [A, A'', C, C']",
    )
}

/// Rows of the deep tree; every fourth row regenerates an earlier answer and every ninth
/// continues an older branch, so the shape does not depend on the seed.
const DEEP_TREE_ROWS: usize = 72;

/// A long conversation with many regenerations at many depths, including regenerations of
/// regenerated answers, and a return to an older branch. Only the first row is a root, so Dify's
/// walk is not cut short (compare [`issue_39031`]).
pub(super) fn deep_regeneration_tree(rng: &mut DemoRng, app: &AppRow, batch: &mut Batch) -> Story {
    let started = base_time() - seconds(5 * 24 * 3600);
    let mut conversation =
        ConversationBuilder::new(rng, app, "Migrating the billing API", "web-app", started);
    let (query, answer) = (short_query_numbered(rng, 0), short_answer(rng));
    let mut current = conversation.turn(rng, Parent::Root, query, answer, 0);
    for index in 1..DEEP_TREE_ROWS {
        let gap = rng.between(20, 600);
        current = if index % 4 == 3 {
            // Regenerate one of the last few answers on the current path (never the root, whose
            // regeneration would be a second root).
            let candidates: Vec<(usize, usize)> =
                std::iter::successors(Some(current), |&row| conversation.history_parent(row))
                    .take(4)
                    .filter_map(|row| Some((row, conversation.history_parent(row)?)))
                    .collect();
            let (target, parent) = rng.pick(&candidates);
            let query = conversation.row(target).query.clone();
            let answer = short_answer(rng);
            conversation.turn(rng, Parent::Row(parent), query, answer, gap)
        } else {
            let parent = if index % 9 == 8 {
                // Back to an older branch: continue from an earlier row.
                rng.below(conversation.len())
            } else {
                current
            };
            let (query, answer) = (short_query_numbered(rng, index), short_answer(rng));
            conversation.turn(rng, Parent::Row(parent), query, answer, gap)
        };
    }
    conversation_story(
        "Deep regeneration tree",
        conversation.finish(batch),
        "72 rows, a regeneration every fourth turn (some of regenerated answers) and branch \
         switches: the thread is the newest row's ancestry, siblings are skipped",
    )
}

fn short_query_numbered(rng: &mut DemoRng, step: usize) -> String {
    format!("Step {}: {}", step + 1, short_query(rng))
}

/// A pre-0.9 conversation: the parent_message_id migration set every parent to UUID_NIL.
pub(super) fn legacy_conversation(
    rng: &mut DemoRng,
    app: &AppRow,
    app_created: NaiveDateTime,
    batch: &mut Batch,
) -> Story {
    // June 2024, before Dify 0.9 (September 2024) added parent_message_id.
    let started = app_created + seconds(30 * 24 * 3600);
    let mut conversation =
        ConversationBuilder::new(rng, app, "Opening hours question", "web-app", started);
    for _ in 0..8 {
        let (query, answer) = (short_query(rng), short_answer(rng));
        let gap = rng.between(30, 300);
        conversation.turn(rng, Parent::Nil, query, answer, gap);
    }
    conversation_story(
        "Legacy conversation",
        conversation.finish(batch),
        "pre-0.9 rows, every parent UUID_NIL: the walk accepts each next row, the whole \
         conversation is the thread",
    )
}

/// The service API forces every parent to UUID_NIL, so these conversations are linear chains.
pub(super) fn service_api_conversation(
    rng: &mut DemoRng,
    app: &AppRow,
    batch: &mut Batch,
) -> Story {
    let started = base_time() - seconds(4 * 24 * 3600);
    let mut conversation =
        ConversationBuilder::new(rng, app, "Order sync integration", "service-api", started);
    for _ in 0..12 {
        let (query, answer) = (short_query(rng), short_answer(rng));
        let gap = rng.between(5, 90);
        conversation.turn(rng, Parent::Nil, query, answer, gap);
    }
    conversation_story(
        "Service-API conversation",
        conversation.finish(batch),
        "invoke_from service-api, every parent UUID_NIL: no regeneration is possible through \
         the API",
    )
}

/// Issue #39031: the user regenerated the first answer (a new root X), then went back to the
/// original branch and continued it. Newest first the rows are C←B, X←NULL, B←A, A←NULL, and
/// Dify's walk stops at X because it checks "no parent" on every row, tracked or not: main gives
/// [C, X]; the fix (PR #39032) gives [C, B, A].
pub(super) fn issue_39031(rng: &mut DemoRng, app: &AppRow, batch: &mut Batch) -> Story {
    let started = base_time() - seconds(3 * 24 * 3600);
    let mut conversation =
        ConversationBuilder::new(rng, app, "Quarterly report outline", "web-app", started);
    let question = "Draft an outline for the Q1 operations report.";
    let a = conversation.turn(
        rng,
        Parent::Root,
        question.to_owned(),
        "1. Highlights 2. Incidents 3. Costs 4. Hiring 5. Next quarter".to_owned(),
        0,
    );
    let b = conversation.turn(
        rng,
        Parent::Row(a),
        "Expand the incidents section.".to_owned(),
        "Incidents: two partial outages (Jan 14, Feb 3), one data-sync delay; all resolved \
         within SLA."
            .to_owned(),
        120,
    );
    conversation.turn(
        rng,
        Parent::Root,
        question.to_owned(),
        "A. Summary B. Reliability C. Spend D. Team E. Plans".to_owned(),
        60,
    );
    conversation.turn(
        rng,
        Parent::Row(b),
        "Add the root cause for the Feb 3 outage.".to_owned(),
        "Feb 3: an expired TLS certificate on the internal queue; renewal is now automated."
            .to_owned(),
        90,
    );
    conversation_story(
        "Issue #39031",
        conversation.finish(batch),
        "an unrelated regenerated root sits between C and its parent B: Dify's main walk stops \
         early ([C, X]) where the fixed walk gives [C, B, A]",
    )
}

#[cfg(test)]
#[path = "thread_shapes_tests.rs"]
mod tests;
