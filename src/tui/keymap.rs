//! The keymap: key chords to actions per context, each binding with a description. The help
//! popup and the hint bar are generated from it, so they never disagree with what keys do.
//!
//! The text is a `[keys]` table of `config.toml`; [`DEFAULT_KEYS`] is the built-in one, and a
//! user table overrides it key by key (an action of `"none"` unbinds a key).

use std::collections::BTreeMap;
use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde::Deserialize;

use super::action::Action;

/// The built-in keymap: the `[keys]` tables of the embedded `config.toml`.
pub const DEFAULT_KEYS: &str = crate::config::DEFAULT_CONFIG;

/// Where a binding applies. Global bindings apply everywhere unless the screen's own context
/// binds the same key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyContext {
    Global,
    /// The budget keys every view with a budget panel shares: the base those views' contexts
    /// layer over, never the context of a screen itself.
    Budget,
    /// The keys every conversation list shares, whatever the source: the base the three lists'
    /// contexts layer over, never the context of a screen itself.
    List,
    /// The list of a database whose conversations are regeneration trees (a layer over
    /// [`KeyContext::List`]).
    Conversations,
    Conversation,
    /// The list of a database whose conversations are sessions or threads (a layer over
    /// [`KeyContext::List`]).
    Sessions,
    /// The list of a LangGraph database's threads (a layer over [`KeyContext::Sessions`]).
    Threads,
    /// What an open session and an open thread share: the base of the two layers below.
    Session,
    /// An open Langflow session (a layer over [`KeyContext::Session`]).
    FlowSession,
    /// An open LangGraph thread's messages (a layer over [`KeyContext::Session`]).
    Thread,
    Nodes,
    ChatMemories,
    MemoryBases,
    /// The sync jobs popup.
    Jobs,
    /// A confirmation popup.
    Confirm,
    TrimPreview,
    Form,
    /// The help popup.
    Help,
    /// A value shown whole (enter on a message, ! for the warnings).
    Detail,
    /// The doctor view: its scan, then its findings.
    Doctor,
    /// A LangGraph thread's checkpoint tree.
    Checkpoints,
    /// An open session's tree, where it is not a checkpoint tree.
    Tree,
    /// The plan of a checkpoint prune waiting for yes or no (a layer over
    /// [`KeyContext::Confirm`]).
    Prune,
}

/// Contexts that add to another, as `(layer, base)`: a layer takes every key of its base it
/// does not bind itself, so what differs by database shape is written once, in the layer, and
/// a user's change to the base reaches every layer.
/// A base comes before the layers over a layer of it.
const LAYERS: [(KeyContext, KeyContext); 10] = [
    (KeyContext::Conversations, KeyContext::List),
    (KeyContext::Sessions, KeyContext::List),
    (KeyContext::Conversation, KeyContext::Budget),
    (KeyContext::Session, KeyContext::Budget),
    (KeyContext::Nodes, KeyContext::Budget),
    (KeyContext::Checkpoints, KeyContext::Budget),
    (KeyContext::Threads, KeyContext::Sessions),
    (KeyContext::FlowSession, KeyContext::Session),
    (KeyContext::Thread, KeyContext::Session),
    (KeyContext::Prune, KeyContext::Confirm),
];

