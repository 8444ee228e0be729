//! memscope against a real S3-compatible server: moto's standalone server, started by each test
//! on a free port, with objects uploaded by a real S3 client (boto3, `tests/s3/objects.py`). The
//! database is a Dify-schema database (the demo's, or a chatflow built here) whose files are in
//! the bucket; every command must show what it shows when the same files are on a local disk.
//!
//! `MEMSCOPE_MOTO_SERVER` names the `moto_server` executable (`.ci/moto` installs it and prints
//! its path; boto3 is the `python` beside it). Without it the tests pass and say they were
//! skipped; with `MEMSCOPE_S3_MARKER_DIR` set, each test that really ran leaves a marker there,
//! so CI can prove they ran.

mod cli_support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use chrono::{NaiveDate, NaiveDateTime, TimeDelta};
use cli_support::{memscope, run};
use memscope::memory::model::StoredMessage;
use memscope::store::Store;
use memscope::store::rows::{
    AppRow, Batch, ConversationRow, MessageRow, NodeExecutionOffloadRow, NodeExecutionRow,
    UploadFileRow, WorkflowRunRow,
};
use serde_json::json;

const SERVER_VAR: &str = "MEMSCOPE_MOTO_SERVER";
const MARKER_VAR: &str = "MEMSCOPE_S3_MARKER_DIR";
const BUCKET: &str = "dify-files";
/// The demo's chatflow conversation whose nodes have memory files and an offloaded output.
const KYOTO: &str = "f6d9281c-c415-4746-a331-2432019e8978";
const RESEARCHER: &str = "1733817600001";

