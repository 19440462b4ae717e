//! `recd`: the recording daemon. It parses its configuration, opens the catalog, listens
//! on the control socket and runs sessions until SIGTERM or SIGINT, which stop every
//! session gracefully.

mod background;
mod clock;
mod clock_sync;
mod core_dumps;
mod files;
mod finishing;
mod fleet;
mod host;
mod incidents;
mod locks;
mod names;
mod open_files;
mod recovery;
mod remote;
mod retention;
mod rules;
mod server;
mod service;
mod sessions;
mod signing;
mod uploads;
mod web;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Parser;
use recd_catalog::Catalog;
use recd_daemon::config;

use config::{DaemonConfig, DEFAULT_CONFIG};
use sessions::Sessions;

/// The recd recording daemon: records iceoryx2 shared-memory topics and DDS / ROS 2
/// topics into MCAP sessions that `rec start` and `rec stop` control over a Unix socket.
#[derive(Parser, Debug)]
#[command(name = "recd", version)]
struct Cli {
    /// The configuration file (TOML); every key has a default, so it may be missing when
    /// not given explicitly.
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    /// The control socket (overrides `socket`).
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Where recordings go (overrides `data_dir`).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Where the catalog lives (overrides `state_dir`).
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Print the effective configuration as TOML and exit.
    #[arg(long)]
    print_config: bool,
    /// Print the manual page recd(8) as roff and exit (e.g. `recd --man-page >
    /// /usr/local/share/man/man8/recd.8`).
    #[arg(long)]
    man_page: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.man_page {
        return print_man_page();
    }
    let (path, explicit) = match &cli.config {
        Some(path) => (path.clone(), true),
        None => (PathBuf::from(DEFAULT_CONFIG), false),
    };
    let mut config = match DaemonConfig::load(&path, explicit) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("recd: {error}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(socket) = cli.socket {
        config.socket = socket;
    }
    if let Some(dir) = cli.data_dir {
        config.data_dir = dir;
    }
    if let Some(dir) = cli.state_dir {
        config.state_dir = dir;
    }
    if cli.print_config {
        print!("{}", config.to_toml());
        return ExitCode::SUCCESS;
    }
    close_files_to_others();
    service::init_logging();
    iceoryx2::prelude::set_log_level(iceoryx2::prelude::LogLevel::Error);
    match run(config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            tracing::error!("{message}");
            eprintln!("recd: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The permission bits recd never gives: nothing for others, no writing for the group.
const CLOSED_TO_OTHERS: libc::mode_t = 0o027;

/// Keeps recordings, their directories and the catalog at 0640 / 0750 or stricter,
/// whatever umask recd was started with (022 gives 0644 / 0755): camera frames of public
/// roads are personal data. Members of recd's group read them with `rec`.
fn close_files_to_others() {
    // SAFETY: umask only sets the process's file-creation mask; it cannot fail.
    unsafe {
        let inherited = libc::umask(CLOSED_TO_OTHERS);
        libc::umask(inherited | CLOSED_TO_OTHERS);
    }
}

/// Writes recd(8) to standard output.
fn print_man_page() -> ExitCode {
    use clap::CommandFactory;
    use clap_mangen::roff::{bold, roman, Roff};
    use std::io::Write;

    let command = Cli::command();
    // NAME gets one short line; DESCRIPTION the whole of `recd --help`'s.
    let description = command.get_about().cloned().unwrap_or_default();
    let command = command
        .about("the recording daemon: iceoryx2 and DDS / ROS 2 topics into MCAP")
        .long_about(description);
    let mut page = Vec::new();
    clap_mangen::Man::new(command)
        .section("8")
        // Quoted, as roff drops an empty argument and would take the source for the date.
        .date("\"\"")
        .render(&mut page)
        .expect("writing to memory cannot fail");
    let mut see_also = Roff::new();
    see_also
        .control("SH", ["SEE ALSO"])
        .text([bold("rec"), roman("(1)")]);
    page.extend_from_slice(see_also.to_roff().as_bytes());
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&page).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("recd: cannot write the manual page: {error}");
            ExitCode::FAILURE
        }
    }
}

