//! The configuration file's sections, as `config.toml` documents them.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub database: DatabaseConfig,
    pub storage: StorageConfig,
    pub memory_bases: MemoryBasesConfig,
    pub tokens: TokensConfig,
    pub history: HistoryConfig,
    pub ui: UiConfig,
    pub summarizer: SummarizerConfig,
    pub dify: DifyConfig,
    /// The TUI keymap: `[keys.<context>]` tables of `"key" = { action, desc }`.
    pub keys: toml::Table,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseConfig {
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorageConfig {
    pub root: String,
    pub kb_root: String,
    /// `""` (Dify's settings when given, else `fs`), `fs`, `s3` or another OpenDAL scheme.
    pub service: String,
    pub bucket: String,
    pub region: String,
    pub endpoint: String,
    pub address_style: String,
    pub prefix: String,
    pub access_key_id: String,
    pub secret_access_key: String,
    /// Options of another OpenDAL service, as OpenDAL names them.
    pub options: std::collections::BTreeMap<String, String>,
}

/// `[dify]`: Dify's own settings file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DifyConfig {
    pub env_file: String,
}

/// `[memory_bases]`: embedders, leases and the watcher (the KB root is `[storage] kb_root`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryBasesConfig {
    pub embedding_model: String,
    /// Empty: no embeddings server.
    pub embeddings_url: String,
    pub embeddings_dimension: usize,
    pub embeddings_batch: usize,
    pub embeddings_timeout_secs: u64,
    pub embeddings_retries: u32,
    pub embeddings_api_key_env: String,
    pub lease_secs: u64,
    pub batch_messages: i64,
    pub watch_interval_secs: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokensConfig {
    pub model: String,
    pub counter: String,
    pub encoding: String,
    pub budget: i64,
    /// Context windows by exact model name: they win over memscope's own table and its
    /// guesses by model family.
    pub context_windows: std::collections::BTreeMap<String, u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryConfig {
    pub message_limit: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UiConfig {
    /// `dark` or `light`.
    pub theme: String,
    pub mouse: bool,
}

/// Which summarizer writes trim summaries, and how it is reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummarizerConfig {
    /// `extractive` (offline, the default) or `chat-completions`.
    pub kind: SummarizerKindConfig,
    /// An OpenAI-compatible API root; `/chat/completions` is appended.
    pub base_url: String,
    pub model: String,
    /// Name of the environment variable holding the API key (never the key itself).
    pub api_key_env: String,
    pub timeout_seconds: u64,
    /// The rules a summary follows when a policy names none; empty: seed 004's default.
    pub summarize_prompt: String,
    /// `max_tokens` asked of the endpoint; 0: the policy's `summary_max_tokens`.
    pub max_tokens: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SummarizerKindConfig {
    Extractive,
    ChatCompletions,
}

impl SummarizerConfig {
    /// The configured rules, `None` when empty (the policy's own or seed 004's apply).
    pub fn default_prompt(&self) -> Option<&str> {
        Some(self.summarize_prompt.as_str()).filter(|p| !p.trim().is_empty())
    }
}
