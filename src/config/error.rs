//! What goes wrong reading the configuration, with the file, line and column at fault.

use std::path::PathBuf;

use crate::storage::dify_env::DifyEnvError;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {path}{}: {message}", at_line(*line_column))]
    Invalid {
        path: PathBuf,
        /// Where in the file, 1-based, when the problem has a place.
        line_column: Option<(usize, usize)>,
        message: String,
    },
    #[error("no home directory: cannot place memscope's data and config directories")]
    NoHome,
    #[error(transparent)]
    Dify(#[from] DifyEnvError),
    #[error("[storage] {0}")]
    Storage(String),
}

fn at_line(line_column: Option<(usize, usize)>) -> String {
    line_column.map_or_else(String::new, |(line, column)| {
        format!(", line {line}, column {column}")
    })
}
