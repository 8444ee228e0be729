//! `conversations` pages on a LangGraph checkpoint file (the demo, in SqliteSaver's layout):
//! each page continues where the cursor says, whole pages joined are the whole list, and a
//! search pages over its matches only.

mod cli_support;

use cli_support::{memscope_on, run};
use memscope::demo::write_langgraph_demo;
use serde_json::Value;

fn page(home: &std::path::Path, db: &str, args: &[&str]) -> Value {
    let (stdout, _) = run(
        memscope_on(home, db)
            .args(["--json", "conversations"])
            .args(args),
        0,
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}\n{stdout}"))
}

fn ids(page: &Value) -> Vec<String> {
    page["conversations"]
        .as_array()
        .expect("conversations")
        .iter()
        .map(|row| row["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn pages_join_up_to_the_whole_list() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("checkpoints.sqlite");
    write_langgraph_demo(&file, 7).await.unwrap();
    let db = format!("sqlite://{}", file.display());
    let home = root.path();

    let whole = page(home, &db, &[]);
    let all = ids(&whole);
    assert_eq!(all.len(), 5, "{whole}");

    let mut joined = Vec::new();
    let mut rows = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let mut args = vec!["--limit", "2"];
        if let Some(cursor) = &after {
            args.extend(["--after", cursor]);
        }
        let next = page(home, &db, &args);
        joined.extend(ids(&next));
        rows.extend(next["conversations"].as_array().unwrap().iter().cloned());
        match next["next"].as_str() {
            Some(cursor) => after = Some(cursor.to_owned()),
            None => break,
        }
    }
    assert_eq!(joined, all);
    // Every row of a later page is read as on the first: its messages counted, its time read.
    assert_eq!(&rows, whole["conversations"].as_array().unwrap());

    // A search pages over its matches: the second page starts after the first match.
    let matches = ids(&page(home, &db, &["--search", "e"]));
    assert!(matches.len() >= 2, "{matches:?}");
    let second = page(
        home,
        &db,
        &["--search", "e", "--limit", "1", "--after", "1"],
    );
    assert_eq!(ids(&second), [matches[1].clone()]);
}
