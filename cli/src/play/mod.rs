//! `rec play`: recorded files back to the transports they came from, on time.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use recd_engine::{TopicSelection, ZenohConfig, ZenohMode};
use recd_replay::{
    OnLate, PlayOptions, PlayReport, PlayedCalls, Progress, Steering, SubscriberWait,
};

use crate::output::{out, outln};
use crate::table::table;

mod keys;

/// Play recordings back on time to where they came from
///
/// Every message leaves at its recorded time relative to the
/// first (divided by --rate), to the transport it was recorded
/// from.
///
/// PATH is a file, a session directory (its split files play as
/// one stream, in order) or the name of a recd session. The
/// iceoryx2, DDS and Zenoh files of a mixed session play
/// together, merged by time.
///
/// iceoryx2 channels go to services of the same name with the
/// recorded payload and user-header types, opened if they exist
/// (a service that exists with other types is refused) or
/// created; each sample is filled straight from the file, user
/// header byte for byte.
///
/// DDS / ROS 2 channels go to DDS writers on the recorded DDS
/// topic (`/chatter` plays on `rt/chatter`) with the recorded
/// type name and key kind, reliable and transient-local
/// (latched) only when every recorded writer was; each sample
/// leaves as the CDR it was recorded as, its encapsulation
/// (XCDR1 or XCDR2) kept.
///
/// Zenoh channels (ROS 2 over rmw_zenoh) go out as rmw_zenoh's
/// publishers send: on the recorded key in --zenoh-domain
/// (`<domain>/<topic>/<type>/<type hash>`), announced by a
/// publisher's liveliness token of node /rec_play with the
/// recorded type hash and QoS, each message the recorded CDR
/// with a fresh attachment (sequence number from 1, the time it
/// left, the publisher's GID). Reliable unless every recorded
/// publisher was best effort; a transient-local topic is
/// announced as one, but late subscribers get no cached
/// samples.
///
/// Each stream of files is read ahead of the playback (up to
/// 0.5 s of the recording or 512 MiB, whichever is less) with
/// the kernel reading further ahead, and each topic of large
/// messages is sent from a thread of its own, its next message
/// copied into its loan before it is due. What cannot leave on
/// time is sent late (--on-late keep), skipped and counted
/// (drop), or slows the whole timeline down (stretch).
///
/// On a terminal, keys steer the playback: space pauses and
/// resumes (a pause shifts what follows by its length; nothing
/// is held meanwhile), → sends the next message while paused,
/// ↑ and ↓ change the rate by 10 %.
///
/// With --services-as-calls, a service's recorded
/// introspection events (`<service>/_service_event`, recorded
/// with `rec start --services`) are not played: the requests in
/// them are sent again as calls to the service's server.
///
/// A file a crash cut short plays up to its last complete
/// message. Ctrl-C stops cleanly.
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct PlayArgs {
    /// Recordings: files, session directories or session names.
    #[arg(required = true, value_name = "PATH|SESSION", add = crate::complete::sessions_or_paths())]
    paths: Vec<PathBuf>,
    /// Play only topics matching this glob; repeatable.
    #[arg(long = "topic", value_name = "GLOB")]
    topics: Vec<String>,
    /// Never play topics matching this glob; repeatable.
    #[arg(long = "exclude", value_name = "GLOB")]
    exclude: Vec<String>,
    /// Speed factor: 2 plays twice as fast, 0.5 at half speed.
    #[arg(long, value_name = "FACTOR", default_value_t = 1.0, value_parser = parse_rate)]
    rate: f64,
    /// Start over at the end, until Ctrl-C.
    #[arg(long = "loop")]
    repeat: bool,
    /// Skip what was recorded before OFFSET, e.g. 30s
    #[arg(long, value_name = "OFFSET", default_value = "0s", value_parser = recd_control::units::parse_duration)]
    start: Duration,
    /// Stop this far into the recording, e.g. 2min
    #[arg(long, value_name = "OFFSET", value_parser = recd_control::units::parse_duration)]
    until: Option<Duration>,
    /// Pace by publish time, not the time recorded
    #[arg(long)]
    use_publish_time: bool,
    /// The iceoryx2 domain (global.prefix) to play into
    ///
    /// iceoryx2's default if left out.
    #[arg(long, value_name = "PREFIX", verbatim_doc_comment)]
    iceoryx2_prefix: Option<String>,
    /// Play the topic FROM as TO; repeatable
    ///
    /// E.g. /chatter:=/chatter_replay.
    #[arg(long, value_name = "FROM:=TO", value_parser = parse_remap, verbatim_doc_comment)]
    remap: Vec<(String, String)>,
    /// The DDS domain to play DDS / ROS 2 topics into (0 to 232)
    #[arg(long, value_name = "N", env = "ROS_DOMAIN_ID", default_value_t = 0,
          value_parser = clap::value_parser!(u16).range(0..=232))]
    dds_domain: u16,
    /// Use only this address for DDS; repeatable
    ///
    /// E.g. 127.0.0.1. Every interface if left out.
    #[arg(long = "dds-interface", value_name = "ADDR", verbatim_doc_comment)]
    dds_interfaces: Vec<IpAddr>,
    /// The ROS 2 domain to play Zenoh topics into
    ///
    /// 0 to 232: the first chunk of every rmw_zenoh key, whatever
    /// the recorded domain was.
    #[arg(long, value_name = "N", env = "ROS_DOMAIN_ID", default_value_t = 0,
          value_parser = clap::value_parser!(u16).range(0..=232), verbatim_doc_comment)]
    zenoh_domain: u16,
    /// A Zenoh endpoint to connect to; repeatable
    ///
    /// E.g. tcp/10.0.0.2:7447. rmw_zenoh's router on this host
    /// (tcp/localhost:7447) if left out.
    #[arg(long = "zenoh-connect", value_name = "ENDPOINT", verbatim_doc_comment)]
    zenoh_connect: Vec<String>,
    /// Join Zenoh as a peer (as rmw_zenoh's nodes) or client
    #[arg(long, value_name = "MODE", value_parser = parse_zenoh_mode)]
    zenoh_mode: Option<ZenohMode>,
    /// A Zenoh configuration file (JSON5)
    ///
    /// As rmw_zenoh's ZENOH_SESSION_CONFIG_URI names one;
    /// --zenoh-connect and --zenoh-mode override it. rmw_zenoh's
    /// session settings if left out.
    #[arg(
        long,
        value_name = "FILE",
        env = "ZENOH_SESSION_CONFIG_URI",
        verbatim_doc_comment
    )]
    zenoh_config: Option<PathBuf>,
    /// Leave out the iceoryx2 channels.
    #[arg(long)]
    no_iceoryx2: bool,
    /// Leave out the DDS / ROS 2 channels.
    #[arg(long)]
    no_dds: bool,
    /// Leave out the Zenoh (rmw_zenoh) channels.
    #[arg(long)]
    no_zenoh: bool,
    /// Wait up to this long for every topic's subscribers
    ///
    /// Before playing. For DDS a matched reader (messages a
    /// reliable DDS writer sends before its readers are matched are
    /// not delivered); for Zenoh a subscriber whose key matches;
    /// for iceoryx2 a subscriber. 0s does not wait at all.
    ///
    /// If left out, the playback waits for discovery to settle:
    /// until no DDS or Zenoh topic's count of subscribers changed
    /// for 1 s, at most 5 s, so that nodes already running get the
    /// first messages too.
    #[arg(long, value_name = "DURATION", value_parser = recd_control::units::parse_duration, verbatim_doc_comment)]
    wait_subscribers: Option<Duration>,
    /// What to do with a message that cannot leave on time
    ///
    /// keep (send it late), drop (skip it when it is later than its
    /// topic's interval, and count it) or stretch (slow the whole
    /// timeline by how late it is, so relative timing holds).
    #[arg(long, value_name = "POLICY", default_value = "keep", value_parser = parse_on_late, verbatim_doc_comment)]
    on_late: OnLate,
    /// Start paused: space starts it, → steps
    ///
    /// → sends one message at a time. Needs a terminal on stdin.
    #[arg(long, verbatim_doc_comment)]
    start_paused: bool,
    /// Wait this long before the first message, e.g. 2s
    ///
    /// After --wait-subscribers.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = recd_control::units::parse_duration, verbatim_doc_comment)]
    delay: Duration,
    /// Publish the recording's time on ROS 2's /clock
    ///
    /// rosgraph_msgs/msg/Clock, HZ times a second (40 if left out),
    /// following rate and pauses, so that nodes with use_sim_time
    /// follow the replay. It goes to --dds-domain.
    #[arg(long, value_name = "HZ", num_args = 0..=1, default_missing_value = "40", value_parser = parse_hz, verbatim_doc_comment)]
    clock: Option<f64>,
    /// Send recorded service requests as calls to the service
    ///
    /// For each service recorded with `rec start --services`
    /// (its `<service>/_service_event` topic), the requests in its
    /// introspection events go to whichever server of the
    /// service runs in --dds-domain, each as one call at its
    /// recorded time, as rosbag2's --publish-service-requests;
    /// the events themselves are not played. A request recorded
    /// by both ends (client and server introspection) is called
    /// once. Events recorded without their contents (introspection
    /// metadata only) cannot be sent.
    ///
    /// By default the playback waits up to 5 s for each service's
    /// server to be found. A call is never repeated: without a
    /// server it goes unanswered. Replies are waited for up to 3 s
    /// after the last call; the summary says how many calls were
    /// sent and answered. Calls go out as rmw_fastrtps (ROS 2's
    /// default middleware) sends them; services recorded over
    /// Zenoh are not called.
    #[arg(long, verbatim_doc_comment)]
    services_as_calls: bool,
    /// Print the summary as JSON
    ///
    /// Per topic sent, late, lateness (p50, p99, max), dropped and
    /// failed; the --on-late policy, the stretch factor, the
    /// time paused, and per service called (--services-as-calls)
    /// the calls sent and answered.
    #[arg(long, verbatim_doc_comment)]
    json: bool,
    #[command(flatten)]
    pub socket: crate::socket::SocketArg,
}

