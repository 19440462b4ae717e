//! The topics an incident keeps, when its asker named some (a fleet window's `topics`):
//! glob patterns, compiled as recd compiles `--topic` (and `rec fleet find --topic`), so
//! that a cut keeps exactly the topics a recording with those patterns would record.

use recd_engine::{TopicFilter, TopicSelection};

/// The filter of `patterns`, or why they are refused: one is empty, or not a glob.
pub fn topic_filter(patterns: &[String]) -> Result<TopicFilter, String> {
    if let Some(blank) = patterns
        .iter()
        .position(|pattern| pattern.trim().is_empty())
    {
        return Err(format!(
            "topic pattern {} of {} is empty: give a glob such as \"/camera/*\", or leave topics out to keep every topic",
            blank + 1,
            patterns.len()
        ));
    }
    TopicFilter::new(&TopicSelection {
        include: patterns.to_vec(),
        ..TopicSelection::default()
    })
    .map_err(|error| format!("{error}: topics take globs such as \"/camera/*\""))
}

/// What an incident's cut keeps of `patterns` (`None`: every topic).
pub fn cut_topics(patterns: Option<&[String]>) -> Result<Option<recd_storage::CutTopics>, String> {
    let Some(patterns) = patterns else {
        return Ok(None);
    };
    let filter = topic_filter(patterns)?;
    Ok(Some(recd_storage::CutTopics::new(move |topic: &str| {
        filter.matches(topic)
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns(patterns: &[&str]) -> Vec<String> {
        patterns.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn topics_are_globs_and_an_empty_one_is_refused() {
        let filter = topic_filter(&patterns(&["/camera/*", "/imu"])).unwrap();
        assert!(filter.matches("/camera/front"));
        assert!(filter.matches("/imu"));
        assert!(!filter.matches("/lidar"));
        let why = topic_filter(&patterns(&["/imu", " "])).unwrap_err();
        assert!(why.starts_with("topic pattern 2 of 2 is empty"), "{why}");
        let why = topic_filter(&patterns(&["/camera/[a"])).unwrap_err();
        assert!(why.contains("/camera/[a"), "{why}");
    }

    #[test]
    fn a_cut_keeps_the_topics_named_or_every_one() {
        assert!(cut_topics(None).unwrap().is_none());
        let chosen = patterns(&["cam/camera/1"]);
        let topics = cut_topics(Some(chosen.as_slice())).unwrap().unwrap();
        assert!(topics.keeps("cam/camera/1"));
        assert!(!topics.keeps("cam/camera/0"));
    }
}
