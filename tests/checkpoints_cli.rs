//! `checkpoints prune` and `checkpoints restore` through the real binary on the LangGraph demo
//! file (`memscope demo --langgraph PATH`, SqliteSaver's layout; no Python needed): the
//! restore command a prune prints runs as printed; an archive restores into the database it came
//! from (or a copy of it) and nowhere else, and only once; a parent link is counted only where
//! its checkpoint is; the plan on a database opened read-only says `--write` is needed; Ctrl-C
//! while the archive is written deletes nothing and leaves no file. And checkpoint ids typed back
//! as they are shown, and `thread`'s subgraphs where the TUI draws them.

mod cli_support;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use cli_support::{memscope, memscope_on, run};
use serde_json::Value;
use sqlx::{ConnectOptions, Row};

const THREAD: &str = "long-chat";

/// A new demo file written with `seed` (another seed: another agent's rows under the same
/// thread ids).
fn demo(home: &Path, name: &str, seed: u64) -> PathBuf {
    let file = home.join(name);
    run(
        memscope(home)
            .args(["demo", "--seed", &seed.to_string(), "--langgraph"])
            .arg(&file),
        0,
    );
    file
}

fn db(file: &Path) -> String {
    file.display().to_string()
}

/// The URL memscope names a file by.
fn url(file: &Path) -> String {
    format!("sqlite://{}", file.display())
}

/// Every checkpoint (with its parent) and every write key of a file: what a write changes.
fn rows(file: &Path) -> Vec<String> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut connection = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(file)
            .read_only(true)
            .connect()
            .await
            .unwrap();
        let mut out = Vec::new();
        for sql in [
            "SELECT thread_id || '|' || checkpoint_ns || '|' || checkpoint_id || '|' || \
             COALESCE(parent_checkpoint_id, '-') || '|' || length(checkpoint) FROM checkpoints \
             ORDER BY 1",
            "SELECT thread_id || '|' || checkpoint_ns || '|' || checkpoint_id || '|' || task_id \
             || '|' || idx FROM writes ORDER BY 1",
        ] {
            for row in sqlx::query(sql).fetch_all(&mut connection).await.unwrap() {
                out.push(row.get::<String, _>(0));
            }
        }
        out
    })
}

