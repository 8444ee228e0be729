//! Token counting: encodings, the counters Dify uses, and a per-message count cache.
