//! What memscope's sync leaves equals what Langflow's own ingestion leaves on the same database:
//! the workflow runs it stamps (every run of the session still pending at its commit, those
//! recorded while it ran too), its chunks (content and metadata; ids in Langflow's `uuid4`
//! form), and a base Langflow preprocesses with an LLM is refused, never ingested raw.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};

use super::*;

/// Langflow's own flush of a session (`tests/langflow/race.py`), started in the background.
pub(super) struct LangflowFlush {
    child: Child,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl LangflowFlush {
    /// Starts it; `mode` is `--hold-until FILE` or `--start-when FILE`. Returns once it says
    /// `expect` (`holding` or `ready`).
    pub(super) fn start(
        built: &Built,
        base: &str,
        session: &str,
        mode: (&str, &Path),
        expect: &str,
    ) -> LangflowFlush {
        let mut command = Process::new(python().unwrap());
        command.arg(script("race.py"));
        match &built.file {
            Some(file) => command.arg("--sqlite").arg(file),
            None => command.arg("--postgres").arg(&built.url),
        };
        command
            .arg("--kb-dir")
            .arg(&built.kb_dir)
            .args(["--base", base, "--session", session])
            .arg(mode.0)
            .arg(mode.1)
            .stdout(Stdio::piped());
        let mut child = command.spawn().expect("race.py starts");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        loop {
            match lines.next() {
                Some(Ok(line)) if line.trim() == expect => break,
                Some(Ok(_)) => {}
                _ => {
                    let status = child.wait();
                    panic!("race.py ended before saying {expect}: {status:?}");
                }
            }
        }
        LangflowFlush { child, lines }
    }

    /// Waits for the flush to end: its job and status, or the error Langflow answered with.
    pub(super) fn finish(mut self) -> Value {
        let last = self
            .lines
            .by_ref()
            .map_while(Result::ok)
            .filter(|line| line.starts_with('{'))
            .last();
        let status = self.child.wait().unwrap();
        assert!(status.success(), "race.py failed: {status}");
        serde_json::from_str(&last.expect("race.py printed its result")).unwrap()
    }
}

/// The chunks of a session in a base's current vector store, oldest first.
pub(super) fn chunks_of(said: &Value, base: &str, session: &str) -> Vec<Value> {
    let path = base_named(said, base)["vectors_path"]
        .as_str()
        .expect("the base's KB is in Langflow's sqlite backend")
        .to_owned();
    let output = Process::new(python().unwrap())
        .args([
            "-c",
            "import json, sqlite3, sys\n\
             c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)\n\
             rows = c.execute('SELECT id, content, metadata, job_id FROM chunks \
             WHERE session_id = ? ORDER BY rowid', (sys.argv[2],)).fetchall()\n\
             print(json.dumps([{'id': r[0], 'content': r[1], 'metadata': json.loads(r[2]), \
             'job_id': r[3]} for r in rows]))",
            &path,
            session,
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice::<Value>(&output.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// A chunk as both must write it, without what is drawn per job (its id, the job's id).
fn comparable(chunk: &Value) -> Value {
    let mut metadata = chunk["metadata"].clone();
    metadata.as_object_mut().unwrap().remove("job_id");
    serde_json::json!({"content": chunk["content"], "metadata": metadata})
}

/// Langflow's chunk ids: `str(uuid4())`, lowercase and dashed.
fn is_uuid4_text(id: &str) -> bool {
    uuid::Uuid::parse_str(id).is_ok_and(|u| {
        u.get_version_num() == 4 && u.hyphenated().to_string() == id && id.len() == 36
    })
}

const BASE: &str = "Research Notes";
const SESSION: &str = "support-never";

/// A run captured into the session while an ingestion of it is under way.
fn capture_a_run(built: &Built, home: &Path, embed: &EmbedServer) {
    let input = home.join("late-run.json");
    std::fs::write(
        &input,
        r#"[{"sender": "User", "text": "Can I change my billing email?"},
            {"sender": "Machine", "text": "Yes, under Billing > Contacts."}]"#,
    )
    .unwrap();
    writer(built, home, embed)
        .args(["capture", "--flow", "Support Chat", "--session", SESSION])
        .arg("--input")
        .arg(&input)
        .assert()
        .success();
}

/// The session as Langflow's functions see it, with the chunks its ingestion wrote.
fn outcome(said: &Value, chunks_before: usize) -> (Value, Vec<Value>) {
    let session = session_of(base_named(said, BASE), SESSION);
    let view = serde_json::json!({
        "pending_runs": session["pending_runs"],
        "pending_messages": session["pending_message_ids"].as_array().unwrap().len(),
        "total_processed": session["total_processed"],
    });
    let chunks = chunks_of(said, BASE, SESSION)[chunks_before..].to_vec();
    (view, chunks)
}

/// memscope's sync and Langflow's own flush of the same session, each with a run captured
/// while it embeds: both stamp every pending run (the late one too), write the same chunks
/// with Langflow's id form, and leave the same pending messages and totals.
#[test]
fn langflow_a_sync_stamps_and_writes_what_langflows_ingestion_does() {
    on_langflow("sync_matches_ingestion", Backend::Sqlite, |built| {
        let before = langflow_says(built);
        let chunks_before = chunks_of(&before, BASE, SESSION).len();
        let pending_before = session_of(base_named(&before, BASE), SESSION)["pending_runs"]
            .as_i64()
            .unwrap();
        assert!(pending_before > 0, "the session has a pending run");

        // memscope's sync, a run captured while it embeds.
        let ours = sqlite_copy(built);
        let home = tempfile::tempdir().unwrap();
        let embed = EmbedServer::start(&[]);
        let slow = EmbedServer::start(&["--delay", "8"]);
        let (mut child, _job) = slow_sync_in(&ours, home.path(), &slow, BASE, SESSION);
        capture_a_run(&ours, home.path(), &embed);
        assert!(child.wait().unwrap().success(), "memscope's sync completed");
        let said = langflow_says_probing(&ours, true);
        langflow_accepts(&said);
        let (memscope_view, memscope_chunks) = outcome(&said, chunks_before);

        // Langflow's own flush, the same run captured while it embeds.
        let theirs = sqlite_copy(built);
        let home = tempfile::tempdir().unwrap();
        let release = home.path().join("release");
        let flush = LangflowFlush::start(
            &theirs,
            BASE,
            SESSION,
            ("--hold-until", &release),
            "holding",
        );
        capture_a_run(&theirs, home.path(), &embed);
        std::fs::write(&release, "").unwrap();
        let finished = flush.finish();
        assert_eq!(finished["status"], "completed", "{finished}");
        let said = langflow_says_probing(&theirs, true);
        langflow_accepts(&said);
        let (langflow_view, langflow_chunks) = outcome(&said, chunks_before);

        assert_eq!(memscope_view, langflow_view);
        assert_eq!(
            memscope_view["pending_runs"], 0,
            "the late run is stamped too"
        );
        assert_eq!(
            memscope_chunks.iter().map(comparable).collect::<Vec<_>>(),
            langflow_chunks.iter().map(comparable).collect::<Vec<_>>()
        );
        assert!(!memscope_chunks.is_empty());
        for chunk in memscope_chunks.iter().chain(&langflow_chunks) {
            let id = chunk["id"].as_str().unwrap();
            assert!(is_uuid4_text(id), "chunk id {id}");
        }
    });
}

/// A base Langflow preprocesses with an LLM is refused with one line that says why and what to
/// use instead; nothing is written.
#[test]
fn langflow_a_preprocessing_base_is_refused_not_ingested_raw() {
    on_langflow("preprocessing_refused", Backend::Sqlite, |built| {
        let copy = sqlite_copy(built);
        let created = Process::new(python().unwrap())
            .arg(script("preprocess.py"))
            .arg("--sqlite")
            .arg(copy.file.as_ref().unwrap())
            .arg("--kb-dir")
            .arg(&copy.kb_dir)
            .args(["--name", "Distilled Notes"])
            .output()
            .unwrap();
        assert!(
            created.status.success(),
            "{}",
            String::from_utf8_lossy(&created.stderr)
        );
        let before = std::fs::read(copy.file.as_ref().unwrap()).unwrap();
        let home = tempfile::tempdir().unwrap();
        let embed = EmbedServer::start(&[]);
        for args in [
            vec!["mb", "sync", "Distilled Notes", "--session", SESSION],
            vec!["mb", "sync", "Distilled Notes"],
            vec!["mb", "regenerate", "Distilled Notes", "--yes"],
        ] {
            let output = writer(&copy, home.path(), &embed)
                .args(&args)
                .output()
                .unwrap();
            assert_eq!(output.status.code(), Some(3), "{args:?}");
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                stderr.contains("gpt-4o-mini")
                    && stderr.contains("memscope cannot make")
                    && stderr.contains("flush or regenerate it in Langflow"),
                "{args:?}: {stderr}"
            );
        }
        assert_eq!(std::fs::read(copy.file.as_ref().unwrap()).unwrap(), before);
        let said = langflow_says(&copy);
        let base = base_named(&said, "Distilled Notes");
        assert_eq!(base["preprocessing"], true);
        assert_eq!(base["sessions"], serde_json::json!([]));
    });
}