/// A moto server on a free port, stopped when dropped.
struct Moto {
    child: Child,
    endpoint: String,
    python: PathBuf,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Moto {
    /// Starts the server, or says why the test is skipped.
    fn start(test: &str) -> Option<Moto> {
        let Ok(server) = std::env::var(SERVER_VAR) else {
            eprintln!("{test}: S3 test skipped ({SERVER_VAR} is not set; .ci/moto installs moto)");
            return None;
        };
        let server = PathBuf::from(server);
        // Port 0: the server binds a free port itself and names it, so parallel tests never
        // pick the same one between choosing and binding.
        let mut child = Command::new(&server)
            .args(["-H", "127.0.0.1", "-p", "0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{} does not start: {e}", server.display()));
        let mut log = BufReader::new(child.stderr.take().expect("piped stderr")).lines();
        let endpoint = log
            .by_ref()
            .map_while(Result::ok)
            .find_map(|line| {
                line.split_once("Running on ")
                    .map(|(_, url)| url.trim().to_owned())
            })
            .expect("moto names the address it listens on");
        // Keep reading its request log, or a full pipe would stall the server.
        std::thread::spawn(move || log.for_each(drop));
        let moto = Moto {
            child,
            endpoint,
            python: server.with_file_name("python"),
        };
        Some(moto)
    }

    /// Runs the boto3 helper: `put BUCKET DIR` or `delete BUCKET KEY…`.
    fn objects(&self, command: &str, args: &[&str]) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/s3/objects.py");
        let output = Command::new(&self.python)
            .arg(script)
            .args([command, &self.endpoint, BUCKET])
            .args(args)
            .output()
            .expect("boto3 helper runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// Leaves the marker of a test that really ran against the server.
fn ran(test: &str) {
    if let Ok(dir) = std::env::var(MARKER_VAR) {
        std::fs::write(Path::new(&dir).join(test), b"ran\n").expect("marker");
    }
}

/// A home directory with a Dify-schema database and its files on a local disk, and config files
/// that read those files from the disk (`fs.toml`) or from the bucket (`s3.toml`).
struct Deployment {
    home: tempfile::TempDir,
    db: String,
}

impl Deployment {
    fn storage(&self) -> PathBuf {
        self.home.path().join("storage")
    }

    fn config(&self, name: &str) -> PathBuf {
        self.home.path().join(name)
    }

    fn new(endpoint: &str) -> Deployment {
        let home = tempfile::tempdir().expect("home");
        let db = format!("sqlite://{}", home.path().join("dify.db").display());
        let storage = home.path().join("storage");
        std::fs::write(
            home.path().join("fs.toml"),
            format!("[storage]\nroot = \"{}\"\n", storage.display()),
        )
        .unwrap();
        std::fs::write(
            home.path().join("s3.toml"),
            format!(
                "[storage]\nservice = \"s3\"\nbucket = \"{BUCKET}\"\nendpoint = \"{endpoint}\"\n\
                 address_style = \"path\"\naccess_key_id = \"memscope-test\"\n\
                 secret_access_key = \"memscope-test-secret\"\n"
            ),
        )
        .unwrap();
        Deployment { home, db }
    }

    /// `memscope --config NAME --db … ARGS`, with its exit code checked.
    fn run(&self, config: &str, args: &[&str], code: i32) -> String {
        let mut command = memscope(self.home.path());
        command
            .arg("--config")
            .arg(self.config(config))
            .args(["--db", &self.db])
            .args(args);
        run(&mut command, code).0
    }

    /// What a command prints with locations written as keys: the disk path of the storage
    /// directory and the bucket's URL both dropped.
    fn keys_only(&self, text: &str) -> String {
        text.replace(&format!("{}/", self.storage().display()), "")
            .replace(&format!("s3://{BUCKET}/"), "")
    }
}

/// The demo's Dify database with its files in the bucket.
fn demo_in_bucket(moto: &Moto) -> Deployment {
    let deployment = Deployment::new(&moto.endpoint);
    deployment.run("fs.toml", &["init"], 0);
    deployment.run("fs.toml", &["demo"], 0);
    moto.objects("put", &[deployment.storage().to_str().unwrap()]);
    deployment
}

#[test]
fn node_contexts_offloads_and_doctor_read_from_s3_equal_the_local_disk() {
    let test = "node_contexts_offloads_and_doctor_read_from_s3_equal_the_local_disk";
    let Some(moto) = Moto::start(test) else {
        return;
    };
    let deployment = demo_in_bucket(&moto);
    for (args, code) in [
        (vec!["nodes", KYOTO], 0),
        (
            vec!["node-context", KYOTO, RESEARCHER, "--source", "files"],
            0,
        ),
        (
            vec!["node-context", KYOTO, RESEARCHER, "--source", "outputs"],
            0,
        ),
        (
            vec!["node-context", KYOTO, RESEARCHER, "--source", "prompts"],
            0,
        ),
        (vec!["doctor"], 1),
    ] {
        let from_disk = deployment.run("fs.toml", &args, code);
        let from_s3 = deployment.run("s3.toml", &args, code);
        assert_eq!(
            deployment.keys_only(&from_disk),
            deployment.keys_only(&from_s3),
            "{args:?}"
        );
        assert!(
            !from_s3.contains(": it does not exist"),
            "{args:?}: {from_s3}"
        );
    }
    // The file's context was really read: its turns are listed, not an empty state.
    let files = deployment.run(
        "s3.toml",
        &["node-context", KYOTO, RESEARCHER, "--source", "files"],
        0,
    );
    assert!(!files.contains("empty:"), "{files}");
    ran(test);
}

#[test]
fn dify_settings_point_memscope_at_the_bucket() {
    let test = "dify_settings_point_memscope_at_the_bucket";
    let Some(moto) = Moto::start(test) else {
        return;
    };
    let deployment = demo_in_bucket(&moto);
    let env = deployment.home.path().join("dify.env");
    std::fs::write(
        &env,
        format!(
            "# Dify's API container, as `env` prints it\nDB_PASSWORD=\"s3cr3t-db\"\n\
             STORAGE_TYPE=s3\nS3_ENDPOINT={}\nS3_BUCKET_NAME={BUCKET}\nS3_REGION=us-east-1\n\
             S3_ACCESS_KEY=memscope-test\nS3_SECRET_KEY='memscope-test-secret'\n\
             S3_ADDRESS_STYLE=path\nS3_USE_AWS_MANAGED_IAM=false\nDB_PORT=1\n",
            moto.endpoint
        ),
    )
    .unwrap();
    let env = env.to_str().unwrap();
    let args = ["node-context", KYOTO, RESEARCHER, "--source", "outputs"];
    let from_disk = deployment.run("fs.toml", &args, 0);
    let mut command = memscope(deployment.home.path());
    command
        .args(["--dify-env", env, "--db", &deployment.db])
        .args(args);
    let (from_dify, _) = run(&mut command, 0);
    assert_eq!(
        deployment.keys_only(&from_disk),
        deployment.keys_only(&from_dify)
    );

    // Without --db the URL is Dify's; `info` names each value's line and hides the secrets.
    let mut command = memscope(deployment.home.path());
    command.args(["--dify-env", env, "info"]);
    let output = command.output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(output.status.code(), Some(3), "nothing listens on port 1");
    for text in [&stdout, &stderr] {
        assert!(!text.contains("s3cr3t-db"), "{text}");
        assert!(!text.contains("memscope-test-secret"), "{text}");
    }
    assert!(stdout.contains(&format!("S3 bucket {BUCKET}")), "{stdout}");
    assert!(stdout.contains("from Dify's settings"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("DB_PASSWORD") && l.contains("(hidden)") && l.contains("line 2")),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("DB_HOST") && l.contains("Dify's default")),
        "{stdout}"
    );
    ran(test);
}

#[test]
fn missing_objects_and_a_lost_server_are_findings_naming_the_key() {
    let test = "missing_objects_and_a_lost_server_are_findings_naming_the_key";
    let Some(moto) = Moto::start(test) else {
        return;
    };
    let deployment = demo_in_bucket(&moto);
    let storage = deployment.storage();
    let key_of = |path: &Path| {
        path.strip_prefix(&storage)
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned()
    };
    let memory_file = walk(&storage.join("node_memory"))
        .into_iter()
        .find(|p| p.to_str().unwrap().contains(KYOTO) && p.ends_with(format!("{RESEARCHER}.json")))
        .expect("the researcher's memory file");
    let offloaded = walk(&storage.join("upload_files"))
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("the offloaded outputs");
    let image = walk(&storage.join("upload_files"))
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "png"))
        .expect("a message's image");
    let (memory_key, offload_key, image_key) =
        (key_of(&memory_file), key_of(&offloaded), key_of(&image));
    moto.objects("delete", &[&memory_key, &offload_key, &image_key]);

