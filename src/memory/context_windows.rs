//! Context windows of well-known models: whether what memory sends would fit at all, and how
//! sure memscope is of the figure.

use std::collections::BTreeMap;

use serde::Serialize;

/// Input context windows of models known by name (providers' published limits, and the aliases
/// they document for them).
const KNOWN_MODELS: &[(&str, u64)] = &[
    ("gpt-5", 400_000),
    ("gpt-5-mini", 400_000),
    ("gpt-5-nano", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4.1-mini", 1_047_576),
    ("gpt-4.1-nano", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4o-mini", 128_000),
    ("chatgpt-4o-latest", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4-turbo-preview", 128_000),
    ("gpt-4-1106-preview", 128_000),
    ("gpt-4-0125-preview", 128_000),
    ("gpt-4", 8_192),
    ("gpt-4-0613", 8_192),
    ("gpt-4-32k", 32_768),
    ("gpt-4-32k-0613", 32_768),
    ("gpt-3.5-turbo", 16_385),
    ("gpt-3.5-turbo-0125", 16_385),
    ("gpt-3.5-turbo-1106", 16_385),
    ("gpt-3.5-turbo-instruct", 4_096),
    ("o1", 200_000),
    ("o1-mini", 128_000),
    ("o1-preview", 128_000),
    ("o3", 200_000),
    ("o3-mini", 200_000),
    ("o4-mini", 200_000),
    ("claude-3-5-sonnet-20240620", 200_000),
    ("claude-3-5-sonnet-20241022", 200_000),
    ("claude-3-5-sonnet-latest", 200_000),
    ("claude-3-5-haiku-20241022", 200_000),
    ("claude-3-7-sonnet-20250219", 200_000),
    ("claude-3-opus-20240229", 200_000),
    ("claude-3-haiku-20240307", 200_000),
    ("claude-sonnet-4-20250514", 200_000),
    ("claude-opus-4-20250514", 200_000),
    ("gemini-1.5-flash", 1_048_576),
    ("gemini-1.5-pro", 2_097_152),
    ("gemini-2.0-flash", 1_048_576),
    ("gemini-2.5-flash", 1_048_576),
    ("gemini-2.5-pro", 1_048_576),
];

/// Families a model not known by name is assumed to belong to, by the longest prefix of its
/// name: a guess, and said to be one.
const FAMILIES: &[(&str, u64)] = &[
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

/// Where memscope finds a model's windows set by the user: `[tokens.context_windows]`.
pub const CONTEXT_WINDOWS_SETTING: &str = "[tokens.context_windows]";

/// A model's context window and how memscope knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContextWindow {
    /// The model is known by name (or by a name its provider documents for it).
    Exact(u64),
    /// `[tokens.context_windows]` sets it.
    Setting(u64),
    /// Not known by name: the window of the family whose prefix the name starts with.
    Assumed {
        tokens: u64,
        family: &'static str,
    },
    Unknown,
}

/// The machine fields of a window, flattened into reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextWindowFields {
    pub context_window: Option<u64>,
    /// `exact`, `setting`, `assumed` or `unknown`.
    pub context_window_source: &'static str,
    /// The family an assumed window is taken from.
    pub context_window_assumed_from: Option<&'static str>,
}

impl ContextWindow {
    /// The window of `model`: a configured one first, then a known name, then a family guess.
    /// `ft:` fine-tunes have their base model's window.
    pub fn of(model: &str, configured: &BTreeMap<String, u64>) -> ContextWindow {
        if let Some(&tokens) = configured.get(model) {
            return ContextWindow::Setting(tokens);
        }
        let base = model.strip_prefix("ft:").unwrap_or(model);
        let base = base.split(':').next().unwrap_or(base).to_ascii_lowercase();
        if let Some(&(_, tokens)) = KNOWN_MODELS.iter().find(|(name, _)| *name == base) {
            return ContextWindow::Exact(tokens);
        }
        FAMILIES
            .iter()
            .filter(|(prefix, _)| base.starts_with(prefix))
            .max_by_key(|(prefix, _)| prefix.len())
            .map_or(ContextWindow::Unknown, |&(family, tokens)| {
                ContextWindow::Assumed { tokens, family }
            })
    }

    pub fn tokens(&self) -> Option<u64> {
        match *self {
            ContextWindow::Exact(tokens) | ContextWindow::Setting(tokens) => Some(tokens),
            ContextWindow::Assumed { tokens, .. } => Some(tokens),
            ContextWindow::Unknown => None,
        }
    }

    pub fn fields(&self) -> ContextWindowFields {
        let (source, family) = match self {
            ContextWindow::Exact(_) => ("exact", None),
            ContextWindow::Setting(_) => ("setting", None),
            ContextWindow::Assumed { family, .. } => ("assumed", Some(*family)),
            ContextWindow::Unknown => ("unknown", None),
        };
        ContextWindowFields {
            context_window: self.tokens(),
            context_window_source: source,
            context_window_assumed_from: family,
        }
    }

    /// The window as a sentence names it: "gpt-4o's context window", "gpt-4-foo's assumed
    /// context window".
    pub fn subject(&self, model: &str) -> String {
        match self {
            ContextWindow::Exact(_) => format!("{model}'s context window"),
            ContextWindow::Setting(_) => format!("{model}'s configured context window"),
            ContextWindow::Assumed { .. } => format!("{model}'s assumed context window"),
            ContextWindow::Unknown => format!("{model}'s unknown context window"),
        }
    }

    /// Where a window memscope does not know for sure comes from, and how to set it.
    pub fn advice(&self, model: &str) -> Option<String> {
        let how = format!("under {CONTEXT_WINDOWS_SETTING} in the configuration");
        match self {
            ContextWindow::Exact(_) | ContextWindow::Setting(_) => None,
            ContextWindow::Assumed { family, .. } => Some(format!(
                "assumed from the {family} family: memscope does not know {model} by name; \
                 set its window {how}"
            )),
            ContextWindow::Unknown => {
                Some(format!("{model}'s context window is unknown: set it {how}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(model: &str) -> ContextWindow {
        ContextWindow::of(model, &BTreeMap::new())
    }

    fn assumed(tokens: u64, family: &'static str) -> ContextWindow {
        ContextWindow::Assumed { tokens, family }
    }

    #[test]
    fn known_names_are_exact() {
        assert_eq!(of("gpt-4o-mini"), ContextWindow::Exact(128_000));
        assert_eq!(of("gpt-4"), ContextWindow::Exact(8_192));
        assert_eq!(of("GPT-4-32k-0613"), ContextWindow::Exact(32_768));
        assert_eq!(of("gpt-4.1-nano"), ContextWindow::Exact(1_047_576));
        assert_eq!(of("o1-preview"), ContextWindow::Exact(128_000));
        assert_eq!(
            of("ft:gpt-3.5-turbo:acme::abc"),
            ContextWindow::Exact(16_385)
        );
    }

    #[test]
    fn other_names_of_a_family_are_assumed_by_the_longest_prefix() {
        assert_eq!(of("gpt-4-foo"), assumed(8_192, "gpt-4"));
        assert_eq!(of("gpt-4o-2024-08-06"), assumed(128_000, "gpt-4o"));
        assert_eq!(of("o1-mini-2024-09-12"), assumed(128_000, "o1-mini"));
        assert_eq!(of("claude-made-up"), assumed(200_000, "claude"));
        assert_eq!(of("gpt-4-foo").fields().context_window_source, "assumed");
    }

    #[test]
    fn unknown_models_have_no_window_and_say_how_to_set_one() {
        assert_eq!(of("my-local-model"), ContextWindow::Unknown);
        let fields = of("my-local-model").fields();
        assert_eq!(
            (fields.context_window, fields.context_window_source),
            (None, "unknown")
        );
        let advice = of("my-local-model").advice("my-local-model").unwrap();
        assert!(advice.contains(CONTEXT_WINDOWS_SETTING), "{advice}");
    }

    #[test]
    fn a_configured_window_wins() {
        let configured = BTreeMap::from([
            ("my-local-model".to_owned(), 32_000),
            ("gpt-4".to_owned(), 9_000),
        ]);
        assert_eq!(
            ContextWindow::of("my-local-model", &configured),
            ContextWindow::Setting(32_000)
        );
        assert_eq!(
            ContextWindow::of("gpt-4", &configured),
            ContextWindow::Setting(9_000)
        );
        assert_eq!(
            ContextWindow::of("gpt-4o", &configured),
            ContextWindow::Exact(128_000)
        );
        assert_eq!(ContextWindow::Setting(1).advice("m"), None);
    }
}
