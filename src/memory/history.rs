//! What `TokenBufferMemory` sends: the row window, the thread, prompt messages and pruning.
//!
//! Follows reference §1: rows newest first (the SQL LIMIT is [`row_window`]), the thread walk,
//! the placeholder pop, then one user and one assistant message per row, oldest first. Token
//! pruning is [`crate::memory::budget::prune`]; [`History::split_at_cut`] applies its result.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::budget::Pruned;
use super::model::{
    Content, ContentPart, FileOwner, MessageFile, PromptMessage, Role, StoredMessage,
};
use super::thread::{ExtractionMode, extract_thread};

/// Dify's cap on the rows one history query loads.
pub const MAX_ROW_WINDOW: usize = 500;

/// The LIMIT of the history query: `min(limit, 500)`, and 500 when the limit is missing or not
/// positive. It counts rows (turns), regenerated siblings included, before thread extraction.
pub fn row_window(message_limit: Option<i64>) -> usize {
    match message_limit {
        Some(limit) if limit > 0 => {
            usize::try_from(limit).map_or(MAX_ROW_WINDOW, |limit| limit.min(MAX_ROW_WINDOW))
        }
        _ => MAX_ROW_WINDOW,
    }
}

/// When the newest thread row is dropped as the current request's placeholder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PopRule {
    /// Before 2025: the answer is empty.
    AnswerEmpty,
    /// Since 2025: the answer is empty and no answer tokens were recorded, so a message still
    /// streaming is kept.
    #[default]
    AnswerEmptyAndNoAnswerTokens,
}

impl PopRule {
    pub fn pops(self, newest: &StoredMessage) -> bool {
        newest.answer.is_empty()
            && match self {
                PopRule::AnswerEmpty => true,
                PopRule::AnswerEmptyAndNoAnswerTokens => newest.answer_tokens == 0,
            }
    }
}

/// Where a row's files go and in which order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileOrder {
    /// Current: files first, then text; user files (`belongs_to` user or NULL) on the user
    /// message, assistant files on the assistant message.
    #[default]
    FilesFirst,
    /// Late 2024: text first, then every file of the row on the user message; the assistant
    /// message is always plain text.
    TextFirstAllFilesOnUser,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryOptions {
    /// `message_limit` as the caller passes it; see [`row_window`].
    pub message_limit: Option<i64>,
    pub extraction: ExtractionMode,
    pub pop_rule: PopRule,
    pub file_order: FileOrder,
}

/// Which half of a row a prompt message comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Query,
    Answer,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryMessage {
    pub message: PromptMessage,
    /// The `messages` row it was built from.
    pub source_id: String,
    pub side: Side,
}

/// The history `TokenBufferMemory` builds before token pruning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    /// The row LIMIT in effect.
    pub window: usize,
    /// Rows handed in (more than `window` are ignored, as the LIMIT would have).
    pub rows_given: usize,
    /// Ids of the rows that produced messages, oldest first.
    pub thread: Vec<String>,
    /// The newest thread row, dropped as the current request's placeholder.
    pub popped: Option<String>,
    /// Two per thread row: the query, then the answer.
    pub messages: Vec<HistoryMessage>,
}

impl History {
    pub fn prompt_messages(&self) -> impl Iterator<Item = &PromptMessage> {
        self.messages.iter().map(|m| &m.message)
    }

    /// The messages pruning cuts and those it keeps: the cut line is between the two.
    pub fn split_at_cut(&self, pruned: &Pruned) -> (&[HistoryMessage], &[HistoryMessage]) {
        self.messages
            .split_at(pruned.first_kept.min(self.messages.len()))
    }
}

/// The thread as memory uses it: extracted, placeholder popped, oldest first.
struct UsedThread {
    rows: Vec<usize>,
    popped: Option<usize>,
}

