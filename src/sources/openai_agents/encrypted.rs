//! `EncryptedSession` (`agents/extensions/memory/encrypt_session.py`): the underlying session's
//! rows hold envelopes `{"__enc__": 1, "v": 1, "kid": "hkdf-v1", "payload": <Fernet token>}`,
//! the token sealed with a key of the session's own: HKDF-SHA256 of the master key (a urlsafe
//! base64 key of 32 bytes, else the text's UTF-8 bytes), the session id as salt, info
//! `agents.session-store.hkdf.v1`. Its `get_items(limit)` reads the underlying `get_items` in a
//! window that doubles until `limit` envelopes open, and skips silently whatever does not open:
//! plaintext items, envelopes sealed with another key, and tokens older than its `ttl` (600 s
//! by default) or dated more than 60 s ahead. The master key comes from `SESSION_ENCRYPTION_KEY`,
//! the name the SDK's documentation uses.

use aes::cipher::{BlockDecryptMut, KeyIvInit, block_padding::Pkcs7};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE};
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use serde_json::Value as Json;
use sha2::Sha256;

use super::item::StoredItem;
use super::read::{self, ReadItems, Scope};
use crate::sources::conversation::{Refusal, SourceError};
use crate::store::Store;

/// The variable the master key is read from.
pub const KEY_VARIABLE: &str = "SESSION_ENCRYPTION_KEY";

const HKDF_INFO: &[u8] = b"agents.session-store.hkdf.v1";

/// How far ahead of now a token may be dated when a ttl is checked (cryptography's
/// `_MAX_CLOCK_SKEW`).
const MAX_CLOCK_SKEW: i64 = 60;

/// A session's Fernet key: the signing half and the encryption half.
pub struct SessionKey {
    signing: [u8; 16],
    encryption: [u8; 16],
}

/// `_ensure_fernet_key_bytes`: a urlsafe base64 text of 32 bytes is those bytes; anything else
/// is its UTF-8.
fn master_key_bytes(master: &str) -> Vec<u8> {
    // `base64.urlsafe_b64decode` ignores characters outside the alphabet.
    let kept: String = master
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '='))
        .collect();
    match STANDARD.decode(kept.as_bytes()) {
        Ok(bytes) if bytes.len() == 32 => bytes,
        _ => master.as_bytes().to_vec(),
    }
}

impl SessionKey {
    /// `_derive_session_fernet_key(master, session_id)`.
    pub fn derive(master: &str, session_id: &str) -> SessionKey {
        let hkdf =
            hkdf::Hkdf::<Sha256>::new(Some(session_id.as_bytes()), &master_key_bytes(master));
        let mut key = [0u8; 32];
        hkdf.expand(HKDF_INFO, &mut key)
            .expect("32 bytes is a valid HKDF-SHA256 length");
        let (signing, encryption) = key.split_at(16);
        SessionKey {
            signing: signing.try_into().expect("16 bytes"),
            encryption: encryption.try_into().expect("16 bytes"),
        }
    }

    /// The plaintext of a Fernet token and when it was sealed; `None` when it does not
    /// authenticate under this key.
    pub fn open(&self, token: &str) -> Option<(Vec<u8>, DateTime<Utc>)> {
        let cleaned: String = token.chars().filter(|c| !c.is_whitespace()).collect();
        let data = URL_SAFE.decode(cleaned.as_bytes()).ok()?;
        if data.len() < 1 + 8 + 16 + 32 || data[0] != 0x80 {
            return None;
        }
        let (signed, tag) = data.split_at(data.len() - 32);
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.signing).ok()?;
        mac.update(signed);
        mac.verify_slice(tag).ok()?;
        let seconds = i64::try_from(u64::from_be_bytes(signed[1..9].try_into().ok()?)).ok()?;
        let iv: [u8; 16] = signed[9..25].try_into().ok()?;
        let mut buffer = signed[25..].to_vec();
        let plaintext = cbc::Decryptor::<aes::Aes128>::new(&self.encryption.into(), &iv.into())
            .decrypt_padded_mut::<Pkcs7>(&mut buffer)
            .ok()?
            .to_vec();
        Some((plaintext, DateTime::from_timestamp(seconds, 0)?))
    }
}

