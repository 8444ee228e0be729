//! Configuration: the embedded default (`config.toml`), a user file that overrides it, then the
//! environment and flags for the database URL.

//!
//! The parts: the file's sections (`sections`), the files merged and checked (`merge`), the
//! configuration in effect with its precedence (`resolve`), and the errors (`error`).

mod error;
mod merge;
mod resolve;
mod sections;

pub use error::ConfigError;
pub use merge::{DEFAULT_CONFIG, THEMES, merge};
pub use resolve::{
    DATABASE_URL_ENV, Dirs, Overrides, Resolved, StorageOrigin, UrlOrigin, database_url, resolve,
    sqlite_url,
};
pub use sections::{
    Config, DatabaseConfig, DifyConfig, HistoryConfig, MemoryBasesConfig, StorageConfig,
    SummarizerConfig, SummarizerKindConfig, TokensConfig, UiConfig,
};
