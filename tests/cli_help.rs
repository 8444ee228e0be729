//! What users read: every argument of every subcommand explains itself, and no help text, README
//! line, TUI string or command output names things by the project's internal words (seed
//! numbers, design letters, issue numbers outside the README's explanations, paths outside the
//! repository, Rust enum names).

mod cli_support;

#[macro_use]
mod tui_support;

use std::path::Path;

use assert_cmd::Command;
use clap::CommandFactory;
use cli_support::memscope;
use crossterm::event::KeyCode;
use memscope::cli::args::Cli;
use memscope::inspect::nodes::ContextSource;
use memscope::memory::thread_view::ThreadMode;
use memscope::tui::action::Action;
use memscope::tui::keymap::Keymap;
use memscope::tui::state::{AppState, Overlay};

/// Every subcommand with its path (`memscope mb create`), the top level first.
fn commands() -> Vec<(String, clap::Command)> {
    fn walk(path: String, command: &clap::Command, out: &mut Vec<(String, clap::Command)>) {
        out.push((path.clone(), command.clone()));
        for sub in command.get_subcommands() {
            walk(format!("{path} {}", sub.get_name()), sub, out);
        }
    }
    let mut root = Cli::command();
    root.build();
    let mut out = Vec::new();
    walk("memscope".to_owned(), &root, &mut out);
    out
}

#[test]
fn every_argument_of_every_subcommand_has_a_help_text() {
    let mut missing = Vec::new();
    for (path, command) in commands() {
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            if arg.get_help().is_none() && arg.get_long_help().is_none() {
                missing.push(format!("{path}: {id}"));
            }
        }
        if path != "memscope" && command.get_about().is_none() {
            missing.push(format!("{path}: the command itself"));
        }
    }
    assert!(
        missing.is_empty(),
        "arguments without help:\n{}",
        missing.join("\n")
    );
}

/// Internal words a text must not contain, with where they are; `readme` allows issue numbers
/// where a line cites a Dify or Langflow issue.
fn internal_references(what: &str, text: &str, readme: bool) -> Vec<String> {
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let lower = line.to_lowercase();
        let mut hit = |why: &str| found.push(format!("{what}:{}: {why}: {line}", number + 1));
        for word in [
            "seed 0",
            "seed 1",
            "(the seed)",
            "the seed's",
            "fixes the seed",
        ] {
            if lower.contains(word) {
                hit("a seed number");
            }
        }
        for design in ["design a", "design b", "design-a", "design-b"] {
            if let Some(at) = lower.find(design) {
                let after = lower[at + design.len()..].chars().next();
                if after.is_none_or(|c| !c.is_alphanumeric()) {
                    hit("a design letter");
                }
            }
        }
        if lower.contains("as shipped") {
            hit("\"as shipped\"");
        }
        if line.contains("../shared") {
            hit("a path outside the repository");
        }
        for name in [
            "EmbeddedDefault",
            "DifyDefault",
            "ConfigFile)",
            "(Dify,",
            "(Fixed,",
            "(Tree,",
            "ThreadMode",
            "WindowOrigin",
            "Some(",
        ] {
            if line.contains(name) {
                hit("a Rust enum name");
            }
        }
        let bytes = line.as_bytes();
        for (at, _) in line.match_indices('#') {
            let digits = bytes[at + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if digits < 4 {
                continue;
            }
            let before = lower[..at].trim_end();
            let cited = readme
                && (before.ends_with("issue")
                    || before.ends_with("issues")
                    || before.ends_with(',')
                        && lower[..at].rfind("issue").is_some_and(|i| at - i < 40));
            if !cited {
                hit("an issue number");
            }
        }
    }
    found
}

#[test]
fn the_detector_catches_what_it_looks_for() {
    for text in [
        "Chat memories (seed 004)",
        "Design B: outputs",
        "source A / design A / prompts",
        "Langflow as shipped",
        "bug #39031 included",
        "see ../shared/reference/x.md",
        "database (from EmbeddedDefault)",
        "thread (Tree, window 10)",
    ] {
        assert!(!internal_references("t", text, false).is_empty(), "{text}");
    }
    assert!(internal_references("t", "(Dify issue #39031)", true).is_empty());
    assert!(internal_references("t", "(Dify issues #39031, #18827)", true).is_empty());
    assert!(!internal_references("t", "PR #39032", true).is_empty());
    assert!(internal_references("t", "designated", false).is_empty());
}

