//! Which database file a KB directory belongs to.
//!
//! A memscope database names its KB directory by the id in its `memscope_meta`, and a copied
//! file (`cp memory.db copy.db`) keeps that id. So the directory also records the file that
//! owns it (`owner.json`): another file with the same id is a copy, and gets a directory of its
//! own, started from the original's the first time it needs one. A file whose recorded owner no
//! longer exists (it was moved) takes the directory over.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The prefix of a database's own directory under the KB root.
pub const DATABASE_DIR_PREFIX: &str = "db-";

/// Where one database's knowledge bases live: the one decision about KB placement.
///
/// A memscope database has its own directory, `{kb_root}/db-{database_id}/`, so two databases
/// (two demos, a copy and its original) never read, overwrite or delete each other's KBs
/// whatever their memory bases are called. A database without an identity (one memscope did not
/// create) uses `kb_root` itself, Langflow's own layout. A copied database file keeps its
/// original's identity, and so its KBs.
pub fn database_kb_root(kb_root: &Path, database_id: Option<&str>) -> PathBuf {
    let id: Option<String> = database_id
        .map(|id| {
            id.chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect()
        })
        .filter(|id: &String| !id.is_empty());
    match id {
        Some(id) => kb_root.join(format!("{DATABASE_DIR_PREFIX}{id}")),
        None => kb_root.to_path_buf(),
    }
}

/// The file in a database's KB directory that names the database file owning it.
pub const OWNER_FILE: &str = "owner.json";

#[derive(Debug, Serialize, Deserialize)]
struct Owner {
    database_file: PathBuf,
}

/// A database's KB directory, and the file it is a copy of when it is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KbHome {
    pub root: PathBuf,
    /// The database file this one was copied from; its KB seeds this one's.
    pub copy_of: Option<PathBuf>,
    /// The directory named by the id alone: a copy's seed.
    shared: PathBuf,
    database_file: Option<PathBuf>,
}

/// Where the KBs of the database with `database_id`, stored in `database_file` (SQLite; `None`
/// for a server's database), live. Reads only: [`KbHome::prepare`] writes.
pub fn kb_home(kb_root: &Path, database_id: Option<&str>, database_file: Option<&Path>) -> KbHome {
    let shared = database_kb_root(kb_root, database_id);
    // Only a memscope database (it has an id) names its directory, and so records its owner.
    let database_file = database_file
        .filter(|_| database_id.is_some())
        .map(|f| std::fs::canonicalize(f).unwrap_or(f.to_path_buf()));
    let home = |root: PathBuf, copy_of: Option<PathBuf>| KbHome {
        root,
        copy_of,
        shared: shared.clone(),
        database_file: database_file.clone(),
    };
    let Some(file) = &database_file else {
        return home(shared.clone(), None);
    };
    let owner = read_owner(&shared);
    match owner {
        None => home(shared.clone(), None),
        Some(owner) if &owner == file => home(shared.clone(), None),
        Some(owner) => {
            let own = copy_root(&shared, file);
            // A copy keeps its own directory even after the original is gone.
            if own.exists() || owner.exists() {
                home(own, Some(owner))
            } else {
                home(shared.clone(), None)
            }
        }
    }
}

/// Where an opened database's own knowledge bases live under `kb_root`.
pub fn database_home(kb_root: &Path, store: &crate::store::Store) -> KbHome {
    kb_home(
        kb_root,
        store.database_id(),
        store.database_file().as_deref(),
    )
}

impl KbHome {
    /// Makes the directory ready before a KB in it is written or read for a sync: records this
    /// file as the owner, and fills a copy's new directory from the original's.
    pub fn prepare(&self) -> std::io::Result<()> {
        let Some(file) = &self.database_file else {
            return Ok(());
        };
        if self.copy_of.is_some() && !self.root.exists() && self.shared.exists() {
            copy_tree(&self.shared, &self.root)?;
        }
        if read_owner(&self.root).as_ref() == Some(file) {
            return Ok(());
        }
        std::fs::create_dir_all(&self.root)?;
        let owner = Owner {
            database_file: file.clone(),
        };
        let text = serde_json::to_string_pretty(&owner).map_err(std::io::Error::other)?;
        std::fs::write(self.root.join(OWNER_FILE), text)
    }
}

fn read_owner(dir: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dir.join(OWNER_FILE)).ok()?;
    serde_json::from_str::<Owner>(&text)
        .ok()
        .map(|owner| owner.database_file)
}

/// A copy's directory: beside the shared one, named by a digest of the copy's path.
fn copy_root(shared: &Path, file: &Path) -> PathBuf {
    let digest = Sha256::digest(file.to_string_lossy().as_bytes());
    let tag: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    let name = shared.file_name().unwrap_or_default().to_string_lossy();
    shared.with_file_name(format!("{name}-copy-{tag}"))
}

/// Copies a directory tree, files and subdirectories, except the owner record.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if entry.file_name() != OWNER_FILE {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_gets_its_own_directory_seeded_from_the_original() {
        let dir = tempfile::tempdir().unwrap();
        let (original, copy) = (dir.path().join("a.db"), dir.path().join("b.db"));
        std::fs::write(&original, "x").unwrap();
        std::fs::write(&copy, "x").unwrap();
        let kb_root = dir.path().join("kb");
        let first = kb_home(&kb_root, Some("id1"), Some(&original));
        assert_eq!(first.root, kb_root.join("db-id1"));
        first.prepare().unwrap();
        std::fs::write(first.root.join("vectors"), "v").unwrap();
        let second = kb_home(&kb_root, Some("id1"), Some(&copy));
        assert_ne!(second.root, first.root);
        assert_eq!(
            second.copy_of.as_deref(),
            Some(original.canonicalize().unwrap().as_path())
        );
        second.prepare().unwrap();
        assert_eq!(
            std::fs::read_to_string(second.root.join("vectors")).unwrap(),
            "v"
        );
        // The original still resolves to its own directory, and the copy keeps its own after
        // the original is gone.
        assert_eq!(
            kb_home(&kb_root, Some("id1"), Some(&original)).root,
            first.root
        );
        std::fs::remove_file(&original).unwrap();
        assert_eq!(
            kb_home(&kb_root, Some("id1"), Some(&copy)).root,
            second.root
        );
    }

    #[test]
    fn a_moved_database_takes_its_directory_over() {
        let dir = tempfile::tempdir().unwrap();
        let (old, new) = (dir.path().join("a.db"), dir.path().join("b.db"));
        std::fs::write(&old, "x").unwrap();
        let kb_root = dir.path().join("kb");
        kb_home(&kb_root, Some("id1"), Some(&old))
            .prepare()
            .unwrap();
        std::fs::rename(&old, &new).unwrap();
        let moved = kb_home(&kb_root, Some("id1"), Some(&new));
        assert_eq!(
            (moved.root.clone(), moved.copy_of.clone()),
            (kb_root.join("db-id1"), None)
        );
        moved.prepare().unwrap();
        assert_eq!(read_owner(&moved.root), Some(new.canonicalize().unwrap()));
    }
}
