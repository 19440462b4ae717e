//! recd's HTTP listener on the real recd: `/livez` and `/readyz` across a full disk (a
//! tmpfs) and a catalog that can no longer be read; who may read and who may act (Host
//! header, token, `allow_control`); a trigger over HTTP making an incident that
//! `/api/incidents` lists; and the set-ups refused at start-up.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use recd_testkit::{http_get, http_request, recd_refused, wait_until, Domain, Mount, Recd};
use serde_json::Value;

const TOKEN: &str = "probe-token-0123456789abcdef";

/// A token file of mode `mode` under `dir`.
fn token_file(dir: &Path, mode: u32) -> PathBuf {
    let path = dir.join("http-token");
    std::fs::write(&path, format!("{TOKEN}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

/// A recd with a token file and `http` lines in its `[http]` table; dropped in order:
/// recd first, then its directory and domain.
struct WithToken {
    recd: Recd,
    _root: tempfile::TempDir,
    _domain: Domain,
}

fn with_token(http: &str) -> WithToken {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let token = token_file(root.path(), 0o600);
    let recd = Recd::start_with(
        root.path(),
        &domain,
        &format!("[http]\ntoken_file = {token:?}\n{http}"),
        &[],
    );
    WithToken {
        recd,
        _root: root,
        _domain: domain,
    }
}

/// `/readyz?verbose` until `condition` holds of its status and text (bounded).
fn readyz_until(
    address: std::net::SocketAddr,
    condition: impl Fn(u16, &str) -> bool,
) -> (u16, String) {
    let mut last = (0, String::new());
    wait_until(Duration::from_secs(10), || {
        let reply = http_get(address, "/readyz?verbose");
        last = (reply.status, reply.body);
        condition(last.0, &last.1)
    });
    last
}

#[test]
fn readyz_follows_the_free_space_and_livez_the_threads() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let disk = Mount::at(&root.path().join("data"), "tmpfs", "tmpfs", "size=16m");
    let recd = Recd::start_with(
        root.path(),
        &domain,
        "min_free_space = \"4MiB\"\n[http]\nlisten = \"127.0.0.1:0\"\n",
        &[],
    );
    let address = recd.http_address();

    let live = http_get(address, "/livez");
    assert_eq!((live.status, live.body.as_str()), (200, "ok\n"));
    let ready = readyz_until(address, |status, _| status == 200);
    assert_eq!(ready.0, 200, "{}", ready.1);
    assert!(
        ready.1.contains("[+]catalog ok")
            && ready.1.contains("[+]data_dir ok")
            && ready.1.contains("[+]free_space ok")
            && ready.1.ends_with("readyz check passed\n"),
        "{}",
        ready.1
    );
    assert_eq!(http_get(address, "/readyz").body, "ok\n");

    // 13 MiB of 16 taken: below min_free_space, though files can still be written.
    let filler = disk.join("filler");
    std::fs::write(&filler, vec![7u8; 13 << 20]).unwrap();
    let (status, text) = readyz_until(address, |status, _| status == 503);
    assert_eq!(status, 503, "{text}");
    assert!(
        text.contains("[-]free_space failed") && text.contains("min_free_space"),
        "{text}"
    );
    assert!(text.contains("[+]data_dir ok"), "{text}");
    let plain = http_get(address, "/readyz");
    assert_eq!(plain.status, 503);
    assert!(
        plain.body.contains("[-]free_space failed"),
        "{}",
        plain.body
    );
    assert_eq!(http_get(address, "/livez").status, 200, "alive all along");

    // Full to the last block: nothing can be written at all.
    let mut rest = std::fs::File::create(disk.join("rest")).unwrap();
    while std::io::Write::write_all(&mut rest, &[1u8; 4096]).is_ok() {}
    drop(rest);
    let (status, text) = readyz_until(address, |_, text| text.contains("[-]data_dir failed"));
    assert_eq!(status, 503, "{text}");
    assert!(text.contains("No space left"), "{text}");

    std::fs::remove_file(&filler).unwrap();
    std::fs::remove_file(disk.join("rest")).unwrap();
    let (status, text) = readyz_until(address, |status, _| status == 200);
    assert_eq!(status, 200, "ready again once space is back: {text}");
    drop(recd);
}

#[test]
fn readyz_fails_when_the_catalog_cannot_be_read_and_recd_will_not_start_on_it() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let mut recd = Recd::start_with(
        root.path(),
        &domain,
        "[http]\nlisten = \"127.0.0.1:0\"\n",
        &[],
    );
    let address = recd.http_address();
    assert_eq!(readyz_until(address, |status, _| status == 200).0, 200);

    // What a restore gone wrong leaves: another file, not a catalog, in its place (the
    // running recd keeps the old one open; a restarted one could not open it).
    let catalog = root.path().join("state/catalog.sqlite");
    let garbage = root.path().join("state/garbage");
    std::fs::write(&garbage, vec![0x5au8; 16384]).unwrap();
    std::fs::rename(&garbage, &catalog).unwrap();
    for journal in ["catalog.sqlite-wal", "catalog.sqlite-shm"] {
        let _ = std::fs::remove_file(root.path().join("state").join(journal));
    }
    let (status, text) = readyz_until(address, |status, _| status == 503);
    assert_eq!(status, 503, "{text}");
    assert!(
        text.contains("[-]catalog failed") && text.contains("catalog.sqlite"),
        "{text}"
    );
    assert_eq!(http_get(address, "/livez").status, 200);
    recd.signal_and_wait(libc::SIGTERM, Duration::from_secs(30));

    // A restart on it is refused, naming the file.
    let stderr = recd_refused(&root.path().join("recd.toml"));
    assert!(stderr.contains("catalog.sqlite"), "{stderr}");
}

#[test]
fn only_the_token_acts_and_only_when_control_is_allowed() {
    let WithToken { recd, .. } = &with_token(
        "listen = \"127.0.0.1:0\"\nallow_control = true\n\n[[preset]]\nname = \"drive\"\n\n[[preset]]\nname = \"snap\"\npre_trigger = \"5s\"\nbefore = \"1s\"\nafter = \"0s\"\n",
    );
    let address = recd.http_address();
    let bearer = format!("Bearer {TOKEN}");
    let post = |path: &str, headers: &[(&str, &str)], body: &str| {
        let mut headers = headers.to_vec();
        headers.push(("Content-Type", "application/json"));
        http_request(address, "POST", path, &headers, body.as_bytes()).unwrap()
    };

    // No token, a wrong one, another scheme: 401, and nothing starts.
    for headers in [
        vec![],
        vec![("Authorization", "Bearer not-the-token-0123456789")],
        vec![("Authorization", "Basic cmVjZDpyZWNk")],
    ] {
        let reply = post("/api/start", &headers, r#"{"preset":"drive"}"#);
        assert_eq!(reply.status, 401, "{headers:?}: {}", reply.body);
        assert_eq!(reply.json()["error"], "unauthorized");
        assert!(!reply.body.contains(TOKEN));
    }
    assert_eq!(recd.rec_json(&["status"]), serde_json::json!([]));

    // The token starts the preset, marks and stops it.
    let reply = post(
        "/api/start",
        &[("Authorization", &bearer)],
        r#"{"preset":"drive"}"#,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["name"], "drive");
    let status = http_get(address, "/api/status").json();
    assert_eq!(status, {
        let mut live = recd.rec_json(&["status"]);
        // Times move between the two asks; the sessions and their names do not.
        for (a, b) in live
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .zip(status.as_array().unwrap())
        {
            a["elapsed_s"] = b["elapsed_s"].clone();
            a["receive_threads"] = b["receive_threads"].clone();
            a["bytes_per_s"] = b["bytes_per_s"].clone();
        }
        live
    });
    let reply = post(
        "/api/mark",
        &[("Authorization", &bearer)],
        r#"{"session":"drive","text":"over http"}"#,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    for (action, paused) in [("pause", true), ("resume", false)] {
        let reply = post(
            &format!("/api/{action}"),
            &[("Authorization", &bearer)],
            r#"{"session":"drive"}"#,
        );
        assert_eq!(reply.status, 200, "{action}: {}", reply.body);
        assert_eq!(recd.rec_json(&["status", "drive"])[0]["paused"], paused);
    }
    // A trigger takes the window of the preset its session started from; a session that
    // keeps no buffer cannot be triggered.
    let reply = post(
        "/api/start",
        &[("Authorization", &bearer)],
        r#"{"preset":"snap"}"#,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        recd.rec_json(&["status", "snap"])[0]["buffer"]["duration_s"],
        5.0
    );
    let reply = post(
        "/api/trigger",
        &[("Authorization", &bearer)],
        r#"{"session":"snap"}"#,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["response"], "triggered", "{}", reply.body);
    // A session on disk makes an incident of origin page; the answer carries it.
    let reply = post(
        "/api/trigger",
        &[("Authorization", &bearer)],
        r#"{"session":"drive"}"#,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let triggered = reply.json();
    let incident = &triggered["incident"];
    let id = incident["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{triggered}"));
    let time = triggered["time_ns"].as_u64().unwrap();
    assert_eq!(
        incident["start_ns"].as_u64(),
        Some(time - 30_000_000_000),
        "the default 30 s before: {triggered}"
    );
    assert_eq!(incident["end_ns"].as_u64(), Some(time), "{triggered}");
    let listed = http_get(address, "/api/incidents").json();
    let newest = listed["newest"].as_array().unwrap();
    let page = (newest.iter())
        .find(|i| i["id"] == id)
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(page["session"], "drive", "{listed}");
    assert_eq!(page["origin"], "page", "{listed}");
    assert_eq!(page["time_ns"].as_u64(), Some(time), "{listed}");
    assert!(page["released"].is_null(), "{listed}");
    assert!(
        (newest.iter()).any(|i| i["session"] == "snap" && i["origin"] == "buffer"),
        "the pre-trigger session's window is an incident too: {listed}"
    );
    assert_eq!(listed["by_origin"]["page"], 1, "{listed}");
    assert_eq!(listed["by_origin"]["buffer"], 1, "{listed}");
    assert_eq!(listed["pinned"], 2, "{listed}");
    assert!(listed["pinned_bytes_limit"].as_u64() > Some(0), "{listed}");
    let overview = http_get(address, "/api/overview").json();
    let ids = |newest: &Value| -> Vec<String> {
        (newest.as_array().unwrap().iter())
            .map(|i| i["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        ids(&overview["incidents"]["newest"]),
        ids(&listed["newest"]),
        "the page sees the same: {overview}"
    );
    let reply = post(
        "/api/stop",
        &[("Authorization", &bearer)],
        r#"{"session":"snap"}"#,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    for (body, status) in [
        (r#"{"session":"nope"}"#, 404),
        (r#"{"session":1}"#, 400),
        (r#"{"preset":"drive","explode":true}"#, 400),
        ("not json", 400),
    ] {
        let reply = post("/api/stop", &[("Authorization", &bearer)], body);
        assert_eq!(reply.status, status, "{body}: {}", reply.body);
    }
    let reply = post(
        "/api/start",
        &[("Authorization", &bearer)],
        r#"{"preset":"nope"}"#,
    );
    assert_eq!(reply.status, 404, "{}", reply.body);
    let reply = post(
        "/api/stop",
        &[("Authorization", &bearer)],
        r#"{"session":"drive"}"#,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(recd.rec_json(&["status"]), serde_json::json!([]));

    // Every action is logged with the client's address, refused ones too.
    let log = recd.log();
    assert_eq!(
        log.matches("HTTP control done").count(),
        9,
        "start, mark, pause, resume, trigger and stop of drive; start, trigger and stop of snap: {log}"
    );
    assert!(log.contains("client=127.0.0.1:"), "{log}");
    assert!(log.contains("HTTP control refused"), "{log}");
    assert!(!log.contains(TOKEN), "the token never reaches the log");

    // Another Host (DNS rebinding) is refused before anything else.
    let reply = http_request(
        address,
        "GET",
        "/api/status",
        &[("Host", &format!("rebind.example:{}", address.port()))],
        b"",
    )
    .unwrap();
    assert_eq!(reply.status, 421, "{}", reply.body);
    let reply = http_request(
        address,
        "GET",
        "/metrics",
        &[("Host", &format!("localhost:{}", address.port()))],
        b"",
    )
    .unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(http_get(address, "/no/such/page").status, 404);
}

#[test]
fn control_off_is_forbidden_and_reads_off_loopback_need_the_token() {
    let WithToken { recd, .. } = &with_token("listen = \"0.0.0.0:0\"\n");
    let port = recd.http_address().port();
    let address: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let bearer = format!("Bearer {TOKEN}");
    let reply = http_request(
        address,
        "POST",
        "/api/stop",
        &[("Authorization", &bearer)],
        br#"{"session":"x"}"#,
    )
    .unwrap();
    assert_eq!(reply.status, 403, "{}", reply.body);
    assert_eq!(reply.json()["error"], "control_off");
    // Listening on every address: reading needs the token; the probes and the page do not.
    assert_eq!(http_get(address, "/metrics").status, 401);
    assert_eq!(http_get(address, "/api/overview").status, 401);
    let reply = http_request(
        address,
        "GET",
        "/metrics",
        &[("Authorization", &bearer)],
        b"",
    )
    .unwrap();
    assert_eq!(reply.status, 200);
    assert!(
        reply.body.contains("recd_build_info{version="),
        "{}",
        reply.body
    );
    for open in ["/livez", "/readyz", "/"] {
        assert_eq!(http_get(address, open).status, 200, "{open}");
    }
    let page = http_get(address, "/");
    assert!(page
        .header("content-security-policy")
        .is_some_and(|csp| csp.contains("default-src 'self'")));
}

#[test]
fn unsafe_setups_are_refused_at_start_up() {
    let root = tempfile::tempdir().unwrap();
    let exposed = token_file(root.path(), 0o644);
    let cases = [
        (
            "[http]\nlisten = \"0.0.0.0:0\"\n".to_string(),
            "not a loopback address: set token_file",
        ),
        (
            "[http]\nlisten = \"127.0.0.1:0\"\nallow_control = true\n".to_string(),
            "allow_control = true needs token_file",
        ),
        (
            format!("[http]\nlisten = \"127.0.0.1:0\"\ntoken_file = {exposed:?}\n"),
            "chmod 600",
        ),
        (
            "[http]\nlisten = \"127.0.0.1\"\n".to_string(),
            "not an address and port",
        ),
    ];
    for (config, expected) in cases {
        let path = root.path().join("recd.toml");
        std::fs::write(
            &path,
            format!(
                "socket = {:?}\ndata_dir = {:?}\nstate_dir = {:?}\n{config}",
                root.path().join("recd.sock"),
                root.path().join("data"),
                root.path().join("state"),
            ),
        )
        .unwrap();
        let stderr = recd_refused(&path);
        assert!(stderr.contains(expected), "{config}: {stderr}");
        assert!(!stderr.contains(TOKEN), "{stderr}");
    }
}
