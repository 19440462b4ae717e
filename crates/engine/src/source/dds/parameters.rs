//! Reading the ROS 2 nodes' parameters for each file (`rec start --parameters`): a thread
//! that, whenever the writer opens a file, asks every node serving `~/list_parameters` for
//! its parameters' names and `~/get_parameters` for their values (rcl_interfaces), and
//! posts them on the [`ParameterBoard`] for the writer to put into the file. A node found
//! later is read for the file it appears in. The changes between two readings are in the
//! file too: `/parameter_events` is recorded beside the topics.
//!
//! The thread joins the domain with a participant of its own, so that its ROS node and its
//! service clients are apart from the recording's readers; the calls are rmw_fastrtps'
//! service mapping (ros2-client's `Enhanced`), as for the types ([`super::fetch`]). A
//! request is sent again each [`RESEND`] until its node answers (its client's endpoints
//! may not be matched yet), for at most [`CALL_BOUND`]; a node that does not answer is
//! said in `rec status` and asked again for the next file.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ros2_client::rcl_interfaces::{
    GetParametersRequest, GetParametersResponse, ListParametersRequest, ListParametersResponse,
};
use ros2_client::{Client, Context as RosContext, Message, Node, RmwRequestId};

use rustdds::RTPSEntity;

use super::fetch::{prefix_of, Prefix};
use super::node_services::{calling_node, client_of, node_serving};
use super::parameter_values::yaml;
use crate::parameters::{ParameterBoard, Wanted};
use crate::registry::TopicRegistry;

/// How long one call (a node's list or its values) may take, resent included.
pub(super) const CALL_BOUND: Duration = Duration::from_secs(3);
/// How often an unanswered request is sent again.
const RESEND: Duration = Duration::from_millis(500);
/// How often a call looks for its answer.
const TICK: Duration = Duration::from_millis(5);
/// How often the thread looks for nodes that appeared while a file is open.
const LOOK_AGAIN: Duration = Duration::from_millis(500);
/// `rcl_interfaces/srv/ListParameters`' depth that lists every parameter, however deep.
const DEPTH_RECURSIVE: u64 = 0;
/// The name of the thread.
const THREAD_NAME: &str = "recd-dds-params";

/// The running reader: stopped and joined when dropped.
pub(crate) struct ParameterReader {
    board: Arc<ParameterBoard>,
    /// Its participant's GUID prefix.
    participant: Prefix,
    thread: Option<JoinHandle<()>>,
}

impl ParameterReader {
    /// Joins `domain` (through `interfaces`) and starts reading for the files `board`
    /// names; a node that cannot be read is said in `registry`'s problems.
    pub fn start(
        domain: u16,
        interfaces: &[IpAddr],
        board: Arc<ParameterBoard>,
        registry: Arc<TopicRegistry>,
    ) -> Result<Self, super::DdsError> {
        let participant = super::dds_participant(domain, interfaces, None)?;
        let prefix = prefix_of(participant.guid());
        let context = RosContext::from_domain_participant(participant).map_err(|e| {
            super::DdsError::Participant {
                domain,
                reason: format!("cannot make a ROS 2 context for the parameters: {e:?}"),
            }
        })?;
        let thread_board = board.clone();
        let thread = std::thread::Builder::new()
            .name(THREAD_NAME.into())
            .spawn(move || Reading::new(context, thread_board, registry).run())
            .map_err(super::DdsError::Thread)?;
        Ok(Self {
            board,
            participant: prefix,
            thread: Some(thread),
        })
    }

    /// Where the parameters read are posted.
    pub fn board(&self) -> &Arc<ParameterBoard> {
        &self.board
    }

    /// Its participant (whose writers are recd's own, not recorded).
    pub fn participant(&self) -> Prefix {
        self.participant
    }
}

