//! Which object storage holds Dify's files and how to reach it: a local directory, an S3 bucket
//! (AWS or any S3-compatible server), or another Apache OpenDAL service named by its scheme with
//! its options. Built from `[storage]` in config.toml or from Dify's own settings.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Serialize, Serializer};

/// A credential: never printed, logged or serialized as itself.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value, for the one place that hands it to the storage client.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("\"***\"")
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str("***")
    }
}

/// How S3 requests name the bucket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AddressStyle {
    /// Virtual-host style on AWS (no endpoint), path style on a custom endpoint, as boto3's
    /// `auto` resolves for S3-compatible servers.
    #[default]
    Auto,
    /// `https://endpoint/bucket/key`.
    Path,
    /// `https://bucket.endpoint/key`.
    Virtual,
}

impl AddressStyle {
    pub fn parse(text: &str) -> Option<AddressStyle> {
        match text.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Some(AddressStyle::Auto),
            "path" => Some(AddressStyle::Path),
            "virtual" | "virtual-host" | "virtual_host" => Some(AddressStyle::Virtual),
            _ => None,
        }
    }

    /// Whether requests use the virtual-host style, given whether an endpoint is set.
    fn virtual_host(self, has_endpoint: bool) -> bool {
        match self {
            AddressStyle::Virtual => true,
            AddressStyle::Path => false,
            AddressStyle::Auto => !has_endpoint,
        }
    }
}

/// An S3 bucket.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct S3Settings {
    pub bucket: String,
    /// Empty: the AWS default (`us-east-1`) unless the environment names one.
    pub region: String,
    /// Empty: AWS itself.
    pub endpoint: String,
    pub address_style: AddressStyle,
    /// Key prefix inside the bucket that Dify's keys are relative to (usually empty).
    pub prefix: String,
    pub access_key_id: String,
    pub secret_access_key: Option<Secret>,
    /// Empty keys: the AWS chain (environment, profile, instance role) supplies credentials.
    pub use_aws_chain: bool,
}

/// Where Dify's files are.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "service", rename_all = "lowercase")]
pub enum StorageBackend {
    Fs {
        root: PathBuf,
    },
    S3(S3Settings),
    /// Another OpenDAL service, with its options as OpenDAL names them. Values of options
    /// whose name looks like a credential are kept as secrets.
    Other {
        scheme: String,
        options: BTreeMap<String, String>,
        secrets: BTreeMap<String, Secret>,
    },
}

/// Option names whose values are never shown.
pub fn is_secret_option(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["secret", "password", "token", "credential", "key"]
        .iter()
        .any(|word| name.contains(word))
        && !name.ends_with("_id")
        && name != "key_prefix"
}

impl StorageBackend {
    /// The OpenDAL scheme and options that reach this storage.
    pub fn opendal_options(&self) -> (String, Vec<(String, String)>) {
        match self {
            StorageBackend::Fs { root } => (
                "fs".to_owned(),
                vec![("root".to_owned(), root.display().to_string())],
            ),
            StorageBackend::S3(s3) => {
                let mut options = vec![("bucket".to_owned(), s3.bucket.clone())];
                let mut set = |key: &str, value: &str| {
                    if !value.is_empty() {
                        options.push((key.to_owned(), value.to_owned()));
                    }
                };
                set(
                    "region",
                    if s3.region.is_empty() {
                        "us-east-1"
                    } else {
                        &s3.region
                    },
                );
                set("endpoint", &s3.endpoint);
                set("root", &format!("/{}", s3.prefix.trim_matches('/')));
                set("access_key_id", &s3.access_key_id);
                if let Some(secret) = &s3.secret_access_key {
                    set("secret_access_key", secret.expose());
                }
                if s3.address_style.virtual_host(!s3.endpoint.is_empty()) {
                    set("enable_virtual_host_style", "true");
                }
                if !s3.use_aws_chain {
                    // Only the keys given here: nothing read from ~/.aws or an instance role.
                    set("disable_config_load", "true");
                }
                (String::from("s3"), options)
            }
            StorageBackend::Other {
                scheme,
                options,
                secrets,
            } => (
                scheme.clone(),
                options
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .chain(
                        secrets
                            .iter()
                            .map(|(k, v)| (k.clone(), v.expose().to_owned())),
                    )
                    .collect(),
            ),
        }
    }

    /// Where a key lives, for messages: a path on disk, `s3://bucket/prefix/key`, `scheme:key`.
    pub fn location(&self, key: &str) -> String {
        match self {
            StorageBackend::Fs { root } => root.join(key).display().to_string(),
            StorageBackend::S3(s3) => {
                let prefix = s3.prefix.trim_matches('/');
                if prefix.is_empty() {
                    format!("s3://{}/{key}", s3.bucket)
                } else {
                    format!("s3://{}/{prefix}/{key}", s3.bucket)
                }
            }
            StorageBackend::Other { scheme, .. } => format!("{scheme}:{key}"),
        }
    }

