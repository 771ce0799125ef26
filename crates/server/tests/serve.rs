//! `adamviz serve` as a real process: starts with the embedded defaults, answers the health
//! check and pages, and shuts down cleanly on SIGTERM and SIGINT.

#[path = "support/server_process.rs"]
mod server_process;

use std::process::Command;

use server_process::*;

#[test]
fn healthz_answers_ok_and_the_data_dir_is_created() {
    let temp = tempfile::tempdir().unwrap();
    let data_dir = temp.path().join("adamviz-data");
    let server = Server::start(&data_dir, &[]);
    assert!(data_dir.is_dir(), "created on first start");

    let (status, body) = server.get("/healthz");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""status":"ok""#), "{body}");
    assert!(body.contains(env!("CARGO_PKG_VERSION")), "{body}");
}

#[test]
fn healthz_reports_unavailable_when_the_data_dir_disappears() {
    let temp = tempfile::tempdir().unwrap();
    let data_dir = temp.path().join("adamviz-data");
    let server = Server::start(&data_dir, &[]);
    // It holds the database now; all of it goes. (The server's runners may create a file in
    // it, the database's log, while it is being removed: remove again until it is gone.)
    let mut tries = 0;
    while let Err(error) = std::fs::remove_dir_all(&data_dir) {
        tries += 1;
        assert!(
            tries < 50
                && matches!(
                    error.kind(),
                    std::io::ErrorKind::DirectoryNotEmpty | std::io::ErrorKind::NotFound
                ),
            "cannot remove the data directory: {error}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(!data_dir.exists());
    let (status, body) = server.get("/healthz");
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("the data directory is missing"), "{body}");
}

#[test]
fn home_page_is_rendered_on_the_server_with_the_sections_and_hydration_marker() {
    let temp = tempfile::tempdir().unwrap();
    add_author(&temp.path().join("d"), "ann");
    let server = Server::start(&temp.path().join("d"), &[]);
    let (status, head, _) = server.request("GET", "/", &[], "");
    assert_eq!(status, 303, "a visitor is sent to log in");
    assert!(head.contains("location: /login?next=/"), "{head}");
    let cookie = server.login("ann", PASSWORD);
    let (status, html) = server.get_as("/", &cookie);
    assert_eq!(status, 200);
    for expected in [
        r#"data-hydrated="false""#,
        r#"href="/datasets""#,
        r#"href="/revisions""#,
        r#"href="/evidence""#,
        "Governed boxplots from ADaM data",
        "/pkg/adamviz.js",
        r#"<div aria-label="Account" class="account-menu"><span class="account-name">ann"#,
    ] {
        assert!(
            html.contains(expected),
            "home page lacks {expected}: {html}"
        );
    }
}

#[test]
fn each_section_page_renders_and_unknown_paths_are_404() {
    // (Each page streams in order: no part of it waits in a <template> for a script.)
    let temp = tempfile::tempdir().unwrap();
    add_author(&temp.path().join("d"), "ann");
    let server = Server::start(&temp.path().join("d"), &[]);
    let cookie = server.login("ann", PASSWORD);
    for (path, heading) in [
        ("/datasets", "Datasets"),
        ("/revisions", "Revisions"),
        ("/evidence", "Evidence"),
    ] {
        let (status, html) = server.get_as(path, &cookie);
        assert_eq!(status, 200, "{path}");
        assert!(
            !html.contains("<template"),
            "{path}: streamed out of order: {html}"
        );
        assert!(
            html.contains(&format!("<h1>{heading}</h1>")),
            "{path}: {html}"
        );
    }
    let (status, html) = server.get_as("/no-such-page", &cookie);
    assert_eq!(status, 404, "{html}");
    assert!(html.contains("Page not found"), "{html}");
}

#[test]
fn a_first_start_prints_a_setup_link_and_a_start_with_accounts_does_not() {
    let temp = tempfile::tempdir().unwrap();
    let data_dir = temp.path().join("d");
    let setup_path = |server: &Server| {
        let line = server
            .early
            .iter()
            .find(|l| l.contains("create the first admin at"))
            .unwrap_or_else(|| panic!("no setup line in {:?}", server.early))
            .clone();
        let link = line
            .split(" at ")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap();
        let prefix = format!("http://{}/setup?token=", server.addr);
        let token = link
            .strip_prefix(&prefix)
            .unwrap_or_else(|| panic!("{link}"));
        assert!(
            token.len() == 32 && token.chars().all(|c| c.is_ascii_hexdigit()),
            "{token}"
        );
        format!("/setup?token={token}")
    };
    let server = Server::start(&data_dir, &[]);
    let first = setup_path(&server);
    assert_eq!(server.get(&first).0, 200);
    assert_eq!(
        server
            .get("/setup?token=00000000000000000000000000000000")
            .0,
        404
    );
    assert_eq!(server.get("/setup").0, 404);
    drop(server);
    // Valid until the server stops: the next start has another.
    let server = Server::start(&data_dir, &[]);
    let second = setup_path(&server);
    assert_ne!(first, second);
    assert_eq!(server.get(&first).0, 404);
    drop(server);
    add_author(&data_dir, "ann");
    let server = Server::start(&data_dir, &[]);
    assert!(
        !server
            .early
            .iter()
            .any(|l| l.contains("create the first admin")),
        "{:?}",
        server.early
    );
    assert_eq!(server.get(&second).0, 404);
}

/// The setup path (`/setup?token=…`) the server printed at start.
fn printed_setup_token(server: &Server) -> String {
    let line = server
        .early
        .iter()
        .find(|l| l.contains("create the first admin at"))
        .unwrap_or_else(|| panic!("no setup line in {:?}", server.early));
    line.split("token=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap()
        .to_owned()
}

#[test]
fn attack_the_setup_link_dies_as_soon_as_any_account_exists() {
    let temp = tempfile::tempdir().unwrap();
    let data_dir = temp.path().join("d");
    let server = Server::start(&data_dir, &[]);
    let token = printed_setup_token(&server);
    assert_eq!(server.get(&format!("/setup?token={token}")).0, 200);
    // An admin made with the command line while the server runs (the link was printed before).
    add_author(&data_dir, "ann");
    assert_eq!(
        server.get(&format!("/setup?token={token}")).0,
        404,
        "the page is gone"
    );
    // The form's server function refuses it too, and no second admin appears.
    let origin = format!("http://{}", server.addr);
    let (status, _, body) = server.request(
        "POST",
        "/api/auth/setup",
        &[
            ("Origin", &origin),
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Accept", "application/json"),
        ],
        &format!(
            "token={token}&name=mallory&password=a+long+enough+password&password_again=a+long+enough+password"
        ),
    );
    assert_eq!(status, 404, "{body}");
    let database = adamviz_store::db::Database::open_in(&data_dir).unwrap();
    let connection = database.connection().unwrap();
    assert!(
        adamviz_store::accounts::find_by_name(&connection, "mallory")
            .unwrap()
            .is_none(),
        "no account was made through the dead link"
    );
}

#[test]
fn the_data_directory_is_private_to_the_service_and_a_wider_one_is_tightened() {
    use std::os::unix::fs::PermissionsExt;
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let temp = tempfile::tempdir().unwrap();
    // A new installation: everything it creates is the service's alone.
    let fresh = temp.path().join("fresh");
    add_author(&fresh, "ann");
    let server = Server::start(&fresh, &[]);
    let cookie = server.login("ann", PASSWORD);
    assert_eq!(server.get_as("/", &cookie).0, 200);
    assert_eq!(mode(&fresh), 0o700, "the data directory");
    for file in [
        "adamviz.sqlite3",
        "adamviz.sqlite3-wal",
        "adamviz.sqlite3-shm",
    ] {
        let path = fresh.join(file);
        assert!(path.exists(), "{file} exists while the server runs");
        assert_eq!(mode(&path), 0o600, "{file}");
    }
    for dir in ["objects", "objects/sha256", "objects/tmp"] {
        assert_eq!(mode(&fresh.join(dir)), 0o700, "{dir}");
    }
    drop(server);
    // An older installation left readable by everyone: tightened at start, with a warning.
    let old = temp.path().join("old");
    add_author(&old, "ann");
    std::fs::write(old.join("notes.txt"), "kept").unwrap();
    for (path, wide) in [
        ("", 0o755),
        ("adamviz.sqlite3", 0o644),
        ("notes.txt", 0o664),
    ] {
        std::fs::set_permissions(old.join(path), std::fs::Permissions::from_mode(wide)).unwrap();
    }
    let server = Server::start(&old, &[]);
    assert_eq!(mode(&old), 0o700);
    assert_eq!(mode(&old.join("adamviz.sqlite3")), 0o600);
    assert_eq!(mode(&old.join("notes.txt")), 0o600);
    assert_eq!(
        std::fs::read_to_string(old.join("notes.txt")).unwrap(),
        "kept"
    );
    let warned = server
        .early
        .iter()
        .filter(|line| line.contains("made private to the service"))
        .count();
    assert!(
        warned >= 3,
        "one warning per file made private: {:?}",
        server.early
    );
    server.login("ann", PASSWORD);
}

#[test]
fn sigterm_shuts_down_gracefully() {
    let temp = tempfile::tempdir().unwrap();
    let server = Server::start(&temp.path().join("d"), &[]);
    let (exit, log) = server.stop_with("TERM");
    assert!(exit.success(), "exit status {exit:?}, log {log:?}");
    assert!(
        log.iter().any(|l| l.contains("SIGTERM received")),
        "{log:?}"
    );
    assert!(log.iter().any(|l| l.contains("adamviz stopped")), "{log:?}");
}

/// Regression: the handlers used to be installed lazily, after the "listening" line, so a SIGINT
/// sent at once killed the process by the default action (exit by signal 2).
#[test]
fn sigint_sent_right_after_start_is_handled_not_fatal() {
    let temp = tempfile::tempdir().unwrap();
    let server = Server::start(&temp.path().join("d"), &[]);
    let (exit, log) = server.stop_with("INT");
    assert!(exit.success(), "exit status {exit:?}, log {log:?}");
    assert!(log.iter().any(|l| l.contains("SIGINT received")), "{log:?}");
}

#[test]
fn a_missing_site_settings_file_is_a_clear_startup_error() {
    let temp = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_adamviz"))
        .current_dir(temp.path())
        .args(["serve", "--addr", "127.0.0.1:0", "--data-dir", "d"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot read the site settings file Leptos.toml"),
        "{stderr}"
    );
    assert!(
        !temp.path().join("d").exists(),
        "nothing is created on a failed start"
    );
}
