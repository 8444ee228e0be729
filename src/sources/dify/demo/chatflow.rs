//! A Dify chatflow (advanced-chat) with two LLM nodes: workflow runs and node executions per
//! turn, node memory in both stored designs, and the rows an operator's `doctor` should flag.
//!
//! This file tells the story (the Kyoto and packing conversations and what they show); the
//! chatflow's nodes are in `graph`, what an LLM node sends and keeps in `llm`, a run's rows in
//! `run`, and a conversation played turn by turn in `conversation`.

mod conversation;
mod graph;
mod llm;
mod run;

use super::builder::{Parent, app};
use crate::demo::chapter::{CHATFLOW_STREAM, Chapter, Setting, Story};
use crate::demo::files::{FileRoot, WriteFileError};
use crate::demo::ids::{DemoRng, base_time, seconds};
use crate::demo::text::{json_tool_output, prose};
use crate::store::rows::Batch;
use conversation::{ChatflowConversation, TurnSpec};
use graph::Chatflow;
use run::Quirk;

pub(crate) fn chapter(setting: &Setting) -> Result<Chapter, WriteFileError> {
    let mut rng = DemoRng::new(setting.seed, CHATFLOW_STREAM);
    let created = base_time() - seconds(10 * 24 * 3600);
    let trip_planner = app(
        &mut rng,
        setting.tenant_id,
        "Trip Planner",
        "advanced-chat",
        Some(20),
        created,
    );
    let chatflow = Chatflow {
        app: &trip_planner,
        workflow_id: rng.uuid(),
        storage: FileRoot(setting.storage_root),
    };
    let mut batch = Batch::default();

    let started = base_time() - seconds(20 * 3600);
    let mut kyoto = ChatflowConversation::new(&mut rng, &chatflow, "Kyoto food trip", started);
    let mut played = Vec::new();
    for turn in 0..KYOTO_TURNS {
        let spec = kyoto_turn(&mut rng, turn);
        played.push(kyoto.play(&mut rng, &chatflow, spec, &mut batch)?);
    }
    let kyoto_id = kyoto.finish(&chatflow, &mut batch)?;

    let started = base_time() - seconds(8 * 3600);
    let mut packing = ChatflowConversation::new(&mut rng, &chatflow, "Packing list", started);
    let cleaned_up = packing.play(
        &mut rng,
        &chatflow,
        TurnSpec {
            parent: Parent::Root,
            query: "What should I pack for Kyoto in April? Here's my suitcase.",
            image: Some("suitcase.png"),
            search: None,
            research: "April in Kyoto: 10-20 °C, showers likely, cherry blossom crowds.".to_owned(),
            reply: "Pack layers, a light rain jacket and comfortable walking shoes.".to_owned(),
            quirk: Quirk::RunCleanedUp,
        },
        &mut batch,
    )?;
    packing.play(
        &mut rng,
        &chatflow,
        TurnSpec {
            parent: Parent::Row(0),
            query: "And for a rainy day?",
            image: None,
            search: None,
            research: "Rainy-day options: Kyoto Railway Museum, Nishiki Market (covered)."
                .to_owned(),
            reply: "Bring a compact umbrella; the covered Nishiki Market is perfect in the rain."
                .to_owned(),
            quirk: Quirk::None,
        },
        &mut batch,
    )?;
    packing.finish(&chatflow, &mut batch)?;

    let stories = vec![
        Story {
            title: "Chatflow node memory",
            table: "conversations",
            id: kyoto_id,
            demonstrates: "two LLM nodes over a regenerated thread: the Research node keeps \
                           a node memory file of turns per run, the Write reply node one of a \
                           messages list; each run's outputs.context holds what the node was sent",
        },
        Story {
            title: "Node memory disagreement",
            table: "workflow_node_executions",
            id: played[1].researcher_execution.clone().unwrap_or_default(),
            demonstrates: "on the Nara turn the node memory file keeps a stale draft answer \
                           while outputs.context holds the final one",
        },
        Story {
            title: "Invalid outputs JSON",
            table: "workflow_node_executions",
            id: played[2].writer_execution.clone().unwrap_or_default(),
            demonstrates: "a succeeded LLM execution whose outputs column is JSON cut off \
                           mid-string",
        },
        Story {
            title: "Offloaded node outputs",
            table: "workflow_node_executions",
            id: played[4].researcher_execution.clone().unwrap_or_default(),
            demonstrates: "outputs truncated in the row; the full JSON (with the whole \
                           context) is an upload file linked by workflow_node_execution_offload",
        },
        Story {
            title: "Orphaned workflow run",
            table: "messages",
            id: cleaned_up.message_id,
            demonstrates: "a message with a user image whose workflow_run_id has no \
                           workflow_runs row (run cleanup, #32674)",
        },
    ];
    batch.apps.push(trip_planner);
    Ok(Chapter { batch, stories })
}

