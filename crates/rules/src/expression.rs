//! A parsed CEL condition and the fields it reads.
//!
//! The paths are found by walking the expanded CEL syntax tree: a chain of field selections
//! rooted at `msg` or `prev` (`msg.accel.x`) reads that field; an index (`msg.status[0]`)
//! reads the elements of the sequence, so selections after it are paths inside the
//! elements (`msg.status[0].level` reads `level` of `msg.status`'s elements); and the
//! iteration variable of a comprehension macro over a path (`msg.status.exists(s,
//! s.level >= 2)`) stands for the elements of that path, so its selections are paths
//! inside them. A path used as a whole (`msg.accel == prev.accel`, `size(msg.status)`)
//! reads everything below it.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use cel::common::ast::{EntryExpr, Expr};
use cel::{IdedExpr, Program};

use crate::error::CompileError;

/// Which message a path starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Root {
    /// `msg`, the message being tested.
    Msg,
    /// `prev`, the message before it on the same topic.
    Prev,
}

impl Root {
    /// The variable's name.
    pub fn name(self) -> &'static str {
        match self {
            Root::Msg => "msg",
            Root::Prev => "prev",
        }
    }
}

/// A field path the expression reads, e.g. `msg.accel.x`; for a comprehension over a
/// sequence, the sequence's path (`msg.status`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FieldPath {
    /// The variable it starts from.
    pub root: Root,
    /// The field names after it (empty for `msg` itself).
    pub segments: Vec<String>,
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.root.name())?;
        for segment in &self.segments {
            write!(f, ".{segment}")?;
        }
        Ok(())
    }
}

/// The fields read below one point of a message: `whole` when the value there is used as a
/// whole (everything below it is read), else only `children`.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct ReadTree {
    pub whole: bool,
    pub children: BTreeMap<String, ReadTree>,
}

impl ReadTree {
    fn insert(&mut self, segments: &[String], whole: bool) {
        let mut node = self;
        for segment in segments {
            node = node.children.entry(segment.clone()).or_default();
        }
        node.whole |= whole;
    }
}

/// A parsed CEL condition, with the field paths it reads under `msg` and `prev`.
#[derive(Clone)]
pub struct Expression {
    source: String,
    program: Arc<Program>,
    paths: Vec<FieldPath>,
    tree: ReadTree,
    reads_prev: bool,
}

impl fmt::Debug for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Expression")
            .field("source", &self.source)
            .field("paths", &self.paths)
            .finish()
    }
}

impl Expression {
    /// Parses `source`; refuses an expression that does not parse or reads a variable
    /// other than `msg` and `prev`.
    pub fn parse(source: &str) -> Result<Expression, CompileError> {
        let program = Program::compile(source).map_err(|errors| {
            let text = errors
                .errors
                .iter()
                .map(|e| format!("{} (line {}, column {})", e.msg, e.pos.0, e.pos.1 + 1))
                .collect::<Vec<_>>()
                .join("; ");
            CompileError::Parse(text)
        })?;
        let mut walker = Walker::default();
        walker.walk(program.expression());
        if let Some(error) = walker.error {
            return Err(error);
        }
        Ok(Expression {
            source: source.to_owned(),
            program: Arc::new(program),
            reads_prev: walker.paths.iter().any(|p| p.root == Root::Prev),
            paths: walker.paths,
            tree: walker.tree,
        })
    }

    /// The text it was parsed from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The paths it reads, in the order they first appear, each once: full field paths
    /// (`msg.accel.x`), and for a comprehension over a sequence the sequence (`msg.status`).
    pub fn paths(&self) -> &[FieldPath] {
        &self.paths
    }

    /// Whether it reads `prev`.
    pub fn reads_prev(&self) -> bool {
        self.reads_prev
    }

    /// The union of what it reads under `msg` and `prev` (one message type).
    pub(crate) fn tree(&self) -> &ReadTree {
        &self.tree
    }

    pub(crate) fn program(&self) -> &Program {
        &self.program
    }
}

/// Names CEL resolves as type identifiers (`type(x) == int`).
const TYPE_NAMES: &[&str] = &[
    "int",
    "uint",
    "double",
    "bool",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
];

/// What a comprehension's variable stands for: the elements of a path, or a value of its
/// own (an index, an accumulator).
type Binding = Option<(Root, Vec<String>)>;

