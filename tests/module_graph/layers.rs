//! The layers ARCHITECTURE.md draws, from the bottom: `format.rs`; `memory/`; `store/`,
//! `kb/`, `storage/` and `config/` (IO and settings), with what every demo story is written
//! with (`demo/chapter.rs`, `ids.rs`, `text.rs`, `files.rs`); `sources/`; `sync/`, `demo/`
//! (the registry of the stories, each in its source's folder) and `summarize/`; `inspect/`;
//! `cli/` and `tui/`, which never import each other; then the crate root and the binary. A
//! file imports only files of its own module or of a lower layer; modules of one layer may
//! import each other (the circle check keeps them apart).
//!
//! The imports that still go up are listed in [`KNOWN`], each with why, so that a new one
//! fails and a fixed one must be taken off the list.

use std::collections::{BTreeMap, BTreeSet};

/// Each top-level module of `src/` and its layer, lowest first.
const LAYERS: &[(&str, u8)] = &[
    ("format", 0),
    ("memory", 1),
    ("store", 2),
    ("kb", 2),
    ("storage", 2),
    ("config", 2),
    ("sources", 3),
    ("sync", 4),
    ("demo", 4),
    ("summarize", 4),
    ("inspect", 5),
    ("cli", 6),
    ("tui", 6),
    ("lib", 7),
];

/// Files whose layer is not their module's: what every source's demo story is written with,
/// below the sources whose folders hold the stories.
const FILE_LAYERS: &[(&str, u8)] = &[
    ("src/demo/chapter.rs", 2),
    ("src/demo/files.rs", 2),
    ("src/demo/ids.rs", 2),
    ("src/demo/text.rs", 2),
];

/// Imports that break the layers today, as (importing file, imported file): the ratchet.
const KNOWN: &[(&str, &str)] = &[
    // The command line starts the terminal UI (bare `memscope`, `open ID`) and `info` names
    // its log file: the binary's entry point should choose between the two front ends.
    ("src/cli/commands/info.rs", "src/tui/mod.rs"),
    ("src/cli/mod.rs", "src/tui/mod.rs"),
    // Langflow's ingestion is a memory-base sync job done Langflow's way: its steps report
    // through the syncer's job types, which the syncer also calls.
    ("src/sources/langflow/sync.rs", "src/sync/error.rs"),
    ("src/sources/langflow/sync.rs", "src/sync/job.rs"),
    ("src/sources/langflow/sync.rs", "src/sync/syncer.rs"),
    // Opening a database asks the sources' registry what each source probes and which source
    // made it, and keeps that source (and what it says of its schema eras, for `info`).
    ("src/store/profile.rs", "src/sources/adapter.rs"),
    ("src/store/profile.rs", "src/sources/rewrite.rs"),
    ("src/store/profile.rs", "src/sources/schema_eras.rs"),
];

/// The top-level module of a file: `src/memory/tokens/mod.rs` is `memory`, `src/lib.rs` `lib`.
fn top_module(path: &str) -> &str {
    let relative = path.strip_prefix("src/").unwrap_or(path);
    let first = relative.split('/').next().unwrap_or(relative);
    first.strip_suffix(".rs").unwrap_or(first)
}

fn layer(path: &str) -> Option<u8> {
    if let Some((_, layer)) = FILE_LAYERS.iter().find(|(file, _)| *file == path) {
        return Some(*layer);
    }
    let module = top_module(path);
    LAYERS
        .iter()
        .find(|(name, _)| *name == module)
        .map(|(_, layer)| *layer)
}

/// Test files and fixtures may reach anything their module's tests need.
fn is_test_file(path: &str) -> bool {
    path.ends_with("_tests.rs")
        || path.ends_with("/tests.rs")
        || path.ends_with("/test_support.rs")
        || path.ends_with("/fixtures.rs")
        || path.ends_with("_fixtures.rs")
}

