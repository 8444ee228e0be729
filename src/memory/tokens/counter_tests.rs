use super::*;

fn enc(encoding: Encoding, text: &str) -> u64 {
    encoding.count(text) as u64
}

fn user(text: &str) -> PromptMessage {
    PromptMessage::text(Role::User, text)
}

fn assistant(text: &str) -> PromptMessage {
    PromptMessage::text(Role::Assistant, text)
}

fn named(mut message: PromptMessage, name: &str) -> PromptMessage {
    message.name = Some(name.to_owned());
    message
}

fn tool_result(call_id: &str, text: &str) -> PromptMessage {
    let mut message = PromptMessage::text(Role::Tool, text);
    message.tool_call_id = Some(call_id.to_owned());
    message
}

fn calling(text: &str, calls: &[(&str, &str, &str)]) -> PromptMessage {
    let mut message = assistant(text);
    message.tool_calls = calls
        .iter()
        .map(|&(id, name, arguments)| ToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: arguments.to_owned(),
        })
        .collect();
    message
}

fn image_then_text(role: Role, text: &str) -> PromptMessage {
    PromptMessage::new(
        role,
        Content::Parts(vec![
            ContentPart::Image {
                source: "https://example.com/cat.png".into(),
            },
            ContentPart::Text { text: text.into() },
        ]),
    )
}

fn classic(model: &str) -> TokenCounter {
    TokenCounter::for_model(CounterKind::OpenAi, model)
}

#[test]
fn kinds_parse_and_display_their_names() {
    for kind in CounterKind::ALL {
        assert_eq!(kind.to_string().parse::<CounterKind>().unwrap(), kind);
    }
    assert_eq!(
        "OpenAI".parse::<CounterKind>(),
        Err(TokensError::UnknownCounter("OpenAI".into()))
    );
}

#[test]
fn classic_reference_example_on_gpt_4o() {
    let o200k = Encoding::O200kBase;
    let list = [user("Hello"), assistant("Hi there")];
    let expected = 3
        + enc(o200k, "user")
        + enc(o200k, "Hello")
        + 3
        + enc(o200k, "assistant")
        + enc(o200k, "Hi there")
        + 3;
    assert_eq!(classic("gpt-4o").count_list(&list), expected);
    // user, Hello, assistant: one token each; "Hi there": two.
    assert_eq!(expected, 14);
}

#[test]
fn classic_names_cost_their_tokens_plus_one() {
    let counter = classic("gpt-4");
    let cl100k = Encoding::Cl100kBase;
    let message = named(user("hey"), "alice_smith");
    assert_eq!(
        counter.count_message(&message),
        MessageTokens::flat(
            (3 + enc(cl100k, "user") + enc(cl100k, "hey") + enc(cl100k, "alice_smith") + 1) as u32
        )
    );
    // Python treats "" as no name: no key, no per-name token.
    assert_eq!(
        counter.count_message(&named(user("hey"), "")),
        counter.count_message(&user("hey"))
    );
}

#[test]
fn classic_gpt_35_turbo_0301_uses_four_and_minus_one() {
    let counter = classic("ft:gpt-3.5-turbo-0301:acme::x1");
    assert_eq!(counter.id().overhead, ChatMlOverhead::GPT_35_TURBO_0301);
    let cl100k = Encoding::Cl100kBase;
    let expected = 4 + enc(cl100k, "user") + enc(cl100k, "hi") + enc(cl100k, "bob") - 1;
    assert_eq!(
        counter.count_message(&named(user("hi"), "bob")),
        MessageTokens::flat(expected as u32)
    );
    assert_eq!(
        classic("gpt-3.5-turbo-0613").id().overhead,
        ChatMlOverhead::STANDARD
    );
}

