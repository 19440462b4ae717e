//! A condition compiled for one topic's messages: the expression, the plan that decodes
//! only what it reads, and the checks made once at compile time.
//!
//! # Values
//!
//! Every integer type (`int8` … `uint64`, `byte`, `char`, declared `u8` … `i64`) is a CEL
//! `int` (an `i64`); only a `uint64` above `i64::MAX` is a `uint`. cel 0.15 compares `uint`
//! with `int` fine (`msg.gear == 4`), but has no `uint + int` and its `uint` subtraction
//! overflows below zero (`msg.count - prev.count`): with `int` the natural expressions work.
//! Floats are `double` (`msg.speed > 30` works too: CEL compares `double` with `int`).
//! `bool` is `bool`; `string` and `wstring` are `string`. Byte and `uint8` arrays and
//! sequences are lists of `int` (not `bytes`), so that `msg.data[0] == 255` and
//! `msg.data.exists(b, b > 3)` work. A nested message is a map of its read fields; a
//! sequence or array of messages a list of such maps.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use cel::common::value::{CowVal, Val};
use cel::context::VariableResolver;
use cel::{Context, Env, ExecutionError, Value};

use crate::decode::{decode, Boxed};
use crate::error::{CompileError, EvalError};
use crate::expression::{Expression, Root};
use crate::fields::Fields;
use crate::plan::{cdr_plan, fields_plan, Plan};
use crate::schema::Schema;
use crate::synthetic::synthetic;

/// How a topic's message bytes are laid out.
#[derive(Debug, Clone, Copy)]
pub enum Layout<'a> {
    /// A ROS 2 CDR message, with its channel's `ros2msg` schema.
    Ros2 {
        /// The type, e.g. `my_msgs/msg/VehicleStatus`.
        type_name: &'a str,
        /// The schema text: the type's fields, then its dependencies.
        definition: &'a str,
    },
    /// An iceoryx2 sample: a user header of `user_header_size` bytes, then the payload
    /// where the declared fields are.
    Fields {
        /// The declared fields.
        fields: &'a Fields,
        /// The size of the user header before the payload.
        user_header_size: usize,
    },
}

/// A message decoded as far as the condition reads it.
#[derive(Debug)]
pub struct Decoded {
    value: Boxed,
}

/// A condition ready to run on one topic's messages.
#[derive(Debug, Clone)]
pub struct Condition {
    expression: Expression,
    plan: Arc<Plan>,
}

static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| Arc::new(Env::stdlib()));

struct Vars<'a> {
    msg: &'a (dyn Val + 'static),
    prev: Option<&'a (dyn Val + 'static)>,
}

impl VariableResolver for Vars<'_> {
    fn resolve<'b>(&'b self, variable: &str) -> Option<CowVal<'b, 'b>> {
        match variable {
            "msg" => Some(CowVal::Borrowed(self.msg)),
            "prev" => self.prev.map(CowVal::Borrowed),
            _ => None,
        }
    }
}

impl Condition {
    /// Builds the plan of `expression` for `layout` and checks it: every field read exists,
    /// and the expression gives a bool without a type error on a synthetic message (every
    /// field zero or empty, every sequence with one element; `prev` the same).
    pub fn compile(expression: &Expression, layout: Layout<'_>) -> Result<Condition, CompileError> {
        let plan = match layout {
            Layout::Ros2 {
                type_name,
                definition,
            } => {
                let schema = Schema::parse(type_name, definition).map_err(|problem| {
                    CompileError::Schema {
                        type_name: type_name.to_owned(),
                        problem,
                    }
                })?;
                Plan::Cdr(cdr_plan(&schema, expression.tree())?)
            }
            Layout::Fields {
                fields,
                user_header_size,
            } => fields_plan(fields, user_header_size, expression.tree())?,
        };
        let condition = Condition {
            expression: expression.clone(),
            plan: Arc::new(plan),
        };
        let sample = synthetic(&condition.plan);
        match condition.evaluate(sample.as_ref(), Some(sample.as_ref())) {
            Ok(Value::Bool(_)) => Ok(condition),
            Ok(other) => Err(CompileError::NotBool(type_name(&other).to_owned())),
            Err(error) if depends_on_values(&error) => Ok(condition),
            Err(error) => Err(CompileError::Type(describe(&error))),
        }
    }

    /// The expression.
    pub fn expression(&self) -> &Expression {
        &self.expression
    }

