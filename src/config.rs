//! Configuration: the embedded default (`config.toml`), a user file that overrides it, then the
//! environment and flags for the database URL.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::storage::dify_env::{self, DifyEnvError, DifySettings};
use crate::storage::settings::{AddressStyle, S3Settings, Secret, StorageBackend, split_options};

/// The documented default configuration, compiled in.
pub const DEFAULT_CONFIG: &str = include_str!("../config.toml");

/// Environment variable that overrides the configured database URL.
pub const DATABASE_URL_ENV: &str = "MEMSCOPE_DATABASE_URL";

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {path}{}: {message}", at_line(*line_column))]
    Invalid {
        path: PathBuf,
        /// Where in the file, 1-based, when the problem has a place.
        line_column: Option<(usize, usize)>,
        message: String,
    },
    #[error("no home directory: cannot place memscope's data and config directories")]
    NoHome,
    #[error(transparent)]
    Dify(#[from] DifyEnvError),
    #[error("[storage] {0}")]
    Storage(String),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub database: DatabaseConfig,
    pub storage: StorageConfig,
    pub memory_bases: MemoryBasesConfig,
    pub tokens: TokensConfig,
    pub history: HistoryConfig,
    pub ui: UiConfig,
    pub summarizer: SummarizerConfig,
    pub dify: DifyConfig,
    /// The TUI keymap: `[keys.<context>]` tables of `"key" = { action, desc }`.
    pub keys: toml::Table,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseConfig {
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorageConfig {
    pub root: String,
    pub kb_root: String,
    /// `""` (Dify's settings when given, else `fs`), `fs`, `s3` or another OpenDAL scheme.
    pub service: String,
    pub bucket: String,
    pub region: String,
    pub endpoint: String,
    pub address_style: String,
    pub prefix: String,
    pub access_key_id: String,
    pub secret_access_key: String,
    /// Options of another OpenDAL service, as OpenDAL names them.
    pub options: std::collections::BTreeMap<String, String>,
}

/// `[dify]`: Dify's own settings file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DifyConfig {
    pub env_file: String,
}

/// `[memory_bases]`: embedders, leases and the watcher (the KB root is `[storage] kb_root`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryBasesConfig {
    pub embedding_model: String,
    /// Empty: no embeddings server.
    pub embeddings_url: String,
    pub embeddings_dimension: usize,
    pub embeddings_batch: usize,
    pub embeddings_timeout_secs: u64,
    pub embeddings_retries: u32,
    pub embeddings_api_key_env: String,
    pub lease_secs: u64,
    pub batch_messages: i64,
    pub watch_interval_secs: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokensConfig {
    pub model: String,
    pub counter: String,
    pub encoding: String,
    pub budget: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryConfig {
    pub message_limit: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UiConfig {
    /// `dark` or `light`.
    pub theme: String,
    pub mouse: bool,
}

/// Which summarizer writes trim summaries, and how it is reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummarizerConfig {
    /// `extractive` (offline, the default) or `chat-completions`.
    pub kind: SummarizerKindConfig,
    /// An OpenAI-compatible API root; `/chat/completions` is appended.
    pub base_url: String,
    pub model: String,
    /// Name of the environment variable holding the API key (never the key itself).
    pub api_key_env: String,
    pub timeout_seconds: u64,
    /// The rules a summary follows when a policy names none; empty: seed 004's default.
    pub summarize_prompt: String,
    /// `max_tokens` asked of the endpoint; 0: the policy's `summary_max_tokens`.
    pub max_tokens: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SummarizerKindConfig {
    Extractive,
    ChatCompletions,
}

impl SummarizerConfig {
    /// The configured rules, `None` when empty (the policy's own or seed 004's apply).
    pub fn default_prompt(&self) -> Option<&str> {
        Some(self.summarize_prompt.as_str()).filter(|p| !p.trim().is_empty())
    }
}

/// Where memscope keeps its files.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dirs {
    pub data: PathBuf,
    pub config: PathBuf,
}

impl Dirs {
    /// The XDG directories (`$XDG_DATA_HOME/memscope`, `$XDG_CONFIG_HOME/memscope`).
    pub fn from_env() -> Result<Dirs, ConfigError> {
        let dirs = directories::ProjectDirs::from("", "", "memscope").ok_or(ConfigError::NoHome)?;
        Ok(Dirs {
            data: dirs.data_dir().to_path_buf(),
            config: dirs.config_dir().to_path_buf(),
        })
    }

    pub fn user_config_file(&self) -> PathBuf {
        self.config.join("config.toml")
    }

    pub fn default_database_file(&self) -> PathBuf {
        self.data.join("memscope.db")
    }
}

/// Where the database URL in use came from: `info` says so, and only the embedded default is
/// created and filled with the demo on first run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UrlSource {
    Flag,
    Environment,
    ConfigFile,
    EmbeddedDefault,
    /// Built from Dify's settings (`--dify-env` or `[dify] env_file`).
    DifyEnv,
}

/// Where the object storage settings came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StorageSource {
    ConfigFile,
    DifyEnv,
    EmbeddedDefault,
}

