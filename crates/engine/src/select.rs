//! Topic selection by glob patterns.

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::config::TopicSelection;

/// A compiled [`TopicSelection`].
#[derive(Debug, Clone)]
pub struct TopicFilter {
    include: Option<GlobSet>,
    exclude: GlobSet,
    types: Option<GlobSet>,
    exclude_types: GlobSet,
}

/// A topic pattern that is not a valid glob.
#[derive(Debug, thiserror::Error)]
#[error("invalid topic pattern {pattern:?}: {reason}")]
pub struct PatternError {
    /// The pattern as given.
    pub pattern: String,
    /// Why it is invalid.
    pub reason: String,
}

impl TopicFilter {
    /// Compiles the patterns of `selection`.
    pub fn new(selection: &TopicSelection) -> Result<Self, PatternError> {
        Ok(Self {
            include: compile_unless_empty(&selection.include)?,
            exclude: compile(&selection.exclude)?,
            types: compile_unless_empty(&selection.types)?,
            exclude_types: compile(&selection.exclude_types)?,
        })
    }

    /// Whether include patterns were given (without, everything is included).
    pub fn has_include_patterns(&self) -> bool {
        self.include.is_some()
    }

    /// Whether a service of this name is recorded (whatever its type).
    pub fn matches(&self, name: &str) -> bool {
        self.include.as_ref().is_none_or(|set| set.is_match(name)) && !self.exclude.is_match(name)
    }

    /// Whether samples of this message type are recorded.
    pub fn matches_type(&self, type_name: &str) -> bool {
        self.types
            .as_ref()
            .is_none_or(|set| set.is_match(type_name))
            && !self.exclude_types.is_match(type_name)
    }
}

/// Include patterns: none given selects everything (`None`), not nothing.
fn compile_unless_empty(patterns: &[String]) -> Result<Option<GlobSet>, PatternError> {
    (!patterns.is_empty())
        .then(|| compile(patterns))
        .transpose()
}

fn compile(patterns: &[String]) -> Result<GlobSet, PatternError> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = Glob::new(pattern).map_err(|e| PatternError {
            pattern: pattern.clone(),
            reason: e.kind().to_string(),
        })?;
        builder.add(glob);
    }
    builder.build().map_err(|e| PatternError {
        pattern: patterns.join(" "),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(patterns: &[&str]) -> Vec<String> {
        patterns.iter().map(|s| s.to_string()).collect()
    }

    fn filter(include: &[&str], exclude: &[&str]) -> TopicFilter {
        TopicFilter::new(&TopicSelection {
            include: strings(include),
            exclude: strings(exclude),
            ..TopicSelection::default()
        })
        .unwrap()
    }

    #[test]
    fn types_are_filtered_apart_from_names() {
        let f = TopicFilter::new(&TopicSelection {
            types: strings(&["sensor_msgs/msg/*"]),
            exclude_types: strings(&["sensor_msgs/msg/PointCloud2"]),
            ..TopicSelection::default()
        })
        .unwrap();
        assert!(f.matches("anything"));
        assert!(f.matches_type("sensor_msgs/msg/Image"));
        assert!(!f.matches_type("sensor_msgs/msg/PointCloud2"));
        assert!(!f.matches_type("std_msgs/msg/String"));
        assert!(filter(&[], &[]).matches_type("u8"));
    }

    #[test]
    fn empty_include_means_all_but_excludes() {
        let f = filter(&[], &["debug/*"]);
        assert!(f.matches("camera/front"));
        assert!(!f.matches("debug/trace"));
    }

    #[test]
    fn include_globs_cross_slashes() {
        let f = filter(&["camera*"], &["camera/rear"]);
        assert!(f.matches("camera/front/raw"));
        assert!(!f.matches("camera/rear"));
        assert!(!f.matches("lidar"));
    }

    #[test]
    fn bad_pattern_is_named() {
        let err = TopicFilter::new(&TopicSelection {
            include: vec!["a[".into()],
            ..TopicSelection::default()
        })
        .unwrap_err();
        assert_eq!(err.pattern, "a[");
    }
}