impl KeyContext {
    pub fn title(self) -> &'static str {
        match self {
            KeyContext::Global => "Everywhere",
            KeyContext::Budget => "Budget",
            KeyContext::List => "Every list",
            KeyContext::Conversations => "Conversation list",
            KeyContext::Conversation => "Conversation",
            KeyContext::Sessions => "Session list",
            KeyContext::Threads => "Thread list",
            KeyContext::Session | KeyContext::FlowSession => "Session",
            KeyContext::Thread => "Thread",
            KeyContext::Nodes => "Nodes pane",
            KeyContext::ChatMemories => "Chat memories",
            KeyContext::MemoryBases => "Memory bases",
            KeyContext::Jobs => "Jobs popup",
            KeyContext::TrimPreview => "Trim preview",
            KeyContext::Confirm => "Confirmation",
            KeyContext::Form => "Form",
            KeyContext::Help => "Help",
            KeyContext::Detail => "Detail popup",
            KeyContext::Doctor => "Doctor",
            KeyContext::Checkpoints => "Checkpoint tree",
            KeyContext::Tree => "Tree",
            KeyContext::Prune => "Prune",
        }
    }

    /// Popups own the keyboard: of the global bindings only moving, closing and help reach
    /// them, so `q` or a tab key typed into a confirmation never acts behind it.
    pub fn is_popup(self) -> bool {
        matches!(
            self,
            KeyContext::Jobs
                | KeyContext::Confirm
                | KeyContext::Prune
                | KeyContext::TrimPreview
                | KeyContext::Form
                | KeyContext::Help
                | KeyContext::Detail
        )
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeymapError {
    #[error("[keys] is not valid: {0}")]
    Invalid(String),
    #[error("[keys.{context}] \"{key}\": {problem}")]
    BadKey {
        context: String,
        key: String,
        problem: String,
    },
}

/// One key with its modifiers. Shift is folded into the character for printable keys, so `G`
/// matches whatever the terminal reports for shift-g.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyChord {
    code: ChordCode,
    ctrl: bool,
    alt: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum ChordCode {
    Char(char),
    Named(NamedKey),
    F(u8),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum NamedKey {
    Esc,
    Enter,
    Tab,
    BackTab,
    Backspace,
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    Home,
    End,
    Space,
}

const NAMED_KEYS: [(&str, NamedKey); 14] = [
    ("esc", NamedKey::Esc),
    ("enter", NamedKey::Enter),
    ("tab", NamedKey::Tab),
    ("backtab", NamedKey::BackTab),
    ("backspace", NamedKey::Backspace),
    ("up", NamedKey::Up),
    ("down", NamedKey::Down),
    ("left", NamedKey::Left),
    ("right", NamedKey::Right),
    ("pageup", NamedKey::PageUp),
    ("pagedown", NamedKey::PageDown),
    ("home", NamedKey::Home),
    ("end", NamedKey::End),
    ("space", NamedKey::Space),
];

impl KeyChord {
    /// Parses `q`, `G`, `?`, `ctrl-c`, `alt-x`, `esc`, `pagedown`, `f1`.
    pub fn parse(text: &str) -> Result<KeyChord, String> {
        let mut ctrl = false;
        let mut alt = false;
        let mut rest = text;
        loop {
            if let Some(after) = rest.strip_prefix("ctrl-").filter(|r| !r.is_empty()) {
                ctrl = true;
                rest = after;
            } else if let Some(after) = rest.strip_prefix("alt-").filter(|r| !r.is_empty()) {
                alt = true;
                rest = after;
            } else {
                break;
            }
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => ChordCode::Char(c),
            (None, _) => return Err("empty key".to_owned()),
            _ => {
                let lower = rest.to_ascii_lowercase();
                if let Some((_, named)) = NAMED_KEYS.iter().find(|(name, _)| *name == lower) {
                    ChordCode::Named(*named)
                } else if let Some(n) = lower
                    .strip_prefix('f')
                    .and_then(|n| n.parse::<u8>().ok())
                    .filter(|n| (1..=24).contains(n))
                {
                    ChordCode::F(n)
                } else {
                    return Err(format!("unknown key name {rest:?}"));
                }
            }
        };
        Ok(KeyChord { code, ctrl, alt })
    }

    /// The chord a terminal key event stands for; `None` for keys no binding can name.
    pub fn from_event(event: &KeyEvent) -> Option<KeyChord> {
        let code = match event.code {
            KeyCode::Char(' ') => ChordCode::Named(NamedKey::Space),
            KeyCode::Char(c) => ChordCode::Char(c),
            KeyCode::Esc => ChordCode::Named(NamedKey::Esc),
            KeyCode::Enter => ChordCode::Named(NamedKey::Enter),
            KeyCode::Tab => ChordCode::Named(NamedKey::Tab),
            KeyCode::BackTab => ChordCode::Named(NamedKey::BackTab),
            KeyCode::Backspace => ChordCode::Named(NamedKey::Backspace),
            KeyCode::Up => ChordCode::Named(NamedKey::Up),
            KeyCode::Down => ChordCode::Named(NamedKey::Down),
            KeyCode::Left => ChordCode::Named(NamedKey::Left),
            KeyCode::Right => ChordCode::Named(NamedKey::Right),
            KeyCode::PageUp => ChordCode::Named(NamedKey::PageUp),
            KeyCode::PageDown => ChordCode::Named(NamedKey::PageDown),
            KeyCode::Home => ChordCode::Named(NamedKey::Home),
            KeyCode::End => ChordCode::Named(NamedKey::End),
            KeyCode::F(n) => ChordCode::F(n),
            _ => return None,
        };
        Some(KeyChord {
            code,
            ctrl: event.modifiers.contains(KeyModifiers::CONTROL),
            alt: event.modifiers.contains(KeyModifiers::ALT),
        })
    }
}

impl fmt::Display for KeyChord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("ctrl-")?;
        }
        if self.alt {
            f.write_str("alt-")?;
        }
        match self.code {
            ChordCode::Char(c) => write!(f, "{c}"),
            ChordCode::F(n) => write!(f, "f{n}"),
            ChordCode::Named(named) => {
                let name = NAMED_KEYS
                    .iter()
                    .find(|(_, k)| *k == named)
                    .map_or("?", |(name, _)| name);
                f.write_str(name)
            }
        }
    }
}

