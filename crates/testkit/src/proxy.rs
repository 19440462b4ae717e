//! A TCP forwarder on 127.0.0.1 between a client under test and its server: it counts the
//! bytes the client really sent, can cut every connection (and refuse new ones) to
//! simulate a network loss, and can damage what the client sends. Plain threads, two per
//! connection and one accepting.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long the proxy tries to reach its upstream for a new connection before closing it.
const CONNECT_LIMIT: Duration = Duration::from_secs(5);

/// How far into a connection's upstream bytes damage starts: past any request's headers,
/// in the body of a large one.
const DAMAGE_AFTER: u64 = 1 << 20;

/// Only reads this large are damaged: a part's body, not a small request's headers.
const MIN_DAMAGED_READ: usize = 16 * 1024;

/// A TCP forwarder from a port of 127.0.0.1 to `upstream`; its threads end when it is
/// dropped.
pub struct TcpProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

/// What the proxy's threads share.
struct Shared {
    upstream: SocketAddr,
    /// Client-to-server bytes received (see [`TcpProxy::bytes_up`]).
    bytes_up: AtomicU64,
    /// Reads still to damage (see [`TcpProxy::damage_up`]), and those damaged.
    to_damage: AtomicU64,
    damaged: AtomicU64,
    /// Set on drop: the acceptor stops.
    stopping: AtomicBool,
    state: Mutex<State>,
}

struct State {
    /// While set, every new connection is closed at once.
    cut: bool,
    /// Both ends of each open connection (clones, for shutting them down), by id.
    connections: HashMap<u64, [TcpStream; 2]>,
    next_id: u64,
    /// The forwarding threads (finished ones pruned now and then).
    pumps: Vec<JoinHandle<()>>,
}

impl TcpProxy {
    /// Starts forwarding connections to a fresh port of 127.0.0.1 to `upstream`.
    pub fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("the proxy's port");
        let addr = listener.local_addr().expect("the proxy's address");
        let shared = Arc::new(Shared {
            upstream,
            bytes_up: AtomicU64::new(0),
            to_damage: AtomicU64::new(0),
            damaged: AtomicU64::new(0),
            stopping: AtomicBool::new(false),
            state: Mutex::new(State {
                cut: false,
                connections: HashMap::new(),
                next_id: 0,
                pumps: Vec::new(),
            }),
        });
        let acceptor = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("tcp-proxy".to_string())
                .spawn(move || accept(&listener, &shared))
                .expect("the proxy's thread starts")
        };
        Self {
            addr,
            shared,
            acceptor: Some(acceptor),
        }
    }

    /// Where clients connect (127.0.0.1 and the proxy's port).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`: the proxy as an HTTP endpoint.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Client-to-server bytes the proxy received since the start or the last
    /// [`TcpProxy::reset_counter`]: each is counted before it is passed on, so once the
    /// server answered a request, every byte of it is in the count.
    pub fn bytes_up(&self) -> u64 {
        self.shared.bytes_up.load(Ordering::SeqCst)
    }

    /// Sets [`TcpProxy::bytes_up`] back to 0.
    pub fn reset_counter(&self) {
        self.shared.bytes_up.store(0, Ordering::SeqCst);
    }

    /// Flips one byte in each of the next `reads` client-to-server reads (of 16 KiB or
    /// more) that come at least 1 MiB into their connection: the body of a large request
    /// arrives damaged, as over a faulty link (TCP's own checksum passed).
    pub fn damage_up(&self, reads: u64) {
        self.shared.to_damage.store(reads, Ordering::SeqCst);
    }

    /// How many reads [`TcpProxy::damage_up`] damaged so far.
    pub fn damaged(&self) -> u64 {
        self.shared.damaged.load(Ordering::SeqCst)
    }

    /// How many connections are open through the proxy.
    pub fn connections(&self) -> usize {
        self.shared.lock().connections.len()
    }

    /// Simulates a network loss: closes every open connection (both ends see the stream
    /// end, and writes fail soon after) and closes new ones at once, until
    /// [`TcpProxy::restore`].
    pub fn cut(&self) {
        let mut state = self.shared.lock();
        state.cut = true;
        for ends in state.connections.values() {
            shut_down(ends);
        }
    }

    /// Forwards new connections again after [`TcpProxy::cut`].
    pub fn restore(&self) {
        self.shared.lock().cut = false;
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        self.cut();
        // Wakes the acceptor, blocked in accept(2), to see that it must stop.
        let woken = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)).is_ok();
        if let Some(acceptor) = self.acceptor.take() {
            if woken {
                let _ = acceptor.join();
            }
        }
        let pumps = std::mem::take(&mut self.shared.lock().pumps);
        for pump in pumps {
            let _ = pump.join();
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether this read is one to damage (counted if so).
    fn take_damage(&self) -> bool {
        let taken = self
            .to_damage
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                left.checked_sub(1)
            })
            .is_ok();
        if taken {
            self.damaged.fetch_add(1, Ordering::SeqCst);
        }
        taken
    }
}

