//! Where a remote command came from, for the log: the writer's GUID and the addresses
//! its participant announced.

use rustdds::{DomainParticipant, GUID};

/// `GUID <hex> at <addresses>` of the writer `guid` (addresses `unknown` when discovery
/// has none for it).
pub fn describe(participant: &DomainParticipant, guid: GUID) -> String {
    let hex: String = guid.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
    let addresses: Vec<String> = participant
        .discovered_writers()
        .iter()
        .find(|writer| writer.writer_proxy.remote_writer_guid == guid)
        .map(|writer| {
            (writer.writer_proxy.unicast_locator_list.iter())
                .filter(|locator| locator.is_udp())
                .map(|locator| std::net::SocketAddr::from(*locator).to_string())
                .collect()
        })
        .unwrap_or_default();
    let at = if addresses.is_empty() {
        "unknown".to_string()
    } else {
        addresses.join(", ")
    };
    format!("GUID {hex} at {at}")
}

/// The hex of a participant's GUID prefix.
pub fn participant_id(participant: &DomainParticipant) -> String {
    use rustdds::RTPSEntity;
    let prefix = participant.guid().prefix;
    prefix.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}
