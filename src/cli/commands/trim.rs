//! `trim preview|apply|undo`: LangChain's `trim_messages` or a chat memory policy over any
//! history; applying and undoing for chat memories and LangGraph threads. On a LangGraph thread
//! a preview starts from the cut `history` shows (`inspect::trim::trim_from_cut`).

use serde::Serialize;

use super::stored_trim::session_options;
use super::trim_options::{is_langchain, policy_from, trim_options};

use crate::cli::args::{SummarizerArgs, SummarizerKind, TrimArgs, TrimCommand};
use crate::cli::context::Context;
use crate::cli::output::{CliError, CliResult, ExitCode, confirm, emit, table};
use crate::config::SummarizerKindConfig;
use crate::format::{one_line, thousands};
use crate::inspect::document::check_settings;
use crate::inspect::nodes::ContextSource;
use crate::inspect::trim::{
    LoadedMemory, TrimCounter, TrimInspectError, TrimSession, apply_policy, load_memory,
    trim_from_cut,
};
use crate::inspect::turn_trees::turn_trees;
use crate::memory::history::{HistoryOptions, assemble_history};
use crate::memory::model::PromptMessage;
use crate::memory::tokens::CountCache;
use crate::memory::trim::{
    ChatMemoryPolicy, Step, SystemRemoval, TrimOptions, TrimPlan, system_removals,
};
use crate::sources::conversation::Command;
use crate::store::{Part, Store};
use crate::summarize::{ChatCompletionsClient, ChatCompletionsConfig, Summarizer};

pub async fn run(context: &Context, command: TrimCommand) -> CliResult {
    match command {
        TrimCommand::Preview(args) => preview(context, &args).await,
        TrimCommand::Apply { args, yes } => apply(context, &args, yes).await,
        TrimCommand::Undo {
            chat_memory: Some(id),
            yes,
            ..
        } => undo(context, &id, yes).await,
        TrimCommand::Undo {
            conversation: Some(id),
            yes,
            ..
        } => match super::stored_trim::try_undo(context, &id, yes).await? {
            Some(done) => Ok(done),
            None => super::checkpoint_trim::undo(context, &id, yes).await,
        },
        TrimCommand::Undo { .. } => Err(CliError::usage(
            "name what to undo: --chat-memory ID, or --conversation THREAD of a LangGraph database",
        )),
    }
}

/// The summarizer the flags ask for, `[summarizer]` of the config filling what they leave
/// out; `None` reports the prompt instead of a summary.
pub fn summarizer_from(context: &Context, args: &SummarizerArgs) -> CliResult<Option<Summarizer>> {
    let configured = &context.resolved.config.summarizer;
    let kind = args.summarizer.unwrap_or(match configured.kind {
        SummarizerKindConfig::Extractive => SummarizerKind::Extractive,
        SummarizerKindConfig::ChatCompletions => SummarizerKind::ChatCompletions,
    });
    Ok(match kind {
        SummarizerKind::None => None,
        SummarizerKind::Extractive => Some(Summarizer::Extractive),
        SummarizerKind::ChatCompletions => {
            let config = ChatCompletionsConfig {
                base_url: args
                    .summarizer_url
                    .clone()
                    .unwrap_or_else(|| configured.base_url.clone()),
                model: args
                    .summarizer_model
                    .clone()
                    .unwrap_or_else(|| configured.model.clone()),
                api_key_env: args
                    .summarizer_key_env
                    .clone()
                    .unwrap_or_else(|| configured.api_key_env.clone()),
                timeout: std::time::Duration::from_secs(
                    args.summarizer_timeout
                        .unwrap_or(configured.timeout_seconds)
                        .max(1),
                ),
                max_tokens: Some(configured.max_tokens).filter(|n| *n > 0),
            };
            Some(Summarizer::ChatCompletions(ChatCompletionsClient::new(
                &config,
            )?))
        }
    })
}