/// The configuration in effect, with the paths it was resolved from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resolved {
    pub config: Config,
    pub dirs: Dirs,
    /// The user config file that was read, if there was one.
    pub config_file: Option<PathBuf>,
    pub database_url: String,
    pub url_source: UrlSource,
    /// Where memscope writes demo files: the local storage directory (`<data dir>/storage` when
    /// the storage is not local).
    pub storage_root: PathBuf,
    /// Where Dify's files are read from, and who said so.
    pub storage: StorageBackend,
    pub storage_source: StorageSource,
    /// Dify's settings, when `--dify-env` or `[dify] env_file` named them.
    pub dify: Option<DifySettings>,
    pub kb_root: PathBuf,
}

fn at_line(line_column: Option<(usize, usize)>) -> String {
    line_column.map_or_else(String::new, |(line, column)| {
        format!(", line {line}, column {column}")
    })
}

/// The accepted `ui.theme` values.
pub const THEMES: [&str; 2] = ["dark", "light"];

fn embedded() -> toml::Table {
    DEFAULT_CONFIG
        .parse()
        .expect("the embedded config.toml is valid TOML")
}

/// Parses the embedded default, then overlays `user_toml` key by key. A problem in the user's
/// file is reported with the file, line and column of the key at fault.
pub fn merge(user_toml: Option<(&Path, &str)>) -> Result<Config, ConfigError> {
    let mut merged = embedded();
    let Some((path, text)) = user_toml else {
        return checked(merged).map_err(|message| ConfigError::Invalid {
            path: PathBuf::from("<embedded config.toml>"),
            line_column: None,
            message,
        });
    };
    let invalid = |line_column, message| ConfigError::Invalid {
        path: path.to_path_buf(),
        line_column,
        message,
    };
    let user: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let place = e.span().map(|span| line_column(text, span.start));
        invalid(place, e.message().trim_end().to_owned())
    })?;
    overlay(&mut merged, user.clone());
    checked(merged).map_err(|message| {
        // Find the key at fault: the first user key that fails alone on the defaults.
        for (section_key, value) in &user {
            let entries: Vec<(Vec<&str>, toml::Value)> = match value {
                toml::Value::Table(table) => table
                    .iter()
                    .map(|(key, v)| (vec![section_key.as_str(), key.as_str()], v.clone()))
                    .collect(),
                other => vec![(vec![section_key.as_str()], other.clone())],
            };
            for (key_path, value) in entries {
                let mut alone = embedded();
                let mut single = toml::Table::new();
                let leaf = match key_path.as_slice() {
                    [section, key] => {
                        let mut inner = toml::Table::new();
                        inner.insert((*key).to_owned(), value);
                        single.insert((*section).to_owned(), toml::Value::Table(inner));
                        key_path.join(".")
                    }
                    _ => {
                        single.insert(key_path[0].to_owned(), value);
                        key_path[0].to_owned()
                    }
                };
                overlay(&mut alone, single);
                if let Err(message) = checked(alone) {
                    let place = key_offset(text, &key_path).map(|at| line_column(text, at));
                    return invalid(place, format!("`{leaf}`: {message}"));
                }
            }
        }
        invalid(None, message)
    })
}

/// The configuration a merged table describes, with the checks types cannot express.
fn checked(table: toml::Table) -> Result<Config, String> {
    let config: Config = table
        .try_into()
        .map_err(|e: toml::de::Error| e.message().trim_end().to_owned())?;
    if !THEMES.contains(&config.ui.theme.as_str()) {
        return Err(format!(
            "unknown theme {:?}; the themes are {}",
            config.ui.theme,
            THEMES.join(" and ")
        ));
    }
    Ok(config)
}

