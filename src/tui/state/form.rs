//! A small form as plain data: up/down choose a field, left/right step it (or move the cursor
//! in a text), typing edits numbers and text. The trim preview's policy form, the chat memory
//! forms and the memory-base forms are all one of these.

use tui_input::{Input, InputRequest};

/// A text field's value and cursor: tui-input's editing (insert and delete at the cursor, move
/// it), compared by value and cursor.
#[derive(Debug, Clone, Default)]
pub struct TextInput(Input);

impl TextInput {
    /// `value` with the cursor after it.
    pub fn new(value: impl Into<String>) -> TextInput {
        TextInput(Input::new(value.into()))
    }

    pub fn value(&self) -> &str {
        self.0.value()
    }

    /// The cursor, in characters from the start.
    pub fn cursor(&self) -> usize {
        self.0.cursor()
    }

    fn handle(&mut self, request: InputRequest) {
        self.0.handle(request);
    }
}

impl PartialEq for TextInput {
    fn eq(&self, other: &TextInput) -> bool {
        self.value() == other.value() && self.cursor() == other.cursor()
    }
}

impl Eq for TextInput {}

/// What a field holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldValue {
    /// One of `options` (left/right cycle).
    Choice {
        options: Vec<&'static str>,
        index: usize,
    },
    Toggle(bool),
    /// Left/right add or take `step`; digits type, backspace removes the last digit.
    Number {
        value: u64,
        step: u64,
    },
    Text(TextInput),
}

impl FieldValue {
    pub fn choice(options: &[&'static str], selected: &str) -> FieldValue {
        FieldValue::Choice {
            index: options.iter().position(|o| *o == selected).unwrap_or(0),
            options: options.to_vec(),
        }
    }

    pub fn number(value: u64, step: u64) -> FieldValue {
        FieldValue::Number { value, step }
    }

    /// A text field holding `value`, the cursor after it.
    pub fn text(value: impl Into<String>) -> FieldValue {
        FieldValue::Text(TextInput::new(value))
    }

    /// Left (`-1`) or right (`+1`).
    pub fn step(&mut self, direction: i64) {
        match self {
            FieldValue::Choice { options, index } => {
                let len = options.len().max(1) as i64;
                *index = (*index as i64 + direction).rem_euclid(len) as usize;
            }
            FieldValue::Toggle(on) => *on = !*on,
            FieldValue::Number { value, step } => {
                *value = if direction < 0 {
                    value.saturating_sub(*step)
                } else {
                    value.saturating_add(*step)
                };
            }
            FieldValue::Text(text) => text.handle(if direction < 0 {
                InputRequest::GoToPrevChar
            } else {
                InputRequest::GoToNextChar
            }),
        }
    }

    /// Types `c`; `false` when this field takes no such character (the key is then a command).
    pub fn type_char(&mut self, c: char) -> bool {
        match self {
            FieldValue::Number { value, .. } => match c.to_digit(10) {
                Some(digit) => {
                    *value = value
                        .checked_mul(10)
                        .and_then(|v| v.checked_add(u64::from(digit)))
                        .unwrap_or(*value);
                    true
                }
                None => false,
            },
            FieldValue::Text(text) => {
                text.handle(InputRequest::InsertChar(c));
                true
            }
            FieldValue::Choice { .. } | FieldValue::Toggle(_) => false,
        }
    }

    /// Removes the last digit or character; `false` when the field is not typed into.
    pub fn backspace(&mut self) -> bool {
        match self {
            FieldValue::Number { value, .. } => {
                *value /= 10;
                true
            }
            FieldValue::Text(text) => {
                text.handle(InputRequest::DeletePrevChar);
                true
            }
            FieldValue::Choice { .. } | FieldValue::Toggle(_) => false,
        }
    }

    pub fn display(&self) -> String {
        match self {
            FieldValue::Choice { options, index } => {
                options.get(*index).copied().unwrap_or("").to_owned()
            }
            FieldValue::Toggle(on) => if *on { "on" } else { "off" }.to_owned(),
            FieldValue::Number { value, .. } => value.to_string(),
            FieldValue::Text(text) => text.value().to_owned(),
        }
    }

    /// Whether left/right change it (they do not for text).
    pub fn steps(&self) -> bool {
        !matches!(self, FieldValue::Text(_))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// What code reads it by.
    pub key: &'static str,
    pub label: &'static str,
    pub value: FieldValue,
    /// Hidden fields keep their value but are skipped and not drawn.
    pub visible: bool,
}

impl Field {
    pub fn new(key: &'static str, label: &'static str, value: FieldValue) -> Field {
        Field {
            key,
            label,
            value,
            visible: true,
        }
    }
}

/// Fields with a focus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    pub fields: Vec<Field>,
    pub focused: usize,
}

impl Form {
    pub fn new(fields: Vec<Field>) -> Form {
        Form { fields, focused: 0 }
    }

