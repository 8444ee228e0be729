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
        app_mode: None,
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
fn a_paused_row_is_read_by_its_answer_not_its_status() {
    let chain = links("3<-2 2<-1 1<--");
    let paused = |link: &Link, answer: &str, answer_tokens: i64| StoredMessage {
        status: "paused".into(),
        ..row(link, answer, answer_tokens)
    };
    // Newest and unanswered: the pending request, popped as any placeholder is.
    let turns = [
        paused(&chain[0], "", 0),
        paused(&chain[1], "", 0),
        row(&chain[2], "a1", 5),
    ];
    let history = assemble_history(&turns, &[], &HistoryOptions::default());
    assert_eq!(history.popped.as_deref(), Some("3"));
    assert_eq!(history.thread, ["1", "2"]);
    assert_eq!(texts(&history), ["q1", "a1", "q2", ""]);
    let effects = |history: &History| -> Vec<(String, PauseEffect)> {
        history
            .paused
            .iter()
            .map(|p| (p.message_id.clone(), p.effect))
            .collect()
    };
    // The older pause stays in the history; the newest is the pending request.
    assert_eq!(
        effects(&history),
        [
            ("2".to_owned(), PauseEffect::LeftPaused),
            ("3".to_owned(), PauseEffect::Pending)
        ]
    );
    // Paused after streaming part of an answer: kept whole, as a normal row would be, so the
    // resumed run reads its own turn.
    let turns = [
        paused(&chain[0], "Waiting for appr", 4),
        row(&chain[1], "a2", 5),
    ];
    let history = assemble_history(&turns, &[], &HistoryOptions::default());
    assert_eq!(history.popped, None);
    assert_eq!(texts(&history), ["q2", "a2", "q3", "Waiting for appr"]);
    assert_eq!(
        effects(&history),
        [("3".to_owned(), PauseEffect::OwnTurnInHistory)]
    );
    // Counts saved but nothing streamed (an LLM node ran before the form): not a placeholder
    // either, so the resumed run reads its own question with an empty answer.
    let turns = [paused(&chain[0], "", 12), row(&chain[1], "a2", 5)];
    let history = assemble_history(&turns, &[], &HistoryOptions::default());
    assert_eq!(texts(&history), ["q2", "a2", "q3", ""]);
    assert_eq!(
        effects(&history),
        [("3".to_owned(), PauseEffect::OwnTurnInHistory)]
    );
    assert!(history.paused[0].describe().contains("own question"));
    // Rows that are not paused give no pause, whatever their answer.
    let turns = [row(&chain[0], "", 0), row(&chain[1], "", 0)];
    assert!(
        assemble_history(&turns, &[], &HistoryOptions::default())
            .paused
            .is_empty()
    );
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
