//! What every command starts from: the [`Context`] (the resolved configuration, the global flags
//! and the databases it opened), and the input helpers several commands share.

use std::path::{Path, PathBuf};

use super::args::{GlobalArgs, TokenArgs};
use super::demo_database;
use super::output::{CliError, CliResult};
use crate::config::{self, Dirs, Overrides, Resolved, UrlOrigin};
use crate::memory::context_windows::ContextWindow;
use crate::store::{Access, Part, Store};

/// Everything a command needs: the resolved configuration and how to open the database.
pub struct Context {
    pub resolved: Resolved,
    pub global: GlobalArgs,
    /// Every database a command opened, closed when it is done: SQLite removes a WAL-mode
    /// file's `-wal` and `-shm` only when its last connection closes.
    opened: std::sync::Mutex<Vec<Store>>,
}

impl Context {
    pub fn new(global: GlobalArgs) -> CliResult<Context> {
        let overrides = Overrides {
            config_file: global.config.clone(),
            database_url: global.db.clone(),
            dify_env: global.dify_env.clone(),
            ..Overrides::default()
        }
        .with_env();
        let resolved = config::resolve(Dirs::from_env()?, &overrides)?;
        Ok(Context {
            resolved,
            global,
            opened: Default::default(),
        })
    }

    /// The embedded default database's file, when that is the database in use.
    pub fn default_database_file(&self) -> Option<PathBuf> {
        (self.resolved.url_source == UrlOrigin::EmbeddedDefault)
            .then(|| self.resolved.dirs.default_database_file())
    }

    /// How databases are opened: writable only where memscope may write, unless `--write`.
    pub fn access(&self) -> Access {
        if self.global.write {
            Access::Write
        } else {
            Access::Auto
        }
    }

    /// Opens the configured database. The embedded default is created and filled with the small
    /// demo on first use, so memscope has something to show on a fresh machine.
    pub async fn open(&self) -> CliResult<Store> {
        if let Some(file) = self.default_database_file()
            && !file.exists()
        {
            demo_database::create_default_database(&self.resolved, &file).await?;
        }
        let store = match Store::open(&self.resolved.database_url, self.access()).await {
            Ok(store) => store,
            Err(error) => return Err(self.with_dify_hint(error.into())),
        };
        self.opened
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(store.clone());
        Ok(store)
    }

    /// A database error with the note Dify's settings left about the host, when the URL came
    /// from them (`DB_HOST=db_postgres` resolves only inside Dify's Docker network; a MySQL server on
    /// Dify's default `DB_PORT`, PostgreSQL's).
    pub(crate) fn with_dify_hint(&self, error: CliError) -> CliError {
        let note = self
            .resolved
            .dify
            .as_ref()
            .filter(|_| self.resolved.url_source == UrlOrigin::DifyEnv)
            .and_then(|dify| {
                dify.notes
                    .iter()
                    .find(|n| n.starts_with("DB_HOST") || n.starts_with("DB_PORT"))
            });
        match note {
            Some(note) => error.with_hint(note.clone()),
            None => error,
        }
    }

    /// Dify's object storage as configured (`[storage]`, or Dify's settings).
    pub fn storage(&self) -> CliResult<crate::storage::ObjectStore> {
        crate::storage::ObjectStore::open(&self.resolved.storage)
            .map_err(|e| config::ConfigError::Storage(e.to_string()).into())
    }

    /// The object storage Dify's files are read from for `store`, when one is configured for it
    /// (see `Resolved::files_storage`).
    pub fn files_storage(&self, store: &Store) -> CliResult<Option<crate::storage::ObjectStore>> {
        self.resolved
            .files_storage(store.created_by_memscope())
            .map(|backend| {
                crate::storage::ObjectStore::open(backend)
                    .map_err(|e| config::ConfigError::Storage(e.to_string()).into())
            })
            .transpose()
    }

    /// Closes the databases the command opened.
    pub(super) async fn close(&self) {
        let opened = std::mem::take(
            &mut *self
                .opened
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        for store in opened {
            store.close().await;
        }
    }

    /// Opens the database for a command that reads `part` of it: a database without that part
    /// (chat memories on Dify, conversations on Langflow) fails with one line saying what it is.
    pub async fn open_for(&self, part: Part) -> CliResult<Store> {
        let store = self.open().await?;
        store.require(part)?;
        Ok(store)
    }
}

/// The token counter the flags ask for, defaulting to the configuration.
pub fn counter_from(
    context: &Context,
    args: &TokenArgs,
) -> CliResult<(crate::memory::tokens::TokenCounter, String)> {
    let tokens = &context.resolved.config.tokens;
    let model = args.model.clone().unwrap_or_else(|| tokens.model.clone());
    let counter = args.counter.as_deref().unwrap_or(&tokens.counter);
    let encoding = args.encoding.as_deref().unwrap_or(&tokens.encoding);
    let counter = crate::inspect::token_counter(&model, counter, Some(encoding))?;
    Ok((counter, model))
}

/// The model's context window, `[tokens.context_windows]` first.
pub fn context_window_of(context: &Context, model: &str) -> ContextWindow {
    ContextWindow::of(model, &context.resolved.config.tokens.context_windows)
}

/// Reads a file, or standard input for `-`.
pub fn read_input(path: &Path) -> CliResult<String> {
    if path == Path::new("-") {
        std::io::read_to_string(std::io::stdin())
            .map_err(|e| CliError::failure(format!("cannot read standard input: {e}")))
    } else {
        std::fs::read_to_string(path)
            .map_err(|e| CliError::failure(format!("cannot read {}: {e}", path.display())))
    }
}
