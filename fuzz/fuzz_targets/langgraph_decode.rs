//! LangGraph's value decoder on arbitrary input: the first byte picks the stored type (plain,
//! encrypted, legacy JSON), the rest is the value. Whatever is read is then walked the way the
//! reader walks it (JSON view, message, checkpoint body), and the thread list's glance at a
//! checkpoint must give what the whole read gives. Nothing may panic or overflow.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memscope::sources::langgraph::decode::checkpoint::Checkpoint;
use memscope::sources::langgraph::decode::glance::{Glance, GlanceError, glance_typed};
use memscope::sources::langgraph::decode::message::LangChainMessage;
use memscope::sources::langgraph::decode::{AesKey, decode_typed};

const TYPES: [&str; 6] = ["msgpack", "json", "msgpack+aes", "json+aes", "bytes", "null+aes"];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let key = AesKey::new(b"memscope-fuzz-key-0123456789abcd").expect("a 32-byte key");
    let type_name = TYPES[usize::from(selector) % TYPES.len()];
    let whole = match decode_typed(type_name, bytes, Some(&key)) {
        Ok(decoded) => {
            let _ = decoded.value.to_json();
            if let Some(Ok(message)) = LangChainMessage::from_value(&decoded.value) {
                let _ = message.to_prompt_message();
            }
            Checkpoint::from_owned(decoded.value)
                .map(|checkpoint| Glance::of(&checkpoint))
                .map_err(GlanceError::Body)
        }
        Err(error) => Err(GlanceError::Decode(error)),
    };
    assert_eq!(glance_typed(type_name, bytes, Some(&key)), whole);
});
