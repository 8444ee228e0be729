//! Dify chat, agent-chat and legacy conversations: the thread shapes Dify's memory gets right,
//! and the ones it gets wrong.

use chrono::NaiveDateTime;

use super::files::{FileRoot, TINY_PDF, TINY_PNG, WriteFileError};
use super::ids::{DemoRng, base_time, seconds};
use super::text::{
    chinese, code_block, estimate_tokens, json_tool_output, prose, short_answer, short_query,
};
use super::chapter::{Chapter, DIFY_STREAM, Setting, Story};
use crate::memory::model::{StoredMessage, UUID_NIL};
use crate::store::rows::{
    AppRow, Batch, ConversationRow, MessageFileRow, MessageRow, UploadFileRow,
};

/// Dify reads at most this many rows when no memory window is set.
const DEFAULT_ROW_LIMIT: usize = 500;

/// Tokens of the system prompt every demo app sends.
const SYSTEM_PROMPT_TOKENS: i64 = 120;

pub(crate) fn app(
    rng: &mut DemoRng,
    tenant_id: &str,
    name: &str,
    mode: &str,
    memory_window: Option<i64>,
    created_at: NaiveDateTime,
) -> AppRow {
    AppRow {
        id: rng.uuid(),
        tenant_id: tenant_id.to_owned(),
        name: name.to_owned(),
        mode: mode.to_owned(),
        memory_window,
        created_at,
    }
}

/// Where a new row hangs in the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parent {
    /// `parent_message_id` NULL: a first turn, or a regenerated first turn.
    Root,
    /// The row at this index in the conversation.
    Row(usize),
    /// `parent_message_id` = UUID_NIL: a legacy or service-API row; Dify's walk links it to the
    /// chronologically previous row.
    Nil,
}

/// Builds one conversation's rows in chronological order, one row per user turn and its answer.
pub(crate) struct ConversationBuilder {
    app_id: String,
    conversation: ConversationRow,
    rows: Vec<MessageRow>,
    /// Per row: the row its history continues from, and the tokens the turn adds to later prompts.
    lineage: Vec<(Option<usize>, i64)>,
    window: usize,
    clock: NaiveDateTime,
}

impl ConversationBuilder {
    pub(crate) fn new(
        rng: &mut DemoRng,
        app: &AppRow,
        name: &str,
        invoke_from: &str,
        started_at: NaiveDateTime,
    ) -> Self {
        let is_chatflow = app.mode == "advanced-chat";
        let conversation = ConversationRow {
            id: rng.uuid(),
            app_id: app.id.clone(),
            name: name.to_owned(),
            mode: app.mode.clone(),
            model_provider: (!is_chatflow).then(|| "openai".to_owned()),
            model_id: (!is_chatflow).then(|| "gpt-4o".to_owned()),
            status: "normal".to_owned(),
            invoke_from: Some(invoke_from.to_owned()),
            // End users reach apps through the API; accounts through the console.
            from_source: match invoke_from {
                "service-api" | "web-app" => "api",
                _ => "console",
            }
            .to_owned(),
            dialogue_count: 0,
            created_at: started_at,
            updated_at: started_at,
        };
        let window = app
            .memory_window
            .and_then(|size| usize::try_from(size).ok())
            .filter(|&size| size > 0)
            .map_or(DEFAULT_ROW_LIMIT, |size| size.min(DEFAULT_ROW_LIMIT));
        ConversationBuilder {
            app_id: app.id.clone(),
            conversation,
            rows: Vec::new(),
            lineage: Vec::new(),
            window,
            clock: started_at,
        }
    }

    pub(crate) fn conversation_id(&self) -> &str {
        &self.conversation.id
    }

