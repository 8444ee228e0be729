//! `EncryptedSerializer.from_pycryptodome_aes`: AES in EAX mode, stored as nonce (16 bytes) ‖
//! tag (16 bytes) ‖ ciphertext, under the key `LANGGRAPH_AES_KEY` holds (its UTF-8 bytes:
//! 16, 24 or 32 of them pick AES-128, -192 or -256).

use aes::cipher::consts::U16;
use aes::cipher::{BlockCipher, BlockEncrypt};
use aes::{Aes128, Aes192, Aes256};
use eax::aead::{AeadInPlace, KeyInit};
use eax::{Eax, Nonce, Tag};

use super::outcome::{DecodeError, KEY_VARIABLE};

const NONCE_LEN: usize = 16;
const TAG_LEN: usize = 16;

/// A key of one of AES's three sizes.
#[derive(Clone)]
pub struct AesKey(Vec<u8>);

impl std::fmt::Debug for AesKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AesKey({} bytes)", self.0.len())
    }
}

impl AesKey {
    /// The key as LangGraph takes it from `LANGGRAPH_AES_KEY`: the text's UTF-8 bytes.
    pub fn new(bytes: &[u8]) -> Result<AesKey, String> {
        match bytes.len() {
            16 | 24 | 32 => Ok(AesKey(bytes.to_vec())),
            n => Err(format!(
                "{KEY_VARIABLE} must be 16, 24 or 32 bytes long, as LangGraph requires; it is {n} {}",
                crate::format::noun(n as u64, "byte")
            )),
        }
    }

    /// Checks the tag and returns the plaintext.
    pub fn decrypt(&self, stored: &[u8]) -> Result<Vec<u8>, DecodeError> {
        if stored.len() < NONCE_LEN + TAG_LEN {
            return Err(DecodeError::TruncatedCiphertext { len: stored.len() });
        }
        let (nonce, rest) = stored.split_at(NONCE_LEN);
        let (tag, ciphertext) = rest.split_at(TAG_LEN);
        let mut buffer = ciphertext.to_vec();
        let nonce =
            EaxNonce::from(<[u8; NONCE_LEN]>::try_from(nonce).expect("split at its length"));
        let tag = EaxTag::from(<[u8; TAG_LEN]>::try_from(tag).expect("split at its length"));
        let opened = match self.0.len() {
            16 => open::<Aes128>(&self.0, &nonce, &tag, &mut buffer),
            24 => open::<Aes192>(&self.0, &nonce, &tag, &mut buffer),
            _ => open::<Aes256>(&self.0, &nonce, &tag, &mut buffer),
        };
        opened.then_some(buffer).ok_or(DecodeError::WrongKey)
    }

    /// Encrypts as pycryptodome does with the given nonce: for tests and for writing values
    /// LangGraph can read back.
    pub fn encrypt(&self, nonce: &[u8; NONCE_LEN], plaintext: &[u8]) -> Vec<u8> {
        let mut buffer = plaintext.to_vec();
        let tag = {
            let nonce = EaxNonce::from(*nonce);
            match self.0.len() {
                16 => seal::<Aes128>(&self.0, &nonce, &mut buffer),
                24 => seal::<Aes192>(&self.0, &nonce, &mut buffer),
                _ => seal::<Aes256>(&self.0, &nonce, &mut buffer),
            }
        };
        let mut stored = Vec::with_capacity(NONCE_LEN + TAG_LEN + buffer.len());
        stored.extend_from_slice(nonce);
        stored.extend_from_slice(&tag);
        stored.extend_from_slice(&buffer);
        stored
    }
}

/// AES-128, -192 and -256: the block ciphers EAX runs on here.
trait EaxBlockCipher: BlockCipher<BlockSize = U16> + BlockEncrypt + Clone + KeyInit {}

impl<C: BlockCipher<BlockSize = U16> + BlockEncrypt + Clone + KeyInit> EaxBlockCipher for C {}

type EaxNonce = Nonce<U16>;
type EaxTag = Tag<U16>;

fn open<C: EaxBlockCipher>(key: &[u8], nonce: &EaxNonce, tag: &EaxTag, buffer: &mut [u8]) -> bool {
    Eax::<C>::new_from_slice(key).is_ok_and(|cipher| {
        cipher
            .decrypt_in_place_detached(nonce, b"", buffer, tag)
            .is_ok()
    })
}

fn seal<C: EaxBlockCipher>(key: &[u8], nonce: &EaxNonce, buffer: &mut [u8]) -> EaxTag {
    let cipher =
        Eax::<C>::new_from_slice(key).expect("the key length was checked when it was made");
    cipher
        .encrypt_in_place_detached(nonce, b"", buffer)
        .expect("EAX encrypts a message of any length held in memory")
}
