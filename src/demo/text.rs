//! Cheap templated text: short support-chat turns for the bulk data, and long mixed content
//! (prose, code, JSON tool output, Chinese) for the histories that blow past model budgets.

use super::ids::DemoRng;

/// A cheap stand-in for provider-reported token counts (Dify's `message_tokens` and
/// `answer_tokens` come from the model provider): one token per CJK character, one per four
/// other characters. Close enough to real BPE counts for the demo's sizes to be realistic.
pub(crate) fn estimate_tokens(text: &str) -> i64 {
    let (cjk, other) = if text.is_ascii() {
        (0, text.len())
    } else {
        text.chars().fold((0, 0), |(cjk, other), c| {
            if is_cjk(c) {
                (cjk + 1, other)
            } else {
                (cjk, other + 1)
            }
        })
    };
    (cjk + other.div_ceil(4)) as i64
}

fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3000}'..='\u{303f}' // CJK punctuation
        | '\u{3040}'..='\u{30ff}' // kana
        | '\u{3400}'..='\u{4dbf}'
        | '\u{4e00}'..='\u{9fff}'
        | '\u{ac00}'..='\u{d7af}' // hangul
        | '\u{ff00}'..='\u{ffef}') // full-width forms
}

const PRODUCTS: &[&str] = &[
    "the billing dashboard",
    "the mobile app",
    "the REST API",
    "single sign-on",
    "the CSV importer",
    "webhooks",
    "the reporting module",
    "team workspaces",
];

const ASKS: &[&str] = &[
    "How do I configure",
    "Why does it fail when I use",
    "Can you explain the limits of",
    "What is the fastest way to reset",
    "Is there a way to automate",
    "I get a timeout with",
    "Which plan includes",
    "How can I audit changes to",
];

const OPENERS: &[&str] = &[
    "Sure, here is what usually helps.",
    "Good question: this trips up a lot of teams.",
    "Thanks for the details, that narrows it down.",
    "Short answer: yes, with one caveat.",
];

const STEPS: &[&str] = &[
    "Open Settings, choose Integrations and check that the token has not expired.",
    "Retry with a smaller page size; the server caps responses at 500 records.",
    "Make sure the workspace owner granted the admin scope to your account.",
    "Clear the cached session and sign in again so the new role takes effect.",
    "Check the audit log for the last change; it records who edited the setting and when.",
    "Schedule the job outside business hours to stay under the rate limit.",
    "Export the current configuration first so you can roll back if needed.",
];

const CLOSERS: &[&str] = &[
    "Let me know if the error persists and I will dig into the logs.",
    "That should be all you need.",
    "If it still fails, send me the request id from the response headers.",
];

/// A one-line support question.
pub(crate) fn short_query(rng: &mut DemoRng) -> String {
    let mut query = String::with_capacity(64);
    query.push_str(rng.pick(ASKS));
    query.push(' ');
    query.push_str(rng.pick(PRODUCTS));
    query.push('?');
    query
}

/// A support answer of two to four sentences.
pub(crate) fn short_answer(rng: &mut DemoRng) -> String {
    let mut answer = String::with_capacity(256);
    answer.push_str(rng.pick(OPENERS));
    for _ in 0..1 + rng.below(2) {
        answer.push(' ');
        answer.push_str(rng.pick(STEPS));
    }
    answer.push(' ');
    answer.push_str(rng.pick(CLOSERS));
    answer
}

const PROSE: &[&str] = &[
    "The migration plan splits the monolith along its data boundaries rather than its team boundaries, because the teams will change long before the data does.",
    "Each service owns its tables outright; cross-service reads go through published events, never through a shared schema.",
    "We measured the p99 latency of the checkout path at 840 ms, of which 610 ms is spent waiting on the inventory lock.",
    "Caching the price catalogue at the edge removes a round trip, but it makes invalidation the hardest part of the release.",
    "The rollout happens region by region, with an automatic rollback when the error budget for the day is half spent.",
    "Operators asked for one dashboard per customer journey instead of one per service, and that request shaped the metrics naming.",
    "The old batch job still runs nightly as a safety net until two full billing cycles reconcile without differences.",
];

