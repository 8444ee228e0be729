//! The module graph of `src/`, checked two ways: no import circles between files, and the
//! layers ARCHITECTURE.md draws, each importing only the layers below it.
//!
//! The graph (`module_graph/graph.rs`) reads every `src/**/*.rs`, finds which files each one names
//! (its `use` trees and its `a::b::c` paths), and fails naming each circle with its edges.
//!
//! A file is the module its path gives (`a/b.rs` and `a/b/mod.rs` are `a::b`, `lib.rs` is the
//! crate), or the module a `#[path = "…"] mod name;` declares (`foo_tests.rs` as `foo::tests`).
//! A path names the longest module it starts with, resolved from `crate::`, `super::` and
//! `self::`, or from a child of the current module (a `use` tree's braces open in a module it
//! names too); inside an inline `mod x { … }` block,
//! `super::` is the file's own module. Declaring a child (`mod x;`) is no edge, so a parent that
//! declares its children and re-exports their items is no circle unless a child imports it back.
//! The circles are the strongly connected components of more than one file (Tarjan).

#[path = "module_graph/graph.rs"]
mod graph;
#[path = "module_graph/layers.rs"]
mod layers;

use std::path::Path;

use graph::{graph, read_sources};

fn source_files() -> Vec<(String, String)> {
    let mut files = Vec::new();
    read_sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        "src",
        &mut files,
    );
    files
}

#[test]
fn no_import_circles_between_files() {
    let graph = graph("src", &source_files());
    assert!(
        graph.circles().is_empty(),
        "files import each other in a circle; move what they share into the lower file or a \
         small leaf module, and import siblings by their own path:\n{}",
        graph.report()
    );
}

#[test]
fn every_layer_imports_only_the_layers_below_it() {
    let graph = graph("src", &source_files());
    let found = layers::upward_imports(&graph.edges);
    let report = layers::compare_with_known(&found);
    assert!(report.is_empty(), "{report}");
}