/// Hint entries: the keys (joined) and what they do.
pub type Hints<'a> = Vec<(String, &'a str)>;

/// One key bound to an action, with what the help says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub context: KeyContext,
    pub key: KeyChord,
    pub action: Action,
    pub description: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct BindingEntry {
    action: String,
    desc: Option<String>,
}

/// The bindings in effect, sorted by context then action order then key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    bindings: Vec<Binding>,
}

impl Keymap {
    /// The built-in keymap.
    pub fn default_keys() -> Keymap {
        Keymap::from_toml(DEFAULT_KEYS, None).expect("the built-in keymap is valid")
    }

    /// Parses the `[keys]` table of `base` (TOML text) and overlays `user`, the contents of a
    /// user's `[keys]` table, key by key.
    pub fn from_toml(base: &str, user: Option<&toml::Table>) -> Result<Keymap, KeymapError> {
        let invalid = |e: toml::de::Error| KeymapError::Invalid(e.message().to_owned());
        let mut base: toml::Table = toml::from_str(base).map_err(invalid)?;
        let base_keys = match base.remove("keys") {
            Some(toml::Value::Table(keys)) => keys,
            _ => return Err(KeymapError::Invalid("no [keys] table".to_owned())),
        };
        let mut entries: BTreeMap<(KeyContext, KeyChord), BindingEntry> = BTreeMap::new();
        for keys in std::iter::once(base_keys).chain(user.cloned()) {
            let by_context: BTreeMap<KeyContext, BTreeMap<String, BindingEntry>> =
                keys.try_into().map_err(invalid)?;
            for (context, keys) in by_context {
                for (key_text, entry) in keys {
                    let key =
                        KeyChord::parse(&key_text).map_err(|problem| KeymapError::BadKey {
                            context: format!("{context:?}").to_lowercase(),
                            key: key_text.clone(),
                            problem,
                        })?;
                    entries.insert((context, key), entry);
                }
            }
        }
        for (layer, base) in LAYERS {
            let inherited: Vec<(KeyChord, BindingEntry)> = entries
                .iter()
                .filter(|((context, _), _)| *context == base)
                .map(|((_, key), entry)| (*key, entry.clone()))
                .collect();
            for (key, entry) in inherited {
                entries.entry((layer, key)).or_insert(entry);
            }
        }
        let mut bindings = Vec::with_capacity(entries.len());
        for ((context, key), entry) in entries {
            if entry.action == "none" {
                continue;
            }
            let action: Action =
                serde::de::Deserialize::deserialize(serde::de::value::StrDeserializer::<
                    serde::de::value::Error,
                >::new(&entry.action))
                .map_err(|_| KeymapError::BadKey {
                    context: format!("{context:?}").to_lowercase(),
                    key: key.to_string(),
                    problem: format!("unknown action {:?}", entry.action),
                })?;
            let description = entry
                .desc
                .unwrap_or_else(|| action.default_description().to_owned());
            bindings.push(Binding {
                context,
                key,
                action,
                description,
            });
        }
        bindings.sort_by_key(|b| (b.context, action_rank(b.action), b.key));
        Ok(Keymap { bindings })
    }