/// Whether `item` is an envelope as `_is_encrypted_envelope` tells one.
pub fn is_envelope(item: &Json) -> bool {
    let Some(fields) = item.as_object() else {
        return false;
    };
    fields.get("__enc__").and_then(Json::as_f64) == Some(1.0)
        && ["payload", "kid", "v"]
            .iter()
            .all(|key| fields.contains_key(*key))
}

/// What opening one stored item gave.
#[derive(Debug, PartialEq)]
pub enum Opened {
    /// The item's JSON text and when it was sealed.
    Item(String, DateTime<Utc>),
    /// Not an envelope: `EncryptedSession` skips plaintext.
    Plaintext,
    /// Sealed with another key, or damaged.
    Unauthenticated,
    /// Older than the ttl, or dated too far ahead.
    Expired,
}

/// `_unwrap(item)` with `ttl` (seconds; `None`: no time check) at `now`.
pub fn open(key: &SessionKey, item: &Json, ttl: Option<i64>, now: DateTime<Utc>) -> Opened {
    if !is_envelope(item) {
        return Opened::Plaintext;
    }
    let Some((plaintext, sealed)) = item["payload"].as_str().and_then(|token| key.open(token))
    else {
        return Opened::Unauthenticated;
    };
    if let Some(ttl) = ttl {
        let age = (now - sealed).num_seconds();
        if age > ttl || -age > MAX_CLOCK_SKEW {
            return Opened::Expired;
        }
    }
    match String::from_utf8(plaintext) {
        Ok(text) if serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok() => {
            Opened::Item(text, sealed)
        }
        _ => Opened::Unauthenticated,
    }
}

/// What `EncryptedSession.get_items` read, and what it skipped, by why.
#[derive(Debug, Default)]
pub struct EncryptedRead {
    pub read: ReadItems,
    pub plaintext: usize,
    pub unauthenticated: usize,
    pub expired: usize,
}

/// How many of a session's newest items are looked at to tell an encrypted session.
const ENVELOPE_PROBE: i64 = 16;

/// Whether one of `session`'s newest items is an envelope: the session is an
/// `EncryptedSession`'s (whose writes are all envelopes; a plaintext item among them is one
/// written past it).
pub async fn is_encrypted(
    store: &Store,
    session: &str,
    scope: Scope<'_>,
) -> Result<bool, SourceError> {
    let newest = read::get_items(store, session, scope, Some(ENVELOPE_PROBE)).await?;
    Ok(newest.items.iter().any(|item| is_envelope(&item.value)))
}

/// The master key from [`KEY_VARIABLE`], or why the session cannot be read without it.
pub fn master_key(session: &str) -> Result<String, SourceError> {
    std::env::var(KEY_VARIABLE)
        .ok()
        .filter(|key| !key.is_empty())
        .ok_or_else(|| {
            SourceError::new(
                Refusal::Config,
                format!(
                    "session {session} is an EncryptedSession's: set {KEY_VARIABLE} to the key \
                     it was written with"
                ),
            )
        })
}

/// Opens `items` (the underlying session's, oldest first) as `_unwrap_valid_items` does,
/// counting what it skips into `counts`.
fn open_all(
    key: &SessionKey,
    items: Vec<StoredItem>,
    ttl: Option<i64>,
    now: DateTime<Utc>,
    counts: &mut EncryptedRead,
) -> Vec<StoredItem> {
    let mut opened = Vec::with_capacity(items.len());
    for item in items {
        match open(key, &item.value, ttl, now) {
            Opened::Item(text, sealed) => {
                if let Some(mut decoded) = StoredItem::decode(item.row, item.at, text) {
                    decoded.sealed_at = Some(sealed);
                    opened.push(decoded);
                }
            }
            Opened::Plaintext => counts.plaintext += 1,
            Opened::Unauthenticated => counts.unauthenticated += 1,
            Opened::Expired => counts.expired += 1,
        }
    }
    opened
}

