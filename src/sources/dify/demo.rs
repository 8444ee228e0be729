//! Dify chat, agent-chat and legacy conversations: the thread shapes Dify's memory gets right,
//! and the ones it gets wrong.
//!
//! This file sets up the apps and lists the stories; the rows are built in `builder` (which the
//! chatflow and the bulk scale use too), the thread shapes are in `thread_shapes`, and answers,
//! files and long histories in `contents`. The chatflow's chapter is `chatflow`, and the
//! 1M-message scale's templated conversations are `bulk`.

mod builder;
pub mod bulk;
pub(crate) mod chatflow;
mod contents;
mod thread_shapes;

use builder::app;

use crate::demo::chapter::{Chapter, DIFY_STREAM, Setting};
use crate::demo::files::{FileRoot, WriteFileError};
use crate::demo::ids::{DemoRng, base_time, seconds};
use crate::store::rows::Batch;
use contents::{files_conversation, interrupted_answers, long_history};
use thread_shapes::{
    deep_regeneration_tree, issue_39031, legacy_conversation, readme_regeneration,
    service_api_conversation,
};

pub(crate) fn chapter(setting: &Setting) -> Result<Chapter, WriteFileError> {
    let mut rng = DemoRng::new(setting.seed, DIFY_STREAM);
    let storage = FileRoot(setting.storage_root);
    let tenant = setting.tenant_id;
    let week_ago = base_time() - seconds(7 * 24 * 3600);
    let support = app(
        &mut rng,
        tenant,
        "Support Assistant",
        "chat",
        Some(10),
        week_ago,
    );
    let agent = app(
        &mut rng,
        tenant,
        "Research Agent",
        "agent-chat",
        None,
        week_ago,
    );
    let legacy_created = week_ago - seconds(700 * 24 * 3600);
    let faq = app(
        &mut rng,
        tenant,
        "Legacy FAQ Bot",
        "chat",
        None,
        legacy_created,
    );
    let partner = app(
        &mut rng,
        tenant,
        "Partner API Bot",
        "chat",
        Some(50),
        week_ago,
    );

    let mut batch = Batch::default();
    let stories = vec![
        readme_regeneration(&mut rng, &support, &mut batch),
        deep_regeneration_tree(&mut rng, &support, &mut batch),
        legacy_conversation(&mut rng, &faq, legacy_created, &mut batch),
        service_api_conversation(&mut rng, &partner, &mut batch),
        issue_39031(&mut rng, &support, &mut batch),
        interrupted_answers(&mut rng, &support, &mut batch),
        files_conversation(&mut rng, &storage, tenant, &agent, &mut batch)?,
        long_history(&mut rng, &agent, &mut batch),
    ];
    batch.apps = vec![support, agent, faq, partner];
    Ok(Chapter { batch, stories })
}
