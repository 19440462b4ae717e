//! Filling in the empty `ros2msg` schemas of a file recorded where no `.msg` files were
//! (an ECU without ROS installed), while it is reindexed (`rec reindex --msg-path`).

use std::borrow::Cow;
use std::collections::BTreeMap;

use recd_ros2::msgdef::{MessageDefinitions, SCHEMA_ENCODING};

/// Builds each missing definition once per file and remembers which it added and which it
/// could not build.
pub(crate) struct DefinitionFill<'a> {
    definitions: Option<&'a MessageDefinitions>,
    /// Per ROS type: the definition built, or why none could be.
    built: BTreeMap<String, Result<Vec<u8>, String>>,
}

impl<'a> DefinitionFill<'a> {
    /// Fills from `definitions`; with `None`, schemas are kept as they are.
    pub fn new(definitions: Option<&'a MessageDefinitions>) -> Self {
        Self {
            definitions,
            built: BTreeMap::new(),
        }
    }

    /// The data to write for schema `name`: its own, or, when that is empty and the
    /// schema is a ROS 2 message's, the definition built from the `.msg` files.
    pub fn data<'d>(&mut self, name: &str, encoding: &str, data: Cow<'d, [u8]>) -> Cow<'d, [u8]> {
        let Some(definitions) = self.definitions else {
            return data;
        };
        if !data.is_empty() || encoding != SCHEMA_ENCODING {
            return data;
        }
        let built = self.built.entry(name.to_string()).or_insert_with(|| {
            definitions
                .definition(name)
                .map(String::into_bytes)
                .map_err(|error| error.to_string())
        });
        match built {
            Ok(text) => Cow::Owned(text.clone()),
            Err(_) => data,
        }
    }

    /// The types whose definitions were added.
    pub fn added(&self) -> Vec<String> {
        (self.built.iter())
            .filter(|(_, built)| built.is_ok())
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// The types still without a definition, each with the reason.
    pub fn missing(&self) -> Vec<String> {
        (self.built.values())
            .filter_map(|built| built.as_ref().err().cloned())
            .collect()
    }
}
