//! Which agent ADK 2.13's runner picks to continue a session (`agents/_agent_router.py::
//! find_agent_to_run`), read from the events alone, and the branch its invocation runs on. The
//! agent tree lives in the app's code, not in the database, so every agent that spoke is taken to
//! be able to transfer (ADK's default); the root is the agent that spoke first. Pure.

use super::contents::apply_rewinds;
use super::event::Event;

/// The agents of a session, in the order they first spoke (or were transferred to).
pub fn agents(events: &[Event]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for event in events {
        for name in [Some(event.author.as_str()), event.transfer_to()]
            .into_iter()
            .flatten()
        {
            if name != "user" && !name.is_empty() && !names.iter().any(|n| n == name) {
                names.push(name.to_owned());
            }
        }
    }
    names
}

/// The agent that answers the next message: the author of the call a trailing tool result
/// answers; else, newest first, the target of a transfer or the agent that replied; else the
/// root.
pub fn continuing(events: &[Event]) -> Option<String> {
    let mut scratch = Default::default();
    let live = apply_rewinds(events, &mut scratch);
    if let Some(last) = live.last()
        && last.author == "user"
    {
        for (id, _) in last.responses() {
            let Some(id) = id.filter(|i| !i.is_empty()) else {
                continue;
            };
            if let Some(call) = live
                .iter()
                .rev()
                .find(|e| e.calls().iter().any(|(c, _)| *c == Some(id)))
            {
                return Some(call.author.clone());
            }
        }
    }
    for event in live.iter().rev() {
        if event.author == "user"
            || event.action("agent_state").is_some()
            || event
                .action("end_of_agent")
                .and_then(|v| v.as_bool())
                .unwrap_or(false)
            || (event.error_code.is_some() && event.parts().is_empty())
        {
            continue;
        }
        if let Some(target) = event.transfer_to() {
            return Some(target.to_owned());
        }
        return Some(event.author.clone());
    }
    agents(events).into_iter().next()
}

/// The branch `agent`'s invocation continues on: that of its latest event.
pub fn branch_of<'e>(events: &'e [Event], agent: &str) -> Option<&'e str> {
    events
        .iter()
        .rev()
        .find(|e| e.author == agent)
        .and_then(|e| e.branch.as_deref())
}
