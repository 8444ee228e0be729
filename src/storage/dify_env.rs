//! Dify's own settings: its `docker/.env` (or `api/.env`, or the API container's environment
//! dumped as `KEY=VALUE` lines) turned into the database URL and the object storage Dify uses,
//! with Dify's defaults for what the file leaves out and, for each value, where it came from.
//! The database password is kept as a [`Secret`] and never shown.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::settings::{AddressStyle, S3Settings, Secret, StorageBackend, split_options};

/// Where the API container sees Dify's storage directory: its working directory is `/app/api`
/// and docker-compose mounts `./volumes/app/storage` (beside the `.env`) on `/app/api/storage`.
const CONTAINER_WORKDIR: &str = "/app/api";
const CONTAINER_STORAGE: &str = "/app/api/storage";
const HOST_STORAGE: &str = "volumes/app/storage";

/// Why Dify's settings could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Dify settings {path}: {message}")]
pub struct DifyEnvError {
    pub path: PathBuf,
    pub message: String,
}

/// One value memscope took from Dify's settings (or Dify's default), for `info`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TakenValue {
    pub variable: String,
    /// The value, or `(hidden)` for a password or key.
    pub value: String,
    /// `line N` of the file, or `Dify's default`.
    pub origin: String,
}

/// What Dify's settings say.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DifySettings {
    pub file: PathBuf,
    /// `postgres://user:password@host:port/db`; shown only through `redact_url`.
    #[serde(skip)]
    pub database_url: Secret,
    pub storage: StorageBackend,
    pub taken: Vec<TakenValue>,
    /// Things the operator should know (a Docker-internal host name, a path mapped).
    pub notes: Vec<String>,
}

/// `KEY=VALUE` lines with the line each came from.
type EnvLines = BTreeMap<String, (String, usize)>;

/// Parses an env file as docker compose and python-dotenv read it: `#` comments, blank lines,
/// an optional `export `, single quotes taken literally, double quotes with `\n`, `\"`, `\\`
/// escapes, unquoted values cut at ` #`, and `${NAME}` / `${NAME:-default}` from earlier lines.
pub fn parse_env(text: &str) -> Result<EnvLines, (usize, String)> {
    let mut values: EnvLines = BTreeMap::new();
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
        let Some((key, rest)) = line.split_once('=') else {
            return Err((number, format!("`{line}` is not KEY=VALUE")));
        };
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err((number, format!("`{key}` is not a variable name")));
        }
        let rest = rest.trim_start();
        let value = if let Some(quoted) = rest.strip_prefix('\'') {
            let end = quoted
                .find('\'')
                .ok_or((number, "a single quote is not closed".to_owned()))?;
            quoted[..end].to_owned()
        } else if let Some(quoted) = rest.strip_prefix('"') {
            let mut out = String::new();
            let mut chars = quoted.chars();
            loop {
                match chars.next() {
                    None => return Err((number, "a double quote is not closed".to_owned())),
                    Some('"') => break,
                    Some('\\') => match chars.next() {
                        Some('n') => out.push('\n'),
                        Some('t') => out.push('\t'),
                        Some(other) => out.push(other),
                        None => return Err((number, "a double quote is not closed".to_owned())),
                    },
                    Some(c) => out.push(c),
                }
            }
            expand(&out, &values)
        } else {
            let cut = rest
                .char_indices()
                .find(|&(i, c)| c == '#' && (i == 0 || rest[..i].ends_with([' ', '\t'])))
                .map_or(rest.len(), |(i, _)| i);
            expand(rest[..cut].trim_end(), &values)
        };
        values.insert(key.to_owned(), (value, number));
    }
    Ok(values)
}

/// `${NAME}` and `${NAME:-default}` replaced by earlier values (an unknown name by nothing, or
/// its default).
fn expand(text: &str, values: &EnvLines) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(end) = rest[start..].find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        let inner = &rest[start + 2..start + end];
        let (name, default) = inner.split_once(":-").unwrap_or((inner, ""));
        match values.get(name).filter(|(v, _)| !v.is_empty()) {
            Some((value, _)) => out.push_str(value),
            None => out.push_str(default),
        }
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    out
}

/// Reads the values Dify takes, recording where each came from.
struct Reader<'a> {
    values: &'a EnvLines,
    /// Where the values taken from `envs/**/*.env` came from: `envs/x.env line N`.
    layered: BTreeMap<String, String>,
    taken: Vec<TakenValue>,
}

