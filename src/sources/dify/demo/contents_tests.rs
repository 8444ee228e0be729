use super::*;
use crate::demo::tests::{small, thread};
use crate::demo::text::estimate_tokens;

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
