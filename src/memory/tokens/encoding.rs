//! The four OpenAI encodings, tiktoken's model → encoding table, and process-wide tokenizers.
//!
//! Each encoding's ranks are tables laid out at build time and read in place from the binary
//! (see `bpe.rs`), so a tokenizer costs only the compilation of its pre-tokenizer pattern,
//! once per process, on first use or by [`preload`]. Counts are tiktoken's, token for token.
//!
//! All counts are *ordinary* counts: special-token text such as `<|endoftext|>` is counted as
//! plain text. Python tiktoken's `encode()` raises on such text instead; Dify would then fail
//! the whole count, which an inspector has no use for.

use std::sync::OnceLock;

use super::bpe::Ranks;
pub use super::encoding_names::Encoding;
use super::parallel::map_in_place;
use super::pretokenize::Pretokenizer;
use super::split::split_safely;

/// Texts at least this long are worth counting on several threads.
pub const PARALLEL_TEXT_BYTES: usize = 1 << 20;
/// Slices per thread when a long text is cut, so that a slow slice evens out.
const SLICES_PER_THREAD: usize = 4;

impl Encoding {
    /// Tokens of `text`. Builds the tokenizer first if no one has yet (see [`preload`]).
    pub fn count(self, text: &str) -> usize {
        tokenizer(self).count(text)
    }

    /// [`count`](Self::count) on up to `threads` threads: a text of a megabyte or more is cut
    /// where cutting does not change its count, and the slices are counted in parallel.
    pub fn count_on(self, text: &str, threads: usize) -> usize {
        if threads < 2 || text.len() < PARALLEL_TEXT_BYTES {
            return self.count(text);
        }
        let tokenizer = tokenizer(self);
        let slices = split_safely(text, threads * SLICES_PER_THREAD);
        let mut counts = vec![0; slices.len()];
        map_in_place(&slices, &mut counts, threads, 1, |slice| {
            tokenizer.count(slice)
        });
        counts.iter().sum()
    }
}

/// One encoding's tokenizer: rank tables borrowed from the binary and a compiled pattern.
/// [`Encoding::count`] keeps one per encoding for the whole process; building another is
/// only useful to measure what building costs.
pub struct Tokenizer {
    ranks: Ranks,
    pieces: Pretokenizer,
}

impl Tokenizer {
    /// Compiles the encoding's pre-tokenizer pattern; the rank tables need no building.
    pub fn new(encoding: Encoding) -> Tokenizer {
        let table: &'static [u8] = match encoding {
            Encoding::Cl100kBase => include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.ranks")),
            Encoding::O200kBase => include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.ranks")),
            Encoding::P50kBase => include_bytes!(concat!(env!("OUT_DIR"), "/p50k_base.ranks")),
            Encoding::R50kBase => include_bytes!(concat!(env!("OUT_DIR"), "/r50k_base.ranks")),
        };
        Tokenizer {
            ranks: Ranks::new(table),
            pieces: Pretokenizer::new(encoding),
        }
    }

    /// Tokens of `text`, as [`Encoding::count`].
    pub fn count(&self, text: &str) -> usize {
        let mut parts = Vec::new();
        let mut tokens = 0;
        self.pieces.for_each_piece(text, |piece| {
            tokens += self.ranks.count_piece(piece, &mut parts)
        });
        tokens
    }
}

/// One slot per encoding, in [`Encoding::ALL`] order. A slot is filled only once its tokenizer
/// is fully built, which is what [`is_loaded`] reports.
static TOKENIZERS: [OnceLock<Tokenizer>; 4] = [
    OnceLock::new(),
    OnceLock::new(),
    OnceLock::new(),
    OnceLock::new(),
];

fn tokenizer(encoding: Encoding) -> &'static Tokenizer {
    TOKENIZERS[encoding as usize].get_or_init(|| Tokenizer::new(encoding))
}

/// Builds the tokenizer now, so that the first count does not pay for it. Blocks until it is
/// ready; meant for a background task at start-up. Cheap once loaded.
pub fn preload(encoding: Encoding) {
    tokenizer(encoding);
}

/// Whether the tokenizer is ready, so a UI can say "loading tokenizer" instead of stalling.
pub fn is_loaded(encoding: Encoding) -> bool {
    TOKENIZERS[encoding as usize].get().is_some()
}

