//! `info`: which configuration, paths and database are in use.

use std::path::PathBuf;

use serde::Serialize;

use crate::cli::context::Context;
use crate::cli::output::{CliResult, ExitCode, emit, table};
use crate::config::{StorageOrigin, UrlOrigin};
use crate::format::thousands;
use crate::storage::dify_env::TakenValue;

#[derive(Serialize)]
struct DifyInfo {
    file: PathBuf,
    taken: Vec<TakenValue>,
    notes: Vec<String>,
}
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
    database_url_source: UrlOrigin,
    /// Where Dify's files are read from (credentials hidden).
    storage: String,
    storage_settings: crate::storage::StorageBackend,
    storage_source: StorageOrigin,
    /// The values taken from Dify's settings, and from where.
    dify: Option<DifyInfo>,
    kb_root: PathBuf,
    model: String,
    counter: String,
    budget: i64,
    database: DatabaseStatus,
}

// One value per `info` run: boxing its larger variant would save nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
enum DatabaseStatus {
    NotCreatedYet,
    Open {
        backend: &'static str,
        /// Who made the database: memscope, Dify or Langflow (with its schema revision).
        kind: String,
        holds: Vec<crate::store::Part>,
        schema_version: Option<i64>,
        created_by_memscope: bool,
        read_only: bool,
        /// Where this database's knowledge bases live (its own directory under the KB root).
        database_kb_root: PathBuf,
        /// The database file this one is a copy of: its knowledge bases started from that one's.
        copy_of: Option<PathBuf>,
        /// Memory bases whose KB is still in the layout every database used to share.
        shared_layout: Vec<String>,
        /// What its conversation tables have of their schema's eras, and the behaviours that
        /// follow.
        conversation_schema: Option<ConversationSchema>,
        /// The conversations it keeps, when it keeps any.
        conversations: Option<crate::inspect::holdings::KeptConversations>,
        /// What its source says of how it stores its conversations (a checkpoint saver's
        /// figures), under the name scripts read it by.
        #[serde(rename = "checkpoints")]
        stored_figures: Option<crate::sources::stored_figures::StoredFigures>,
        tables: Vec<(String, i64)>,
    },
    Unavailable {
        error: String,
    },
}

#[derive(Serialize)]
struct ConversationSchema {
    /// Whose schema it is, for the text.
    #[serde(skip)]
    schema: &'static str,
    #[serde(flatten)]
    parts: crate::sources::schema_eras::EraParts,
    /// The parts found, in words.
    found: String,
    /// Which of the app's behaviours memscope applies, one line each.
    behaviours: Vec<&'static str>,
    /// Conversations deleted in the app, hidden unless asked for.
    deleted_count: i64,
}

/// The database's state, and the error that kept it from opening.
async fn database_status(context: &Context) -> (DatabaseStatus, Option<crate::store::StoreError>) {
    if context.default_database_file().is_some_and(|f| !f.exists()) {
        return (DatabaseStatus::NotCreatedYet, None);
    }
    let access = if context.global.write {
        Access::Write
    } else {
        Access::Auto
    };
    let kb_root = &context.resolved.kb_root;
    let opened = async {
        let store = Store::open(&context.resolved.database_url, access).await?;
        let described = describe(&store, kb_root).await;
        store.close().await;
        described
    };
    match opened.await {
        Ok(described) => (described, None),
        Err(e) => (
            DatabaseStatus::Unavailable {
                error: e.to_string(),
            },
            Some(e),
        ),
    }
}

