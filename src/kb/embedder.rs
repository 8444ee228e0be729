//! Embedders behind one interface: the offline hashing embedder (the default) and a client for
//! OpenAI-compatible `/v1/embeddings` servers (Ollama, vLLM, TEI, OpenAI).

use std::future::Future;

use super::openai::{OpenAiEmbedder, OpenAiError};

/// Why texts could not be embedded.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error(transparent)]
    OpenAi(#[from] OpenAiError),
    #[error("the embedder returned {got} vectors for {expected} texts")]
    WrongCount { expected: usize, got: usize },
    #[error("the embedder returned a {got}-dimensional vector, expected {expected}")]
    WrongDimension { expected: usize, got: usize },
    /// A test double's failure.
    #[error("{0}")]
    Failed(String),
    #[error(
        "embedding model {0} needs an embeddings server: set embeddings_url in [memory_bases] \
         of config.toml, MEMSCOPE_EMBEDDINGS_URL or --embeddings-url"
    )]
    NoServer(String),
}

/// Turns texts into vectors of one fixed dimension.
pub trait Embedder: Send + Sync {
    /// Recorded in `embedding_metadata.json` as `embedding_provider`.
    fn provider(&self) -> &str;
    /// Recorded as `embedding_model`; a different model makes the KB a mismatch.
    fn model(&self) -> &str;
    fn dimension(&self) -> usize;
    /// One vector per text, in order.
    fn embed(
        &self,
        texts: &[String],
    ) -> impl Future<Output = Result<Vec<Vec<f32>>, EmbedError>> + Send;
}

/// The hashing embedder's provider name.
pub const HASHING_PROVIDER: &str = "memscope";
/// Named for what it is: word-level lexical hashing, not a semantic model.
pub const HASHING_MODEL: &str = "hashing-lexical";
pub const HASHING_DIMENSION: usize = 384;

/// Feature hashing of lowercased words and adjacent word pairs into a signed, L2-normalised
/// vector. Offline and deterministic; similar texts share words, not meaning.
#[derive(Debug, Clone, Copy)]
pub struct HashingEmbedder {
    dimension: usize,
}

impl Default for HashingEmbedder {
    fn default() -> Self {
        HashingEmbedder {
            dimension: HASHING_DIMENSION,
        }
    }
}

fn fnv1a(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            hash ^= 0x1f;
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        for byte in part.bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

impl HashingEmbedder {
    pub fn new(dimension: usize) -> HashingEmbedder {
        HashingEmbedder {
            dimension: dimension.max(1),
        }
    }

    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut vector = vec![0f32; self.dimension];
        let lowered = text.to_lowercase();
        let words: Vec<&str> = lowered
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        let mut add = |hash: u64, weight: f32| {
            let index = (hash % self.dimension as u64) as usize;
            let sign = if hash >> 63 == 0 { 1.0 } else { -1.0 };
            vector[index] += sign * weight;
        };
        for word in &words {
            add(fnv1a(&[word]), 1.0);
        }
        for pair in words.windows(2) {
            add(fnv1a(&[pair[0], pair[1]]), 0.5);
        }
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            vector.iter_mut().for_each(|x| *x /= norm);
        }
        vector
    }
}

impl Embedder for HashingEmbedder {
    fn provider(&self) -> &str {
        HASHING_PROVIDER
    }

    fn model(&self) -> &str {
        HASHING_MODEL
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
}

impl Embedder for OpenAiEmbedder {
    fn provider(&self) -> &str {
        "openai-compatible"
    }

    fn model(&self) -> &str {
        &self.config().model
    }

    fn dimension(&self) -> usize {
        self.config().dimension
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.config().batch_size.max(1)) {
            let answer = self.embed_batch(batch).await?;
            check_vectors(&answer, batch.len(), self.config().dimension)?;
            vectors.extend(answer);
        }
        Ok(vectors)
    }
}

/// The embedder a memory base is configured with.
#[derive(Debug, Clone)]
pub enum AnyEmbedder {
    Hashing(HashingEmbedder),
    OpenAi(OpenAiEmbedder),
    /// A model served by an embeddings server that is not configured: reading a base needs no
    /// embedder, so this stands in until something is embedded, which fails saying what to set.
    Unconfigured {
        model: String,
        dimension: usize,
    },
}

impl Embedder for AnyEmbedder {
    fn provider(&self) -> &str {
        match self {
            AnyEmbedder::Hashing(e) => e.provider(),
            AnyEmbedder::OpenAi(e) => e.provider(),
            AnyEmbedder::Unconfigured { .. } => "",
        }
    }