/// `messages`, or the token counter the flags and the config name.
pub fn trim_counter(
    context: &Context,
    counter: Option<&str>,
    model: Option<&str>,
    encoding: Option<&str>,
) -> CliResult<TrimCounter> {
    let tokens = &context.resolved.config.tokens;
    let name = counter.unwrap_or(&tokens.counter);
    if name == "messages" || name == "len" {
        return Ok(TrimCounter::Messages);
    }
    let model = model.unwrap_or(&tokens.model);
    let encoding = encoding.unwrap_or(&tokens.encoding);
    Ok(TrimCounter::Tokens(crate::inspect::token_counter(
        model,
        name,
        Some(encoding),
    )?))
}

/// The counter `trim`'s flags ask for, and its description.
fn flags_counter(context: &Context, args: &TrimArgs) -> CliResult<(TrimCounter, String)> {
    let counter = trim_counter(
        context,
        args.counter.as_deref(),
        args.model.as_deref(),
        args.encoding.as_deref(),
    )?;
    let description = crate::memory::trim::MessageCounter::describe(&counter);
    Ok((counter, description))
}

enum Source {
    Messages {
        label: String,
        messages: Vec<PromptMessage>,
    },
    ChatMemory(Box<LoadedMemory>),
    /// A thread's latest checkpoint (a LangGraph thread's).
    Thread(Box<super::checkpoint_trim::LoadedThread>),
}

impl Source {
    /// A chat memory's stored policy, where a policy starts.
    fn stored_policy(&self) -> Option<&ChatMemoryPolicy> {
        match self {
            Source::ChatMemory(loaded) => Some(&loaded.policy),
            Source::Messages { .. } | Source::Thread(_) => None,
        }
    }

    fn is_thread(&self) -> bool {
        matches!(self, Source::Thread(_))
    }

    fn label(&self) -> String {
        match self {
            Source::Messages { label, .. } => label.clone(),
            Source::Thread(thread) => thread.state.label.clone(),
            Source::ChatMemory(loaded) => format!(
                "chat memory {} ({} / {})",
                loaded.memory.id, loaded.memory.label, loaded.memory.chat_id
            ),
        }
    }

    fn messages(&self) -> Vec<PromptMessage> {
        match self {
            Source::Messages { messages, .. } => messages.clone(),
            Source::Thread(thread) => thread.state.start.messages.clone(),
            Source::ChatMemory(loaded) => loaded.messages(),
        }
    }
}

async fn load_source(context: &Context, args: &TrimArgs) -> CliResult<(Source, Option<Store>)> {
    if let Some(path) = &args.input {
        let text = crate::cli::context::read_input(path)?;
        let messages = crate::memory::wire::parse_messages(&text)?;
        let label = format!("messages from {}", path.display());
        return Ok((Source::Messages { label, messages }, None));
    }
    let store = context.open().await?;
    if args.conversation.is_some() {
        // Refused, as `history` refuses them, where the source keeps no sessions by app and user.
        check_settings(&store, &session_options(args), Command::History)?;
    }
    let part = match (&args.conversation, &args.node) {
        (Some(_), Some(_)) => Part::NodeContexts,
        (Some(_), None) => Part::Conversations,
        _ => Part::ChatMemories,
    };
    if let (Some(thread), None) = (&args.conversation, &args.node)
        && let Some(trim) = super::checkpoint_trim::trim_of(&store)
    {
        let (counter, _) = flags_counter(context, args)?;
        let max_tokens = args
            .max_tokens
            .unwrap_or(context.resolved.config.tokens.budget);
        let loaded =
            super::checkpoint_trim::load_thread(&store, trim, thread, &counter, max_tokens).await?;
        return Ok((Source::Thread(Box::new(loaded)), Some(store)));
    }
    if let (Some(id), None) = (&args.conversation, &args.node)
        && !store.profile().has(Part::Conversations)
        && let Ok(source) = crate::inspect::document::conversations_of(&store)
    {
        // A session store's conversation (ADK's, the OpenAI Agents SDK's): what its model is
        // sent, as `history` reads it with the source's defaults.
        let request = super::history::request(context, &session_history_args(id, args), false)?;
        let read = source.history(&store, &request).await?;
        let messages = read.view.history.prompt_messages().cloned().collect();
        let label = format!("{} {id} (what its model is sent)", source.noun());
        return Ok((Source::Messages { label, messages }, Some(store)));
    }
    store.require(part)?;
    if let (Some(id), Some(node)) = (&args.conversation, &args.node) {
        let source = args
            .node_source
            .map(ContextSource::from)
            .unwrap_or_default();
        let node_context =
            super::nodes::load_context(context, &store, id, node, args.leaf.as_deref(), source)
                .await?;
        if let Some(empty) = &node_context.empty {
            return Err(CliError::failure(format!(
                "node {node} of conversation {id} has no context: {empty}"
            )));
        }
        let messages = node_context
            .messages
            .into_iter()
            .map(|m| m.message)
            .collect();
        let label = format!("node {node} of conversation {id}: {}", source.describe());
        return Ok((Source::Messages { label, messages }, Some(store)));
    }
    if let Some(id) = &args.conversation {
        let requested = Some(context.resolved.config.history.message_limit);
        let loaded = turn_trees(&store)?.window(&store, id, requested).await?;
        let options = HistoryOptions {
            message_limit: Some(loaded.window as i64),
            ..HistoryOptions::default()
        };
        let history = assemble_history(&loaded.rows_newest_first, &loaded.files, &options);
        let messages = history.prompt_messages().cloned().collect();
        let label = format!("conversation {} (thread history)", loaded.info.id);
        return Ok((Source::Messages { label, messages }, Some(store)));
    }
    match &args.chat_memory {
        Some(id) => {
            let loaded = load_memory(&store, id).await?;
            Ok((Source::ChatMemory(Box::new(loaded)), Some(store)))
        }
        None => Err(CliError::usage(
            "name a history: --input FILE, --conversation ID or --chat-memory ID",
        )),
    }
}

