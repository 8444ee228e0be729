//! One workflow run's rows: the run, its start, LLM and answer executions, and an offloaded
//! output, with the damage a notable turn carries.

use chrono::NaiveDateTime;
use serde_json::{Value, json};

use super::graph::{ANSWER, Chatflow, Node, RESEARCHER, START, WRITER};
use super::llm::{LlmCall, Usage, process_data, truncated_outputs};
use crate::demo::files::WriteFileError;
use crate::demo::ids::{DemoRng, seconds};
use crate::sources::dify::demo::builder::upload;
use crate::store::rows::{
    Batch, NodeExecutionOffloadRow, NodeExecutionRow, UploadFileRow, WorkflowRunRow,
};

/// What makes a turn notable.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Quirk {
    None,
    /// The design-A node memory file holds this answer instead of the one in
    /// `outputs["context"]`: the file was flushed from a draft the node then retried.
    StaleNodeMemory(&'static str),
    /// The researcher's outputs are offloaded to an upload file; the row keeps a truncated copy.
    OffloadedResearch,
    /// The writer's outputs column holds JSON cut off mid-string.
    CutOffWriterOutputs,
    /// Run cleanup deleted the workflow run and its node executions; the message still points
    /// at the run (#32674).
    RunCleanedUp,
}

/// The first half of `text`, cut at a character boundary.
fn cut_in_half(text: &str) -> &str {
    let half = text.len() / 2;
    let cut = (0..=half)
        .rev()
        .find(|&index| text.is_char_boundary(index))
        .unwrap_or(0);
    &text[..cut]
}

/// The JSON columns of one node execution, and the tokens an LLM node used.
struct Io<'a> {
    inputs: String,
    process_data: Option<Value>,
    outputs: String,
    usage: Option<&'a Usage>,
}

impl<'a> Io<'a> {
    fn llm(call: &'a LlmCall, outputs: Value) -> Self {
        Io {
            inputs: "{}".to_owned(),
            process_data: Some(process_data(&call.prompts, &call.usage)),
            outputs: outputs.to_string(),
            usage: Some(&call.usage),
        }
    }
}

/// One workflow run's execution rows.
pub(super) struct Run<'a> {
    pub(super) chatflow: &'a Chatflow<'a>,
    pub(super) run_id: &'a str,
    pub(super) started_at: NaiveDateTime,
}

impl Run<'_> {
    /// Writes the run and its start, LLM and answer executions; returns the ids of the two LLM
    /// executions.
    pub(super) fn record(
        &self,
        rng: &mut DemoRng,
        sys: &Value,
        research: &LlmCall,
        writing: &LlmCall,
        quirk: Quirk,
        batch: &mut Batch,
    ) -> Result<(String, String), WriteFileError> {
        let app = self.chatflow.app;
        batch.workflow_runs.push(WorkflowRunRow {
            id: self.run_id.to_owned(),
            tenant_id: app.tenant_id.clone(),
            app_id: app.id.clone(),
            workflow_id: self.chatflow.workflow_id.clone(),
            run_type: "chat".to_owned(),
            status: "succeeded".to_owned(),
            total_tokens: research.usage.total() + writing.usage.total(),
            created_at: self.started_at,
            finished_at: Some(self.started_at + seconds(8)),
        });
        let sys = sys.to_string();
        let start = Io {
            inputs: sys.clone(),
            process_data: None,
            outputs: sys,
            usage: None,
        };
        batch
            .node_executions
            .push(self.execution(rng, &START, 1, start));

        let full_research = research.outputs();
        let research_row = if quirk == Quirk::OffloadedResearch {
            truncated_outputs(research)
        } else {
            full_research.clone()
        };
        let researcher = self.execution(rng, &RESEARCHER, 2, Io::llm(research, research_row));
        if quirk == Quirk::OffloadedResearch {
            let (file, offload) = self.offload(rng, &researcher, &full_research)?;
            batch.upload_files.push(file);
            batch.node_execution_offloads.push(offload);
        }

        let mut writer = self.execution(rng, &WRITER, 3, Io::llm(writing, writing.outputs()));
        if quirk == Quirk::CutOffWriterOutputs {
            writer.outputs = writer
                .outputs
                .as_deref()
                .map(|text| cut_in_half(text).to_owned());
        }
        let answer = Io {
            inputs: "{}".to_owned(),
            process_data: None,
            outputs: json!({"answer": writing.reply, "files": []}).to_string(),
            usage: None,
        };
        let ids = (researcher.id.clone(), writer.id.clone());
        batch
            .node_executions
            .extend([researcher, writer, self.execution(rng, &ANSWER, 4, answer)]);
        Ok(ids)
    }

    fn execution(&self, rng: &mut DemoRng, node: &Node, index: i64, io: Io) -> NodeExecutionRow {
        let app = self.chatflow.app;
        NodeExecutionRow {
            id: rng.uuid(),
            tenant_id: app.tenant_id.clone(),
            app_id: app.id.clone(),
            workflow_id: self.chatflow.workflow_id.clone(),
            workflow_run_id: Some(self.run_id.to_owned()),
            index,
            node_id: node.id.to_owned(),
            node_type: node.node_type.to_owned(),
            title: node.title.to_owned(),
            inputs: Some(io.inputs),
            process_data: io.process_data.map(|data| data.to_string()),
            outputs: Some(io.outputs),
            execution_metadata: io.usage.map(|usage| {
                let usage = usage.json();
                json!({
                    "total_tokens": usage["total_tokens"],
                    "total_price": usage["total_price"],
                    "currency": "USD",
                })
                .to_string()
            }),
            status: "succeeded".to_owned(),
            error: None,
            created_at: self.started_at + seconds(index * 2),
        }
    }

    /// Stores the full outputs as an upload file and links it to the execution.
    fn offload(
        &self,
        rng: &mut DemoRng,
        execution: &NodeExecutionRow,
        outputs: &Value,
    ) -> Result<(UploadFileRow, NodeExecutionOffloadRow), WriteFileError> {
        let file = upload(
            rng,
            &self.chatflow.storage,
            &execution.tenant_id,
            &format!("{}-outputs.json", execution.id),
            outputs.to_string().as_bytes(),
            "application/json",
            execution.created_at,
        )?;
        let offload = NodeExecutionOffloadRow {
            id: rng.uuid(),
            tenant_id: execution.tenant_id.clone(),
            app_id: execution.app_id.clone(),
            node_execution_id: execution.id.clone(),
            offload_type: "outputs".to_owned(),
            file_id: file.id.clone(),
            created_at: execution.created_at,
        };
        Ok((file, offload))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_in_half_respects_character_boundaries() {
        assert_eq!(cut_in_half("abcd"), "ab");
        assert_eq!(cut_in_half("é"), "");
        assert_eq!(cut_in_half("aéb"), "a");
        assert_eq!(cut_in_half(""), "");
    }
}
