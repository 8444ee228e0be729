//! Which of Dify's later columns and tables a conversation schema has, what memscope's queries
//! read in place of the missing ones, and which Dify behaviour follows: the one place the
//! schema eras are decided.

use std::collections::BTreeSet;

use crate::sources::adapter::Part;
use crate::sources::rewrite::{Rewrite, StandIn, StandIns};
use crate::sources::schema_eras::{EraParts, SchemaEras};
use crate::store::catalog::Catalog;

/// The parts of Dify's conversation schema that came (or went) with its releases, as the
/// database has them. memscope's own schema has Dify's regeneration threads, offload table and
/// dialogue counts, and no deleted conversations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DifySchema {
    /// `messages.parent_message_id` (Dify's migration of September 2024): regenerations form a
    /// tree and memory walks one thread of it. Without it every conversation is one line and
    /// memory takes the newest answered rows by `created_at`.
    pub regeneration_threads: bool,
    /// `conversations.is_deleted`: a deleted conversation stays in the table, marked. Dify's
    /// migration of 2026 dropped the column and the rows it marked.
    pub deleted_conversations: bool,
    /// `workflow_node_execution_offload` (Dify's migration of August 2025): node inputs,
    /// outputs and process data too large for their row live in an upload.
    pub offloaded_outputs: bool,
    /// `conversations.dialogue_count` (Dify's migration of August 2024).
    pub dialogue_count: bool,
    /// `message_agent_thoughts` with `messages.agent_based`: agent turns and their tool calls.
    pub agent_thoughts: bool,
    /// `workflow_archive_logs` (Dify's migration of January 2026): a workflow run and its node
    /// executions moved out of the database by the retention service, one row per run keyed by
    /// `workflow_run_id`. A turn whose run is gone but logged there was archived, not broken.
    pub archived_runs: bool,
    /// `messages.app_mode` (Dify's migration of October 2025): each message records the app
    /// mode it was answered in.
    pub message_app_mode: bool,
    /// `agent_runtime_sessions` (Dify's migration of May 2026, Agent V2): the Agent backend's
    /// sessions of Agent App conversations and of agent nodes' runs.
    pub agent_sessions: bool,
}

impl DifySchema {
    /// Every part: what memscope's queries are written against.
    pub const FULL: DifySchema = DifySchema {
        regeneration_threads: true,
        deleted_conversations: true,
        offloaded_outputs: true,
        dialogue_count: true,
        agent_thoughts: true,
        archived_runs: true,
        message_app_mode: true,
        agent_sessions: true,
    };

    /// The schema of a database with these parts: every part where it keeps no conversations,
    /// as no query then reads the conversation tables.
    pub fn of_database(catalog: &Catalog, parts: &BTreeSet<Part>) -> DifySchema {
        if parts.contains(&Part::Conversations) {
            DifySchema::of(catalog)
        } else {
            DifySchema::FULL
        }
    }

    /// What `info` shows of the schema of a database with these parts: nothing where it keeps
    /// no conversations.
    pub fn eras_of_database(catalog: &Catalog, parts: &BTreeSet<Part>) -> Option<SchemaEras> {
        parts
            .contains(&Part::Conversations)
            .then(|| DifySchema::of(catalog).eras())
    }

    pub fn of(catalog: &Catalog) -> DifySchema {
        DifySchema {
            regeneration_threads: catalog.has_column("messages", "parent_message_id"),
            deleted_conversations: catalog.has_column("conversations", "is_deleted"),
            offloaded_outputs: catalog.has_table("workflow_node_execution_offload"),
            dialogue_count: catalog.has_column("conversations", "dialogue_count"),
            agent_thoughts: catalog.has_table("message_agent_thoughts")
                && catalog.has_column("messages", "agent_based"),
            archived_runs: catalog.has_table("workflow_archive_logs"),
            message_app_mode: catalog.has_column("messages", "app_mode"),
            agent_sessions: catalog.has_table("agent_runtime_sessions"),
        }
    }

    /// Whether memory reads only answered rows: before regeneration threads Dify's history
    /// query kept `answer != ''` and took the newest rows by `created_at`, with no thread walk
    /// and no placeholder to pop.
    pub fn memory_skips_unanswered(self) -> bool {
        !self.regeneration_threads
    }