/// Every import of `edges` that goes to a higher layer, or between `cli/` and `tui/`.
pub fn upward_imports(edges: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    for (from, targets) in edges {
        if is_test_file(from) {
            continue;
        }
        let Some(from_layer) = layer(from) else {
            continue;
        };
        for to in targets {
            let Some(to_layer) = layer(to) else {
                continue;
            };
            // Within a module every file has the module's layer, but for those of
            // `FILE_LAYERS`, which may not import their module's others.
            let (a, b) = (top_module(from), top_module(to));
            let across_front_ends = a != b && from_layer == 6 && to_layer == 6;
            if to_layer > from_layer || across_front_ends {
                found.insert((from.clone(), to.clone()));
            }
        }
    }
    found
}

/// What differs from [`KNOWN`]: new upward imports, and listed ones that are gone.
pub fn compare_with_known(found: &BTreeSet<(String, String)>) -> String {
    compare(found, KNOWN)
}

fn compare(found: &BTreeSet<(String, String)>, known: &[(&str, &str)]) -> String {
    let known: BTreeSet<(String, String)> = known
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
    let mut report = String::new();
    for (from, to) in found.difference(&known) {
        report += &format!("upward import: {from} -> {to}\n");
    }
    for (from, to) in known.difference(found) {
        report += &format!("no longer imported, take it off the list: {from} -> {to}\n");
    }
    report
}

#[test]
fn a_lower_layer_importing_a_higher_one_is_found_and_a_sibling_is_not() {
    let edges: BTreeMap<String, BTreeSet<String>> = [
        ("src/memory/a.rs", vec!["src/store/b.rs", "src/format.rs"]),
        ("src/store/b.rs", vec!["src/kb/c.rs", "src/memory/a.rs"]),
        ("src/cli/d.rs", vec!["src/tui/e.rs", "src/inspect/f.rs"]),
        ("src/memory/a_tests.rs", vec!["src/tui/e.rs"]),
    ]
    .into_iter()
    .map(|(from, to)| (from.to_owned(), to.into_iter().map(str::to_owned).collect()))
    .collect();
    let found = upward_imports(&edges);
    assert_eq!(
        found.iter().cloned().collect::<Vec<_>>(),
        [
            ("src/cli/d.rs".to_owned(), "src/tui/e.rs".to_owned()),
            ("src/memory/a.rs".to_owned(), "src/store/b.rs".to_owned()),
        ]
    );
    // A listed import that is found says nothing; one not listed, or listed and gone, says so.
    let known = [
        ("src/cli/d.rs", "src/tui/e.rs"),
        ("src/kb/gone.rs", "src/tui/e.rs"),
    ];
    assert_eq!(
        compare(&found, &known),
        "upward import: src/memory/a.rs -> src/store/b.rs\n\
         no longer imported, take it off the list: src/kb/gone.rs -> src/tui/e.rs\n"
    );
}

#[test]
fn a_file_below_its_module_may_not_import_the_module_it_is_below() {
    let edges: BTreeMap<String, BTreeSet<String>> = [
        (
            "src/demo/chapter.rs",
            vec!["src/demo/mod.rs", "src/store/rows.rs"],
        ),
        ("src/demo/text.rs", vec!["src/demo/ids.rs"]),
        (
            "src/sources/x/demo.rs",
            vec!["src/demo/chapter.rs", "src/demo/ids.rs"],
        ),
        (
            "src/demo/mod.rs",
            vec!["src/demo/files.rs", "src/sources/x/demo.rs"],
        ),
    ]
    .into_iter()
    .map(|(from, to)| (from.to_owned(), to.into_iter().map(str::to_owned).collect()))
    .collect();
    assert_eq!(
        upward_imports(&edges).into_iter().collect::<Vec<_>>(),
        [(
            "src/demo/chapter.rs".to_owned(),
            "src/demo/mod.rs".to_owned()
        )]
    );
}
