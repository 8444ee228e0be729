use super::*;
use chrono::NaiveDateTime;
use proptest::prelude::*;
use serde_json::json;

fn turn(message_id: &str, run_id: &str) -> ThreadTurn {
    ThreadTurn {
        message_id: message_id.into(),
        workflow_run_id: run_id.into(),
    }
}

fn texts(messages: &[NodeMessage]) -> Vec<(Role, String)> {
    messages
        .iter()
        .map(|m| (m.message.role, m.message.content.text().into_owned()))
        .collect()
}

fn bytes(value: Value) -> Vec<u8> {
    value.to_string().into_bytes()
}

#[test]
fn design_b_context_reads_roles_parts_tool_calls_and_blanked_files() {
    let outputs = json!({
        "text": "done",
        "context": [
            {"role": "user", "content": [
                {"type": "image", "base64_data": "", "url": "", "filename": "hotel.png",
                 "file_ref": "upload-1"},
                {"type": "text", "data": "Plan Kyoto"},
            ], "name": null},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "web_search", "arguments": "{\"q\": \"x\"}"}},
            ]},
            {"role": "tool", "content": "{\"hits\": 3}", "tool_call_id": "call_1"},
            {"role": "assistant", "content": "done"},
        ],
    });
    let parsed = parse_outputs(&bytes(outputs), "outputs");
    assert_eq!(parsed.reply.as_deref(), Some("done"));
    assert!(parsed.context.found);
    assert!(
        parsed.context.problems.is_empty(),
        "{:?}",
        parsed.context.problems
    );
    let messages = &parsed.context.messages;
    assert_eq!(messages.len(), 4);
    assert_eq!(
        messages[0].message.content,
        Content::Parts(vec![
            ContentPart::Image {
                source: "hotel.png".into()
            },
            ContentPart::Text {
                text: "Plan Kyoto".into()
            },
        ])
    );
    assert_eq!(messages[1].message.tool_calls[0].name, "web_search");
    assert_eq!(
        messages[1].message.tool_calls[0].arguments,
        "{\"q\": \"x\"}"
    );
    assert_eq!(messages[2].message.tool_call_id.as_deref(), Some("call_1"));
    assert_eq!(messages[3].source, "context[3]");
}

#[test]
fn design_b_bad_items_are_reported_and_the_rest_still_shows() {
    let outputs = json!({"context": [
        {"role": "user", "content": "hello"},
        {"role": "wizard", "content": "abracadabra"},
        "just a string",
        {"role": "assistant", "content": 42},
        {"content": "no role"},
        {"role": "assistant", "content": "hi"},
    ]});
    let parsed = parse_outputs(&bytes(outputs), "outputs of e1");
    assert_eq!(
        texts(&parsed.context.messages),
        [(Role::User, "hello".into()), (Role::Assistant, "hi".into())]
    );
    let problems = &parsed.context.problems;
    assert_eq!(problems.len(), 4);
    assert_eq!(
        problems[0],
        NodeProblem::UnknownRole {
            what: "outputs of e1".into(),
            index: 1,
            role: "wizard".into()
        }
    );
    assert!(matches!(
        &problems[1],
        NodeProblem::BadItem { index: 2, .. }
    ));
    assert!(
        problems[2].to_string().contains("item 3"),
        "{}",
        problems[2]
    );
    assert!(
        problems[3].to_string().contains("no `role`"),
        "{}",
        problems[3]
    );
}

#[test]
fn design_b_document_level_failures() {
    let not_json = parse_outputs(b"{\"text\": \"cut", "outputs");
    assert!(matches!(
        not_json.context.problems[..],
        [NodeProblem::NotJson { .. }]
    ));
    let not_object = parse_outputs(b"[1, 2]", "outputs");
    assert!(matches!(
        not_object.context.problems[..],
        [NodeProblem::NotAnObject { .. }]
    ));
    let not_list = parse_outputs(&bytes(json!({"context": "oops"})), "outputs");
    assert_eq!(
        not_list.context.problems[0].to_string(),
        "outputs: `context` is a string, not a list"
    );
    let main_branch = parse_outputs(&bytes(json!({"text": "hi", "usage": {}})), "outputs");
    assert!(!main_branch.context.found);
    assert!(main_branch.context.problems.is_empty());
    assert_eq!(main_branch.reply.as_deref(), Some("hi"));
}

