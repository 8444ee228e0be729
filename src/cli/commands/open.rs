//! `open`: the terminal UI, started on one conversation, session or thread. The id is looked up
//! before the screen is taken, with the reads `thread` and `history` use, so an unknown id fails
//! as they do (exit 3, the same message and hint) and the terminal is never touched.

use crate::cli::output::{CliError, CliResult};
use crate::inspect::conversation::conversation_info;
use crate::sources::conversation::{SourceOptions, TreeRequest};
use crate::sources::langflow::messages::{FlowChoiceError, session_flows};
use crate::store::{ConversationShape, Part, Store};

/// The whole id `given` names in `store`: a Dify conversation by its id or a unique prefix, a
/// Langflow session or a LangGraph thread by its id.
pub async fn resolve(store: &Store, given: &str) -> CliResult<String> {
    match store.profile().capabilities().conversations {
        ConversationShape::RegenerationTrees => {
            store.require(Part::Conversations)?;
            Ok(conversation_info(store, given).await?.id)
        }
        ConversationShape::FlowSessions => {
            // A session in several flows is opened on its flows; only an unknown one fails.
            let flows = session_flows(store, given).await?;
            match flows.choose(None) {
                Err(error @ FlowChoiceError::UnknownSession { .. }) => {
                    Err(CliError::not_found(error.to_string()))
                }
                _ => Ok(given.to_owned()),
            }
        }
        ConversationShape::CheckpointThreads => {
            let request = TreeRequest {
                id: given.to_owned(),
                options: SourceOptions::default(),
                defaults: SourceOptions::default(),
            };
            crate::inspect::tree::thread(store, &request).await?;
            Ok(given.to_owned())
        }
    }
}
