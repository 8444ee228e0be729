//! The trim-preview overlay: one history with its counts taken once, a policy form over it, and
//! the plan the form's values give (recomputed on every change, from the cached counts).

use std::sync::Arc;

use crate::inspect::nodes::ContextSource;
use crate::inspect::trim::TrimSession;
use crate::memory::model::{PromptMessage, Role};
use crate::memory::trim::{
    ChatMemoryPolicy, LimitType, PolicyStrategy, Strategy, SystemRemoval, TrimMode, TrimOptions,
    TrimPlan, system_removals,
};

use super::form::{Field, FieldValue, Form};
use super::load::LoadStatus;

/// The history a preview is about. Only chat memories are stored lists that a trim changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrimSource {
    ChatMemory {
        id: String,
        label: String,
    },
    /// The thread history the budget panel shows, at the selected message.
    Thread {
        conversation_id: String,
        leaf: String,
    },
    NodeContext {
        conversation_id: String,
        node_id: String,
        source: ContextSource,
    },
    /// What a session's or a thread's model is fed, as the budget panel shows it.
    Session {
        id: String,
    },
    /// A LangGraph thread's `messages` at one of its checkpoints.
    Checkpoint {
        thread_id: String,
        checkpoint_id: String,
    },
}

impl TrimSource {
    /// Whether a plan can be applied to it: a chat memory's list, or a LangGraph thread's
    /// messages (written as a new checkpoint).
    pub fn applies(&self) -> bool {
        matches!(
            self,
            TrimSource::ChatMemory { .. } | TrimSource::Checkpoint { .. }
        )
    }

    pub fn describe(&self) -> String {
        match self {
            TrimSource::ChatMemory { label, .. } => format!("chat memory {label}"),
            TrimSource::Thread {
                conversation_id,
                leaf,
            } => format!("thread of {} at {}", short(conversation_id), short(leaf)),
            TrimSource::NodeContext {
                node_id, source, ..
            } => format!("node {node_id}: {}", source.describe()),
            TrimSource::Session { id } => format!("history of {}", short(id)),
            TrimSource::Checkpoint {
                thread_id,
                checkpoint_id,
            } => format!("thread {thread_id} at checkpoint {checkpoint_id}"),
        }
    }

    /// What apply's refusal names (see [`crate::inspect::trim::TrimInspectError`]).
    pub fn view_kind(&self) -> &'static str {
        match self {
            TrimSource::ChatMemory { .. } => "a chat memory",
            TrimSource::Thread { .. } => "a conversation thread",
            TrimSource::NodeContext { .. } => "a node context",
            TrimSource::Session { .. } => "a session's history",
            TrimSource::Checkpoint { .. } => "a checkpoint's messages",
        }
    }
}

fn short(id: &str) -> &str {
    id.split('-').next().unwrap_or(id)
}

/// The history counted twice, once per counter the form offers: model tokens (the budget
/// panel's counter) and messages (`len`).
pub struct TrimSessions {
    pub tokens: TrimSession,
    pub messages: TrimSession,
}

impl std::fmt::Debug for TrimSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrimSessions")
            .field("messages", &self.tokens.messages.len())
            .finish_non_exhaustive()
    }
}

/// Who writes summaries: the UI labels it, and asks a remote one only on a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummarizerInfo {
    pub label: String,
    /// Offline summaries are written on every recompute; remote ones only on request.
    pub offline: bool,
    /// `[summarizer] summarize_prompt`: rules for policies that name none.
    pub default_prompt: Option<String>,
}

impl Default for SummarizerInfo {
    fn default() -> Self {
        SummarizerInfo {
            label: crate::memory::trim::EXTRACTIVE_LABEL.to_owned(),
            offline: true,
            default_prompt: None,
        }
    }
}

pub const ENGINES: [&str; 2] = ["policy", "trim_messages"];
const ROLES: [&str; 5] = ["any", "human", "ai", "system", "tool"];

/// The open overlay.
#[derive(Debug, Clone)]
pub struct TrimState {
    pub source: TrimSource,
    /// Loading the history (chat memories are read by a job).
    pub status: LoadStatus,
    pub generation: u64,
    pub sessions: Option<Arc<TrimSessions>>,
    /// The policy the form starts from: predefined messages and summary rules come from it.
    pub base_policy: ChatMemoryPolicy,
    pub form: Form,
    /// The form's plan, or why there is none.
    pub plan: Option<Result<TrimPlan, String>>,
    /// Bumped on every recompute: a remote summary is only used for the plan it was asked for.
    pub plan_generation: u64,
    /// A remote summary under way or failed.
    pub summary_status: Option<LoadStatus>,
    pub summary_generation: u64,
    /// First plan step shown.
    pub scroll: usize,
}

impl TrimState {
    /// A preview on the policy engine; `trim_messages`' fields hold LangChain's defaults under
    /// `budget`.
    pub fn new(source: TrimSource, base_policy: ChatMemoryPolicy, budget: u64) -> TrimState {
        let defaults = TrimOptions::new(i64::try_from(budget).unwrap_or(i64::MAX));
        let form = policy_form(&base_policy, "policy", &defaults);
        TrimState::with_form(source, base_policy, form)
    }

