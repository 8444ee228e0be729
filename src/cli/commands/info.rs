//! `info`: which configuration, paths and database are in use.

use std::path::PathBuf;

use serde::Serialize;

use crate::cli::Context;
use crate::cli::output::{CliResult, ExitCode, emit, table, thousands};
use crate::config::UrlSource;
use crate::store::{Access, Backend, Store, redact_url};

#[derive(Serialize)]
struct Info {
    version: &'static str,
    config_file: Option<PathBuf>,
    user_config_path: PathBuf,
    data_dir: PathBuf,
    /// Where the TUI writes its log.
    tui_log: PathBuf,
    database_url: String,
    database_url_source: UrlSource,
    storage_root: PathBuf,
    kb_root: PathBuf,
    model: String,
    counter: String,
    budget: i64,
    database: DatabaseStatus,
}

#[derive(Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
enum DatabaseStatus {
    NotCreatedYet,
    Open {
        backend: &'static str,
        schema_version: Option<i64>,
        created_by_memscope: bool,
        read_only: bool,
        tables: Vec<(String, i64)>,
    },
    Unavailable {
        error: String,
    },
}

async fn database_status(context: &Context) -> DatabaseStatus {
    if context.default_database_file().is_some_and(|f| !f.exists()) {
        return DatabaseStatus::NotCreatedYet;
    }
    let access = if context.global.write {
        Access::Write
    } else {
        Access::Auto
    };
    let opened = async {
        let store = Store::open(&context.resolved.database_url, access).await?;
        let tables = store.table_counts().await?;
        Ok::<_, crate::store::StoreError>((store, tables))
    };
    match opened.await {
        Ok((store, tables)) => DatabaseStatus::Open {
            backend: match store.backend() {
                Backend::Sqlite => "sqlite",
                Backend::Postgres => "postgres",
            },
            schema_version: store.schema_version(),
            created_by_memscope: store.created_by_memscope(),
            read_only: store.is_read_only(),
            tables: tables
                .into_iter()
                .map(|t| (t.table.to_owned(), t.rows))
                .collect(),
        },
        Err(e) => DatabaseStatus::Unavailable {
            error: e.to_string(),
        },
    }
}

fn render(info: &Info) -> String {
    let path = |p: &Option<PathBuf>| {
        p.as_ref()
            .map_or("(none: embedded defaults)".to_owned(), |p| {
                p.display().to_string()
            })
    };
    let mut out = format!(
        "memscope {}\n\
         config file      {}\n\
         user config      {}\n\
         data directory   {}\n\
         TUI log          {}\n\
         database         {} (from {})\n\
         storage root     {}\n\
         knowledge bases  {}\n\
         tokens           model {}, counter {}, budget {}\n",
        info.version,
        path(&info.config_file),
        info.user_config_path.display(),
        info.data_dir.display(),
        info.tui_log.display(),
        info.database_url,
        match info.database_url_source {
            UrlSource::Flag => "--db",
            UrlSource::Environment => "MEMSCOPE_DATABASE_URL",
            UrlSource::ConfigFile => "the config file",
            UrlSource::EmbeddedDefault => "the built-in default: the demo database",
        },
        info.storage_root.display(),
        info.kb_root.display(),
        info.model,
        info.counter,
        info.budget,
    );
    match &info.database {
        DatabaseStatus::NotCreatedYet => {
            out.push_str("\nThe demo database is created on first run (`memscope`).\n")
        }
        DatabaseStatus::Unavailable { error } => {
            out.push_str(&format!("\ndatabase unavailable: {error}\n"))
        }
        DatabaseStatus::Open {
            backend,
            schema_version,
            created_by_memscope,
            read_only,
            tables,
        } => {
            out.push_str(&format!(
                "\n{backend} database, schema version {}, {}{}\n\n",
                schema_version.map_or("none".to_owned(), |v| v.to_string()),
                if *created_by_memscope {
                    "created by memscope"
                } else {
                    "not created by memscope"
                },
                if *read_only { ", read-only" } else { "" },
            ));
            let rows: Vec<Vec<String>> = tables
                .iter()
                .map(|(t, n)| vec![t.clone(), thousands(*n)])
                .collect();
            out.push_str(&table(&["table", "rows"], &rows));
        }
    }
    out
}

pub async fn run(context: &Context) -> CliResult {
    let resolved = &context.resolved;
    let info = Info {
        version: env!("CARGO_PKG_VERSION"),
        config_file: resolved.config_file.clone(),
        user_config_path: resolved.dirs.user_config_file(),
        data_dir: resolved.dirs.data.clone(),
        tui_log: resolved.dirs.data.join(crate::tui::LOG_FILE),
        database_url: redact_url(&resolved.database_url),
        database_url_source: resolved.url_source,
        storage_root: resolved.storage_root.clone(),
        kb_root: resolved.kb_root.clone(),
        model: resolved.config.tokens.model.clone(),
        counter: resolved.config.tokens.counter.clone(),
        budget: resolved.config.tokens.budget,
        database: database_status(context).await,
    };
    emit(context.global.json, &info, render)?;
    Ok(ExitCode::Ok)
}
