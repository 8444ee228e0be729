//! The import graph of a source tree: which file names which (see the crate's doc comment).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;

/// Files by their path (`src/a/b.rs`), each with its module path and the files it names.
pub struct Graph {
    pub edges: BTreeMap<String, BTreeSet<String>>,
}

/// A module's path from the crate root: `["memory", "tokens"]`; the crate itself is empty.
type ModulePath = Vec<String>;

/// Builds the graph of `files` (path under `root`, source), as `root/...` paths.
pub fn graph(root: &str, files: &[(String, String)]) -> Graph {
    let mut module_of: BTreeMap<String, ModulePath> = BTreeMap::new();
    for (path, _) in files {
        if let Some(module) = module_of_path(root, path) {
            module_of.insert(path.clone(), module);
        }
    }
    // Files a `#[path]` attribute declares are the module it declares them as.
    let declared = module_of.clone();
    for (path, source) in files {
        let Some(module) = declared.get(path) else {
            continue;
        };
        for (target, name) in path_attributes(source) {
            let target = format!("{}/{target}", parent_dir(path));
            if let Some(entry) = module_of.get_mut(&target) {
                *entry = module.iter().cloned().chain([name]).collect();
            }
        }
    }
    let files_of: HashMap<ModulePath, String> = module_of
        .iter()
        .map(|(path, module)| (module.clone(), path.clone()))
        .collect();
    let resolver = Resolver { files_of };
    let mut edges = BTreeMap::new();
    for (path, source) in files {
        let Some(module) = module_of.get(path) else {
            continue;
        };
        let mut targets = BTreeSet::new();
        for (depth, text) in chunks(&strip(source)) {
            let named = use_paths(&text).into_iter().chain(paths(&text));
            for segments in named {
                if let Some(target) = resolver.resolve(module, &segments, depth)
                    && target != path
                {
                    targets.insert(target.clone());
                }
            }
        }
        edges.insert(path.clone(), targets);
    }
    Graph { edges }
}

/// The module of a file under `root`: `None` for the binary's `main.rs`.
fn module_of_path(root: &str, path: &str) -> Option<ModulePath> {
    let relative = path.strip_prefix(root)?.trim_start_matches('/');
    let relative = relative.strip_suffix(".rs")?;
    let mut parts: ModulePath = relative.split('/').map(str::to_owned).collect();
    match parts.as_slice() {
        [only] if only == "main" => None,
        [only] if only == "lib" => Some(Vec::new()),
        [.., last] if last == "mod" => {
            parts.pop();
            Some(parts)
        }
        _ => Some(parts),
    }
}

fn parent_dir(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

/// Each `#[path = "file"] mod name` of a source (visibility allowed): (file, name).
fn path_attributes(source: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = source;
    while let Some(start) = rest.find("#[path") {
        rest = &rest[start + "#[path".len()..];
        let mut cursor = Cursor(rest);
        cursor.spaces();
        if !cursor.eat("=") {
            continue;
        }
        cursor.spaces();
        if !cursor.eat("\"") {
            continue;
        }
        let Some(end) = cursor.0.find('"') else {
            continue;
        };
        let file = &cursor.0[..end];
        cursor.0 = &cursor.0[end + 1..];
        if file.is_empty() || !cursor.eat("]") {
            continue;
        }
        cursor.spaces();
        if cursor.eat("pub") {
            if cursor.0.starts_with('(') {
                let Some(close) = cursor.0.find(')') else {
                    continue;
                };
                cursor.0 = &cursor.0[close + 1..];
            }
            if !cursor.spaces() {
                continue;
            }
        }
        if !cursor.eat("mod") || !cursor.spaces() {
            continue;
        }
        let name = cursor.word();
        if !name.is_empty() {
            found.push((file.to_owned(), name.to_owned()));
        }
    }
    found
}

/// A position in a text, for the few patterns the graph reads.
struct Cursor<'a>(&'a str);

impl<'a> Cursor<'a> {
    /// Skips whitespace; whether there was any.
    fn spaces(&mut self) -> bool {
        let rest = self.0.trim_start();
        let skipped = rest.len() != self.0.len();
        self.0 = rest;
        skipped
    }

    fn eat(&mut self, text: &str) -> bool {
        match self.0.strip_prefix(text) {
            Some(rest) => {
                self.0 = rest;
                true
            }
            None => false,
        }
    }