/// The byte offset of `section.key` (or a top-level key) in a TOML text.
fn key_offset(text: &str, key_path: &[&str]) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let document = DeTable::parse(text).ok()?;
    let mut table = document.get_ref();
    let mut found = None;
    for (depth, name) in key_path.iter().enumerate() {
        let (key, value) = table.iter().find(|(k, _)| k.get_ref() == name)?;
        found = Some(key.span().start);
        if depth + 1 < key_path.len() {
            match value.get_ref() {
                DeValue::Table(inner) => table = inner,
                _ => return found,
            }
        }
    }
    found
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

fn overlay(base: &mut toml::Table, top: toml::Table) {
    for (key, value) in top {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(base_table)), toml::Value::Table(top_table)) => {
                overlay(base_table, top_table)
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// Inputs that override the files: `--config`, `--db` and the environment.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub config_file: Option<PathBuf>,
    pub database_url: Option<String>,
    pub env_database_url: Option<String>,
    /// `--dify-env PATH`.
    pub dify_env: Option<PathBuf>,
    /// `AWS_REGION` (or `AWS_DEFAULT_REGION`), for an S3 bucket whose region the config omits.
    pub env_aws_region: Option<String>,
}

impl Overrides {
    pub fn with_env(mut self) -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        self.env_database_url = var(DATABASE_URL_ENV);
        self.env_aws_region = var("AWS_REGION").or_else(|| var("AWS_DEFAULT_REGION"));
        self
    }
}

/// Reads the user's config file (or the one named by `--config`) and applies the overrides.
pub fn resolve(dirs: Dirs, overrides: &Overrides) -> Result<Resolved, ConfigError> {
    let explicit = overrides.config_file.is_some();
    let path = overrides
        .config_file
        .clone()
        .unwrap_or_else(|| dirs.user_config_file());
    let user_text = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => None,
        Err(source) => return Err(ConfigError::Read { path, source }),
    };
    let config = merge(user_text.as_deref().map(|t| (path.as_path(), t)))?;
    let dify = match (&overrides.dify_env, config.dify.env_file.as_str()) {
        (Some(file), _) => Some(dify_env::read(file)?),
        (None, "") => None,
        (None, file) => Some(dify_env::read(Path::new(file))?),
    };
    let dify_url = dify.as_ref().map(|d| d.database_url.expose().to_owned());
    let (database_url, url_source) = if let Some(url) = &overrides.database_url {
        (database_url(url), UrlSource::Flag)
    } else if let Some(url) = dify_url.as_ref().filter(|_| overrides.dify_env.is_some()) {
        (url.clone(), UrlSource::DifyEnv)
    } else if let Some(url) = &overrides.env_database_url {
        (database_url(url), UrlSource::Environment)
    } else if let Some(url) = dify_url {
        (url, UrlSource::DifyEnv)
    } else if !config.database.url.is_empty() {
        (database_url(&config.database.url), UrlSource::ConfigFile)
    } else {
        (
            sqlite_url(&dirs.default_database_file()),
            UrlSource::EmbeddedDefault,
        )
    };
    let under_data = |configured: &str, default: &str| {
        if configured.is_empty() {
            dirs.data.join(default)
        } else {
            PathBuf::from(configured)
        }
    };
    let (storage, storage_source) = storage_backend(
        &config.storage,
        under_data(&config.storage.root, "storage"),
        dify.as_ref(),
        overrides,
    )
    .map_err(ConfigError::Storage)?;
    Ok(Resolved {
        storage_root: match &storage {
            StorageBackend::Fs { root } => root.clone(),
            _ => dirs.data.join("storage"),
        },
        storage,
        storage_source,
        dify,
        kb_root: under_data(&config.storage.kb_root, "knowledge_bases"),
        config_file: user_text.map(|_| path),
        database_url,
        url_source,
        config,
        dirs,
    })
}

