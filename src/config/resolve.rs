//! The configuration in effect: the files, then Dify's settings, the environment and the
//! flags, in that order of precedence, with where the database URL and the object storage came
//! from.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::error::ConfigError;
use super::merge::merge;
use super::sections::{Config, StorageConfig};
use crate::storage::dify_env::{self, DifySettings};
use crate::storage::settings::{AddressStyle, S3Settings, Secret, StorageBackend, split_options};

/// Environment variable that overrides the configured database URL.
pub const DATABASE_URL_ENV: &str = "MEMSCOPE_DATABASE_URL";

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
pub enum UrlOrigin {
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
pub enum StorageOrigin {
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
    pub url_source: UrlOrigin,
    /// Where memscope writes demo files: the local storage directory (`<data dir>/storage` when
    /// the storage is not local).
    pub storage_root: PathBuf,
    /// Where Dify's files are read from, and who said so.
    pub storage: StorageBackend,
    pub storage_source: StorageOrigin,
    /// Dify's settings, when `--dify-env` or `[dify] env_file` named them.
    pub dify: Option<DifySettings>,
    pub kb_root: PathBuf,
}

impl Resolved {
    /// The object storage Dify's files are read from for a database: the one `[storage]` or
    /// Dify's settings name, or the built-in local directory for a database memscope made (its
    /// demo files are there). A database of Dify's own has its files wherever its storage is, so
    /// with nothing naming it there is none: its files cannot be checked, not found missing.
    pub fn files_storage(&self, created_by_memscope: bool) -> Option<&StorageBackend> {
        match self.storage_source {
            StorageOrigin::ConfigFile | StorageOrigin::DifyEnv => Some(&self.storage),
            StorageOrigin::EmbeddedDefault => created_by_memscope.then_some(&self.storage),
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
        (database_url(url), UrlOrigin::Flag)
    } else if let Some(url) = dify_url.as_ref().filter(|_| overrides.dify_env.is_some()) {
        (url.clone(), UrlOrigin::DifyEnv)
    } else if let Some(url) = &overrides.env_database_url {
        (database_url(url), UrlOrigin::Environment)
    } else if let Some(url) = dify_url {
        (url, UrlOrigin::DifyEnv)
    } else if !config.database.url.is_empty() {
        (database_url(&config.database.url), UrlOrigin::ConfigFile)
    } else {
        (
            sqlite_url(&dirs.default_database_file()),
            UrlOrigin::EmbeddedDefault,
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
) -> Result<(StorageBackend, StorageOrigin), String> {
    let configured = !storage.service.is_empty() || !storage.root.is_empty();
    if !configured {
        if let Some(dify) = dify {
            return Ok((dify.storage.clone(), StorageOrigin::DifyEnv));
        }
    }
    let source = if configured {
        StorageOrigin::ConfigFile
    } else {
        StorageOrigin::EmbeddedDefault
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
    // `postgresql//…` is a URL missing its colon, refused as one, not a file path.
    if has_scheme || crate::store::with_missing_colon(given).is_some() {
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
    fn url_precedence_is_flag_then_env_then_file_then_default() {
        let tmp = tempfile::tempdir().unwrap();
        let d = dirs(tmp.path());
        std::fs::create_dir_all(&d.config).unwrap();
        let default = resolve(d.clone(), &Overrides::default()).unwrap();
        assert_eq!(default.url_source, UrlOrigin::EmbeddedDefault);
        assert!(default.database_url.ends_with("data/memscope.db"));
        assert_eq!(default.storage_root, d.data.join("storage"));

        std::fs::write(
            d.user_config_file(),
            "[database]\nurl = \"sqlite:///f.db\"\n",
        )
        .unwrap();
        let from_file = resolve(d.clone(), &Overrides::default()).unwrap();
        assert_eq!(from_file.url_source, UrlOrigin::ConfigFile);
        assert_eq!(from_file.config_file, Some(d.user_config_file()));

        let env = Overrides {
            env_database_url: Some("sqlite:///e.db".into()),
            ..Overrides::default()
        };
        assert_eq!(
            resolve(d.clone(), &env).unwrap().url_source,
            UrlOrigin::Environment
        );
        let flag = Overrides {
            database_url: Some("sqlite:///g.db".into()),
            ..env
        };
        let resolved = resolve(d, &flag).unwrap();
        assert_eq!(resolved.url_source, UrlOrigin::Flag);
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
            UrlOrigin::DifyEnv,
            "--dify-env beats the environment"
        );
        assert_eq!(
            resolved.database_url,
            "postgres://postgres:pw@dbhost:5432/dify"
        );
        assert_eq!(resolved.storage_source, StorageOrigin::DifyEnv);
        assert!(matches!(&resolved.storage, StorageBackend::S3(s3) if s3.bucket == "files"));
        let with_db = Overrides {
            database_url: Some("sqlite:///g.db".into()),
            ..flag
        };
        assert_eq!(
            resolve(d.clone(), &with_db).unwrap().url_source,
            UrlOrigin::Flag
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
        assert_eq!(resolved.url_source, UrlOrigin::Environment);
        assert_eq!(resolved.storage_source, StorageOrigin::ConfigFile);
        assert_eq!(
            resolved.storage,
            StorageBackend::Fs {
                root: PathBuf::from("/srv/files")
            }
        );
        assert_eq!(
            resolve(d, &Overrides::default()).unwrap().url_source,
            UrlOrigin::DifyEnv
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