/// `history SESSION` with the defaults, for a session store's trim preview.
fn session_history_args(id: &str, args: &TrimArgs) -> crate::cli::args::HistoryArgs {
    crate::cli::args::HistoryArgs {
        conversation: id.to_owned(),
        max_tokens: args.max_tokens,
        message_limit: None,
        tokens: crate::cli::args::TokenArgs {
            model: args.model.clone(),
            counter: None,
            encoding: args.encoding.clone(),
        },
        text: false,
        human_prefix: String::new(),
        ai_prefix: String::new(),
        flow: None,
        n_messages: None,
        context_id: None,
        leaf: None,
        limit: None,
        ttl: None,
        session: crate::cli::args::SessionArgs {
            branch: None,
            app: args.app.clone(),
            user: args.user.clone(),
            agent: None,
        },
    }
}

#[derive(Serialize)]
struct Report {
    source: String,
    /// `trim_messages` or `policy`.
    mode: &'static str,
    counter: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    options: Option<TrimOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    policy: Option<ChatMemoryPolicy>,
    messages_before: usize,
    messages_after: usize,
    plan: TrimPlan,
    /// System messages the plan removes, each with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    removed_system: Vec<SystemRemoval>,
    /// The trimmed list.
    result: Vec<PromptMessage>,
    /// Set by `apply`: the change to undo.
    #[serde(skip_serializing_if = "Option::is_none")]
    change_id: Option<String>,
    /// Set by `apply` on a thread of checkpoints: the checkpoint written.
    #[serde(skip_serializing_if = "Option::is_none")]
    checkpoint: Option<crate::sources::checkpoint_trim::TrimCheckpoint>,
    #[serde(skip)]
    context: Vec<PromptMessage>,
}