fn json(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// The prune of `thread` keeping `keep`, with `--write --yes`, into `archive`; its JSON report.
fn prune(home: &Path, file: &Path, keep: u32, archive: &Path) -> Value {
    let (out, _) = run(
        memscope_on(home, &db(file))
            .args([
                "--json",
                "--write",
                "checkpoints",
                "prune",
                "--thread",
                THREAD,
            ])
            .args(["--keep-last", &keep.to_string(), "--yes", "--archive"])
            .arg(archive),
        0,
    );
    json(&out)
}

fn restore(home: &Path, file: &Path, archive: &Path, code: i32) -> (String, String) {
    run(
        memscope_on(home, &db(file))
            .args(["--json", "--write", "checkpoints", "restore"])
            .arg(archive)
            .arg("--yes"),
        code,
    )
}

#[test]
fn an_archive_restores_into_its_own_database_once_and_nowhere_else() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let pruned = demo(home, "agent.sqlite", 42);
    let other = demo(home, "other.sqlite", 7);
    let before = rows(&pruned);
    let archive = home.join("archives/long-chat.jsonl");

    // The text a prune prints ends with the command that puts the rows back, whole, on one
    // line, naming the database and --write.
    let (text, _) = run(
        memscope_on(home, &db(&pruned))
            .args(["--write", "checkpoints", "prune", "--thread", THREAD])
            .args(["--keep-last", "3", "--yes", "--archive"])
            .arg(&archive),
        0,
    );
    let command = text.lines().last().unwrap().to_owned();
    assert_eq!(
        command,
        format!(
            "memscope --write --db {} checkpoints restore {} --yes",
            url(&pruned),
            archive.display()
        ),
        "{text}"
    );
    let pruned_rows = rows(&pruned);
    assert!(pruned_rows.len() < before.len());

    // Another file's thread of the same name: refused, naming where the archive came from,
    // with nothing written.
    let other_rows = rows(&other);
    let (_, error) = restore(home, &other, &archive, 3);
    let error = json(&error);
    assert_eq!(error["error"]["kind"], "other-database", "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains(&url(&pruned)), "{message}");
    assert!(message.contains("nothing was written"), "{message}");
    assert!(
        error["error"]["hint"]
            .as_str()
            .unwrap()
            .contains(&format!("--db {}", url(&pruned))),
        "{error}"
    );
    assert_eq!(rows(&other), other_rows);

    // A copy of the pruned file, under another name, is the same database: it restores.
    let copy = home.join("moved.sqlite");
    std::fs::copy(&pruned, &copy).unwrap();
    let (out, _) = restore(home, &copy, &archive, 0);
    let restored = json(&out);
    assert_eq!(restored["from"], url(&pruned));
    assert_eq!(rows(&copy), before);

    // The printed command, run as printed, puts the rows back.
    let words: Vec<&str> = command.split(' ').collect();
    assert_eq!(words[0], "memscope");
    run(memscope(home).args(&words[1..]), 0);
    assert_eq!(rows(&pruned), before);

    // A second restore says the rows are there already, in plain words, and writes nothing.
    let (_, error) = restore(home, &pruned, &archive, 3);
    let error = json(&error);
    assert_eq!(error["error"]["kind"], "already-restored", "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("in this database already"), "{message}");
    assert!(
        !message.contains("UNIQUE") && !message.contains("1555"),
        "{message}"
    );
    assert_eq!(rows(&pruned), before);
}

/// An archive of the first version recorded no origin: the kept checkpoints its parent lines
/// name prove the database instead.
#[test]
fn an_archive_of_the_first_version_restores_into_its_own_database_only() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let file = demo(home, "agent.sqlite", 42);
    let other = demo(home, "other.sqlite", 7);
    let before = rows(&file);
    let archive = home.join("prune.jsonl");
    prune(home, &file, 3, &archive);
    let text = std::fs::read_to_string(&archive).unwrap();
    let (first, body) = text.split_once('\n').unwrap();
    let mut header = json(first);
    assert_eq!(header["version"], 2);
    assert_eq!(header["origin"]["database"], url(&file));
    header.as_object_mut().unwrap().remove("origin");
    header["version"] = 1.into();
    let old = home.join("old.jsonl");
    std::fs::write(&old, format!("{header}\n{body}")).unwrap();

    let other_rows = rows(&other);
    let (_, error) = restore(home, &other, &old, 3);
    let error = json(&error);
    assert_eq!(error["error"]["kind"], "other-database", "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("a database it does not name"),
        "{error}"
    );
    assert_eq!(rows(&other), other_rows);
    restore(home, &file, &old, 0);
    assert_eq!(rows(&file), before);
}

#[test]
fn a_parent_link_is_counted_only_where_its_checkpoint_is() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let file = demo(home, "agent.sqlite", 42);
    let first = home.join("first.jsonl");
    let second = home.join("second.jsonl");
    // The first prune keeps 3 and clears the parent of the oldest of them; the second deletes
    // that one too.
    prune(home, &file, 3, &first);
    prune(home, &file, 1, &second);

    // The first archive alone: its kept latest checkpoint proves the database, its rows go
    // back, and its parent link has no checkpoint to go to.
    let (out, _) = restore(home, &file, &first, 0);
    let restored = json(&out);
    assert!(restored["rows"].as_u64().unwrap() > 0);
    assert_eq!(restored["parents"], 0, "{restored}");
    // The second one sets its parent link.
    let (out, _) = restore(home, &file, &second, 0);
    assert_eq!(json(&out)["parents"], 1);
}

#[test]
fn the_plan_on_a_read_only_database_says_write_is_needed() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let file = demo(home, "agent.sqlite", 42);
    let (plan, error) = run(
        memscope_on(home, &db(&file)).args(["checkpoints", "prune", "--thread", THREAD]),
        2,
    );
    assert!(plan.contains("would delete"), "{plan}");
    assert!(error.contains("--yes"), "{error}");
    assert!(error.contains("--write"), "{error}");
    // Opened with --write, the plan asks for --yes alone.
    let (_, error) = run(
        memscope_on(home, &db(&file)).args(["--write", "checkpoints", "prune", "--thread", THREAD]),
        2,
    );
    assert!(!error.contains("--write"), "{error}");
}

#[test]
fn ctrl_c_while_the_archive_is_written_deletes_nothing_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let file = demo(home, "agent.sqlite", 42);
    let before = rows(&file);
    let archives = home.join("archives");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_memscope"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("HOME", home)
        .env_remove("MEMSCOPE_DATABASE_URL")
        // The prune stops once a checkpoint's rows are in the archive, until interrupted.
        .env("MEMSCOPE_FAULT_POINT", "while-archiving")
        .args([
            "--db",
            &db(&file),
            "--write",
            "checkpoints",
            "prune",
            "--yes",
            "--archive",
        ])
        .arg(archives.join("prune.jsonl"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "paused at while-archiving");
    // The partial archive is there while the prune runs.
    assert_eq!(
        std::fs::read_dir(&archives).unwrap().count(),
        1,
        "the archive being written"
    );
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(rest.contains("interrupted: nothing was deleted"), "{rest}");
    let left: Vec<_> = std::fs::read_dir(&archives).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(rows(&file), before);
}

/// The thread's latest checkpoint, as `thread` lists it.
fn latest(home: &Path, file: &Path) -> String {
    let (out, _) = run(
        memscope_on(home, &db(file)).args(["--json", "thread", THREAD]),
        0,
    );
    json(&out)["extra"]["latest"].as_str().unwrap().to_owned()
}

