//! Byte-pair merging over rank tables laid out by the build script, read in place.
//!
//! The tables are part of the binary: looking a token up hashes its bytes, probes an
//! open-addressing table and compares bytes, with nothing built at run time. Merging follows
//! tiktoken's `byte_pair_encode` exactly: a piece that is a token is one token; otherwise the
//! adjacent pair with the lowest rank merges first, the leftmost among equals, until no pair
//! is a token. Only counts are kept.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::table_hash::{self, EMPTY};

/// Pieces this long or longer merge through a heap instead of rescanning every pair.
const LARGE_PIECE: usize = 100;

/// One encoding's ranks, borrowed from the bytes the build script wrote.
pub(super) struct Ranks {
    starts: &'static [u8],
    slots: &'static [u8],
    pairs: &'static [u8],
    bytes: &'static [u8],
    bits: u32,
}

fn word(data: &[u8], index: usize) -> u32 {
    let at = index * 4;
    u32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]])
}

impl Ranks {
    /// Borrows a table in the build script's layout; only its three-word header is read.
    pub(super) fn new(table: &'static [u8]) -> Ranks {
        let tokens = word(table, 0) as usize;
        let token_bytes = word(table, 1) as usize;
        let bits = word(table, 2);
        let (starts, rest) = table[12..].split_at(4 * (tokens + 1));
        let (slots, rest) = rest.split_at(4 << bits);
        let (pairs, bytes) = rest.split_at(4 << 16);
        assert_eq!(bytes.len(), token_bytes, "the rank table is truncated");
        Ranks {
            starts,
            slots,
            pairs,
            bytes,
            bits,
        }
    }

    fn token(&self, rank: u32) -> &'static [u8] {
        let rank = rank as usize;
        &self.bytes[word(self.starts, rank) as usize..word(self.starts, rank + 1) as usize]
    }

    /// The rank of the token spelled by `bytes`, or [`EMPTY`] when no token is.
    #[inline]
    pub(super) fn rank(&self, bytes: &[u8]) -> u32 {
        if let [first, second] = bytes {
            return word(self.pairs, usize::from(*first) << 8 | usize::from(*second));
        }
        let mask = (1usize << self.bits) - 1;
        let mut slot = table_hash::first_slot(table_hash::hash(bytes), self.bits);
        loop {
            let rank = word(self.slots, slot);
            if rank == EMPTY || self.token(rank) == bytes {
                return rank;
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Tokens in one pre-tokenized piece. `parts` is scratch space, reused between calls.
    pub(super) fn count_piece(&self, piece: &[u8], parts: &mut Vec<(usize, u32)>) -> usize {
        if piece.len() <= 1 || self.rank(piece) != EMPTY {
            return piece.len().min(1);
        }
        if piece.len() < LARGE_PIECE {
            self.merge_small(piece, parts)
        } else {
            self.merge_large(piece)
        }
    }

    /// tiktoken's `_byte_pair_merge`: `parts` holds each part's start and the rank of the pair
    /// it starts; each round merges the leftmost lowest-ranked pair.
    fn merge_small(&self, piece: &[u8], parts: &mut Vec<(usize, u32)>) -> usize {
        parts.clear();
        let mut min = (EMPTY, usize::MAX);
        for i in 0..piece.len() - 1 {
            let rank = self.rank(&piece[i..i + 2]);
            if rank < min.0 {
                min = (rank, i);
            }
            parts.push((i, rank));
        }
        parts.push((piece.len() - 1, EMPTY));
        parts.push((piece.len(), EMPTY));
        // The rank of the pair starting at part i once parts i+1 and i+2 are one part; part
        // i+1 is still in place when this runs.
        let rank_after_merge = |parts: &[(usize, u32)], i: usize| {
            if i + 3 < parts.len() {
                self.rank(&piece[parts[i].0..parts[i + 3].0])
            } else {
                EMPTY
            }
        };
        while min.0 != EMPTY {
            let i = min.1;
            if i > 0 {
                parts[i - 1].1 = rank_after_merge(parts, i - 1);
            }
            parts[i].1 = rank_after_merge(parts, i);
            parts.remove(i + 1);
            min = (EMPTY, usize::MAX);
            for (i, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
                if rank < min.0 {
                    min = (rank, i);
                }
            }
        }
        parts.len() - 1
    }

    /// The same merges in O(n log n) for long pieces: parts form a linked list by start
    /// offset, and candidate pairs wait in a heap ordered by (rank, start), so the leftmost
    /// lowest rank comes out first. An entry is stale once either of its parts has changed,
    /// which shows as a different end of the pair.
    fn merge_large(&self, piece: &[u8]) -> usize {
        let n = piece.len();
        // next[i]: start of the part after the one starting at i; prev[i]: before it.
        let mut next: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut heap = BinaryHeap::with_capacity(n);
        for i in 0..n - 1 {
            let rank = self.rank(&piece[i..i + 2]);
            if rank != EMPTY {
                heap.push(Reverse((rank, i, i + 2)));
            }
        }
        let mut parts = n;
        let pair_end = |next: &[usize], start: usize| next.get(next[start]).copied();
        while let Some(Reverse((_, start, end))) = heap.pop() {
            if next[start] == usize::MAX || pair_end(&next, start) != Some(end) {
                continue;
            }
            let right = next[start];
            next[start] = end;
            next[right] = usize::MAX;
            if end < n {
                prev[end] = start;
            }
            parts -= 1;
            for left in [prev[start], start] {
                if left == usize::MAX {
                    continue;
                }
                if let Some(end) = pair_end(&next, left) {
                    let rank = self.rank(&piece[left..end]);
                    if rank != EMPTY {
                        heap.push(Reverse((rank, left, end)));
                    }
                }
            }
        }
        parts
    }
}