fn render(r: &Report) -> String {
    let mut out = format!(
        "{}\n{} with {}\nmessages: {} -> {}   tokens: {} -> {}\n",
        r.source,
        r.mode,
        r.counter,
        r.messages_before,
        r.messages_after,
        thousands(r.plan.tokens_before),
        thousands(r.plan.tokens_after),
    );
    let mut rows = Vec::new();
    for step in &r.plan.steps {
        let (mark, message, fate) = match step {
            Step::Keep { index } => ("", &r.context[*index], String::new()),
            Step::Modify {
                message, reason, ..
            } => ("~", message, reason.describe().to_owned()),
            Step::Remove { index, reason } => {
                ("-", &r.context[*index], reason.describe().to_owned())
            }
            Step::Summary => {
                let (text, fate) = match &r.plan.summary {
                    Some(slot) => match &slot.text {
                        Some(text) => (
                            text.clone(),
                            format!("summary ({})", slot.summarizer.as_deref().unwrap_or("")),
                        ),
                        None => ("(prompt below)".to_owned(), "summary pending".to_owned()),
                    },
                    None => continue,
                };
                rows.push(vec![
                    "+".into(),
                    String::new(),
                    "system".into(),
                    fate,
                    one_line(&text, 60),
                ]);
                continue;
            }
        };
        let index = step.index().map_or(String::new(), |i| i.to_string());
        rows.push(vec![
            mark.to_owned(),
            index,
            message.role.as_str().to_owned(),
            fate,
            one_line(&message.content.text(), 60),
        ]);
    }
    out.push('\n');
    out.push_str(&table(&["", "#", "role", "change", "content"], &rows));
    for removal in &r.removed_system {
        out.push_str(&format!(
            "\n! removes system message #{} ({}): {}",
            removal.index,
            removal.reason.describe(),
            removal.why
        ));
    }
    if let Some(slot) = &r.plan.summary
        && slot.text.is_none()
    {
        out.push_str("\n\nsummarize prompt that would be sent:\n");
        out.push_str(&slot.prompt);
    }
    if let Some(id) = &r.change_id {
        out.push_str(&format!(
            "\n\napplied as change {id}; `memscope trim undo` restores it"
        ));
    }
    if let Some(applied) = &r.checkpoint {
        out.push_str(&format!(
            "\n\nwritten as checkpoint {} (update, step {}), child of {}; \
             `memscope trim undo --conversation {} --yes` removes it",
            applied.checkpoint_id, applied.step, applied.parent_checkpoint_id, applied.thread_id
        ));
    }
    out
}

async fn plan_for(
    context: &Context,
    args: &TrimArgs,
    source: &Source,
) -> CliResult<(Report, Option<ChatMemoryPolicy>)> {
    let (counter, description) = flags_counter(context, args)?;
    let (session, start) = match source {
        Source::Thread(thread) => {
            let (session, options) = trim_from_cut(&thread.state.start, counter);
            (session, Some(options))
        }
        _ => {
            let mut cache = CountCache::default();
            (
                TrimSession::new(source.messages(), counter, &mut cache),
                None,
            )
        }
    };
    if is_langchain(args, source.is_thread()) {
        let options = trim_options(args, start.as_ref())?;
        let plan = session.preview_trim_messages(&options)?;
        return Ok((
            report(
                source,
                "trim_messages",
                description,
                &session.messages,
                plan,
                Some(options),
                None,
            ),
            None,
        ));
    }
    let policy = policy_from(context, args, source.stored_policy())?;
    let planner = session.planner(&policy)?;
    let plan = match summarizer_from(context, &args.summarizer)? {
        Some(summarizer) => crate::summarize::summarize_plan(&planner, planner.plan(), &summarizer)
            .await
            .map_err(TrimInspectError::from)?,
        None => planner.plan(),
    };
    let context_messages = planner.context();
    Ok((
        report(
            source,
            "policy",
            description,
            &context_messages,
            plan,
            None,
            Some(policy.clone()),
        ),
        Some(policy),
    ))
}

fn report(
    source: &Source,
    mode: &'static str,
    counter: String,
    context: &[PromptMessage],
    plan: TrimPlan,
    options: Option<TrimOptions>,
    policy: Option<ChatMemoryPolicy>,
) -> Report {
    let result = plan.messages(context);
    let removed_system = system_removals(&plan, context, options.as_ref());
    Report {
        source: source.label(),
        mode,
        counter,
        options,
        policy,
        messages_before: context.len(),
        messages_after: result.len(),
        plan,
        removed_system,
        result,
        change_id: None,
        checkpoint: None,
        context: context.to_vec(),
    }
}