/// Exact model names, from tiktoken 0.14's `MODEL_TO_ENCODING` (names covered by a prefix
/// below are left out). `p50k_edit` models map to p50k_base: same ranks and pattern, so the
/// same ordinary counts.
const MODEL_TO_ENCODING: &[(&str, Encoding)] = &[
    ("davinci-002", Encoding::Cl100kBase),
    ("babbage-002", Encoding::Cl100kBase),
    ("text-embedding-ada-002", Encoding::Cl100kBase),
    ("text-embedding-3-small", Encoding::Cl100kBase),
    ("text-embedding-3-large", Encoding::Cl100kBase),
    ("text-davinci-003", Encoding::P50kBase),
    ("text-davinci-002", Encoding::P50kBase),
    ("text-davinci-001", Encoding::R50kBase),
    ("text-curie-001", Encoding::R50kBase),
    ("text-babbage-001", Encoding::R50kBase),
    ("text-ada-001", Encoding::R50kBase),
    ("davinci", Encoding::R50kBase),
    ("curie", Encoding::R50kBase),
    ("babbage", Encoding::R50kBase),
    ("ada", Encoding::R50kBase),
    ("code-davinci-002", Encoding::P50kBase),
    ("code-davinci-001", Encoding::P50kBase),
    ("code-cushman-002", Encoding::P50kBase),
    ("code-cushman-001", Encoding::P50kBase),
    ("davinci-codex", Encoding::P50kBase),
    ("cushman-codex", Encoding::P50kBase),
    ("text-davinci-edit-001", Encoding::P50kBase),
    ("code-davinci-edit-001", Encoding::P50kBase),
    ("text-similarity-davinci-001", Encoding::R50kBase),
    ("text-similarity-curie-001", Encoding::R50kBase),
    ("text-similarity-babbage-001", Encoding::R50kBase),
    ("text-similarity-ada-001", Encoding::R50kBase),
    ("text-search-davinci-doc-001", Encoding::R50kBase),
    ("text-search-curie-doc-001", Encoding::R50kBase),
    ("text-search-babbage-doc-001", Encoding::R50kBase),
    ("text-search-ada-doc-001", Encoding::R50kBase),
    ("code-search-babbage-code-001", Encoding::R50kBase),
    ("code-search-ada-code-001", Encoding::R50kBase),
    ("gpt2", Encoding::R50kBase),
    ("gpt-2", Encoding::R50kBase),
];

/// Model families by prefix, first match wins, so the o200k `gpt-4.x`/`gpt-4o` families come
/// before `gpt-4`. A superset of tiktoken's `MODEL_PREFIX_TO_ENCODING`, widened to whole
/// families (tiktoken knows `o1` and `o1-…` but not `o1pro`). Dify's classic formula aliases
/// `chatgpt-4o-latest`, `o1*`, `o3*`, `o4*`, `gpt-4.1*` and `gpt-4.5*` to gpt-4o before the
/// lookup; every one of those already lands on o200k_base here. `gpt-oss` uses o200k_harmony,
/// whose ordinary tokens are o200k_base's.
const MODEL_PREFIX_TO_ENCODING: &[(&str, Encoding)] = &[
    ("o1", Encoding::O200kBase),
    ("o3", Encoding::O200kBase),
    ("o4", Encoding::O200kBase),
    ("gpt-5", Encoding::O200kBase),
    ("gpt-4.5", Encoding::O200kBase),
    ("gpt-4.1", Encoding::O200kBase),
    ("gpt-4o", Encoding::O200kBase),
    ("chatgpt-4o", Encoding::O200kBase),
    ("codex-mini", Encoding::O200kBase),
    ("gpt-oss", Encoding::O200kBase),
    ("gpt-4", Encoding::Cl100kBase),
    ("gpt-3.5", Encoding::Cl100kBase),
    ("gpt-35-turbo", Encoding::Cl100kBase),
];

/// The model a fine-tuned name is based on (`ft:gpt-4o-mini:org::id` → `gpt-4o-mini`), as Dify
/// takes it: the text between the first and second colon.
pub fn base_model(model: &str) -> &str {
    match model.strip_prefix("ft:") {
        Some(rest) => rest.split(':').next().unwrap_or(rest),
        None => model,
    }
}