#[test]
fn prompts_keep_the_system_prompt_and_truncated_files() {
    let data = json!({"model_mode": "chat", "prompts": [
        {"role": "system", "text": "Be brief.", "files": []},
        {"role": "user", "text": "What is this?",
         "files": [{"type": "image", "data": "data:image...[TRUNCATED]...==", "detail": "high"}]},
        {"role": "assistant", "text": "", "files": [],
         "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]},
    ]});
    let parsed = parse_prompts(&bytes(data), "process_data");
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    assert_eq!(
        parsed.messages[0].message,
        PromptMessage::text(Role::System, "Be brief.")
    );
    assert_eq!(
        parsed.messages[1].message.content,
        Content::Parts(vec![
            ContentPart::Image {
                source: "image data (truncated)".into()
            },
            ContentPart::Text {
                text: "What is this?".into()
            },
        ])
    );
    assert_eq!(
        parsed.messages[2].message.tool_calls[0].arguments,
        "{\"a\":1}"
    );
    let completion = parse_prompts(
        &bytes(json!({"prompts": [{"role": "user", "text": "hi"}]})),
        "p",
    );
    assert_eq!(texts(&completion.messages), [(Role::User, "hi".into())]);
    let broken = parse_prompts(&bytes(json!({"prompts": {"role": "user"}})), "p");
    assert!(matches!(
        broken.problems[..],
        [NodeProblem::NotAList { .. }]
    ));
}

fn turns_file() -> MemoryFile {
    let file = json!({"version": 1, "turns": {
        "run-1": {"user_content": "q1", "user_files": [
            {"type": "image", "transfer_method": "local_file", "upload_file_id": "up-1"}],
            "assistant_content": "a1", "assistant_files": []},
        "run-2": {"user_content": "q2", "assistant_content": "a2"},
        "run-sibling": {"user_content": "regenerated away", "assistant_content": "x"},
        "run-bad": "not a turn",
    }});
    parse_memory_file(&bytes(file), "a.json")
}

#[test]
fn design_a_turns_follow_the_thread_only() {
    let file = turns_file();
    assert_eq!(file.version, Some(1));
    assert!(
        matches!(&file.problems[..], [NodeProblem::BadTurn { run_id, .. }] if run_id == "run-bad")
    );
    let thread = [
        turn("m1", "run-1"),
        turn("m3", "run-3"),
        turn("m2", "run-2"),
    ];
    let history = file.history(&thread, "a.json");
    assert_eq!(
        texts(&history.messages),
        [
            (Role::User, "q1".into()),
            (Role::Assistant, "a1".into()),
            (Role::User, "q2".into()),
            (Role::Assistant, "a2".into()),
        ]
    );
    assert!(matches!(
        &history.messages[0].message.content,
        Content::Parts(parts) if parts[0] == ContentPart::Image { source: "up-1".into() }
    ));
    assert_eq!(history.missing_runs, ["run-3"]);
    assert_eq!(
        file.turn_text(&thread[2]),
        Some(TurnText {
            user: "q2".into(),
            assistant: "a2".into()
        })
    );
    assert_eq!(file.turn_text(&thread[1]), None);
}

fn entry(id: &str, parent: Option<&str>, role: &str, content: &str) -> Value {
    json!({"message_id": id, "parent_message_id": parent, "role": role, "content": content,
           "files": [], "token_count": 3, "created_at": "2026-01-07T10:00:00Z"})
}

#[test]
fn seed_messages_follow_the_parent_chain_of_the_thread() {
    // m2 was regenerated as m2b; the thread is m1, m2b, m3.
    let file = json!({"version": 1, "messages": [
        entry("m1", None, "user", "q1"),
        entry("r1", Some("m1"), "assistant", "a1"),
        entry("m2", Some("r1"), "user", "q2"),
        entry("r2", Some("m2"), "assistant", "a2"),
        entry("m2b", Some("r1"), "user", "q2 again"),
        entry("r2b", Some("m2b"), "assistant", "a2b"),
        entry("m3", Some("r2b"), "user", "q3"),
        entry("r3", Some("m3"), "assistant", "a3"),
        entry("x", None, "robot", "?"),
    ]});
    let file = parse_memory_file(&bytes(file), "b.json");
    assert!(matches!(
        &file.problems[..],
        [NodeProblem::UnknownRole { index: 8, .. }]
    ));
    let thread = [
        turn("m1", "run-1"),
        turn("m2b", "run-2b"),
        turn("m3", "run-3"),
    ];
    let history = file.history(&thread, "b.json");
    let contents: Vec<String> = texts(&history.messages)
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    assert_eq!(contents, ["q1", "a1", "q2 again", "a2b", "q3", "a3"]);
    assert!(history.missing_runs.is_empty());
    assert_eq!(
        file.turn_text(&thread[1]).map(|t| t.assistant),
        Some("a2b".to_owned())
    );
    // At an older leaf the newer entries are not history.
    let earlier = file.history(&thread[..2], "b.json");
    assert_eq!(earlier.messages.len(), 4);
}

#[test]
fn seed_message_cycles_end_the_walk_with_a_problem() {
    let file = json!({"messages": [
        entry("m1", Some("r1"), "user", "q1"),
        entry("r1", Some("m1"), "assistant", "a1"),
    ]});
    let file = parse_memory_file(&bytes(file), "c.json");
    let history = file.history(&[turn("m1", "run-1")], "c.json");
    assert_eq!(history.messages.len(), 2);
    assert!(matches!(
        &history.problems[..],
        [NodeProblem::ParentCycle { .. }]
    ));
}

#[test]
fn memory_file_document_failures() {
    type Expected = fn(&NodeProblem) -> bool;
    let cases: [(&[u8], Expected); 4] = [
        (b"\xff\xfe", |p| matches!(p, NodeProblem::NotJson { .. })),
        (b"\"text\"", |p| {
            matches!(p, NodeProblem::NotAnObject { .. })
        }),
        (b"{\"version\": 1}", |p| {
            matches!(p, NodeProblem::UnknownLayout { .. })
        }),
        (b"{\"messages\": 3}", |p| {
            matches!(p, NodeProblem::NotAList { .. })
        }),
    ];
    for (input, expected) in cases {
        let file = parse_memory_file(input, "f");
        assert_eq!(file.layout, MemoryLayout::Unreadable);
        assert!(expected(&file.problems[0]), "{:?}", file.problems);
        assert!(file.history(&[turn("m", "r")], "f").messages.is_empty());
    }
}

#[test]
fn turns_are_compared_by_text() {
    let text = |user: &str, assistant: &str| TurnText {
        user: user.into(),
        assistant: assistant.into(),
    };
    assert_eq!(compare_turn(None, None), None);
    assert_eq!(
        compare_turn(Some(&text("q", "a")), Some(&text("q", "a"))),
        None
    );
    assert_eq!(
        compare_turn(None, Some(&text("q", "a"))),
        Some(Disagreement::MissingInFile)
    );
    assert_eq!(
        compare_turn(Some(&text("q", "a")), None),
        Some(Disagreement::MissingInOutputs)
    );
    assert!(matches!(
        compare_turn(Some(&text("q", "draft")), Some(&text("q", "final"))),
        Some(Disagreement::DifferentAssistant { .. })
    ));
    assert!(matches!(
        compare_turn(Some(&text("q1", "a")), Some(&text("q2", "a"))),
        Some(Disagreement::DifferentUser { .. })
    ));
}

#[test]
fn outputs_turn_is_the_last_user_message_and_the_reply() {
    let outputs = parse_outputs(
        &bytes(json!({"text": "final", "context": [
            {"role": "user", "content": "old"},
            {"role": "assistant", "content": "old answer"},
            {"role": "user", "content": [{"type": "text", "data": "new"}]},
            {"role": "assistant", "content": "final"},
        ]})),
        "o",
    );
    assert_eq!(
        outputs_turn_text(&outputs),
        Some(TurnText {
            user: "new".into(),
            assistant: "final".into()
        })
    );
    assert_eq!(outputs_turn_text(&OutputsContext::default()), None);
}

fn message(id: &str, parent: Option<&str>, run: Option<&str>, answer: &str) -> StoredMessage {
    let mut message = StoredMessage::turn(id, "c", parent, "q", answer, NaiveDateTime::default());
    message.workflow_run_id = run.map(Into::into);
    message
}

#[test]
fn thread_turns_pair_run_ids_with_their_messages() {
    // Newest first: a placeholder (popped), m3 without a run, m2 on the thread, m2b regenerated.
    let rows = [
        message("m4", Some("m3"), Some("run-4"), ""),
        message("m3", Some("m2"), None, "a"),
        message("m2b", Some("m1"), Some("run-2b"), "a"),
        message("m2", Some("m1"), Some("run-2"), "a"),
        message("m1", None, Some("run-1"), "a"),
    ];
    let turns = thread_turns(&rows, ExtractionMode::Dify, PopRule::default());
    assert_eq!(turns, [turn("m1", "run-1"), turn("m2", "run-2")]);
    let run_ids: Vec<&str> = turns.iter().map(|t| t.workflow_run_id.as_str()).collect();
    assert_eq!(
        run_ids,
        thread_workflow_run_ids(&rows, ExtractionMode::Dify, PopRule::default())
    );
}

/// Arbitrary JSON up to a few levels deep, biased towards the keys the parsers look at.
fn arbitrary_json() -> impl Strategy<Value = Value> {
    let key = prop::sample::select(vec![
        "role",
        "content",
        "text",
        "data",
        "type",
        "files",
        "tool_calls",
        "function",
        "arguments",
        "context",
        "prompts",
        "turns",
        "messages",
        "message_id",
        "parent_message_id",
        "user_content",
        "user_files",
        "assistant_content",
        "version",
        "file_ref",
        "filename",
        "id",
        "name",
    ])
    .prop_map(str::to_owned);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        prop::sample::select(vec![
            "user",
            "assistant",
            "system",
            "tool",
            "text",
            "image",
            "m1",
            ""
        ])
        .prop_map(Value::from),
        ".{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn parsers_never_panic_on_arbitrary_bytes(input in prop::collection::vec(any::<u8>(), 0..256)) {
        let thread = [turn("m1", "run-1")];
        parse_memory_file(&input, "f").history(&thread, "f");
        parse_outputs(&input, "o");
        parse_prompts(&input, "p");
    }

    #[test]
    fn parsers_never_panic_on_arbitrary_json(value in arbitrary_json()) {
        let input = value.to_string().into_bytes();
        let thread = [turn("m1", "run-1"), turn("", "")];
        let file = parse_memory_file(&input, "f");
        file.history(&thread, "f");
        file.turn_text(&thread[0]);
        let outputs = parse_outputs(&input, "o");
        outputs_turn_text(&outputs);
        parse_prompts(&input, "p");
        for key in ["context", "prompts", "messages", "turns"] {
            let wrapped = json!({ key: value.clone() }).to_string().into_bytes();
            let outputs = parse_outputs(&wrapped, "o");
            let prompts = parse_prompts(&wrapped, "p");
            let file = parse_memory_file(&wrapped, "f");
            file.history(&thread, "f");
            // Every list item either parses or is reported.
            if let (Value::Array(items), "context") = (&value, key) {
                prop_assert_eq!(outputs.context.messages.len() + outputs.context.problems.len(), items.len());
            }
            if let (Value::Array(items), "prompts") = (&value, key) {
                prop_assert_eq!(prompts.messages.len() + prompts.problems.len(), items.len());
            }
        }
    }
}