    /// Appends a completed turn `gap_seconds` after the previous one and returns its index.
    ///
    /// `message_tokens` is estimated as the provider would report the prompt: system prompt, the
    /// history Dify sends (the thread's last `memory_window` turns) and the query.
    pub(crate) fn turn(
        &mut self,
        rng: &mut DemoRng,
        parent: Parent,
        query: String,
        answer: String,
        gap_seconds: i64,
    ) -> usize {
        let index = self.rows.len();
        let (parent_message_id, history_from) = match parent {
            Parent::Root => (None, None),
            Parent::Row(row) => (Some(self.rows[row].message.id.clone()), Some(row)),
            Parent::Nil => (Some(UUID_NIL.to_owned()), index.checked_sub(1)),
        };
        let history_tokens: i64 = std::iter::successors(history_from, |&row| self.lineage[row].0)
            .take(self.window)
            .map(|row| self.lineage[row].1)
            .sum();
        let query_tokens = estimate_tokens(&query);
        let answer_tokens = estimate_tokens(&answer);
        self.clock += seconds(gap_seconds);
        self.lineage
            .push((history_from, query_tokens + answer_tokens));
        self.rows.push(MessageRow {
            app_id: self.app_id.clone(),
            message: StoredMessage {
                id: rng.uuid(),
                conversation_id: self.conversation.id.clone(),
                parent_message_id,
                query,
                answer,
                message_tokens: SYSTEM_PROMPT_TOKENS + history_tokens + query_tokens,
                answer_tokens,
                status: "normal".to_owned(),
                error: None,
                invoke_from: self.conversation.invoke_from.clone(),
                workflow_run_id: None,
                created_at: self.clock,
            },
        });
        index
    }

    pub(crate) fn row(&self, index: usize) -> &StoredMessage {
        &self.rows[index].message
    }

    pub(crate) fn row_mut(&mut self, index: usize) -> &mut StoredMessage {
        &mut self.rows[index].message
    }

    /// The row a turn's history continues from (its tree parent).
    pub(crate) fn history_parent(&self, index: usize) -> Option<usize> {
        self.lineage[index].0
    }

    /// Turns in the thread ending at `index`: Dify's `sys.dialogue_count` for that turn.
    pub(crate) fn thread_length(&self, index: usize) -> usize {
        std::iter::successors(Some(index), |&row| self.lineage[row].0).count()
    }

    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    pub(crate) fn finish(mut self, batch: &mut Batch) -> String {
        self.conversation.dialogue_count = self.rows.len() as i64;
        self.conversation.updated_at = self.clock;
        let id = self.conversation.id.clone();
        batch.conversations.push(self.conversation);
        batch.messages.append(&mut self.rows);
        id
    }
}

/// An uploaded file: the `upload_files` row plus the bytes written at its storage key.
pub(crate) fn upload(
    rng: &mut DemoRng,
    storage: &FileRoot,
    tenant_id: &str,
    name: &str,
    bytes: &[u8],
    mime_type: &str,
    created_at: NaiveDateTime,
) -> Result<UploadFileRow, WriteFileError> {
    let id = rng.uuid();
    let extension = name.rsplit('.').next().unwrap_or_default().to_owned();
    let key = format!("upload_files/{tenant_id}/{id}.{extension}");
    let size = storage.write(&key, bytes)?;
    Ok(UploadFileRow {
        id,
        tenant_id: tenant_id.to_owned(),
        storage_type: "opendal".to_owned(),
        key,
        name: name.to_owned(),
        size,
        extension,
        mime_type: Some(mime_type.to_owned()),
        created_at,
    })
}

/// A `message_files` row for a local upload owned by the user.
pub(crate) fn user_upload_file(
    rng: &mut DemoRng,
    message: &StoredMessage,
    file_type: &str,
    upload: &UploadFileRow,
) -> MessageFileRow {
    MessageFileRow {
        id: rng.uuid(),
        message_id: message.id.clone(),
        file_type: file_type.to_owned(),
        transfer_method: "local_file".to_owned(),
        url: None,
        belongs_to: Some("user".to_owned()),
        upload_file_id: Some(upload.id.clone()),
        created_at: message.created_at,
    }
}

