//! Message definitions asked of the network: a thread that calls a publishing node's
//! `~/get_type_description` (type_description_interfaces, ROS 2 Iron and later) for a type
//! no `.msg` file describes, checks the reply against the type hash the writer announced,
//! and builds the `ros2msg` definition from the sources it sent.
//!
//! Which node to ask: the nodes of the writer's participant that serve the service, found
//! in DDS discovery as readers of `rq/<node>/get_type_descriptionRequest` with the
//! writer's GUID prefix. Endpoint discovery is all it takes (no `ros_discovery_info`
//! reader, which would have to follow every participant's node list): rmw_fastrtps and
//! rmw_cyclonedds alike name a node's service topics so, and a node only answers for types
//! its own endpoints use, so every node of the participant is asked in turn until one
//! gives the type. The writer's topic may be discovered before the node's service: the
//! readers are looked for again until one shows up or the bound passes.
//!
//! The call is rmw_fastrtps' service mapping (ros2-client's `Enhanced`: the request id in
//! the samples' related sample identity, no header in the payload), as ROS 2's default
//! middleware serves it; a request is sent again each [`RESEND`] until the node answers,
//! which also covers a reply sent before recd's reader matched the node's writer. Each
//! node gets [`NODE_BOUND`]; a type no node gives is reported with why.
//!
//! This thread is the only one that waits on the network: the discovery thread hands it
//! jobs and takes results, woken by [`Wake`]; the receive thread never sees it.

use std::path::PathBuf;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ros2_client::{Client, Context as RosContext, Node, RmwRequestId};
use rustdds::{DomainParticipant, GUID};

use super::fetch_wire::{definition_of, GetTypeDescriptionRequest, GetTypeDescriptionResponse};
use super::node_services::{calling_node, client_of, node_serving};
use super::type_cache;
use crate::source::exchange::Wake;

/// How long one node has to answer.
pub(super) const NODE_BOUND: Duration = Duration::from_secs(5);
/// How long the writer's node may take to appear in discovery (its service readers are
/// made before its publishers, but discovery may bring them later).
const FIND_BOUND: Duration = Duration::from_secs(3);
/// How long a type may take in all, however many nodes its participant has: the topic
/// waits for it.
pub(super) const JOB_BOUND: Duration = Duration::from_secs(10);
/// How often an unanswered request is sent again.
const RESEND: Duration = Duration::from_millis(500);
/// How often the thread looks at its calls.
const TICK: Duration = Duration::from_millis(20);
/// The name of the thread.
const THREAD_NAME: &str = "recd-dds-types";

/// A participant's GUID prefix (the first 12 bytes of its endpoints' GUIDs).
pub(super) type Prefix = [u8; 12];

/// The participant of an endpoint.
pub(super) fn prefix_of(guid: GUID) -> Prefix {
    let bytes = guid.to_bytes();
    let mut prefix = [0; 12];
    prefix.copy_from_slice(&bytes[..12]);
    prefix
}

/// A type to fetch: its ROS name, the hash its writer announced, and the writer's
/// participant.
pub(super) struct Job {
    pub ros_type: String,
    pub hash: String,
    pub participant: Prefix,
}

/// What came of a [`Job`]: the definition, or why there is none.
pub(super) struct Fetched {
    pub hash: String,
    pub definition: Result<String, String>,
}

/// The discovery thread's handle on the fetch thread.
pub(super) struct TypeFetcher {
    jobs: Option<mpsc::Sender<Job>>,
    results: mpsc::Receiver<Fetched>,
    thread: Option<JoinHandle<()>>,
}

impl TypeFetcher {
    /// Starts the thread, which asks through `participant`, keeps what it learns in
    /// `cache` (when there is one) and wakes `wake` after each result.
    pub fn start(
        participant: DomainParticipant,
        cache: Option<PathBuf>,
        wake: impl Wake + Send + 'static,
    ) -> std::io::Result<Self> {
        let (jobs, job_rx) = mpsc::channel();
        let (result_tx, results) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name(THREAD_NAME.into())
            .spawn(move || {
                Calls::new(participant, cache, result_tx, wake).run(job_rx);
            })?;
        Ok(Self {
            jobs: Some(jobs),
            results,
            thread: Some(thread),
        })
    }

