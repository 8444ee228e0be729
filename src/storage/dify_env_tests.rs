//! Tests of Dify's settings: parsing, defaults, storage and database URLs.
use super::*;

#[test]
fn env_files_are_parsed_as_compose_reads_them() {
    let text = "# comment\n\nexport A=1\nB = 'lit ${A} #x'\nC=\"q\\\"uote\\n${A}\"\n\
                D=plain # trailing\nE=a#b\nF=${A:-z}${NONE:-d}\n";
    let values = parse_env(text).unwrap();
    let get = |k: &str| values[k].0.as_str();
    assert_eq!(get("A"), "1");
    assert_eq!(get("B"), "lit ${A} #x");
    assert_eq!(get("C"), "q\"uote\n1");
    assert_eq!(get("D"), "plain");
    assert_eq!(get("E"), "a#b");
    assert_eq!(get("F"), "1d");
    assert_eq!(values["D"].1, 6);
    assert_eq!(parse_env("X\n").unwrap_err().0, 1);
    assert!(
        parse_env("Y=\"open\n")
            .unwrap_err()
            .1
            .contains("not closed")
    );
}

fn settings(dir: &Path, text: &str) -> Result<DifySettings, DifyEnvError> {
    let path = dir.join(".env");
    std::fs::write(&path, text).unwrap();
    read(&path)
}

#[test]
fn the_database_url_uses_dify_defaults_and_escapes_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let dify = settings(dir.path(), "DB_PASSWORD=p@ss:w/rd\nDB_HOST=10.0.0.5\n").unwrap();
    assert_eq!(
        dify.database_url.expose(),
        "postgres://postgres:p%40ss%3Aw%2Frd@10.0.0.5:5432/dify"
    );
    let shown = format!("{dify:?}{}", serde_json::to_string(&dify).unwrap());
    assert!(!shown.contains("p@ss"), "{shown}");
    let password = dify
        .taken
        .iter()
        .find(|t| t.variable == "DB_PASSWORD")
        .unwrap();
    assert_eq!(
        (password.value.as_str(), password.origin.as_str()),
        ("(hidden)", "line 1")
    );
    let port = dify.taken.iter().find(|t| t.variable == "DB_PORT").unwrap();
    assert_eq!(port.origin, "Dify's default");
    // Dify's default storage: OpenDAL on the local disk under `storage`.
    assert_eq!(
        dify.storage,
        StorageBackend::Fs {
            root: dir.path().join("storage")
        }
    );
}

#[test]
fn mysql_types_use_mysqls_protocol_with_difys_port_default_and_extras() {
    let dir = tempfile::tempdir().unwrap();
    for db_type in ["mysql", "oceanbase", "seekdb"] {
        let dify = settings(
            dir.path(),
            &format!("DB_TYPE={db_type}\nDB_USERNAME=root\nDB_EXTRAS=charset=utf8mb4\n"),
        )
        .unwrap();
        assert_eq!(
            dify.database_url.expose(),
            "mysql://root@localhost:5432/dify?charset=utf8mb4"
        );
    }
}

#[test]
fn docker_paths_map_to_the_mounted_volume() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("docker-compose.yaml"), "services: {}\n").unwrap();
    let dify = settings(dir.path(), "DB_HOST=db_postgres\nOPENDAL_FS_ROOT=storage\n").unwrap();
    assert_eq!(
        dify.storage,
        StorageBackend::Fs {
            root: dir.path().join("volumes/app/storage")
        }
    );
    assert!(dify.notes.iter().any(|n| n.contains("Docker network")));
    let local = settings(
        dir.path(),
        "STORAGE_TYPE=local\nSTORAGE_LOCAL_PATH=/app/api/storage/x\n",
    )
    .unwrap();
    assert_eq!(
        local.storage,
        StorageBackend::Fs {
            root: dir.path().join("volumes/app/storage/x")
        }
    );
}

#[test]
fn s3_settings_are_read_with_their_addressing_style() {
    let dir = tempfile::tempdir().unwrap();
    let dify = settings(
        dir.path(),
        "STORAGE_TYPE=s3\nS3_BUCKET_NAME=files\nS3_ENDPOINT=http://minio:9000\n\
         S3_ACCESS_KEY=ak\nS3_SECRET_KEY=sk-secret\nS3_ADDRESS_STYLE=path\n",
    )
    .unwrap();
    let StorageBackend::S3(s3) = &dify.storage else {
        panic!("{:?}", dify.storage)
    };
    assert_eq!(
        (s3.bucket.as_str(), s3.endpoint.as_str()),
        ("files", "http://minio:9000")
    );
    assert_eq!(s3.address_style, AddressStyle::Path);
    assert!(!s3.use_aws_chain);
    assert!(!format!("{dify:?}").contains("sk-secret"));
    let opendal = settings(
        dir.path(),
        "OPENDAL_SCHEME=s3\nOPENDAL_S3_BUCKET=b\nOPENDAL_S3_ROOT=/dify\n\
         OPENDAL_S3_SECRET_ACCESS_KEY=zz\nOPENDAL_S3_ACCESS_KEY_ID=id\n",
    )
    .unwrap();
    let StorageBackend::S3(s3) = &opendal.storage else {
        panic!()
    };
    assert_eq!((s3.bucket.as_str(), s3.prefix.as_str()), ("b", "/dify"));
    assert!(
        opendal
            .taken
            .iter()
            .any(|t| t.variable == "OPENDAL_S3_SECRET_ACCESS_KEY" && t.value == "(hidden)")
    );
}

#[test]
fn unsupported_settings_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let err = settings(dir.path(), "STORAGE_TYPE=azure-blob\n").unwrap_err();
    assert!(err.message.contains("[storage]"), "{err}");
    let err = settings(dir.path(), "DB_TYPE=mssql\n").unwrap_err();
    assert!(err.message.contains("postgresql, mysql"), "{err}");
    let err = read(&dir.path().join("missing.env")).unwrap_err();
    assert!(err.message.contains("docker compose exec api env"), "{err}");
}

#[test]
fn envs_files_are_layered_under_the_env_file_which_wins() {
    let dir = tempfile::tempdir().unwrap();
    let databases = dir.path().join("envs/databases");
    std::fs::create_dir_all(&databases).unwrap();
    std::fs::write(
        databases.join("db-mysql.env"),
        "DB_TYPE=mysql\nDB_PORT=3306\nDB_HOST=from-layer\n",
    )
    .unwrap();
    std::fs::write(databases.join("db-mysql.env.example"), "DB_PORT=1\n").unwrap();
    let dify = settings(dir.path(), "DB_HOST=10.0.0.7\nDB_USERNAME=root\n").unwrap();
    assert_eq!(
        dify.database_url.expose(),
        "mysql://root@10.0.0.7:3306/dify"
    );
    let origin = |variable: &str| {
        dify.taken
            .iter()
            .find(|t| t.variable == variable)
            .unwrap()
            .origin
            .clone()
    };
    assert_eq!(origin("DB_PORT"), "envs/databases/db-mysql.env line 2");
    assert_eq!(origin("DB_HOST"), "line 1");
    assert!(dify.notes.iter().all(|n| !n.starts_with("DB_PORT")));
}

#[test]
fn a_mysql_server_on_difys_default_port_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let dify = settings(dir.path(), "DB_TYPE=mysql\n").unwrap();
    assert!(
        dify.notes
            .iter()
            .any(|n| n.starts_with("DB_PORT") && n.contains("5432") && n.contains("3306")),
        "{:?}",
        dify.notes
    );
}