/// The object storage: `[storage]` when it names a service or a root, else Dify's settings when
/// given, else the local directory `<data dir>/storage`.
fn storage_backend(
    storage: &StorageConfig,
    local_root: PathBuf,
    dify: Option<&DifySettings>,
    overrides: &Overrides,
) -> Result<(StorageBackend, StorageSource), String> {
    let configured = !storage.service.is_empty() || !storage.root.is_empty();
    if !configured {
        if let Some(dify) = dify {
            return Ok((dify.storage.clone(), StorageSource::DifyEnv));
        }
    }
    let source = if configured {
        StorageSource::ConfigFile
    } else {
        StorageSource::EmbeddedDefault
    };
    let backend = match storage.service.as_str() {
        "" | "fs" => StorageBackend::Fs { root: local_root },
        "s3" => {
            if storage.bucket.is_empty() {
                return Err(
                    "service = \"s3\" needs `bucket`: the bucket Dify writes its files to \
                            (S3_BUCKET_NAME in Dify's settings)"
                        .to_owned(),
                );
            }
            let address_style = AddressStyle::parse(&storage.address_style).ok_or_else(|| {
                format!(
                    "address_style {:?} is not auto, path or virtual",
                    storage.address_style
                )
            })?;
            StorageBackend::S3(S3Settings {
                bucket: storage.bucket.clone(),
                region: match storage.region.as_str() {
                    "" => overrides.env_aws_region.clone().unwrap_or_default(),
                    region => region.to_owned(),
                },
                endpoint: storage.endpoint.clone(),
                address_style,
                prefix: storage.prefix.clone(),
                access_key_id: storage.access_key_id.clone(),
                secret_access_key: Some(storage.secret_access_key.as_str())
                    .filter(|s| !s.is_empty())
                    .map(Secret::new),
                use_aws_chain: storage.access_key_id.is_empty(),
            })
        }
        scheme => {
            let (options, secrets) = split_options(storage.options.clone());
            StorageBackend::Other {
                scheme: scheme.to_owned(),
                options,
                secrets,
            }
        }
    };
    Ok((backend, source))
}

