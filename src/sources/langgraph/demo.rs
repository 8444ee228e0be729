//! A LangGraph checkpoint database in SqliteSaver's layout and format, with the threads an
//! operator of LangGraph agents meets: a tool-using agent, a conversation rewound to an earlier
//! point and then corrected by an operator, a graph that deletes its old messages, a graph that
//! runs a subgraph, and a long conversation whose every step stores the whole history again.
//!
//! The rows are what LangGraph 1.2 writes for these graphs run with these inputs (`steps.rs`
//! plays its loop); `file.rs` writes them into a new file as SqliteSaver would.

use std::path::{Path, PathBuf};

mod file;
mod messages;
mod steps;

use crate::demo::chapter::{LANGGRAPH_STREAM, Story};
use crate::demo::ids::{DemoRng, base_time};
use crate::demo::text::{prose, short_answer, short_query};
use crate::sources::langgraph::decode::Value;
pub use file::LangGraphDemoError;
use messages::{Message, ToolCall};
use steps::{Clock, Rows, Thread};

/// Turns of the long conversation.
const LONG_TURNS: usize = 120;

/// Messages the note-taking graph keeps after each turn.
const NOTES_KEPT: usize = 4;

/// The rows of the story and where to look.
pub(crate) struct LangGraphStory {
    pub(crate) rows: Rows,
    pub(crate) stories: Vec<Story>,
}

fn story(title: &'static str, thread_id: &str, demonstrates: &'static str) -> Story {
    Story {
        title,
        table: "checkpoints",
        id: thread_id.to_owned(),
        demonstrates,
    }
}

/// Makes messages with the story's ids.
struct Say<'a> {
    rng: &'a mut DemoRng,
}

impl Say<'_> {
    fn id(&mut self) -> String {
        self.rng.uuid()
    }

    fn system(&mut self, text: &str) -> Message {
        Message::System {
            id: self.id(),
            text: text.to_owned(),
        }
    }

    fn human(&mut self, text: &str) -> Message {
        Message::Human {
            id: self.id(),
            text: text.to_owned(),
            name: None,
        }
    }

    fn ai(&mut self, text: &str) -> Message {
        let output = text.len().div_ceil(4) as i64;
        Message::Ai {
            id: self.id(),
            text: text.to_owned(),
            tool_calls: Vec::new(),
            usage: Some((120 + output * 3, output)),
        }
    }

    fn call(&mut self, name: &str, args: &[(&str, Value)]) -> Message {
        Message::Ai {
            id: self.id(),
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: format!("call_{}", self.rng.hex8()),
                name: name.to_owned(),
                args: args
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), v.clone()))
                    .collect(),
            }],
            usage: Some((180, 24)),
        }
    }

    /// The tool's answer to the call `to` made.
    fn tool(&mut self, to: &Message, text: &str) -> Message {
        let Message::Ai { tool_calls, .. } = to else {
            unreachable!("a tool answers an AI message's call")
        };
        Message::Tool {
            id: self.id(),
            text: text.to_owned(),
            name: tool_calls[0].name.clone(),
            tool_call_id: tool_calls[0].id.clone(),
        }
    }
}

fn text(value: &str) -> Value {
    Value::Str(value.to_owned())
}

