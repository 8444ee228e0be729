//! The session view on a database LangGraph wrote: each thread opens at its latest checkpoint
//! with the messages LangGraph's `get_state` returns, in its order, and the budget panel cuts
//! where `history` (LangGraph's recommended trim) cuts, the system message kept above the cut.

use std::process::Command;

use memscope::inspect::sessions::open_conversation;
use memscope::inspect::token_counter;
use memscope::memory::budget_view::BudgetSettings;
use memscope::memory::context_windows::ContextWindow;
use memscope::memory::history::HistoryOptions;
use memscope::memory::tokens::CountCache;
use memscope::sources::opened::ConversationKey;
use memscope::store::{Access, Store};
use serde_json::Value;

/// A budget small enough that the agent's threads are cut.
const BUDGET: &str = "60";

fn history(url: &str, thread: &str) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_memscope"))
        .args([
            "--json",
            "--db",
            url,
            "history",
            thread,
            "--max-tokens",
            BUDGET,
        ])
        .args([
            "--model",
            "gpt-4o",
            "--counter",
            "openai",
            "--encoding",
            "o200k_base",
        ])
        .env_remove("LANGGRAPH_AES_KEY")
        .output()
        .expect("memscope runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Every thread but the encrypted one (its key is not given to this process).
pub fn compare_sessions(url: &str, oracle: &Value, encrypted_thread: &str) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = Store::open(url, Access::ReadOnly).await.unwrap();
        let settings = BudgetSettings {
            counter: token_counter("gpt-4o", "openai", Some("o200k_base")).unwrap(),
            max_tokens: BUDGET.parse().unwrap(),
            model: "gpt-4o".to_owned(),
            context_window: ContextWindow::of("gpt-4o", &Default::default()),
            options: HistoryOptions::default(),
        };
        let mut cut_somewhere = false;
        for (thread_id, expected) in oracle["threads"].as_object().unwrap() {
            if thread_id == encrypted_thread {
                continue;
            }
            let key = ConversationKey::new(thread_id.clone());
            let view = open_conversation(&store, &key, &settings).await.unwrap();
            let state = &expected["state"];
            assert!(
                view.heading
                    .contains(state["checkpoint_id"].as_str().unwrap()),
                "{}",
                view.heading
            );
            let shown: Vec<Value> = view
                .messages
                .iter()
                .map(|m| Value::from(m.message.id.clone()))
                .collect();
            let langgraph: Vec<Value> = state["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["id"].clone())
                .collect();
            assert_eq!(shown, langgraph, "{thread_id}: the latest state's messages");

            let budget = view
                .memory
                .fed(None, &settings, &mut CountCache::default())
                .unwrap();
            let sent: Vec<bool> = (0..budget.view.history.messages.len())
                .map(|i| i >= budget.view.dropped() || budget.kept_above_cut == Some(i))
                .collect();
            let cli = history(url, thread_id);
            let kept: Vec<bool> = cli["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["kept"].as_bool().unwrap())
                .collect();
            assert_eq!(sent, kept, "{thread_id}: the cut is history's");
            assert_eq!(
                budget.view.pruned.tokens_after,
                cli["tokens_after"].as_u64().unwrap(),
                "{thread_id}"
            );
            cut_somewhere |= kept.contains(&false);
        }
        assert!(cut_somewhere, "a budget of {BUDGET} cuts some thread");
        store.close().await;
    });
}
