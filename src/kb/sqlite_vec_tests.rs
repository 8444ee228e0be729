use super::*;
use crate::kb::embedder::HashingEmbedder;
use crate::kb::store::{KbLocation, VectorStore};

fn chunk(id: &str, message: &str, session: &str, job: &str, embedding: Vec<f32>) -> ChunkRecord {
    ChunkRecord {
        chunk_id: id.into(),
        message_id: message.into(),
        session_id: session.into(),
        job_id: job.into(),
        content: format!("content of {id}"),
        metadata: serde_json::json!({ "message_id": message }),
        embedding,
    }
}

#[tokio::test]
async fn upsert_search_and_rollback() {
    let dir = tempfile::tempdir().unwrap();
    let kb = KbLocation::embedded(dir.path());
    let store = VectorStore::open_or_create(&kb, 3).await.unwrap();
    store
        .upsert(&[
            chunk("a", "m1", "s1", "j1", vec![1.0, 0.0, 0.0]),
            chunk("b", "m2", "s2", "j1", vec![0.0, 1.0, 0.0]),
            chunk("c", "m3", "s1", "j2", vec![0.7, 0.7, 0.0]),
        ])
        .await
        .unwrap();
    // The same id again replaces, it does not duplicate.
    store
        .upsert(&[chunk("a", "m1", "s1", "j2", vec![1.0, 0.0, 0.0])])
        .await
        .unwrap();
    let stats = store.stats().await.unwrap();
    assert_eq!((stats.chunks, stats.messages), (3, 3));

    let hits = store.search(&[1.0, 0.0, 0.0], 2, None).await.unwrap();
    assert_eq!(hits[0].chunk_id, "a");
    assert!(hits[0].distance < 1e-6);
    assert_eq!(hits[1].chunk_id, "c");
    let hits = store.search(&[0.0, 1.0, 0.0], 5, Some("s1")).await.unwrap();
    assert!(hits.iter().all(|h| h.session_id == "s1"));
    assert_eq!(hits.len(), 2);

    assert_eq!(store.delete_job("j2").await.unwrap(), 2);
    assert_eq!(store.stats().await.unwrap().chunks, 1);
    assert_eq!(
        store.search(&[1.0, 0.0, 0.0], 5, None).await.unwrap().len(),
        1
    );
    store.close().await;

    let reopened = VectorStore::open_existing(&kb).await.unwrap().unwrap();
    assert_eq!(reopened.dimension(), 3);
    reopened.close().await;
    assert!(VectorStore::open_or_create(&kb, 4).await.is_err());
}

#[tokio::test]
async fn a_missing_store_is_none_and_an_old_one_asks_for_regenerate() {
    let dir = tempfile::tempdir().unwrap();
    let kb = KbLocation::embedded(dir.path());
    assert!(VectorStore::open_existing(&kb).await.unwrap().is_none());
    // Format 1: a float32 vec0 table and no format row.
    register_sqlite_vec();
    let old = SqliteVectors::connect(dir.path(), true, 3).await.unwrap();
    sqlx::raw_sql(
        "CREATE TABLE kb_info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
         INSERT INTO kb_info VALUES ('dimension', '3');",
    )
    .execute(&old.pool)
    .await
    .unwrap();
    old.close().await;
    let error = VectorStore::open_existing(&kb).await.err().unwrap();
    assert!(error.to_string().contains("mb regenerate"), "{error}");
    assert!(VectorStore::open_or_create(&kb, 3).await.is_err());
}

