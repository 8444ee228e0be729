//! What Dify's rows hold beyond the thread: answers cut short, files on both sides of a
//! conversation, and a history far over any budget.

use super::builder::{ConversationBuilder, Parent, upload, user_upload_file};
use crate::demo::chapter::{Story, conversation_story};
use crate::demo::files::{FileRoot, TINY_PDF, TINY_PNG, WriteFileError};
use crate::demo::ids::{DemoRng, base_time, seconds};
use crate::demo::text::{chinese, code_block, json_tool_output, prose};
use crate::store::rows::{AppRow, Batch, MessageFileRow};

/// Answers cut short: stopped, errored, and the placeholder of a request still in flight.
pub(super) fn interrupted_answers(rng: &mut DemoRng, app: &AppRow, batch: &mut Batch) -> Story {
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
pub(super) fn files_conversation(
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
pub(super) fn long_history(rng: &mut DemoRng, app: &AppRow, batch: &mut Batch) -> Story {
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
#[path = "contents_tests.rs"]
mod tests;
