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
mod progress;
mod requests;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use recd_catalog::Catalog;
use recd_fleet::{Holdings, Presence, Topics};
use rumqttc::v5::mqttbytes::v5::{Packet, Publish, PublishProperties};
use rumqttc::v5::mqttbytes::QoS;
use rumqttc::v5::{Client, Connection, Event};

use crate::locks::lock;
use crate::sessions::Sessions;
use backoff::{Backoff, Told};
use requests::{Desk, Outgoing, Policy};

pub use requests::Tally;

/// How long the link waits for the broker before it looks whether to publish or stop.
const TICK: Duration = Duration::from_millis(200);
/// How long a clean stop waits for the offline presence to leave.
const STOP_FLUSH: Duration = Duration::from_secs(2);
/// How often the open window requests are looked at for their next reply.
const PROGRESS_PERIOD: Duration = Duration::from_secs(1);

/// The fleet link's thread.
pub struct Fleet {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// What the requests did (`/metrics`).
    pub tally: Arc<Mutex<Tally>>,
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
    /// Starts the link the configuration of `sessions` asks for (`[fleet]`), reading
    /// `catalog`; `None` when `[fleet]` is absent. The vehicle is `[fleet] vehicle`, else
    /// `[upload] vehicle_id`, else the host's name. A bad setting (an unreadable CA, an
    /// exposed key, a request key that is not one) is an error that stops start-up; an
    /// unreachable broker is not.
    pub fn start(
        sessions: Arc<Sessions>,
        catalog: Arc<Mutex<Catalog>>,
    ) -> Result<Option<Self>, String> {
        let config = sessions.config();
        let Some(fleet) = &config.fleet else {
            return Ok(None);
        };
        let vehicle = (fleet.vehicle.clone())
            .or_else(|| (config.upload.as_ref()).and_then(|upload| upload.vehicle_id.clone()))
            .unwrap_or_else(crate::host::hostname);
        let topics = Topics::new(&fleet.prefix, &vehicle).map_err(|e| format!("[fleet]: {e}"))?;
        let policy = Policy {
            keys: fleet.request_keys()?,
            allow_unsigned: fleet.allow_unsigned,
            max_age_ns: u64::try_from(fleet.max_request_age.as_nanos()).unwrap_or(u64::MAX),
        };
        if policy.allow_unsigned {
            tracing::warn!("[fleet] allow_unsigned: anyone who can publish on the broker can pull windows and change uploads; for a test bench only");
        } else if policy.keys.is_empty() {
            tracing::warn!("[fleet] has no request_keys: every request from the cloud is refused until the fleet's public key is listed there");
        }
        let options = link::options(fleet, &topics)?;
        let (client, connection) = Client::new(options, link::REQUEST_CAPACITY);
        let stop = Arc::new(AtomicBool::new(false));
        let tally = Arc::new(Mutex::new(requests::new_tally()));
        let desk = Desk {
            vehicle: vehicle.clone(),
            default_replies: topics.replies(),
            policy,
            catalog: catalog.clone(),
            sessions: sessions.clone(),
            tally: tally.clone(),
        };
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
            desk,
            uploading: config.upload.is_some(),
            last_progress: None,
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
            tally,
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
    /// Takes the requests.
    desk: Desk,
    /// Whether `[upload]` carries a window's files on after its cut.
    uploading: bool,
    /// When the open requests were last looked at.
    last_progress: Option<Instant>,
}

impl Publisher {
    /// The link is up: the vehicle is online, and its holdings go out at once.
    fn on_connect(&mut self) {
        self.connected = true;
        self.published = None;
        self.last_look = None;
        // The session keeps the subscriptions; asking again costs nothing and covers a
        // session the broker forgot. Asked before the presence goes out: the broker takes
        // a client's packets in order, so a cloud that sees the vehicle online can ask it
        // at once.
        for topic in [self.topics.requests(), self.topics.all_requests()] {
            if let Err(error) = self.client.try_subscribe(topic, QoS::AtLeastOnce) {
                tracing::debug!("the subscription to requests waits: {error}");
            }
        }
        let online = presence(&self.topics, true);
        if let Err(error) =
            (self.client).try_publish(self.topics.online(), QoS::AtLeastOnce, true, online)
        {
            tracing::debug!("the online presence waits: {error}");
        }
    }

    /// A request arrived: it is taken (or refused) and answered, then acknowledged, so
    /// that the broker delivers again one that recd did not get to record.
    fn on_request(&mut self, publish: &Publish) {
        let properties = publish.properties.as_ref();
        let response_topic = properties.and_then(|p| p.response_topic.clone());
        let correlation = properties.and_then(|p| p.correlation_data.as_ref().map(|c| c.to_vec()));
        let now_ns = crate::clock::now_ns().max(0) as u64;
        let outgoing = self
            .desk
            .take(&publish.payload, response_topic, correlation, now_ns);
        self.send(&outgoing);
        if let Err(error) = self.client.try_ack(publish) {
            tracing::debug!("the request's acknowledgement waits: {error}");
        }
    }

    /// Sends `outgoing`; whether it was queued for the broker.
    fn send(&self, outgoing: &Outgoing) -> bool {
        let properties = PublishProperties {
            correlation_data: outgoing.correlation.clone().map(Into::into),
            content_type: Some("application/json".to_string()),
            ..PublishProperties::default()
        };
        let payload = serde_json::to_vec(&outgoing.reply).expect("a reply serializes");
        match (self.client).try_publish_with_properties(
            outgoing.topic.clone(),
            QoS::AtLeastOnce,
            false,
            payload,
            properties,
        ) {
            Ok(()) => true,
            Err(error) => {
                tracing::debug!("a reply waits: {error}");
                false
            }
        }
    }

    /// Sends the next reply of each open window request whose state moved on (cut,
    /// uploaded, failed), at most every [`PROGRESS_PERIOD`].
    fn follow_requests(&mut self) {
        if !self.connected
            || self
                .last_progress
                .is_some_and(|at| at.elapsed() < PROGRESS_PERIOD)
        {
            return;
        }
        self.last_progress = Some(Instant::now());
        let due = progress::next_replies(&lock(&self.catalog), &self.desk.vehicle, self.uploading);
        let due = match due {
            Ok(due) => due,
            Err(error) => {
                tracing::warn!("cannot read the fleet's open requests: {error}");
                return;
            }
        };
        for outgoing in due {
            if !self.send(&outgoing) {
                return;
            }
            let reply = &outgoing.reply;
            let id = reply.id.as_deref().unwrap_or_default();
            let state = requests::state_name(reply.state);
            tracing::info!(id, state, "fleet request moved on");
            if let Err(error) = lock(&self.catalog).settle_fleet_request(id, &state, reply.last) {
                tracing::warn!(id, "cannot record where the fleet request stands: {error}");
            }
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
            Ok(Ok(Event::Incoming(Packet::Publish(publish)))) => publisher.on_request(&publish),
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
        publisher.follow_requests();
    }
    publisher.say_offline(&mut connection);
}
