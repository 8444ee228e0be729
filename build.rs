//! Lays out each encoding's ranks as tables the tokenizer reads in place from the binary, so
//! that no process ever parses or hashes a vocabulary at start-up.
//!
//! The ranks come from tiktoken-rs's copies of OpenAI's `.tiktoken` files. One file per
//! encoding, little-endian `u32`s then bytes (see `src/memory/tokens/bpe.rs`, which reads it):
//! a header `[tokens, token_bytes, slot_bits]`, `tokens + 1` start offsets of each rank's
//! bytes, an open-addressing table of `1 << slot_bits` ranks keyed by [`table_hash::hash`],
//! the rank of every two-byte token indexed by `first << 8 | second`, then the token bytes.

use std::collections::HashSet;
use std::path::PathBuf;

#[path = "src/memory/tokens/table_hash.rs"]
mod table_hash;

use table_hash::EMPTY;

/// Ranks past the last token before the scan of an encoding stops.
const RANK_GAP_LIMIT: u32 = 4096;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/memory/tokens/table_hash.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for name in ["cl100k_base", "o200k_base", "p50k_base", "r50k_base"] {
        let bpe = match name {
            "cl100k_base" => tiktoken_rs::cl100k_base(),
            "o200k_base" => tiktoken_rs::o200k_base(),
            "p50k_base" => tiktoken_rs::p50k_base(),
            _ => tiktoken_rs::r50k_base(),
        }
        .unwrap_or_else(|e| panic!("tiktoken-rs cannot build {name}: {e}"));
        let table = layout(&tokens_by_rank(&bpe));
        std::fs::write(out.join(format!("{name}.ranks")), table)
            .unwrap_or_else(|e| panic!("cannot write the {name} table: {e}"));
    }
}

/// Every ordinary token's bytes, indexed by rank; ranks without a token hold no bytes.
fn tokens_by_rank(bpe: &tiktoken_rs::CoreBPE) -> Vec<Vec<u8>> {
    let specials: HashSet<Vec<u8>> = bpe
        .special_tokens()
        .into_iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
    let mut tokens: Vec<Vec<u8>> = Vec::new();
    let mut rank = 0u32;
    while rank - (tokens.len() as u32) < RANK_GAP_LIMIT {
        if let Ok(bytes) = bpe.decode_bytes(&[rank]) {
            if !specials.contains(&bytes) {
                tokens.resize(rank as usize, Vec::new());
                tokens.push(bytes);
            }
        }
        rank += 1;
    }
    tokens
}

fn layout(tokens: &[Vec<u8>]) -> Vec<u8> {
    let present = tokens.iter().filter(|t| !t.is_empty()).count();
    // At most half full, so that a miss stops after a probe or two.
    let bits = (2 * present).next_power_of_two().trailing_zeros();
    let mask = (1usize << bits) - 1;
    let mut slots = vec![EMPTY; 1 << bits];
    let mut pairs = vec![EMPTY; 1 << 16];
    let mut seen = HashSet::new();
    for (rank, bytes) in tokens.iter().enumerate() {
        if bytes.is_empty() {
            continue;
        }
        assert!(seen.insert(bytes), "two ranks share the bytes {bytes:?}");
        let rank = rank as u32;
        let mut slot = table_hash::first_slot(table_hash::hash(bytes), bits);
        while slots[slot] != EMPTY {
            slot = (slot + 1) & mask;
        }
        slots[slot] = rank;
        if let [first, second] = bytes[..] {
            pairs[usize::from(first) << 8 | usize::from(second)] = rank;
        }
    }
    for byte in 0..=255u8 {
        assert!(seen.contains(&vec![byte]), "byte {byte} has no token");
    }
    let token_bytes: usize = tokens.iter().map(Vec::len).sum();
    let mut out = Vec::new();
    let mut push = |value: u32| out.extend_from_slice(&value.to_le_bytes());
    push(tokens.len() as u32);
    push(token_bytes as u32);
    push(bits);
    let mut start = 0u32;
    push(start);
    for bytes in tokens {
        start += bytes.len() as u32;
        push(start);
    }
    for value in slots.into_iter().chain(pairs) {
        push(value);
    }
    for bytes in tokens {
        out.extend_from_slice(bytes);
    }
    out
}
