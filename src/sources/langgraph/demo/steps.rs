//! A `MessagesState` graph's run as LangGraph 1.2's Pregel loop checkpoints it, without
//! LangGraph: an input checkpoint holding the input in `__start__`, then one checkpoint a step,
//! each holding the whole state again, with the writes of the tasks that made it keyed to the
//! checkpoint they started from. Node `n` is triggered by its channel `branch:to:n`; every
//! channel a step consumes or writes gets the step's version (the greatest version so far plus
//! one, SqliteSaver's `{n:032}.{random}`), and `versions_seen` records the trigger version each
//! node last ran on. `update_state` is a write and a checkpoint of source `update`; time travel
//! continues from a past checkpoint; a subgraph is a run of its own in the namespace
//! `node:task_id`, whose root checkpoint is the one its task started from.

use std::collections::BTreeMap;

use chrono::NaiveDateTime;

use super::messages::{Message, add_messages};
use crate::demo::ids::DemoRng;
use crate::sources::langgraph::decode::Value;
use crate::sources::langgraph::decode::encode::encode;

/// One row of SqliteSaver's `checkpoints`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CheckpointRecord {
    pub(crate) thread_id: String,
    pub(crate) checkpoint_ns: String,
    pub(crate) checkpoint_id: String,
    pub(crate) parent_checkpoint_id: Option<String>,
    /// The body, serialized with type `msgpack`.
    pub(crate) checkpoint: Vec<u8>,
    /// UTF-8 JSON, as `json.dumps` writes it.
    pub(crate) metadata: Vec<u8>,
}

/// One row of SqliteSaver's `writes`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WriteRecord {
    pub(crate) thread_id: String,
    pub(crate) checkpoint_ns: String,
    pub(crate) checkpoint_id: String,
    pub(crate) task_id: String,
    pub(crate) task_path: String,
    pub(crate) idx: i64,
    pub(crate) channel: String,
    pub(crate) type_name: &'static str,
    pub(crate) value: Vec<u8>,
}

#[derive(Debug, Default)]
pub(crate) struct Rows {
    pub(crate) checkpoints: Vec<CheckpointRecord>,
    pub(crate) writes: Vec<WriteRecord>,
}

/// Time and randomness every thread shares: checkpoint ids are UUIDv6 of the instant, so they
/// sort in the order the steps ran.
pub(crate) struct Clock {
    now: NaiveDateTime,
    rng: DemoRng,
}

/// 100-nanosecond intervals from 1582-10-15 to 1970-01-01, as UUIDv6 counts.
const GREGORIAN_OFFSET: u64 = 0x01B2_1DD2_1381_4000;

impl Clock {
    pub(crate) fn new(now: NaiveDateTime, rng: DemoRng) -> Clock {
        Clock { now, rng }
    }

    pub(crate) fn rng(&mut self) -> &mut DemoRng {
        &mut self.rng
    }

    /// Lets `millis` pass.
    pub(crate) fn wait(&mut self, millis: i64) {
        self.now += chrono::TimeDelta::milliseconds(millis);
    }

    /// LangGraph's `uuid6(clock_seq=step)` at the current instant.
    fn checkpoint_id(&mut self, step: i64) -> String {
        let nanos = self.now.and_utc().timestamp_nanos_opt().unwrap_or_default() as u64;
        let timestamp = nanos / 100 + GREGORIAN_OFFSET;
        let node = u128::from(self.rng.between(0, (1 << 48) - 1) as u64);
        let mut id = u128::from((timestamp >> 12) & 0xFFFF_FFFF_FFFF) << 80
            | u128::from(timestamp & 0x0FFF) << 64
            | u128::from((step as u64) & 0x3FFF) << 48
            | node;
        id = (id & !(0xC000 << 48)) | (0x8000 << 48);
        id = (id & !(0xF000 << 64)) | (6 << 76);
        uuid::Uuid::from_u128(id).hyphenated().to_string()
    }

    fn ts(&self) -> String {
        format!("{}+00:00", self.now.format("%Y-%m-%dT%H:%M:%S%.6f"))
    }

    /// SqliteSaver's `get_next_version`: `{n:032}.{random():016}`.
    fn version(&mut self, n: u64) -> String {
        let random = self.rng.between(1_000, 999_999_999) as f64 / 1e9;
        format!("{n:032}.{:0>16}", random.to_string())
    }
}

/// What the graph holds between steps.
#[derive(Debug, Clone, Default)]
struct State {
    messages: Vec<Message>,
    /// The input while it waits in `__start__`.
    input: Option<Vec<Message>>,
    /// The node a `branch:to:` channel triggers next.
    branch: Option<String>,
    /// Channel versions in the order channels first got one: `(channel, (n, text))`.
    versions: Vec<(String, (u64, String))>,
    /// Per node (`__input__` first), the trigger versions it ran on.
    seen: Vec<(String, Vec<(String, String)>)>,
    step: i64,
    head: Option<String>,
}