#[test]
fn classic_tool_message_is_a_function_message_named_by_its_call_id() {
    let counter = classic("gpt-4o");
    let o200k = Encoding::O200kBase;
    let message = tool_result("call_Abc123", "{\"temp\": 21}");
    let expected =
        3 + enc(o200k, "function") + enc(o200k, "{\"temp\": 21}") + enc(o200k, "call_Abc123") + 1;
    assert_eq!(
        counter.count_message(&message),
        MessageTokens::flat(expected as u32)
    );
    // A message name overwrites the call id under the same key.
    let renamed = named(message, "weather");
    let expected =
        3 + enc(o200k, "function") + enc(o200k, "{\"temp\": 21}") + enc(o200k, "weather") + 1;
    assert_eq!(
        counter.count_message(&renamed),
        MessageTokens::flat(expected as u32)
    );
    // Without a call id the key is still there, holding "".
    let anonymous = PromptMessage::text(Role::Tool, "ok");
    assert_eq!(
        counter.count_message(&anonymous),
        MessageTokens::flat((3 + enc(o200k, "function") + enc(o200k, "ok") + 1) as u32)
    );
}

#[test]
fn classic_assistant_tool_calls_count_the_first_call_as_a_python_dict() {
    let counter = classic("gpt-4o");
    let o200k = Encoding::O200kBase;
    let message = calling(
        "",
        &[
            ("call_1", "get_weather", "{\"city\": \"Paris\"}"),
            ("call_2", "get_time", "{\"tz\": \"CET\"}"),
        ],
    );
    let function_call = "{'name': 'get_weather', 'arguments': '{\"city\": \"Paris\"}'}";
    let expected = 3 + enc(o200k, "assistant") + enc(o200k, "") + enc(o200k, function_call);
    assert_eq!(
        counter.count_message(&message),
        MessageTokens::flat(expected as u32)
    );
    // Tool calls on any other role are not part of the OpenAI dict.
    let mut from_user = user("");
    from_user.tool_calls = message.tool_calls.clone();
    assert_eq!(
        counter.count_message(&from_user),
        counter.count_message(&user(""))
    );
}

#[test]
fn classic_list_content_counts_text_of_user_messages_only() {
    let counter = classic("gpt-4o");
    let o200k = Encoding::O200kBase;
    assert_eq!(
        counter.count_message(&image_then_text(Role::User, "what is this?")),
        MessageTokens::flat((3 + enc(o200k, "user") + enc(o200k, "what is this?")) as u32)
    );
    assert_eq!(
        counter.count_message(&image_then_text(Role::Assistant, "a cat")),
        MessageTokens::flat((3 + enc(o200k, "assistant")) as u32)
    );
}

#[test]
fn classic_unknown_model_falls_back_to_cl100k_and_says_so() {
    let counter = classic("claude-3-opus");
    assert_eq!(counter.encoding(), Encoding::Cl100kBase);
    assert!(counter.used_fallback());
    assert!(counter.description().contains("fallback"), "{counter}");
    assert_eq!(counter.id().overhead, ChatMlOverhead::STANDARD);
    assert!(!classic("gpt-4o").used_fallback());
}

#[test]
fn plugin_reference_formula() {
    let counter = TokenCounter::for_model(CounterKind::Plugin, "gpt-4o");
    let list = [user("Hello"), assistant("Hi there")];
    let joined = "user\n\nHello\nassistant\n\nHi there";
    assert_eq!(
        counter.count_list(&list),
        enc(Encoding::O200kBase, joined) + 3 * 2 + 3
    );
}

#[test]
fn plugin_parts_include_names_and_assistant_tool_calls() {
    let counter = TokenCounter::for_model(CounterKind::Plugin, "gpt-4.1-mini");
    let list = [
        named(user("weather?"), "ann"),
        calling("", &[("call_9", "get_weather", "{\"city\":\"Oslo\"}")]),
        tool_result("call_9", "rain"),
    ];
    let joined = "user\nann\nweather?\nassistant\n\n\ncall_9\nget_weather\n{\"city\":\"Oslo\"}\n\
                  tool\n\nrain";
    assert_eq!(
        counter.count_list(&list),
        enc(Encoding::O200kBase, joined) + 3 * 3 + 3
    );
}