/// Accepts connections until the proxy is dropped, forwarding each to the upstream (or
/// closing it while the proxy is cut).
fn accept(listener: &TcpListener, shared: &Arc<Shared>) {
    for client in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let client = match client {
            Ok(client) => client,
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(_) => {
                // Out of descriptors, say: let connections end before the next one.
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        if shared.lock().cut {
            continue; // Dropped: closed.
        }
        let Ok(server) = TcpStream::connect_timeout(&shared.upstream, CONNECT_LIMIT) else {
            continue;
        };
        let _ = client.set_nodelay(true);
        let _ = server.set_nodelay(true);
        if let Err(error) = forward(shared, client, server) {
            eprintln!("tcp proxy: cannot forward a connection: {error}");
        }
    }
}

/// Registers a connection and starts its two forwarding threads.
fn forward(shared: &Arc<Shared>, client: TcpStream, server: TcpStream) -> std::io::Result<()> {
    let mut state = shared.lock();
    if state.cut {
        return Ok(()); // Cut meanwhile: both ends are closed as they drop.
    }
    let id = state.next_id;
    state.next_id += 1;
    state
        .connections
        .insert(id, [client.try_clone()?, server.try_clone()?]);
    let open_directions = Arc::new(AtomicUsize::new(2));
    let directions = [
        (client.try_clone()?, server.try_clone()?, true),
        (server, client, false),
    ];
    for (from, to, up) in directions {
        let shared = Arc::clone(shared);
        let open_directions = Arc::clone(&open_directions);
        let pump = std::thread::Builder::new()
            .name("tcp-proxy-pump".to_string())
            .spawn(move || {
                pump(from, to, up.then_some(&*shared));
                if open_directions.fetch_sub(1, Ordering::SeqCst) == 1 {
                    shared.lock().connections.remove(&id);
                }
            })?;
        state.pumps.push(pump);
    }
    state.pumps.retain(|pump| !pump.is_finished());
    Ok(())
}

/// Copies `from` to `to` until `from` ends (then ends `to`'s direction too) or fails
/// (then shuts both down); client-to-server (`up`), counting what it read and damaging
/// what it was asked to.
fn pump(mut from: TcpStream, mut to: TcpStream, up: Option<&Shared>) {
    let mut buffer = vec![0u8; 64 * 1024];
    let mut offset = 0u64;
    loop {
        match from.read(&mut buffer) {
            Ok(0) => {
                let _ = to.shutdown(Shutdown::Write);
                return;
            }
            Ok(read) => {
                // Counted before it is passed on: once the server answers, what it
                // answers to is counted.
                if let Some(shared) = up {
                    shared.bytes_up.fetch_add(read as u64, Ordering::SeqCst);
                    offset += read as u64;
                    if offset > DAMAGE_AFTER && read >= MIN_DAMAGED_READ && shared.take_damage() {
                        buffer[read / 2] ^= 0xff;
                    }
                }
                if to.write_all(&buffer[..read]).is_err() {
                    break;
                }
            }
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    shut_down(&[from, to]);
}

fn shut_down(ends: &[TcpStream]) {
    for end in ends {
        let _ = end.shutdown(Shutdown::Both);
    }
}
