//! A PostgreSQL database of a test's own beside `MEMSCOPE_TEST_PG_URL`'s, created with `psql`
//! and dropped when the test ends, for tests whose Python side needs a whole database.

use std::process::Command;

pub struct PostgresDatabase {
    admin: String,
    name: String,
    pub url: String,
}

impl PostgresDatabase {
    /// A new database named after `prefix`, next to the one `admin` names.
    pub fn create(admin: String, prefix: &str) -> PostgresDatabase {
        let name = format!("memscope_{prefix}_{}", uuid::Uuid::new_v4().simple());
        let created = Command::new("psql")
            .args([&admin, "-qc", &format!("CREATE DATABASE {name}")])
            .status()
            .expect("psql runs");
        assert!(created.success(), "creating {name}");
        let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
        let url = format!("{base}/{name}");
        PostgresDatabase { admin, name, url }
    }
}

impl Drop for PostgresDatabase {
    fn drop(&mut self) {
        let _ = Command::new("psql")
            .args([
                &self.admin,
                "-qc",
                &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
            ])
            .status();
    }
}
