use super::*;
use crate::demo::tests::small;

#[test]
fn kb_names_are_sanitised_with_a_suffix() {
    let mut rng = DemoRng::new(1, 0);
    let name = kb_name(&mut rng, "  Support memory - EU ");
    let (stem, suffix) = name.rsplit_once('_').expect("suffix");
    assert_eq!(stem, "support_memory_eu");
    assert_eq!(suffix.len(), 8);
    assert!(kb_name(&mut rng, "!!").starts_with("memory_"));
}

#[test]
fn synced_session_state_matches_its_records() {
    let demo = small();
    let rows = |f: fn(&Batch) -> usize| demo.batches.iter().map(f).sum::<usize>();
    assert_eq!(rows(|b| b.memory_bases.len()), 3);
    let sessions: Vec<&MemoryBaseSessionRow> = demo
        .batches
        .iter()
        .flat_map(|batch| &batch.memory_base_sessions)
        .collect();
    let synced = sessions
        .iter()
        .find(|session| session.session_id == "support-ada-0001")
        .expect("synced session");
    assert_eq!(synced.total_processed, 20);
    assert!(synced.last_sync_at.is_some());
    let records: Vec<&IngestionRecordRow> = demo
        .batches
        .iter()
        .flat_map(|batch| &batch.ingestion_records)
        .filter(|record| record.session_id == "support-ada-0001")
        .collect();
    assert_eq!(records.len(), 20);
    assert_eq!(
        synced.cursor_id.as_deref(),
        records.last().map(|record| record.message_id.as_str())
    );
    let pending = |session_id: &str| {
        demo.batches
            .iter()
            .flat_map(|batch| &batch.memory_base_workflow_runs)
            .filter(|run| run.session_id == session_id && run.ingestion_job_id.is_none())
            .count()
    };
    assert_eq!(pending("support-ada-0001"), 2);
    assert_eq!(pending("support-ada-0002"), 7);
    let failed = demo
        .batches
        .iter()
        .flat_map(|batch| &batch.jobs)
        .filter(|job| job.job_type == "ingestion" && job.status == "failed")
        .count();
    assert_eq!(failed, 1);
    let outputs = demo
        .batches
        .iter()
        .flat_map(|batch| &batch.lf_messages)
        .filter(|message| message.is_output)
        .all(|message| message.sender == "Machine");
    assert!(outputs);
}

#[test]
fn kb_metadata_is_written_except_for_the_mismatch() {
    let demo = small();
    let bases: Vec<&MemoryBaseRow> = demo
        .batches
        .iter()
        .flat_map(|batch| &batch.memory_bases)
        .collect();
    let path = |base: &MemoryBaseRow, user: &str| {
        demo.kb
            .path()
            .join(user)
            .join(&base.kb_name)
            .join("embedding_metadata.json")
    };
    let read = |base: &MemoryBaseRow| -> serde_json::Value {
        let text = std::fs::read_to_string(path(base, "ada")).expect("metadata file");
        serde_json::from_str(&text).expect("metadata JSON")
    };
    let synced = read(bases[0]);
    assert_eq!(synced["is_memory_base"], true);
    assert_eq!(synced["source_types"], json!(["memory"]));
    assert_eq!(synced["embedding_model"], "hashing-lexical");
    assert_eq!(synced["embedding_dimension"], 384);
    assert_eq!(synced["chunks"], 20);
    assert_eq!(read(bases[1])["chunks"], 0);
    assert!(!path(bases[2], "grace").exists());
}
