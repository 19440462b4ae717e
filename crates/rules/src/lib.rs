//! Rules: incidents that fire by themselves, on a message's content or a topic's health.
//!
//! A `[[rule]]` table ([`RuleConfig`]) is checked at startup into a [`Rule`]
//! ([`check_rules`]). A content rule's `when` is a CEL [`Expression`] over `msg` (the
//! message) and `prev` (the one before it on the topic). Once the topic's layout is known
//! (its ROS 2 schema, or the declared fields of an iceoryx2 topic: [`Layout`]), the
//! expression is compiled into a [`Condition`], which decodes only the fields it reads
//! and is checked against a synthetic message for type errors. A [`RuleRunner`] feeds each
//! sample through the condition and a [`Trigger`] (rising edge, `hold`, `holdoff`) and
//! returns a [`Firing`] with the values read. The daemon and `rec rules test` both run
//! rules through this crate, so live and offline firings are the same.

#![warn(missing_docs)]

mod channel;
mod condition;
mod config;
mod decode;
mod error;
mod expression;
mod fields;
mod glob;
mod json;
mod plan;
mod runner;
mod schema;
mod synthetic;
mod trigger;

pub use channel::{ChannelView, NoRunner};
pub use condition::{Condition, Decoded, Layout};
pub use config::{check_rules, Rule, RuleConfig, RuleKind};
pub use error::{CompileError, EvalError, RuleError};
pub use expression::{Expression, FieldPath, Root};
pub use fields::{FieldKind, FieldSpec, Fields, FIELD_KINDS};
pub use glob::glob_match;
pub use json::MAX_LIST;
pub use runner::{Firing, RuleRunner};
pub use trigger::Trigger;

#[cfg(test)]
mod tests;