fn parse_zenoh_mode(text: &str) -> Result<ZenohMode, String> {
    match text {
        "peer" => Ok(ZenohMode::Peer),
        "client" => Ok(ZenohMode::Client),
        _ => Err(format!("`{text}` is not peer or client")),
    }
}

fn parse_remap(text: &str) -> Result<(String, String), String> {
    match text.split_once(":=") {
        Some((from, to)) if !from.is_empty() && !to.is_empty() => {
            Ok((from.to_string(), to.to_string()))
        }
        _ => Err(format!(
            "`{text}` is not FROM:=TO (e.g. /chatter:=/chatter_replay)"
        )),
    }
}

fn parse_on_late(text: &str) -> Result<OnLate, String> {
    text.parse()
}

fn parse_hz(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(hz) if hz.is_finite() && hz > 0.0 && hz <= 10_000.0 => Ok(hz),
        _ => Err(format!(
            "`{text}` is not a rate in Hz above 0 and up to 10000 (e.g. 100)"
        )),
    }
}

fn parse_rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 => Ok(rate),
        _ => Err(format!(
            "`{text}` is not a speed factor above 0 (e.g. 1, 2 or 0.5)"
        )),
    }
}

pub fn run(socket: &Path, args: &PlayArgs) -> Result<ExitCode, String> {
    let mut files = Vec::new();
    for path in &args.paths {
        files.extend(crate::files::files_of(socket, path)?);
    }
    crate::files::refuse_sealed(&files)?;
    if args.until.is_some_and(|until| until <= args.start) {
        return Err("--until must be later than --start".into());
    }
    if args.start_paused && !std::io::stdin().is_terminal() {
        return Err(
            "--start-paused needs a terminal on stdin: space resumes the playback there".into(),
        );
    }
    let options = PlayOptions {
        topics: TopicSelection {
            include: args.topics.clone(),
            exclude: args.exclude.clone(),
            ..TopicSelection::default()
        },
        rate: args.rate,
        repeat: args.repeat,
        start: args.start,
        until: args.until,
        use_publish_time: args.use_publish_time,
        iceoryx2_prefix: args.iceoryx2_prefix.clone(),
        wait_subscribers: args
            .wait_subscribers
            .map_or(SubscriberWait::Settled, SubscriberWait::UpTo),
        remap: remaps(&args.remap)?,
        iceoryx2: !args.no_iceoryx2,
        dds: !args.no_dds,
        dds_domain: args.dds_domain,
        dds_interfaces: args.dds_interfaces.clone(),
        zenoh: !args.no_zenoh,
        zenoh_config: ZenohConfig {
            mode: args.zenoh_mode,
            connect: args.zenoh_connect.clone(),
            config_file: args.zenoh_config.clone(),
            ..ZenohConfig::new(args.zenoh_domain)
        },
        on_late: args.on_late,
        start_paused: args.start_paused,
        delay: args.delay,
        clock: args.clock,
        services_as_calls: args.services_as_calls,
    };
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed))
        .map_err(|e| format!("cannot install the Ctrl-C handler: {e}"))?;
    let on_terminal = std::io::stderr().is_terminal();
    let steering = Steering::new(&options);
    let keys = keys::Keys::start(steering.clone());
    if keys.is_some() {
        eprintln!("{}", keys::HELP);
    }
    let played = recd_replay::play_steered(&files, &options, &steering, &cancel, |progress| {
        if on_terminal {
            show_progress(&progress, args.on_late);
        }
    });
    drop(keys);
    let report = played.map_err(|e| e.to_string())?;
    if on_terminal {
        eprintln!();
    }
    if args.json {
        crate::output::print_json(&report)?;
    } else {
        print_report(&report);
    }
    let failed = report.topics.iter().any(|t| t.failed > 0);
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The remaps by recorded topic; a topic remapped twice is refused.
fn remaps(pairs: &[(String, String)]) -> Result<BTreeMap<String, String>, String> {
    let mut remap = BTreeMap::new();
    for (from, to) in pairs {
        if let Some(earlier) = remap.insert(from.clone(), to.clone()) {
            return Err(format!(
                "--remap: {from} is remapped twice (to {earlier} and to {to})"
            ));
        }
    }
    Ok(remap)
}