/// An open-file limit below this leaves room for fewer than about 1,500 iceoryx2 topics.
const FEW_OPEN_FILES: libc::rlim_t = 8192;

fn run(mut config: DaemonConfig) -> Result<(), String> {
    // Before any key is read: from here on a crash leaves no core file to read them from.
    if config.encryption.is_some() || config.signing.key_file.is_some() {
        core_dumps::forbid().map_err(|e| {
            format!("cannot keep the keys of sealing or signing out of core dumps (prctl PR_SET_DUMPABLE 0): {e}")
        })?;
        tracing::info!("core dumps off: sealing or signing holds keys");
        core_dumps::warn_if_keys_may_swap();
    }
    match open_files::raise_to_hard_limit() {
        Ok((soft, _)) if soft < FEW_OPEN_FILES => tracing::warn!(
            "recd may open only {soft} files: each recorded iceoryx2 topic keeps about 5 \
             open, so raise LimitNOFILE (recd.service sets 65536)"
        ),
        Ok(_) => {}
        Err(error) => tracing::warn!("cannot raise the open-file limit: {error}"),
    }
    let signing_key = signing::load_key(&config.signing)?;
    if let Some(upload) = &config.upload {
        upload.check_credentials_file()?;
    }
    for dir in [&config.state_dir, &config.data_dir] {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    // File paths go to `rec`, which runs in another working directory.
    config.data_dir = std::path::absolute(&config.data_dir)
        .map_err(|e| format!("cannot resolve {}: {e}", config.data_dir.display()))?;
    let mut catalog =
        Catalog::open(&config.state_dir, &config.data_dir).map_err(|e| e.to_string())?;
    let interrupted =
        recovery::reconcile(&mut catalog, &config.data_dir).map_err(|e| e.to_string())?;
    let catalog = Arc::new(Mutex::new(catalog));
    let pressure = Arc::new(recd_upload::Pressure::default());
    let reports = Arc::new(files::UploadReports::default());
    let uploads =
        uploads::Uploads::start(&config, pressure.clone(), reports.clone())?.map(Arc::new);
    let sealing = match &config.encryption {
        Some(encryption) => Some(
            encryption
                .sealing()
                .map_err(|e| format!("[encryption] recipients: {e}"))?,
        ),
        None => None,
    };
    let signing =
        signing_key.map(|key| signing::Signing::start(key, catalog.clone(), uploads.clone()));
    let delete_after_upload = (config.upload.as_ref()).is_some_and(|u| u.delete_after_upload);
    let files = Arc::new(files::FileLife::new(
        catalog.clone(),
        signing.clone(),
        sealing.as_ref().map(|sealing| sealing.keys.clone()),
        uploads,
        delete_after_upload,
    ));
    reports.bind(&files);
    let bounds = retention::Bounds {
        max_total: config.max_total_size.map(|size| size.as_u64()),
        sessions: Vec::new(),
    };
    let leave = retention::policy::Leave {
        pinned: locks::lock(&catalog)
            .pinned_paths()
            .map_err(|e| e.to_string())?,
        ..Default::default()
    };
    let now = clock::now_ns().max(0) as u64;
    retention::run(&files, &catalog, &bounds, &leave, now).map_err(|e| e.to_string())?;
    if config.reindex_after_crash {
        recovery::reindex_in_background(
            config.state_dir.clone(),
            config.data_dir.clone(),
            interrupted,
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let stop_timeout = config.stop_timeout;
    let socket = config.socket.clone();
    let http = config.http.settings()?;
    let presets = config.preset.iter().map(|p| p.preset()).collect();
    if let Some(sealing) = &sealing {
        tracing::info!(
            recipients = ?sealing.recipients,
            "sealing every file to the fleet's keys (….mcap.age)"
        );
    }
    let sessions = Arc::new(Sessions::new(
        config,
        catalog.clone(),
        files,
        pressure,
        sealing,
        signing,
    ));
    let fleet = fleet::Fleet::start(sessions.clone(), catalog)?;
    let heartbeat = Arc::new(web::Heartbeat::new());
    let http = match http {
        Some(settings) => {
            let tally = fleet.as_ref().map(|fleet| fleet.tally.clone());
            let backend = web::WebBackend::new(sessions.clone(), heartbeat.clone(), tally);
            let server = recd_http::HttpServer::start(&settings, presets, Arc::new(backend))
                .map_err(|e| e.to_string())?;
            tracing::info!(address = %server.address(), control = settings.allow_control, "HTTP listening");
            Some(server)
        }
        None => None,
    };
    let finisher = sessions.start_finishing();
    let cutter = sessions.start_cutting();
    let rules = sessions.start_rules();
    runtime.block_on(serve_until_signal(&socket, sessions.clone(), heartbeat))?;
    drop(runtime);

    service::stopping();
    if let Some(http) = http {
        http.stop();
    }
    let _ = std::fs::remove_file(&socket);
    finisher.stop();
    cutter.stop();
    sessions.stop_rules(rules);
    let stopped = stop_all(sessions.clone(), stop_timeout);
    sessions.stop_signing();
    sessions.stop_uploads();
    if let Some(fleet) = fleet {
        fleet.stop();
    }
    stopped
}

/// Serves the control socket until SIGTERM or SIGINT.
async fn serve_until_signal(
    socket: &std::path::Path,
    sessions: Arc<Sessions>,
    heartbeat: Arc<web::Heartbeat>,
) -> Result<(), String> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut terminate = signal(SignalKind::terminate()).map_err(|e| e.to_string())?;
    let mut interrupt = signal(SignalKind::interrupt()).map_err(|e| e.to_string())?;
    let listener = server::listen(socket).map_err(|e| e.to_string())?;
    tracing::info!(socket = %socket.display(), "listening");
    service::ready();
    let server = tokio::spawn(server::serve(listener, sessions.clone()));
    let remote = tokio::spawn(remote::serve(
        sessions.config().remote_control.clone(),
        sessions.clone(),
        host::hostname(),
    ));
    let watchdog = service::watchdog_period();
    let mut beat = tokio::time::interval(
        watchdog
            .unwrap_or(Duration::from_secs(1))
            .min(Duration::from_secs(1)),
    );
    loop {
        tokio::select! {
            _ = terminate.recv() => break,
            _ = interrupt.recv() => break,
            _ = beat.tick() => {
                let sessions = sessions.clone();
                // Sampling locks the sessions; a stuck session shows as a missed ping.
                if let Ok(load) = tokio::task::spawn_blocking(move || sessions.sample()).await {
                    heartbeat.beat(load.healthy);
                    service::heartbeat(&load, watchdog.is_some());
                }
            }
        }
    }
    tracing::info!("stopping every session");
    server.abort();
    remote.abort();
    Ok(())
}

/// Stops every session, waiting at most `timeout`; files of a session that did not stop
/// in time stay recoverable with `rec reindex`.
fn stop_all(sessions: Arc<Sessions>, timeout: Duration) -> Result<(), String> {
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let result = sessions.stop(None, true);
        let _ = done_tx.send(result);
    });
    match done_rx.recv_timeout(timeout) {
        Ok(Ok(stopped)) => {
            tracing::info!(sessions = stopped.len(), "all sessions stopped");
            Ok(())
        }
        Ok(Err(error)) => Err(error.message),
        Err(_) => Err(format!(
            "sessions did not stop within {} (stop_timeout); their files are recoverable with `rec reindex`",
            humantime::format_duration(timeout)
        )),
    }
}
