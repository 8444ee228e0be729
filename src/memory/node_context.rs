//! Node-level memory of a chatflow's LLM nodes (reference §3): the design-A file in object
//! storage, design B's `outputs["context"]`, and the prompts a node actually sent
//! (`process_data["prompts"]`), each parsed into prompt messages.
//!
//! Pure and total: any bytes parse. What cannot be read becomes a per-item [`NodeProblem`] and
//! the rest of the context still shows.

//!
//! The parts: what parsing gives (`parsed`), the thread's turns (`turns`), the item readers
//! (`items`), design B and the prompts (`outputs`), design A's file (`memory_file`) and where
//! the two disagree (`compare`).

mod compare;
mod items;
mod memory_file;
mod outputs;
mod parsed;
mod turns;

pub use compare::{Disagreement, compare_turn, outputs_turn_text};
pub use memory_file::{
    FileHistory, MemoryEntry, MemoryFile, MemoryLayout, MemoryTurn, TurnText, parse_memory_file,
};
pub use outputs::{OutputsContext, parse_outputs, parse_prompts};
pub use parsed::{NodeMessage, NodeProblem, ParsedMessages};
pub use turns::{ThreadTurn, thread_turns};

#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod tests;
