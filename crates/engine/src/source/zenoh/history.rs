//! A transient-local publisher's history, fetched for a recorder that joined late.
//!
//! rmw_zenoh makes a transient-local publisher a zenoh-ext advanced publisher with a
//! cache of its last `depth` samples, answering queries on
//! `<topic key>/@adv/pub/<session id>/<entity>/_` with the samples as they were put (on
//! the topic's key, with their attachments). The source asks that publisher's cache
//! once, when its token appears; the replies are recorded as samples of the topic, but
//! for those received already.

use std::sync::{Arc, Mutex};

use zenoh::query::{ConsolidationMode, QueryTarget, Reply, ReplyKeyExpr};
use zenoh::{Session, Wait};

use super::receive::Inbox;
use super::token::Token;

/// How long the publisher has to answer.
const ANSWER_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// The selector of the cache of the publisher `token` announces.
pub(super) fn selector(token: &Token) -> Option<String> {
    let topic = token.topic.as_ref()?;
    Some(format!(
        "{}/{}/{}/{}/@adv/pub/{}/**",
        token.domain,
        topic.ros_topic.trim_start_matches('/'),
        topic.type_name,
        topic.type_hash,
        token.zid
    ))
}

/// Asks `token`'s publisher for the samples it keeps; they go to the topic in `slot`.
/// Zenoh answers on its own threads; a query that cannot be sent is named as a problem
/// of the topic.
pub(super) fn fetch(
    session: &Session,
    inbox: &Arc<Mutex<Inbox>>,
    token: &Token,
    slot: usize,
) -> Result<(), String> {
    let Some(selector) = selector(token) else {
        return Ok(());
    };
    let inbox = inbox.clone();
    session
        .get(selector.as_str())
        .accept_replies(ReplyKeyExpr::Any)
        .consolidation(ConsolidationMode::None)
        .target(QueryTarget::All)
        .timeout(ANSWER_TIME)
        .callback(move |reply: Reply| {
            if let Ok(sample) = reply.result() {
                let mut inbox = inbox.lock().unwrap_or_else(|e| e.into_inner());
                inbox.on_history(slot, sample);
            }
        })
        .wait()
        .map_err(|e| format!("cannot ask {selector} for its history: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_is_asked_on_its_publishers_key() {
        let token = Token::parse(
            "@ros2_lv/0/8b20917502ee955ac4476e0266340d5c/0/10/MP/%/%/talker/%map/nav_msgs::msg::dds_::OccupancyGrid_/RIHS01_ab/:1:,1:,:,:,,",
        )
        .unwrap();
        assert_eq!(
            selector(&token).unwrap(),
            "0/map/nav_msgs::msg::dds_::OccupancyGrid_/RIHS01_ab/@adv/pub/8b20917502ee955ac4476e0266340d5c/**"
        );
    }
}