impl State {
    fn version(&self, channel: &str) -> Option<&str> {
        self.versions
            .iter()
            .find(|(c, _)| c == channel)
            .map(|(_, (_, text))| text.as_str())
    }

    /// Gives `channels` the next version.
    fn bump(&mut self, clock: &mut Clock, channels: &[&str]) {
        let next = self
            .versions
            .iter()
            .map(|(_, (n, _))| *n)
            .max()
            .unwrap_or(0)
            + 1;
        let text = clock.version(next);
        for channel in channels {
            match self.versions.iter_mut().find(|(c, _)| c == channel) {
                Some((_, version)) => *version = (next, text.clone()),
                None => self
                    .versions
                    .push(((*channel).to_owned(), (next, text.clone()))),
            }
        }
    }

    fn saw(&mut self, node: &str, trigger: &str) {
        let version = self.version(trigger).unwrap_or_default().to_owned();
        let entry = vec![(trigger.to_owned(), version)];
        match self.seen.iter_mut().find(|(n, _)| n == node) {
            Some((_, seen)) => *seen = entry,
            None => self.seen.push((node.to_owned(), entry)),
        }
    }
}

fn s(text: &str) -> Value {
    Value::Str(text.to_owned())
}

fn list(messages: &[Message]) -> Value {
    Value::List(messages.iter().map(Message::value).collect())
}

fn msgpack(value: &Value) -> Vec<u8> {
    encode(value).expect("the demo writes no legacy json values")
}

const START: &str = "__start__";
const MESSAGES: &str = "messages";
/// The task path LangGraph 1.2 gives the write of an `update_state`.
const UPDATE_TASK_PATH: &str = "~__interrupt__, 0000000000";

fn trigger(node: &str) -> String {
    format!("branch:to:{node}")
}

/// One namespace of one thread: the root graph's, or a subgraph's.
pub(crate) struct Thread {
    thread_id: String,
    namespace: String,
    /// For a subgraph: the root checkpoint its task started from.
    root_checkpoint: Option<String>,
    state: State,
    /// Every checkpoint's state, for time travel.
    past: BTreeMap<String, State>,
}

impl Thread {
    pub(crate) fn new(thread_id: &str) -> Thread {
        Thread {
            thread_id: thread_id.to_owned(),
            namespace: String::new(),
            root_checkpoint: None,
            state: State {
                seen: vec![("__input__".to_owned(), Vec::new())],
                ..State::default()
            },
            past: BTreeMap::new(),
        }
    }

    /// The messages of the latest state.
    pub(crate) fn messages(&self) -> &[Message] {
        &self.state.messages
    }

    /// The checkpoint the next step starts from.
    pub(crate) fn head(&self) -> Option<&str> {
        self.state.head.as_deref()
    }

    /// An input sent to the graph: its checkpoint, the `__start__` task's writes, and the
    /// checkpoint after them, which triggers `first`.
    pub(crate) fn input(
        &mut self,
        clock: &mut Clock,
        rows: &mut Rows,
        input: Vec<Message>,
        first: &str,
    ) {
        let step = if self.state.head.is_none() {
            -1
        } else {
            self.state.step + 1
        };
        self.state.bump(clock, &[START]);
        self.state.input = Some(input.clone());
        self.checkpoint(clock, rows, "input", step, Some(vec![START]));
        let branch = trigger(first);
        self.task(clock, rows, START, &input, Some(&branch));
        self.state.saw(START, START);
        self.state.input = None;
        add_messages(&mut self.state.messages, &input);
        self.state.branch = Some(first.to_owned());
        self.state.bump(clock, &[START, MESSAGES, &branch]);
        self.checkpoint(clock, rows, "loop", step + 1, Some(vec![&branch, MESSAGES]));
    }

    /// The triggered node runs: it writes `output` to `messages` (and triggers `next`), and the
    /// step's checkpoint follows.
    pub(crate) fn node(
        &mut self,
        clock: &mut Clock,
        rows: &mut Rows,
        name: &str,
        output: &[Message],
        next: Option<&str>,
    ) {
        let own = trigger(name);
        let branch = next.map(trigger);
        self.task(clock, rows, name, output, branch.as_deref());
        self.state.saw(name, &own);
        add_messages(&mut self.state.messages, output);
        self.state.branch = next.map(str::to_owned);
        let mut written = vec![own.as_str(), MESSAGES];
        let mut updated = vec![MESSAGES];
        if let Some(branch) = &branch {
            written.push(branch);
            updated.push(branch);
        }
        updated.sort_unstable();
        self.state.bump(clock, &written);
        let step = self.state.step + 1;
        self.checkpoint(clock, rows, "loop", step, Some(updated));
    }

