//! What `trim preview|apply`'s flags ask for: which engine, `trim_messages`' options (on a
//! LangGraph thread over the options of the cut `history` shows), or a policy over the stored
//! or default one.

use serde_json::{Value, json};

use crate::cli::args::TrimArgs;
use crate::cli::context::Context;
use crate::cli::output::{CliError, CliResult};
use crate::memory::trim::{
    ChatMemoryPolicy, Strategy, TextSplitter, TrimOptions, parse_message_types,
};

/// LangChain's strategies select `trim_messages`, and so does a LangGraph thread without a
/// policy's flags (its cut is `trim_messages`'); anything else is a policy.
pub(super) fn is_langchain(args: &TrimArgs, on_thread: bool) -> bool {
    let policy_flags = args.policy.is_some()
        || args.limit_type.is_some()
        || args.trim_mode.is_some()
        || args.max_messages.is_some()
        || args.trigger.is_some()
        || args.target.is_some()
        || args.min_messages.is_some()
        || args.keep_first.is_some()
        || args.max_images.is_some()
        || args.clear_tool_results
        || args.summarize
        || args.summarize_prompt.is_some();
    match args.strategy.as_deref() {
        Some(strategy) => matches!(strategy, "first" | "last"),
        None => on_thread && !policy_flags,
    }
}

/// `trim_messages`' options: LangChain's bare defaults under the flags, or on a LangGraph
/// thread the options of the cut `history` shows (`start`), each flag given overriding them.
pub(super) fn trim_options(args: &TrimArgs, start: Option<&TrimOptions>) -> CliResult<TrimOptions> {
    let mut options = match start {
        Some(start) => start.clone(),
        None => TrimOptions::new(args.max_tokens.ok_or_else(|| {
            CliError::usage("--max-tokens is required with --strategy first|last")
        })?),
    };
    if let Some(strategy) = &args.strategy {
        options.strategy = strategy.parse()?;
        if options.strategy == Strategy::First {
            // start_on and include_system are `last`'s: a flag naming them is refused below.
            options.start_on = None;
            options.include_system = false;
        }
    }
    // `any` names no type: the thread's start_on=human taken back.
    let types = |names: &Vec<String>| match names.as_slice() {
        [any] if any == "any" => Ok(None),
        names => parse_message_types(names).map(Some),
    };
    if let Some(names) = &args.start_on {
        options.start_on = types(names)?;
    }
    if let Some(names) = &args.end_on {
        options.end_on = types(names)?;
    }
    if let Some(n) = args.max_tokens {
        options.max_tokens = n;
    }
    options.include_system = args.include_system.unwrap_or(options.include_system);
    options.allow_partial |= args.allow_partial;
    if let Some(separator) = &args.split_on {
        options.text_splitter = TextSplitter::Separator(separator.clone());
    }
    Ok(options)
}

/// The starting policy (flag JSON, the memory's own, or seed 004's defaults) with the flags'
/// keys laid over it.
pub(super) fn policy_from(
    context: &Context,
    args: &TrimArgs,
    stored: Option<&ChatMemoryPolicy>,
) -> CliResult<ChatMemoryPolicy> {
    let mut base = match (&args.policy, stored) {
        (Some(json), _) => ChatMemoryPolicy::from_json(json)?,
        (None, Some(policy)) => policy.clone(),
        (None, None) => ChatMemoryPolicy::default(),
    };
    if base.summarization.prompt.is_none() {
        base.summarization.prompt = context
            .resolved
            .config
            .summarizer
            .default_prompt()
            .map(str::to_owned);
    }
    let mut value = serde_json::to_value(&base)?;
    let mut set = |key: &str, v: Value| {
        value[key] = v;
    };
    if let Some(strategy) = &args.strategy {
        set("strategy", json!(strategy.replace('-', "_")));
    }
    if let Some(n) = args.max_tokens {
        set("max_tokens", json!(n.max(0)));
        set("limit_type", json!("tokens"));
    }
    if let Some(n) = args.max_messages {
        set("max_messages", json!(n));
        set("limit_type", json!("messages"));
    }
    if let Some(limit_type) = &args.limit_type {
        set("limit_type", json!(limit_type));
    }
    if let Some(mode) = &args.trim_mode {
        set("trim_mode", json!(mode));
    }
    for (key, n) in [
        ("trigger", args.trigger),
        ("target", args.target),
        ("min_messages", args.min_messages),
        ("keep_first", args.keep_first),
        ("max_images", args.max_images),
    ] {
        if let Some(n) = n {
            set(key, json!(n));
        }
    }
    if args.clear_tool_results {
        set("clear_tool_results", json!(true));
    }
    if args.summarize || args.summarize_prompt.is_some() {
        set(
            "summarization",
            json!({"enabled": true, "prompt": args.summarize_prompt.clone().or(base.summarization.prompt.clone())}),
        );
    }
    Ok(ChatMemoryPolicy::from_json(&value.to_string())?)
}