#[test]
fn plugin_unknown_model_falls_back_to_o200k() {
    let counter = TokenCounter::for_model(CounterKind::Plugin, "deepseek-chat");
    assert_eq!(counter.encoding(), Encoding::O200kBase);
    assert!(counter.used_fallback());
}

#[test]
fn plugin_split_is_exact_where_a_trailing_newline_merges() {
    // "x\n" then the separator: one "\n\n" token at the end of a text, two before more text.
    let r50k = Encoding::R50kBase;
    let counter = TokenCounter::with_encoding(CounterKind::Plugin, r50k);
    let list = [user("x\n"), assistant("y")];
    let joined = "user\n\nx\n\nassistant\n\ny";
    assert_eq!(counter.count_list(&list), enc(r50k, joined) + 3 * 2 + 3);
    let naive_inner = enc(r50k, "user\n\nx\n\n");
    assert_ne!(
        u64::from(counter.count_message(&list[0]).inner) - 3,
        naive_inner,
        "the example no longer shows the merge"
    );
}

#[test]
fn every_role_starts_with_a_letter() {
    // The plugin split relies on it: see `plugin_tokens`.
    for role in [Role::System, Role::User, Role::Assistant, Role::Tool] {
        assert!(role.as_str().starts_with(|c: char| c.is_ascii_alphabetic()));
    }
}

#[test]
fn counting_on_threads_changes_no_count() {
    // Long enough to be cut across threads, with messages of every length around it.
    let long = "word ".repeat(PARALLEL_TEXT_BYTES / 4) + "\nend.";
    let messages: Vec<PromptMessage> = (0..600)
        .map(|i| match i {
            7 => assistant(&long),
            _ => user(&"hi there ".repeat(i % 13)),
        })
        .collect();
    for kind in CounterKind::ALL {
        let counter = TokenCounter::with_encoding(kind, Encoding::O200kBase);
        let one_by_one: Vec<_> = messages.iter().map(|m| counter.count_message(m)).collect();
        let threaded = counter.clone().with_threads(3);
        assert_eq!(threaded.count_each(&messages), one_by_one, "{kind}");
        assert_eq!(counter.count_each(&messages), one_by_one, "{kind}");
        assert_eq!(
            threaded.count_text(&long),
            counter.count_text(&long),
            "{kind}"
        );
    }
}

#[test]
fn raw_counts_text_only() {
    let counter = TokenCounter::for_model(CounterKind::Raw, "my-local-llm");
    assert_eq!(counter.encoding(), Encoding::R50kBase);
    assert!(counter.used_fallback());
    let message = named(image_then_text(Role::Assistant, "a cat"), "bot");
    let tokens = enc(Encoding::R50kBase, "a cat") as u32;
    assert_eq!(counter.count_message(&message), MessageTokens::flat(tokens));
    assert_eq!(counter.list_overhead(), 0);
    assert_eq!(
        counter.count_list(&[message.clone(), message]),
        2 * u64::from(tokens)
    );
}

#[test]
fn zero_counts_nothing() {
    let counter = TokenCounter::for_model(CounterKind::Zero, "anything");
    assert!(!counter.used_fallback());
    assert_eq!(counter.count_text("hello"), 0);
    assert_eq!(counter.count_list(&[user("hello"), assistant("hi")]), 0);
    assert!(counter.description().starts_with("zero"));
}

#[test]
fn empty_lists_count_zero() {
    for kind in CounterKind::ALL {
        assert_eq!(TokenCounter::for_model(kind, "gpt-4o").count_list(&[]), 0);
    }
}

#[test]
fn descriptions_name_kind_encoding_and_model() {
    let counter = classic("gpt-4o");
    assert_eq!(
        counter.description(),
        "openai: classic OpenAI formula, o200k_base (model gpt-4o); 3 per message, +1 per \
         name, 3 per list"
    );
    let plugin = TokenCounter::with_encoding(CounterKind::Plugin, Encoding::Cl100kBase);
    assert_eq!(
        plugin.description(),
        "plugin: OpenAI plugin 2026 estimate, cl100k_base; newline-joined text, 3 per \
         message, 3 per list"
    );
}