#[test]
fn a_checkpoint_id_is_typed_back_as_it_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let file = demo(home, "agent.sqlite", 42);
    let id = latest(home, &file);
    let chars: Vec<char> = id.chars().collect();
    let head: String = chars[..6].iter().collect();
    let tail: String = chars[chars.len() - 6..].iter().collect();
    for typed in [
        tail.clone(),
        format!("{head}…{tail}"),
        format!("{head}...{tail}"),
        tail.to_uppercase(),
    ] {
        let (out, _) = run(
            memscope_on(home, &db(&file)).args(["--json", "history", THREAD, "--leaf", &typed]),
            0,
        );
        assert_eq!(json(&out)["extra"]["checkpoint_id"], id.as_str(), "{typed}");
        let (out, _) = run(
            memscope_on(home, &db(&file)).args(["--json", "thread", THREAD, "--leaf", &typed]),
            0,
        );
        assert_eq!(json(&out)["extra"]["leaf"], id.as_str(), "{typed}");
    }
    // export writes the whole id it resolved.
    let (out, _) = run(
        memscope_on(home, &db(&file)).args(["--json", "export", THREAD, "--leaf", &tail]),
        0,
    );
    let bundle = json(&out);
    assert_eq!(
        bundle["history"]["extra"]["checkpoint_id"],
        id.as_str(),
        "{bundle}"
    );
    assert_eq!(bundle["thread"]["extra"]["leaf"], id.as_str());

    // Every id of the thread starts alike: a start fits several, listed.
    let (_, error) = run(
        memscope_on(home, &db(&file)).args(["--json", "history", THREAD, "--leaf", &head]),
        3,
    );
    let error = json(&error);
    assert_eq!(error["error"]["kind"], "ambiguous", "{error}");
    assert!(
        error["error"]["message"].as_str().unwrap().contains(&id),
        "{error}"
    );
    // An id of no checkpoint: not found, with the way to see them.
    let (_, error) = run(
        memscope_on(home, &db(&file)).args(["--json", "thread", THREAD, "--leaf", "zz9zz9"]),
        3,
    );
    let error = json(&error);
    assert_eq!(error["error"]["kind"], "not-found", "{error}");
    assert!(
        error["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("memscope thread long-chat"),
        "{error}"
    );
}

/// `thread` draws a subgraph's checkpoints under the root checkpoint whose task ran them, as the
/// TUI does, and counts every namespace's checkpoints, as the list of threads does.
#[test]
fn a_subgraph_is_listed_under_the_checkpoint_that_ran_it_and_counted_as_the_list_counts() {
    const REPORT: &str = "research-report";
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let file = demo(home, "agent.sqlite", 42);
    let (out, _) = run(
        memscope_on(home, &db(&file)).args(["--json", "conversations"]),
        0,
    );
    let listed = json(&out)["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["id"] == REPORT)
        .unwrap()["extra"]["checkpoints"]
        .as_u64()
        .unwrap();

    let (out, _) = run(
        memscope_on(home, &db(&file)).args(["--json", "thread", REPORT]),
        0,
    );
    let tree = json(&out);
    let nodes = tree["nodes"].as_array().unwrap();
    assert_eq!(nodes.len() as u64, listed, "{tree}");
    let root = tree["extra"]["subgraphs"][0]["root_checkpoint"]
        .as_str()
        .unwrap();
    let namespaces: Vec<&str> = nodes
        .iter()
        .map(|n| n["extra"]["namespace"].as_str().unwrap())
        .collect();
    let at = nodes.iter().position(|n| n["id"] == root).unwrap();
    let inner = namespaces.iter().filter(|ns| !ns.is_empty()).count();
    assert!(inner > 0, "{namespaces:?}");
    // Right after the checkpoint that ran it, all of it, and the root graph goes on after.
    assert!(
        namespaces[at + 1..=at + inner]
            .iter()
            .all(|ns| !ns.is_empty()),
        "{namespaces:?}"
    );
    assert!(namespaces[at + inner + 1..].iter().any(|ns| ns.is_empty()));

    let (text, _) = run(memscope_on(home, &db(&file)).args(["thread", REPORT]), 0);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].contains(&format!("{listed} checkpoints ({inner} in 1 subgraph)")),
        "{text}"
    );
    let heading = lines
        .iter()
        .position(|l| l.starts_with("subgraph "))
        .unwrap();
    assert!(lines[heading - 2].contains(root), "{text}");
    assert_eq!(lines[heading - 1], "", "{text}");
    assert_eq!(lines[heading + inner + 1], "", "{text}");
    let after = lines[heading + inner + 2].trim_start();
    assert!(
        after.starts_with('●') || after.starts_with('○'),
        "the root graph goes on: {text}"
    );
}
