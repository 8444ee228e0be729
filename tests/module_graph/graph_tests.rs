use super::*;

fn files(sources: &[(&str, &str)]) -> Vec<(String, String)> {
    sources
        .iter()
        .map(|(path, source)| (format!("src/{path}"), (*source).to_owned()))
        .collect()
}

fn circles(sources: &[(&str, &str)]) -> Vec<Vec<String>> {
    graph("src", &files(sources)).circles()
}

fn edges(sources: &[(&str, &str)], from: &str) -> Vec<String> {
    graph("src", &files(sources)).edges[&format!("src/{from}")]
        .iter()
        .cloned()
        .collect()
}

#[test]
fn two_files_importing_each_other_are_a_circle() {
    let found = circles(&[
        ("lib.rs", "pub mod a;\npub mod b;\n"),
        ("a.rs", "use crate::b::B;\npub struct A;\n"),
        ("b.rs", "use super::a::A;\npub struct B;\n"),
    ]);
    assert_eq!(found, [["src/a.rs", "src/b.rs"]]);
    let report = graph(
        "src",
        &files(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "fn f() -> crate::b::B { todo!() }\n"),
            ("b.rs", "use crate::a;\n"),
        ]),
    )
    .report();
    assert_eq!(
        report,
        "CIRCLE: 2\n    src/a.rs -> src/b.rs\n    src/b.rs -> src/a.rs\n1 circles\n"
    );
}

#[test]
fn a_parent_that_declares_and_re_exports_its_children_is_no_circle() {
    let sources = [
        ("lib.rs", "pub mod tokens;\n"),
        (
            "tokens/mod.rs",
            "mod counter;\nmod error;\npub use counter::{Counter, count};\npub use error::Error;\n",
        ),
        (
            "tokens/counter.rs",
            "use super::error::Error;\npub struct Counter;\n",
        ),
        ("tokens/error.rs", "pub struct Error;\n"),
    ];
    assert!(circles(&sources).is_empty());
    assert_eq!(
        edges(&sources, "tokens/mod.rs"),
        ["src/tokens/counter.rs", "src/tokens/error.rs"]
    );
    // A child importing through the parent's re-export closes a circle.
    let mut through_parent = sources;
    through_parent[3] = (
        "tokens/error.rs",
        "use super::Counter;\npub struct Error;\n",
    );
    assert_eq!(
        circles(&through_parent),
        [[
            "src/tokens/counter.rs",
            "src/tokens/error.rs",
            "src/tokens/mod.rs"
        ]]
    );
}

#[test]
fn use_trees_expand_and_resolve_to_the_longest_module() {
    let sources = [
        ("lib.rs", "pub mod a;\npub mod b;\n"),
        ("a/mod.rs", "pub mod x;\npub mod y;\n"),
        ("a/x.rs", ""),
        ("a/y.rs", ""),
        (
            "b.rs",
            "use crate::a::{x::{self, Thing as Other}, y::*};\nuse std::fmt;\n",
        ),
    ];
    // The braces open in `a`, which the tree names too.
    assert_eq!(
        edges(&sources, "b.rs"),
        ["src/a/mod.rs", "src/a/x.rs", "src/a/y.rs"]
    );
    // `self::` and child-relative paths, and paths in expressions.
    let sources = [
        ("lib.rs", "pub mod a;\n"),
        (
            "a/mod.rs",
            "pub mod x;\npub mod y;\nfn f() { x::run(); self::y::Y::new(); }\n",
        ),
        ("a/x.rs", ""),
        ("a/y.rs", ""),
    ];
    assert_eq!(edges(&sources, "a/mod.rs"), ["src/a/x.rs", "src/a/y.rs"]);
}

#[test]
fn comments_and_strings_name_nothing() {
    let sources = [
        ("lib.rs", "pub mod a;\npub mod b;\n"),
        (
            "a.rs",
            "// use crate::b;\n/* crate::b::B */\nconst S: &str = \"crate::b::B\";\nconst R: &str = r#\"use crate::b;\"#;\nconst C: char = '\"';\n",
        ),
        ("b.rs", ""),
    ];
    assert!(edges(&sources, "a.rs").is_empty());
}

#[test]
fn an_inline_test_module_reaches_its_own_file_with_super() {
    let sources = [
        ("lib.rs", "pub mod a;\n"),
        ("a/mod.rs", "pub mod b;\n"),
        (
            "a/b.rs",
            "pub fn f() {}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n\nuse super::Parent;\n",
        ),
    ];
    // `super` in the block is b.rs itself; after the block it is the parent again.
    assert_eq!(edges(&sources, "a/b.rs"), ["src/a/mod.rs"]);
}

#[test]
fn a_path_attribute_file_is_the_module_it_is_declared_as() {
    let sources = [
        ("lib.rs", "pub mod a;\n"),
        ("a/mod.rs", "pub mod b;\npub mod c;\n"),
        (
            "a/b.rs",
            "#[cfg(test)]\n#[path = \"b_tests.rs\"]\npub(crate) mod tests;\n",
        ),
        ("a/b_tests.rs", "use super::*;\n"),
        ("a/c.rs", "use crate::a::b::tests::fixture;\n"),
    ];
    assert_eq!(edges(&sources, "a/b_tests.rs"), ["src/a/b.rs"]);
    assert_eq!(edges(&sources, "a/c.rs"), ["src/a/b_tests.rs"]);
    assert!(circles(&sources).is_empty());
}
