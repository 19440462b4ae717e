//! The event services that wake the receive thread when a publisher sends.

use std::collections::BTreeSet;

use iceoryx2::port::listener::Listener;
use iceoryx2::prelude::*;
use iceoryx2::service::port_factory::event;

use super::{Flavor, ShmSource};

/// A listener on the event service named like a recorded topic.
pub(super) struct EventPort {
    pub service: String,
    _factory: event::PortFactory<Flavor>,
    pub listener: Listener<Flavor>,
}

impl ShmSource {
    pub(super) fn sync_listeners(
        &mut self,
        listeners: &mut Vec<EventPort>,
        wanted: &BTreeSet<String>,
    ) {
        listeners.retain(|port| wanted.contains(&port.service));
        for name in wanted {
            if listeners.iter().any(|port| &port.service == name) {
                continue;
            }
            match self.open_listener(name) {
                Ok(port) => listeners.push(port),
                Err(reason) => self.link.note_problem(name, reason),
            }
        }
    }

    fn open_listener(&self, name: &str) -> Result<EventPort, String> {
        let service_name =
            ServiceName::new(name).map_err(|e| format!("invalid service name: {e:?}"))?;
        let factory = self
            .node
            .service_builder(&service_name)
            .event()
            .open()
            .map_err(|e| format!("cannot open the event service: {e:?}"))?;
        let listener = factory
            .listener_builder()
            .create()
            .map_err(|e| format!("cannot listen to the event service: {e:?}"))?;
        Ok(EventPort {
            service: name.to_string(),
            _factory: factory,
            listener,
        })
    }
}
