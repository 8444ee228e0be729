//! The large scale: many templated support conversations, generated chunk by chunk so memory
//! stays bounded and every chunk is reproducible on its own.

use super::builder::{ConversationBuilder, Parent, app};
use crate::demo::ids::{DemoRng, base_time, seconds};
use crate::demo::text::{short_answer, short_query};
use crate::store::rows::{AppRow, Batch, MessageFileRow};

/// How much bulk data to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BulkPlan {
    pub conversations: u64,
    pub rows_per_conversation: usize,
    /// Conversations per batch: bounds memory and the size of one insert transaction.
    pub conversations_per_batch: u64,
}

impl BulkPlan {
    /// 50,000 conversations of 20 rows: 1,000,000 messages in 50 batches.
    pub const LARGE: BulkPlan = BulkPlan {
        conversations: 50_000,
        rows_per_conversation: 20,
        conversations_per_batch: 1_000,
    };

    pub const fn messages(&self) -> u64 {
        self.conversations * self.rows_per_conversation as u64
    }

    pub const fn batches(&self) -> u64 {
        let per_batch = if self.conversations_per_batch == 0 {
            1
        } else {
            self.conversations_per_batch
        };
        self.conversations.div_ceil(per_batch)
    }
}

// The issue asks for at least 1,000,000 messages over at least 50,000 conversations.
const _: () =
    assert!(BulkPlan::LARGE.messages() >= 1_000_000 && BulkPlan::LARGE.conversations >= 50_000);

/// Chunk `n` draws from stream `FIRST_STREAM + n`.
pub(crate) const FIRST_STREAM: u64 = 1_000;
const APPS_STREAM: u64 = FIRST_STREAM - 1;

/// Chance that a web turn is a regeneration of the previous answer.
const REGENERATION_CHANCE: f64 = 0.06;
/// Chance that a conversation opens with a pasted image.
const IMAGE_CHANCE: f64 = 0.02;
const SECONDS_PER_YEAR: i64 = 365 * 24 * 3600;

const CONVERSATION_NAMES: &[&str] = &[
    "Login trouble",
    "Invoice question",
    "API rate limits",
    "Export to CSV",
    "Workspace setup",
    "SSO configuration",
    "Webhook retries",
    "Plan upgrade",
];

/// Generates a [`BulkPlan`] as batches of `conversations_per_batch` conversations; the first
/// batch also carries the bulk apps. Batch `n` depends only on the seed, the tenant and `n`.
pub struct BulkGenerator {
    seed: u64,
    plan: BulkPlan,
    apps: Vec<AppRow>,
    next_chunk: u64,
}

impl BulkGenerator {
    pub fn new(seed: u64, tenant_id: &str, plan: BulkPlan) -> Self {
        let mut rng = DemoRng::new(seed, APPS_STREAM);
        let created = base_time() - seconds(SECONDS_PER_YEAR + 24 * 3600);
        let apps = [
            ("Helpdesk", "chat", Some(10)),
            ("Sales Copilot", "agent-chat", None),
            ("Docs Q&A", "chat", Some(30)),
        ]
        .into_iter()
        .map(|(name, mode, window)| app(&mut rng, tenant_id, name, mode, window, created))
        .collect();
        BulkGenerator {
            seed,
            plan,
            apps,
            next_chunk: 0,
        }
    }

    fn conversation(&self, rng: &mut DemoRng, number: u64, batch: &mut Batch) {
        let app = &self.apps[(number % self.apps.len() as u64) as usize];
        let invoke_from = match rng.below(100) {
            0..15 => "service-api",
            15..85 => "web-app",
            85..95 => "explore",
            _ => "debugger",
        };
        // The service API forces every parent to UUID_NIL.
        let service_api = invoke_from == "service-api";
        let started = base_time() - seconds(rng.between(3600, SECONDS_PER_YEAR));
        let name = format!("{} #{}", rng.pick(CONVERSATION_NAMES), number + 1);
        let mut conversation = ConversationBuilder::new(rng, app, &name, invoke_from, started);
        let opening = if service_api {
            Parent::Nil
        } else {
            Parent::Root
        };
        let (query, answer) = (short_query(rng), short_answer(rng));
        let mut latest = conversation.turn(rng, opening, query, answer, 0);
        for _ in 1..self.plan.rows_per_conversation {
            let gap = rng.between(20, 900);
            let regenerate = !service_api && rng.chance(REGENERATION_CHANCE);
            let (parent, query) = if service_api {
                (Parent::Nil, short_query(rng))
            } else if regenerate {
                let parent = conversation
                    .history_parent(latest)
                    .map_or(Parent::Root, Parent::Row);
                (parent, conversation.row(latest).query.clone())
            } else {
                (Parent::Row(latest), short_query(rng))
            };
            let answer = short_answer(rng);
            latest = conversation.turn(rng, parent, query, answer, gap);
        }
        if rng.chance(IMAGE_CHANCE) {
            let opening = conversation.row(0);
            batch.message_files.push(MessageFileRow {
                id: rng.uuid(),
                message_id: opening.id.clone(),
                file_type: "image".to_owned(),
                transfer_method: "remote_url".to_owned(),
                url: Some(format!(
                    "https://images.example.com/screenshots/{}.png",
                    rng.uuid()
                )),
                belongs_to: Some("user".to_owned()),
                upload_file_id: None,
                created_at: opening.created_at,
            });
        }
        conversation.finish(batch);
    }
}

