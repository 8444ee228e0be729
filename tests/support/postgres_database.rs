//! A PostgreSQL database of a test's own beside `MEMSCOPE_TEST_PG_URL`'s, created with `psql`
//! and dropped when the test ends, for tests whose Python side needs a whole database.

// Each test binary uses a different part of it.
#![allow(dead_code)]

use std::process::Command;

pub struct PostgresDatabase {
    admin: String,
    name: String,
    pub url: String,
}

impl PostgresDatabase {
    /// A new database named after `prefix`, next to the one `admin` names.
    pub fn create(admin: String, prefix: &str) -> PostgresDatabase {
        PostgresDatabase::create_from(admin, prefix, None)
    }

    /// A copy of this database (`CREATE DATABASE … TEMPLATE`), named after `prefix`; nothing
    /// may be connected to this one while it is copied.
    pub fn copy(&self, prefix: &str) -> PostgresDatabase {
        PostgresDatabase::create_from(self.admin.clone(), prefix, Some(&self.name))
    }

    fn create_from(admin: String, prefix: &str, template: Option<&str>) -> PostgresDatabase {
        let name = format!("memscope_{prefix}_{}", uuid::Uuid::new_v4().simple());
        let sql = match template {
            Some(template) => format!("CREATE DATABASE {name} TEMPLATE {template}"),
            None => format!("CREATE DATABASE {name}"),
        };
        let created = Command::new("psql")
            .args([&admin, "-qc", &sql])
            .status()
            .expect("psql runs");
        assert!(created.success(), "{sql}");
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
