//! The four OpenAI encodings by name: what the tokenizers ([`super::encoding`]) and the
//! pre-tokenizer patterns ([`super::pretokenize`]) are chosen by.

use std::fmt;
use std::str::FromStr;

use super::error::TokensError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Encoding {
    Cl100kBase,
    O200kBase,
    P50kBase,
    /// Also known as `gpt2`.
    R50kBase,
}

impl Encoding {
    pub const ALL: [Encoding; 4] = [
        Encoding::Cl100kBase,
        Encoding::O200kBase,
        Encoding::P50kBase,
        Encoding::R50kBase,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Encoding::Cl100kBase => "cl100k_base",
            Encoding::O200kBase => "o200k_base",
            Encoding::P50kBase => "p50k_base",
            Encoding::R50kBase => "r50k_base",
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Encoding {
    type Err = TokensError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cl100k_base" => Ok(Encoding::Cl100kBase),
            "o200k_base" => Ok(Encoding::O200kBase),
            "p50k_base" => Ok(Encoding::P50kBase),
            "r50k_base" | "gpt2" => Ok(Encoding::R50kBase),
            _ => Err(TokensError::UnknownEncoding(s.to_owned())),
        }
    }
}
