//! The fleet's cloud reaches the vehicle through an MQTT broker (`[fleet]`, off by
//! default; the contract is [`recd_fleet`]'s). One thread of its own keeps the MQTT 5
//! link (reconnecting with backoff: a dead broker costs one log line per outage), says
//! the vehicle is online (retained; the last will says offline), and publishes the
//! holdings, retained, when they change and at most every `holdings_period`. Nothing of it
//! is in the recording's way: it reads the catalog briefly, and its queue to the broker
//! is bounded.

mod backoff;
mod holdings;
mod link;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use recd_catalog::Catalog;
use recd_fleet::{Holdings, Presence, Topics};
use rumqttc::v5::mqttbytes::v5::Packet;
use rumqttc::v5::mqttbytes::QoS;
use rumqttc::v5::{Client, Connection, Event};

use crate::config::DaemonConfig;
use crate::locks::lock;
use backoff::{Backoff, Told};

/// How long the link waits for the broker before it looks whether to publish or stop.
const TICK: Duration = Duration::from_millis(200);
/// How long a clean stop waits for the offline presence to leave.
const STOP_FLUSH: Duration = Duration::from_secs(2);

/// The fleet link's thread.
pub struct Fleet {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// The presence payload of the vehicle of `topics`.
fn presence(topics: &Topics, online: bool) -> Vec<u8> {
    let presence = Presence {
        online,
        vehicle: topics.vehicle().to_string(),
        version: online.then(|| env!("CARGO_PKG_VERSION").to_string()),
    };
    serde_json::to_vec(&presence).expect("a presence serializes")
}

impl Fleet {
    /// Starts the link `config`'s `[fleet]` asks for, reading `catalog`; `None` when
    /// `[fleet]` is absent. The vehicle is `[fleet] vehicle`, else `[upload] vehicle_id`,
    /// else the host's name. A bad setting (an unreadable CA, an exposed key) is an error
    /// that stops start-up; an unreachable broker is not.
    pub fn start(
        config: &DaemonConfig,
        catalog: Arc<Mutex<Catalog>>,
    ) -> Result<Option<Self>, String> {
        let Some(fleet) = &config.fleet else {
            return Ok(None);
        };
        let vehicle = (fleet.vehicle.clone())
            .or_else(|| (config.upload.as_ref()).and_then(|upload| upload.vehicle_id.clone()))
            .unwrap_or_else(crate::host::hostname);
        let topics = Topics::new(&fleet.prefix, &vehicle).map_err(|e| format!("[fleet]: {e}"))?;
        let options = link::options(fleet, &topics)?;
        let (client, connection) = Client::new(options, link::REQUEST_CAPACITY);
        let stop = Arc::new(AtomicBool::new(false));
        let mut publisher = Publisher {
            client,
            topics,
            catalog,
            period: fleet.holdings_period,
            bound_bytes: config.max_total_size.map(|size| size.as_u64()),
            data_dir: config.data_dir.clone(),
            published: None,
            last_look: None,
            connected: false,
        };
        tracing::info!(broker = %fleet.broker, vehicle, "the fleet reaches this vehicle over MQTT");
        let broker = fleet.broker.clone();
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("recd-fleet".into())
            .spawn(move || {
                if let Err(refused) = recd_priority::lower_to_background() {
                    tracing::debug!("the fleet link runs at normal priority: {refused}");
                }
                run(connection, &mut publisher, &broker, &stopping);
            })
            .map_err(|e| format!("cannot start the fleet thread: {e}"))?;
        Ok(Some(Self {
            stop,
            thread: Some(thread),
        }))
    }

