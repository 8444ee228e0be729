//! Writing the demo's files: Dify object storage (uploads, offloaded outputs, node memory) and
//! Langflow knowledge-base directories.

use std::path::{Path, PathBuf};

/// A demo file could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write demo file {}", path.display())]
pub struct WriteFileError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Writes files below one root directory, creating parent directories as needed.
pub(crate) struct FileRoot<'a>(pub(crate) &'a Path);

impl FileRoot<'_> {
    /// Writes `bytes` at `relative` (a `/`-separated storage key) and returns the byte count.
    pub(crate) fn write(&self, relative: &str, bytes: &[u8]) -> Result<i64, WriteFileError> {
        let path = self.0.join(relative);
        let fail = |source| WriteFileError {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(fail)?;
        }
        std::fs::write(&path, bytes).map_err(fail)?;
        Ok(bytes.len() as i64)
    }

    /// Writes `value` as pretty-printed JSON and returns the byte count.
    pub(crate) fn write_json(
        &self,
        relative: &str,
        value: &serde_json::Value,
    ) -> Result<i64, WriteFileError> {
        let mut bytes = serde_json::to_vec_pretty(value).map_err(|error| WriteFileError {
            path: self.0.join(relative),
            source: error.into(),
        })?;
        bytes.push(b'\n');
        self.write(relative, &bytes)
    }
}

/// A valid 1x1 PNG: uploaded images are real files an inspector can open.
pub(crate) const TINY_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0b, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x60, 0x00, 0x02, 0x00,
    0x00, 0x05, 0x00, 0x01, 0x7a, 0x5e, 0xab, 0x3f, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44,
    0xae, 0x42, 0x60, 0x82,
];

/// A minimal one-page PDF.
pub(crate) const TINY_PDF: &[u8] = b"%PDF-1.4\n\
1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n\
2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n\
3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]>>endobj\n\
trailer<</Root 1 0 R>>\n\
%%EOF\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_nested_keys_and_reports_sizes() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = FileRoot(dir.path());
        let size = root.write("a/b/c.png", TINY_PNG).expect("written");
        assert_eq!(size, TINY_PNG.len() as i64);
        assert_eq!(
            std::fs::read(dir.path().join("a/b/c.png")).expect("read back"),
            TINY_PNG
        );
        let json_size = root
            .write_json("d/e.json", &serde_json::json!({"version": 1}))
            .expect("written");
        let text = std::fs::read_to_string(dir.path().join("d/e.json")).expect("read back");
        assert_eq!(json_size, text.len() as i64);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).expect("json")["version"],
            1
        );
    }

    #[test]
    fn reports_the_path_it_could_not_write() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("file"), b"x").expect("setup");
        let error = FileRoot(dir.path())
            .write("file/below-a-file.json", b"{}")
            .expect_err("a file is not a directory");
        assert!(error.path.ends_with("file/below-a-file.json"));
    }
}