/// tiktoken's `encoding_for_model`, after Dify's `ft:` handling. `None` for an unknown model:
/// each counter then picks its own fallback, as Dify does.
pub fn encoding_for_model(model: &str) -> Option<Encoding> {
    let model = base_model(model);
    MODEL_TO_ENCODING
        .iter()
        .find(|(name, _)| *name == model)
        .or_else(|| {
            MODEL_PREFIX_TO_ENCODING
                .iter()
                .find(|(prefix, _)| model.starts_with(prefix))
        })
        .map(|&(_, encoding)| encoding)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::tokens::error::TokensError;

    #[test]
    fn names_round_trip_and_gpt2_is_r50k() {
        for encoding in Encoding::ALL {
            assert_eq!(encoding.name().parse::<Encoding>().unwrap(), encoding);
            assert_eq!(encoding.to_string(), encoding.name());
        }
        assert_eq!("gpt2".parse::<Encoding>().unwrap(), Encoding::R50kBase);
        assert!(matches!(
            "cl100k".parse::<Encoding>(),
            Err(TokensError::UnknownEncoding(name)) if name == "cl100k"
        ));
    }

    #[test]
    fn model_table_follows_tiktoken_and_dify() {
        let cases = [
            ("gpt-4o", Some(Encoding::O200kBase)),
            ("gpt-4o-mini-2024-07-18", Some(Encoding::O200kBase)),
            ("gpt-4.1-nano", Some(Encoding::O200kBase)),
            ("gpt-4.5-preview", Some(Encoding::O200kBase)),
            ("gpt-5", Some(Encoding::O200kBase)),
            ("gpt-5.4-mini", Some(Encoding::O200kBase)),
            ("o1", Some(Encoding::O200kBase)),
            ("o1-preview", Some(Encoding::O200kBase)),
            ("o3-mini", Some(Encoding::O200kBase)),
            ("o4-mini", Some(Encoding::O200kBase)),
            ("chatgpt-4o-latest", Some(Encoding::O200kBase)),
            ("gpt-oss-120b", Some(Encoding::O200kBase)),
            ("gpt-4", Some(Encoding::Cl100kBase)),
            ("gpt-4-turbo", Some(Encoding::Cl100kBase)),
            ("gpt-4-32k-0314", Some(Encoding::Cl100kBase)),
            ("gpt-3.5-turbo", Some(Encoding::Cl100kBase)),
            ("gpt-3.5-turbo-0301", Some(Encoding::Cl100kBase)),
            ("gpt-35-turbo-16k", Some(Encoding::Cl100kBase)),
            ("text-embedding-3-small", Some(Encoding::Cl100kBase)),
            ("davinci-002", Some(Encoding::Cl100kBase)),
            ("text-davinci-003", Some(Encoding::P50kBase)),
            ("text-davinci-002", Some(Encoding::P50kBase)),
            ("code-davinci-edit-001", Some(Encoding::P50kBase)),
            ("text-davinci-001", Some(Encoding::R50kBase)),
            ("davinci", Some(Encoding::R50kBase)),
            ("gpt2", Some(Encoding::R50kBase)),
            (
                "ft:gpt-4o-mini-2024-07-18:acme::abc123",
                Some(Encoding::O200kBase),
            ),
            (
                "ft:gpt-3.5-turbo-0613:personal::8abc",
                Some(Encoding::Cl100kBase),
            ),
            ("ft:davinci-002:acme", Some(Encoding::Cl100kBase)),
            ("claude-3-5-sonnet", None),
            ("davinci-003", None),
            ("", None),
            ("ft:", None),
        ];
        for (model, expected) in cases {
            assert_eq!(encoding_for_model(model), expected, "{model}");
        }
    }

    #[test]
    fn base_model_takes_the_second_field_of_fine_tuned_names() {
        assert_eq!(base_model("ft:gpt-4o:org:custom:id"), "gpt-4o");
        assert_eq!(base_model("ft:gpt-4o"), "gpt-4o");
        assert_eq!(base_model("gpt-4o"), "gpt-4o");
    }

    #[test]
    fn counting_loads_once_and_reports_it() {
        // Tests share the process, so another may have loaded it first; either way a count
        // leaves it loaded.
        let encoding = Encoding::R50kBase;
        assert_eq!(encoding.count("hello world"), 2);
        assert!(is_loaded(encoding));
        preload(encoding);
        assert!(is_loaded(encoding));
    }

    #[test]
    fn ordinary_counts_treat_special_token_text_as_text() {
        for encoding in [Encoding::Cl100kBase, Encoding::O200kBase] {
            assert!(encoding.count("<|endoftext|>") > 1, "{encoding}");
        }
    }
}
