//! Colours: a dark and a light theme, and a monochrome one for `NO_COLOR` that relies on
//! bold, reverse and underline alone.

use ratatui::style::{Color, Modifier, Style};

/// Environment variable choosing the theme: `dark` (default) or `light`.
pub const THEME_ENV: &str = "MEMSCOPE_THEME";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub text: Style,
    pub dim: Style,
    pub title: Style,
    pub selected: Style,
    /// Rows of the marked thread.
    pub thread: Style,
    pub ok: Style,
    pub warning: Style,
    pub error: Style,
    pub badge: Style,
    pub gauge: Style,
}

impl Theme {
    pub fn dark() -> Theme {
        Theme {
            text: Style::new().fg(Color::Gray),
            dim: Style::new().fg(Color::DarkGray),
            title: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            selected: Style::new().bg(Color::Blue).fg(Color::White),
            thread: Style::new().fg(Color::LightGreen),
            ok: Style::new().fg(Color::Green),
            warning: Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            error: Style::new()
                .fg(Color::LightRed)
                .add_modifier(Modifier::BOLD),
            badge: Style::new().bg(Color::Magenta).fg(Color::White),
            gauge: Style::new().fg(Color::Cyan),
        }
    }

    pub fn light() -> Theme {
        Theme {
            text: Style::new().fg(Color::Black),
            dim: Style::new().fg(Color::DarkGray),
            title: Style::new().fg(Color::Blue).add_modifier(Modifier::BOLD),
            selected: Style::new().bg(Color::LightBlue).fg(Color::Black),
            thread: Style::new().fg(Color::Green).add_modifier(Modifier::BOLD),
            ok: Style::new().fg(Color::Green),
            warning: Style::new()
                .fg(Color::Rgb(150, 90, 0))
                .add_modifier(Modifier::BOLD),
            error: Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            badge: Style::new().bg(Color::Magenta).fg(Color::White),
            gauge: Style::new().fg(Color::Blue),
        }
    }

    /// No colour at all (<https://no-color.org>).
    pub fn monochrome() -> Theme {
        let plain = Style::new();
        Theme {
            text: plain,
            dim: plain,
            title: plain.add_modifier(Modifier::BOLD),
            selected: plain.add_modifier(Modifier::REVERSED),
            thread: plain.add_modifier(Modifier::BOLD),
            ok: plain,
            warning: plain.add_modifier(Modifier::BOLD),
            error: plain.add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            badge: plain.add_modifier(Modifier::REVERSED),
            gauge: plain,
        }
    }

    /// `NO_COLOR` (any non-empty value) wins; otherwise `MEMSCOPE_THEME`, else `configured`
    /// (the config's `ui.theme`).
    pub fn from_env(configured: &str) -> Theme {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let name = std::env::var(THEME_ENV).unwrap_or_else(|_| configured.to_owned());
        Theme::choose(no_color, Some(&name))
    }

    pub fn choose(no_color: bool, name: Option<&str>) -> Theme {
        match (no_color, name) {
            (true, _) => Theme::monochrome(),
            (false, Some("light")) => Theme::light(),
            _ => Theme::dark(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_uses_no_colour_whatever_the_theme() {
        let theme = Theme::choose(true, Some("light"));
        for style in [
            theme.text,
            theme.selected,
            theme.error,
            theme.thread,
            theme.badge,
        ] {
            assert_eq!(style.fg, None);
            assert_eq!(style.bg, None);
        }
        assert_ne!(theme.selected, theme.text, "selection stays visible");
    }

    #[test]
    fn light_is_chosen_by_name_and_dark_is_the_default() {
        assert_eq!(Theme::choose(false, Some("light")), Theme::light());
        assert_eq!(Theme::choose(false, None), Theme::dark());
        assert_eq!(Theme::choose(false, Some("solarized")), Theme::dark());
    }
}
