//! Topic selection by glob patterns.

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::config::{NameSelection, TopicSelection};

/// A compiled [`TopicSelection`].
#[derive(Debug, Clone)]
pub struct TopicFilter {
    include: Option<GlobSet>,
    exclude: GlobSet,
    types: Option<GlobSet>,
    exclude_types: GlobSet,
    services: NameFilter,
    actions: NameFilter,
    everything: bool,
    parameter_events: bool,
}

/// A compiled [`NameSelection`].
#[derive(Debug, Clone)]
struct NameFilter {
    include: GlobSet,
    all: bool,
    exclude: GlobSet,
}

impl NameFilter {
    fn new(selection: &NameSelection) -> Result<Self, PatternError> {
        Ok(Self {
            include: compile(&selection.include)?,
            all: selection.all,
            exclude: compile(&selection.exclude)?,
        })
    }

    /// Whether `name` is recorded; `everything` when nothing at all was asked for. A
    /// pattern matches the name with or without its leading `/` (`add_two_ints` names
    /// `/add_two_ints`, as `ros2 bag record --services add_two_ints` does).
    fn matches(&self, name: &str, everything: bool) -> bool {
        let relative = name.strip_prefix('/').unwrap_or(name);
        let matches = |set: &GlobSet| set.is_match(name) || set.is_match(relative);
        (everything || self.all || matches(&self.include)) && !matches(&self.exclude)
    }
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
            services: NameFilter::new(&selection.services)?,
            actions: NameFilter::new(&selection.actions)?,
            everything: selection.selects_everything(),
            parameter_events: selection.parameter_events,
        })
    }

    /// Whether nothing was asked for by name or type: every topic is recorded (but those
    /// excluded).
    pub fn selects_everything(&self) -> bool {
        self.everything
    }

    /// Whether `/parameter_events` is recorded whatever the patterns say
    /// ([`TopicSelection::parameter_events`]).
    pub fn records_parameter_events(&self) -> bool {
        self.parameter_events
    }

    /// Whether include patterns were given (without, everything is included).
    pub fn has_include_patterns(&self) -> bool {
        self.include.is_some()
    }

    /// Whether a topic (an iceoryx2 service, a DDS topic) of this name is recorded
    /// (whatever its type): none is when only ROS 2 services or actions were asked for.
    pub fn matches(&self, name: &str) -> bool {
        let included = match &self.include {
            Some(set) => set.is_match(name),
            None => self.everything || self.types.is_some(),
        };
        included && !self.exclude.is_match(name)
    }

    /// Whether the introspection events of this ROS 2 service (`/add_two_ints`) are
    /// recorded: all when nothing at all was asked for, else those `--services` or
    /// `--all-services` ask for, but `--exclude-services`.
    pub fn matches_service(&self, service: &str) -> bool {
        self.services.matches(service, self.everything)
    }

    /// Whether the topics and service events of this ROS 2 action (`/fibonacci`) are
    /// recorded, as [`matches_service`](Self::matches_service) for actions.
    pub fn matches_action(&self, action: &str) -> bool {
        self.actions.matches(action, self.everything)
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
    fn services_and_actions_are_selected_apart_from_topics() {
        let everything = filter(&[], &[]);
        assert!(everything.matches("/chatter"));
        assert!(everything.matches_service("/add_two_ints"));
        assert!(everything.matches_action("/fibonacci"));

        let services_only = TopicFilter::new(&TopicSelection {
            services: NameSelection {
                include: strings(&["/add_*"]),
                ..NameSelection::default()
            },
            ..TopicSelection::default()
        })
        .unwrap();
        assert!(!services_only.matches("/chatter"));
        assert!(services_only.matches_service("/add_two_ints"));
        assert!(!services_only.matches_service("/set_parameters"));
        let relative = TopicFilter::new(&TopicSelection {
            services: NameSelection {
                include: strings(&["add_two_ints"]),
                ..NameSelection::default()
            },
            ..TopicSelection::default()
        })
        .unwrap();
        assert!(relative.matches_service("/add_two_ints"));
        assert!(!services_only.matches_action("/fibonacci"));

        let topics_and_all_actions = TopicFilter::new(&TopicSelection {
            include: strings(&["/chatter"]),
            actions: NameSelection {
                all: true,
                exclude: strings(&["/secret"]),
                ..NameSelection::default()
            },
            ..TopicSelection::default()
        })
        .unwrap();
        assert!(topics_and_all_actions.matches("/chatter"));
        assert!(!topics_and_all_actions.matches("/other"));
        assert!(!topics_and_all_actions.matches_service("/add_two_ints"));
        assert!(topics_and_all_actions.matches_action("/fibonacci"));
        assert!(!topics_and_all_actions.matches_action("/secret"));

        let types_only = TopicFilter::new(&TopicSelection {
            types: strings(&["std_msgs/msg/*"]),
            ..TopicSelection::default()
        })
        .unwrap();
        assert!(types_only.matches("/chatter"));
        assert!(!types_only.matches_service("/add_two_ints"));
    }

    #[test]
    fn topics_set_adds_and_removes_patterns_without_widening_the_selection() {
        let names = |patterns: &[&str]| strings(patterns);
        let some = TopicSelection {
            include: names(&["/a", "/b"]),
            ..TopicSelection::default()
        };
        let changed = some.changed(&names(&["/c"]), &names(&["/a"]));
        assert_eq!(changed.include, names(&["/a", "/b", "/c"]));
        assert_eq!(changed.exclude, names(&["/a"]));
        let f = TopicFilter::new(&changed).unwrap();
        assert!(!f.matches("/a") && f.matches("/b") && f.matches("/c"));

        let last_removed = TopicSelection {
            include: names(&["/a"]),
            ..TopicSelection::default()
        }
        .changed(&[], &names(&["/a"]));
        assert!(!TopicFilter::new(&last_removed).unwrap().matches("/z"));

        let back = changed.changed(&names(&["/a"]), &[]);
        assert!(back.exclude.is_empty());
        assert!(TopicFilter::new(&back).unwrap().matches("/a"));

        let everything = TopicSelection::default().changed(&names(&["/a"]), &names(&["/x"]));
        assert!(
            everything.include.is_empty(),
            "adding to everything narrows nothing"
        );
        let f = TopicFilter::new(&everything).unwrap();
        assert!(f.matches("/a") && f.matches("/other") && !f.matches("/x"));
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