impl Reader<'_> {
    /// The file's non-empty value, else Dify's default (`None`: Dify has none).
    fn get(&mut self, variable: &str, default: Option<&str>) -> Option<String> {
        self.take(variable, default, false)
    }

    /// A password or key: shown as `(hidden)`, or as `(empty)` when it is set to nothing or not
    /// set at all, so an operator sees that there is no password rather than a hidden one.
    fn secret(&mut self, variable: &str) -> Option<String> {
        let taken = self.take(variable, None, true);
        if taken.is_none() {
            let origin = match self.values.get(variable) {
                Some((_, line)) => format!("line {line}"),
                None => "not set".to_owned(),
            };
            self.taken.push(TakenValue {
                variable: variable.to_owned(),
                value: "(empty)".to_owned(),
                origin,
            });
        }
        taken
    }

    fn take(&mut self, variable: &str, default: Option<&str>, hidden: bool) -> Option<String> {
        let (value, origin) = match self.values.get(variable).filter(|(v, _)| !v.is_empty()) {
            Some((value, line)) => match self.layered.get(variable) {
                Some(origin) => (value.clone(), origin.clone()),
                None => (value.clone(), format!("line {line}")),
            },
            None => (default?.to_owned(), "Dify's default".to_owned()),
        };
        self.taken.push(TakenValue {
            variable: variable.to_owned(),
            value: if hidden {
                "(hidden)".to_owned()
            } else {
                value.clone()
            },
            origin,
        });
        Some(value)
    }
}

/// Reads Dify's settings from `path`.
pub fn read(path: &Path) -> Result<DifySettings, DifyEnvError> {
    let error = |message: String| DifyEnvError {
        path: path.to_owned(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| {
        error(format!(
            "cannot read it ({e}); give the path of Dify's docker/.env or of a `KEY=VALUE` dump \
             of its API container's environment (`docker compose exec api env > dify.env`)"
        ))
    })?;
    let mut values =
        parse_env(&text).map_err(|(line, message)| error(format!("line {line}: {message}")))?;
    // Paths in the file are resolved against its directory: make that absolute once.
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let layered = layer_under(&path, &mut values).map_err(error)?;
    from_values(&path, &values, layered).map_err(error)
}

/// Adds to `values` (the `.env`'s own, which win) the settings of Dify's optional files,
/// `envs/**/*.env` beside it (compose's layout since May 2026), read in path order so a later
/// file wins over an earlier one. Returns where each added value came from.
fn layer_under(path: &Path, values: &mut EnvLines) -> Result<BTreeMap<String, String>, String> {
    let mut origins = BTreeMap::new();
    let Some(dir) = path.parent() else {
        return Ok(origins);
    };
    let mut files = Vec::new();
    env_files(&dir.join("envs"), &mut files);
    files.sort();
    let mut layers: EnvLines = BTreeMap::new();
    for file in files {
        let label = file
            .strip_prefix(dir)
            .unwrap_or(&file)
            .display()
            .to_string();
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{label}: {e}"))?;
        let layer = parse_env(&text)
            .map_err(|(line, message)| format!("{label} line {line}: {message}"))?;
        for (key, (value, line)) in layer {
            origins.insert(key.clone(), format!("{label} line {line}"));
            layers.insert(key, (value, line));
        }
    }
    for (key, value) in layers {
        match values.entry(key) {
            std::collections::btree_map::Entry::Occupied(own) => {
                origins.remove(own.key());
            }
            std::collections::btree_map::Entry::Vacant(missing) => {
                missing.insert(value);
            }
        }
    }
    Ok(origins)
}

/// The `*.env` files under `dir`, at any depth (`*.env.example` templates are not settings).
fn env_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.flatten().map(|entry| entry.path()) {
        if path.is_dir() {
            env_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "env") {
            found.push(path);
        }
    }
}

