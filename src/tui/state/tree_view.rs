//! What the conversation's tree pane draws from, computed when it changes rather than per frame
//! or key: the visible lines with each node's line, and each node's thread mark. A frame then
//! costs the lines on screen, and a key a few steps, however long the conversation.

use crate::memory::thread_view::ThreadNodes;
use crate::memory::tree::{MessageTree, NodeIndex, VisibleNode};

/// The tree's visible lines (collapsed subtrees left out), and where each node is among them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeLines {
    lines: Vec<VisibleNode>,
    /// Line of each node; [`HIDDEN`] under a collapsed ancestor.
    line_of: Vec<u32>,
}

const HIDDEN: u32 = u32::MAX;

impl TreeLines {
    pub fn build(tree: &MessageTree, is_collapsed: impl Fn(NodeIndex) -> bool) -> TreeLines {
        let lines: Vec<VisibleNode> = tree.visible(is_collapsed).collect();
        let mut line_of = vec![HIDDEN; tree.len()];
        for (position, line) in lines.iter().enumerate() {
            line_of[line.node] = position as u32;
        }
        TreeLines { lines, line_of }
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    pub fn get(&self, line: usize) -> Option<&VisibleNode> {
        self.lines.get(line)
    }

    /// At most `count` lines from `first` on.
    pub fn window(&self, first: usize, count: usize) -> &[VisibleNode] {
        let start = first.min(self.lines.len());
        let end = start.saturating_add(count).min(self.lines.len());
        &self.lines[start..end]
    }

    /// The node's line, `None` while a collapsed ancestor hides it.
    pub fn line_of(&self, node: NodeIndex) -> Option<usize> {
        match self.line_of.get(node) {
            Some(&HIDDEN) | None => None,
            Some(&line) => Some(line as usize),
        }
    }
}

/// How the tree pane marks a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// On Dify's extraction but not on the tree path.
    DifyOnly,
    /// On the tree path but not on Dify's extraction.
    TreeOnly,
    /// On the marked thread.
    Thread,
    None,
}

const EXTRACTED: u8 = 1;
const TREE_PATH: u8 = 2;
const THREAD: u8 = 4;

/// Each node's place in the thread: one byte a node, filled from the thread's nodes alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadMarks {
    flags: Vec<u8>,
    /// Whether the divergence (D and T) is marked: not while the demo walks.
    divergence: bool,
}

impl ThreadMarks {
    /// The marks of a finished thread view: its thread, and where extraction and path differ.
    pub fn of_thread(node_count: usize, thread: &ThreadNodes) -> ThreadMarks {
        let mut marks = ThreadMarks {
            flags: vec![0; node_count],
            divergence: true,
        };
        marks.set(&thread.extracted, EXTRACTED);
        marks.set(&thread.tree_path, TREE_PATH);
        marks.set(thread.thread(), THREAD);
        marks
    }

    /// The marks of the demo's walk so far: its kept rows, no divergence.
    pub fn of_walk(node_count: usize, kept: impl IntoIterator<Item = NodeIndex>) -> ThreadMarks {
        let mut marks = ThreadMarks {
            flags: vec![0; node_count],
            divergence: false,
        };
        for node in kept {
            marks.flags[node] |= THREAD;
        }
        marks
    }

    fn set(&mut self, nodes: &[NodeIndex], flag: u8) {
        for &node in nodes {
            self.flags[node] |= flag;
        }
    }

    pub fn on_thread(&self, node: NodeIndex) -> bool {
        self.flag(node) & THREAD != 0
    }

    pub fn mark(&self, node: NodeIndex) -> Mark {
        let flags = self.flag(node);
        let divergent = |flag: u8| self.divergence && flags & (EXTRACTED | TREE_PATH) == flag;
        if divergent(EXTRACTED) {
            Mark::DifyOnly
        } else if divergent(TREE_PATH) {
            Mark::TreeOnly
        } else if flags & THREAD != 0 {
            Mark::Thread
        } else {
            Mark::None
        }
    }

    fn flag(&self, node: NodeIndex) -> u8 {
        self.flags.get(node).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::thread::ThreadComparison;
    use crate::memory::thread::tests::links;
    use crate::memory::thread_view::ThreadMode;

    #[test]
    fn lines_skip_collapsed_subtrees_and_know_each_node_s_line() {
        // 0 ─ 1 ─ 3, 0 ─ 2
        let tree = MessageTree::build(&links("a<-- b<-a c<-a d<-b"));
        let all = TreeLines::build(&tree, |_| false);
        assert_eq!(all.len(), 4);
        assert_eq!(all.line_of(3), Some(2), "d follows b depth first");
        assert_eq!(all.window(3, 10).len(), 1);
        assert!(all.window(9, 10).is_empty());
        let folded = TreeLines::build(&tree, |node| node == 1);
        assert_eq!(folded.len(), 3);
        assert_eq!(folded.line_of(3), None, "hidden under the collapsed b");
        assert_eq!(folded.get(2).map(|l| l.node), Some(2));
    }

    #[test]
    fn marks_tell_the_thread_and_the_divergence_apart() {
        let thread = ThreadNodes {
            mode: ThreadMode::Dify,
            leaf: Some(3),
            window: 500,
            extracted: vec![0, 2],
            tree_path: vec![0, 1, 3],
            comparison: ThreadComparison::Same,
        };
        let marks = ThreadMarks::of_thread(5, &thread);
        assert_eq!(marks.mark(0), Mark::Thread);
        assert_eq!(marks.mark(2), Mark::DifyOnly);
        assert_eq!(marks.mark(1), Mark::TreeOnly);
        assert_eq!(marks.mark(4), Mark::None);
        assert!(marks.on_thread(2) && !marks.on_thread(1));
        let walk = ThreadMarks::of_walk(5, [1]);
        assert_eq!(walk.mark(1), Mark::Thread);
        assert_eq!(walk.mark(0), Mark::None, "no divergence while walking");
    }
}
