//! The configuration from files: the embedded default with the user's file laid over it key
//! by key, checked, and a problem placed at its line and column.

use std::path::{Path, PathBuf};

use super::error::ConfigError;
use super::sections::Config;

/// The documented default configuration, compiled in.
pub const DEFAULT_CONFIG: &str = include_str!("../../config.toml");

/// The accepted `ui.theme` values.
pub const THEMES: [&str; 2] = ["dark", "light"];

fn embedded() -> toml::Table {
    DEFAULT_CONFIG
        .parse()
        .expect("the embedded config.toml is valid TOML")
}

/// Parses the embedded default, then overlays `user_toml` key by key. A problem in the user's
/// file is reported with the file, line and column of the key at fault.
pub fn merge(user_toml: Option<(&Path, &str)>) -> Result<Config, ConfigError> {
    let mut merged = embedded();
    let Some((path, text)) = user_toml else {
        return checked(merged).map_err(|message| ConfigError::Invalid {
            path: PathBuf::from("<embedded config.toml>"),
            line_column: None,
            message,
        });
    };
    let invalid = |line_column, message| ConfigError::Invalid {
        path: path.to_path_buf(),
        line_column,
        message,
    };
    let user: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let place = e.span().map(|span| line_column(text, span.start));
        invalid(place, e.message().trim_end().to_owned())
    })?;
    overlay(&mut merged, user.clone());
    checked(merged).map_err(|message| {
        // The key at fault: the first user key that fails alone on the defaults, followed down
        // into its table as far as an entry fails alone, so a bad value inside
        // `[tokens.context_windows]` is placed on its own line, not on the table's header.
        for (key, value) in &user {
            let path = vec![key.clone()];
            if let Err(message) = alone(&path, value) {
                let (path, message) = deepest_fault(path, value, message);
                let keys: Vec<&str> = path.iter().map(String::as_str).collect();
                let place = key_offset(text, &keys).map(|at| line_column(text, at));
                return invalid(place, format!("`{}`: {message}", keys.join(".")));
            }
        }
        invalid(None, message)
    })
}

/// The check of the defaults with only `value` set at `path`.
fn alone(path: &[String], value: &toml::Value) -> Result<Config, String> {
    let mut single = value.clone();
    for key in path.iter().rev() {
        let mut table = toml::Table::new();
        table.insert(key.clone(), single);
        single = toml::Value::Table(table);
    }
    let mut merged = embedded();
    if let toml::Value::Table(single) = single {
        overlay(&mut merged, single);
    }
    checked(merged)
}

/// The deepest key under `path` that fails alone: a table that is accepted empty is at fault
/// through one of its entries; one refused even empty (an unknown section) is itself.
fn deepest_fault(path: Vec<String>, value: &toml::Value, message: String) -> (Vec<String>, String) {
    let toml::Value::Table(table) = value else {
        return (path, message);
    };
    if alone(&path, &toml::Value::Table(toml::Table::new())).is_err() {
        return (path, message);
    }
    for (key, entry) in table {
        let mut inner = path.clone();
        inner.push(key.clone());
        if let Err(message) = alone(&inner, entry) {
            return deepest_fault(inner, entry, message);
        }
    }
    (path, message)
}

/// The configuration a merged table describes, with the checks types cannot express.
fn checked(table: toml::Table) -> Result<Config, String> {
    let config: Config = table
        .try_into()
        .map_err(|e: toml::de::Error| e.message().trim_end().to_owned())?;
    if !THEMES.contains(&config.ui.theme.as_str()) {
        return Err(format!(
            "unknown theme {:?}; the themes are {}",
            config.ui.theme,
            THEMES.join(" and ")
        ));
    }
    Ok(config)
}

/// The byte offset of `section.key` (or a top-level key) in a TOML text.
fn key_offset(text: &str, key_path: &[&str]) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let document = DeTable::parse(text).ok()?;
    let mut table = document.get_ref();
    let mut found = None;
    for (depth, name) in key_path.iter().enumerate() {
        let (key, value) = table.iter().find(|(k, _)| k.get_ref() == name)?;
        found = Some(key.span().start);
        if depth + 1 < key_path.len() {
            match value.get_ref() {
                DeValue::Table(inner) => table = inner,
                _ => return found,
            }
        }
    }
    found
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