    pub fn field(&self, key: &str) -> Option<&FieldValue> {
        self.fields.iter().find(|f| f.key == key).map(|f| &f.value)
    }

    pub fn set_visible(&mut self, key: &str, visible: bool) {
        if let Some(field) = self.fields.iter_mut().find(|f| f.key == key) {
            field.visible = visible;
        }
    }

    /// The focused field's key.
    pub fn focused_key(&self) -> Option<&'static str> {
        self.fields.get(self.focused).map(|f| f.key)
    }

    pub fn focused_value(&mut self) -> Option<&mut FieldValue> {
        self.fields.get_mut(self.focused).map(|f| &mut f.value)
    }

    /// Moves the focus to the next (`+1`) or previous (`-1`) visible field, staying put at the
    /// ends; then (or with `0`) onto a visible field if the focused one was hidden.
    pub fn move_focus(&mut self, direction: isize) {
        let mut at = self.focused;
        if direction != 0 {
            while let Some(next) = at
                .checked_add_signed(direction)
                .filter(|n| *n < self.fields.len())
            {
                at = next;
                if self.fields[at].visible {
                    self.focused = at;
                    return;
                }
            }
        }
        if !self.fields.get(self.focused).is_some_and(|f| f.visible) {
            self.focused = self.fields.iter().position(|f| f.visible).unwrap_or(0);
        }
    }

    pub fn choice(&self, key: &str) -> &'static str {
        match self.field(key) {
            Some(FieldValue::Choice { options, index }) => {
                options.get(*index).copied().unwrap_or("")
            }
            _ => "",
        }
    }

    pub fn toggle(&self, key: &str) -> bool {
        matches!(self.field(key), Some(FieldValue::Toggle(true)))
    }

    pub fn number(&self, key: &str) -> u64 {
        match self.field(key) {
            Some(FieldValue::Number { value, .. }) => *value,
            _ => 0,
        }
    }

    pub fn text(&self, key: &str) -> &str {
        match self.field(key) {
            Some(FieldValue::Text(text)) => text.value(),
            _ => "",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> Form {
        Form::new(vec![
            Field::new("a", "A", FieldValue::choice(&["x", "y", "z"], "y")),
            Field::new("b", "B", FieldValue::number(20, 5)),
            Field::new("c", "C", FieldValue::Toggle(false)),
            Field::new("d", "D", FieldValue::text("")),
        ])
    }

    #[test]
    fn fields_step_type_and_skip_hidden_ones() {
        let mut form = form();
        form.focused_value().unwrap().step(1);
        assert_eq!(form.choice("a"), "z");
        form.focused_value().unwrap().step(1);
        assert_eq!(form.choice("a"), "x", "choices wrap");
        assert!(!form.focused_value().unwrap().type_char('7'));
        form.set_visible("b", false);
        form.move_focus(1);
        assert_eq!(form.focused_key(), Some("c"), "hidden fields are skipped");
        form.focused_value().unwrap().step(-1);
        assert!(form.toggle("c"));
        form.move_focus(1);
        form.move_focus(1);
        assert_eq!(
            form.focused_key(),
            Some("d"),
            "the last field stays focused"
        );
        assert!(form.focused_value().unwrap().type_char('q'));
        assert_eq!(form.text("d"), "q");
        form.set_visible("b", true);
        form.focused = 1;
        let value = form.focused_value().unwrap();
        value.step(-1);
        assert!(value.backspace());
        assert!(value.type_char('4'));
        assert_eq!(form.number("b"), 14);
        form.set_visible("b", false);
        form.move_focus(-1);
        assert_eq!(form.focused_key(), Some("a"));
    }

    #[test]
    fn text_fields_edit_at_the_cursor() {
        let mut value = FieldValue::text("abc");
        value.step(-1);
        value.step(-1);
        assert!(value.type_char('X'));
        assert_eq!(value.display(), "aXbc");
        assert!(value.backspace());
        assert_eq!(value.display(), "abc");
        value.step(1);
        value.step(1);
        value.step(1);
        assert!(value.type_char('!'));
        assert_eq!(value.display(), "abc!", "the cursor stops at the end");
    }
}
