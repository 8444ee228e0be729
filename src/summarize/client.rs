//! A client for OpenAI-compatible `POST {base}/chat/completions`: one user message, the answer's
//! first choice. Every request has a deadline; failures say which endpoint and why.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

/// Why a summary could not be had. Every variant names the endpoint.
#[derive(Debug, thiserror::Error)]
pub enum SummarizeError {
    #[error("summarizer {url} did not answer within {seconds} s")]
    Timeout { url: String, seconds: u64 },
    #[error("cannot reach summarizer {url}: {detail}")]
    Unreachable { url: String, detail: String },
    #[error("summarizer {url} answered HTTP {status}: {message}")]
    Http {
        url: String,
        status: u16,
        message: String,
    },
    #[error("summarizer {url} sent an unreadable answer: {detail}")]
    BadResponse { url: String, detail: String },
    #[error("cannot set up the summarizer client: {0}")]
    Client(String),
}

/// Where and how to ask. The API key is read from the environment variable named here, never
/// stored in configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatCompletionsConfig {
    /// e.g. `https://api.openai.com/v1`; `/chat/completions` is appended.
    pub base_url: String,
    pub model: String,
    /// Name of the variable holding the key; unset or empty sends no `Authorization` header
    /// (local servers need none).
    pub api_key_env: String,
    /// Whole request, connection included.
    pub timeout: Duration,
    /// `max_tokens` asked of the endpoint instead of the policy's summary cap.
    pub max_tokens: Option<u64>,
}

impl ChatCompletionsConfig {
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
}

#[derive(Debug, Clone)]
pub struct ChatCompletionsClient {
    http: reqwest::Client,
    url: String,
    model: String,
    api_key: Option<String>,
    timeout: Duration,
    max_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct Completion {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: ChoiceMessage,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    #[serde(default)]
    content: Option<String>,
}

impl ChatCompletionsClient {
    pub fn new(config: &ChatCompletionsConfig) -> Result<Self, SummarizeError> {
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout)
            .build()
            .map_err(|e| SummarizeError::Client(e.to_string()))?;
        let api_key = std::env::var(&config.api_key_env)
            .ok()
            .filter(|key| !key.is_empty());
        Ok(ChatCompletionsClient {
            http,
            url: format!("{}/chat/completions", config.base_url.trim_end_matches('/')),
            model: config.model.clone(),
            api_key,
            timeout: config.timeout,
            max_tokens: config.max_tokens,
        })
    }

    pub fn label(&self) -> String {
        format!("{} via {}", self.model, self.url)
    }

    /// The first choice's text for `prompt`, at most `max_tokens` long (or the configured
    /// `max_tokens`, which wins).
    pub async fn complete(&self, prompt: &str, max_tokens: u64) -> Result<String, SummarizeError> {
        let body = json!({
            "model": self.model,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": self.max_tokens.unwrap_or(max_tokens),
            "temperature": 0,
        });
        let mut request = self.http.post(&self.url).json(&body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|e| self.failed(&e))?;
        let status = response.status();
        let text = response.text().await.map_err(|e| self.failed(&e))?;
        if !status.is_success() {
            return Err(SummarizeError::Http {
                url: self.url.clone(),
                status: status.as_u16(),
                message: error_message(&text),
            });
        }
        let completion: Completion =
            serde_json::from_str(&text).map_err(|e| SummarizeError::BadResponse {
                url: self.url.clone(),
                detail: e.to_string(),
            })?;
        let first =
            completion
                .choices
                .into_iter()
                .next()
                .ok_or_else(|| SummarizeError::BadResponse {
                    url: self.url.clone(),
                    detail: "no choices".to_owned(),
                })?;
        Ok(first.message.content.unwrap_or_default())
    }

    fn failed(&self, error: &reqwest::Error) -> SummarizeError {
        if error.is_timeout() {
            SummarizeError::Timeout {
                url: self.url.clone(),
                seconds: self.timeout.as_secs().max(1),
            }
        } else {
            let mut detail = error.to_string();
            let mut source = std::error::Error::source(error);
            while let Some(cause) = source {
                detail.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            SummarizeError::Unreachable {
                url: self.url.clone(),
                detail,
            }
        }
    }
}

/// OpenAI's `{"error": {"message": …}}`, else the body itself (shortened).
fn error_message(body: &str) -> String {
    let from_json = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("error"))
                .or_else(|| v.get("message"))
                .and_then(|m| m.as_str().map(str::to_owned))
        });
    from_json.unwrap_or_else(|| {
        let trimmed = body.trim();
        match trimmed.char_indices().nth(300) {
            Some((cut, _)) => format!("{}…", &trimmed[..cut]),
            None => trimmed.to_owned(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_are_read_for_their_message() {
        assert_eq!(
            error_message(
                r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#
            ),
            "Incorrect API key provided"
        );
        assert_eq!(
            error_message(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(error_message("Bad Gateway\n"), "Bad Gateway");
        assert!(error_message(&"x".repeat(1000)).ends_with('…'));
    }
}
