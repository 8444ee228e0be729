//! The chat-completions summarizer against a local server that speaks the wire format:
//! success, error bodies, timeouts, an unreachable endpoint, and the empty-summary retry.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use memscope::memory::budget::MessageTokens;
use memscope::memory::model::{PromptMessage, Role};
use memscope::memory::trim::{ChatMemoryPolicy, MessageCount, MessageCounter, PolicyPlanner};
use memscope::summarize::{
    ChatCompletionsClient, ChatCompletionsConfig, SummarizeError, Summarizer, summarize_plan,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One scripted answer: status, body, and a delay before answering.
#[derive(Clone)]
struct Reply {
    status: u16,
    body: String,
    delay: Duration,
}

fn ok(content: &str) -> Reply {
    Reply {
        status: 200,
        body: serde_json::json!({
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        })
        .to_string(),
        delay: Duration::ZERO,
    }
}

/// Serves `replies` in order (the last one repeats); returns the base URL and the requests seen.
async fn server(replies: Vec<Reply>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        let mut served = 0;
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let reply = replies[served.min(replies.len() - 1)].clone();
            served += 1;
            let log = log.clone();
            tokio::spawn(async move {
                let request = read_request(&mut socket).await;
                log.lock().unwrap().push(request);
                tokio::time::sleep(reply.delay).await;
                let response = format!(
                    "HTTP/1.1 {} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{}",
                    reply.status,
                    reply.body.len(),
                    reply.body
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    (format!("http://{address}/v1"), seen)
}

async fn read_request(socket: &mut tokio::net::TcpStream) -> String {
    let mut data = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let n = socket.read(&mut buffer).await.unwrap_or(0);
        if n == 0 {
            break;
        }
        data.extend_from_slice(&buffer[..n]);
        let text = String::from_utf8_lossy(&data).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap())
                })
                .unwrap_or(0);
            if data.len() >= end + 4 + length {
                break;
            }
        }
    }
    String::from_utf8_lossy(&data).to_string()
}

fn client(base_url: &str, key_env: &str, timeout: Duration) -> ChatCompletionsClient {
    ChatCompletionsClient::new(&ChatCompletionsConfig {
        base_url: base_url.to_owned(),
        model: "test-model".into(),
        api_key_env: key_env.into(),
        timeout,
        max_tokens: None,
    })
    .unwrap()
}

#[tokio::test]
async fn a_completion_is_read_and_the_request_is_well_formed() {
    let (url, seen) = server(vec![ok("They agreed on Monday.")]).await;
    // SAFETY: no other test reads this variable.
    unsafe { std::env::set_var("MEMSCOPE_TEST_SUMMARIZER_KEY", "sk-test") };
    let client = client(&url, "MEMSCOPE_TEST_SUMMARIZER_KEY", Duration::from_secs(5));
    let text = client.complete("Summarize this.", 120).await.unwrap();
    assert_eq!(text, "They agreed on Monday.");
    let request = seen.lock().unwrap()[0].clone();
    assert!(
        request.starts_with("POST /v1/chat/completions HTTP/1.1"),
        "{request}"
    );
    assert!(
        request
            .to_ascii_lowercase()
            .contains("authorization: bearer sk-test")
    );
    let body: serde_json::Value =
        serde_json::from_str(&request[request.find("\r\n\r\n").unwrap() + 4..]).unwrap();
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["max_tokens"], 120);
    assert_eq!(body["messages"][0]["role"], "user");
    assert_eq!(body["messages"][0]["content"], "Summarize this.");
}

#[tokio::test]
async fn the_summarizer_section_of_the_config_reaches_the_wire() {
    let (url, seen) = server(vec![ok("Names kept.")]).await;
    let user = format!(
        "[summarizer]\nkind = \"chat-completions\"\nbase_url = \"{url}\"\nmodel = \"configured-model\"\n\
         api_key_env = \"MEMSCOPE_TEST_CONFIGURED_KEY\"\ntimeout_seconds = 5\nmax_tokens = 77\n"
    );
    let config = memscope::config::merge(Some((std::path::Path::new("u.toml"), &user))).unwrap();
    let summarizer = Summarizer::from_config(&config.summarizer).unwrap();
    let Summarizer::ChatCompletions(client) = &summarizer else {
        panic!("chat-completions was configured");
    };
    let text = client.complete("Summarize.", 120).await.unwrap();
    assert_eq!(text, "Names kept.");
    let request = seen.lock().unwrap()[0].clone();
    let body: serde_json::Value =
        serde_json::from_str(&request[request.find("\r\n\r\n").unwrap() + 4..]).unwrap();
    assert_eq!(body["model"], "configured-model");
    assert_eq!(
        body["max_tokens"], 77,
        "the configured cap wins over the policy's"
    );
    assert!(
        !request.to_ascii_lowercase().contains("authorization"),
        "an unset key variable sends no key"
    );
}

