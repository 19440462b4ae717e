//! The writer's part in the nodes' parameters (`rec start --parameters`): it tells the
//! [`ParameterBoard`] of each file it opens and writes what was read for that file, one
//! Metadata record per node (`parameters/<file name>/<node>`), as it is posted. Looking
//! costs a load of the board's version between passes; writing, a copy of each record,
//! which the reading thread encoded.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{LoanedBytes, Writer};
use crate::parameters::ParameterBoard;

/// What the writer keeps of the parameters: the board, the file it last told it of, and
/// the nodes written into that file.
pub(super) struct FileParameters {
    board: Arc<ParameterBoard>,
    file: Option<u32>,
    written: BTreeSet<String>,
    /// The board's version at the last look.
    seen: u64,
}

impl FileParameters {
    pub fn new(board: Arc<ParameterBoard>) -> Self {
        Self {
            board,
            file: None,
            written: BTreeSet::new(),
            seen: 0,
        }
    }
}

impl<S: LoanedBytes> Writer<S> {
    /// Writes into the current file the parameters read for it that it lacks.
    pub(super) fn write_parameters(&mut self) {
        let Some(parameters) = self.parameters.as_mut() else {
            return;
        };
        let number = self.files.file_number();
        if parameters.file != Some(number) {
            // The name is made once per file: this runs between every two passes.
            let Some(name) = self.files.current_name() else {
                return;
            };
            parameters.file = Some(number);
            parameters.written.clear();
            parameters.board.file_opened(number, &name);
        }
        let version = parameters.board.version();
        if version == parameters.seen {
            return;
        }
        parameters.seen = version;
        let unwritten = parameters.board.unwritten(number, &mut parameters.written);
        let Some(file) = self.files.current.as_mut() else {
            return;
        };
        let mut failure = None;
        for record in unwritten {
            if let Err(error) = file.add_encoded_metadata(&record) {
                failure.get_or_insert(error);
            }
        }
        if let Some(error) = failure {
            self.fail(error);
        }
    }
}
