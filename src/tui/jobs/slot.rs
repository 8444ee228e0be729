//! The one way the TUI runs a job. A load takes the slot of its kind: starting it stops the
//! slot's previous task, so only the latest request's result comes back, and every report it
//! sends goes through its [`LoadReply`], stamped with its request's generation (the core drops
//! any that slipped through). A write or a sync has no slot: a later request never stops it
//! mid-way, and quitting asks it to stop and waits a moment for it to roll back.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;

use crate::memory::tokens::CountCache;
use crate::store::CancelFlag;
use crate::tui::update::{JobEvent, LoadReport};

/// How long quitting waits for a write to roll back or commit before dropping it.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

/// The kinds of loads; each runs at most once at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    Database,
    List,
    Snippet,
    ThreadTokens,
    Conversation,
    Budget,
    Poll,
    Nodes,
    NodeContext,
    Timeline,
    MemoryList,
    MemoryTokens,
    MemoryPage,
    TrimSource,
    Summary,
    Bases,
    Sessions,
    Jobs,
    Search,
    Doctor,
    CheckpointTree,
    Checkpoint,
    PrunePlan,
    /// What `u` undoes on a thread.
    Undo,
    /// An open session's tree (`t`).
    Tree,
    /// A bundle (`E`).
    Export,
}

const SLOTS: usize = Slot::Export as usize + 1;

/// Where a job's results go: the runner's one channel.
#[derive(Debug, Clone)]
pub(super) struct Reply(UnboundedSender<JobEvent>);

impl Reply {
    /// Sends `event`; `false` once the app stopped listening.
    pub(super) fn send(&self, event: impl Into<JobEvent>) -> bool {
        self.0.send(event.into()).is_ok()
    }
}

/// Where one load's reports go, each stamped with the generation of its request.
#[derive(Debug, Clone)]
pub(super) struct LoadReply {
    reply: Reply,
    generation: u64,
}

impl LoadReply {
    /// Sends `report`; `false` once the app stopped listening.
    pub(super) fn send(&self, report: impl Into<LoadReport>) -> bool {
        self.reply.send(JobEvent::load(self.generation, report))
    }
}

/// A running task and the flag that asks it to stop where an abort cannot reach.
type Running = (JoinHandle<()>, CancelFlag);

/// The tasks of one runner: its loads by slot, and its writes.
pub(super) struct Tasks {
    reply: Reply,
    loads: [Option<Running>; SLOTS],
    writes: Vec<Running>,
}

impl Tasks {
    pub(super) fn new(events: UnboundedSender<JobEvent>) -> Tasks {
        Tasks {
            reply: Reply(events),
            loads: Default::default(),
            writes: Vec::new(),
        }
    }

    /// Where the jobs' results go.
    pub(super) fn reply(&self) -> Reply {
        self.reply.clone()
    }

    /// Starts the load requested as `generation` in `slot`, stopping the slot's previous one.
    /// `job` reports through the reply it is given.
    pub(super) fn load<F>(&mut self, slot: Slot, generation: u64, job: impl FnOnce(LoadReply) -> F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.load_until(slot, generation, CancelFlag::default(), job);
    }

    /// [`Tasks::load`] for a job that also watches `flag` (work an abort cannot stop).
    pub(super) fn load_until<F>(
        &mut self,
        slot: Slot,
        generation: u64,
        flag: CancelFlag,
        job: impl FnOnce(LoadReply) -> F,
    ) where
        F: Future<Output = ()> + Send + 'static,
    {
        self.stop(slot);
        let reply = LoadReply {
            reply: self.reply(),
            generation,
        };
        self.loads[slot as usize] = Some((tokio::spawn(job(reply)), flag));
    }

    /// Starts the poll for a conversation's newest message, stopping the previous poll. Its
    /// report is not stamped: it names the conversation it read, which the core compares.
    pub(super) fn poll(&mut self, job: impl Future<Output = ()> + Send + 'static) {
        self.stop(Slot::Poll);
        self.loads[Slot::Poll as usize] = Some((tokio::spawn(job), CancelFlag::default()));
    }

    /// Stops the load running in `slot`, if any.
    pub(super) fn stop(&mut self, slot: Slot) {
        if let Some((task, flag)) = self.loads[slot as usize].take() {
            flag.cancel();
            task.abort();
        }
    }

    /// Starts a write that runs to its end; `flag` asks it to stop when the app quits.
    pub(super) fn write(
        &mut self,
        flag: CancelFlag,
        job: impl Future<Output = ()> + Send + 'static,
    ) {
        self.writes.retain(|(task, _)| !task.is_finished());
        self.writes.push((tokio::spawn(job), flag));
    }

    /// Stops every load: the database they read is no longer the app's.
    pub(super) fn stop_loads(&mut self) {
        for (task, flag) in self.loads.iter_mut().filter_map(Option::take) {
            flag.cancel();
            task.abort();
        }
    }

    /// Stops every load, and asks every write to stop: each rolls back at its next check;
    /// whatever has not finished within a few seconds is dropped.
    pub(super) async fn shutdown(&mut self) {
        self.stop_loads();
        let writes: Vec<Running> = self.writes.drain(..).collect();
        for (_, flag) in &writes {
            flag.cancel();
        }
        for (task, _) in writes {
            let abort = task.abort_handle();
            if tokio::time::timeout(SHUTDOWN_WAIT, task).await.is_err() {
                abort.abort();
            }
        }
    }
}

/// Logs a job failure and turns it into the text the screen shows.
pub(super) fn report(error: impl std::fmt::Display) -> String {
    let text = error.to_string();
    tracing::warn!(error = %text, "background job failed");
    text
}

/// Runs `work` on a blocking thread with the token count cache the jobs share.
pub(super) async fn with_cache<T: Send + 'static>(
    cache: Arc<Mutex<CountCache>>,
    work: impl FnOnce(&mut CountCache) -> T + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(move || {
        let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
        work(&mut cache)
    })
    .await
    .map_err(report)
}