    /// A preview on `trim_messages` with `options`: a LangGraph thread's opens on the cut its
    /// budget shows.
    pub fn on_trim_messages(
        source: TrimSource,
        base_policy: ChatMemoryPolicy,
        options: &TrimOptions,
    ) -> TrimState {
        let form = policy_form(&base_policy, "trim_messages", options);
        TrimState::with_form(source, base_policy, form)
    }

    fn with_form(source: TrimSource, base_policy: ChatMemoryPolicy, form: Form) -> TrimState {
        let mut state = TrimState {
            source,
            status: LoadStatus::Loading,
            generation: 0,
            sessions: None,
            base_policy,
            form,
            plan: None,
            plan_generation: 0,
            summary_status: None,
            summary_generation: 0,
            scroll: 0,
        };
        state.sync_visibility();
        state
    }

    pub fn is_policy(&self) -> bool {
        self.form.choice("engine") == "policy"
    }

    /// Shows the fields the chosen engine and modes read, hides the others.
    pub fn sync_visibility(&mut self) {
        let policy = self.is_policy();
        let tokens = self.form.choice("limit_type") == "tokens";
        let threshold = self.form.choice("trim_mode") == "threshold";
        let middle = self.form.choice("strategy") == "drop-middle";
        let lc_last = self.form.choice("lc_strategy") == "last";
        let form = &mut self.form;
        for key in [
            "limit_type",
            "trim_mode",
            "strategy",
            "min_messages",
            "clear_tool_results",
            "max_images",
            "summarize",
        ] {
            form.set_visible(key, policy);
        }
        form.set_visible("max_messages", policy && !tokens && !threshold);
        form.set_visible("max_tokens", policy && tokens && !threshold);
        form.set_visible("trigger", policy && threshold);
        form.set_visible("target", policy && threshold);
        form.set_visible("keep_first", policy && middle);
        for key in [
            "lc_strategy",
            "lc_max_tokens",
            "counter",
            "end_on",
            "allow_partial",
        ] {
            form.set_visible(key, !policy);
        }
        form.set_visible("include_system", !policy && lc_last);
        form.set_visible("start_on", !policy && lc_last);
        form.move_focus(0);
    }

    /// The policy the form describes, over the base policy's other keys.
    pub fn policy(&self) -> ChatMemoryPolicy {
        let form = &self.form;
        let mut policy = self.base_policy.clone();
        policy.limit_type = match form.choice("limit_type") {
            "tokens" => LimitType::Tokens,
            _ => LimitType::Messages,
        };
        policy.trim_mode = match form.choice("trim_mode") {
            "threshold" => TrimMode::Threshold,
            _ => TrimMode::Continuous,
        };
        policy.strategy = match form.choice("strategy") {
            "drop-middle" => PolicyStrategy::DropMiddle,
            _ => PolicyStrategy::DropOldest,
        };
        policy.max_messages = form.number("max_messages");
        policy.max_tokens = form.number("max_tokens");
        policy.trigger = form.number("trigger");
        policy.target = form.number("target");
        policy.keep_first = form.number("keep_first");
        policy.min_messages = form.number("min_messages");
        policy.clear_tool_results = form.toggle("clear_tool_results");
        policy.max_images = form.number("max_images");
        policy.summarization.enabled = form.toggle("summarize");
        policy
    }

    /// `trim_messages`' options from the form.
    pub fn trim_options(&self) -> TrimOptions {
        let form = &self.form;
        let last = form.choice("lc_strategy") == "last";
        let role = |key: &str| match form.choice(key) {
            "human" => Some(vec![Role::User]),
            "ai" => Some(vec![Role::Assistant]),
            "system" => Some(vec![Role::System]),
            "tool" => Some(vec![Role::Tool]),
            _ => None,
        };
        TrimOptions {
            strategy: if last {
                Strategy::Last
            } else {
                Strategy::First
            },
            include_system: last && form.toggle("include_system"),
            start_on: role("start_on").filter(|_| last),
            end_on: role("end_on"),
            allow_partial: form.toggle("allow_partial"),
            ..TrimOptions::new(form.number("lc_max_tokens") as i64)
        }
    }

    /// The system messages the plan shown removes, each with why.
    pub fn system_removals(&self) -> Vec<SystemRemoval> {
        let (Some(Ok(plan)), Some(sessions)) = (&self.plan, &self.sessions) else {
            return Vec::new();
        };
        if self.is_policy() {
            let context = [
                self.base_policy.predefined_messages.clone(),
                sessions.tokens.messages.clone(),
            ]
            .concat();
            return system_removals(plan, &context, None);
        }
        system_removals(plan, &sessions.tokens.messages, Some(&self.trim_options()))
    }

    /// The gauge's limit and unit: what the plan's result is measured against.
    pub fn limit(&self) -> (u64, &'static str) {
        let form = &self.form;
        if !self.is_policy() {
            let unit = match form.choice("counter") {
                "messages" => "messages",
                _ => "tokens",
            };
            return (form.number("lc_max_tokens"), unit);
        }
        let threshold = form.choice("trim_mode") == "threshold";
        match (form.choice("limit_type"), threshold) {
            ("tokens", false) => (form.number("max_tokens"), "tokens"),
            ("tokens", true) => (form.number("target"), "tokens"),
            (_, false) => (form.number("max_messages"), "messages"),
            (_, true) => (form.number("target"), "messages"),
        }
    }

