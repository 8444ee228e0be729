use std::collections::BTreeMap;

use super::*;
use crate::sources::langgraph::decode::checkpoint::Checkpoint;
use crate::sources::langgraph::decode::decode_typed;
use crate::sources::langgraph::decode::tree::{CheckpointRow, CheckpointTree, TaskRow};

fn trees(story: &LangGraphStory) -> BTreeMap<String, CheckpointTree> {
    let mut rows: BTreeMap<String, (Vec<CheckpointRow>, Vec<TaskRow>)> = BTreeMap::new();
    for c in &story.rows.checkpoints {
        rows.entry(c.thread_id.clone())
            .or_default()
            .0
            .push(CheckpointRow {
                checkpoint_ns: c.checkpoint_ns.clone(),
                checkpoint_id: c.checkpoint_id.clone(),
                parent_checkpoint_id: c.parent_checkpoint_id.clone(),
                metadata: serde_json::from_slice(&c.metadata).unwrap(),
            });
    }
    for w in &story.rows.writes {
        rows.entry(w.thread_id.clone())
            .or_default()
            .1
            .push(TaskRow {
                checkpoint_ns: w.checkpoint_ns.clone(),
                checkpoint_id: w.checkpoint_id.clone(),
                task_path: w.task_path.clone(),
            });
    }
    rows.into_iter()
        .map(|(thread, (rows, tasks))| (thread, CheckpointTree::build(&rows, &tasks)))
        .collect()
}

fn latest_messages(story: &LangGraphStory, tree: &CheckpointTree) -> Vec<String> {
    let latest = &tree.latest().unwrap().id;
    let row = story
        .rows
        .checkpoints
        .iter()
        .find(|c| &c.checkpoint_id == latest)
        .unwrap();
    let decoded = decode_typed("msgpack", &row.checkpoint, None).unwrap();
    assert!(decoded.warnings.is_empty(), "{:?}", decoded.warnings);
    let (messages, unread) = Checkpoint::from_value(&decoded.value).unwrap().messages();
    assert!(unread.is_empty(), "{unread:?}");
    messages.iter().map(|m| m.kind.clone()).collect()
}

#[test]
fn the_story_is_the_same_for_a_seed_and_tells_each_part() {
    let story = langgraph_story(42);
    let again = langgraph_story(42);
    assert_eq!(story.rows.checkpoints, again.rows.checkpoints);
    assert_eq!(story.rows.writes, again.rows.writes);

    let trees = trees(&story);
    let ids: Vec<&str> = trees.keys().map(String::as_str).collect();
    assert_eq!(
        ids,
        [
            "long-chat",
            "notes-window",
            "research-report",
            "trip-rewind",
            "weather-agent"
        ]
    );
    for (thread, tree) in &trees {
        assert!(
            tree.root.anomalies().is_empty(),
            "{thread}: {:?}",
            tree.root.anomalies()
        );
    }

    // The agent called its tool and each step names the node that wrote it.
    let agent = &trees["weather-agent"];
    assert_eq!(
        latest_messages(&story, agent),
        [
            "system", "human", "ai", "tool", "ai", "human", "ai", "tool", "ai"
        ]
    );
    let nodes: Vec<&str> = agent
        .root
        .checkpoints
        .iter()
        .flat_map(|c| c.nodes.iter().map(String::as_str))
        .collect();
    assert_eq!(nodes[..4], ["__start__", "agent", "tools", "agent"]);

    // Time travel made a branch; the operator's edit is the latest checkpoint.
    let trip = &trees["trip-rewind"];
    assert_eq!(trip.root.tree.leaves().count(), 2);
    assert_eq!(trip.latest().unwrap().source.as_deref(), Some("update"));
    assert_eq!(
        latest_messages(&story, trip),
        ["human", "ai", "human", "ai"]
    );

    // The forget node keeps the newest four.
    assert_eq!(
        latest_messages(&story, &trees["notes-window"]).len(),
        NOTES_KEPT
    );

    // The subgraph's namespace hangs on the step that ran it.
    let report = &trees["research-report"];
    assert_eq!(report.subgraphs.len(), 1);
    let attached = report.subgraphs[0].root_checkpoint.as_deref().unwrap();
    assert_eq!(report.subgraphs_of(attached).count(), 1);
    assert!(report.subgraphs[0].name.starts_with("researcher:"));

    // The long thread stores its whole history at every step.
    let long = &trees["long-chat"];
    assert_eq!(long.root.checkpoints.len(), 3 * LONG_TURNS);
    let bytes: usize = story
        .rows
        .checkpoints
        .iter()
        .filter(|c| c.thread_id == "long-chat")
        .map(|c| c.checkpoint.len())
        .sum();
    let last = story
        .rows
        .checkpoints
        .iter()
        .filter(|c| c.thread_id == "long-chat")
        .map(|c| c.checkpoint.len())
        .max()
        .unwrap();
    // Far more than one copy of the history: roughly half a copy per checkpoint.
    assert!(
        bytes > last * long.root.checkpoints.len() / 3,
        "{bytes} {last}"
    );
}
