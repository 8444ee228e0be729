//! A MySQL or MariaDB database of a test's own on the server `MEMSCOPE_TEST_MYSQL_URL` names,
//! created with the `mysql` client (utf8mb4 under a case-insensitive collation, as a default
//! install has) and dropped when the test ends, for tests whose Python side needs a whole
//! database; and its dump, to prove a read wrote nothing.

use std::process::Command;

pub struct MysqlDatabase {
    client: Vec<String>,
    name: String,
    /// The database's `mysql://` URL.
    pub url: String,
}

/// The `mysql`/`mysqldump` options that reach the server of a `mysql://user[:pass]@host[:port]/db`
/// URL, and the URL up to its database.
fn server_of(admin: &str) -> (Vec<String>, String) {
    let rest = admin.split_once("://").map_or(admin, |(_, rest)| rest);
    let rest = rest.split(['/', '?']).next().unwrap_or(rest);
    let (login, server) = rest.rsplit_once('@').unwrap_or(("root", rest));
    let (user, password) = login
        .split_once(':')
        .map_or((login, None), |(u, p)| (u, Some(p)));
    let (host, port) = server.split_once(':').unwrap_or((server, "3306"));
    let mut client = vec![
        format!("--host={host}"),
        format!("--port={port}"),
        format!("--user={user}"),
    ];
    client.extend(password.map(|p| format!("--password={p}")));
    let base = admin
        .split_once("://")
        .map_or("mysql", |(scheme, _)| scheme);
    (client, format!("{base}://{rest}"))
}

impl MysqlDatabase {
    /// A new database named after `prefix` on the server `admin` names.
    pub fn create(admin: &str, prefix: &str) -> MysqlDatabase {
        let name = format!("memscope_{prefix}_{}", uuid::Uuid::new_v4().simple());
        let (client, server) = server_of(admin);
        let created = Command::new("mysql")
            .args(&client)
            .arg("--execute")
            .arg(format!(
                "CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
            ))
            .status()
            .expect("the mysql client runs");
        assert!(created.success(), "creating {name}");
        let url = format!("{server}/{name}");
        MysqlDatabase { client, name, url }
    }

    /// Every table's definition and rows: equal dumps mean nothing was written.
    pub fn dump(&self) -> String {
        let output = Command::new("mysqldump")
            .args(&self.client)
            .args(["--skip-dump-date", "--single-transaction", &self.name])
            .output()
            .expect("mysqldump runs");
        assert!(
            output.status.success(),
            "dumping {}: {}",
            self.name,
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("a dump is text")
    }
}

impl Drop for MysqlDatabase {
    fn drop(&mut self) {
        let _ = Command::new("mysql")
            .args(&self.client)
            .arg("--execute")
            .arg(format!("DROP DATABASE IF EXISTS {}", self.name))
            .status();
    }
}