    fn model(&self) -> &str {
        match self {
            AnyEmbedder::Hashing(e) => e.model(),
            AnyEmbedder::OpenAi(e) => e.model(),
            AnyEmbedder::Unconfigured { model, .. } => model,
        }
    }

    fn dimension(&self) -> usize {
        match self {
            AnyEmbedder::Hashing(e) => e.dimension(),
            AnyEmbedder::OpenAi(e) => e.dimension(),
            AnyEmbedder::Unconfigured { dimension, .. } => *dimension,
        }
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        match self {
            AnyEmbedder::Hashing(e) => e.embed(texts).await,
            AnyEmbedder::OpenAi(e) => e.embed(texts).await,
            AnyEmbedder::Unconfigured { model, .. } => Err(EmbedError::NoServer(model.clone())),
        }
    }
}

/// Checks an embedder's answer before anything is written with it.
pub fn check_vectors(
    vectors: &[Vec<f32>],
    expected: usize,
    dimension: usize,
) -> Result<(), EmbedError> {
    if vectors.len() != expected {
        return Err(EmbedError::WrongCount {
            expected,
            got: vectors.len(),
        });
    }
    match vectors.iter().find(|v| v.len() != dimension) {
        Some(bad) => Err(EmbedError::WrongDimension {
            expected: dimension,
            got: bad.len(),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kb::openai::OpenAiEmbedder;
    use crate::kb::openai::tests::config;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn hashing_is_deterministic_and_normalised() {
        let e = HashingEmbedder::default();
        let a = e.embed_one("The refund was approved on Tuesday");
        assert_eq!(a, e.embed_one("The refund was approved on Tuesday"));
        assert_eq!(a.len(), HASHING_DIMENSION);
        assert!((cosine(&a, &a) - 1.0).abs() < 1e-5);
        assert!(e.embed_one("  ").iter().all(|x| *x == 0.0));
    }

    #[test]
    fn shared_words_score_higher_than_unrelated_text() {
        let e = HashingEmbedder::default();
        let query = e.embed_one("refund approved");
        let near = e.embed_one("Your refund was approved yesterday");
        let far = e.embed_one("The deployment pipeline failed on staging");
        assert!(cosine(&query, &near) > cosine(&query, &far));
        assert!(cosine(&query, &near) > 0.3);
    }

    #[test]
    fn answers_are_checked() {
        assert!(check_vectors(&[vec![0.0; 3]], 1, 3).is_ok());
        assert!(matches!(
            check_vectors(&[vec![0.0; 3]], 2, 3),
            Err(EmbedError::WrongCount { .. })
        ));
        assert!(matches!(
            check_vectors(&[vec![0.0; 2]], 1, 3),
            Err(EmbedError::WrongDimension { .. })
        ));
    }

    /// Answers each request with `answers[n]` (status, body), then repeats the last.
    async fn server(answers: Vec<(u16, String)>) -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let count = Arc::new(AtomicUsize::new(0));
        let seen = count.clone();
        tokio::spawn(async move {
            loop {
                let (mut socket, _) = listener.accept().await.unwrap();
                let n = seen.fetch_add(1, Ordering::SeqCst);
                let mut buffer = vec![0u8; 65536];
                let _ = socket.read(&mut buffer).await;
                let (status, body) = answers[n.min(answers.len() - 1)].clone();
                let response = format!(
                    "HTTP/1.1 {status} X\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            }
        });
        (url, count)
    }

    #[tokio::test]
    async fn batches_and_retries_transient_errors() {
        let ok = r#"{"data":[{"index":1,"embedding":[0,1]},{"index":0,"embedding":[1,0]}]}"#;
        let (url, count) = server(vec![(503, "busy".into()), (200, ok.into())]).await;
        let e = OpenAiEmbedder::new(config(&url)).unwrap();
        let texts: Vec<String> = vec!["a".into(), "b".into(), "c".into(), "d".into()];
        let vectors = e.embed(&texts).await.unwrap();
        assert_eq!(vectors[0], vec![1.0, 0.0]);
        assert_eq!(vectors[1], vec![0.0, 1.0]);
        assert_eq!(vectors.len(), 4);
        assert_eq!(count.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn client_errors_are_not_retried() {
        let (url, count) = server(vec![(401, "no key".into())]).await;
        let e = OpenAiEmbedder::new(config(&url)).unwrap();
        let error = e.embed(&["a".into()]).await.unwrap_err();
        assert!(error.to_string().contains("401"), "{error}");
        assert_eq!(count.load(Ordering::SeqCst), 1);
    }
}
