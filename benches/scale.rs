//! The large demo end to end, through the real binary: `demo --scale large` (target <= 120 s),
//! then `doctor` over it (target <= 60 s) and the first page of `conversations`. One timed run
//! each: these take minutes, so criterion's repetitions do not fit. Then conversation search on
//! the 1,000,000 messages, in process, several runs each (min / median / max): a text no message
//! holds and texts many or few hold, through the search index and then by scanning (the same
//! database with its index switched off, as a database memscope did not create is searched).
//!
//! `cargo bench --bench scale`; set MEMSCOPE_BENCH_DIR to keep the database for other benches,
//! and MEMSCOPE_BENCH_REUSE=1 to reuse a database kept there instead of generating it again.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn memscope(home: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_memscope"));
    command
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env_remove("MEMSCOPE_DATABASE_URL");
    command
}

fn timed(what: &str, command: &mut Command, expect_code: i32) -> Duration {
    let started = Instant::now();
    let output = command.output().expect("memscope runs");
    let elapsed = started.elapsed();
    assert_eq!(
        output.status.code(),
        Some(expect_code),
        "{what} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    println!("{what:<40} {:>8.2} s", elapsed.as_secs_f64());
    elapsed
}

fn main() {
    // `cargo bench -- <filter>` passes arguments; this bench has no sub-benchmarks to filter.
    if std::env::args().any(|a| a == "--list") {
        println!("scale: bench");
        return;
    }
    let temp = tempfile::tempdir().unwrap();
    let home: PathBuf = std::env::var_os("MEMSCOPE_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| temp.path().to_path_buf());
    std::fs::create_dir_all(&home).unwrap();
    let db = home.join("large.db");
    let url = format!("sqlite://{}", db.display());
    let reuse = std::env::var_os("MEMSCOPE_BENCH_REUSE").is_some() && db.exists();
    if !reuse {
        let _ = std::fs::remove_file(&db);
        timed(
            "demo --scale large",
            memscope(&home).args(["demo", "--scale", "large", "--db", &url]),
            0,
        );
    }
    let size = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
    println!("{:<40} {:>8.0} MB", "database size", size as f64 / 1e6);
    timed(
        "doctor (large)",
        memscope(&home).args(["doctor", "--json", "--db", &url]),
        1,
    );
    timed(
        "conversations, first page (large)",
        memscope(&home).args(["conversations", "--db", &url]),
        0,
    );
    timed(
        "conversations --search, no match (large)",
        memscope(&home).args(["conversations", "--search", NO_MATCH, "--db", &url]),
        0,
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(searches(&url));
}

/// A text no demo message holds; one a tenth of the questions hold; one a single story holds.
const NO_MATCH: &str = "zebra crossing at noon";
const COMMON: &str = "csv importer";
const RARE: &str = "marginalia";

/// Runs of each in-process search.
const RUNS: usize = 7;

async fn searches(url: &str) {
    use memscope::sources::dify::queries::ConversationFilter;
    use memscope::store::{Access, Store};
    let search = |text: &str| ConversationFilter {
        search: Some(text.to_owned()),
        ..ConversationFilter::default()
    };
    let store = Store::open(url, Access::ReadOnly).await.expect("open");
    for text in [NO_MATCH, COMMON, RARE] {
        let path = store.search_path(Some(text));
        let mut times = Vec::new();
        let mut found = 0;
        for _ in 0..RUNS {
            let started = Instant::now();
            found = store
                .list_conversations(&search(text))
                .await
                .expect("search")
                .len();
            times.push(started.elapsed());
        }
        report(&format!("search {text:?} ({path:?}, {found} rows)"), times);
    }
    store.close().await;

    // The same searches by scanning: the index is switched off for the run, then on again.
    let switch = |on: bool| async move {
        let pool = sqlx::SqlitePool::connect(url).await.expect("connect");
        let sql = if on {
            "INSERT INTO memscope_meta (key, value) VALUES ('message_search', 'fts5-trigram')"
        } else {
            "DELETE FROM memscope_meta WHERE key = 'message_search'"
        };
        sqlx::query(sql)
            .execute(&pool)
            .await
            .expect("switch the index");
        pool.close().await;
    };
    switch(false).await;
    let store = Store::open(url, Access::ReadOnly).await.expect("open");
    for text in [NO_MATCH, COMMON, RARE] {
        let path = store.search_path(Some(text));
        let mut times = Vec::new();
        let mut found = 0;
        for _ in 0..3 {
            let started = Instant::now();
            found = store
                .list_conversations(&search(text))
                .await
                .expect("search")
                .len();
            times.push(started.elapsed());
        }
        report(&format!("search {text:?} ({path:?}, {found} rows)"), times);
    }
    store.close().await;
    switch(true).await;
}

fn report(what: &str, mut times: Vec<Duration>) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{what:<60} min {:>8.1} ms  median {:>8.1} ms  max {:>8.1} ms",
        ms(times[0]),
        ms(times[times.len() / 2]),
        ms(times[times.len() - 1])
    );
}