const KYOTO_TURNS: usize = 5;

/// The Kyoto conversation: turn 3 is regenerated (turn 4 is its sibling), so the thread is
/// turns 1, 2, 4, 5.
fn kyoto_turn(rng: &mut DemoRng, turn: usize) -> TurnSpec {
    let vegetarian = "Make day 2 vegetarian, please.";
    let spec = |parent, query, research: String, reply: &str| TurnSpec {
        parent,
        query,
        image: None,
        search: None,
        research,
        reply: reply.to_owned(),
        quirk: Quirk::None,
    };
    match turn {
        0 => TurnSpec {
            image: Some("hotel-booking.png"),
            ..spec(
                Parent::Root,
                "Plan three days in Kyoto for a food lover. This is my hotel booking.",
                "Hotel near Shijo-Karasuma. Nishiki Market 8 min walk (opens 9:00). Pontocho \
                 alley for dinner. Fushimi Inari best before 8:00."
                    .to_owned(),
                "Day 1: Nishiki Market breakfast, Pontocho dinner. Day 2: Fushimi Inari at \
                 dawn, sake tasting in Fushimi. Day 3: Arashiyama and a kaiseki lunch.",
            )
        },
        1 => TurnSpec {
            search: Some(r#"{"query": "Kyoto to Nara train time Kintetsu"}"#),
            quirk: Quirk::StaleNodeMemory(
                "Nara is about an hour away by bus; worth a half-day trip.",
            ),
            ..spec(
                Parent::Row(0),
                "Can we add a day trip to Nara?",
                "Kintetsu limited express: 35 min from Kyoto Station, about 1,200 yen. Nara \
                 Park deer, Todai-ji opens 7:30. Mochi pounding at Nakatanidou."
                    .to_owned(),
                "Swap day 3 for Nara: 35 minutes by Kintetsu, Todai-ji in the morning, fresh \
                 mochi at Nakatanidou, back for dinner in Gion.",
            )
        },
        2 => TurnSpec {
            quirk: Quirk::CutOffWriterOutputs,
            ..spec(
                Parent::Row(1),
                vegetarian,
                "Shigetsu at Tenryu-ji serves shojin ryori (Buddhist vegetarian), 3,300 yen."
                    .to_owned(),
                "Day 2 vegetarian: shojin ryori lunch at Shigetsu, yuba tasting in the \
                 afternoon.",
            )
        },
        // The traveller regenerated the previous answer: a sibling of turn 3.
        3 => spec(
            Parent::Row(1),
            vegetarian,
            "Vegetarian options near Fushimi: Veg Out cafe by the river, tofu kaiseki at \
             Okutan (Nanzen-ji), open 11:00-16:00."
                .to_owned(),
            "Day 2 vegetarian: breakfast at Veg Out by the Kamo river, tofu kaiseki at \
             Okutan for lunch, matcha sweets in Gion.",
        ),
        _ => TurnSpec {
            quirk: Quirk::OffloadedResearch,
            ..spec(
                Parent::Row(3),
                "Summarize the whole plan as a checklist.",
                format!(
                    "Full research dossier for the checklist.\n{}\n{}",
                    prose(rng, 40),
                    json_tool_output(rng, 12)
                ),
                "Checklist: [ ] Nishiki breakfast [ ] Pontocho dinner [ ] Veg Out + Okutan \
                 [ ] Nara by Kintetsu [ ] Todai-ji 7:30 [ ] Gion dinner",
            )
        },
    }
}

#[cfg(test)]
#[path = "chatflow_tests.rs"]
mod tests;