pub(super) fn chapter(setting: &Setting) -> Result<Chapter, WriteFileError> {
    let mut rng = DemoRng::new(setting.seed, DIFY_STREAM);
    let storage = FileRoot(setting.storage_root);
    let tenant = setting.tenant_id;
    let week_ago = base_time() - seconds(7 * 24 * 3600);
    let support = app(
        &mut rng,
        tenant,
        "Support Assistant",
        "chat",
        Some(10),
        week_ago,
    );
    let agent = app(
        &mut rng,
        tenant,
        "Research Agent",
        "agent-chat",
        None,
        week_ago,
    );
    let legacy_created = week_ago - seconds(700 * 24 * 3600);
    let faq = app(
        &mut rng,
        tenant,
        "Legacy FAQ Bot",
        "chat",
        None,
        legacy_created,
    );
    let partner = app(
        &mut rng,
        tenant,
        "Partner API Bot",
        "chat",
        Some(50),
        week_ago,
    );

    let mut batch = Batch::default();
    let stories = vec![
        readme_regeneration(&mut rng, &support, &mut batch),
        deep_regeneration_tree(&mut rng, &support, &mut batch),
        legacy_conversation(&mut rng, &faq, legacy_created, &mut batch),
        service_api_conversation(&mut rng, &partner, &mut batch),
        issue_39031(&mut rng, &support, &mut batch),
        interrupted_answers(&mut rng, &support, &mut batch),
        files_conversation(&mut rng, &storage, tenant, &agent, &mut batch)?,
        long_history(&mut rng, &agent, &mut batch),
    ];
    batch.apps = vec![support, agent, faq, partner];
    Ok(Chapter { batch, stories })
}