    /// `update_state(config, {"messages": update}, as_node=...)`: the write, keyed to the latest
    /// checkpoint, and a checkpoint of source `update`.
    pub(crate) fn update(&mut self, clock: &mut Clock, rows: &mut Rows, update: &[Message]) {
        let task_id = clock.rng().uuid();
        self.write(
            rows,
            &task_id,
            UPDATE_TASK_PATH,
            0,
            MESSAGES,
            Some(list(update)),
        );
        add_messages(&mut self.state.messages, update);
        self.state.bump(clock, &[MESSAGES]);
        let step = self.state.step + 1;
        self.checkpoint(clock, rows, "update", step, None);
    }

    /// Time travel: the next input starts from a past checkpoint, as a new branch.
    pub(crate) fn rewind(&mut self, checkpoint_id: &str) {
        self.state = self.past[checkpoint_id].clone();
    }

    /// A node that runs a subgraph: `run` plays the subgraph's steps in its own namespace from
    /// the parent's messages; the node then writes the subgraph's messages.
    pub(crate) fn subgraph(
        &mut self,
        clock: &mut Clock,
        rows: &mut Rows,
        name: &str,
        first: &str,
        run: impl FnOnce(&mut Thread, &mut Clock, &mut Rows),
    ) {
        let task_id = clock.rng().uuid();
        let mut inner = Thread::new(&self.thread_id);
        inner.namespace = format!("{name}:{task_id}");
        inner.root_checkpoint = self.state.head.clone();
        inner.input(clock, rows, self.state.messages.clone(), first);
        run(&mut inner, clock, rows);
        let output = inner.state.messages.clone();
        self.task_with_id(rows, &task_id, name, &output, None);
        let own = trigger(name);
        self.state.saw(name, &own);
        add_messages(&mut self.state.messages, &output);
        self.state.branch = None;
        self.state.bump(clock, &[&own, MESSAGES]);
        let step = self.state.step + 1;
        self.checkpoint(clock, rows, "loop", step, Some(vec![MESSAGES]));
    }

    fn task(
        &mut self,
        clock: &mut Clock,
        rows: &mut Rows,
        node: &str,
        output: &[Message],
        branch: Option<&str>,
    ) {
        let task_id = clock.rng().uuid();
        self.task_with_id(rows, &task_id, node, output, branch);
    }

    fn task_with_id(
        &self,
        rows: &mut Rows,
        task_id: &str,
        node: &str,
        output: &[Message],
        branch: Option<&str>,
    ) {
        let path = format!("~__pregel_pull, {node}");
        self.write(rows, task_id, &path, 0, MESSAGES, Some(list(output)));
        if let Some(branch) = branch {
            self.write(rows, task_id, &path, 1, branch, None);
        }
    }

    fn write(
        &self,
        rows: &mut Rows,
        task_id: &str,
        task_path: &str,
        idx: i64,
        channel: &str,
        value: Option<Value>,
    ) {
        let (type_name, value) = match value {
            Some(value) => ("msgpack", msgpack(&value)),
            None => ("null", Vec::new()),
        };
        rows.writes.push(WriteRecord {
            thread_id: self.thread_id.clone(),
            checkpoint_ns: self.namespace.clone(),
            checkpoint_id: self
                .state
                .head
                .clone()
                .expect("a task starts from a checkpoint"),
            task_id: task_id.to_owned(),
            task_path: task_path.to_owned(),
            idx,
            channel: channel.to_owned(),
            type_name,
            value,
        });
    }

