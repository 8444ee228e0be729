//! Deterministic demo data that tells an operator's story.