#[tokio::test]
async fn error_bodies_are_reported_with_the_status() {
    let reply = Reply {
        status: 401,
        body:
            r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#
                .into(),
        delay: Duration::ZERO,
    };
    let (url, seen) = server(vec![reply]).await;
    let client = client(&url, "MEMSCOPE_TEST_UNSET_KEY", Duration::from_secs(5));
    let err = client.complete("x", 10).await.unwrap_err();
    assert!(
        matches!(&err, SummarizeError::Http { status: 401, message, .. } if message == "Incorrect API key provided"),
        "{err}"
    );
    assert!(err.to_string().contains("/v1/chat/completions"));
    // No key in the environment: no Authorization header.
    assert!(
        !seen.lock().unwrap()[0]
            .to_ascii_lowercase()
            .contains("authorization")
    );

    let (url, _) = server(vec![Reply {
        status: 200,
        body: "not json".into(),
        delay: Duration::ZERO,
    }])
    .await;
    let err = client_err(&url).await;
    assert!(matches!(err, SummarizeError::BadResponse { .. }), "{err}");
    let (url, _) = server(vec![Reply {
        status: 200,
        body: r#"{"choices":[]}"#.into(),
        delay: Duration::ZERO,
    }])
    .await;
    assert!(matches!(
        client_err(&url).await,
        SummarizeError::BadResponse { .. }
    ));
}

async fn client_err(url: &str) -> SummarizeError {
    client(url, "MEMSCOPE_TEST_UNSET_KEY", Duration::from_secs(5))
        .complete("x", 10)
        .await
        .unwrap_err()
}

#[tokio::test]
async fn a_slow_server_times_out_instead_of_hanging() {
    let slow = Reply {
        delay: Duration::from_secs(30),
        ..ok("late")
    };
    let (url, _) = server(vec![slow]).await;
    let client = client(&url, "MEMSCOPE_TEST_UNSET_KEY", Duration::from_millis(300));
    let err = client.complete("x", 10).await.unwrap_err();
    assert!(matches!(err, SummarizeError::Timeout { .. }), "{err}");
}

#[tokio::test]
async fn an_unreachable_endpoint_is_named() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let client = client(
        &format!("http://{address}/v1"),
        "MEMSCOPE_TEST_UNSET_KEY",
        Duration::from_secs(5),
    );
    let err = client.complete("x", 10).await.unwrap_err();
    assert!(matches!(err, SummarizeError::Unreachable { .. }), "{err}");
    assert!(err.to_string().contains(&address.to_string()));
}

#[tokio::test]
async fn an_empty_summary_halves_the_slice_and_retries() {
    let (url, seen) = server(vec![ok(""), ok("  "), ok("Invoices 0 and 1 are late.")]).await;
    let summarizer = Summarizer::ChatCompletions(client(
        &url,
        "MEMSCOPE_TEST_UNSET_KEY",
        Duration::from_secs(5),
    ));
    let policy =
        ChatMemoryPolicy::from_json(r#"{"max_messages":2,"summarization":{"enabled":true}}"#)
            .unwrap();
    let history: Vec<PromptMessage> = (0..9)
        .map(|i| {
            PromptMessage::text(
                if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                },
                format!("Invoice {i} is late."),
            )
        })
        .collect();
    let counts: Vec<MessageTokens> = history
        .iter()
        .map(|m| MessageCount.count_message(m))
        .collect();
    let planner = PolicyPlanner::new(&policy, &history, &counts, &MessageCount).unwrap();
    let plan = summarize_plan(&planner, planner.plan(), &summarizer)
        .await
        .unwrap();
    let slot = plan.summary.as_ref().unwrap();
    // 8 removed, then 4, then 2: the third answer is used.
    assert_eq!(slot.summarized, vec![0, 1]);
    assert_eq!(slot.text.as_deref(), Some("Invoices 0 and 1 are late."));
    assert_eq!(seen.lock().unwrap().len(), 3);
    assert!(seen.lock().unwrap()[2].contains("Invoice 1 is late."));
    assert!(!seen.lock().unwrap()[2].contains("Invoice 2 is late."));
}
