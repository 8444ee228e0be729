use super::*;
use crate::memory::trim::Reason;
use chrono::NaiveDateTime;

fn row(seq: i64, role: &str, content: &str, files: Option<&str>) -> ChatMemoryMessageRow {
    ChatMemoryMessageRow {
        id: format!("00000000-0000-4000-8000-{seq:012}"),
        chat_memory_id: "m".into(),
        seq,
        role: role.into(),
        content: content.into(),
        tool_calls: None,
        tool_call_id: None,
        files: files.map(str::to_owned),
        workflow_request_id: None,
        is_summary: false,
        created_at: NaiveDateTime::default(),
    }
}

const IMAGE: &str = r#"[{"url":"https://f.example/a/shot.png","file_name":"shot.png","content_type":"image/png"},{"url":"https://f.example/doc.pdf","content_type":"application/pdf"}]"#;

#[test]
fn rows_become_messages_with_image_parts() {
    let message = row_message(&row(0, "user", r#""look""#, Some(IMAGE)));
    assert_eq!(
        message.content,
        Content::Parts(vec![
            ContentPart::Image {
                source: "https://f.example/a/shot.png".into()
            },
            ContentPart::Text {
                text: "look".into()
            },
        ])
    );
    // Malformed JSON is shown as it is, never a failure.
    let broken = row_message(&row(1, "assistant", "{not json", Some("[")));
    assert_eq!(broken.content, Content::Text("{not json".into()));
}

#[test]
fn a_stubbed_image_leaves_files_and_lands_in_content() {
    let original = row(0, "user", r#""look""#, Some(IMAGE));
    let policy = ChatMemoryPolicy::from_json(r#"{"max_images":0}"#).unwrap();
    let mut cache = CountCache::default();
    let session = TrimSession::new(
        vec![row_message(&original)],
        TrimCounter::Messages,
        &mut cache,
    );
    let plan = session.preview_policy(&policy).unwrap();
    let (_, message, reason) = plan.modified().next().unwrap();
    assert_eq!(reason, Reason::ImageStubbed);
    let written = message_row(&original, message);
    assert_eq!(
        written.content,
        r#"[{"type":"text","text":"[image removed: shot.png]"},{"type":"text","text":"look"}]"#
    );
    assert_eq!(
        written.files.as_deref(),
        Some(r#"[{"content_type":"application/pdf","url":"https://f.example/doc.pdf"}]"#)
    );
    // An unmodified round trip keeps the row's content and files (key order aside).
    let same = message_row(&original, &row_message(&original));
    assert_eq!(same.content, original.content);
    let parse = |files: &Option<String>| -> Value {
        serde_json::from_str(files.as_deref().unwrap()).unwrap()
    };
    assert_eq!(parse(&same.files), parse(&original.files));
}

#[test]
fn changes_name_rows_and_put_the_summary_at_the_cut() {
    let rows: Vec<ChatMemoryMessageRow> = (0..6)
        .map(|i| {
            row(
                i + 10,
                if i % 2 == 0 { "user" } else { "assistant" },
                &format!("\"Fact {i} here.\""),
                None,
            )
        })
        .collect();
    let policy = ChatMemoryPolicy::from_json(
        r#"{"max_messages":3,"summarization":{"enabled":true},
            "predefined_messages":[{"role":"user","content":"Example"}]}"#,
    )
    .unwrap();
    let mut cache = CountCache::default();
    let session = TrimSession::new(
        rows.iter().map(row_message).collect(),
        TrimCounter::Messages,
        &mut cache,
    );
    let planner = session.planner(&policy).unwrap();
    let mut plan = planner.plan();
    planner.fill_summary(&mut plan, "facts".into(), "test");
    let change = change_for(&plan, &policy, &rows, "m", "trim");
    // 1 predefined + summary + 1 kept = 3.
    assert_eq!(
        change.removed,
        rows[..5].iter().map(|r| r.id.clone()).collect::<Vec<_>>()
    );
    let summary = &change.added[0];
    assert_eq!((summary.seq, summary.is_summary), (10, true));
    assert_eq!(
        summary.content,
        r#""Summary of earlier conversation: facts""#
    );
}
