//! A JSON value as Python's `str()` prints what `json.loads` makes of it: ADK quotes another
//! agent's tool arguments and results this way (`str(args)`, `str(response)` in
//! `flows/llm_flows/context/_fencing.py`): single quotes unless the text holds one and no double
//! quote, `None`, `True`, `False`, floats as `repr(float)` writes them, dicts in their order.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value as `json.loads` makes it: dicts keep their stored order.
#[derive(Debug, Clone, PartialEq)]
pub enum Py {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    List(Vec<Py>),
    Dict(Vec<(String, Py)>),
}

impl Py {
    /// A value already decoded (its dicts in key order): what stands in when the stored order
    /// is not at hand.
    pub fn from_json(value: &serde_json::Value) -> Py {
        use serde_json::Value as Json;
        match value {
            Json::Null => Py::None,
            Json::Bool(b) => Py::Bool(*b),
            Json::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => Py::Int(i128::from(i)),
                (None, Some(u), _) => Py::Int(i128::from(u)),
                (_, _, f) => Py::Float(f.unwrap_or(f64::NAN)),
            },
            Json::String(s) => Py::Str(s.clone()),
            Json::Array(items) => Py::List(items.iter().map(Py::from_json).collect()),
            Json::Object(fields) => Py::Dict(
                fields
                    .iter()
                    .map(|(k, v)| (k.clone(), Py::from_json(v)))
                    .collect(),
            ),
        }
    }

    pub fn get(&self, key: &str) -> Option<&Py> {
        match self {
            Py::Dict(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Py {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Py, D::Error> {
        struct PyVisitor;
        impl<'de> Visitor<'de> for PyVisitor {
            type Value = Py;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("JSON")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Py, E> {
                Ok(Py::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Py, E> {
                Ok(Py::Int(i128::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Py, E> {
                Ok(Py::Int(i128::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Py, E> {
                Ok(Py::Float(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Py, E> {
                Ok(Py::Str(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Py, E> {
                Ok(Py::Str(v))
            }
            fn visit_unit<E>(self) -> Result<Py, E> {
                Ok(Py::None)
            }
            fn visit_none<E>(self) -> Result<Py, E> {
                Ok(Py::None)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Py, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Py::List(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Py, A::Error> {
                let mut fields: Vec<(String, Py)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Py>()? {
                    // A repeated key keeps its first place and its last value, as a dict does.
                    match fields.iter_mut().find(|(k, _)| *k == key) {
                        Some(field) => field.1 = value,
                        None => fields.push((key, value)),
                    }
                }
                Ok(Py::Dict(fields))
            }
        }
        deserializer.deserialize_any(PyVisitor)
    }
}

/// `str(value)`.
pub fn repr(value: &Py) -> String {
    let mut out = String::new();
    write(value, &mut out);
    out
}

/// `str(dict(sorted(args.items())) if args else args)`: a call's arguments as ADK quotes them.
pub fn sorted_args(args: Option<&Py>) -> String {
    match args {
        Some(Py::Dict(fields)) if !fields.is_empty() => {
            let mut sorted = fields.clone();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            repr(&Py::Dict(sorted))
        }
        Some(args) => repr(args),
        None => "None".to_owned(),
    }
}

fn write(value: &Py, out: &mut String) {
    match value {
        Py::None => out.push_str("None"),
        Py::Bool(true) => out.push_str("True"),
        Py::Bool(false) => out.push_str("False"),
        Py::Int(i) => out.push_str(&i.to_string()),
        Py::Float(f) => out.push_str(&float(*f)),
        Py::Str(text) => out.push_str(&string(text)),
        Py::List(items) => {
            out.push('[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                write(item, out);
            }
            out.push(']');
        }
        Py::Dict(fields) => {
            out.push('{');
            for (n, (key, item)) in fields.iter().enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                out.push_str(&string(key));
                out.push_str(": ");
                write(item, out);
            }
            out.push('}');
        }
    }
}

/// `repr(float)`: the shortest text that reads back, with `.0` on whole numbers, and in
/// exponent form (`1e-05`, `1e+16`) below 1e-4 and from 1e16.
pub fn float(f: f64) -> String {
    if f.is_nan() {
        return "nan".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    let magnitude = f.abs();
    if !(1e-4..1e16).contains(&magnitude) {
        let text = format!("{f:e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let exponent: i32 = exponent.parse().unwrap_or(0);
        let sign = if exponent < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exponent.abs());
    }
    let text = format!("{f}");
    if text.contains('.') {
        text
    } else {
        format!("{text}.0")
    }
}

/// `repr(str)`.
pub fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    crate::memory::tokens::push_str_repr(&mut out, text);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py(text: &str) -> String {
        repr(&serde_json::from_str::<Py>(text).unwrap())
    }

    #[test]
    fn values_print_as_python_prints_what_json_loads_makes_of_them() {
        let value = r#"{"query": "it's", "n": 3, "ok": true, "no": false, "none": null,
            "x": 0.5, "list": ["a", "say \"hi\"", "both ' \""], "nested": {}}"#;
        assert_eq!(
            py(value),
            r#"{'query': "it's", 'n': 3, 'ok': True, 'no': False, 'none': None, 'x': 0.5, 'list': ['a', 'say "hi"', 'both \' "'], 'nested': {}}"#
        );
        assert_eq!(py("[]"), "[]");
        assert_eq!(py(r#""a\\b\nc\u0001é\u200b""#), r"'a\\b\nc\x01é\u200b'");
        assert_eq!(py("null"), "None");
        assert_eq!(
            py(r#"{"b": 1, "a": {"z": 1, "y": 2}}"#),
            "{'b': 1, 'a': {'z': 1, 'y': 2}}"
        );
        let args: Py = serde_json::from_str(r#"{"b": 1, "a": {"z": 1, "y": 2}}"#).unwrap();
        assert_eq!(sorted_args(Some(&args)), "{'a': {'z': 1, 'y': 2}, 'b': 1}");
        assert_eq!(sorted_args(Some(&Py::Dict(Vec::new()))), "{}");
        assert_eq!(sorted_args(None), "None");
    }

    #[test]
    fn floats_print_as_repr_float() {
        assert_eq!(float(1.0), "1.0");
        assert_eq!(float(-2.5), "-2.5");
        assert_eq!(float(0.1), "0.1");
        assert_eq!(float(1e16), "1e+16");
        assert_eq!(float(1.5e-5), "1.5e-05");
        assert_eq!(float(0.0001), "0.0001");
        assert_eq!(float(123456789012345.0), "123456789012345.0");
        assert_eq!(float(1e100), "1e+100");
        assert_eq!(py("2.0"), "2.0");
        assert_eq!(py("12345678901234567890"), "12345678901234567890");
    }
}