    /// What the gauge measures the plan's result against, its unit, and what the number means.
    /// In threshold mode with nothing trimmed, that is the trigger the history has not reached:
    /// against the target it would read as a full, over-the-limit bar.
    pub fn gauge_limit(&self, trimmed: bool) -> (u64, &'static str, &'static str) {
        let (limit, unit) = self.limit();
        if !trimmed && self.is_policy() && self.form.choice("trim_mode") == "threshold" {
            return (
                self.form.number("trigger"),
                unit,
                "below the trigger: nothing to trim",
            );
        }
        (limit, unit, "after the trim")
    }

    /// Message `index` of a plan: policies number their predefined messages first.
    pub fn message(&self, index: usize) -> Option<&PromptMessage> {
        let sessions = self.sessions.as_ref()?;
        let history = &sessions.tokens.messages;
        if !self.is_policy() {
            return history.get(index);
        }
        let predefined = &self.base_policy.predefined_messages;
        match index.checked_sub(predefined.len()) {
            None => predefined.get(index),
            Some(at) => history.get(at),
        }
    }

    /// Messages before the trim (with predefined ones for policies).
    pub fn messages_before(&self) -> usize {
        let history = self
            .sessions
            .as_ref()
            .map_or(0, |s| s.tokens.messages.len());
        if self.is_policy() {
            history + self.base_policy.predefined_messages.len()
        } else {
            history
        }
    }
}

/// The form's choice for `start_on`/`end_on`: one type, or any.
fn role_choice(roles: Option<&[Role]>) -> &'static str {
    match roles {
        Some([Role::User]) => "human",
        Some([Role::Assistant]) => "ai",
        Some([Role::System]) => "system",
        Some([Role::Tool]) => "tool",
        _ => "any",
    }
}

/// Every parameter of a policy and of `trim_messages`, starting from `policy` and `lc`, on
/// `engine`.
fn policy_form(policy: &ChatMemoryPolicy, engine: &str, lc: &TrimOptions) -> Form {
    let limit_type = match policy.limit_type {
        LimitType::Messages => "messages",
        LimitType::Tokens => "tokens",
    };
    let trim_mode = match policy.trim_mode {
        TrimMode::Continuous => "continuous",
        TrimMode::Threshold => "threshold",
    };
    let strategy = match policy.strategy {
        PolicyStrategy::DropOldest => "drop-oldest",
        PolicyStrategy::DropMiddle => "drop-middle",
    };
    let choice = FieldValue::choice;
    let number = FieldValue::number;
    Form::new(vec![
        Field::new("engine", "engine", choice(&ENGINES, engine)),
        Field::new(
            "limit_type",
            "limit type",
            choice(&["messages", "tokens"], limit_type),
        ),
        Field::new(
            "max_messages",
            "max messages",
            number(policy.max_messages, 1),
        ),
        Field::new("max_tokens", "max tokens", number(policy.max_tokens, 100)),
        Field::new(
            "trim_mode",
            "trim mode",
            choice(&["continuous", "threshold"], trim_mode),
        ),
        Field::new("trigger", "trigger", number(policy.trigger, 10)),
        Field::new("target", "target", number(policy.target, 10)),
        Field::new(
            "strategy",
            "strategy",
            choice(&["drop-oldest", "drop-middle"], strategy),
        ),
        Field::new("keep_first", "keep first K", number(policy.keep_first, 1)),
        Field::new(
            "min_messages",
            "min messages",
            number(policy.min_messages, 1),
        ),
        Field::new(
            "clear_tool_results",
            "clear tool results",
            FieldValue::Toggle(policy.clear_tool_results),
        ),
        Field::new("max_images", "max images", number(policy.max_images, 1)),
        Field::new(
            "summarize",
            "summarize",
            FieldValue::Toggle(policy.summarization.enabled),
        ),
        Field::new(
            "lc_strategy",
            "strategy",
            choice(
                &["last", "first"],
                match lc.strategy {
                    Strategy::Last => "last",
                    Strategy::First => "first",
                },
            ),
        ),
        Field::new(
            "lc_max_tokens",
            "max_tokens",
            number(lc.max_tokens.max(0) as u64, 100),
        ),
        Field::new(
            "counter",
            "counter",
            choice(&["tokens", "messages"], "tokens"),
        ),
        Field::new(
            "include_system",
            "include_system",
            FieldValue::Toggle(lc.include_system),
        ),
        Field::new(
            "start_on",
            "start_on",
            choice(&ROLES, role_choice(lc.start_on.as_deref())),
        ),
        Field::new(
            "end_on",
            "end_on",
            choice(&ROLES, role_choice(lc.end_on.as_deref())),
        ),
        Field::new(
            "allow_partial",
            "allow_partial",
            FieldValue::Toggle(lc.allow_partial),
        ),
    ])
}
