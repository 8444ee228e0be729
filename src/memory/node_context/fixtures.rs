//! Fixtures the parsers' tests share: JSON as bytes, and parsed messages as (role, text).

use serde_json::Value;

use super::parsed::NodeMessage;
use crate::memory::model::Role;

pub(super) fn texts(messages: &[NodeMessage]) -> Vec<(Role, String)> {
    messages
        .iter()
        .map(|m| (m.message.role, m.message.content.text().into_owned()))
        .collect()
}

pub(super) fn bytes(value: Value) -> Vec<u8> {
    value.to_string().into_bytes()
}
