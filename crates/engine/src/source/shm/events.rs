//! The event services that wake the receive thread when a publisher sends.

use iceoryx2::port::listener::Listener;
use iceoryx2::prelude::*;
use iceoryx2::service::port_factory::event;

use super::Flavor;

/// A listener on the event service named like a recorded topic.
pub(super) struct EventPort {
    pub service: String,
    _factory: event::PortFactory<Flavor>,
    pub listener: Listener<Flavor>,
}

/// Opens the event service `name` and creates a listener on it (file I/O: the discovery
/// thread's work).
pub(super) fn open_listener(node: &Node<Flavor>, name: &str) -> Result<EventPort, String> {
    let service_name =
        ServiceName::new(name).map_err(|e| format!("invalid service name: {e:?}"))?;
    let factory = node
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
