//! The hash shared by the build script, which lays out the token tables, and the tokenizer,
//! which probes them in place. Both sides must agree bit for bit, so this file has no
//! dependencies and is compiled into both.

/// A slot no token occupies.
pub const EMPTY: u32 = u32::MAX;

const K: u64 = 0x517c_c1b7_2722_0a95;

/// A 64-bit hash of a token's bytes: eight bytes at a time, then the length.
#[inline]
pub fn hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    (h.rotate_left(5) ^ bytes.len() as u64).wrapping_mul(K)
}

/// The first slot to probe in a table of `1 << bits` slots: the hash's well-mixed high bits.
#[inline]
pub fn first_slot(hash: u64, bits: u32) -> usize {
    (hash >> (64 - bits)) as usize
}
