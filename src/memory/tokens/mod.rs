//! Token counting: encodings, the counters Dify uses, and a per-message count cache.
//!
//! - [`Encoding`]: the four OpenAI encodings, with process-wide tokenizers that load once
//!   ([`preload`], [`is_loaded`]) and tiktoken's model table ([`encoding_for_model`]).
//! - [`TokenCounter`]: one of Dify's counters ([`CounterKind`]) bound to an encoding. It counts
//!   per message ([`MessageTokens`](crate::memory::budget::MessageTokens)), and those counts
//!   add up exactly to its count of the whole list.
//! - [`CountCache`]: per-message counts keyed by counter and content hash, so recounting a
//!   thread after a change only tokenizes the messages that changed.
//! - [`corpus`]: a deterministic mixed-text generator for tests and benchmarks.

mod bpe;
mod cache;
pub mod corpus;
mod counter;
mod encoding;
mod encoding_names;
mod error;
mod parallel;
mod pretokenize;
mod python_repr;
mod split;
mod table_hash;

pub use cache::{CacheStats, CountCache};
pub use counter::{ChatMlOverhead, CounterFields, CounterId, CounterKind, TokenCounter};
pub use encoding::{Encoding, Tokenizer, base_model, encoding_for_model, is_loaded, preload};
pub use error::TokensError;
/// Python's `repr()` of a `str`: Google ADK quotes tool arguments and results as Python prints them.
pub use python_repr::push_str_repr;