fn overlay(base: &mut toml::Table, top: toml::Table) {
    for (key, value) in top {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(base_table)), toml::Value::Table(top_table)) => {
                overlay(base_table, top_table)
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::sections::SummarizerKindConfig;

    #[test]
    fn embedded_default_parses_with_documented_values() {
        let config = merge(None).unwrap();
        assert_eq!(config.database.url, "");
        assert_eq!(config.tokens.budget, 2000);
        assert_eq!(config.tokens.counter, "openai");
        assert_eq!(config.history.message_limit, 0);
        assert_eq!(config.ui.theme, "dark");
        assert_eq!(config.summarizer.kind, SummarizerKindConfig::Extractive);
        assert_eq!(config.summarizer.default_prompt(), None);
        assert!(
            config.keys.contains_key("global"),
            "the keymap is documented in config.toml"
        );
    }

    #[test]
    fn a_user_key_binding_overlays_the_defaults() {
        let user = "[keys.global]\n\"x\" = { action = \"quit\", desc = \"leave\" }\n";
        let config = merge(Some((Path::new("u.toml"), user))).unwrap();
        let global = config.keys["global"].as_table().unwrap();
        assert!(global.contains_key("x"));
        assert!(global.contains_key("q"), "defaults stay");
    }

    #[test]
    fn user_file_overrides_only_the_keys_it_sets() {
        let config = merge(Some((Path::new("u.toml"), "[tokens]\nbudget = 4000\n"))).unwrap();
        assert_eq!(config.tokens.budget, 4000);
        assert_eq!(config.tokens.model, "gpt-4o");
    }

    #[test]
    fn the_summarizer_section_is_read_and_checked() {
        let user = "[summarizer]\nkind = \"chat-completions\"\nmodel = \"local-llm\"\n\
                    summarize_prompt = \"Keep names.\"\nmax_tokens = 64\n";
        let config = merge(Some((Path::new("u.toml"), user))).unwrap();
        assert_eq!(
            config.summarizer.kind,
            SummarizerKindConfig::ChatCompletions
        );
        assert_eq!(config.summarizer.model, "local-llm");
        assert_eq!(config.summarizer.default_prompt(), Some("Keep names."));
        assert_eq!(config.summarizer.max_tokens, 64);
        assert_eq!(config.summarizer.timeout_seconds, 60, "defaults stay");
        let err = merge(Some((
            Path::new("u.toml"),
            "[summarizer]\nkind = \"gpt\"\n",
        )))
        .unwrap_err();
        assert!(err.to_string().contains("gpt"), "{err}");
    }

    #[test]
    fn unknown_keys_and_bad_types_are_named() {
        let err = merge(Some((Path::new("u.toml"), "[tokens]\nbudgit = 1\n"))).unwrap_err();
        assert!(err.to_string().contains("budgit"), "{err}");
        let err = merge(Some((Path::new("u.toml"), "[tokens]\nbudget = \"x\"\n"))).unwrap_err();
        assert!(err.to_string().contains("u.toml"), "{err}");
        let err = merge(Some((Path::new("u.toml"), "not toml ["))).unwrap_err();
        assert!(matches!(err, ConfigError::Invalid { .. }));
    }

    #[test]
    fn config_errors_name_the_file_line_and_column() {
        let user = "[tokens]\nmodel = \"gpt-4o\"\nbudget = \"x\"\n";
        let err = merge(Some((Path::new("/home/u/c.toml"), user))).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("config file /home/u/c.toml, line 3, column 1: `tokens.budget`"),
            "{text}"
        );
        let err = merge(Some((Path::new("c.toml"), "[tokens]\nbudget = = 1\n"))).unwrap_err();
        assert!(err.to_string().contains("line 2, column"), "{err}");
        let err = merge(Some((Path::new("c.toml"), "\n[tokens]\n  budgit = 1\n"))).unwrap_err();
        assert!(
            err.to_string().contains("line 3, column 3") && err.to_string().contains("budgit"),
            "{err}"
        );
    }

    #[test]
    fn an_unknown_theme_is_an_error_naming_the_themes() {
        let err = merge(Some((Path::new("c.toml"), "[ui]\ntheme = \"solarized\"\n"))).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("line 2, column 1"), "{text}");
        assert!(
            text.contains("solarized") && text.contains("dark and light"),
            "{text}"
        );
        assert_eq!(
            merge(Some((Path::new("c.toml"), "[ui]\ntheme = \"light\"\n")))
                .unwrap()
                .ui
                .theme,
            "light"
        );
    }
}