#[derive(Default)]
struct Walker {
    tree: ReadTree,
    paths: Vec<FieldPath>,
    scope: Vec<(String, Binding)>,
    error: Option<CompileError>,
}

/// An identifier with selections and indexes on it: the identifier, the field names
/// (indexes are transparent, string-literal indexes are field names), and the index
/// expressions to walk on their own.
fn chain(expr: &IdedExpr) -> Option<(&str, Vec<String>, Vec<&IdedExpr>)> {
    let mut segments = Vec::new();
    let mut extra = Vec::new();
    let mut expr = expr;
    loop {
        match &expr.expr {
            Expr::Ident(name) => {
                segments.reverse();
                return Some((name, segments, extra));
            }
            Expr::Select(select) if !select.test => {
                segments.push(select.field.clone());
                expr = &select.operand;
            }
            Expr::Call(call)
                if call.func_name == "_[_]" && call.target.is_none() && call.args.len() == 2 =>
            {
                match &call.args[1].expr {
                    Expr::Literal(cel::common::ast::LiteralValue::String(key)) => {
                        segments.push(key.inner().to_string());
                    }
                    _ => extra.push(&call.args[1]),
                }
                expr = &call.args[0];
            }
            _ => return None,
        }
    }
}

impl Walker {
    /// Records a read of `segments` below `base`; returns where it lands (for a
    /// comprehension's range).
    fn record(&mut self, base: &str, segments: Vec<String>, whole: bool) -> Binding {
        if let Some((_, binding)) = self.scope.iter().rev().find(|(name, _)| name == base) {
            let (root, prefix) = binding.clone()?;
            let mut path = prefix;
            path.extend(segments);
            self.tree.insert(&path, whole);
            return Some((root, path));
        }
        let root = match base {
            "msg" => Root::Msg,
            "prev" => Root::Prev,
            _ if TYPE_NAMES.contains(&base) => return None,
            _ => {
                self.error
                    .get_or_insert_with(|| CompileError::UnknownVariable(base.to_owned()));
                return None;
            }
        };
        self.tree.insert(&segments, whole);
        let path = FieldPath {
            root,
            segments: segments.clone(),
        };
        if !self.paths.contains(&path) {
            self.paths.push(path);
        }
        Some((root, segments))
    }

    fn walk(&mut self, expr: &IdedExpr) {
        if let Some((base, segments, extra)) = chain(expr) {
            self.record(base, segments, true);
            extra.into_iter().for_each(|e| self.walk(e));
            return;
        }
        match &expr.expr {
            Expr::Select(select) => match chain(&select.operand) {
                Some((base, mut segments, extra)) if select.test => {
                    segments.push(select.field.clone());
                    self.record(base, segments, true);
                    extra.into_iter().for_each(|e| self.walk(e));
                }
                _ => self.walk(&select.operand),
            },
            Expr::Call(call) => {
                if let Some(target) = &call.target {
                    self.walk(target);
                }
                call.args.iter().for_each(|a| self.walk(a));
            }
            Expr::Comprehension(c) => {
                let binding = match chain(&c.iter_range) {
                    Some((base, segments, extra)) => {
                        extra.into_iter().for_each(|e| self.walk(e));
                        self.record(base, segments, false)
                    }
                    None => {
                        self.walk(&c.iter_range);
                        None
                    }
                };
                self.walk(&c.accu_init);
                let depth = self.scope.len();
                match &c.iter_var2 {
                    Some(second) => {
                        self.scope.push((c.iter_var.clone(), None));
                        self.scope.push((second.clone(), binding));
                    }
                    None => self.scope.push((c.iter_var.clone(), binding)),
                }
                self.scope.push((c.accu_var.clone(), None));
                self.walk(&c.loop_cond);
                self.walk(&c.loop_step);
                self.walk(&c.result);
                self.scope.truncate(depth);
            }
            Expr::List(list) => list.elements.iter().for_each(|e| self.walk(e)),
            Expr::Map(map) => map.entries.iter().for_each(|e| self.walk_entry(&e.expr)),
            Expr::Struct(s) => s.entries.iter().for_each(|e| self.walk_entry(&e.expr)),
            Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
        }
    }

    fn walk_entry(&mut self, entry: &EntryExpr) {
        match entry {
            EntryExpr::StructField(field) => self.walk(&field.value),
            EntryExpr::MapEntry(entry) => {
                self.walk(&entry.key);
                self.walk(&entry.value);
            }
        }
    }
}