fn show_progress(progress: &Progress, on_late: OnLate) {
    let policy = match on_late {
        OnLate::Keep => String::new(),
        OnLate::Drop => format!("  {} dropped", progress.dropped),
        OnLate::Stretch => format!("  stretched ×{:.2}", progress.stretch_factor),
    };
    eprint!(
        "\r{:>9.1} / {:.1} s  ×{:.2}{}  {} messages  {} late{policy}    ",
        progress.position.as_secs_f64(),
        progress.length.as_secs_f64(),
        progress.rate,
        if progress.paused { "  paused" } else { "" },
        progress.sent,
        progress.late
    );
}

fn print_report(report: &PlayReport) {
    let sent: u64 = report.topics.iter().map(|t| t.sent).sum();
    outln!(
        "played {sent} messages of {} topics in {:.1} s{}",
        report.topics.len(),
        report.duration_s,
        if report.cancelled { " (stopped)" } else { "" }
    );
    match report.on_late {
        OnLate::Keep => {}
        OnLate::Drop => outln!(
            "--on-late drop: {} messages too late were dropped",
            report.topics.iter().map(|t| t.dropped).sum::<u64>()
        ),
        OnLate::Stretch => outln!(
            "--on-late stretch: the timeline ran ×{:.3} the recording's length",
            report.stretch_factor
        ),
    }
    if report.paused_s > 0.0 {
        outln!("paused for {:.1} s", report.paused_s);
    }
    let rows: Vec<Vec<String>> = report
        .topics
        .iter()
        .map(|t| {
            vec![
                t.name.clone(),
                t.sent.to_string(),
                t.late.to_string(),
                crate::format::micros(t.lateness_p50_us),
                crate::format::micros(t.lateness_p99_us),
                crate::format::micros(t.lateness_max_us),
                t.dropped.to_string(),
                t.failed.to_string(),
            ]
        })
        .collect();
    let header = [
        "topic", "sent", "late", "late p50", "p99", "max", "dropped", "failed",
    ];
    out!("{}", table(&header, &rows));
    for topic in &report.topics {
        if let Some(error) = &topic.error {
            outln!("{}: {error}", topic.name);
        }
    }
    for (topic, why) in &report.skipped {
        outln!("skipped {topic}: {why}");
    }
    for calls in &report.calls {
        outln!("{}", calls_line(calls));
    }
    for (file, damage) in &report.damaged {
        outln!(
            "{} ends early at offset {} ({}); played up to its last complete message",
            file.display(),
            damage.offset,
            damage.reason
        );
    }
}

