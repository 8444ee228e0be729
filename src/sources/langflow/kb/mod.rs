//! Langflow's own knowledge bases: the `vectors.sqlite3` layout read (`read.rs`) and written
//! (`store.rs`), its pgvector tables (`pgvector.rs`), the paths and backend names both share
//! (`layout.rs`), and which of them a base's row names (`vectors.rs`). They use the shared
//! vector-store types of `kb/`; `kb/` knows nothing of them.

pub mod layout;
pub mod pgvector;
pub mod read;
pub mod store;
pub mod vectors;
