//! A real MQTT broker for the fleet tests: Debian's Mosquitto on a free port of 127.0.0.1,
//! speaking MQTT 5 over TLS only, with client certificates required; the CA, the broker's
//! certificate and the clients' are made by openssl in a directory of the broker's own.
//! The cloud's side is Mosquitto's own clients (`mosquitto_sub`), which share nothing with
//! recd's MQTT code.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::wait_until;

/// A client's certificate and key, signed by the broker's CA.
#[derive(Debug, Clone)]
pub struct ClientCert {
    /// The certificate (PEM).
    pub cert: PathBuf,
    /// Its private key (PEM), mode 0600.
    pub key: PathBuf,
}

/// A running Mosquitto; killed when dropped.
pub struct Mosquitto {
    child: Option<Child>,
    dir: tempfile::TempDir,
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    /// Whether it keeps sessions and their queued messages across restarts.
    persistence: bool,
}

impl Mosquitto {
    /// Starts a broker on a free port and waits (at most 20 s) until it accepts
    /// connections; panics with its log if it does not.
    pub fn start() -> Self {
        let mut broker = Self::prepare();
        broker.run();
        broker
    }

    /// A broker's CA and certificate, and a free port for it, not started yet: its clients
    /// can be set up before it runs ([`Mosquitto::run`]).
    pub fn prepare() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("recd-mosquitto")
            .tempdir()
            .expect("a directory for the broker");
        make_ca(dir.path());
        sign(dir.path(), "broker", Some("subjectAltName=IP:127.0.0.1"));
        Self {
            child: None,
            dir,
            port: free_port(),
            persistence: false,
        }
    }

    /// Keeps clients' sessions and the messages queued for them in its directory across
    /// restarts (`persistence true`, saved when it stops: [`Mosquitto::stop`]), as a
    /// production broker does; before [`Mosquitto::run`].
    pub fn persistent(mut self) -> Self {
        self.persistence = true;
        self
    }

    /// Starts the broker (again, after [`Mosquitto::kill`]) and waits (at most 20 s) until
    /// it accepts connections; panics with its log if it does not.
    pub fn run(&mut self) {
        self.kill();
        self.launch();
    }

    fn launch(&mut self) {
        let dir = self.dir.path();
        let config = dir.join("mosquitto.conf");
        std::fs::write(
            &config,
            format!(
                "user root\nlistener {port} 127.0.0.1\ncafile {ca}\ncertfile {cert}\nkeyfile {key}\nrequire_certificate true\nuse_identity_as_username true\npersistence {persistence}\npersistence_location {dir}/\nlog_dest file {log}\nlog_type all\n",
                port = self.port,
                persistence = self.persistence,
                dir = dir.display(),
                ca = dir.join("ca.pem").display(),
                cert = dir.join("broker.pem").display(),
                key = dir.join("broker.key").display(),
                log = dir.join("mosquitto.log").display(),
            ),
        )
        .expect("the broker's configuration written");
        let child = Command::new(binary())
            .arg("-c")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("mosquitto runs (Debian package mosquitto, scripts/setup)");
        self.child = Some(child);
        let port = self.port;
        let up = wait_until(Duration::from_secs(20), || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        // It binds its port before it loads its key: still running a moment later, it did.
        std::thread::sleep(Duration::from_millis(200));
        let running =
            (self.child.as_mut()).is_some_and(|child| matches!(child.try_wait(), Ok(None)));
        assert!(
            up && running,
            "mosquitto did not listen on {port}:\n{}",
            self.log()
        );
    }

    /// The broker's CA certificate, which recd's `ca_file` names.
    pub fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// A client certificate for `name` (its CN, the broker's username for it).
    pub fn client(&self, name: &str) -> ClientCert {
        sign(self.dir.path(), name, None)
    }

    /// `mqtts://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("mqtts://127.0.0.1:{}", self.port)
    }

    /// `rec fleet`'s options to reach this broker as `operator`: `fleet --broker URL --ca
    /// CA --cert CERT --cert-key KEY`, before the command.
    pub fn operator_args(&self, operator: &ClientCert) -> Vec<String> {
        let path = |p: &Path| p.to_string_lossy().into_owned();
        vec![
            "fleet".into(),
            "--broker".into(),
            self.url(),
            "--ca".into(),
            path(&self.ca()),
            "--cert".into(),
            path(&operator.cert),
            "--cert-key".into(),
            path(&operator.key),
        ]
    }

    /// The broker's log.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("mosquitto.log")).unwrap_or_default()
    }

    /// The payload retained on `topic` as the cloud reads it with `mosquitto_sub` over
    /// MQTT 5 (as `client`), waiting at most 5 s; `None` when nothing is retained.
    pub fn retained(&self, client: &ClientCert, topic: &str) -> Option<String> {
        let output = self
            .client_command("mosquitto_sub", client)
            .args(["--retained-only", "-C", "1", "-W", "5", "-t", topic])
            .output()
            .expect("mosquitto_sub runs (Debian package mosquitto-clients, scripts/setup)");
        let text = String::from_utf8_lossy(&output.stdout).trim().to_string();
        (output.status.success() && !text.is_empty()).then_some(text)
    }

    /// Publishes `payload` on `topic` at QoS 1 over MQTT 5 with `mosquitto_pub` (as
    /// `client`), with a response topic and correlation data when given; panics when
    /// the broker does not take it.
    pub fn publish(
        &self,
        client: &ClientCert,
        topic: &str,
        payload: &[u8],
        reply: Option<(&str, &str)>,
    ) {
        let file = tempfile::NamedTempFile::new().expect("a temporary file");
        std::fs::write(file.path(), payload).expect("the payload is written");
        let mut command = self.client_command("mosquitto_pub", client);
        command
            .args(["-q", "1", "-t", topic, "-f"])
            .arg(file.path());
        if let Some((response_topic, correlation)) = reply {
            command
                .args(["-D", "publish", "response-topic", response_topic])
                .args(["-D", "publish", "correlation-data", correlation]);
        }
        let output = command.output().expect("mosquitto_pub runs");
        assert!(
            output.status.success(),
            "mosquitto_pub: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// A `mosquitto_sub` of `client` on `topic` (QoS 1), collecting each payload as a
    /// line; subscribed when this returns (a probe it published has come back).
    pub fn subscribe(&self, client: &ClientCert, topic: &str) -> Subscription {
        let mut command = self.client_command("mosquitto_sub", client);
        command
            .args(["-q", "1", "-t", topic])
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn().expect("mosquitto_sub runs");
        let stdout = child.stdout.take().expect("its output");
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let collected = lines.clone();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                collected.lock().unwrap().push(line);
            }
        });
        let subscription = Subscription { child, lines };
        let probe = "{\"probe\":true}";
        let subscribed = wait_until(Duration::from_secs(20), || {
            self.publish(client, topic, probe.as_bytes(), None);
            subscription.wait_for(Duration::from_millis(500), |line| line == probe)
        });
        assert!(
            subscribed,
            "mosquitto_sub never got its probe on {topic}: {}",
            self.log()
        );
        subscription
    }

    /// `mosquitto_pub` or `mosquitto_sub` of `client`, to this broker over MQTT 5.
    fn client_command(&self, program: &str, client: &ClientCert) -> Command {
        let mut command = Command::new(program);
        command
            .args(["-V", "mqttv5", "-h", "127.0.0.1", "-p"])
            .arg(self.port.to_string())
            .arg("--cafile")
            .arg(self.ca())
            .arg("--cert")
            .arg(&client.cert)
            .arg("--key")
            .arg(&client.key);
        command
    }

    /// Stops the broker as an operator's restart does (SIGTERM): a persistent one saves
    /// its sessions first.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: kill(2) on the broker's own pid.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let stopped = wait_until(Duration::from_secs(20), || {
                matches!(child.try_wait(), Ok(Some(_)))
            });
            if !stopped {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }

    /// Kills the broker, as a crash or an outage would.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Mosquitto {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A running `mosquitto_sub` and the payloads it printed, one per line; killed when