impl Drop for ParameterReader {
    fn drop(&mut self) {
        self.board.close();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What names a node's problem in the recording's status: `parameters of /talker`.
fn problem_key(node: &str) -> String {
    format!("parameters of {node}")
}

/// A node's two parameter services, as clients.
struct NodeClients {
    list: Client<ListParametersRequest, ListParametersResponse>,
    get: Client<GetParametersRequest, GetParametersResponse>,
}

/// The reading thread's state.
struct Reading {
    context: RosContext,
    board: Arc<ParameterBoard>,
    /// Where a node that cannot be read is said (`rec status`).
    registry: Arc<TopicRegistry>,
    /// recd's ROS node, made at the first call.
    node: Option<Node>,
    /// The clients made so far, by node: a new client needs discovery to match it.
    clients: BTreeMap<String, NodeClients>,
}

impl Reading {
    fn new(context: RosContext, board: Arc<ParameterBoard>, registry: Arc<TopicRegistry>) -> Self {
        Self {
            context,
            board,
            registry,
            node: None,
            clients: BTreeMap::new(),
        }
    }

    fn run(mut self) {
        // The file whose nodes were all read, and the nodes read for the file now open.
        let mut done: Option<u32> = None;
        let mut read: BTreeSet<String> = BTreeSet::new();
        loop {
            let file = match self.board.wanted(done, LOOK_AGAIN) {
                Wanted::Closed => return,
                Wanted::Nothing => continue,
                Wanted::File(file) => file,
            };
            if done != Some(file) {
                read.clear();
            }
            for node in self.nodes() {
                if !self.board.is_current(file) {
                    break;
                }
                if read.contains(&node) {
                    continue;
                }
                let outcome = self.read(&node, file);
                if !self.board.is_current(file) {
                    // The file ended meanwhile: the next one reads every node again.
                    break;
                }
                match outcome {
                    Ok(values) => match self.board.post(file, &node, &values) {
                        Ok(()) => self.registry.clear_problem(&problem_key(&node)),
                        Err(error) => self.registry.note_problem(
                            &problem_key(&node),
                            format!("cannot encode them as a Metadata record: {error}"),
                        ),
                    },
                    Err(reason) => self.registry.note_problem(&problem_key(&node), reason),
                }
                read.insert(node);
            }
            done = Some(file);
        }
    }

    /// The nodes that serve `~/list_parameters`, from the readers discovery knows.
    fn nodes(&self) -> BTreeSet<String> {
        self.context
            .domain_participant()
            .discovered_readers()
            .iter()
            .filter_map(|reader| {
                node_serving(
                    reader.subscription_topic_data.topic_name(),
                    "list_parameters",
                )
            })
            .collect()
    }

    /// `node`'s parameters, read for file `file`: each name with its value as YAML.
    fn read(&mut self, node: &str, file: u32) -> Result<BTreeMap<String, String>, String> {
        let board = self.board.clone();
        let still_wanted = move || board.is_current(file);
        let clients = self.clients_of(node)?;
        let listed = call(
            &still_wanted,
            &clients.list,
            ListParametersRequest {
                prefixes: Vec::new(),
                depth: DEPTH_RECURSIVE,
            },
        )
        .map_err(|why| format!("~/list_parameters {why}"))?;
        let names = listed.result.names;
        if names.is_empty() {
            return Ok(BTreeMap::new());
        }
        let got = call(
            &still_wanted,
            &clients.get,
            GetParametersRequest {
                names: names.clone(),
            },
        )
        .map_err(|why| format!("~/get_parameters {why}"))?;
        if got.values.len() != names.len() {
            return Err(format!(
                "~/get_parameters gave {} values for {} names",
                got.values.len(),
                names.len()
            ));
        }
        Ok(names.into_iter().zip(got.values.iter().map(yaml)).collect())
    }

    /// The clients of `node`'s parameter services, made at its first reading.
    fn clients_of(&mut self, node: &str) -> Result<&NodeClients, String> {
        if !self.clients.contains_key(node) {
            let ros_node = match &mut self.node {
                Some(ros_node) => ros_node,
                None => self
                    .node
                    .insert(calling_node(&self.context, "recd_parameters")?),
            };
            let service_type = |name| ("rcl_interfaces", name);
            let made = NodeClients {
                list: client_of(
                    ros_node,
                    node,
                    "list_parameters",
                    service_type("ListParameters"),
                )?,
                get: client_of(
                    ros_node,
                    node,
                    "get_parameters",
                    service_type("GetParameters"),
                )?,
            };
            self.clients.insert(node.to_string(), made);
        }
        Ok(&self.clients[node])
    }
}

/// Sends `request` (again each [`RESEND`]) until one of the sendings is answered, for at
/// most [`CALL_BOUND`] and while `still_wanted`.
fn call<Q: Message + Clone + 'static, A: Message + 'static>(
    still_wanted: &dyn Fn() -> bool,
    client: &Client<Q, A>,
    request: Q,
) -> Result<A, String> {
    let until = Instant::now() + CALL_BOUND;
    let mut sent: Vec<RmwRequestId> = Vec::new();
    let mut last_sent: Option<Instant> = None;
    loop {
        let now = Instant::now();
        if last_sent.is_none_or(|at| now >= at + RESEND) {
            if let Ok(id) = client.send_request(request.clone()) {
                sent.push(id);
            }
            last_sent = Some(now);
        }
        while let Ok(Some((id, answer))) = client.receive_response() {
            if sent.contains(&id) {
                return Ok(answer);
            }
        }
        if now >= until {
            return Err(format!(
                "was not answered within {} s",
                CALL_BOUND.as_secs()
            ));
        }
        if !still_wanted() {
            return Err("was given up: its file ended".to_string());
        }
        std::thread::sleep(TICK);
    }
}
