//! The registry of running sessions: its lock is held only to look a session up, to
//! reserve a name for a session being started, and to insert or remove one. Whatever
//! takes time — starting or stopping a recording, a writer answering a trigger, sampling,
//! retention — works on a session (or a snapshot of all) taken out of it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use recd_catalog::SessionId;
use recd_control::{ErrorKind, ErrorReply};

use super::replies::{error, unknown_session};
use super::session::Session;
use crate::locks::lock;

/// How often the stop of a session looks whether others still hold it (a status or a
/// trigger under way, which end in milliseconds).
const LET_GO_LOOK: Duration = Duration::from_millis(2);

/// The running sessions, by name.
#[derive(Default)]
pub struct Registry {
    entries: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    running: BTreeMap<String, Arc<Session>>,
    /// Names of sessions being started.
    reserved: BTreeSet<String>,
    /// Sessions taken out to be stopped, until their files are all closed.
    stopping: BTreeSet<SessionId>,
}

/// A name held for a session being started, given up when dropped unless the session
/// was inserted under it.
pub struct Reservation<'a> {
    registry: &'a Registry,
    name: String,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        lock(&self.registry.entries).reserved.remove(&self.name);
    }
}

impl Registry {
    /// Reserves `name` for a new session; refused when a session of that name runs or
    /// is being started, or `max_sessions` are.
    pub fn reserve(
        &self,
        name: String,
        max_sessions: usize,
    ) -> Result<Reservation<'_>, ErrorReply> {
        let mut entries = lock(&self.entries);
        if entries.running.contains_key(&name) || entries.reserved.contains(&name) {
            return Err(error(
                ErrorKind::AlreadyRunning,
                format!(
                    "session {name:?} is already recording; stop it first or pick another name"
                ),
            ));
        }
        let busy = entries.running.len() + entries.reserved.len();
        if busy >= max_sessions {
            return Err(error(
                ErrorKind::Failed,
                format!("{busy} sessions are recording, the most recd allows (max_sessions)"),
            ));
        }
        entries.reserved.insert(name.clone());
        Ok(Reservation {
            registry: self,
            name,
        })
    }

    /// Whether a session called `name` runs or is being started.
    pub fn is_taken(&self, name: &str) -> bool {
        let entries = lock(&self.entries);
        entries.running.contains_key(name) || entries.reserved.contains(name)
    }

    /// Inserts the session started under `reservation`.
    pub fn insert(&self, reservation: Reservation<'_>, session: Session) {
        let mut entries = lock(&self.entries);
        entries.reserved.remove(&reservation.name);
        entries
            .running
            .insert(reservation.name.clone(), Arc::new(session));
    }

    /// The running session a request names, or the only one running when it names none.
    pub fn get(&self, name: Option<&str>) -> Result<Arc<Session>, ErrorReply> {
        let entries = lock(&self.entries);
        let name = resolve(&entries.running, name)?;
        Ok(entries.running[&name].clone())
    }

    /// The running session with catalog id `id`.
    pub fn by_id(&self, id: SessionId) -> Option<Arc<Session>> {
        let entries = lock(&self.entries);
        entries.running.values().find(|s| s.id == id).cloned()
    }

    /// Every running session, in name order.
    pub fn snapshot(&self) -> Vec<Arc<Session>> {
        lock(&self.entries).running.values().cloned().collect()
    }

    /// The names of the running sessions.
    pub fn names(&self) -> Vec<String> {
        lock(&self.entries).running.keys().cloned().collect()
    }

    /// Sessions running or being started.
    pub fn count(&self) -> usize {
        let entries = lock(&self.entries);
        entries.running.len() + entries.reserved.len()
    }

    /// Takes the session a request names (the only one when it names none), or all of
    /// them, out of the registry to be stopped; each is returned once nobody else holds
    /// it, and is [stopping](Self::is_stopping) until [`Registry::stopped`].
    pub fn remove(&self, name: Option<&str>, all: bool) -> Result<Vec<Session>, ErrorReply> {
        let taken: Vec<Arc<Session>> = {
            let mut entries = lock(&self.entries);
            let names: Vec<String> = if all {
                entries.running.keys().cloned().collect()
            } else {
                vec![resolve(&entries.running, name)?]
            };
            entries.take(&names)
        };
        Ok(taken.into_iter().map(let_go).collect())
    }

    /// Takes the sessions `expired` says are over out of the registry, as
    /// [`Registry::remove`] does.
    pub fn remove_where(&self, expired: impl Fn(&Session) -> bool) -> Vec<Session> {
        let taken: Vec<Arc<Session>> = {
            let mut entries = lock(&self.entries);
            let names: Vec<String> = (entries.running.iter())
                .filter(|(_, session)| expired(session))
                .map(|(name, _)| name.clone())
                .collect();
            entries.take(&names)
        };
        taken.into_iter().map(let_go).collect()
    }

    /// Whether session `id` was taken out to be stopped and its files are not all closed
    /// yet.
    pub fn is_stopping(&self, id: SessionId) -> bool {
        lock(&self.entries).stopping.contains(&id)
    }

    /// Session `id` stopped: its files are closed.
    pub fn stopped(&self, id: SessionId) {
        lock(&self.entries).stopping.remove(&id);
    }
}

impl Entries {
    /// Takes the sessions called `names` out, marking them stopping.
    fn take(&mut self, names: &[String]) -> Vec<Arc<Session>> {
        let taken: Vec<Arc<Session>> = (names.iter())
            .filter_map(|name| self.running.remove(name))
            .collect();
        self.stopping.extend(taken.iter().map(|session| session.id));
        taken
    }
}

/// The session once no request holds it any more (out of the registry, none can take
/// it again).
fn let_go(mut session: Arc<Session>) -> Session {
    loop {
        match Arc::try_unwrap(session) {
            Ok(session) => return session,
            Err(shared) => {
                session = shared;
                std::thread::sleep(LET_GO_LOOK);
            }
        }
    }
}

/// The name of the running session a request names, or of the only one running.
fn resolve(
    running: &BTreeMap<String, Arc<Session>>,
    name: Option<&str>,
) -> Result<String, ErrorReply> {
    match name {
        Some(name) if running.contains_key(name) => Ok(name.to_string()),
        Some(name) => Err(unknown_session(name)),
        None => match running.len() {
            0 => Err(error(ErrorKind::UnknownSession, "no session is recording")),
            1 => Ok(running.keys().next().expect("one session").clone()),
            _ => Err(error(
                ErrorKind::InvalidArgument,
                format!(
                    "{} sessions are recording ({}); name one, or use --all",
                    running.len(),
                    running.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            )),
        },
    }
}
