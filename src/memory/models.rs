//! Context windows of well-known models: whether what memory sends would fit at all.

/// Input context window in tokens, by model family. Longest prefix wins, so `gpt-4o-mini`
/// matches before `gpt-4`. Figures are the providers' published limits.
const CONTEXT_WINDOWS: &[(&str, u64)] = &[
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("chatgpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4-1106", 128_000),
    ("gpt-4-0125", 128_000),
    ("gpt-4-32k", 32_768),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo-instruct", 4_096),
    ("gpt-3.5-turbo", 16_385),
    ("o1-mini", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("claude", 200_000),
    ("gemini-1.5", 1_048_576),
    ("gemini-2", 1_048_576),
    ("deepseek", 128_000),
    ("qwen", 131_072),
    ("llama-3", 128_000),
];

/// The model's context window, if memscope knows it. `ft:` fine-tunes use their base model.
pub fn context_window(model: &str) -> Option<u64> {
    let model = model.strip_prefix("ft:").unwrap_or(model);
    let model = model
        .split(':')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    CONTEXT_WINDOWS
        .iter()
        .filter(|(prefix, _)| model.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|&(_, window)| window)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins() {
        assert_eq!(context_window("gpt-4o-mini"), Some(128_000));
        assert_eq!(context_window("gpt-4"), Some(8_192));
        assert_eq!(context_window("gpt-4-32k-0613"), Some(32_768));
        assert_eq!(context_window("gpt-4.1-nano"), Some(1_047_576));
        assert_eq!(context_window("o1-mini"), Some(128_000));
        assert_eq!(context_window("o1-preview"), Some(200_000));
    }

    #[test]
    fn fine_tunes_use_their_base_and_unknown_models_are_none() {
        assert_eq!(context_window("ft:gpt-3.5-turbo:acme::abc"), Some(16_385));
        assert_eq!(context_window("my-local-model"), None);
    }
}
