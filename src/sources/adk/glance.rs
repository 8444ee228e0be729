//! What the sessions list needs of a stored event (whether ADK can load it, its author, the
//! agent it transfers to), read in one pass over its JSON without building the event: a listed
//! session may hold thousands of events, and building each (two parses of the whole text, its
//! quoted arguments) made a page of sessions take seconds. Pure: no IO.
//!
//! It must agree with [`Event::decode`](super::event::Event::decode) on every text: the same
//! parser reads every value, skipped ones included (a number out of range fails both), a
//! repeated key keeps its last value in both, and the tests compare the two.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value as Json;

/// An event as the list sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glance {
    pub author: String,
    /// `actions.transfer_to_agent`, when it names an agent.
    pub transfer_to: Option<String>,
}

impl Glance {
    /// `None` where `Event::decode` finds no event ADK could load: not a JSON object, an
    /// author that is not a string, `content` or `actions` neither an object nor null.
    pub fn of(stored: &str) -> Option<Glance> {
        let Event {
            author,
            content,
            actions,
        } = serde_json::from_str(stored).ok()?;
        if content == Shape::Other {
            return None;
        }
        let transfer_to = match actions {
            Json::Null => None,
            Json::Object(actions) => actions
                .get("transfer_to_agent")
                .and_then(Json::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_owned),
            _ => return None,
        };
        Some(Glance {
            author: author.as_str()?.to_owned(),
            transfer_to,
        })
    }
}

/// The event object's two small fields and the kind of its large one, `content`; every other
/// field is only read. A repeated field keeps its last value, as `serde_json::Value` keeps it.
struct Event {
    author: Json,
    content: Shape,
    actions: Json,
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Event, D::Error> {
        struct EventVisitor;
        impl<'de> Visitor<'de> for EventVisitor {
            type Value = Event;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an event object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event, A::Error> {
                let mut event = Event {
                    author: Json::Null,
                    content: Shape::Null,
                    actions: Json::Null,
                };
                while let Some(field) = map.next_key::<Field>()? {
                    match field {
                        Field::Author => event.author = map.next_value()?,
                        Field::Actions => event.actions = map.next_value()?,
                        Field::Content => event.content = map.next_value()?,
                        Field::Other => {
                            map.next_value::<Shape>()?;
                        }
                    }
                }
                Ok(event)
            }
        }
        deserializer.deserialize_any(EventVisitor)
    }
}

enum Field {
    Author,
    Actions,
    Content,
    Other,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Field, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E>(self, name: &str) -> Result<Field, E> {
                Ok(match name {
                    "author" => Field::Author,
                    "actions" => Field::Actions,
                    "content" => Field::Content,
                    _ => Field::Other,
                })
            }
        }
        deserializer.deserialize_str(FieldVisitor)
    }
}

/// What kind of value was read, its contents read to their end and dropped, through the
/// parser's full path (`deserialize_any`, not `deserialize_ignored_any`, which reads numbers
/// without checking their range), so that it fails exactly where reading it into a
/// `serde_json::Value` fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Null,
    Object,
    Other,
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Shape, D::Error> {
        deserializer.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
    fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        while seq.next_element::<Shape>()?.is_some() {}
        Ok(Shape::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        while map.next_entry::<Shape, Shape>()?.is_some() {}
        Ok(Shape::Object)
    }
}

#[cfg(test)]
#[path = "glance_tests.rs"]
mod tests;