/// What `info` says of an open database.
async fn describe(
    store: &Store,
    kb_root: &std::path::Path,
) -> Result<DatabaseStatus, crate::store::StoreError> {
    let tables = store.table_counts().await?;
    let conversations = crate::inspect::holdings::kept_conversations(store).await?;
    let home = crate::kb::database_home(kb_root, store);
    let own_root = home.root.clone();
    let mut shared = Vec::new();
    // Knowledge bases kept in the app's own rows never used memscope's old shared layout.
    let in_directories =
        store.profile().capabilities().knowledge_bases == crate::store::KbHome::MemscopeDirectory;
    if in_directories && store.has_table("memory_base") {
        for base in store.memory_bases().await? {
            let username = base.username.as_deref().unwrap_or(&base.user_id);
            let own = crate::kb::kb_dir(&own_root, username, &base.kb_name);
            if let Some(old) = crate::kb::left_in_shared_layout(kb_root, store.database_id(), &own)
            {
                shared.push(format!(
                    "{}: {}",
                    base.name,
                    crate::kb::shared_layout_advice(&base.name, &old, &own)
                ));
            }
        }
    }
    let conversation_schema = match store.profile().schema_eras(store.catalog()) {
        Some(eras) => Some(ConversationSchema {
            schema: eras.schema,
            parts: eras.parts,
            found: eras.found,
            behaviours: eras.behaviours,
            deleted_count: store.deleted_conversation_count().await?,
        }),
        None => None,
    };
    let stored_figures = crate::inspect::holdings::stored_figures(store).await?;
    Ok(DatabaseStatus::Open {
        backend: match store.backend() {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
            Backend::Mysql => "mysql",
        },
        kind: store.profile().describe(),
        holds: store.profile().parts().collect(),
        schema_version: store.schema_version(),
        created_by_memscope: store.created_by_memscope(),
        read_only: store.is_read_only(),
        database_kb_root: own_root,
        copy_of: home.copy_of,
        shared_layout: shared,
        conversation_schema,
        conversations,
        stored_figures,
        tables: tables
            .into_iter()
            .map(|t| (t.table.to_owned(), t.rows))
            .collect(),
    })
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
         storage          {} (from {})\n\
         knowledge bases  {}\n\
         tokens           model {}, counter {}, budget {}\n",
        info.version,
        path(&info.config_file),
        info.user_config_path.display(),
        info.data_dir.display(),
        info.tui_log.display(),
        info.database_url,
        match info.database_url_source {
            UrlOrigin::Flag => "--db",
            UrlOrigin::Environment => "MEMSCOPE_DATABASE_URL",
            UrlOrigin::ConfigFile => "the config file",
            UrlOrigin::EmbeddedDefault => "the built-in default: the demo database",
            UrlOrigin::DifyEnv => "Dify's settings",
        },
        info.storage,
        match info.storage_source {
            StorageOrigin::ConfigFile => "[storage] in the config file",
            StorageOrigin::DifyEnv => "Dify's settings",
            StorageOrigin::EmbeddedDefault => "the built-in default",
        },
        info.kb_root.display(),
        info.model,
        info.counter,
        thousands(info.budget),
    );
    if let Some(dify) = &info.dify {
        out.push_str(&format!(
            "\nfrom Dify's settings {}:\n",
            dify.file.display()
        ));
        let rows: Vec<Vec<String>> = dify
            .taken
            .iter()
            .map(|t| vec![t.variable.clone(), t.value.clone(), t.origin.clone()])
            .collect();
        out.push_str(&table(&["variable", "value", "from"], &rows));
        if !out.ends_with('\n') {
            out.push('\n');
        }
        for note in &dify.notes {
            out.push_str(&format!("note: {note}\n"));
        }
    }
    match &info.database {
        DatabaseStatus::NotCreatedYet => {
            out.push_str("\nThe demo database is created on first run (`memscope`).\n")
        }
        DatabaseStatus::Unavailable { .. } => out.push_str("\ndatabase unavailable (see below)\n"),
        DatabaseStatus::Open {
            backend,
            kind,
            holds,
            schema_version,
            created_by_memscope,
            read_only,
            database_kb_root,
            copy_of,
            shared_layout,
            conversation_schema,
            conversations,
            stored_figures,
            tables,
        } => {
            let holds: Vec<&str> = holds.iter().map(|part| part.label()).collect();
            out.push_str(&format!(
                "\nits knowledge bases  {}\n",
                database_kb_root.display()
            ));
            if let Some(original) = copy_of {
                out.push_str(&format!(
                    "  a copy of {}: its knowledge bases are its own, started from that file's\n",
                    original.display()
                ));
            }
            for note in shared_layout {
                out.push_str(&format!("  {note}\n"));
            }
            out.push_str(&format!(
                "\n{kind} on {backend}{}\nmemscope schema version {}, {}{}\n\n",
                // A database whose only holding is its conversations says so on the next line.
                match (holds.is_empty(), conversations.is_some()) {
                    (false, _) => format!(", holding {}", holds.join(", ")),
                    (true, true) => String::new(),
                    (true, false) => ", holding nothing memscope shows".to_owned(),
                },
                schema_version.map_or("none".to_owned(), |v| v.to_string()),
                if *created_by_memscope {
                    "created by memscope"
                } else {
                    "not created by memscope"
                },
                if *read_only { ", read-only" } else { "" },
            ));
            if let Some(kept) = conversations {
                out.push_str(&format!("{}\n\n", kept.describe()));
            }
            if let Some(schema) = conversation_schema {
                out.push_str(&format!("{} schema with {}\n", schema.schema, schema.found));
                for line in &schema.behaviours {
                    out.push_str(&format!("  {line}\n"));
                }
                if schema.deleted_count > 0 {
                    out.push_str(&format!(
                        "  {} deleted {} hidden\n",
                        thousands(i128::from(schema.deleted_count)),
                        crate::format::noun(schema.deleted_count as u64, "conversation")
                    ));
                }
                out.push('\n');
            }
            if let Some(figures) = stored_figures {
                out.push_str(&format!("{}\n\n", figures.line));
            }
            let rows: Vec<Vec<String>> = tables
                .iter()
                .map(|(t, n)| vec![t.clone(), thousands(*n)])
                .collect();
            out.push_str(&table(&["table", "rows"], &rows));
        }
    }
    out
}

/// Prints what is in use; a database that cannot be opened is an error (exit 3) after the
/// configuration is shown (under `--json` only the error is printed, on standard error).
pub async fn run(context: &Context) -> CliResult {
    let resolved = &context.resolved;
    let (database, error) = database_status(context).await;
    let info = Info {
        version: env!("CARGO_PKG_VERSION"),
        config_file: resolved.config_file.clone(),
        user_config_path: resolved.dirs.user_config_file(),
        data_dir: resolved.dirs.data.clone(),
        tui_log: resolved.dirs.data.join(crate::tui::LOG_FILE),
        database_url: redact_url(&resolved.database_url),
        database_url_source: resolved.url_source,
        storage: resolved.storage.describe(),
        storage_settings: resolved.storage.clone(),
        storage_source: resolved.storage_source,
        dify: resolved.dify.as_ref().map(|d| DifyInfo {
            file: d.file.clone(),
            taken: d.taken.clone(),
            notes: d.notes.clone(),
        }),
        kb_root: resolved.kb_root.clone(),
        model: resolved.config.tokens.model.clone(),
        counter: resolved.config.tokens.counter.clone(),
        budget: resolved.config.tokens.budget,
        database,
    };
    if let Some(error) = error {
        if !context.global.json {
            emit(false, &info, render)?;
        }
        return Err(context.with_dify_hint(error.into()));
    }
    emit(context.global.json, &info, render)?;
    Ok(ExitCode::Ok)
}
