//! Which agent ADK 2.13's runner picks to continue a session (`agents/_agent_router.py::
//! find_agent_to_run`), read from the events alone, and the branch its invocation runs on. The
//! agent tree lives in the app's code, not in the database, so every agent that spoke is taken to
//! be able to transfer (ADK's default); the root is the agent that spoke first. Pure.

use super::contents::apply_rewinds;
use super::event::Event;

/// The agents of a session, in the order they first spoke (or were transferred to).
pub fn agents(events: &[Event]) -> Vec<String> {
    agents_named(events.iter().map(|e| (e.author.as_str(), e.transfer_to())))
}

/// The agents named by each event's author and the agent it transfers to, in order: the
/// sessions list's, from glances at its events.
pub fn agents_named<'a>(named: impl Iterator<Item = (&'a str, Option<&'a str>)>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (author, transfer_to) in named {
        for name in [Some(author), transfer_to].into_iter().flatten() {
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

#[cfg(test)]
mod tests {
    use serde_json::{Value as Json, json};

    use super::{agents, branch_of, continuing};
    use crate::sources::adk::event::Event;

    fn event(index: usize, inv: &str, author: &str, extra: Json) -> Event {
        let mut data = json!({"id": format!("e{index}"), "invocation_id": inv, "author": author,
            "timestamp": index as f64, "content": {"role": "model", "parts": [{"text": "x"}]}});
        if let (Some(fields), Json::Object(more)) = (data.as_object_mut(), extra) {
            fields.extend(more);
        }
        Event::decode(index, &data.to_string(), 0.0).unwrap()
    }

    #[test]
    fn the_agent_that_replied_last_continues_and_a_transfer_hands_over_before_its_target_speaks() {
        let events = vec![
            event(0, "i1", "user", json!({})),
            event(1, "i1", "root", json!({})),
            event(2, "i2", "user", json!({})),
            event(
                3,
                "i2",
                "root",
                json!({"actions": {"transfer_to_agent": "helper"}}),
            ),
        ];
        assert_eq!(continuing(&events).as_deref(), Some("helper"));
        assert_eq!(agents(&events), ["root", "helper"]);
        let mut answered = events.clone();
        answered.push(event(4, "i2", "helper", json!({})));
        assert_eq!(continuing(&answered).as_deref(), Some("helper"));
        assert_eq!(continuing(&events[..2]).as_deref(), Some("root"));
        assert_eq!(continuing(&[]), None);
    }

    #[test]
    fn a_trailing_tool_result_goes_back_to_the_agent_that_called() {
        let call = json!({"content": {"role": "model", "parts": [{"function_call": {"id": "c1", "name": "f"}}]}});
        let result = json!({"content": {"role": "user", "parts": [{"function_response": {"id": "c1", "name": "f"}}]}});
        let events = vec![
            event(0, "i1", "user", json!({})),
            event(1, "i1", "helper", call),
            event(2, "i1", "root", json!({})),
            event(3, "i2", "user", result),
        ];
        assert_eq!(continuing(&events).as_deref(), Some("helper"));
    }

    #[test]
    fn a_rewind_hides_who_spoke_after_it_and_the_branch_is_the_agents_latest() {
        let events = vec![
            event(0, "i1", "user", json!({})),
            event(1, "i1", "root", json!({"branch": "root"})),
            event(2, "i2", "user", json!({})),
            event(3, "i2", "helper", json!({"branch": "root.helper"})),
            event(
                4,
                "i3",
                "user",
                json!({"actions": {"rewind_before_invocation_id": "i2"}}),
            ),
        ];
        assert_eq!(continuing(&events).as_deref(), Some("root"));
        assert_eq!(branch_of(&events, "helper"), Some("root.helper"));
        assert_eq!(branch_of(&events, "nobody"), None);
    }
}
