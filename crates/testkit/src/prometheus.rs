//! A real Prometheus (`/usr/bin/prometheus`, installed by scripts/setup) scraping one
//! target every second, in a directory of its own, asked through its HTTP API.

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::http::http_request;
use crate::wait_until;

/// How often Prometheus scrapes its target.
pub const SCRAPE_INTERVAL: Duration = Duration::from_secs(1);

/// The job name of the one target.
const JOB: &str = "recd";

/// Its log, in its directory.
const LOG: &str = "prometheus.log";

/// How long Prometheus may take to answer `/-/ready` after it starts.
const READY_LIMIT: Duration = Duration::from_secs(30);

/// A Prometheus scraping `target`'s `/metrics` every [`SCRAPE_INTERVAL`] (job `recd`),
/// listening on a free loopback port, its configuration, data and log in a temporary
/// directory; it is killed and the directory removed on drop.
pub struct Prometheus {
    child: Option<Child>,
    dir: tempfile::TempDir,
    /// Where its HTTP API listens.
    pub address: SocketAddr,
}

impl Prometheus {
    /// Starts Prometheus scraping `target` and waits (bounded) until `/-/ready` answers 200.
    pub fn scraping(target: SocketAddr) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("recd-prometheus")
            .tempdir()
            .expect("a temporary directory");
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: {interval}s\n  scrape_timeout: {interval}s\n  \
                 evaluation_interval: {interval}s\nscrape_configs:\n  - job_name: {JOB}\n    \
                 metrics_path: /metrics\n    static_configs:\n      - targets: [\"{target}\"]\n",
                interval = SCRAPE_INTERVAL.as_secs(),
            ),
        )
        .expect("prometheus.yml written");
        // The port is found free and then given up, so another process may take it first:
        // Prometheus then exits at once, and the next try takes another.
        for tries in 1.. {
            let address = free_loopback_address();
            let mut child = spawn(dir.path(), &config, address);
            match wait_ready(&mut child, address, &dir.path().join(LOG)) {
                Ok(()) => {
                    return Self {
                        child: Some(child),
                        dir,
                        address,
                    }
                }
                Err(why) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    if tries == 3 || !why.contains("address already in use") {
                        panic!("Prometheus did not get ready: {why}");
                    }
                }
            }
        }
        unreachable!("the loop returns or panics")
    }

    /// What Prometheus logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join(LOG)).unwrap_or_default()
    }

    /// The `data.result` array of an instant query (`/api/v1/query`) evaluated now;
    /// panics on an error.
    pub fn query(&self, query: &str) -> serde_json::Value {
        let form = format!("query={}", form_encode(query));
        let reply = http_request(
            self.address,
            "POST",
            "/api/v1/query",
            &[("Content-Type", "application/x-www-form-urlencoded")],
            form.as_bytes(),
        )
        .unwrap_or_else(|e| panic!("querying Prometheus for {query}: {e}"));
        let answer = reply.json();
        assert!(
            reply.status == 200 && answer["status"] == "success",
            "Prometheus refused {query}: {} {answer}",
            reply.status
        );
        answer["data"]["result"].clone()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl std::fmt::Debug for Prometheus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (f.debug_struct("Prometheus"))
            .field("address", &self.address)
            .field("dir", &self.dir.path())
            .finish()
    }
}

/// Waits (bounded) until Prometheus answers `/-/ready` with 200; why not, else.
fn wait_ready(child: &mut Child, address: SocketAddr, log: &Path) -> Result<(), String> {
    let mut exited = None;
    let ready = wait_until(READY_LIMIT, || {
        if let Some(status) = child.try_wait().expect("Prometheus' status") {
            exited = Some(status);
            return true;
        }
        (http_request(address, "GET", "/-/ready", &[], b"")).is_ok_and(|reply| reply.status == 200)
    });
    let log = || std::fs::read_to_string(log).unwrap_or_default();
    match (ready, exited) {
        (true, None) => Ok(()),
        (_, Some(status)) => Err(format!("it exited ({status}); log:\n{}", log())),
        (false, None) => Err(format!(
            "/-/ready did not answer 200 within {READY_LIMIT:?}; log:\n{}",
            log()
        )),
    }
}

fn spawn(dir: &Path, config: &Path, address: SocketAddr) -> Child {
    let log = std::fs::File::create(dir.join(LOG)).expect("log file");
    let data = dir.join("data");
    Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!("--web.listen-address={address}"))
        .arg(format!("--storage.tsdb.path={}", data.display()))
        .arg("--storage.tsdb.retention.time=1h")
        .arg("--log.level=info")
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("log file"))
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| {
            panic!("prometheus does not start ({e}): install it with scripts/setup")
        })
}

/// A loopback address whose port was free a moment ago.
fn free_loopback_address() -> SocketAddr {
    (TcpListener::bind("127.0.0.1:0"))
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
}

/// `text` as a value of `application/x-www-form-urlencoded`.
fn form_encode(text: &str) -> String {
    let mut encoded = String::new();
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                encoded.push(byte as char)
            }
            _ => encoded += &format!("%{byte:02X}"),
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::form_encode;

    #[test]
    fn form_encoding_escapes_all_but_unreserved_characters() {
        assert_eq!(
            form_encode("up{job=\"recd\"} == 1"),
            "up%7Bjob%3D%22recd%22%7D%20%3D%3D%201"
        );
    }
}