    /// Saves the state as a checkpoint, child of the head, and makes it the head.
    fn checkpoint(
        &mut self,
        clock: &mut Clock,
        rows: &mut Rows,
        source: &str,
        step: i64,
        updated: Option<Vec<&str>>,
    ) {
        clock.wait(3);
        let id = clock.checkpoint_id(step);
        let mut values = Vec::new();
        if !self.state.messages.is_empty() || self.state.versions.iter().any(|(c, _)| c == MESSAGES)
        {
            values.push((s(MESSAGES), list(&self.state.messages)));
        }
        if let Some(input) = &self.state.input {
            values.push((s(START), Value::Map(vec![(s(MESSAGES), list(input))])));
        }
        if let Some(branch) = &self.state.branch {
            values.push((s(&trigger(branch)), Value::Null));
        }
        let text_map = |entries: Vec<(Value, Value)>| Value::Map(entries);
        let body = Value::Map(vec![
            (s("v"), Value::Int(4)),
            (s("ts"), s(&clock.ts())),
            (s("id"), s(&id)),
            (s("channel_values"), Value::Map(values)),
            (
                s("channel_versions"),
                text_map(
                    self.state
                        .versions
                        .iter()
                        .map(|(c, (_, text))| (s(c), s(text)))
                        .collect(),
                ),
            ),
            (
                s("versions_seen"),
                text_map(
                    self.state
                        .seen
                        .iter()
                        .map(|(node, seen)| {
                            (
                                s(node),
                                text_map(seen.iter().map(|(c, v)| (s(c), s(v))).collect()),
                            )
                        })
                        .collect(),
                ),
            ),
            (
                s("updated_channels"),
                updated.map_or(Value::Null, |channels| {
                    Value::List(channels.into_iter().map(s).collect())
                }),
            ),
        ]);
        let parents = match &self.root_checkpoint {
            Some(root) => format!("{{\"\": {}}}", serde_json::Value::from(root.as_str())),
            None => "{}".to_owned(),
        };
        let metadata =
            format!("{{\"source\": \"{source}\", \"step\": {step}, \"parents\": {parents}}}");
        rows.checkpoints.push(CheckpointRecord {
            thread_id: self.thread_id.clone(),
            checkpoint_ns: self.namespace.clone(),
            checkpoint_id: id.clone(),
            parent_checkpoint_id: self.state.head.replace(id.clone()),
            checkpoint: msgpack(&body),
            metadata: metadata.into_bytes(),
        });
        self.state.step = step;
        self.past.insert(id, self.state.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::langgraph::decode::checkpoint::Checkpoint;
    use crate::sources::langgraph::decode::decode_typed;

    fn human(id: &str) -> Message {
        Message::Human {
            id: id.into(),
            text: format!("question {id}"),
            name: None,
        }
    }

    #[test]
    fn ids_sort_by_time_and_carry_the_step() {
        let mut clock = Clock::new(crate::demo::ids::base_time(), DemoRng::new(1, 9));
        let first = clock.checkpoint_id(-1);
        clock.wait(1);
        let second = clock.checkpoint_id(0);
        assert!(first < second);
        assert_eq!(&first[14..15], "6");
        assert_eq!(&second[19..23], "8000");
        assert_eq!(&first[19..23], "bfff");
        let version = clock.version(3);
        assert!(version.starts_with(&format!("{:032}.", 3)), "{version}");
        // `random()` padded to 16 characters, as `f"{random():016}"` writes it.
        let random = &version[33..];
        assert!(
            random.len() >= 16 && random.parse::<f64>().is_ok(),
            "{version}"
        );
    }

    #[test]
    fn a_run_checkpoints_each_step_with_its_writes_on_the_step_before() {
        let mut clock = Clock::new(crate::demo::ids::base_time(), DemoRng::new(1, 9));
        let mut rows = Rows::default();
        let mut thread = Thread::new("t");
        thread.input(&mut clock, &mut rows, vec![human("h1")], "chat");
        let answer = Message::Ai {
            id: "a1".into(),
            text: "answer".into(),
            tool_calls: Vec::new(),
            usage: None,
        };
        thread.node(&mut clock, &mut rows, "chat", &[answer], None);
        let steps: Vec<(Option<&str>, &str)> = rows
            .checkpoints
            .iter()
            .map(|c| {
                (
                    c.parent_checkpoint_id.as_deref(),
                    std::str::from_utf8(&c.metadata).unwrap(),
                )
            })
            .collect();
        assert_eq!(
            steps[0],
            (None, r#"{"source": "input", "step": -1, "parents": {}}"#)
        );
        assert_eq!(
            steps[2].1,
            r#"{"source": "loop", "step": 1, "parents": {}}"#
        );
        assert_eq!(steps[2].0, Some(rows.checkpoints[1].checkpoint_id.as_str()));
        // The `__start__` task's writes are keyed to the input checkpoint, the node's to the
        // checkpoint that triggered it.
        let keyed: Vec<(&str, &str, &str)> = rows
            .writes
            .iter()
            .map(|w| {
                (
                    w.checkpoint_id.as_str(),
                    w.task_path.as_str(),
                    w.channel.as_str(),
                )
            })
            .collect();
        let id = |i: usize| rows.checkpoints[i].checkpoint_id.as_str();
        assert_eq!(
            keyed,
            [
                (id(0), "~__pregel_pull, __start__", "messages"),
                (id(0), "~__pregel_pull, __start__", "branch:to:chat"),
                (id(1), "~__pregel_pull, chat", "messages"),
            ]
        );
        let last = decode_typed("msgpack", &rows.checkpoints[2].checkpoint, None).unwrap();
        let body = Checkpoint::from_value(&last.value).unwrap();
        let (messages, unread) = body.messages();
        assert!(unread.is_empty());
        assert_eq!(messages.len(), 2);
        assert_eq!(
            body.versions_seen["chat"]["branch:to:chat"],
            body.channel_versions["__start__"]
        );
        assert_eq!(body.updated_channels, Some(vec!["messages".to_owned()]));
    }
}
