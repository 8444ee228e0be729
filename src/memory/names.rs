//! Names typed by a person: matched exactly, and when one matches nothing, the valid ones listed
//! nearest first, so a typo is refused with the name that was meant.

/// How many valid names an error lists before it says how many more there are.
const LISTED: usize = 10;

/// A name that matched nothing: what kind of thing it names, what was typed, and the valid
/// names, nearest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    /// What the name names, with its scope: "session of memory base Support memory", "node".
    pub what: String,
    pub typed: String,
    /// Every valid name, nearest to `typed` first.
    pub valid: Vec<String>,
}

impl Unknown {
    /// `valid` is sorted nearest first here; the caller passes them in any order.
    pub fn new(
        what: impl Into<String>,
        typed: &str,
        valid: impl IntoIterator<Item = String>,
    ) -> Self {
        Unknown {
            what: what.into(),
            typed: typed.to_owned(),
            valid: nearest_first(typed, valid),
        }
    }

    /// Like [`Unknown::new`] for things known by several names (a node by its id and its
    /// title): each is listed as its label, ranked by whichever of its names is nearest.
    pub fn by_names(
        what: impl Into<String>,
        typed: &str,
        valid: impl IntoIterator<Item = (String, Vec<String>)>,
    ) -> Self {
        let typed_key = typed.trim().to_lowercase();
        let mut ranked: Vec<(usize, String)> = valid
            .into_iter()
            .map(|(label, names)| {
                let nearest = names
                    .iter()
                    .map(|name| strsim::levenshtein(&typed_key, &name.to_lowercase()))
                    .min()
                    .unwrap_or(usize::MAX);
                (nearest, label)
            })
            .collect();
        ranked.sort();
        Unknown {
            what: what.into(),
            typed: typed.to_owned(),
            valid: ranked.into_iter().map(|(_, label)| label).collect(),
        }
    }

    /// The valid name that differs from the typed one only by spaces, when there is one.
    pub fn spaced_twin(&self) -> Option<&str> {
        self.valid
            .iter()
            .find(|name| differs_only_by_spaces(&self.typed, name))
            .map(String::as_str)
    }
}

impl std::fmt::Display for Unknown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Unknown { what, typed, valid } = self;
        if let Some(twin) = self.spaced_twin() {
            return write!(
                f,
                "no {what} {typed:?}: {twin:?} differs from it only by spaces, and names match \
                 exactly"
            );
        }
        if valid.is_empty() {
            return write!(f, "no {what} {typed:?}, and there is none");
        }
        let listed: Vec<&str> = valid.iter().take(LISTED).map(String::as_str).collect();
        write!(
            f,
            "no {what} {typed:?}; valid, nearest first: {}",
            listed.join(", ")
        )?;
        if valid.len() > LISTED {
            write!(f, " … and {} more", valid.len() - LISTED)?;
        }
        Ok(())
    }
}

impl std::error::Error for Unknown {}

/// Whether two different names are the same once spaces are taken out.
pub fn differs_only_by_spaces(a: &str, b: &str) -> bool {
    let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    a != b && squeeze(a) == squeeze(b)
}

/// `names`, nearest to `typed` first (edit distance, case ignored), ties by name.
pub fn nearest_first(typed: &str, names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut names: Vec<String> = names.into_iter().collect();
    names.sort();
    names.dedup();
    let labelled = names.into_iter().map(|name| (name.clone(), vec![name]));
    Unknown::by_names("", typed, labelled).valid
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_nearest_name_comes_first() {
        let sorted = nearest_first("suport-ada", names(&["research-bo", "support-ada", "zed"]));
        assert_eq!(sorted, names(&["support-ada", "zed", "research-bo"]));
    }

    #[test]
    fn a_name_with_extra_spaces_is_refused_with_its_twin() {
        let unknown = Unknown::new(
            "session",
            "support-ada-0001 ",
            names(&["support-ada-0001", "x"]),
        );
        assert_eq!(unknown.spaced_twin(), Some("support-ada-0001"));
        assert!(unknown.to_string().contains("only by spaces"), "{unknown}");
        assert!(!differs_only_by_spaces("a", "a"));
    }

    #[test]
    fn the_message_lists_the_valid_names_and_counts_the_rest() {
        let many: Vec<String> = (0..12).map(|i| format!("n{i:02}")).collect();
        let text = Unknown::new("node", "nope", many).to_string();
        assert!(
            text.starts_with("no node \"nope\"; valid, nearest first: "),
            "{text}"
        );
        assert!(text.ends_with(" … and 2 more"), "{text}");
        let none = Unknown::new("job", "deadbeef", Vec::new()).to_string();
        assert_eq!(none, "no job \"deadbeef\", and there is none");
    }
}
