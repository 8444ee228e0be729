//! The real binary in a pseudo-terminal (portable-pty + vt100), each run on fresh data and
//! config directories, so the embedded demo database is created as on a first run.

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, PtySize, native_pty_system};

const ROWS: u16 = 32;
const COLS: u16 = 120;

/// How long to wait for a screen: `MEMSCOPE_E2E_WAIT_SECS`, default 60 (the first run builds the
/// demo database).
fn wait_limit() -> Duration {
    let secs = std::env::var("MEMSCOPE_E2E_WAIT_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    Duration::from_secs(secs)
}

struct Session {
    parser: Arc<Mutex<vt100::Parser>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    _dirs: tempfile::TempDir,
}

impl Session {
    fn start() -> Session {
        let dirs = tempfile::tempdir().unwrap();
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_memscope"));
        command.env("XDG_DATA_HOME", dirs.path().join("data"));
        command.env("XDG_CONFIG_HOME", dirs.path().join("config"));
        command.env("NO_COLOR", "1");
        command.env("TERM", "xterm-256color");
        command.env_remove("MEMSCOPE_DATABASE_URL");
        let child = pty.slave.spawn_command(command).unwrap();
        drop(pty.slave);
        let parser = Arc::new(Mutex::new(vt100::Parser::new(
            NonZeroU16::new(ROWS).unwrap(),
            NonZeroU16::new(COLS).unwrap(),
            0,
        )));
        let mut reader = pty.master.try_clone_reader().unwrap();
        let sink = parser.clone();
        // Drain the pty continuously, or the app blocks on a full buffer.
        std::thread::spawn(move || {
            let mut buffer = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().process(&buffer[..n]);
            }
        });
        let writer = pty.master.take_writer().unwrap();
        // The master must outlive the child; leaking it is fine in a test process.
        std::mem::forget(pty.master);
        Session {
            parser,
            writer,
            child,
            _dirs: dirs,
        }
    }

    fn contents(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    fn wait_for(&self, text: &str) {
        let deadline = Instant::now() + wait_limit();
        while Instant::now() < deadline {
            if self.contents().contains(text) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{text:?} never appeared; the screen:\n{}", self.contents());
    }

    /// Waits for one screen line holding every one of `texts`.
    fn wait_for_line(&self, texts: &[&str]) {
        let deadline = Instant::now() + wait_limit();
        while Instant::now() < deadline {
            let contents = self.contents();
            if contents
                .lines()
                .any(|line| texts.iter().all(|t| line.contains(t)))
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("no line with {texts:?}; the screen:\n{}", self.contents());
    }

    fn send(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    /// Waits for the process to exit and returns whether it succeeded.
    fn wait_exit(&mut self) -> bool {
        let deadline = Instant::now() + wait_limit();
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        panic!("memscope did not exit; the screen:\n{}", self.contents());
    }

    fn in_alternate_screen(&self) -> bool {
        self.parser.lock().unwrap().screen().alternate_screen()
    }
}

#[test]
fn starts_on_the_conversation_list() {
    let mut session = Session::start();
    session.wait_for("Conversations · page 1");
    session.wait_for("Last activity");
    // The first run's notice stands in the status line, not behind the TUI's screen.
    session.wait_for("first run: demo database created");
    assert!(session.in_alternate_screen());
    session.send("q");
    assert!(session.wait_exit());
}

#[test]
fn opens_a_conversation_switches_thread_mode_and_changes_the_budget() {
    let mut session = Session::start();
    session.wait_for("Last activity");
    session.send("\r");
    session.wait_for("thread: Dify's extraction");
    session.wait_for("tokens kept");
    session.send("t");
    session.wait_for("thread: true tree path");
    session.send("+");
    session.wait_for("max 2,250");
    session.send("q");
    assert!(session.wait_exit());
}

#[test]
fn help_then_quit_restores_the_terminal() {
    let mut session = Session::start();
    session.wait_for("Last activity");
    session.send("?");
    session.wait_for("Help: keys from [keys]");
    // The help is a popup: q does nothing behind it; ? closes it, then q quits.
    session.send("q");
    session.wait_for("close help");
    session.send("?");
    session.wait_for("? help");
    session.send("q");
    assert!(session.wait_exit(), "exit code 0");
    assert!(
        !session.in_alternate_screen(),
        "the alternate screen was left"
    );
}

#[test]
fn opens_a_node_context_of_the_demo_chatflow() {
    let mut session = Session::start();
    session.wait_for("Last activity");
    // The demo's chatflow conversation (the demo's ids are fixed).
    session.send(":conv f6d9281c-c415-4746-a331-2432019e8978\r");
    session.wait_for("Kyoto food trip ›");
    session.wait_for("tokens kept");
    session.send("o");
    session.wait_for("Research (llm)");
    session.wait_for("Write reply (llm)");
    // Start first, then the researcher: its context was offloaded and disagrees with its node memory file.
    session.send("j");
    session.wait_for("outputs from the offloaded upload");
    session.wait_for("⚠ assistant message differs");
    session.wait_for("tokens kept");
    session.send("ss");
    session.wait_for("· node memory file");
    session.send("q");
    assert!(session.wait_exit());
}

#[test]
fn syncs_a_memory_base_session_and_sees_the_finished_job() {
    let mut session = Session::start();
    session.wait_for("Last activity");
    session.send("3");
    session.wait_for("Sessions of Research notes memory");
    session.wait_for_line(&["research-ada-0001", "13/10 bot replies", "never"]);
    session.send("s");
    // The status line is cut to fit beside the database and the demo's one warning.
    session.wait_for("Research notes memory: ingest");
    session.wait_for_line(&["research-ada-0001", "0/10 bot replies"]);
    session.send("w");
    session.wait_for("Sync jobs");
    session.wait_for_line(&["research-ada-0001", "completed", "100%"]);
    // w closes the popup (an esc followed at once by q would read as alt-q).
    session.send("w");
    session.wait_for("Sessions of Research notes memory");
    session.send("q");
    assert!(session.wait_exit());
}

#[test]
fn previews_applies_and_undoes_a_chat_memory_trim() {
    let mut session = Session::start();
    session.wait_for("Last activity");
    session.send("2");
    session.wait_for("user-1042-session-7");
    // Support Chat History (user-1042) is the third memory, by label then chat id.
    session.send("jj\r");
    session.wait_for("messages 1–26 of 26");
    session.send("T");
    session.wait_for("✗ over the limit");
    session.wait_for("messages 28 → 20");
    // Fewer messages kept: the preview follows the form at once.
    session.send("jj");
    session.send("\x7f");
    session.wait_for("messages 28 → 2 ");
    session.send("\x7f15");
    session.wait_for("messages 28 → 15");
    session.send("A");
    session.wait_for("Apply this trim");
    session.send("y");
    session.wait_for("trimmed Support Chat History");
    session.wait_for("messages 1–13 of 13");
    session.send("u");
    session.wait_for("Undo the last change");
    session.send("y");
    session.wait_for("undid trim");
    session.wait_for("messages 1–26 of 26");
    session.send("q");
    assert!(session.wait_exit());
}

#[test]
fn bang_opens_this_sessions_messages_newest_first() {
    let mut session = Session::start();
    session.wait_for("Last activity");
    // The first run's footer line names the keys that explain the start-up screen.
    session.wait_for("Demo's first run: ? lists every key");
    session.send("y");
    session.wait_for("copied conversation id");
    session.send("!");
    session.wait_for("Messages, newest first");
    session.wait_for_line(&["•", "copied conversation id"]);
    session.wait_for_line(&["•", "first run: demo database created"]);
    let shown = session.contents();
    let copied = shown.find("• copied conversation id").unwrap();
    let first_run = shown.find("• first run: demo database created").unwrap();
    assert!(copied < first_run, "newest first:\n{shown}");
    assert!(
        !shown.contains("Demo's first run"),
        "once ! was pressed the footer line has done its job:\n{shown}"
    );
    session.send("\x1b");
    session.wait_for("Last activity");
    session.send("q");
    assert!(session.wait_exit());
}
