//! `rec topics`: what could be recorded right now, as recd's sources see it.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use recd_control::{Request, Response, TopicsRequest};

use crate::format;
use crate::output::{out, outln};
use crate::table::{natural_cmp, table};

/// List the topics that could be recorded now.
///
/// Like `ros2 topic list -v`: iceoryx2 services and, with --dds-domain
/// (or `dds_domain` in recd's configuration), DDS / ROS 2 topics, each with its type,
/// publishers and rate.
///
/// recd receives them as a session would for a moment (discovery, then the measured
/// window) and writes nothing: a topic whose only publisher is silent shows a rate of 0.
#[derive(Debug, Args)]
pub struct TopicsArgs {
    /// Look at DDS / ROS 2 topics of this domain too (0 to 232, ROS_DOMAIN_ID).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(0..=232))]
    dds_domain: Option<u16>,
    /// Leave iceoryx2 shared memory out.
    #[arg(long)]
    no_iceoryx2: bool,
    /// How long to discover topics and their publishers before measuring, e.g. 1s.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = recd_control::units::parse_duration)]
    discovery: Duration,
    /// How long to measure rates, e.g. 2s.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = recd_control::units::parse_duration)]
    window: Duration,
    /// List only topics whose message type matches this glob (as `rec start
    /// --topic-type` would record them); repeatable.
    #[arg(long = "topic-type", value_name = "GLOB")]
    topic_types: Vec<String>,
    /// Leave out topics whose message type matches this glob; repeatable.
    #[arg(long = "exclude-topic-type", value_name = "GLOB")]
    exclude_topic_types: Vec<String>,
    /// Print the topics as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub socket: crate::socket::SocketArg,
}

pub fn run(socket: &Path, args: &TopicsArgs) -> Result<ExitCode, String> {
    let request = Request::Topics(TopicsRequest {
        dds_domain: args.dds_domain,
        no_iceoryx2: args.no_iceoryx2,
        discovery_ms: args.discovery.as_millis() as u64,
        window_ms: args.window.as_millis() as u64,
        topic_types: args.topic_types.clone(),
        exclude_topic_types: args.exclude_topic_types.clone(),
    });
    let response = crate::request::ask(socket, &request)?;
    let Response::Topics(mut found) = response else {
        return Err("recd answered a topics request with something else".into());
    };
    found.topics.sort_by(|a, b| natural_cmp(&a.name, &b.name));
    if args.json {
        crate::output::print_json(&found)?;
        return Ok(ExitCode::SUCCESS);
    }
    if found.topics.is_empty() {
        outln!("no topics to record");
    } else {
        let rows: Vec<Vec<String>> = found
            .topics
            .iter()
            .map(|t| {
                vec![
                    t.name.clone(),
                    t.type_name.clone(),
                    t.publishers.to_string(),
                    format!("{:.1}", t.messages_per_s),
                    format::rate(t.bytes_per_s),
                    t.service.clone(),
                ]
            })
            .collect();
        out!(
            "{}",
            table(
                &["topic", "type", "publishers", "msg/s", "rate", "source"],
                &rows
            )
        );
    }
    for (service, problem) in &found.problems {
        outln!("cannot record {service}: {problem}");
    }
    Ok(ExitCode::SUCCESS)
}