    let files = deployment.run(
        "s3.toml",
        &["node-context", KYOTO, RESEARCHER, "--source", "files"],
        0,
    );
    assert!(
        files.contains(&format!(
            "no node memory file at s3://{BUCKET}/{memory_key}"
        )),
        "{files}"
    );
    let outputs = deployment.run(
        "s3.toml",
        &["node-context", KYOTO, RESEARCHER, "--source", "outputs"],
        0,
    );
    assert!(
        outputs.contains(&format!("s3://{BUCKET}/{offload_key}: it does not exist")),
        "{outputs}"
    );
    let doctor = deployment.run("s3.toml", &["doctor", "--max-per-kind", "100"], 1);
    assert!(
        doctor.contains(&format!("s3://{BUCKET}/{offload_key}")),
        "{doctor}"
    );
    let image_line = doctor
        .lines()
        .find(|l| l.contains(&format!("s3://{BUCKET}/{image_key}")))
        .unwrap_or_else(|| panic!("no finding for the image: {doctor}"));
    assert!(image_line.contains("it does not exist"), "{image_line}");
    assert!(doctor.contains("missing_message_file: 1"), "{doctor}");

    // The server goes away: every read is a problem with its key, the command still answers.
    drop(moto);
    let outputs = deployment.run(
        "s3.toml",
        &["node-context", KYOTO, RESEARCHER, "--source", "outputs"],
        0,
    );
    assert!(
        outputs.contains(&format!("s3://{BUCKET}/upload_files/")),
        "{outputs}"
    );
    ran(test);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// LLM nodes in the large chatflow, each with an offloaded output and a memory file.
const NODES: usize = 200;

fn at(seconds: usize) -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 1, 1)
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap()
        + TimeDelta::seconds(seconds as i64)
}

fn uuid(space: usize, n: usize) -> String {
    format!("00000000-0000-4000-{space:04x}-{n:012x}")
}

