//! `capture`: records a run's messages in a flow's sessions, and syncs the memory bases whose
//! threshold they reach.

use super::context::{sync_failed, syncer_for};
use crate::cli::args::CaptureArgs;
use crate::cli::context::{Context, read_input};
use crate::cli::output::{CliError, CliResult, ExitCode, emit};
use crate::inspect::memory_bases as view;
use crate::kb::embedder::HASHING_MODEL;
use crate::store::Part;
use crate::sync::SyncOutcome;
use crate::sync::capture::CapturedMessage;

pub async fn capture(context: &Context, args: &CaptureArgs) -> CliResult {
    let messages: Vec<CapturedMessage> =
        serde_json::from_str(&read_input(&args.input)?).map_err(|e| {
            CliError::failure(format!("capture input is not a JSON list of messages: {e}"))
        })?;
    let store = context.open_for(Part::MemoryBases).await?;
    let flow_id = view::find_flow(&store, &args.flow).await?;
    // Capture itself embeds nothing; the syncs it starts use the bases' embedder.
    let bases = store.memory_bases_of_flow(&flow_id).await?;
    let model = bases
        .iter()
        .find(|b| b.auto_capture)
        .map_or(HASHING_MODEL, |b| b.embedding_model.as_str());
    let syncer = syncer_for(context, &store, model, &args.sync)?;
    let report = syncer
        .capture(&flow_id, &args.session, args.run.as_deref(), &messages)
        .await
        .map_err(sync_failed)?;
    emit(context.global.json, &report, |r| {
        let mut out = format!(
            "recorded {} of run {} in session {} ({})",
            crate::format::count(r.message_ids.len() as u64, "message"),
            r.run_id,
            r.session_id,
            crate::format::count(r.memory_bases.len() as u64, "memory base")
        );
        for sync in &r.syncs {
            if let SyncOutcome::Completed(job) = sync {
                out.push_str(&format!(
                    "\nthreshold reached: ingested {} (job {})",
                    crate::format::count(job.messages, "message"),
                    job.job_id
                ));
            }
        }
        for error in &r.errors {
            out.push_str(&format!("\nsync failed: {error}"));
        }
        out
    })?;
    Ok(if report.errors.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::Failure
    })
}
