//! rosbag2's recorder services, so that scripts written for `ros2 bag record` drive
//! recd unchanged: `/<ros2_node>/pause`, `resume`, `is_paused`, `split_bagfile`,
//! `snapshot` and `stop`, with rosbag2_interfaces' types, in rmw_cyclonedds' service
//! mapping (request and reply topics `rq/<node>/<service>Request` and `…Reply`).

use std::sync::Arc;

use recd_control::{Request, Response, TriggerRequest};
use ros2_client::{
    Context as RosContext, Message, Name, NodeName, NodeOptions, QosProfile, Server,
    ServiceMapping, ServiceTypeName,
};
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use super::status::statuses;
use super::Context;

/// An empty ROS 2 message, as IDL serialises one: a single placeholder byte.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Empty {
    structure_needs_at_least_one_field: u8,
}
impl Message for Empty {}

/// `IsPaused`'s response.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IsPausedResponse {
    paused: bool,
}
impl Message for IsPausedResponse {}

/// `Snapshot`'s response.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SnapshotResponse {
    success: bool,
}
impl Message for SnapshotResponse {}

/// Serves the six services until the task is dropped.
pub async fn serve(context: Arc<Context>) {
    let node_name = &context.config.ros2_node;
    let ros = match RosContext::from_domain_participant(context.participant.clone()) {
        Ok(ros) => ros,
        Err(error) => {
            tracing::error!("the ROS 2 services are off: {error}");
            return;
        }
    };
    let node = NodeName::new("/", node_name)
        .map_err(|e| format!("{e:?}"))
        .and_then(|name| {
            ros.new_node(name, NodeOptions::new().enable_rosout(false))
                .map_err(|e| format!("{e:?}"))
        });
    let mut node = match node {
        Ok(node) => node,
        Err(error) => {
            tracing::error!("the ROS 2 services are off: cannot create node {node_name}: {error}");
            return;
        }
    };
    macro_rules! server {
        ($service:literal, $type:literal, $response:ty) => {{
            let qos = QosProfile::publisher_default()
                .history(ros2_client::qos::History::KeepLast { depth: 10 });
            let name = Name::new(&format!("/{node_name}"), $service).expect("a valid name");
            node.create_server::<Empty, $response>(
                ServiceMapping::Cyclone,
                &name,
                &ServiceTypeName::new("rosbag2_interfaces", $type),
                qos.clone(),
                qos,
            )
        }};
    }
    let created = (|| {
        Ok::<_, ros2_client::CreateError>((
            server!("pause", "Pause", Empty)?,
            server!("resume", "Resume", Empty)?,
            server!("is_paused", "IsPaused", IsPausedResponse)?,
            server!("split_bagfile", "SplitBagfile", Empty)?,
            server!("snapshot", "Snapshot", SnapshotResponse)?,
            server!("stop", "Stop", Empty)?,
        ))
    })();
    let (pause, resume, is_paused, split, snapshot, stop) = match created {
        Ok(servers) => servers,
        Err(error) => {
            tracing::error!("the ROS 2 services are off: {error:?}");
            return;
        }
    };
    tracing::info!(node = %node_name, "serving rosbag2's recorder services");
    tokio::join!(
        answer(&context, pause, "pause", |c| act(
            c,
            Request::Pause { name: None }
        )
        .map(|_| Empty::default())),
        answer(&context, resume, "resume", |c| act(
            c,
            Request::Resume { name: None }
        )
        .map(|_| Empty::default())),
        answer(&context, is_paused, "is_paused", |c| Ok(IsPausedResponse {
            paused: paused(c)
        })),
        answer(&context, split, "split_bagfile", |c| act(
            c,
            Request::Split { name: None }
        )
        .map(|_| Empty::default())),
        answer(&context, snapshot, "snapshot", |c| Ok(SnapshotResponse {
            success: act(c, snapshot_request()).is_ok()
        })),
        answer(&context, stop, "stop", |c| act(
            c,
            Request::Stop {
                name: None,
                all: false
            }
        )
        .map(|_| Empty::default())),
    );
    drop(node);
}

/// Answers `server`'s requests with `respond` (on the worker) until the task is
/// dropped; a request that is not allowed or fails gets no response, as rosbag2 gives
/// none for a failed call, and is logged.
async fn answer<Resp: Message + Default + Send + 'static>(
    context: &Arc<Context>,
    server: Server<Empty, Resp>,
    service: &'static str,
    respond: fn(&Context) -> Result<Resp, String>,
) {
    loop {
        let (id, _request) = match server.async_receive_request().await {
            Ok(request) => request,
            Err(error) => {
                tracing::warn!(
                    service,
                    "a ROS 2 service request could not be read: {error:?}"
                );
                continue;
            }
        };
        let origin = format!("ROS 2 client {:?}", id.writer_gid);
        let allowed = service == "is_paused" || context.config.allows(service);
        if !allowed {
            tracing::warn!(%origin, service, "ROS 2 service call refused: not in [remote_control] allow");
            continue;
        }
        if service != "is_paused" {
            tracing::info!(%origin, service, "ROS 2 service call");
        }
        let (done, outcome) = oneshot::channel();
        let worker_context = context.clone();
        context.worker.run(move || {
            let _ = done.send(respond(&worker_context));
        });
        match outcome.await {
            Ok(Ok(response)) => {
                if let Err(error) = server.async_send_response(id, response).await {
                    tracing::warn!(service, "cannot answer a ROS 2 service call: {error:?}");
                }
            }
            Ok(Err(error)) => tracing::warn!(service, "ROS 2 service call failed: {error}"),
            Err(_) => {}
        }
    }
}

fn act(context: &Context, request: Request) -> Result<Response, String> {
    context
        .sessions
        .answer(request)
        .map_err(|error| error.message)
}

/// Whether the only session (or any) is paused.
fn paused(context: &Context) -> bool {
    statuses(&context.sessions)
        .iter()
        .any(|status| status.paused)
}

/// rosbag2's snapshot: the whole pre-trigger buffer, now; on a session on disk, an
/// incident of the default window around now.
fn snapshot_request() -> Request {
    Request::Trigger(TriggerRequest {
        note: "ROS 2 snapshot".into(),
        origin: Some(recd_control::origin::REMOTE.to_string()),
        ..TriggerRequest::default()
    })
}
