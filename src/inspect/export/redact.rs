//! What a bug-report bundle must not carry: credentials. memscope reads them in a database URL
//! (`user:password@`), in the URLs of Dify's message files and object storage (signed query
//! parameters such as `X-Amz-Signature` or `token`), in node inputs and outputs (an HTTP
//! node's `Authorization` header, a tool's `api_key`) and in any text a user pasted into a
//! chat (an OpenAI `sk-…` key, a Dify `app-…` key, a bearer token). Every string of the bundle
//! is cleaned; the values of fields named for a secret are replaced whole.

use std::sync::LazyLock;

use regex::{Captures, Regex};
use serde_json::Value;

/// What a removed secret reads as.
pub const REDACTED: &str = "[redacted]";

/// Field names whose string value is a secret whatever it looks like.
fn is_secret_field(name: &str) -> bool {
    let name = name.to_ascii_lowercase().replace('-', "_");
    const EXACT: [&str; 5] = ["token", "key", "auth", "cookie", "set_cookie"];
    const PARTS: [&str; 9] = [
        "api_key",
        "apikey",
        "secret",
        "password",
        "passwd",
        "authorization",
        "access_token",
        "refresh_token",
        "credential",
    ];
    EXACT.contains(&name.as_str()) || PARTS.iter().any(|part| name.contains(part))
}

/// `scheme://user:password@host`: the password goes, the user stays (it tells which account).
static URL_PASSWORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:)(?P<secret>[^\s/@]+)(?P<tail>@)")
        .expect("a valid pattern")
});

/// Query parameters that carry a credential (signed URLs, token links).
static URL_PARAMETER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?P<head>[?&](?:[a-z0-9_.-]*(?:token|secret|password|passwd|signature|credential|api[_-]?key|apikey)[a-z0-9_.-]*|key|sig|code)=)(?P<secret>[^&#\s]+)",
    )
    .expect("a valid pattern")
});

/// Secrets recognisable by their shape wherever they appear: provider API keys, bearer tokens
/// and `Authorization` header values, `key=value` assignments of secret names.
static SHAPED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?P<bare>\bsk-[A-Za-z0-9_-]{16,}",
        r"|\b(?:app|dataset)-[A-Za-z0-9]{20,}",
        r"|\bAKIA[0-9A-Z]{16}\b",
        r"|\bgh[pousr]_[A-Za-z0-9]{20,}",
        r"|\bxox[abpr]-[A-Za-z0-9-]{10,}",
        r"|\bhf_[A-Za-z0-9]{20,}",
        r"|\bAIza[0-9A-Za-z_-]{35})",
        r"|(?i)(?P<head>\b(?:bearer|basic)\s+|\b(?:[a-z0-9_]*(?:api[_-]?key|secret|password|passwd|access[_-]?token)[a-z0-9_]*)\s*[:=]\s*[\x22']?)",
        r"(?P<secret>[^\s\x22',;]{4,})",
    ))
    .expect("a valid pattern")
});

/// Cleans every string of `value` in place; returns how many secrets it removed.
pub fn redact(value: &mut Value) -> usize {
    match value {
        Value::String(text) => redact_text(text),
        Value::Array(items) => items.iter_mut().map(redact).sum(),
        Value::Object(fields) => fields
            .iter_mut()
            .map(|(name, field)| match field {
                Value::String(text) if is_secret_field(name) && !text.is_empty() => {
                    if text == REDACTED {
                        0
                    } else {
                        *text = REDACTED.to_owned();
                        1
                    }
                }
                _ => redact(field),
            })
            .sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

/// Cleans one text; returns how many secrets it removed.
fn redact_text(text: &mut String) -> usize {
    let mut removed = 0;
    for pattern in [&*URL_PASSWORD, &*URL_PARAMETER, &*SHAPED] {
        let replaced = pattern.replace_all(text, |caps: &Captures| {
            if caps.name("bare").is_some() {
                removed += 1;
                return REDACTED.to_owned();
            }
            let secret = &caps["secret"];
            if secret == REDACTED {
                return caps[0].to_owned();
            }
            removed += 1;
            let part = |name| caps.name(name).map_or("", |m| m.as_str());
            format!("{}{REDACTED}{}", part("head"), part("tail"))
        });
        if let std::borrow::Cow::Owned(cleaned) = replaced {
            *text = cleaned;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cleaned(text: &str) -> (String, usize) {
        let mut value = Value::String(text.to_owned());
        let removed = redact(&mut value);
        (value.as_str().unwrap().to_owned(), removed)
    }

    #[test]
    fn a_url_keeps_its_user_and_host_but_not_its_password() {
        let (text, removed) = cleaned("postgres://dify:s3cr%40t@db.internal:5432/dify");
        assert_eq!(text, "postgres://dify:[redacted]@db.internal:5432/dify");
        assert_eq!(removed, 1);
        // No password, nothing to remove: the user alone is no secret.
        assert_eq!(cleaned("postgres://dify@db/dify").1, 0);
    }

    #[test]
    fn signed_url_parameters_go_and_the_rest_stays() {
        let (text, removed) = cleaned(
            "https://s3.example/b/f.png?X-Amz-Credential=AK%2F1&X-Amz-Signature=abcdef&size=3 \
             and https://files.example/x?token=t0k3n#top",
        );
        assert_eq!(
            text,
            "https://s3.example/b/f.png?X-Amz-Credential=[redacted]&X-Amz-Signature=[redacted]\
             &size=3 and https://files.example/x?token=[redacted]#top"
        );
        assert_eq!(removed, 3);
    }

    #[test]
    fn keys_pasted_into_a_chat_are_recognised_by_their_shape() {
        let (text, removed) = cleaned(
            "my key is sk-proj-AbCdEf0123456789xyz, the app's app-0123456789abcdefABCDEF12, \
             and curl -H 'Authorization: Bearer eyJhbGciOi.J9.x' with api_key=hunter22",
        );
        assert_eq!(
            text,
            "my key is [redacted], the app's [redacted], and curl -H 'Authorization: Bearer \
             [redacted]' with api_key=[redacted]"
        );
        assert_eq!(removed, 4);
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        for text in [
            "The task-oriented app- design uses a token budget of 2,000 tokens.",
            "sk-short",
            "see https://docs.dify.ai/guides?page=2",
        ] {
            assert_eq!(cleaned(text), (text.to_owned(), 0), "{text}");
        }
    }

    #[test]
    fn fields_named_for_a_secret_are_replaced_whole_and_numbers_kept() {
        let mut value = json!({
            "inputs": {"headers": {"Authorization": "Token abc"}, "api_key": "plain", "query": "hi"},
            "tokens": 42,
            "token": "",
            "messages": [{"text": "password: letmein"}],
        });
        assert_eq!(redact(&mut value), 3);
        assert_eq!(
            value,
            json!({
                "inputs": {"headers": {"Authorization": REDACTED}, "api_key": REDACTED, "query": "hi"},
                "tokens": 42,
                "token": "",
                "messages": [{"text": "password: [redacted]"}],
            })
        );
        // A second pass finds nothing left.
        assert_eq!(redact(&mut value), 0);
    }
}