/// A database URL as given, or a `sqlite://` URL when it is a bare file path (`./x.db`,
/// `/tmp/langflow.db`): anything without a `scheme:` of its own.
pub fn database_url(given: &str) -> String {
    let has_scheme = given.split_once(':').is_some_and(|(scheme, _)| {
        scheme.len() > 1
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    if has_scheme {
        given.to_owned()
    } else {
        sqlite_url(Path::new(given))
    }
}

/// A `sqlite://` URL for a file path.
pub fn sqlite_url(path: &Path) -> String {
    format!("sqlite://{}", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(root: &Path) -> Dirs {
        Dirs {
            data: root.join("data"),
            config: root.join("config"),
        }
    }

    #[test]
    fn embedded_default_parses_with_documented_values() {
        let config = merge(None).unwrap();
        assert_eq!(config.database.url, "");
        assert_eq!(config.tokens.budget, 2000);
        assert_eq!(config.tokens.counter, "openai");
        assert_eq!(config.history.message_limit, 0);
        assert_eq!(config.ui.theme, "dark");
        assert_eq!(config.summarizer.kind, SummarizerKindConfig::Extractive);
        assert_eq!(config.summarizer.default_prompt(), None);
        assert!(
            config.keys.contains_key("global"),
            "the keymap is documented in config.toml"
        );
    }

    #[test]
    fn a_user_key_binding_overlays_the_defaults() {
        let user = "[keys.global]\n\"x\" = { action = \"quit\", desc = \"leave\" }\n";
        let config = merge(Some((Path::new("u.toml"), user))).unwrap();
        let global = config.keys["global"].as_table().unwrap();
        assert!(global.contains_key("x"));
        assert!(global.contains_key("q"), "defaults stay");
    }

    #[test]
    fn user_file_overrides_only_the_keys_it_sets() {
        let config = merge(Some((Path::new("u.toml"), "[tokens]\nbudget = 4000\n"))).unwrap();
        assert_eq!(config.tokens.budget, 4000);
        assert_eq!(config.tokens.model, "gpt-4o");
    }

    #[test]
    fn the_summarizer_section_is_read_and_checked() {
        let user = "[summarizer]\nkind = \"chat-completions\"\nmodel = \"local-llm\"\n\
                    summarize_prompt = \"Keep names.\"\nmax_tokens = 64\n";
        let config = merge(Some((Path::new("u.toml"), user))).unwrap();
        assert_eq!(
            config.summarizer.kind,
            SummarizerKindConfig::ChatCompletions
        );
        assert_eq!(config.summarizer.model, "local-llm");
        assert_eq!(config.summarizer.default_prompt(), Some("Keep names."));
        assert_eq!(config.summarizer.max_tokens, 64);
        assert_eq!(config.summarizer.timeout_seconds, 60, "defaults stay");
        let err = merge(Some((
            Path::new("u.toml"),
            "[summarizer]\nkind = \"gpt\"\n",
        )))
        .unwrap_err();
        assert!(err.to_string().contains("gpt"), "{err}");
    }

    #[test]
    fn unknown_keys_and_bad_types_are_named() {
        let err = merge(Some((Path::new("u.toml"), "[tokens]\nbudgit = 1\n"))).unwrap_err();
        assert!(err.to_string().contains("budgit"), "{err}");
        let err = merge(Some((Path::new("u.toml"), "[tokens]\nbudget = \"x\"\n"))).unwrap_err();
        assert!(err.to_string().contains("u.toml"), "{err}");
        let err = merge(Some((Path::new("u.toml"), "not toml ["))).unwrap_err();
        assert!(matches!(err, ConfigError::Invalid { .. }));
    }

    #[test]
    fn url_precedence_is_flag_then_env_then_file_then_default() {
        let tmp = tempfile::tempdir().unwrap();
        let d = dirs(tmp.path());
        std::fs::create_dir_all(&d.config).unwrap();
        let default = resolve(d.clone(), &Overrides::default()).unwrap();
        assert_eq!(default.url_source, UrlSource::EmbeddedDefault);
        assert!(default.database_url.ends_with("data/memscope.db"));
        assert_eq!(default.storage_root, d.data.join("storage"));

        std::fs::write(
            d.user_config_file(),
            "[database]\nurl = \"sqlite:///f.db\"\n",
        )
        .unwrap();
        let from_file = resolve(d.clone(), &Overrides::default()).unwrap();
        assert_eq!(from_file.url_source, UrlSource::ConfigFile);
        assert_eq!(from_file.config_file, Some(d.user_config_file()));

        let env = Overrides {
            env_database_url: Some("sqlite:///e.db".into()),
            ..Overrides::default()
        };
        assert_eq!(
            resolve(d.clone(), &env).unwrap().url_source,
            UrlSource::Environment
        );
        let flag = Overrides {
            database_url: Some("sqlite:///g.db".into()),
            ..env
        };
        let resolved = resolve(d, &flag).unwrap();
        assert_eq!(resolved.url_source, UrlSource::Flag);
        assert_eq!(resolved.database_url, "sqlite:///g.db");
    }

    #[test]
    fn dify_settings_rank_between_the_flags_and_the_config_file() {
        let tmp = tempfile::tempdir().unwrap();
        let d = dirs(tmp.path());
        std::fs::create_dir_all(&d.config).unwrap();
        let env = tmp.path().join("dify.env");
        std::fs::write(
            &env,
            "DB_HOST=dbhost\nDB_PASSWORD=pw\nSTORAGE_TYPE=s3\nS3_BUCKET_NAME=files\n",
        )
        .unwrap();
        let flag = Overrides {
            dify_env: Some(env.clone()),
            env_database_url: Some("sqlite:///e.db".into()),
            ..Overrides::default()
        };
        let resolved = resolve(d.clone(), &flag).unwrap();
        assert_eq!(
            resolved.url_source,
            UrlSource::DifyEnv,
            "--dify-env beats the environment"
        );
        assert_eq!(
            resolved.database_url,
            "postgres://postgres:pw@dbhost:5432/dify"
        );
        assert_eq!(resolved.storage_source, StorageSource::DifyEnv);
        assert!(matches!(&resolved.storage, StorageBackend::S3(s3) if s3.bucket == "files"));
        let with_db = Overrides {
            database_url: Some("sqlite:///g.db".into()),
            ..flag
        };
        assert_eq!(
            resolve(d.clone(), &with_db).unwrap().url_source,
            UrlSource::Flag
        );

        // From the config file, the environment's URL wins; [storage] root wins over Dify's.
        std::fs::write(
            d.user_config_file(),
            format!(
                "[dify]\nenv_file = \"{}\"\n[storage]\nroot = \"/srv/files\"\n",
                env.display()
            ),
        )
        .unwrap();
        let from_env = Overrides {
            env_database_url: Some("sqlite:///e.db".into()),
            ..Overrides::default()
        };
        let resolved = resolve(d.clone(), &from_env).unwrap();
        assert_eq!(resolved.url_source, UrlSource::Environment);
        assert_eq!(resolved.storage_source, StorageSource::ConfigFile);
        assert_eq!(
            resolved.storage,
            StorageBackend::Fs {
                root: PathBuf::from("/srv/files")
            }
        );
        assert_eq!(
            resolve(d, &Overrides::default()).unwrap().url_source,
            UrlSource::DifyEnv
        );
    }

    #[test]
    fn an_s3_service_needs_a_bucket_and_a_known_address_style() {
        let tmp = tempfile::tempdir().unwrap();
        let d = dirs(tmp.path());
        std::fs::create_dir_all(&d.config).unwrap();
        std::fs::write(d.user_config_file(), "[storage]\nservice = \"s3\"\n").unwrap();
        let err = resolve(d.clone(), &Overrides::default()).unwrap_err();
        assert!(err.to_string().contains("S3_BUCKET_NAME"), "{err}");
        std::fs::write(
            d.user_config_file(),
            "[storage]\nservice = \"s3\"\nbucket = \"b\"\naddress_style = \"dns\"\n",
        )
        .unwrap();
        let err = resolve(d.clone(), &Overrides::default()).unwrap_err();
        assert!(err.to_string().contains("auto, path or virtual"), "{err}");
        std::fs::write(
            d.user_config_file(),
            "[storage]\nservice = \"s3\"\nbucket = \"b\"\n",
        )
        .unwrap();
        let region = Overrides {
            env_aws_region: Some("eu-west-3".into()),
            ..Overrides::default()
        };
        let resolved = resolve(d, &region).unwrap();
        assert!(
            matches!(&resolved.storage, StorageBackend::S3(s3) if s3.region == "eu-west-3" && s3.use_aws_chain),
            "{:?}",
            resolved.storage
        );
    }

    #[test]
    fn bare_paths_are_sqlite_files_and_urls_stay_as_given() {
        assert_eq!(database_url("./x.db"), "sqlite://./x.db");
        assert_eq!(
            database_url("/tmp/langflow.db"),
            "sqlite:///tmp/langflow.db"
        );
        assert_eq!(database_url("x.db"), "sqlite://x.db");
        assert_eq!(database_url("sqlite:///a.db"), "sqlite:///a.db");
        assert_eq!(database_url("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(database_url("mysql://u@h/db"), "mysql://u@h/db");
    }

    #[test]
    fn config_errors_name_the_file_line_and_column() {
        let user = "[tokens]\nmodel = \"gpt-4o\"\nbudget = \"x\"\n";
        let err = merge(Some((Path::new("/home/u/c.toml"), user))).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("config file /home/u/c.toml, line 3, column 1: `tokens.budget`"),
            "{text}"
        );
        let err = merge(Some((Path::new("c.toml"), "[tokens]\nbudget = = 1\n"))).unwrap_err();
        assert!(err.to_string().contains("line 2, column"), "{err}");
        let err = merge(Some((Path::new("c.toml"), "\n[tokens]\n  budgit = 1\n"))).unwrap_err();
        assert!(
            err.to_string().contains("line 3, column 3") && err.to_string().contains("budgit"),
            "{err}"
        );
    }

    #[test]
    fn an_unknown_theme_is_an_error_naming_the_themes() {
        let err = merge(Some((Path::new("c.toml"), "[ui]\ntheme = \"solarized\"\n"))).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("line 2, column 1"), "{text}");
        assert!(
            text.contains("solarized") && text.contains("dark and light"),
            "{text}"
        );
        assert_eq!(
            merge(Some((Path::new("c.toml"), "[ui]\ntheme = \"light\"\n")))
                .unwrap()
                .ui
                .theme,
            "light"
        );
    }

    #[test]
    fn a_missing_explicit_config_file_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let overrides = Overrides {
            config_file: Some(tmp.path().join("nope.toml")),
            ..Overrides::default()
        };
        assert!(matches!(
            resolve(dirs(tmp.path()), &overrides),
            Err(ConfigError::Read { .. })
        ));
    }
}