    /// Says the vehicle is offline (retained), disconnects and stops the thread.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What the thread publishes, and what it published last.
struct Publisher {
    client: Client,
    topics: Topics,
    catalog: Arc<Mutex<Catalog>>,
    period: Duration,
    bound_bytes: Option<u64>,
    data_dir: std::path::PathBuf,
    published: Option<Holdings>,
    /// When the holdings were last read from the catalog (published or not).
    last_look: Option<Instant>,
    connected: bool,
}

impl Publisher {
    /// The link is up: the vehicle is online, and its holdings go out at once.
    fn on_connect(&mut self) {
        self.connected = true;
        self.published = None;
        self.last_look = None;
        let online = presence(&self.topics, true);
        if let Err(error) =
            (self.client).try_publish(self.topics.online(), QoS::AtLeastOnce, true, online)
        {
            tracing::debug!("the online presence waits: {error}");
        }
    }

    /// Reads the holdings once a period and publishes them when they changed: an idle
    /// vehicle costs one catalog read a period, and the broker nothing.
    fn publish_holdings(&mut self) {
        if !self.connected || self.last_look.is_some_and(|at| at.elapsed() < self.period) {
            return;
        }
        self.last_look = Some(Instant::now());
        let context = holdings::Context {
            vehicle: self.topics.vehicle().to_string(),
            now_ns: crate::clock::now_ns().max(0) as u64,
            bound_bytes: self.bound_bytes,
            free_bytes: recd_storage::space_of(&self.data_dir)
                .ok()
                .map(|space| space.available),
        };
        let now = match holdings::gather(&lock(&self.catalog), context) {
            Ok(now) => now,
            Err(error) => {
                tracing::warn!("cannot read the holdings from the catalog: {error}");
                return;
            }
        };
        if !holdings::changed(self.published.as_ref(), &now) {
            return;
        }
        let payload = serde_json::to_vec(&now).expect("holdings serialize");
        match (self.client).try_publish(self.topics.holdings(), QoS::AtLeastOnce, true, payload) {
            Ok(()) => self.published = Some(now),
            Err(error) => {
                // The queue to the broker is full: try again at the next tick.
                self.last_look = None;
                tracing::debug!("the holdings wait: {error}");
            }
        }
    }

    /// A clean stop: offline (retained), then disconnect.
    fn say_offline(&mut self, connection: &mut Connection) {
        if !self.connected {
            return;
        }
        let offline = presence(&self.topics, false);
        if (self.client)
            .try_publish(self.topics.online(), QoS::AtLeastOnce, true, offline)
            .is_err()
        {
            return;
        }
        let deadline = Instant::now() + STOP_FLUSH;
        while Instant::now() < deadline {
            match connection.recv_timeout(TICK) {
                Ok(Ok(Event::Incoming(Packet::PubAck(_)))) => break,
                Ok(Ok(_)) | Err(_) => {}
                Ok(Err(_)) => return,
            }
        }
        let _ = self.client.try_disconnect();
        let _ = connection.recv_timeout(TICK);
    }
}

/// The thread's loop: drives the connection, publishes, waits after failures, until `stop`.
fn run(mut connection: Connection, publisher: &mut Publisher, broker: &str, stop: &AtomicBool) {
    let started = Instant::now();
    let mut backoff = Backoff::default();
    while !stop.load(Ordering::Relaxed) {
        match connection.recv_timeout(TICK) {
            Ok(Ok(Event::Incoming(Packet::ConnAck(_)))) => {
                if let Told::Ended(seconds) = backoff.connected(started.elapsed().as_secs_f64()) {
                    tracing::info!(
                        broker,
                        "the fleet's broker is reachable again after {seconds:.0} s"
                    );
                }
                publisher.on_connect();
            }
            Ok(Ok(_)) | Err(_) => {}
            Ok(Err(error)) => {
                publisher.connected = false;
                let (wait, told) = backoff.failed(started.elapsed().as_secs_f64());
                if told == Told::Began {
                    tracing::warn!(broker, "the fleet's broker cannot be reached: {error}; recd tries again, waiting up to a minute between tries (recording goes on)");
                }
                let until = Instant::now() + wait;
                while Instant::now() < until && !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(TICK);
                }
            }
        }
        publisher.publish_holdings();
    }
    publisher.say_offline(&mut connection);
}