    /// Decodes the fields the expression reads.
    pub fn decode(&self, bytes: &[u8]) -> Result<Decoded, EvalError> {
        decode(&self.plan, bytes).map(|value| Decoded { value })
    }

    /// Evaluates the condition on `msg`, with `prev` the message before it (`None`: there
    /// is none, and an expression reading `prev` fails).
    pub fn test(&self, msg: &Decoded, prev: Option<&Decoded>) -> Result<bool, EvalError> {
        match self.evaluate(msg.value.as_ref(), prev.map(|p| p.value.as_ref())) {
            Ok(Value::Bool(b)) => Ok(b),
            Ok(other) => Err(EvalError::NotBool(type_name(&other).to_owned())),
            Err(error) => Err(EvalError::Eval(describe(&error))),
        }
    }

    /// The values of the paths the expression reads, keyed like `msg.accel.x` (lists
    /// capped to their first [`MAX_LIST`](crate::MAX_LIST) elements).
    pub fn values(
        &self,
        msg: &Decoded,
        prev: Option<&Decoded>,
    ) -> BTreeMap<String, serde_json::Value> {
        let mut out = BTreeMap::new();
        for path in self.expression.paths() {
            let value = match path.root {
                Root::Msg => Some(msg),
                Root::Prev => prev,
            };
            if let Some(json) =
                value.and_then(|v| crate::json::at(v.value.as_ref(), &path.segments))
            {
                out.insert(path.to_string(), json);
            }
        }
        out
    }

    fn evaluate(
        &self,
        msg: &(dyn Val + 'static),
        prev: Option<&(dyn Val + 'static)>,
    ) -> Result<Value, ExecutionError> {
        let vars = Vars { msg, prev };
        let mut context = Context::with_env(ENV.clone());
        context.set_variable_resolver(&vars);
        self.expression.program().execute(&context)
    }
}

/// Errors that a synthetic message's zeros may cause where real values would not.
fn depends_on_values(error: &ExecutionError) -> bool {
    matches!(
        error,
        ExecutionError::DivisionByZero(_)
            | ExecutionError::RemainderByZero(_)
            | ExecutionError::Overflow(..)
            | ExecutionError::IndexOutOfBounds(_)
            | ExecutionError::FunctionError { .. }
    )
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::List(_) => "a list",
        Value::Map(_) => "a map",
        Value::Function(..) => "a function",
        Value::Int(_) => "an int",
        Value::UInt(_) => "a uint",
        Value::Float(_) => "a double",
        Value::String(_) => "a string",
        Value::Bytes(_) => "bytes",
        Value::Bool(_) => "a bool",
        Value::Null => "null",
        _ => "a value of another type",
    }
}

/// An operator's written form (`_<_` → `<`), `None` for a function.
fn operator(function: &str) -> Option<&'static str> {
    Some(match function {
        "_<_" => "<",
        "_<=_" => "<=",
        "_>_" => ">",
        "_>=_" => ">=",
        "_==_" => "==",
        "_!=_" => "!=",
        "_+_" => "+",
        "_-_" => "-",
        "_*_" => "*",
        "_/_" => "/",
        "_%_" => "%",
        "_&&_" => "&&",
        "_||_" => "||",
        "@in" => "in",
        _ => return None,
    })
}

/// An execution error in words.
fn describe(error: &ExecutionError) -> String {
    match error {
        ExecutionError::NoSuchOverload(o) => {
            let types = o.argument_types();
            match (operator(o.function()), types) {
                (Some(op), [a, b]) => {
                    format!("no such overload: {a} {op} {b} (CEL has no {op} for {a} and {b})")
                }
                _ if o.function() == "_[_]" && types.len() == 2 => {
                    format!(
                        "no such overload: {}[{}] (a {} cannot be indexed by {})",
                        types[0], types[1], types[0], types[1]
                    )
                }
                _ if o.is_member_function() && !types.is_empty() => format!(
                    "no such overload: {}.{}({})",
                    types[0],
                    o.function(),
                    types[1..].join(", ")
                ),
                _ => format!("no such overload: {}({})", o.function(), types.join(", ")),
            }
        }
        ExecutionError::UndeclaredReference(name) => {
            format!("unknown function or variable \"{name}\"")
        }
        ExecutionError::NoSuchKey(key) => format!("no field \"{key}\" here"),
        ExecutionError::ValuesNotComparable(a, b) => {
            format!("{a:?} cannot be compared with {b:?}")
        }
        ExecutionError::UnexpectedType { got, want } => {
            format!("got a {got} where a {want} is needed")
        }
        other => other.to_string(),
    }
}