    /// One line for `info`: the service and where, credentials named but never shown.
    pub fn describe(&self) -> String {
        match self {
            StorageBackend::Fs { root } => format!("local directory {}", root.display()),
            StorageBackend::S3(s3) => {
                let mut parts = vec![format!("S3 bucket {}", s3.bucket)];
                if !s3.prefix.trim_matches('/').is_empty() {
                    parts.push(format!("prefix {}", s3.prefix.trim_matches('/')));
                }
                parts.push(format!(
                    "region {}",
                    if s3.region.is_empty() {
                        "us-east-1 (default)"
                    } else {
                        &s3.region
                    }
                ));
                parts.push(if s3.endpoint.is_empty() {
                    "endpoint AWS".to_owned()
                } else {
                    format!("endpoint {}", s3.endpoint)
                });
                parts.push(format!(
                    "{} style",
                    if s3.address_style.virtual_host(!s3.endpoint.is_empty()) {
                        "virtual-host"
                    } else {
                        "path"
                    }
                ));
                parts.push(if s3.use_aws_chain {
                    "credentials from the AWS environment, profile or instance role".to_owned()
                } else {
                    format!(
                        "access key {}, secret {}",
                        if s3.access_key_id.is_empty() {
                            "(none)"
                        } else {
                            &s3.access_key_id
                        },
                        if s3.secret_access_key.is_some() {
                            "set (hidden)"
                        } else {
                            "(none)"
                        }
                    )
                });
                parts.join(", ")
            }
            StorageBackend::Other {
                scheme,
                options,
                secrets,
            } => {
                let mut shown: Vec<String> =
                    options.iter().map(|(k, v)| format!("{k}={v}")).collect();
                shown.extend(secrets.keys().map(|k| format!("{k}=(hidden)")));
                format!("OpenDAL service {scheme} ({})", shown.join(", "))
            }
        }
    }
}

/// Options for another service, credentials split off as secrets.
pub fn split_options(
    options: impl IntoIterator<Item = (String, String)>,
) -> (BTreeMap<String, String>, BTreeMap<String, Secret>) {
    let mut plain = BTreeMap::new();
    let mut secrets = BTreeMap::new();
    for (key, value) in options {
        if is_secret_option(&key) {
            secrets.insert(key, Secret::new(value));
        } else {
            plain.insert(key, value);
        }
    }
    (plain, secrets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s3(endpoint: &str, style: AddressStyle) -> StorageBackend {
        StorageBackend::S3(S3Settings {
            bucket: "difyai".into(),
            region: String::new(),
            endpoint: endpoint.into(),
            address_style: style,
            prefix: String::new(),
            access_key_id: "AKIA".into(),
            secret_access_key: Some(Secret::new("hunter2")),
            use_aws_chain: false,
        })
    }

    #[test]
    fn secrets_never_show_in_debug_json_or_descriptions() {
        let backend = s3("http://127.0.0.1:9000", AddressStyle::Auto);
        for text in [
            format!("{backend:?}"),
            serde_json::to_string(&backend).unwrap(),
            backend.describe(),
        ] {
            assert!(!text.contains("hunter2"), "{text}");
        }
        let (_, options) = backend.opendal_options();
        assert!(options.contains(&("secret_access_key".into(), "hunter2".into())));
    }

    #[test]
    fn auto_style_is_path_on_a_custom_endpoint_and_virtual_on_aws() {
        let has_virtual = |b: &StorageBackend| {
            b.opendal_options()
                .1
                .iter()
                .any(|(k, _)| k == "enable_virtual_host_style")
        };
        assert!(!has_virtual(&s3("http://minio:9000", AddressStyle::Auto)));
        assert!(has_virtual(&s3("", AddressStyle::Auto)));
        assert!(has_virtual(&s3("http://minio:9000", AddressStyle::Virtual)));
        assert!(!has_virtual(&s3("", AddressStyle::Path)));
        assert_eq!(AddressStyle::parse("virtual"), Some(AddressStyle::Virtual));
        assert_eq!(AddressStyle::parse("sideways"), None);
    }

    #[test]
    fn other_services_keep_credentials_hidden() {
        let (plain, secrets) = split_options([
            ("container".to_owned(), "files".to_owned()),
            ("account_key".to_owned(), "k".to_owned()),
            ("access_key_id".to_owned(), "id".to_owned()),
        ]);
        assert!(plain.contains_key("container") && plain.contains_key("access_key_id"));
        assert!(secrets.contains_key("account_key"));
        let backend = StorageBackend::Other {
            scheme: "azblob".into(),
            options: plain,
            secrets,
        };
        assert!(backend.describe().contains("account_key=(hidden)"));
        assert_eq!(backend.location("a/b.json"), "azblob:a/b.json");
    }
}
