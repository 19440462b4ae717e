//! The errors of rules: a bad `[[rule]]` table, a condition that does not fit its topic's
//! messages, and a message the condition could not decode or evaluate.

use thiserror::Error;

/// A `[[rule]]` table that cannot be used, found at startup (or by `rec rules test`).
///
/// Each message names the rule and the key at fault, for a user reading a startup failure.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RuleError {
    /// A rule without a name, or with an empty one.
    #[error("rule #{index}: name is empty; give every [[rule]] a unique name")]
    EmptyName {
        /// Its position among the rules, from 1.
        index: usize,
    },
    /// Two rules with the same name.
    #[error("rule \"{name}\": the name is used by more than one [[rule]]; names must be unique")]
    DuplicateName {
        /// The name.
        name: String,
    },
    /// The condition (`when`) does not parse, reads an unknown variable, or does not fit
    /// the declared `fields`.
    #[error("rule \"{rule}\": {error}")]
    Condition {
        /// The rule's name.
        rule: String,
        /// What is wrong (its text starts with `when: `).
        error: CompileError,
    },
    /// Something wrong with one key of one rule.
    #[error("rule \"{rule}\": {key}: {problem}")]
    Invalid {
        /// The rule's name.
        rule: String,
        /// The key at fault (`topic`, `when`, `fields.speed`, …).
        key: String,
        /// What is wrong, in words.
        problem: String,
    },
}

impl RuleError {
    pub(crate) fn invalid(rule: &str, key: &str, problem: impl Into<String>) -> Self {
        RuleError::Invalid {
            rule: rule.to_owned(),
            key: key.to_owned(),
            problem: problem.into(),
        }
    }
}

/// Why a condition does not fit its topic's messages: a field it reads does not exist, or
/// the expression does not evaluate to a bool on them. Shown in `rec status` and the log,
/// prefixed with `when: `.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CompileError {
    /// The CEL expression does not parse.
    #[error("when: does not parse: {0}")]
    Parse(String),
    /// The expression reads a variable other than `msg` and `prev`.
    #[error("when: unknown variable \"{0}\"; a condition reads only msg (the message) and prev (the one before it)")]
    UnknownVariable(String),
    /// The schema (the channel's `ros2msg` definition) cannot be read.
    #[error("when: the schema of {type_name} cannot be read: {problem}")]
    Schema {
        /// The message type.
        type_name: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A field read by the expression is not in its message type.
    #[error("when: {type_name} has no field \"{field}\"; it has {available}")]
    NoField {
        /// The type (short name, e.g. `VehicleStatus`) or `the declared fields`.
        type_name: String,
        /// The missing field.
        field: String,
        /// The fields it has, comma-separated.
        available: String,
    },
    /// The expression selects a field of a value that has none (`msg.speed.x` on a number).
    #[error("when: {path} is {kind}, it has no field \"{field}\"")]
    NotAMessage {
        /// The path of the value, e.g. `msg.speed`.
        path: String,
        /// Its type, e.g. `float64`.
        kind: String,
        /// The field selected on it.
        field: String,
    },
    /// Evaluating on a synthetic message failed: a type error.
    #[error("when: {0}")]
    Type(String),
    /// The expression evaluates to something other than a bool.
    #[error("when: the condition gives {0}, not a bool (true or false)")]
    NotBool(String),
}

/// A message the condition could not decode or evaluate. Leaves the rule's state as it
/// was; the daemon counts these.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EvalError {
    /// The bytes end before the fields the condition reads.
    #[error("message truncated: {needed} bytes needed at offset {offset}, {len} in the message")]
    Truncated {
        /// Where the read started (from the start of the bytes).
        offset: usize,
        /// How many bytes it needed.
        needed: usize,
        /// The length of the bytes.
        len: usize,
    },
    /// The CDR encapsulation header is not one this crate reads.
    #[error("unsupported CDR encapsulation {0:#06x} (plain CDR, 0x0000 or 0x0001, is read)")]
    Encapsulation(u16),
    /// A length that cannot be right (a sequence longer than the message).
    #[error("malformed message: {0}")]
    Malformed(String),
    /// The expression failed on this message (e.g. a division by zero, an index out of
    /// range).
    #[error("evaluation failed: {0}")]
    Eval(String),
    /// The expression gave something other than a bool.
    #[error("the condition gave {0}, not a bool")]
    NotBool(String),
}