fn conversation_story(title: &'static str, id: String, demonstrates: &'static str) -> Story {
    Story {
        title,
        table: "conversations",
        id,
        demonstrates,
    }
}

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
fn readme_regeneration(rng: &mut DemoRng, app: &AppRow, batch: &mut Batch) -> Story {
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
fn deep_regeneration_tree(rng: &mut DemoRng, app: &AppRow, batch: &mut Batch) -> Story {
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
fn legacy_conversation(
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
fn service_api_conversation(rng: &mut DemoRng, app: &AppRow, batch: &mut Batch) -> Story {
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
fn issue_39031(rng: &mut DemoRng, app: &AppRow, batch: &mut Batch) -> Story {
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

/// Answers cut short: stopped, errored, and the placeholder of a request still in flight.
fn interrupted_answers(rng: &mut DemoRng, app: &AppRow, batch: &mut Batch) -> Story {
    let started = base_time() - seconds(2 * 24 * 3600);
    let mut conversation =
        ConversationBuilder::new(rng, app, "Refund policy questions", "web-app", started);
    let mut previous = conversation.turn(
        rng,
        Parent::Root,
        "What is your refund window for annual plans?".to_owned(),
        "Annual plans can be refunded in full within 30 days of purchase.".to_owned(),
        0,
    );
    // Stopped mid-answer: the partial text is saved (#17191).
    let partial = "Pro-rated refunds after 30 days are possible when the account";
    previous = conversation.turn(
        rng,
        Parent::Row(previous),
        "And after 30 days?".to_owned(),
        partial.to_owned(),
        60,
    );
    // Errored: no answer, status `error`.
    previous = conversation.turn(
        rng,
        Parent::Row(previous),
        "Does that apply to add-ons too?".to_owned(),
        String::new(),
        45,
    );
    let errored = conversation.row_mut(previous);
    errored.answer_tokens = 0;
    errored.status = "error".to_owned();
    errored.error = Some(
        "[openai] Rate limit reached for gpt-4o in organization org-demo on tokens per min \
         (TPM): Limit 30000, Used 29870, Requested 1650."
            .to_owned(),
    );
    // Stopped before the first token: an empty answer that stays in later histories.
    previous = conversation.turn(
        rng,
        Parent::Row(previous),
        "Does that apply to add-ons too?".to_owned(),
        String::new(),
        30,
    );
    conversation.row_mut(previous).answer_tokens = 0;
    previous = conversation.turn(
        rng,
        Parent::Row(previous),
        "Hello? Add-ons?".to_owned(),
        "Sorry about that. Add-ons follow the same 30-day rule as the plan they belong to."
            .to_owned(),
        50,
    );
    // The current request's placeholder: inserted before generation with nothing filled in.
    let placeholder = conversation.turn(
        rng,
        Parent::Row(previous),
        "Great, how do I request one?".to_owned(),
        String::new(),
        40,
    );
    let placeholder = conversation.row_mut(placeholder);
    placeholder.message_tokens = 0;
    placeholder.answer_tokens = 0;
    conversation_story(
        "Interrupted answers",
        conversation.finish(batch),
        "a stopped partial answer, an errored turn (status error), an empty stopped answer kept \
         in history, and a newest placeholder row (answer \"\", answer_tokens 0) that Dify pops",
    )
}

/// Images and documents on both sides of the conversation.
fn files_conversation(
    rng: &mut DemoRng,
    storage: &FileRoot,
    tenant_id: &str,
    app: &AppRow,
    batch: &mut Batch,
) -> Result<Story, WriteFileError> {
    let started = base_time() - seconds(36 * 3600);
    let mut conversation =
        ConversationBuilder::new(rng, app, "Office move planning", "web-app", started);
    let photo_turn = conversation.turn(
        rng,
        Parent::Root,
        "Here is a photo of the whiteboard from today's planning session. Can you transcribe it?"
            .to_owned(),
        "The whiteboard lists: move date May 4, movers booked, IT cut-over Friday night, \
         desks labelled by team."
            .to_owned(),
        0,
    );
    let report_turn = conversation.turn(
        rng,
        Parent::Row(photo_turn),
        "And this is the lease summary. What's the notice period?".to_owned(),
        "The lease summary gives a notice period of three months, ending on the last day of a \
         calendar month."
            .to_owned(),
        120,
    );
    let chart_turn = conversation.turn(
        rng,
        Parent::Row(report_turn),
        "Make me a chart of the move timeline.".to_owned(),
        "Here is the timeline chart: notice, packing, IT cut-over, move day.".to_owned(),
        90,
    );
    let floorplan_turn = conversation.turn(
        rng,
        Parent::Row(chart_turn),
        "Does the new floor plan fit 40 desks?".to_owned(),
        "Yes: the open area fits 36 desks and the two project rooms take the other four."
            .to_owned(),
        150,
    );

    let photo = upload(
        rng,
        storage,
        tenant_id,
        "whiteboard.png",
        TINY_PNG,
        "image/png",
        conversation.row(photo_turn).created_at,
    )?;
    let lease = upload(
        rng,
        storage,
        tenant_id,
        "lease-summary.pdf",
        TINY_PDF,
        "application/pdf",
        conversation.row(report_turn).created_at,
    )?;
    let photo_file = user_upload_file(rng, conversation.row(photo_turn), "image", &photo);
    let lease_file = user_upload_file(rng, conversation.row(report_turn), "document", &lease);
    // A tool-generated image: `upload_file_id` holds the tool file's id, no upload row.
    let tool_file_id = rng.uuid();
    let chart = conversation.row(chart_turn);
    let chart_file = MessageFileRow {
        id: rng.uuid(),
        message_id: chart.id.clone(),
        file_type: "image".to_owned(),
        transfer_method: "tool_file".to_owned(),
        url: Some(format!("/files/tools/{tool_file_id}.png")),
        belongs_to: Some("assistant".to_owned()),
        upload_file_id: Some(tool_file_id),
        created_at: chart.created_at,
    };
    // A remote image with NULL belongs_to, as rows written before the column existed: Dify
    // treats it as the user's.
    let floorplan = conversation.row(floorplan_turn);
    let floorplan_file = MessageFileRow {
        id: rng.uuid(),
        message_id: floorplan.id.clone(),
        file_type: "image".to_owned(),
        transfer_method: "remote_url".to_owned(),
        url: Some("https://images.example.com/office/floorplan-level-3.jpg".to_owned()),
        belongs_to: None,
        upload_file_id: None,
        created_at: floorplan.created_at,
    };
    batch.upload_files.extend([photo, lease]);
    batch
        .message_files
        .extend([photo_file, lease_file, chart_file, floorplan_file]);
    Ok(conversation_story(
        "Files on both sides",
        conversation.finish(batch),
        "an uploaded image and PDF (belongs_to user), a tool-generated image (belongs_to \
         assistant) and a remote image with belongs_to NULL",
    ))
}

/// Turns of the long history; each adds roughly 2,200 tokens, about 175k in all.
const LONG_HISTORY_TURNS: usize = 80;

/// A history far over common budgets (> 128k tokens) in an agent app without a memory window:
/// Dify sends up to 500 rows and, with token counting off by default, never prunes (#17778).
fn long_history(rng: &mut DemoRng, app: &AppRow, batch: &mut Batch) -> Story {
    let started = base_time() - seconds(30 * 3600);
    let mut conversation = ConversationBuilder::new(
        rng,
        app,
        "Checkout latency investigation",
        "web-app",
        started,
    );
    let mut previous = None;
    for turn in 0..LONG_HISTORY_TURNS {
        let query = match turn % 3 {
            0 => format!(
                "Here are the search results for turn {turn}, what stands out?\n{}",
                json_tool_output(rng, 4)
            ),
            1 => "Rewrite the lock handling so retries do not hold the row lock.".to_owned(),
            _ => "请用中文总结一下目前的进展和风险。".to_owned(),
        };
        let answer = format!(
            "{}\n\n{}\n\nSearch results I used:\n{}\n\n中文摘要：{}",
            prose(rng, 18),
            code_block(rng, 5),
            json_tool_output(rng, 8),
            chinese(rng, 14)
        );
        let parent = previous.map_or(Parent::Root, Parent::Row);
        let gap = rng.between(60, 900);
        previous = Some(conversation.turn(rng, parent, query, answer, gap));
    }
    conversation_story(
        "History over budget",
        conversation.finish(batch),
        "80 turns of prose, code, JSON tool output and Chinese, far over 128k tokens, in an \
         app without a memory window",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::tests::{small, thread};

    #[test]
    fn readme_rows_produce_the_documented_parent_links_and_thread() {
        let (_, rows) = small().conversation("README regeneration example");
        let [r1, r2, r3, r4] = rows.as_slice() else {
            panic!("four rows expected, got {}", rows.len());
        };
        assert_eq!(r1.parent_message_id, None);
        assert_eq!(r2.parent_message_id.as_deref(), Some(r1.id.as_str()));
        assert_eq!(r3.parent_message_id, None);
        assert_eq!(r3.query, r1.query, "a regeneration re-asks the same query");
        assert_eq!(r4.parent_message_id.as_deref(), Some(r3.id.as_str()));
        let turns: Vec<&str> = thread(&rows)
            .iter()
            .flat_map(|row| [row.query.as_str(), row.answer.as_str()])
            .collect();
        assert_eq!(
            turns,
            [
                r3.query.as_str(),
                r3.answer.as_str(),
                r4.query.as_str(),
                r4.answer.as_str()
            ]
        );
        assert!(r3.answer.contains("Marginalia") && r4.answer.contains("Marginalia"));
    }

    #[test]
    fn deep_tree_has_many_regenerations_and_one_root() {
        let (_, rows) = small().conversation("Deep regeneration tree");
        assert_eq!(rows.len(), DEEP_TREE_ROWS);
        assert_eq!(rows.iter().filter(|row| row.parent().is_none()).count(), 1);
        let mut children: std::collections::HashMap<&str, usize> = Default::default();
        for row in &rows {
            if let Some(parent) = row.parent() {
                *children.entry(parent).or_default() += 1;
            }
        }
        let branching = children.values().filter(|&&count| count > 1).count();
        assert!(branching >= 10, "only {branching} rows were regenerated");
        let thread = thread(&rows);
        assert!(thread.len() >= 15, "thread of {} rows", thread.len());
        assert!(thread.len() < rows.len());
    }

    #[test]
    fn legacy_and_service_api_rows_are_nil_chains() {
        let demo = small();
        for (title, invoke_from) in [
            ("Legacy conversation", "web-app"),
            ("Service-API conversation", "service-api"),
        ] {
            let (conversation, rows) = demo.conversation(title);
            assert!(
                rows.iter()
                    .all(|row| row.parent_message_id.as_deref() == Some(UUID_NIL))
            );
            assert!(
                rows.iter()
                    .all(|row| row.invoke_from.as_deref() == Some(invoke_from))
            );
            assert_eq!(thread(&rows).len(), rows.len(), "{title}");
            assert_eq!(conversation.dialogue_count, rows.len() as i64);
        }
        let (legacy, _) = demo.conversation("Legacy conversation");
        let dify_0_9 = chrono::NaiveDate::from_ymd_opt(2024, 9, 1)
            .and_then(|day| day.and_hms_opt(0, 0, 0))
            .expect("valid date");
        assert!(legacy.created_at < dify_0_9);
    }

    #[test]
    fn issue_39031_stops_dify_early() {
        let (_, rows) = small().conversation("Issue #39031");
        let [a, b, x, c] = rows.as_slice() else {
            panic!("four rows expected");
        };
        assert_eq!(x.parent_message_id, None);
        assert_eq!(c.parent_message_id.as_deref(), Some(b.id.as_str()));
        assert_eq!(b.parent_message_id.as_deref(), Some(a.id.as_str()));
        let ids: Vec<&str> = thread(&rows).iter().map(|row| row.id.as_str()).collect();
        assert_eq!(ids, [x.id.as_str(), c.id.as_str()]);
    }

    #[test]
    fn interrupted_answers_cover_stop_error_and_placeholder() {
        let (_, rows) = small().conversation("Interrupted answers");
        let newest = rows.last().expect("rows");
        assert_eq!((newest.answer.as_str(), newest.answer_tokens), ("", 0));
        assert!(
            rows.iter()
                .any(|row| row.status == "error" && row.error.is_some() && row.answer.is_empty())
        );
        let empty_in_history = rows[..rows.len() - 1]
            .iter()
            .filter(|row| row.answer.is_empty() && row.status == "normal")
            .count();
        assert_eq!(empty_in_history, 1);
        assert!(rows.iter().any(|row| row.answer.ends_with("the account")));
    }

    #[test]
    fn files_cover_every_owner() {
        let demo = small();
        let (_, rows) = demo.conversation("Files on both sides");
        let ids: Vec<&str> = rows.iter().map(|row| row.id.as_str()).collect();
        let files: Vec<&MessageFileRow> = demo
            .batches
            .iter()
            .flat_map(|batch| &batch.message_files)
            .filter(|file| ids.contains(&file.message_id.as_str()))
            .collect();
        let owners: Vec<Option<&str>> = files.iter().map(|f| f.belongs_to.as_deref()).collect();
        assert_eq!(
            owners,
            [Some("user"), Some("user"), Some("assistant"), None]
        );
        let types: Vec<&str> = files.iter().map(|f| f.file_type.as_str()).collect();
        assert_eq!(types, ["image", "document", "image", "image"]);
        for upload_id in files
            .iter()
            .take(2)
            .filter_map(|f| f.upload_file_id.as_deref())
        {
            let upload = demo
                .batches
                .iter()
                .flat_map(|batch| &batch.upload_files)
                .find(|upload| upload.id == upload_id)
                .expect("upload row");
            let bytes = std::fs::read(demo.storage.path().join(&upload.key)).expect("file");
            assert_eq!(bytes.len() as i64, upload.size);
        }
    }

    #[test]
    fn long_history_is_over_128k_tokens_with_mixed_content() {
        let (_, rows) = small().conversation("History over budget");
        let total: i64 = thread(&rows)
            .iter()
            .map(|row| estimate_tokens(&row.query) + estimate_tokens(&row.answer))
            .sum();
        assert!(total > 150_000, "{total} tokens");
        let answer = &rows[0].answer;
        assert!(answer.contains("```python") && answer.contains("\"results\""));
        assert!(answer.contains("中文摘要"));
        let newest = rows.last().expect("rows");
        assert!(
            newest.message_tokens > 128_000,
            "without a window the prompt carries the whole history"
        );
    }

    #[test]
    fn message_tokens_count_only_the_window() {
        let mut rng = DemoRng::new(1, 0);
        let app = app(&mut rng, "t", "windowed", "chat", Some(2), base_time());
        let mut conversation =
            ConversationBuilder::new(&mut rng, &app, "c", "web-app", base_time());
        let turn = "a".repeat(40); // 10 tokens
        let mut previous = conversation.turn(&mut rng, Parent::Root, turn.clone(), turn.clone(), 0);
        for _ in 0..4 {
            previous = conversation.turn(
                &mut rng,
                Parent::Row(previous),
                turn.clone(),
                turn.clone(),
                1,
            );
        }
        // System prompt + two earlier turns of 20 tokens + the 10-token query.
        assert_eq!(
            conversation.row(previous).message_tokens,
            SYSTEM_PROMPT_TOKENS + 2 * 20 + 10
        );
        assert_eq!(
            conversation.row(0).message_tokens,
            SYSTEM_PROMPT_TOKENS + 10
        );
    }
}