#[test]
fn help_texts_name_things_for_the_user() {
    let mut found = Vec::new();
    for (path, mut command) in commands() {
        let help = command.render_long_help().to_string();
        found.extend(internal_references(&format!("{path} --help"), &help, false));
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_readme_names_things_for_the_user() {
    let mut found = Vec::new();
    for page in ["README.md", "benches/README.md"] {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(page)).unwrap();
        found.extend(internal_references(page, &text, true));
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// Every line of the help popup, page by page, at a wide and a small terminal.
fn help_popup_text() -> String {
    let mut text = String::new();
    for (width, height) in tui_support::ALL_SIZES {
        let mut state = AppState::new(
            Keymap::default_keys(),
            tui_support::settings(),
            "sqlite:///data/memscope.db".to_owned(),
            false,
        );
        tui_support::key(&mut state, '?');
        assert_eq!(state.overlay, Overlay::Help);
        for _ in 0..20 {
            text.push_str(&tui_support::screen_text(&state, width, height));
            tui_support::code(&mut state, KeyCode::PageDown);
        }
    }
    text
}

#[test]
fn tui_strings_name_things_for_the_user() {
    let mut text = help_popup_text();
    // The tree's markers have a legend, and the thread key names its three modes.
    for legend in [
        "Markers",
        "only in Dify's extraction",
        "only on the true tree path",
        "regeneration: sibling 1 of 2",
        "thread: Dify / tree path / parent fix",
    ] {
        assert!(text.contains(legend), "the help lacks {legend:?}");
    }
    for action in Action::ALL {
        text.push_str(action.default_description());
        text.push('\n');
    }
    for mode in [ThreadMode::Dify, ThreadMode::Fixed, ThreadMode::Tree] {
        text.push_str(mode.describe());
        text.push('\n');
    }
    for source in [
        ContextSource::Files,
        ContextSource::Outputs,
        ContextSource::Prompts,
    ] {
        text.push_str(source.describe());
        text.push('\n');
    }
    for binding in Keymap::default_keys().bindings() {
        text.push_str(&binding.description);
        text.push('\n');
    }
    let found = internal_references("TUI", &text, false);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

fn stdout(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn command_output_shows_no_rust_enum_names() {
    let home = tempfile::tempdir().unwrap();
    let list = stdout(memscope(home.path()).args(["conversations", "--json"]));
    let rows: serde_json::Value = serde_json::from_str(&list).unwrap();
    let id = rows["conversations"][0]["id"]
        .as_str()
        .or_else(|| rows[0]["id"].as_str())
        .expect("the demo lists conversations")
        .to_owned();
    let mut found = Vec::new();
    for args in [
        vec!["info"],
        vec!["history", id.as_str()],
        vec!["thread", id.as_str()],
        vec!["thread", id.as_str(), "--mode", "tree"],
        vec!["thread", id.as_str(), "--mode", "fixed"],
    ] {
        let text = stdout(memscope(home.path()).args(&args));
        if args == ["info"] {
            assert!(
                text.contains("memscope-tui.log"),
                "info names the log:\n{text}"
            );
            assert!(text.contains(env!("CARGO_PKG_VERSION")), "{text}");
        }
        found.extend(internal_references(&args.join(" "), &text, false));
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn completions_cover_every_command_for_each_shell() {
    let home = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = stdout(memscope(home.path()).args(["completions", shell]));
        for command in ["chat-memory", "node-context", "completions", "man"] {
            assert!(script.contains(command), "{shell} lacks {command}");
        }
        let found = internal_references(&format!("completions {shell}"), &script, false);
        assert!(found.is_empty(), "{}", found.join("\n"));
    }
    // A shell clap does not know is a usage error, with the known ones named.
    let output = memscope(home.path())
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("bash"));
}

#[test]
fn the_manual_names_every_command_and_nothing_internal() {
    let home = tempfile::tempdir().unwrap();
    let page = stdout(memscope(home.path()).arg("man"));
    assert!(
        page.starts_with(".ie") || page.contains(".TH memscope"),
        "{page}"
    );
    for command in ["chat\\-memory", "node\\-context", "watch", "completions"] {
        assert!(page.contains(command), "the page lacks {command}");
    }
    let found = internal_references("memscope man", &page, false);
    assert!(found.is_empty(), "{}", found.join("\n"));

    let dir = home.path().join("man1");
    stdout(memscope(home.path()).args(["man", "--dir"]).arg(&dir));
    for page in [
        "memscope.1",
        "memscope-mb.1",
        "memscope-mb-sync.1",
        "memscope-trim-apply.1",
    ] {
        let text =
            std::fs::read_to_string(dir.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        let found = internal_references(page, &text, false);
        assert!(found.is_empty(), "{}", found.join("\n"));
    }
}

#[test]
fn global_options_have_their_own_heading_in_every_commands_help() {
    let home = tempfile::tempdir().unwrap();
    for args in [
        vec!["conversations", "--help"],
        vec!["mb", "sync", "--help"],
        vec!["--help"],
    ] {
        let help = stdout(memscope(home.path()).args(&args));
        let (own, global) = help
            .split_once("Global options:")
            .unwrap_or_else(|| panic!("{args:?}: no heading of its own:\n{help}"));
        for flag in ["--db", "--config", "--dify-env", "--write", "--json"] {
            assert!(
                !own.contains(flag),
                "{args:?}: {flag} among the command's own:\n{help}"
            );
            assert!(global.contains(flag), "{args:?}: {flag} missing:\n{help}");
        }
        assert!(
            global.contains("mysql://"),
            "{args:?}: --db names MySQL:\n{help}"
        );
    }
}

#[test]
fn the_opening_lines_of_help_name_every_source_it_reads() {
    let home = tempfile::tempdir().unwrap();
    let help = stdout(memscope(home.path()).arg("--help"));
    let opening: String = help.lines().take(4).collect::<Vec<_>>().join("\n");
    for source in [
        "Dify",
        "PostgreSQL",
        "MySQL",
        "MariaDB",
        "Langflow",
        "LangGraph",
        "demo",
    ] {
        assert!(
            opening.contains(source),
            "the opening lines of --help do not name {source}:\n{opening}"
        );
    }
}