#[test]
fn quantization_keeps_direction_in_int8() {
    let q = quantize(&[3.0, -4.0, 0.0]);
    assert_eq!(
        q.iter().map(|&b| b as i8).collect::<Vec<_>>(),
        [76, -102, 0]
    );
    assert_eq!(quantize(&[0.0, 0.0]), [0, 0]);
    assert_eq!(candidates(5), 200);
    assert_eq!(candidates(100), 2000);
    assert_eq!(dot_i8(&[1, -2, 3], &[2, 255, 1]), 2 + 2 + 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_writers_of_one_file_keep_every_code_in_its_own_slot() {
    let dir = tempfile::tempdir().unwrap();
    let kb = KbLocation::embedded(dir.path());
    let embedder = HashingEmbedder::default();
    let text = |n: usize| format!("note {n} about item {} in batch {}", n * 7919, n % 13);
    let chunks = |range: std::ops::Range<usize>| -> Vec<ChunkRecord> {
        range
            .map(|n| {
                chunk(
                    &n.to_string(),
                    &n.to_string(),
                    "s",
                    "j",
                    embedder.embed_one(&text(n)),
                )
            })
            .collect()
    };
    let (first, second) = (
        VectorStore::open_or_create(&kb, 384).await.unwrap(),
        VectorStore::open_or_create(&kb, 384).await.unwrap(),
    );
    async fn write(store: &VectorStore, batches: Vec<Vec<ChunkRecord>>) {
        for batch in batches {
            store.upsert(&batch).await.unwrap();
        }
    }
    let batches = |start: usize| -> Vec<Vec<ChunkRecord>> {
        (0..6)
            .map(|b| chunks(start + b * 200..start + (b + 1) * 200))
            .collect()
    };
    tokio::join!(write(&first, batches(0)), write(&second, batches(1200)));
    assert_eq!(first.stats().await.unwrap().chunks, 2400);
    for n in [0, 199, 1000, 1200, 1799, 2399] {
        let hits = second
            .search(&embedder.embed_one(&text(n)), 1, None)
            .await
            .unwrap();
        assert_eq!(hits[0].chunk_id, n.to_string());
        assert!(hits[0].distance < 1e-5);
    }
    first.close().await;
    second.close().await;
}

/// The exact `top_k` cosine distances, computed in f64 over every vector.
fn exact_distances(vectors: &[Vec<f32>], query: &[f32], top_k: usize) -> Vec<f64> {
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let mut all: Vec<f64> = vectors
        .iter()
        .map(|v| {
            let dot: f64 = v.iter().zip(query).map(|(a, b)| f64::from(a * b)).sum();
            1.0 - dot / (norm(v) * norm(query))
        })
        .collect();
    all.sort_by(f64::total_cmp);
    all.truncate(top_k);
    all
}

#[tokio::test]
async fn quantized_search_with_rescoring_finds_the_exact_neighbours() {
    // Texts of 3 to 120 words over a small vocabulary: short and long chunks compete, which
    // is where a coarse distance ranks differently from cosine.
    const WORDS: [&str; 24] = [
        "refund", "parcel", "invoice", "login", "password", "deploy", "pipeline", "order",
        "delayed", "account", "support", "billing", "shipping", "address", "reset", "token",
        "cluster", "error", "timeout", "retry", "payment", "card", "email", "verify",
    ];
    let text = |n: usize| -> String {
        let length = 3 + (n * 37) % 118;
        (0..length)
            .map(|i| WORDS[(n * 13 + i * i * 7 + i * (n % 5)) % WORDS.len()])
            .collect::<Vec<_>>()
            .join(" ")
    };
    let embedder = HashingEmbedder::default();
    let dir = tempfile::tempdir().unwrap();
    let store = VectorStore::open_or_create(&KbLocation::embedded(dir.path()), 384)
        .await
        .unwrap();
    let vectors: Vec<Vec<f32>> = (0..4000).map(|n| embedder.embed_one(&text(n))).collect();
    let chunks: Vec<ChunkRecord> = vectors
        .iter()
        .enumerate()
        .map(|(n, v)| chunk(&n.to_string(), &n.to_string(), "s", "j", v.clone()))
        .collect();
    // Two writes: the second fills the first's last block and goes on into new ones.
    store.upsert(&chunks[..2500]).await.unwrap();
    store.upsert(&chunks[2500..]).await.unwrap();
    assert_eq!(store.stats().await.unwrap().chunks, 4000);
    for query in [
        "refund for a delayed parcel",
        "reset my password",
        "deploy pipeline timeout error retry",
        "card payment",
        "verify email address for billing account",
    ] {
        let vector = embedder.embed_one(query);
        let found: Vec<f64> = store
            .search(&vector, 5, None)
            .await
            .unwrap()
            .iter()
            .map(|hit| hit.distance)
            .collect();
        let exact = exact_distances(&vectors, &vector, 5);
        assert_eq!(found.len(), 5);
        for (f, e) in found.iter().zip(&exact) {
            assert!(
                (f - e).abs() < 1e-5,
                "{query}: {found:?} vs exact {exact:?}"
            );
        }
    }
    store.close().await;
}