impl Iterator for BulkGenerator {
    type Item = Batch;

    fn next(&mut self) -> Option<Batch> {
        let per_batch = self.plan.conversations_per_batch.max(1);
        let first = self.next_chunk * per_batch;
        if first >= self.plan.conversations {
            return None;
        }
        let last = (first + per_batch).min(self.plan.conversations);
        // Time-ordered ids: the database appends each batch to its indexes.
        let mut rng = DemoRng::with_ordered_ids(self.seed, FIRST_STREAM + self.next_chunk);
        let mut batch = Batch::default();
        if self.next_chunk == 0 {
            batch.apps = self.apps.clone();
        }
        let conversations = (last - first) as usize;
        batch.conversations.reserve(conversations);
        batch
            .messages
            .reserve(conversations * self.plan.rows_per_conversation);
        for number in first..last {
            self.conversation(&mut rng, number, &mut batch);
        }
        self.next_chunk += 1;
        Some(batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL_PLAN: BulkPlan = BulkPlan {
        conversations: 25,
        rows_per_conversation: 7,
        conversations_per_batch: 10,
    };

    fn all_batches(plan: BulkPlan) -> Vec<Batch> {
        BulkGenerator::new(3, "tenant", plan).collect()
    }

    #[test]
    fn count_formulas() {
        assert_eq!(BulkPlan::LARGE.messages(), 1_000_000);
        assert_eq!(BulkPlan::LARGE.batches(), 50);
        let uneven = BulkPlan {
            conversations: 11,
            rows_per_conversation: 3,
            conversations_per_batch: 5,
        };
        assert_eq!((uneven.messages(), uneven.batches()), (33, 3));
        let degenerate = BulkPlan {
            conversations_per_batch: 0,
            ..uneven
        };
        assert_eq!(degenerate.batches(), 11);
    }

    #[test]
    fn counts_follow_the_plan() {
        let batches = all_batches(SMALL_PLAN);
        assert_eq!(batches.len() as u64, SMALL_PLAN.batches());
        let conversations: Vec<usize> = batches.iter().map(|b| b.conversations.len()).collect();
        assert_eq!(conversations, [10, 10, 5]);
        let messages: usize = batches.iter().map(|b| b.messages.len()).sum();
        assert_eq!(messages as u64, SMALL_PLAN.messages());
        assert_eq!(batches[0].apps.len(), 3);
        assert!(batches[1..].iter().all(|b| b.apps.is_empty()));
        for conversation in batches.iter().flat_map(|b| &b.conversations) {
            assert_eq!(conversation.dialogue_count, 7);
        }
    }

    #[test]
    fn chunks_are_reproducible_and_distinct() {
        let first = all_batches(SMALL_PLAN);
        assert_eq!(first, all_batches(SMALL_PLAN));
        assert_ne!(
            first[0].messages[0].message.id,
            first[1].messages[0].message.id
        );
    }

    #[test]
    fn service_api_rows_are_nil_chains_and_web_rows_branch() {
        let plan = BulkPlan {
            conversations: 200,
            rows_per_conversation: 10,
            conversations_per_batch: 200,
        };
        let batch = all_batches(plan).remove(0);
        let nil = crate::memory::model::UUID_NIL;
        for row in batch.messages.iter().map(|row| &row.message) {
            let api = row.invoke_from.as_deref() == Some("service-api");
            assert_eq!(
                api,
                row.parent_message_id.as_deref() == Some(nil),
                "{row:?}"
            );
        }
        let roots = batch
            .messages
            .iter()
            .filter(|row| row.message.parent_message_id.is_none())
            .count();
        let web = batch
            .conversations
            .iter()
            .filter(|c| c.invoke_from.as_deref() != Some("service-api"))
            .count();
        assert!(
            roots > web,
            "some first turns are regenerated: {roots} roots, {web} web"
        );
    }
}