fn used_thread(
    rows_newest_first: &[StoredMessage],
    extraction: ExtractionMode,
    pop_rule: PopRule,
) -> UsedThread {
    let mut rows = extract_thread(rows_newest_first, extraction);
    // Only the newest row is ever checked: older empty answers stay in the history.
    let popped = match rows.first() {
        Some(&newest) if pop_rule.pops(&rows_newest_first[newest]) => Some(rows.remove(0)),
        _ => None,
    };
    rows.reverse();
    UsedThread { rows, popped }
}

/// `get_history_prompt_messages` before pruning, from the conversation's rows newest first and
/// the `message_files` of those rows (in any order; each row keeps its files' relative order).
///
/// Files are always attached. Dify first reads the app's file-upload config and sends plain
/// text when it is off, and raises when a workflow run it needs is missing (#32674); callers
/// that know the config or the missing runs decide that before calling.
pub fn assemble_history(
    rows_newest_first: &[StoredMessage],
    files: &[MessageFile],
    options: &HistoryOptions,
) -> History {
    let window = row_window(options.message_limit);
    let loaded = &rows_newest_first[..rows_newest_first.len().min(window)];
    let thread = used_thread(loaded, options.extraction, options.pop_rule);

    let mut files_by_message: FxHashMap<&str, Vec<&MessageFile>> = FxHashMap::default();
    for file in files {
        files_by_message
            .entry(&file.message_id)
            .or_default()
            .push(file);
    }

    let mut messages = Vec::with_capacity(thread.rows.len() * 2);
    for &row in &thread.rows {
        let message = &loaded[row];
        let row_files = files_by_message
            .get(message.id.as_str())
            .map_or(&[][..], Vec::as_slice);
        let (query, answer) = match options.file_order {
            FileOrder::FilesFirst => (
                files_first(&message.query, row_files, FileOwner::User),
                files_first(&message.answer, row_files, FileOwner::Assistant),
            ),
            FileOrder::TextFirstAllFilesOnUser => (
                with_files(&message.query, row_files.iter().copied(), false),
                Content::Text(message.answer.clone()),
            ),
        };
        for (role, content, side) in [
            (Role::User, query, Side::Query),
            (Role::Assistant, answer, Side::Answer),
        ] {
            messages.push(HistoryMessage {
                message: PromptMessage::new(role, content),
                source_id: message.id.clone(),
                side,
            });
        }
    }

    History {
        window,
        rows_given: rows_newest_first.len(),
        thread: thread
            .rows
            .iter()
            .map(|&row| loaded[row].id.clone())
            .collect(),
        popped: thread.popped.map(|row| loaded[row].id.clone()),
        messages,
    }
}

fn files_first(text: &str, files: &[&MessageFile], owner: FileOwner) -> Content {
    with_files(
        text,
        files.iter().copied().filter(|f| f.owner() == owner),
        true,
    )
}

/// Plain text without files; otherwise the file parts and one text part, in the given order.
fn with_files<'f>(
    text: &str,
    files: impl Iterator<Item = &'f MessageFile>,
    files_before_text: bool,
) -> Content {
    let mut parts: Vec<ContentPart> = files.map(file_part).collect();
    if parts.is_empty() {
        return Content::Text(text.to_owned());
    }
    let text_part = ContentPart::Text {
        text: text.to_owned(),
    };
    if files_before_text {
        parts.push(text_part);
    } else {
        parts.insert(0, text_part);
    }
    Content::Parts(parts)
}

fn file_part(file: &MessageFile) -> ContentPart {
    let source = file.label().to_owned();
    match file.file_type.as_str() {
        "image" => ContentPart::Image { source },
        "audio" => ContentPart::Audio { source },
        "video" => ContentPart::Video { source },
        // `document`, and `custom` which Dify sends as a document; unknown types likewise.
        _ => ContentPart::Document { source },
    }
}

