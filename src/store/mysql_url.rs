//! Which URLs name a MySQL-protocol server: a leaf, so the catalog, the errors and the pool
//! can all ask.

/// Whether a URL names a MySQL-protocol server (`mariadb://` is accepted as a synonym).
pub fn is_mysql_url(url: &str) -> bool {
    url.starts_with("mysql://") || url.starts_with("mariadb://")
}