/// The story's rows, the same for the same seed.
pub(crate) fn langgraph_story(seed: u64) -> LangGraphStory {
    let mut clock = Clock::new(base_time(), DemoRng::new(seed, LANGGRAPH_STREAM));
    let mut words = DemoRng::new(seed, LANGGRAPH_STREAM + 1);
    let mut rows = Rows::default();
    let mut stories = Vec::new();
    let mut ids = DemoRng::new(seed, LANGGRAPH_STREAM + 2);
    let mut say = Say { rng: &mut ids };

    // A tool-using agent: agent → tools → agent, twice.
    let mut agent = Thread::new("weather-agent");
    let turns = [
        (
            "What is the weather in Lisbon tomorrow? Do I need an umbrella?",
            "Lisbon",
            "light rain, 17 °C, 4 mm",
        ),
        ("And in Porto?", "Porto", "showers, 15 °C, 9 mm"),
    ];
    for (index, (question, city, forecast)) in turns.into_iter().enumerate() {
        let mut input = Vec::new();
        if index == 0 {
            input.push(
                say.system("You are a travel assistant. Use get_forecast for weather questions."),
            );
        }
        input.push(say.human(question));
        agent.input(&mut clock, &mut rows, input, "agent");
        let call = say.call(
            "get_forecast",
            &[("city", text(city)), ("days", Value::Int(1))],
        );
        agent.node(
            &mut clock,
            &mut rows,
            "agent",
            std::slice::from_ref(&call),
            Some("tools"),
        );
        let result = say.tool(
            &call,
            &format!("{{\"city\": \"{city}\", \"forecast\": \"{forecast}\"}}"),
        );
        agent.node(&mut clock, &mut rows, "tools", &[result], Some("agent"));
        let answer = say.ai(&format!(
            "Tomorrow in {city}: {forecast}. Take an umbrella to be safe."
        ));
        agent.node(&mut clock, &mut rows, "agent", &[answer], None);
        clock.wait(40_000);
    }
    stories.push(story(
        "A tool-using agent",
        "weather-agent",
        "an agent that calls a tool and answers with its result; each step is a checkpoint, and the node that wrote it shows on the tree",
    ));

    // Time travel: three turns, a new question sent from the end of the first, and an operator
    // correcting the answer on that new branch with update_state.
    let mut trip = Thread::new("trip-rewind");
    let mut first_turn_end = None;
    for (index, question) in [
        "Plan three days in Kyoto.",
        "Make it cheaper.",
        "Add a day trip to Nara.",
    ]
    .into_iter()
    .enumerate()
    {
        let input = say.human(question);
        trip.input(&mut clock, &mut rows, vec![input], "planner");
        let answer = say.ai(&format!(
            "{} {}",
            short_answer(&mut words),
            prose(&mut words, 2)
        ));
        trip.node(&mut clock, &mut rows, "planner", &[answer], None);
        if index == 0 {
            first_turn_end = trip.head().map(str::to_owned);
        }
        clock.wait(60_000);
    }
    trip.rewind(&first_turn_end.expect("the first turn ran"));
    let input = say.human("Make it five days instead, with a day in Osaka.");
    trip.input(&mut clock, &mut rows, vec![input], "planner");
    let answer = say.ai("Five days: Fushimi Inari on day one, Arashiyama on day two, Osaka on day three, the Golden Pavilion (open until 18:00) on day four, Nara on day five.");
    let answer_id = answer.id().to_owned();
    trip.node(&mut clock, &mut rows, "planner", &[answer], None);
    clock.wait(300_000);
    let corrected = Message::Ai {
        id: answer_id,
        text: "Five days: Fushimi Inari on day one, Arashiyama on day two, Osaka on day three, the Golden Pavilion (open until 17:00) on day four, Nara on day five.".to_owned(),
        tool_calls: Vec::new(),
        usage: None,
    };
    trip.update(&mut clock, &mut rows, &[corrected]);
    stories.push(story(
        "Time travel and an operator's edit",
        "trip-rewind",
        "a question sent again from the end of the first turn starts a branch beside the original turns; an operator then corrected the answer (source update)",
    ));

    // A graph whose last node keeps only the newest messages, deleting the rest.
    let mut notes = Thread::new("notes-window");
    for _ in 0..4 {
        let input = say.human(&short_query(&mut words));
        notes.input(&mut clock, &mut rows, vec![input], "chat");
        let answer = say.ai(&short_answer(&mut words));
        notes.node(&mut clock, &mut rows, "chat", &[answer], Some("forget"));
        let kept_from = notes.messages().len().saturating_sub(NOTES_KEPT);
        let removals: Vec<Message> = notes.messages()[..kept_from]
            .iter()
            .map(|m| Message::Remove {
                id: m.id().to_owned(),
            })
            .collect();
        notes.node(&mut clock, &mut rows, "forget", &removals, None);
        clock.wait(30_000);
    }
    stories.push(story(
        "A node that deletes old messages",
        "notes-window",
        "the forget node removes all but the newest four messages with RemoveMessage: the state forgets them, the older checkpoints still hold them",
    ));

    // A graph whose `researcher` node is a subgraph with checkpoints of its own.
    let mut report = Thread::new("research-report");
    let input = say.human("Write a short report on our API's error rates this week.");
    report.input(&mut clock, &mut rows, vec![input], "plan");
    let plan = say.ai("Plan: gather the error figures, then summarise them.");
    report.node(&mut clock, &mut rows, "plan", &[plan], Some("researcher"));
    let findings = say.ai("Found: 0.4% of requests failed, most of them timeouts on /v2/export.");
    let summary =
        say.ai("Summary: error rates are low; the export endpoint needs a longer timeout.");
    report.subgraph(
        &mut clock,
        &mut rows,
        "researcher",
        "search",
        |inner, clock, rows| {
            inner.node(clock, rows, "search", &[findings], Some("summarise"));
            inner.node(clock, rows, "summarise", &[summary], None);
        },
    );
    stories.push(story(
        "A subgraph",
        "research-report",
        "the researcher node runs a subgraph; its checkpoints live in a namespace of their own, attached to the step that ran it",
    ));

    // A long conversation: every step stores the whole history again.
    let mut long = Thread::new("long-chat");
    let system = say.system("You are a support assistant for a project-management product.");
    for turn in 0..LONG_TURNS {
        let mut input = Vec::new();
        if turn == 0 {
            input.push(system.clone());
        }
        input.push(say.human(&short_query(&mut words)));
        long.input(&mut clock, &mut rows, input, "chat");
        let answer = say.ai(&prose(&mut words, 4));
        long.node(&mut clock, &mut rows, "chat", &[answer], None);
        clock.wait(20_000);
    }
    stories.push(story(
        "A long thread",
        "long-chat",
        "each of its steps stores every message so far again, so its size grows with the square of its length; doctor says what keeping only the newest checkpoints would free",
    ));
    LangGraphStory { rows, stories }
}

/// What the demo wrote.
#[derive(Debug, Clone)]
pub struct LangGraphDemoSummary {
    pub path: PathBuf,
    pub threads: usize,
    pub checkpoints: usize,
    pub writes: usize,
    /// Bytes of the stored checkpoints, metadata and writes.
    pub bytes: usize,
    pub stories: Vec<Story>,
}

/// Writes the story for `seed` into a new SQLite file at `path`, as SqliteSaver would have.
pub async fn write_langgraph_demo(
    path: &Path,
    seed: u64,
) -> Result<LangGraphDemoSummary, LangGraphDemoError> {
    let story = langgraph_story(seed);
    file::write_rows(path, &story.rows).await?;
    let rows = &story.rows;
    let mut threads: Vec<&str> = rows
        .checkpoints
        .iter()
        .map(|c| c.thread_id.as_str())
        .collect();
    threads.dedup();
    Ok(LangGraphDemoSummary {
        path: path.to_owned(),
        threads: threads.len(),
        checkpoints: rows.checkpoints.len(),
        writes: rows.writes.len(),
        bytes: rows
            .checkpoints
            .iter()
            .map(|c| c.checkpoint.len() + c.metadata.len())
            .chain(rows.writes.iter().map(|w| w.value.len()))
            .sum(),
        stories: story.stories,
    })
}

#[cfg(test)]
#[path = "demo_tests.rs"]
mod tests;
