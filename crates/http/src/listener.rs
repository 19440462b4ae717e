//! The listener's thread: its own single-threaded runtime, an accept loop that bounds
//! connections, HTTP/1 connections whose headers must come in time, and the once-a-second
//! sample of rates for the page.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::{oneshot, Semaphore};
use tower::ServiceExt;

use crate::access::Access;
use crate::backend::{Backend, Preset};
use crate::history::RateHistory;
use crate::metrics::TopicBudget;
use crate::router::router;
use crate::settings::{
    HttpSettings, SettingsError, HEADER_TIMEOUT, MAX_CONNECTIONS, MAX_HEAD_BYTES, REQUEST_TIMEOUT,
};
use crate::shared::{ClientAddr, Shared};
use crate::snapshot::Snapshots;
use crate::token::{TokenError, TokenFile};

/// Threads the listener may block on the daemon with at once.
const BLOCKING_THREADS: usize = 4;

/// Why the listener did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The settings would expose recd.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The token file cannot be used.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// The address cannot be listened on.
    #[error("cannot listen on {address} ([http] listen): {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// Its thread or runtime could not be made.
    #[error("cannot start the HTTP listener: {0}")]
    Runtime(std::io::Error),
}

/// The running listener.
pub struct HttpServer {
    address: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl HttpServer {
    /// Checks the settings, reads the token, binds and starts serving on a thread of its
    /// own.
    pub fn start(
        settings: &HttpSettings,
        presets: Vec<Preset>,
        backend: Arc<dyn Backend>,
    ) -> Result<Self, StartError> {
        settings.check()?;
        let token = settings
            .token_file
            .as_deref()
            .map(TokenFile::open)
            .transpose()?;
        let bind_error = |source| StartError::Bind {
            address: settings.listen,
            source,
        };
        let listener = std::net::TcpListener::bind(settings.listen).map_err(bind_error)?;
        listener.set_nonblocking(true).map_err(bind_error)?;
        let address = listener.local_addr().map_err(bind_error)?;
        let shared = Arc::new(Shared {
            snapshots: Snapshots::new(backend.clone()),
            backend,
            access: Access::new(settings, address, token),
            history: Mutex::new(RateHistory::default()),
            budget: Mutex::new(TopicBudget::new(settings.max_topics)),
            presets,
            started_from: Mutex::new(BTreeMap::new()),
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .max_blocking_threads(BLOCKING_THREADS)
            .thread_name("recd-http")
            .build()
            .map_err(StartError::Runtime)?;
        let (shutdown, stopped) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("recd-http".into())
            .spawn(move || {
                // Whoever connects must not take the recording's CPU time: the listener
                // and the blocking threads it starts give way to the writers.
                if let Err(error) = recd_priority::give_way() {
                    tracing::warn!("cannot lower the HTTP listener's priority: {error}");
                }
                runtime.block_on(serve(listener, shared, stopped))
            })
            .map_err(StartError::Runtime)?;
        Ok(Self {
            address,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    /// The address it listens on (the port chosen when `listen` asked for port 0).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Stops accepting and ends its thread.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// Accepts until told to stop; connections beyond [`MAX_CONNECTIONS`] are closed at once.
async fn serve(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    mut stopped: oneshot::Receiver<()>,
) {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(error) => {
            tracing::error!("the HTTP listener cannot run: {error}");
            return;
        }
    };
    tokio::spawn(sample_rates(shared.clone()));
    let app = router(shared);
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut told_full = false;
    loop {
        let (stream, client) = tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!("accepting an HTTP connection failed: {error}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            if !told_full {
                tracing::warn!(%client, "{MAX_CONNECTIONS} HTTP connections are open: closing new ones until some end");
                told_full = true;
            }
            continue;
        };
        told_full = false;
        let app = app.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let service =
                hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
                    request.extensions_mut().insert(ClientAddr(client));
                    app.clone().oneshot(request)
                });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .max_buf_size(MAX_HEAD_BYTES)
                .serve_connection(TokioIo::new(stream), service);
            // However busy a client keeps it, a connection ends; the page reconnects.
            let _ = tokio::time::timeout(REQUEST_TIMEOUT * 8, connection).await;
        });
    }
}

/// Adds each second's rates to the page's history.
async fn sample_rates(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if let Ok(snapshot) = shared.snapshots.get(Duration::from_millis(500)).await {
            shared.history.lock().expect("history lock").add(&snapshot);
        }
    }
}