    /// How memscope's queries reach the database's tables: stand-ins for what it lacks.
    pub fn rewrite(self) -> Rewrite {
        let has = [
            self.regeneration_threads,
            self.deleted_conversations,
            self.dialogue_count,
            self.offloaded_outputs,
            self.message_app_mode,
            self.archived_runs,
        ];
        Rewrite::StandIns(StandIns::of_lacking(&STAND_INS, has.map(|has| !has)))
    }

    /// What `info` shows of the schema.
    pub fn eras(self) -> SchemaEras {
        SchemaEras {
            schema: "Dify",
            parts: EraParts(vec![
                ("regeneration_threads", self.regeneration_threads),
                ("deleted_conversations", self.deleted_conversations),
                ("offloaded_outputs", self.offloaded_outputs),
                ("dialogue_count", self.dialogue_count),
                ("agent_thoughts", self.agent_thoughts),
                ("archived_runs", self.archived_runs),
                ("message_app_mode", self.message_app_mode),
                ("agent_sessions", self.agent_sessions),
            ]),
            found: self.found(),
            behaviours: self.behaviours(),
        }
    }

    /// What the schema has, in words: "regeneration threads, offloaded outputs, deleted
    /// conversations marked, dialogue counts".
    pub fn found(self) -> String {
        let parts: Vec<&str> = [
            (self.regeneration_threads, "regeneration threads"),
            (self.offloaded_outputs, "offloaded outputs"),
            (self.deleted_conversations, "deleted conversations marked"),
            (self.dialogue_count, "dialogue counts"),
            (self.agent_thoughts, "agent thoughts"),
            (self.archived_runs, "archived workflow runs"),
            (self.message_app_mode, "message app modes"),
            (self.agent_sessions, "agent runtime sessions"),
        ]
        .into_iter()
        .filter_map(|(has, label)| has.then_some(label))
        .collect();
        if parts.is_empty() {
            "none of the later parts".to_owned()
        } else {
            parts.join(", ")
        }
    }

    /// Which of Dify's behaviours memscope applies, one line each.
    pub fn behaviours(self) -> Vec<&'static str> {
        let mut lines = vec![if self.regeneration_threads {
            "threads: Dify's extract_thread_messages walk over the newest rows of the memory \
             window, the newest row popped when it is the current request's placeholder"
        } else {
            "threads: none (no parent_message_id); memory takes the newest answered rows of \
             the memory window by created_at, as Dify did before regeneration threads"
        }];
        lines.push(if self.offloaded_outputs {
            "node outputs: a truncated row is read from its offloaded upload"
        } else {
            "node outputs: read from the row (no offload table)"
        });
        if self.archived_runs {
            lines.push(
                "workflow runs: a turn whose run Dify archived (workflow_archive_logs) reads as \
                 archived, not as a missing run",
            );
        }
        lines.push(if self.deleted_conversations {
            "deleted conversations: hidden as Dify hides them (--include-deleted shows them)"
        } else {
            "deleted conversations: none can be marked (no is_deleted column)"
        });
        lines
    }
}

/// Columns and tables of memscope's queries a Dify schema may lack, with what stands for them
/// (PostgreSQL text; the dialect strips casts for SQLite), in the order of
/// [`DifySchema::rewrite`]'s answers. The stand-ins are written against the aliases the queries
/// use: `m` for messages, `c` for conversations.
static STAND_INS: [StandIn; 6] = [
    // Dify's migration set the parent of every older row to UUID_NIL, which its walk links to
    // the chronologically previous row: the conversation reads as one line.
    StandIn {
        column: "m.parent_message_id::text",
        stand_in: "'00000000-0000-0000-0000-000000000000'::text",
    },
    StandIn {
        column: "c.is_deleted",
        stand_in: "false",
    },
    StandIn {
        column: "c.dialogue_count::bigint",
        stand_in: "0::bigint",
    },
    StandIn {
        column: "workflow_node_execution_offload",
        stand_in: "(SELECT NULL::uuid AS node_execution_id, NULL::text AS type, \
                   NULL::uuid AS file_id WHERE false)",
    },
    StandIn {
        column: "m.app_mode",
        stand_in: "NULL::text",
    },
    StandIn {
        column: "workflow_archive_logs",
        stand_in: "(SELECT NULL::uuid AS workflow_run_id WHERE false)",
    },
];

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
