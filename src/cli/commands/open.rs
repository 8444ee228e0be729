//! `open`: the terminal UI, started on one conversation, session or thread. The id is looked up
//! before the screen is taken, with the reads `thread` and `history` use, so an unknown id fails
//! as they do (exit 3, the same message and hint) and the terminal is never touched.

use crate::cli::output::CliResult;
use crate::inspect::document::conversations_of;
use crate::store::Store;

/// The whole id `given` names in `store`: a Dify conversation by its id or a unique prefix, a
/// Langflow session or a LangGraph thread by its id.
pub async fn resolve(store: &Store, given: &str) -> CliResult<String> {
    let source = conversations_of(store)?;
    Ok(source.resolve(store, given).await?)
}