/// dropped.
pub struct Subscription {
    child: Child,
    lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Subscription {
    /// The payloads so far, the subscription's probe left out.
    pub fn lines(&self) -> Vec<String> {
        let lines = self.lines.lock().unwrap();
        lines
            .iter()
            .filter(|line| !line.contains("\"probe\""))
            .cloned()
            .collect()
    }

    /// Whether a line `accept` takes arrives within `timeout`.
    pub fn wait_for(&self, timeout: Duration, mut accept: impl FnMut(&str) -> bool) -> bool {
        wait_until(timeout, || {
            self.lines.lock().unwrap().iter().any(|line| accept(line))
        })
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Mosquitto, from the PATH or where Debian puts it.
fn binary() -> PathBuf {
    let debian = Path::new("/usr/sbin/mosquitto");
    if debian.exists() {
        debian.to_path_buf()
    } else {
        PathBuf::from("mosquitto")
    }
}

/// A port of 127.0.0.1 nothing listens on now.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("a free port");
    listener.local_addr().expect("its address").port()
}

fn openssl(args: &[&str], dir: &Path) {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs");
    assert!(output.status.success(), "openssl {args:?}: {output:?}");
}

/// The CA (`ca.pem`, `ca.key`) in `dir`.
fn make_ca(dir: &Path) {
    openssl(
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=recd-test-ca",
        ],
        dir,
    );
}

/// A certificate for `name` signed by the CA in `dir` (`<name>.pem`, `<name>.key` with mode
/// 0600), with the extension `extension` when given.
fn sign(dir: &Path, name: &str, extension: Option<&str>) -> ClientCert {
    use std::os::unix::fs::PermissionsExt;
    let key = format!("{name}.key");
    let request = format!("{name}.csr");
    let cert = format!("{name}.pem");
    openssl(
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            &key,
            "-out",
            &request,
            "-subj",
            &format!("/CN={name}"),
        ],
        dir,
    );
    let extensions = format!("{name}.ext");
    std::fs::write(
        dir.join(&extensions),
        extension.unwrap_or("basicConstraints=CA:FALSE"),
    )
    .expect("the extension file written");
    openssl(
        &[
            "x509",
            "-req",
            "-in",
            &request,
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            &cert,
            "-days",
            "2",
            "-extfile",
            &extensions,
        ],
        dir,
    );
    std::fs::set_permissions(dir.join(&key), std::fs::Permissions::from_mode(0o600))
        .expect("the key made private");
    ClientCert {
        cert: dir.join(cert),
        key: dir.join(key),
    }
}