    /// Asks for a type; its [`Fetched`] comes later through [`Self::take`].
    pub fn ask(&self, job: Job) {
        if let Some(jobs) = &self.jobs {
            let _ = jobs.send(job);
        }
    }

    /// A result, if one came.
    pub fn take(&self) -> Option<Fetched> {
        self.results.try_recv().ok()
    }
}

impl Drop for TypeFetcher {
    /// Ends the calls under way and waits for the thread (it lets go of the participant).
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The nodes (`/ns/node`) that serve `~/get_type_description` on the participant with
/// `prefix`, from the readers discovery knows (GUID, topic).
pub(super) fn nodes_serving<'a>(
    prefix: Prefix,
    readers: impl IntoIterator<Item = (Prefix, &'a str)>,
) -> Vec<String> {
    let mut nodes: Vec<String> = readers
        .into_iter()
        .filter(|(reader, _)| *reader == prefix)
        .filter_map(|(_, topic)| node_serving(topic, "get_type_description"))
        .collect();
    nodes.sort();
    nodes.dedup();
    nodes
}

/// One call to one node.
struct Call {
    node: String,
    client: Client<GetTypeDescriptionRequest, GetTypeDescriptionResponse>,
    /// The requests sent (replies to other clients of the service are not ours).
    sent: Vec<RmwRequestId>,
    last_sent: Option<Instant>,
    until: Instant,
}

/// A job under way: the nodes left to ask, the call being made, what failed so far.
struct Active {
    job: Job,
    find_until: Instant,
    until: Instant,
    asked: Vec<String>,
    call: Option<Call>,
    failures: Vec<String>,
}

/// The fetch thread's state: the ROS node it calls from (made at the first job) and the
/// jobs under way.
struct Calls<W> {
    participant: DomainParticipant,
    cache: Option<PathBuf>,
    results: mpsc::Sender<Fetched>,
    wake: W,
    node: Option<Node>,
    active: Vec<Active>,
}

impl<W: Wake> Calls<W> {
    fn new(
        participant: DomainParticipant,
        cache: Option<PathBuf>,
        results: mpsc::Sender<Fetched>,
        wake: W,
    ) -> Self {
        Self {
            participant,
            cache,
            results,
            wake,
            node: None,
            active: Vec::new(),
        }
    }