/// `get_history_prompt_text` (reference §1.6): `"{prefix}: {content}"` lines joined by `"\n"`.
/// Roles other than user and assistant are skipped. Part lists render text parts and
/// `[image]` each followed by `"\n"`, drop other parts, and are stripped like Python's `strip()`.
pub fn history_prompt_text<'m>(
    messages: impl IntoIterator<Item = &'m PromptMessage>,
    human_prefix: &str,
    ai_prefix: &str,
) -> String {
    let mut lines = Vec::new();
    for message in messages {
        let prefix = match message.role {
            Role::User => human_prefix,
            Role::Assistant => ai_prefix,
            Role::System | Role::Tool => continue,
        };
        match &message.content {
            Content::Text(text) => lines.push(format!("{prefix}: {text}")),
            Content::Parts(parts) => {
                let mut inner = String::new();
                for part in parts {
                    match part {
                        ContentPart::Text { text } => {
                            inner.push_str(text);
                            inner.push('\n');
                        }
                        ContentPart::Image { .. } => inner.push_str("[image]\n"),
                        ContentPart::Document { .. }
                        | ContentPart::Audio { .. }
                        | ContentPart::Video { .. } => {}
                    }
                }
                lines.push(format!("{prefix}: {}", inner.trim_matches(is_python_space)));
            }
        }
    }
    lines.join("\n")
}

/// Python's `str.isspace`: Unicode white space plus the ASCII separators U+001C..U+001F.
fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// The thread's workflow run ids, oldest first (reference §3.2): up to 500 rows newest first,
/// thread, placeholder pop, rows without a run id dropped.
pub fn thread_workflow_run_ids(
    rows_newest_first: &[StoredMessage],
    extraction: ExtractionMode,
    pop_rule: PopRule,
) -> Vec<&str> {
    let loaded = &rows_newest_first[..rows_newest_first.len().min(MAX_ROW_WINDOW)];
    used_thread(loaded, extraction, pop_rule)
        .rows
        .iter()
        .filter_map(|&row| loaded[row].workflow_run_id.as_deref())
        .filter(|run_id| !run_id.is_empty())
        .collect()
}