fn from_values(
    path: &Path,
    values: &EnvLines,
    layered: BTreeMap<String, String>,
) -> Result<DifySettings, String> {
    let mut reader = Reader {
        values,
        layered,
        taken: Vec::new(),
    };
    let mut notes = Vec::new();
    let db_type = reader
        .get("DB_TYPE", Some("postgresql"))
        .unwrap_or_default();
    // Every other type reaches its server over MySQL's protocol (Dify's `mysql+pymysql`).
    let scheme = match db_type.as_str() {
        "postgresql" => "postgres",
        "mysql" | "oceanbase" | "seekdb" => "mysql",
        other => {
            return Err(format!(
                "DB_TYPE={other} is not one of Dify's database types \
                 (postgresql, mysql, oceanbase, seekdb)"
            ));
        }
    };
    let user = reader
        .get("DB_USERNAME", Some("postgres"))
        .unwrap_or_default();
    let password = reader.secret("DB_PASSWORD").unwrap_or_default();
    let host = reader.get("DB_HOST", Some("localhost")).unwrap_or_default();
    let port = reader.get("DB_PORT", Some("5432")).unwrap_or_default();
    let database = reader.get("DB_DATABASE", Some("dify")).unwrap_or_default();
    if port.parse::<u16>().is_err() {
        return Err(format!("DB_PORT={port} is not a port number"));
    }
    if ["db", "db_postgres", "postgres", "db_mysql", "mysql"].contains(&host.as_str()) {
        notes.push(format!(
            "DB_HOST {host} is the database's name inside Dify's Docker network: from outside \
             it, publish the database's port and pass --db {scheme}://{user}@127.0.0.1:PORT/{database}, \
             or run memscope on that network"
        ));
    }
    if scheme == "mysql" && values.get("DB_PORT").is_none_or(|(v, _)| v.is_empty()) {
        notes.push(format!(
            "DB_PORT is not set, and Dify's default is PostgreSQL's 5432: the {db_type} server \
             was looked for at {host}:5432; set DB_PORT to its port (MySQL's is 3306, \
             OceanBase's 2881)"
        ));
    }
    let extras = reader.get("DB_EXTRAS", None).unwrap_or_default();
    let extras = extras.trim_matches('&');
    // No password: no `:` before the `@`, so the URL does not read as one hidden.
    let credentials = match password.as_str() {
        "" => url_escape(&user),
        password => format!("{}:{}", url_escape(&user), url_escape(password)),
    };
    let database_url = Secret::new(format!(
        "{scheme}://{credentials}@{host}:{port}/{}{}{extras}",
        url_escape(&database),
        if extras.is_empty() { "" } else { "?" }
    ));

    let docker_dir = path.parent().filter(|dir| {
        ["docker-compose.yaml", "docker-compose.yml"]
            .iter()
            .any(|f| dir.join(f).is_file())
    });
    let storage_type = reader
        .get("STORAGE_TYPE", Some("opendal"))
        .unwrap_or_default();
    let storage = match storage_type.as_str() {
        "local" => {
            let root = reader
                .get("STORAGE_LOCAL_PATH", Some("storage"))
                .unwrap_or_default();
            local_root(path, docker_dir, &root, &mut notes)
        }
        "opendal" => {
            let scheme = reader.get("OPENDAL_SCHEME", Some("fs")).unwrap_or_default();
            opendal_backend(path, docker_dir, &scheme, &mut reader, &mut notes)?
        }
        "s3" => {
            let managed = reader
                .get("S3_USE_AWS_MANAGED_IAM", Some("false"))
                .is_some_and(|v| is_true(&v));
            let style_text = reader
                .get("S3_ADDRESS_STYLE", Some("auto"))
                .unwrap_or_default();
            let address_style = AddressStyle::parse(&style_text).ok_or_else(|| {
                format!("S3_ADDRESS_STYLE={style_text}: Dify accepts auto, virtual or path")
            })?;
            let bucket = reader.get("S3_BUCKET_NAME", None).unwrap_or_default();
            if bucket.is_empty() {
                return Err("STORAGE_TYPE=s3 but S3_BUCKET_NAME is not set".to_owned());
            }
            let access_key_id = reader.get("S3_ACCESS_KEY", None).unwrap_or_default();
            let secret = reader.secret("S3_SECRET_KEY");
            StorageBackend::S3(S3Settings {
                bucket,
                region: reader.get("S3_REGION", None).unwrap_or_default(),
                endpoint: reader.get("S3_ENDPOINT", None).unwrap_or_default(),
                address_style,
                prefix: String::new(),
                use_aws_chain: managed || access_key_id.is_empty(),
                access_key_id: if managed {
                    String::new()
                } else {
                    access_key_id
                },
                secret_access_key: secret.filter(|_| !managed).map(Secret::new),
            })
        }
        other => {
            return Err(format!(
                "STORAGE_TYPE={other}: memscope reads Dify storage of type opendal, s3 and local; \
                 copy the files into an S3 bucket or a directory and set [storage] in config.toml"
            ));
        }
    };
    Ok(DifySettings {
        file: path.to_owned(),
        database_url,
        storage,
        taken: reader.taken,
        notes,
    })
}