    /// The identifier characters at the cursor.
    fn word(&mut self) -> &'a str {
        let end = self.0.find(|c: char| !is_word(c)).unwrap_or(self.0.len());
        let (word, rest) = self.0.split_at(end);
        self.0 = rest;
        word
    }
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The source without comments, with every string and character literal emptied (`""`), and
/// its lines where they were.
fn strip(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    // Keeps the line breaks of what is dropped, so lines stay lines.
    let newlines = |out: &mut String, dropped: &[char]| {
        out.extend(dropped.iter().filter(|&&c| c == '\n'));
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let prev_word = i > 0 && is_word(chars[i - 1]);
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let start = i;
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            newlines(&mut out, &chars[start..i.min(chars.len())]);
        } else if let Some(after) = raw_string_start(&chars, i).filter(|_| !prev_word) {
            // r"…", r#"…"#, br"…": ends at the quote followed by as many `#`.
            let hashes = after - i - usize::from(c == 'b') - 2;
            let start = i;
            i = after;
            while i < chars.len() {
                if chars[i] == '"'
                    && chars[i + 1..].iter().take_while(|&&h| h == '#').count() >= hashes
                {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
            out.push_str("\"\"");
            newlines(&mut out, &chars[start..i.min(chars.len())]);
        } else if c == '"' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
            newlines(&mut out, &chars[start..i.min(chars.len())]);
        } else if c == '\'' && next == Some('\\') {
            // An escaped character literal: '\n', '\'', '\u{1F600}'.
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("''");
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
            out.push_str("''");
        } else {
            // Code, a lifetime or a label.
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Where a raw string's text starts when one opens at `i` (`r"`, `r#"`, `br"`).
fn raw_string_start(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    if chars[j] == 'b' {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    while chars.get(j) == Some(&'#') {
        j += 1;
    }
    (chars.get(j) == Some(&'"')).then_some(j + 1)
}

/// The text in runs of whole lines, each with how many inline `mod x { … }` blocks it is in.
/// A block's `mod x {` line is in the block.
fn chunks(text: &str) -> Vec<(usize, String)> {
    let mut chunks = Vec::new();
    let mut opened_at: Vec<i64> = Vec::new();
    let mut braces: i64 = 0;
    let mut lines: Vec<&str> = Vec::new();
    for line in text.split('\n') {
        if opens_inline_module(line) {
            chunks.push((opened_at.len(), lines.join("\n")));
            lines.clear();
            opened_at.push(braces);
        }
        lines.push(line);
        braces += line.matches('{').count() as i64 - line.matches('}').count() as i64;
        while opened_at.last().is_some_and(|&at| braces <= at) {
            chunks.push((opened_at.len(), lines.join("\n")));
            lines.clear();
            opened_at.pop();
        }
    }
    chunks.push((opened_at.len(), lines.join("\n")));
    chunks
}

/// Whether a line starts an inline module: `mod x {`, `pub mod x {`, `pub(crate) mod x {`.
fn opens_inline_module(line: &str) -> bool {
    let mut cursor = Cursor(line);
    cursor.spaces();
    if cursor.eat("pub") {
        if cursor.0.starts_with('(') {
            match cursor.0.find(')') {
                Some(close) => cursor.0 = &cursor.0[close + 1..],
                None => return false,
            }
        }
        if !cursor.spaces() {
            return false;
        }
    }
    if !cursor.eat("mod") || !cursor.spaces() || cursor.word().is_empty() {
        return false;
    }
    cursor.spaces();
    cursor.0.starts_with('{')
}

/// Every path a `use` item of the text names, its braces expanded: `use a::{b, c::d as e};` is
/// `a::b` and `a::c::d`.
fn use_paths(text: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("use").map(|i| from + i) {
        let before_ok = !text[..at].chars().next_back().is_some_and(is_word);
        let after = &text[at + "use".len()..];
        let spaced = after.chars().next().is_some_and(char::is_whitespace);
        match after.find(';') {
            Some(end) if before_ok && spaced => {
                found.extend(expand(&[], &after[..end]));
                from = at + "use".len() + end + 1;
            }
            _ => from = at + "use".len(),
        }
    }
    found
}

/// The paths of one `use` tree below `prefix`.
fn expand(prefix: &[String], body: &str) -> Vec<Vec<String>> {
    let body = body.trim();
    let segments = |text: &str| -> Vec<String> {
        text.split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let Some(open) = body.find('{') else {
        let path = body.split(" as ").next().unwrap_or("").trim();
        return vec![prefix.iter().cloned().chain(segments(path)).collect()];
    };
    let head: Vec<String> = prefix
        .iter()
        .cloned()
        .chain(segments(&body[..open]))
        .collect();
    let close = body.rfind('}').unwrap_or(body.len().saturating_sub(1));
    let inner = body.get(open + 1..close).unwrap_or("");
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut part = String::new();
    for c in inner.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            parts.push(std::mem::take(&mut part));
        } else {
            part.push(c);
        }
    }
    parts.push(part);
    parts
        .iter()
        .filter(|part| !part.trim().is_empty())
        .flat_map(|part| expand(&head, part))
        .collect()
}

/// Every `a::b…` path of the text that does not continue one (`x::a::b` is only `x::a::b`).
fn paths(text: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts =
            is_word(chars[i]) && (i == 0 || !(is_word(chars[i - 1]) || chars[i - 1] == ':'));
        if !starts {
            i += 1;
            continue;
        }
        let word = |mut j: usize| {
            while j < chars.len() && is_word(chars[j]) {
                j += 1;
            }
            j
        };
        let mut end = word(i);
        let mut segments = vec![chars[i..end].iter().collect::<String>()];
        while chars.get(end) == Some(&':')
            && chars.get(end + 1) == Some(&':')
            && chars.get(end + 2).is_some_and(|&c| is_word(c))
        {
            let next = word(end + 2);
            segments.push(chars[end + 2..next].iter().collect());
            end = next;
        }
        if segments.len() > 1 {
            found.push(segments);
        }
        i = end;
    }
    found
}

/// Finds the file a path names.
struct Resolver {
    files_of: HashMap<ModulePath, String>,
}

impl Resolver {
    /// The file of the longest module `segments` starts with, read in `module` inside `depth`
    /// inline blocks; `None` for paths into other crates.
    fn resolve(&self, module: &[String], segments: &[String], depth: usize) -> Option<&String> {
        let first = segments.first()?;
        let (base, rest): (ModulePath, &[String]) = match first.as_str() {
            "crate" => (Vec::new(), &segments[1..]),
            "super" | "self" => {
                // Inline blocks are levels `super` climbs out of before the file's module.
                let mut levels = depth;
                let mut base = module.to_vec();
                let mut rest = segments;
                while let Some(first) = rest.first().filter(|s| *s == "super" || *s == "self") {
                    if first == "super" {
                        if levels > 0 {
                            levels -= 1;
                        } else {
                            base.pop();
                        }
                    }
                    rest = &rest[1..];
                }
                (base, rest)
            }
            _ => {
                let child: ModulePath = module.iter().chain([first]).cloned().collect();
                if !self.files_of.contains_key(&child) {
                    return None;
                }
                (module.to_vec(), segments)
            }
        };
        let full: ModulePath = base.into_iter().chain(rest.iter().cloned()).collect();
        (0..=full.len())
            .rev()
            .find_map(|n| self.files_of.get(&full[..n]))
    }
}

impl Graph {
    /// Every strongly connected component of more than one file, each sorted, in the order of
    /// their first files.
    pub fn circles(&self) -> Vec<Vec<String>> {
        let mut tarjan = Tarjan {
            graph: self,
            next: 0,
            index: HashMap::new(),
            low: HashMap::new(),
            stack: Vec::new(),
            on_stack: BTreeSet::new(),
            components: Vec::new(),
        };
        for file in self.edges.keys() {
            if !tarjan.index.contains_key(file.as_str()) {
                tarjan.visit(file);
            }
        }
        let mut circles: Vec<Vec<String>> = tarjan
            .components
            .into_iter()
            .filter(|component| component.len() > 1)
            .map(|mut component| {
                component.sort();
                component
            })
            .collect();
        circles.sort();
        circles
    }

    /// Each circle as `CIRCLE: n` and its edges, one `a -> b` a line.
    pub fn report(&self) -> String {
        let circles = self.circles();
        let mut out = String::new();
        for circle in &circles {
            let members: BTreeSet<&String> = circle.iter().collect();
            let _ = writeln!(out, "CIRCLE: {}", circle.len());
            for from in circle {
                for to in self.edges[from].iter().filter(|to| members.contains(to)) {
                    let _ = writeln!(out, "    {from} -> {to}");
                }
            }
        }
        let _ = writeln!(out, "{} circles", circles.len());
        out
    }
}

/// Tarjan's strongly connected components.
struct Tarjan<'a> {
    graph: &'a Graph,
    next: usize,
    index: HashMap<&'a str, usize>,
    low: HashMap<&'a str, usize>,
    stack: Vec<&'a str>,
    on_stack: BTreeSet<&'a str>,
    components: Vec<Vec<String>>,
}

impl<'a> Tarjan<'a> {
    fn visit(&mut self, file: &'a str) {
        self.index.insert(file, self.next);
        self.low.insert(file, self.next);
        self.next += 1;
        self.stack.push(file);
        self.on_stack.insert(file);
        let graph = self.graph;
        for target in &graph.edges[file] {
            let target = target.as_str();
            if !self.index.contains_key(target) {
                self.visit(target);
                let low = self.low[file].min(self.low[target]);
                self.low.insert(file, low);
            } else if self.on_stack.contains(target) {
                let low = self.low[file].min(self.index[target]);
                self.low.insert(file, low);
            }
        }
        if self.low[file] == self.index[file] {
            let mut component = Vec::new();
            while let Some(member) = self.stack.pop() {
                self.on_stack.remove(member);
                component.push(member.to_owned());
                if member == file {
                    break;
                }
            }
            self.components.push(component);
        }
    }
}

/// Every `.rs` file below `dir`, as (`dir/...` path, source).
pub fn read_sources(dir: &Path, shown_as: &str, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let shown = format!("{shown_as}/{name}");
        if path.is_dir() {
            read_sources(&path, &shown, out);
        } else if name.ends_with(".rs") {
            let source = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            out.push((shown, source));
        }
    }
}

#[cfg(test)]
#[path = "graph_tests.rs"]
mod tests;