/// A chatflow whose one run executed [`NODES`] LLM nodes, each output offloaded to storage as
/// Dify does with large outputs, and each node with its memory file.
async fn large_chatflow(db: &str, storage: &Path) -> String {
    let (tenant, app_id, conversation, run_id) = (uuid(1, 0), uuid(1, 1), uuid(1, 2), uuid(1, 3));
    let mut message = StoredMessage::turn(
        uuid(1, 4),
        conversation.clone(),
        None,
        "Plan",
        "Done",
        at(0),
    );
    message.workflow_run_id = Some(run_id.clone());
    let mut batch = Batch {
        apps: vec![AppRow {
            id: app_id.clone(),
            tenant_id: tenant.clone(),
            name: "200 nodes".into(),
            mode: "advanced-chat".into(),
            memory_window: None,
            created_at: at(0),
        }],
        conversations: vec![ConversationRow {
            id: conversation.clone(),
            app_id: app_id.clone(),
            name: "many nodes".into(),
            mode: "advanced-chat".into(),
            model_provider: None,
            model_id: None,
            status: "normal".into(),
            invoke_from: None,
            from_source: "api".into(),
            dialogue_count: 1,
            created_at: at(0),
            updated_at: at(1),
        }],
        messages: vec![MessageRow {
            app_id: app_id.clone(),
            message,
        }],
        workflow_runs: vec![WorkflowRunRow {
            id: run_id.clone(),
            tenant_id: tenant.clone(),
            app_id: app_id.clone(),
            workflow_id: uuid(1, 5),
            run_type: "chat".into(),
            status: "succeeded".into(),
            total_tokens: 10,
            created_at: at(0),
            finished_at: Some(at(1)),
        }],
        ..Batch::default()
    };
    let memory_dir = storage
        .join("node_memory")
        .join(&app_id)
        .join(&conversation);
    std::fs::create_dir_all(&memory_dir).unwrap();
    std::fs::create_dir_all(storage.join("upload_files").join(&tenant)).unwrap();
    for n in 0..NODES {
        let node_id = format!("node{n:03}");
        let execution = uuid(2, n);
        let context: Vec<_> = (0..20)
            .map(|i| {
                json!({"role": if i % 2 == 0 { "user" } else { "assistant" },
                            "content": format!("node {n} message {i}: {}", "words ".repeat(40))})
            })
            .collect();
        let outputs = json!({"text": format!("reply of {node_id}"), "context": context});
        let key = format!("upload_files/{tenant}/{execution}-outputs.json");
        std::fs::write(storage.join(&key), outputs.to_string()).unwrap();
        std::fs::write(
            memory_dir.join(format!("{node_id}.json")),
            json!({"version": 1, "turns": {run_id.clone(): {"user_content": "Plan",
                "user_files": [], "assistant_content": "Done", "assistant_files": []}}})
            .to_string(),
        )
        .unwrap();
        batch.node_executions.push(NodeExecutionRow {
            id: execution.clone(),
            tenant_id: tenant.clone(),
            app_id: app_id.clone(),
            workflow_id: uuid(1, 5),
            workflow_run_id: Some(run_id.clone()),
            index: n as i64 + 1,
            node_id: node_id.clone(),
            node_type: "llm".into(),
            title: format!("LLM {n}"),
            inputs: Some("{}".into()),
            process_data: None,
            outputs: Some(json!({"text": "reply (truncated)"}).to_string()),
            status: "succeeded".into(),
            error: None,
            execution_metadata: None,
            created_at: at(n),
        });
        batch.upload_files.push(UploadFileRow {
            id: uuid(3, n),
            tenant_id: tenant.clone(),
            storage_type: "s3".into(),
            key,
            name: format!("{execution}-outputs.json"),
            size: outputs.to_string().len() as i64,
            extension: "json".into(),
            mime_type: Some("application/json".into()),
            created_at: at(n),
        });
        batch.node_execution_offloads.push(NodeExecutionOffloadRow {
            id: uuid(4, n),
            tenant_id: tenant.clone(),
            app_id: app_id.clone(),
            node_execution_id: execution,
            offload_type: "outputs".into(),
            file_id: uuid(3, n),
            created_at: at(n),
        });
    }
    let store = Store::init(db).await.expect("init");
    store.insert_batch(&batch).await.expect("insert");
    store.close().await;
    conversation
}

/// The fastest of a few runs, in milliseconds (the machine is shared: the minimum is the
/// least disturbed).
fn fastest_ms(deployment: &Deployment, config: &str, args: &[&str]) -> (u128, String) {
    let mut best = u128::MAX;
    let mut output = String::new();
    for _ in 0..3 {
        let start = Instant::now();
        output = deployment.run(config, args, 0);
        best = best.min(start.elapsed().as_millis());
    }
    (best, output)
}

#[tokio::test]
async fn a_chatflow_with_200_node_files_opens_from_s3_as_from_disk() {
    let test = "a_chatflow_with_200_node_files_opens_from_s3_as_from_disk";
    let Some(moto) = Moto::start(test) else {
        return;
    };
    let deployment = Deployment::new(&moto.endpoint);
    let conversation = large_chatflow(&deployment.db, &deployment.storage()).await;
    moto.objects("put", &[deployment.storage().to_str().unwrap()]);
    let args = ["nodes", conversation.as_str()];
    let (disk_ms, from_disk) = fastest_ms(&deployment, "fs.toml", &args);
    let (s3_ms, from_s3) = fastest_ms(&deployment, "s3.toml", &args);
    assert_eq!(
        deployment.keys_only(&from_disk),
        deployment.keys_only(&from_s3)
    );
    // Every node's latest context came from its offloaded output: 20 messages each.
    let counted = from_s3
        .lines()
        .filter(|l| l.contains("LLM ") && l.contains(" 20 "))
        .count();
    assert_eq!(counted, NODES, "{from_s3}");
    eprintln!(
        "{test}: `memscope nodes` over {NODES} offloaded node outputs: {disk_ms} ms from disk, \
         {s3_ms} ms from the local S3 server (fastest of 3 runs each)"
    );
    ran(test);
}