/// `sys.dialogue_count` as `get_thread_messages_length` computes it (reference §1.7): the
/// length of the thread of all the conversation's rows, placeholder popped. No row limit.
pub fn dialogue_count(
    all_rows_newest_first: &[StoredMessage],
    extraction: ExtractionMode,
    pop_rule: PopRule,
) -> usize {
    used_thread(all_rows_newest_first, extraction, pop_rule)
        .rows
        .len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::budget::{MessageTokens, SuffixTotals, prune};
    use crate::memory::model::UUID_NIL;
    use crate::memory::thread::tests::{Link, arbitrary_links, links};
    use proptest::prelude::*;

    fn row(link: &Link, answer: &str, answer_tokens: i64) -> StoredMessage {
        StoredMessage {
            id: link.id.clone(),
            conversation_id: "conversation".into(),
            parent_message_id: link.parent.clone(),
            query: format!("q{}", link.id),
            answer: answer.into(),
            message_tokens: 1,
            answer_tokens,
            status: "normal".into(),
            error: None,
            invoke_from: None,
            workflow_run_id: Some(format!("run-{}", link.id)),
            created_at: chrono::NaiveDateTime::default(),
        }
    }

    /// Rows newest first from `id<-parent` pairs, each answered `a{id}`.
    fn rows(spec: &str) -> Vec<StoredMessage> {
        links(spec)
            .iter()
            .map(|link| row(link, &format!("a{}", link.id), 5))
            .collect()
    }

    fn file(id: &str, message_id: &str, file_type: &str, belongs_to: Option<&str>) -> MessageFile {
        MessageFile {
            id: id.into(),
            message_id: message_id.into(),
            file_type: file_type.into(),
            transfer_method: "local_file".into(),
            url: None,
            belongs_to: belongs_to.map(Into::into),
            upload_file_id: None,
            name: Some(format!("{id}.bin")),
        }
    }

    fn texts(history: &History) -> Vec<String> {
        history
            .prompt_messages()
            .map(|m| m.content.text().into_owned())
            .collect()
    }

    #[test]
    fn row_window_clamps_like_dify() {
        assert_eq!(row_window(None), 500);
        assert_eq!(row_window(Some(9999)), 500);
        assert_eq!(row_window(Some(10)), 10);
        assert_eq!(row_window(Some(0)), 500);
        assert_eq!(row_window(Some(-3)), 500);
        assert_eq!(row_window(Some(500)), 500);
        assert_eq!(row_window(Some(i64::MAX)), 500);
    }

    #[test]
    fn seed_example_gives_a_a2_c_c2() {
        let mut turns = rows("4<-3 3<-- 2<-1 1<--");
        for (turn, (query, answer)) in
            turns
                .iter_mut()
                .zip([("C", "C'"), ("A", "A''"), ("B", "B'"), ("A", "A'")])
        {
            turn.query = query.into();
            turn.answer = answer.into();
        }
        let history = assemble_history(&turns, &[], &HistoryOptions::default());
        assert_eq!(texts(&history), ["A", "A''", "C", "C'"]);
        assert_eq!(history.thread, ["3", "4"]);
        let roles: Vec<Role> = history.prompt_messages().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [Role::User, Role::Assistant, Role::User, Role::Assistant]
        );
    }

    #[test]
    fn placeholder_is_popped_and_older_empty_answers_stay() {
        let chain = links("3<-2 2<-1 1<--");
        let turns = [
            row(&chain[0], "", 0),
            row(&chain[1], "", 0),
            row(&chain[2], "a1", 5),
        ];
        let history = assemble_history(&turns, &[], &HistoryOptions::default());
        assert_eq!(history.popped.as_deref(), Some("3"));
        assert_eq!(history.thread, ["1", "2"]);
        assert_eq!(texts(&history), ["q1", "a1", "q2", ""]);
    }

    #[test]
    fn streaming_answer_is_popped_only_by_the_old_rule() {
        let chain = links("2<-1 1<--");
        let turns = [row(&chain[0], "", 7), row(&chain[1], "a1", 5)];
        let current = assemble_history(&turns, &[], &HistoryOptions::default());
        assert_eq!(current.popped, None);
        assert_eq!(current.messages.len(), 4);
        let old = HistoryOptions {
            pop_rule: PopRule::AnswerEmpty,
            ..HistoryOptions::default()
        };
        let history = assemble_history(&turns, &[], &old);
        assert_eq!(history.popped.as_deref(), Some("2"));
        assert_eq!(history.messages.len(), 2);
    }

    #[test]
    fn extraction_mode_is_honoured() {
        let turns = rows("C<-B X<-- B<-A A<--");
        let dify = assemble_history(&turns, &[], &HistoryOptions::default());
        assert_eq!(dify.thread, ["X", "C"]);
        let fixed = HistoryOptions {
            extraction: ExtractionMode::Fixed,
            ..HistoryOptions::default()
        };
        assert_eq!(
            assemble_history(&turns, &[], &fixed).thread,
            ["A", "B", "C"]
        );
    }

    #[test]
    fn window_limits_the_rows_used() {
        let turns = rows("5<-4 4<-3 3<-2 2<-1 1<--");
        let options = HistoryOptions {
            message_limit: Some(3),
            ..HistoryOptions::default()
        };
        let history = assemble_history(&turns, &[], &options);
        assert_eq!(history.window, 3);
        assert_eq!(history.rows_given, 5);
        assert_eq!(history.thread, ["3", "4", "5"]);
    }

    #[test]
    fn files_first_splits_files_by_owner() {
        let turns = rows("1<--");
        let files = [
            file("img", "1", "image", Some("user")),
            file("legacy", "1", "custom", None),
            file("chart", "1", "image", Some("assistant")),
            file("other", "2", "image", None),
        ];
        let history = assemble_history(&turns, &files, &HistoryOptions::default());
        let source = |name: &str| name.to_owned() + ".bin";
        assert_eq!(
            history.messages[0].message.content,
            Content::Parts(vec![
                ContentPart::Image {
                    source: source("img")
                },
                ContentPart::Document {
                    source: source("legacy")
                },
                ContentPart::Text { text: "q1".into() },
            ])
        );
        assert_eq!(
            history.messages[1].message.content,
            Content::Parts(vec![
                ContentPart::Image {
                    source: source("chart")
                },
                ContentPart::Text { text: "a1".into() },
            ])
        );
    }

    #[test]
    fn late_2024_order_puts_text_first_and_every_file_on_the_user() {
        let turns = rows("1<--");
        let mut files = [
            file("clip", "1", "video", Some("assistant")),
            file("song", "1", "audio", Some("user")),
        ];
        files[0].name = None;
        files[0].url = Some("https://example.com/clip.mp4".into());
        let options = HistoryOptions {
            file_order: FileOrder::TextFirstAllFilesOnUser,
            ..HistoryOptions::default()
        };
        let history = assemble_history(&turns, &files, &options);
        assert_eq!(
            history.messages[0].message.content,
            Content::Parts(vec![
                ContentPart::Text { text: "q1".into() },
                ContentPart::Video {
                    source: "https://example.com/clip.mp4".into()
                },
                ContentPart::Audio {
                    source: "song.bin".into()
                },
            ])
        );
        assert_eq!(
            history.messages[1].message.content,
            Content::Text("a1".into())
        );
    }

    #[test]
    fn cut_line_follows_the_pruning_loop() {
        let history = assemble_history(&rows("2<-1 1<--"), &[], &HistoryOptions::default());
        let counts = vec![MessageTokens::flat(10); history.messages.len()];
        let pruned = prune(&SuffixTotals::new(&counts, 3), 25);
        let (cut, kept) = history.split_at_cut(&pruned);
        assert_eq!(cut.len(), 2);
        assert_eq!(
            kept.iter().map(|m| m.side).collect::<Vec<_>>(),
            [Side::Query, Side::Answer]
        );
        assert_eq!(kept[0].source_id, "2");
        let beyond = Pruned {
            first_kept: 99,
            ..pruned
        };
        assert_eq!(history.split_at_cut(&beyond).1.len(), 0);
    }

    #[test]
    fn prompt_text_examples() {
        let pair = [
            PromptMessage::text(Role::User, "Hello"),
            PromptMessage::text(Role::Assistant, "World"),
        ];
        assert_eq!(history_prompt_text(&pair, "H", "A"), "H: Hello\nA: World");
        let four = [
            PromptMessage::text(Role::User, "Q1"),
            PromptMessage::text(Role::Assistant, "A1"),
            PromptMessage::text(Role::User, "Q2"),
            PromptMessage::text(Role::Assistant, "A2"),
        ];
        assert_eq!(
            history_prompt_text(&four, "Human", "Assistant"),
            "Human: Q1\nAssistant: A1\nHuman: Q2\nAssistant: A2"
        );
        assert_eq!(history_prompt_text(&[], "Human", "Assistant"), "");
    }

    #[test]
    fn prompt_text_renders_parts_and_skips_other_roles() {
        let messages = [
            PromptMessage::text(Role::System, "ignored"),
            PromptMessage::new(
                Role::User,
                Content::Parts(vec![
                    ContentPart::Image {
                        source: "a.png".into(),
                    },
                    ContentPart::Document {
                        source: "b.pdf".into(),
                    },
                    ContentPart::Text {
                        text: " look \u{1f}".into(),
                    },
                ]),
            ),
            PromptMessage::text(Role::Tool, "ignored"),
            PromptMessage::text(Role::Assistant, "  kept as is  "),
        ];
        assert_eq!(
            history_prompt_text(&messages, "Human", "Assistant"),
            "Human: [image]\n look\nAssistant:   kept as is  "
        );
    }

    #[test]
    fn run_ids_of_the_thread_oldest_first() {
        let chain = links("4<-3 3<-2 2b<-1 2<-1 1<--");
        let mut turns: Vec<StoredMessage> = chain.iter().map(|l| row(l, "ok", 5)).collect();
        turns[0].answer.clear();
        turns[0].answer_tokens = 0;
        turns[1].workflow_run_id = None;
        turns[3].workflow_run_id = Some(String::new());
        assert_eq!(
            thread_workflow_run_ids(&turns, ExtractionMode::Dify, PopRule::default()),
            ["run-1"]
        );
        turns[3].workflow_run_id = Some("run-2".into());
        assert_eq!(
            thread_workflow_run_ids(&turns, ExtractionMode::Dify, PopRule::default()),
            ["run-1", "run-2"]
        );
    }

    #[test]
    fn dialogue_count_counts_the_thread_without_the_placeholder() {
        let chain = links("3<-NIL 2<-NIL 1<-NIL");
        let mut turns: Vec<StoredMessage> = chain.iter().map(|l| row(l, "ok", 5)).collect();
        assert_eq!(
            dialogue_count(&turns, ExtractionMode::Dify, PopRule::default()),
            3
        );
        turns[0].answer.clear();
        assert_eq!(
            dialogue_count(&turns, ExtractionMode::Dify, PopRule::AnswerEmpty),
            2
        );
        assert_eq!(
            dialogue_count(&turns, ExtractionMode::Dify, PopRule::default()),
            3
        );
        turns[0].answer_tokens = 0;
        assert_eq!(
            dialogue_count(&turns, ExtractionMode::Dify, PopRule::default()),
            2
        );
        // No row limit, unlike the history query.
        let long: Vec<StoredMessage> = (0..600)
            .map(|i| {
                let link = Link {
                    id: format!("m{i}"),
                    parent: Some(UUID_NIL.into()),
                };
                row(&link, "ok", 5)
            })
            .collect();
        assert_eq!(
            dialogue_count(&long, ExtractionMode::Dify, PopRule::default()),
            600
        );
        assert_eq!(
            assemble_history(&long, &[], &HistoryOptions::default())
                .thread
                .len(),
            500
        );
    }

    proptest! {
        #[test]
        fn history_has_two_messages_per_used_row(
            shape in arbitrary_links(),
            answers in prop::collection::vec((any::<bool>(), any::<bool>()), 30),
            fixed in any::<bool>(),
            old_rule in any::<bool>(),
        ) {
            let turns: Vec<StoredMessage> = shape
                .iter()
                .zip(&answers)
                .map(|(link, &(answered, tokens))| row(link, if answered { "a" } else { "" }, i64::from(tokens)))
                .collect();
            let files: Vec<MessageFile> = shape
                .iter()
                .map(|link| file("f", &link.id, "image", None))
                .collect();
            let options = HistoryOptions {
                extraction: if fixed { ExtractionMode::Fixed } else { ExtractionMode::Dify },
                pop_rule: if old_rule { PopRule::AnswerEmpty } else { PopRule::default() },
                ..HistoryOptions::default()
            };
            let history = assemble_history(&turns, &files, &options);
            let extracted: Vec<&str> = extract_thread(&turns, options.extraction)
                .iter()
                .map(|&i| turns[i].id.as_str())
                .collect();
            let mut used: Vec<&str> = history.thread.iter().rev().map(String::as_str).collect();
            if let Some(popped) = &history.popped {
                used.insert(0, popped);
            }
            prop_assert_eq!(used, extracted);
            prop_assert_eq!(history.messages.len(), 2 * history.thread.len());
            for (pair, id) in history.messages.chunks(2).zip(&history.thread) {
                prop_assert_eq!(&pair[0].source_id, id);
                prop_assert_eq!(&pair[1].source_id, id);
                prop_assert_eq!((pair[0].side, pair[1].side), (Side::Query, Side::Answer));
            }
            prop_assert_eq!(
                dialogue_count(&turns, options.extraction, options.pop_rule),
                history.thread.len()
            );
        }
    }
}
