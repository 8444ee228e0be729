//! Who runs a job, for the locks and sweeps of both job tables: this host and its processes,
//! memscope's owner string, and the key of a session's ingestion lock.

use sha2::{Digest, Sha256};

/// This machine's name, to tell whether a recorded pid can be checked here.
pub fn host_name() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|path| std::fs::read_to_string(path).ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Whether a process of this host runs; `None` when this system cannot tell.
pub fn process_alive(pid: u32) -> Option<bool> {
    if pid == std::process::id() {
        return Some(true);
    }
    let proc = std::path::Path::new("/proc");
    if !proc.join("self").exists() {
        return None;
    }
    Some(proc.join(pid.to_string()).exists())
}

/// The `job_metadata.owner` of the jobs memscope runs: `memscope:{host}:{pid}`.
pub fn job_owner() -> String {
    format!("{OWNER_PREFIX}{}:{}", host_name(), std::process::id())
}

pub(crate) const OWNER_PREFIX: &str = "memscope:";

/// Langflow's per-(memory base, session) ingestion lock key on PostgreSQL
/// (`memory_base/task.py`, `_compute_advisory_key`) of a lock name `{base id}:{session id}`.
pub fn session_lock_key(lock_name: &str) -> i64 {
    let digest = Sha256::digest(lock_name.as_bytes());
    let high = u64::from_be_bytes(digest[..8].try_into().expect("a SHA-256 has 32 bytes"));
    (high % (i64::MAX as u64)) as i64
}
