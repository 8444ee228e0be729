//! A client for OpenAI-compatible `POST {base}/v1/embeddings` (Ollama, vLLM, TEI, OpenAI behind a
//! local proxy): batches of texts, a timeout per request, retries with backoff on connection
//! errors, 429 and 5xx. Plain HTTP/1.1 over TCP, so it needs no TLS stack: local servers speak
//! `http://`.

use std::time::Duration;

use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The environment variable holding the API key, when the server wants one.
pub const API_KEY_ENV: &str = "MEMSCOPE_EMBEDDINGS_API_KEY";

#[derive(Debug, thiserror::Error)]
pub enum OpenAiError {
    #[error("embeddings URL {0} is not http://host[:port][/path] (https needs a local proxy)")]
    BadUrl(String),
    #[error("embeddings server {url}: {source}")]
    Io { url: String, source: std::io::Error },
    #[error("embeddings server {url} did not answer within {seconds} s")]
    Timeout { url: String, seconds: u64 },
    #[error("embeddings server {url} answered HTTP {status}: {body}")]
    Status {
        url: String,
        status: u16,
        body: String,
    },
    #[error("embeddings server {url} sent a malformed answer: {reason}")]
    Malformed { url: String, reason: String },
}

impl OpenAiError {
    fn is_transient(&self) -> bool {
        match self {
            OpenAiError::Io { .. } | OpenAiError::Timeout { .. } => true,
            OpenAiError::Status { status, .. } => *status == 429 || *status >= 500,
            OpenAiError::BadUrl(_) | OpenAiError::Malformed { .. } => false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAiConfig {
    /// e.g. `http://127.0.0.1:11434` (Ollama); `/v1/embeddings` is appended.
    pub base_url: String,
    pub model: String,
    pub dimension: usize,
    pub api_key: Option<String>,
    pub batch_size: usize,
    pub timeout: Duration,
    pub retries: u32,
}

#[derive(Debug, Clone)]
pub struct OpenAiEmbedder {
    config: OpenAiConfig,
    host: String,
    port: u16,
    path: String,
}

#[derive(Deserialize)]
struct EmbeddingsResponse {
    data: Vec<EmbeddingItem>,
}

#[derive(Deserialize)]
struct EmbeddingItem {
    index: usize,
    embedding: Vec<f32>,
}

impl OpenAiEmbedder {
    pub fn new(config: OpenAiConfig) -> Result<OpenAiEmbedder, OpenAiError> {
        let bad = || OpenAiError::BadUrl(config.base_url.clone());
        let rest = config.base_url.strip_prefix("http://").ok_or_else(bad)?;
        let (authority, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) => (host, port.parse().map_err(|_| bad())?),
            None => (authority, 80),
        };
        if host.is_empty() {
            return Err(bad());
        }
        let prefix = prefix.trim_end_matches('/');
        let path = if prefix.ends_with("v1") {
            format!("/{prefix}/embeddings")
        } else if prefix.is_empty() {
            "/v1/embeddings".to_owned()
        } else {
            format!("/{prefix}/v1/embeddings")
        };
        Ok(OpenAiEmbedder {
            host: host.to_owned(),
            port,
            path,
            config,
        })
    }

    fn url(&self) -> String {
        format!("http://{}:{}{}", self.host, self.port, self.path)
    }

    /// The model, dimension and batch size the client was configured with.
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    /// One request for one batch, retried on transient errors.
    pub async fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, OpenAiError> {
        let mut attempt = 0;
        loop {
            let result = tokio::time::timeout(self.config.timeout, self.post(texts))
                .await
                .unwrap_or_else(|_| {
                    Err(OpenAiError::Timeout {
                        url: self.url(),
                        seconds: self.config.timeout.as_secs(),
                    })
                });
            match result {
                Err(error) if error.is_transient() && attempt < self.config.retries => {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(200 << attempt.min(5))).await;
                }
                other => return other,
            }
        }
    }

    async fn post(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, OpenAiError> {
        let io = |source| OpenAiError::Io {
            url: self.url(),
            source,
        };
        let body = serde_json::json!({ "model": self.config.model, "input": texts }).to_string();
        let auth = self
            .config
            .api_key
            .as_ref()
            .map(|key| format!("Authorization: Bearer {key}\r\n"))
            .unwrap_or_default();
        let request = format!(
            "POST {} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: application/json\r\n{auth}\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.path,
            self.host,
            self.port,
            body.len()
        );
        let mut stream = TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(io)?;
        stream.write_all(request.as_bytes()).await.map_err(io)?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await.map_err(io)?;
        let (status, body) = parse_response(&raw).map_err(|reason| OpenAiError::Malformed {
            url: self.url(),
            reason,
        })?;
        if status != 200 {
            return Err(OpenAiError::Status {
                url: self.url(),
                status,
                body: String::from_utf8_lossy(&body).chars().take(300).collect(),
            });
        }
        let mut parsed: EmbeddingsResponse =
            serde_json::from_slice(&body).map_err(|e| OpenAiError::Malformed {
                url: self.url(),
                reason: e.to_string(),
            })?;
        parsed.data.sort_by_key(|item| item.index);
        Ok(parsed.data.into_iter().map(|item| item.embedding).collect())
    }
}

/// The status code and body of an HTTP/1.1 response, de-chunked when chunked.
fn parse_response(raw: &[u8]) -> Result<(u16, Vec<u8>), String> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no end of headers")?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let body = &raw[split + 4..];
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or("no status code")?;
    let chunked = head.lines().any(|line| {
        let lower = line.to_ascii_lowercase();
        lower.starts_with("transfer-encoding:") && lower.contains("chunked")
    });
    if !chunked {
        return Ok((status, body.to_vec()));
    }
    let mut out = Vec::new();
    let mut rest = body;
    loop {
        let line_end = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("truncated chunk size")?;
        let size_text = String::from_utf8_lossy(&rest[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| format!("bad chunk size {size_text:?}"))?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Ok((status, out));
        }
        if rest.len() < size + 2 {
            return Err("truncated chunk".into());
        }
        out.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn config(base_url: &str) -> OpenAiConfig {
        OpenAiConfig {
            base_url: base_url.to_owned(),
            model: "m".into(),
            dimension: 2,
            api_key: None,
            batch_size: 2,
            timeout: Duration::from_secs(5),
            retries: 2,
        }
    }

    #[test]
    fn urls_are_parsed() {
        let e = OpenAiEmbedder::new(config("http://localhost:11434")).unwrap();
        assert_eq!(e.url(), "http://localhost:11434/v1/embeddings");
        let e = OpenAiEmbedder::new(config("http://h/api/v1/")).unwrap();
        assert_eq!(e.url(), "http://h:80/api/v1/embeddings");
        assert!(OpenAiEmbedder::new(config("https://api.openai.com")).is_err());
        assert!(OpenAiEmbedder::new(config("http://h:port")).is_err());
    }

    #[test]
    fn chunked_bodies_are_joined() {
        let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        assert_eq!(parse_response(raw).unwrap(), (200, b"abcde".to_vec()));
        assert!(parse_response(b"garbage").is_err());
    }
}