    fn run(mut self, jobs: mpsc::Receiver<Job>) {
        loop {
            let next = if self.active.is_empty() {
                jobs.recv()
                    .map_err(|_| mpsc::RecvTimeoutError::Disconnected)
            } else {
                jobs.recv_timeout(TICK)
            };
            match next {
                Ok(job) => self.active.push(Active {
                    job,
                    find_until: Instant::now() + FIND_BOUND,
                    until: Instant::now() + JOB_BOUND,
                    asked: Vec::new(),
                    call: None,
                    failures: Vec::new(),
                }),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
            self.step();
        }
    }

    /// Moves every job on: a reply taken, a request sent, the next node asked, or the
    /// job finished.
    fn step(&mut self) {
        let mut readers: Option<Vec<(Prefix, String)>> = None;
        let mut index = 0;
        while index < self.active.len() {
            let outcome = self.step_one(index, &mut readers);
            match outcome {
                Some(definition) => {
                    let active = self.active.swap_remove(index);
                    if let (Ok(text), Some(dir)) = (&definition, &self.cache) {
                        // The definition holds without the cache; a full disk only costs
                        // the next session a call.
                        let _ = type_cache::store(dir, &active.job.hash, text);
                    }
                    let _ = self.results.send(Fetched {
                        hash: active.job.hash,
                        definition,
                    });
                    self.wake.wake();
                }
                None => index += 1,
            }
        }
    }

    /// The outcome of job `index` once it has one.
    fn step_one(
        &mut self,
        index: usize,
        readers: &mut Option<Vec<(Prefix, String)>>,
    ) -> Option<Result<String, String>> {
        let now = Instant::now();
        let active = &self.active[index];
        if now >= active.until {
            let mut failures = active.failures.clone();
            if let Some(call) = &active.call {
                failures.push(format!("{} did not answer in time", call.node));
            }
            failures.push(format!("gave up after {} s", JOB_BOUND.as_secs()));
            return Some(Err(failures.join("; ")));
        }
        if self.active[index].call.is_none() {
            let participant = &self.participant;
            let readers = readers.get_or_insert_with(|| {
                participant
                    .discovered_readers()
                    .iter()
                    .map(|r| {
                        let topic = &r.subscription_topic_data;
                        (prefix_of(topic.key()), topic.topic_name().clone())
                    })
                    .collect()
            });
            let active = &self.active[index];
            let next = nodes_serving(
                active.job.participant,
                readers.iter().map(|(p, t)| (*p, t.as_str())),
            )
            .into_iter()
            .find(|node| !active.asked.contains(node));
            match next {
                Some(node) => {
                    let call = self.call(&node);
                    let active = &mut self.active[index];
                    active.asked.push(node.clone());
                    match call {
                        Ok(call) => active.call = Some(call),
                        Err(reason) => active.failures.push(format!("{node}: {reason}")),
                    }
                    return None;
                }
                None if !active.asked.is_empty() => return Some(Err(active.failures.join("; "))),
                None if now >= active.find_until => {
                    return Some(Err(format!(
                        "no node of the writer's participant serves ~/get_type_description \
                         (waited {} s)",
                        FIND_BOUND.as_secs()
                    )))
                }
                None => return None,
            }
        }
        let active = &mut self.active[index];
        let call = active.call.as_mut()?;
        match answer(call, &active.job) {
            Some(Ok(text)) => return Some(Ok(text)),
            Some(Err(reason)) => {
                active.failures.push(format!("{}: {reason}", call.node));
                active.call = None;
                return None;
            }
            None => {}
        }
        if now >= call.until {
            active.failures.push(format!(
                "{} did not answer ~/get_type_description within {} s",
                call.node,
                NODE_BOUND.as_secs()
            ));
            active.call = None;
            return None;
        }
        if call.last_sent.is_none_or(|at| now >= at + RESEND) {
            let request = GetTypeDescriptionRequest {
                type_name: active.job.ros_type.clone(),
                type_hash: active.job.hash.clone(),
                include_type_sources: true,
            };
            if let Ok(id) = call.client.send_request(request) {
                call.sent.push(id);
            }
            call.last_sent = Some(now);
        }
        None
    }

    /// A client of `node`'s `~/get_type_description`, on recd's ROS node (made once).
    fn call(&mut self, node: &str) -> Result<Call, String> {
        if self.node.is_none() {
            let context = RosContext::from_domain_participant(self.participant.clone())
                .map_err(|e| format!("cannot make a ROS 2 context: {e:?}"))?;
            self.node = Some(calling_node(&context, "recd_types")?);
        }
        let ros_node = self.node.as_mut().expect("made above");
        let client = client_of(
            ros_node,
            node,
            "get_type_description",
            ("type_description_interfaces", "GetTypeDescription"),
        )?;
        Ok(Call {
            node: node.to_string(),
            client,
            sent: Vec::new(),
            last_sent: None,
            until: Instant::now() + NODE_BOUND,
        })
    }
}

/// The definition from `call`'s reply, if one came: checked against the job's hash and
/// built from the sources.
fn answer(call: &Call, job: &Job) -> Option<Result<String, String>> {
    // Any reply to one of the requests sent will do: they are all the same question.
    let mut reply = None;
    while let Ok(Some((id, response))) = call.client.receive_response() {
        if call.sent.contains(&id) {
            reply = Some(response);
        }
    }
    Some(definition_of(reply?, &job.ros_type, &job.hash))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nodes_of_the_writers_participant_that_serve_types() {
        let ours = [1; 12];
        let theirs = [2; 12];
        let readers = [
            (ours, "rq/talker/get_type_descriptionRequest"),
            (ours, "rq/ns/listener/get_type_descriptionRequest"),
            (ours, "rq/talker/get_type_descriptionRequest"),
            (ours, "rq/talker/get_parametersRequest"),
            (ours, "rt/chatter"),
            (ours, "rq//get_type_descriptionRequest"),
            (theirs, "rq/other/get_type_descriptionRequest"),
        ];
        assert_eq!(nodes_serving(ours, readers), ["/ns/listener", "/talker"]);
        assert!(nodes_serving([3; 12], readers).is_empty());
    }
}