/// STORAGE_TYPE=opendal: the scheme's `OPENDAL_<SCHEME>_*` options, as Dify passes them.
fn opendal_backend(
    path: &Path,
    docker_dir: Option<&Path>,
    scheme: &str,
    reader: &mut Reader,
    notes: &mut Vec<String>,
) -> Result<StorageBackend, String> {
    let prefix = format!("OPENDAL_{}_", scheme.to_ascii_uppercase());
    let mut options: BTreeMap<String, String> = BTreeMap::new();
    let names: Vec<String> = reader
        .values
        .keys()
        .filter(|k| k.starts_with(&prefix))
        .cloned()
        .collect();
    for name in names {
        let option = name[prefix.len()..].to_ascii_lowercase();
        let hidden = super::settings::is_secret_option(&option);
        if let Some(value) = reader.take(&name, None, hidden) {
            options.insert(option, value);
        }
    }
    Ok(match scheme {
        "fs" => {
            let root = match options.get("root") {
                Some(root) => root.clone(),
                None => reader
                    .get(&format!("{prefix}ROOT"), Some("storage"))
                    .unwrap_or_default(),
            };
            local_root(path, docker_dir, &root, notes)
        }
        "s3" => {
            let take = |key: &str| options.get(key).cloned().unwrap_or_default();
            let bucket = take("bucket");
            if bucket.is_empty() {
                return Err("OPENDAL_SCHEME=s3 but OPENDAL_S3_BUCKET is not set".to_owned());
            }
            let access_key_id = take("access_key_id");
            StorageBackend::S3(S3Settings {
                bucket,
                region: take("region"),
                endpoint: take("endpoint"),
                address_style: if is_true(&take("enable_virtual_host_style")) {
                    AddressStyle::Virtual
                } else {
                    AddressStyle::Path
                },
                prefix: take("root"),
                use_aws_chain: access_key_id.is_empty(),
                access_key_id,
                secret_access_key: options.get("secret_access_key").cloned().map(Secret::new),
            })
        }
        _ => {
            let (plain, secrets) = split_options(options);
            StorageBackend::Other {
                scheme: scheme.to_owned(),
                options: plain,
                secrets,
            }
        }
    })
}

/// A local storage path as Dify's process sees it, on this machine. Beside a docker-compose
/// file it is the API container's path (relative to `/app/api`), found under
/// `volumes/app/storage` next to the `.env`; otherwise it is relative to the file's directory,
/// where Dify's API runs from source with its `api/.env`.
fn local_root(
    path: &Path,
    docker_dir: Option<&Path>,
    root: &str,
    notes: &mut Vec<String>,
) -> StorageBackend {
    let base = path.parent().unwrap_or(Path::new("."));
    let resolved = match docker_dir {
        Some(dir) => {
            let in_container = if Path::new(root).is_absolute() {
                PathBuf::from(root)
            } else {
                Path::new(CONTAINER_WORKDIR).join(root)
            };
            let in_container = normalize(&in_container);
            match in_container.strip_prefix(CONTAINER_STORAGE) {
                Ok(rest) => {
                    let host = if rest.as_os_str().is_empty() {
                        dir.join(HOST_STORAGE)
                    } else {
                        dir.join(HOST_STORAGE).join(rest)
                    };
                    notes.push(format!(
                        "the storage path {root} is {} in Dify's API container, mounted from {}",
                        in_container.display(),
                        host.display()
                    ));
                    host
                }
                Err(_) => {
                    notes.push(format!(
                        "the storage path {root} is {} in Dify's API container, outside the volume \
                         docker-compose mounts ({CONTAINER_STORAGE}); memscope looks for it at \
                         that path on this machine: set [storage] root if it is elsewhere",
                        in_container.display()
                    ));
                    in_container
                }
            }
        }
        None => base.join(root),
    };
    StorageBackend::Fs { root: resolved }
}

/// `a/./b/../c` as `a/c`, without touching the disk (the path is the container's).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn is_true(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "true" | "1" | "yes" | "on"
    )
}

/// Percent-encodes what cannot stand in a URL's user, password or path.
fn url_escape(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
#[path = "dify_env_tests.rs"]
mod tests;
