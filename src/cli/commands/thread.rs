//! `thread`: a conversation's tree with the path the model sees marked, on every source (Dify's
//! regeneration tree, LangGraph's checkpoints, a Langflow session's log as one path).

use clap::ValueEnum;

use crate::cli::args::{ThreadArgs, ThreadMode};
use crate::cli::context::Context;
use crate::cli::output::{CliResult, ExitCode, emit};
use crate::inspect::tree::{ThreadDocument, thread};
use crate::sources::conversation::{SourceOptions, TreeRequest};
use crate::store::Store;

/// Branch depths drawn as indentation; deeper lines stay at this indentation and name their
/// depth. A conversation regenerated thousands of times along one chain nests that deep, and
/// indenting every level made its output quadratic in its length (127 MB for 50,000 messages).
const MAX_INDENT_DEPTH: usize = 8;

/// Two columns a branch level, up to [`MAX_INDENT_DEPTH`]; beyond it, `│ [depth N] `.
fn indent(depth: usize) -> String {
    if depth <= MAX_INDENT_DEPTH {
        "  ".repeat(depth)
    } else {
        format!("{}│ [depth {depth}] ", "  ".repeat(MAX_INDENT_DEPTH - 1))
    }
}

fn render(document: &ThreadDocument) -> String {
    let mut out = String::new();
    for line in &document.header {
        out += line;
        out.push('\n');
    }
    if document
        .nodes
        .iter()
        .any(|node| node.depth > MAX_INDENT_DEPTH)
    {
        out += &format!(
            "branches nest deeper than {MAX_INDENT_DEPTH} levels: deeper nodes are drawn at that indentation with their depth\n"
        );
    }
    out.push('\n');
    let mut group = None;
    for node in &document.nodes {
        if node.group != group {
            // A heading opens a group; a blank line closes it where the ungrouped lines go on.
            match &node.group {
                Some(heading) => out += &format!("\n{heading}:\n"),
                None => out.push('\n'),
            }
            group = node.group.clone();
        }
        let marker = if node.on_thread { '●' } else { '○' };
        out += &format!("{}{marker} {}\n", indent(node.depth), node.text);
    }
    if !document.footer.is_empty() {
        out.push('\n');
        for line in &document.footer {
            out += line;
            out.push('\n');
        }
    }
    out
}

pub async fn run(context: &Context, args: &ThreadArgs) -> CliResult {
    let store = context.open().await?;
    let document = document(context, &store, args, context.global.json).await?;
    emit(context.global.json, &document, render)?;
    Ok(ExitCode::Ok)
}

/// What `thread` shows of a conversation (`export` bundles it too): the settings typed, and the
/// configured message limit for a source whose thread reads one.
pub(super) async fn document(
    context: &Context,
    store: &Store,
    args: &ThreadArgs,
    details: bool,
) -> CliResult<ThreadDocument> {
    Ok(thread(store, &request(context, args, details)).await?)
}

/// What `args` ask of the tree, with the configuration's message limit.
pub(super) fn request(context: &Context, args: &ThreadArgs, details: bool) -> TreeRequest {
    let mode = (args.mode != ThreadMode::Dify)
        .then(|| args.mode.to_possible_value())
        .flatten()
        .map(|value| value.get_name().to_owned());
    let options = args.session.add_to(
        SourceOptions::default()
            .with("mode", mode)
            .with("leaf", args.leaf.as_deref())
            .with("flow", args.flow.as_deref()),
    );
    TreeRequest {
        id: args.conversation.clone(),
        options,
        defaults: SourceOptions::default().with(
            "message-limit",
            Some(context.resolved.config.history.message_limit),
        ),
        details,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::document::{DOCUMENT_VERSION, DocumentHead};
    use crate::inspect::tree::ThreadNode;

    /// A chain of `turns` where every turn was regenerated once and the chain went on from the
    /// regeneration: every turn is a branch point, so the branch depth grows with the length.
    fn regenerated_chain(turns: usize) -> ThreadDocument {
        let id = |n: usize| format!("{n:08x}-0000-4000-8000-000000000000");
        let nodes = (0..2 * turns)
            .map(|n| ThreadNode {
                id: id(n),
                parent: (n >= 2).then(|| id(n - n % 2 - 1)),
                depth: n / 2,
                on_thread: n % 2 == 1,
                text: format!("{}  Q: question {}  A: answer", &id(n)[..8], n / 2),
                group: None,
                extra: Default::default(),
            })
            .collect();
        ThreadDocument {
            head: DocumentHead {
                version: DOCUMENT_VERSION,
                source: "Dify",
            },
            id: "conversation".to_owned(),
            title: Some("deep".to_owned()),
            nodes,
            thread: Vec::new(),
            extra: Default::default(),
            header: vec!["conversation conversation \"deep\"".to_owned()],
            footer: vec!["the thread is the tree path".to_owned()],
        }
    }

    #[test]
    fn deep_regeneration_chains_print_bounded_lines_in_linear_size() {
        let small = render(&regenerated_chain(500));
        let large = render(&regenerated_chain(2_000));
        let widest = large.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest < 200, "a line is {widest} columns wide");
        // Four times the nodes, at most four times the text (plus a few digits a line in the
        // longer numbers); indenting every level would make it sixteen times.
        assert!(
            large.len() <= 4 * small.len() + 4_000 * 4,
            "{} bytes for 4,000 nodes against {} for 1,000",
            large.len(),
            small.len()
        );
        assert!(
            large.contains("│ [depth 1999] "),
            "deep lines name their depth"
        );
        assert!(large.contains("branches nest deeper than"));
    }

    #[test]
    fn shallow_trees_indent_two_columns_a_level_without_labels() {
        assert_eq!(indent(0), "");
        assert_eq!(indent(3), "      ");
        assert_eq!(indent(MAX_INDENT_DEPTH).len(), 2 * MAX_INDENT_DEPTH);
        assert!(indent(MAX_INDENT_DEPTH + 1).starts_with(&"  ".repeat(MAX_INDENT_DEPTH - 1)));
        let text = render(&regenerated_chain(3));
        assert!(!text.contains("[depth"), "{text}");
        assert!(!text.contains("branches nest deeper"));
    }

    #[test]
    fn a_heading_opens_each_group_and_the_footer_closes() {
        let mut document = regenerated_chain(1);
        document.nodes[1].group = Some("subgraph tools:1 (node tools, from 1f0)".to_owned());
        let text = render(&document);
        assert_eq!(
            text,
            "conversation conversation \"deep\"\n\n\
             ○ 00000000  Q: question 0  A: answer\n\
             \nsubgraph tools:1 (node tools, from 1f0):\n\
             ● 00000001  Q: question 0  A: answer\n\
             \nthe thread is the tree path\n"
        );
        // A group between ungrouped lines: a blank line closes it before they go on.
        let mut document = regenerated_chain(2);
        document.nodes[1].group = Some("subgraph tools:1 (node tools, from 1f0)".to_owned());
        let text = render(&document);
        assert!(
            text.contains(
                "○ 00000000  Q: question 0  A: answer\n\
                 \nsubgraph tools:1 (node tools, from 1f0):\n\
                 ● 00000001  Q: question 0  A: answer\n\
                 \n  ○ 00000002  Q: question 1  A: answer\n"
            ),
            "{text}"
        );
    }
}