async fn preview(context: &Context, args: &TrimArgs) -> CliResult {
    if let Some(done) = super::stored_trim::try_preview(context, args).await? {
        return Ok(done);
    }
    let (source, _) = load_source(context, args).await?;
    let (report, _) = plan_for(context, args, &source).await?;
    emit(context.global.json, &report, render)?;
    Ok(ExitCode::Ok)
}

async fn apply(context: &Context, args: &TrimArgs, yes: bool) -> CliResult {
    let refuse = |what| CliError::from(TrimInspectError::NotAStoredList(what));
    if args.node.is_some() {
        return Err(refuse("a node context"));
    }
    if args.input.is_some() {
        return Err(refuse("a JSON list of messages"));
    }
    if let Some(done) = super::stored_trim::try_apply(context, args, yes).await? {
        return Ok(done);
    }
    let (source, store) = load_source(context, args).await?;
    if let (Source::Thread(thread), Some(store)) = (&source, &store) {
        let (mut report, policy) = plan_for(context, args, &source).await?;
        if policy.is_some_and(|p| !p.predefined_messages.is_empty()) {
            return Err(CliError::usage(
                "a policy's predefined messages are not in the thread: apply a policy without them",
            ));
        }
        report.checkpoint = super::checkpoint_trim::write(store, thread, &report.plan, yes).await?;
        emit(context.global.json, &report, render)?;
        return Ok(ExitCode::Ok);
    }
    if args.conversation.is_some() {
        let refusal = store
            .as_ref()
            .and_then(|store| crate::inspect::document::conversations_of(store).ok())
            .and_then(|source| source.trim_refusal());
        return Err(match refusal {
            Some(why) => CliError::usage(why),
            None => refuse("a conversation thread"),
        });
    }
    if is_langchain(args, source.is_thread()) {
        return Err(CliError::usage(
            "apply uses chat memory policies (--strategy drop-oldest|drop-middle); \
             first|last is for previews",
        ));
    }
    let (Source::ChatMemory(loaded), Some(store)) = (&source, store) else {
        return Err(refuse("this history"));
    };
    confirm(yes, "apply changes the chat memory")?;
    let policy = policy_from(context, args, source.stored_policy())?;
    let (counter, description) = flags_counter(context, args)?;
    let summarizer = match summarizer_from(context, &args.summarizer)? {
        Some(summarizer) => summarizer,
        None if policy.summarization.enabled => {
            return Err(CliError::usage(
                "the policy summarizes: apply needs --summarizer extractive or openai",
            ));
        }
        // Never consulted: the policy does not summarize.
        None => Summarizer::Extractive,
    };
    let applied = apply_policy(&store, loaded, &policy, counter, &summarizer, "trim").await?;
    let plan_context = [policy.predefined_messages.clone(), loaded.messages()].concat();
    let mut report = report(
        &source,
        "policy",
        description,
        &plan_context,
        applied.plan,
        None,
        Some(policy.clone()),
    );
    report.change_id = applied.change_id;
    emit(context.global.json, &report, render)?;
    Ok(ExitCode::Ok)
}

#[derive(Serialize)]
struct Undone {
    chat_memory_id: String,
    change: Option<crate::store::ChangeRecord>,
    messages: usize,
}

async fn undo(context: &Context, id: &str, yes: bool) -> CliResult {
    let store = context.open_for(Part::ChatMemories).await?;
    let loaded = load_memory(&store, id).await?;
    confirm(yes, "undo rewrites the chat memory")?;
    let change = store.undo_chat_memory_change(&loaded.memory.id).await?;
    let messages = store
        .chat_memory_messages(&loaded.memory.id, None, 0)
        .await?
        .len();
    let undone = Undone {
        chat_memory_id: loaded.memory.id.clone(),
        change,
        messages,
    };
    emit(context.global.json, &undone, |u| match &u.change {
        Some(change) => format!(
            "undid {} {} of {}: {} now",
            change.action,
            change.id,
            u.chat_memory_id,
            crate::format::count(u.messages as u64, "message")
        ),
        None => format!("nothing to undo in chat memory {}", u.chat_memory_id),
    })?;
    Ok(ExitCode::Ok)
}