/// The summary of one service's calls.
fn calls_line(calls: &PlayedCalls) -> String {
    let mut line = format!(
        "called {} ({}): {} calls sent, {} answered",
        calls.service, calls.service_type, calls.sent, calls.answered
    );
    if calls.answered < calls.sent {
        line.push_str(&format!(
            "; {} unanswered {} s after the last (no server of {} in the DDS domain?)",
            calls.sent - calls.answered,
            recd_replay::calls::REPLY_WAIT.as_secs(),
            calls.service
        ));
    }
    if calls.without_contents > 0 {
        line.push_str(&format!(
            "; {} requests recorded without their contents (introspection metadata only) \
             were not sent",
            calls.without_contents
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calls_line_says_what_went_unanswered() {
        let mut calls = PlayedCalls {
            service: "/set_bool".into(),
            service_type: "std_srvs/srv/SetBool".into(),
            sent: 4,
            answered: 4,
            without_contents: 0,
        };
        assert_eq!(
            calls_line(&calls),
            "called /set_bool (std_srvs/srv/SetBool): 4 calls sent, 4 answered"
        );
        calls.answered = 1;
        calls.without_contents = 2;
        let line = calls_line(&calls);
        assert!(line.contains("3 unanswered 3 s after the last"), "{line}");
        assert!(
            line.contains("2 requests recorded without their contents"),
            "{line}"
        );
    }

    /// `--wait-subscribers`' help names the default wait's numbers: they must be the
    /// replay's.
    #[test]
    fn the_help_names_the_default_wait_of_the_replay() {
        assert_eq!(recd_replay::DISCOVERY_SETTLED, Duration::from_secs(1));
        assert_eq!(recd_replay::DISCOVERY_BOUND, Duration::from_secs(5));
    }
}