/// `EncryptedSession(…, ttl).get_items(limit)` over the underlying session's rows in `scope`;
/// a key that opens none of the items read is refused.
pub async fn get_items(
    store: &Store,
    session: &str,
    scope: Scope<'_>,
    limit: Option<i64>,
    ttl: Option<i64>,
) -> Result<EncryptedRead, SourceError> {
    let key = SessionKey::derive(&master_key(session)?, session);
    let now = Utc::now();
    let mut counts = EncryptedRead::default();
    let read = match limit.filter(|limit| *limit > 0) {
        None => {
            let mut read = read::get_items(store, session, scope, limit).await?;
            read.items = open_all(&key, std::mem::take(&mut read.items), ttl, now, &mut counts);
            read
        }
        Some(limit) => {
            let mut window = limit;
            loop {
                counts = EncryptedRead::default();
                let mut read = read::get_items(store, session, scope, Some(window)).await?;
                let underlying = read.items.len() as i64;
                let mut items =
                    open_all(&key, std::mem::take(&mut read.items), ttl, now, &mut counts);
                if items.len() as i64 >= limit || underlying < window {
                    let trimmed = items.len().saturating_sub(limit as usize);
                    items.drain(..trimmed);
                    read.past_limit += trimmed;
                    read.items = items;
                    break read;
                }
                window = window.saturating_mul(2);
            }
        }
    };
    if counts.unauthenticated > 0 && read.items.is_empty() && counts.expired == 0 {
        return Err(SourceError::new(
            Refusal::Config,
            format!(
                "{KEY_VARIABLE} opens none of session {session}'s items: it is not the key they were written with"
            ),
        ));
    }
    counts.read = read;
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token Python's `EncryptedSession` sealed: session `s`, master key `k`, plaintext
    /// `{"role":"user","content":"hi"}`, at 2026-11-28T00:00:00Z (cryptography 50,
    /// `_derive_session_fernet_key(b"k", "s").encrypt_at_time(..., 1795824000)`).
    const TOKEN: &str = include_str!("encrypted_token.txt");

    #[test]
    fn a_token_sealed_by_the_sdk_opens_with_the_same_key_and_session_only() {
        let key = SessionKey::derive("k", "s");
        let (plaintext, sealed) = key.open(TOKEN.trim()).expect("opens");
        assert_eq!(plaintext, br#"{"role":"user","content":"hi"}"#);
        assert_eq!(sealed.timestamp(), 1_795_824_000);
        assert!(
            SessionKey::derive("k", "other")
                .open(TOKEN.trim())
                .is_none()
        );
        assert!(SessionKey::derive("K", "s").open(TOKEN.trim()).is_none());
    }

    #[test]
    fn the_ttl_skips_old_tokens_and_plaintext_is_never_an_item() {
        let key = SessionKey::derive("k", "s");
        let envelope =
            serde_json::json!({"__enc__": 1, "v": 1, "kid": "hkdf-v1", "payload": TOKEN.trim()});
        let sealed = DateTime::from_timestamp(1_795_824_000, 0).unwrap();
        let later = sealed + chrono::TimeDelta::seconds(601);
        assert!(matches!(
            open(&key, &envelope, None, later),
            Opened::Item(..)
        ));
        assert_eq!(open(&key, &envelope, Some(600), later), Opened::Expired);
        assert!(matches!(
            open(&key, &envelope, Some(601), later),
            Opened::Item(..)
        ));
        let early = sealed - chrono::TimeDelta::seconds(61);
        assert_eq!(open(&key, &envelope, Some(600), early), Opened::Expired);
        let plain = serde_json::json!({"role": "user", "content": "hi"});
        assert_eq!(open(&key, &plain, None, later), Opened::Plaintext);
    }

    #[test]
    fn a_urlsafe_key_of_32_bytes_is_its_bytes_and_anything_else_its_text() {
        let key = "cw_0x689RpI-jtRR7oE8h_eQsKImvJapLeSbXpwF4e4=";
        assert_eq!(master_key_bytes(key).len(), 32);
        assert_eq!(master_key_bytes("short"), b"short");
    }
}