const CJK: &[&str] = &[
    "迁移计划按照数据边界而不是团队边界来拆分单体应用，因为团队的变化总是比数据更快。",
    "每个服务完全拥有自己的数据表，跨服务读取只能通过发布的事件完成，绝不共享数据库结构。",
    "我们测得结账路径的第九十九百分位延迟为八百四十毫秒，其中六百一十毫秒花在等待库存锁上。",
    "在边缘缓存价格目录可以省去一次往返，但这会让缓存失效成为发布中最困难的部分。",
    "发布按地区逐步进行，当当天的错误预算消耗过半时会自动回滚。",
];

const FUNCTIONS: &[&str] = &[
    "reserve_stock",
    "apply_discount",
    "settle_invoice",
    "sync_catalogue",
    "replay_events",
];

/// About `sentences` sentences of English technical prose.
pub(crate) fn prose(rng: &mut DemoRng, sentences: usize) -> String {
    join_picks(rng, PROSE, sentences, " ")
}

/// About `sentences` sentences of Chinese prose.
pub(crate) fn chinese(rng: &mut DemoRng, sentences: usize) -> String {
    join_picks(rng, CJK, sentences, "")
}

fn join_picks(rng: &mut DemoRng, pool: &[&str], count: usize, separator: &str) -> String {
    let mut text = String::new();
    for index in 0..count {
        if index > 0 {
            text.push_str(separator);
        }
        text.push_str(rng.pick(pool));
    }
    text
}

/// A fenced Python block of `functions` small functions.
pub(crate) fn code_block(rng: &mut DemoRng, functions: usize) -> String {
    let mut code = String::from("```python\n");
    for index in 0..functions {
        let name = rng.pick(FUNCTIONS);
        let retries = 2 + rng.below(4);
        code.push_str(&format!(
            "def {name}_{index}(session, order_id: str, *, retries: int = {retries}) -> dict:\n    \
             for attempt in range(retries):\n        \
             row = session.execute(\"SELECT * FROM orders WHERE id = %s FOR UPDATE\", (order_id,)).one()\n        \
             if row is not None:\n            \
             return {{\"order\": row.id, \"attempt\": attempt, \"status\": row.status}}\n    \
             raise LookupError(f\"order {{order_id}} not found after {{retries}} attempts\")\n\n"
        ));
    }
    code.push_str("```");
    code
}

/// A search tool's JSON output with `hits` results, as an agent would paste it.
pub(crate) fn json_tool_output(rng: &mut DemoRng, hits: usize) -> String {
    let results: Vec<serde_json::Value> = (0..hits)
        .map(|rank| {
            serde_json::json!({
                "rank": rank + 1,
                "title": format!("Incident review #{}", 1000 + rng.below(9000)),
                "url": format!("https://wiki.example.com/incidents/{}", rng.below(100_000)),
                "score": (1000 - rank * 37) as f64 / 1000.0,
                "snippet": rng.pick(PROSE),
            })
        })
        .collect();
    serde_json::json!({ "tool": "knowledge_search", "results": results }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin_counts_a_token_per_four_chars_rounding_up() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
    }

    #[test]
    fn cjk_counts_a_token_per_character() {
        assert_eq!(estimate_tokens("迁移计划"), 4);
        assert_eq!(estimate_tokens("迁移 plan"), 2 + 2);
        assert_eq!(estimate_tokens("こんにちは"), 5);
    }

    #[test]
    fn generators_produce_their_kind_of_text() {
        let mut rng = DemoRng::new(5, 0);
        assert!(short_query(&mut rng).ends_with('?'));
        assert!(short_answer(&mut rng).len() > 40);
        assert!(chinese(&mut rng, 3).chars().any(is_cjk));
        let code = code_block(&mut rng, 2);
        assert!(code.starts_with("```python\n") && code.ends_with("```"));
        let output: serde_json::Value =
            serde_json::from_str(&json_tool_output(&mut rng, 3)).expect("valid JSON");
        assert_eq!(output["results"].as_array().map(Vec::len), Some(3));
        assert!(prose(&mut rng, 2).contains(". "));
    }
}