    /// The action a key triggers in `context`, the screen's own bindings first.
    pub fn lookup(&self, context: KeyContext, key: KeyChord) -> Option<Action> {
        let find = |ctx: KeyContext| {
            self.bindings
                .iter()
                .find(|b| b.context == ctx && b.key == key)
                .map(|b| b.action)
        };
        find(context).or_else(|| {
            find(KeyContext::Global).filter(|a| !context.is_popup() || a.works_in_popups())
        })
    }

    pub fn bindings(&self) -> &[Binding] {
        &self.bindings
    }

    /// One entry per action of `context` (its keys joined), for the hint bar and the help.
    pub fn grouped(&self, context: KeyContext) -> Vec<(String, &str)> {
        self.grouped_where(context, |_| true)
    }

    /// [`Keymap::grouped`] without the actions the open database refuses (`offered` says
    /// which it takes), so no key is offered that can only be refused.
    pub fn grouped_offered(
        &self,
        context: KeyContext,
        offered: impl Fn(Action) -> bool,
    ) -> Vec<(String, &str)> {
        self.grouped_where(context, |binding| offered(binding.action))
    }

    fn grouped_where(
        &self,
        context: KeyContext,
        keep: impl Fn(&Binding) -> bool,
    ) -> Vec<(String, &str)> {
        let mut groups: Vec<(String, &str)> = Vec::new();
        let mut last_action = None;
        for binding in self
            .bindings
            .iter()
            .filter(|b| b.context == context && keep(b))
        {
            if last_action == Some(binding.action) {
                if let Some((keys, _)) = groups.last_mut() {
                    keys.push('/');
                    keys.push_str(&binding.key.to_string());
                }
            } else {
                groups.push((binding.key.to_string(), &binding.description));
                last_action = Some(binding.action);
            }
        }
        groups
    }

    /// The first key bound to `action` in `context` or globally, to name it in messages.
    pub fn key_for(&self, context: KeyContext, action: Action) -> Option<KeyChord> {
        [context, KeyContext::Global].into_iter().find_map(|ctx| {
            self.bindings
                .iter()
                .find(|b| b.context == ctx && b.action == action)
                .map(|b| b.key)
        })
    }

    /// The hint bar's entries for `context`: its own keys, and the global ones that apply
    /// there (a popup: only closing and help).
    pub fn hints(&self, context: KeyContext) -> (Hints<'_>, Hints<'_>) {
        self.hints_offered(context, |_| true)
    }

    /// [`Keymap::hints`] without the actions the open database refuses.
    pub fn hints_offered(
        &self,
        context: KeyContext,
        offered: impl Fn(Action) -> bool,
    ) -> (Hints<'_>, Hints<'_>) {
        // A screen names quit and help (the help lists the rest); a popup its way out and help.
        let wanted = |action: Action| {
            if context.is_popup() {
                matches!(action, Action::Back | Action::ToggleHelp)
            } else {
                matches!(action, Action::ToggleHelp | Action::Quit)
            }
        };
        let own: Vec<Action> = self
            .bindings
            .iter()
            .filter(|b| b.context == context)
            .map(|b| b.action)
            .collect();
        // One key each, the shortest, never one the context binds to something else: the bar
        // is for reminders, the help for every key.
        let shadowed = |key: KeyChord| {
            self.bindings
                .iter()
                .any(|b| b.context == context && b.key == key)
        };
        let globals = self
            .grouped_where(KeyContext::Global, |binding| {
                wanted(binding.action) && !own.contains(&binding.action) && !shadowed(binding.key)
            })
            .into_iter()
            .map(|(keys, desc)| {
                let shortest = keys
                    .split('/')
                    .filter(|k| !k.is_empty())
                    .min_by_key(|k| k.chars().count())
                    .unwrap_or(&keys)
                    .to_owned();
                (shortest, desc)
            })
            .collect();
        (self.grouped_offered(context, offered), globals)
    }
}

fn action_rank(action: Action) -> usize {
    Action::ALL
        .iter()
        .position(|a| *a == action)
        .unwrap_or(usize::MAX)
}

#[cfg(test)]
#[path = "keymap_tests.rs"]
mod tests;
