//! Memory bases tab frame costs (TestBackend, 120x40): 100 bases with a mismatch on every tenth,
//! the selected base with 1,000 sessions and the cursor at the bottom (gauges drawn cell by
//! cell), the jobs popup over 20 job-table rows merged with 20 running jobs of this process, and
//! one progress report applied by `update()` with those jobs tracked.

#[path = "../tests/tui_support/mod.rs"]
mod tui_support;

use std::hint::black_box;

use chrono::{DateTime, TimeZone, Utc};
use criterion::{Criterion, criterion_group, criterion_main};
use memscope::inspect::memory_bases::{BaseStatus, SessionStatus};
use memscope::memory::memory_base::Mismatch;
use memscope::store::memory_bases::{JobInfo, MemoryBaseInfo, MemoryBaseSessionInfo};
use memscope::sync::{JobProgress, Stage};
use memscope::tui::keymap::Keymap;
use memscope::tui::state::memory_bases::{Focus, TrackedJob};
use memscope::tui::state::{AppState, LoadStatus, Overlay, Screen};
use memscope::tui::theme::Theme;
use memscope::tui::ui;
use memscope::tui::update::{Event, JobEvent, MbEvent, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const BASES: usize = 100;
const SESSIONS: usize = 1_000;
const JOBS: usize = 20;

fn at(seconds: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_771_400_000 + seconds, 0).unwrap()
}

fn base(n: usize) -> BaseStatus {
    let base = MemoryBaseInfo {
        id: format!("base-{n}"),
        name: format!("Memory base {n}"),
        flow_id: format!("flow-{n}"),
        flow_name: Some(format!("Flow {n}")),
        user_id: "user".to_owned(),
        username: Some("ada".to_owned()),
        threshold: 50,
        threshold_unit: "runs".to_owned(),
        auto_capture: n % 2 == 0,
        embedding_provider: "memscope".to_owned(),
        embedding_model: "hashing-lexical".to_owned(),
        kb_name: format!("memory_base_{n:08x}"),
        created_at: at(0),
        sessions: SESSIONS as i64,
        total_processed: 1_000 * n as i64,
        ingestion_records: 1_000 * n as i64,
        active_jobs: 0,
        last_sync_at: Some(at(60)),
    };
    let mismatches = if n % 10 == 0 {
        vec![Mismatch::StoreEmpty]
    } else {
        Vec::new()
    };
    let kb_path = format!("/kb/ada/{}", base.kb_name).into();
    BaseStatus::new(base, kb_path, mismatches)
}

fn session(n: usize) -> SessionStatus {
    let pending = (n % 70) as i64;
    SessionStatus {
        session: MemoryBaseSessionInfo {
            id: format!("row-{n}"),
            memory_base_id: "base-0".to_owned(),
            session_id: format!("session-{n:06}"),
            cursor_id: Some(format!("{n:08x}-0000-4000-8000-000000000000")),
            total_processed: n as i64 * 3,
            last_sync_at: Some(at(n as i64)),
            pending_runs: pending,
            ingestion_records: n as i64 * 3,
        },
        pending,
        pending_messages: pending,
        threshold: 50,
        unit: "runs",
        due: pending >= 50,
    }
}

fn progress(n: usize, done: u64) -> JobProgress {
    JobProgress {
        job_id: format!("{n:08x}-1111-4000-8000-000000000000"),
        memory_base_id: "base-0".to_owned(),
        session_id: format!("session-{n:06}"),
        stage: Stage::Running,
        messages_done: done,
        messages_total: 2_000,
        chunks_written: done,
    }
}

fn state() -> AppState {
    let mut state = AppState::new(
        Keymap::default_keys(),
        tui_support::settings(),
        "sqlite:///bench.db".to_owned(),
        false,
    );
    state.screen = Screen::MemoryBases;
    state.list.status = LoadStatus::Loaded;
    let tab = &mut state.memory_bases;
    tab.bases = (0..BASES).map(base).collect();
    tab.status = LoadStatus::Loaded;
    tab.sessions = (0..SESSIONS).map(session).collect();
    tab.sessions_status = LoadStatus::Loaded;
    tab.focus = Focus::Sessions;
    tab.session_selected = SESSIONS - 1;
    state.jobs.tracked = (0..JOBS)
        .map(|n| TrackedJob {
            progress: progress(n, 500),
            started: at(100),
            finished: None,
            automatic: n % 2 == 0,
        })
        .collect();
    state.jobs.table = (0..JOBS)
        .map(|n| JobInfo {
            job_id: format!("{n:08x}-2222-4000-8000-000000000000"),
            status: "completed".to_owned(),
            job_type: "ingestion".to_owned(),
            asset_id: Some("base-0".to_owned()),
            dedupe_key: Some(format!("ingestion:base-0:session-{n:06}:0")),
            created_timestamp: at(n as i64),
            finished_timestamp: Some(at(n as i64 + 5)),
            ended_reason: None,
        })
        .collect();
    state.jobs.now = Some(at(200));
    state
}

fn bench(c: &mut Criterion) {
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let theme = Theme::monochrome();
    let mut tab = state();
    c.bench_function("draw_memory_bases_tab_100_bases_1k_sessions", |b| {
        b.iter(|| {
            terminal
                .draw(|frame| ui::draw(black_box(&tab), &theme, frame))
                .unwrap();
        })
    });
    tab.overlay = Overlay::Jobs;
    tab.jobs.open = true;
    c.bench_function("draw_jobs_popup_20_table_rows_20_running", |b| {
        b.iter(|| {
            terminal
                .draw(|frame| ui::draw(black_box(&tab), &theme, frame))
                .unwrap();
        })
    });
    let mut done = 0;
    c.bench_function("progress_report_update_20_running", |b| {
        b.iter(|| {
            done = (done + 1) % 2_000;
            let event = MbEvent::Progress {
                progress: progress(7, done),
                at: at(150),
                automatic: false,
            };
            black_box(update(&mut tab, Event::Job(JobEvent::MemoryBases(event))))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
