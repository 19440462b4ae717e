//! The file a reindex or a cut writes its copy into: paced to the disk as it grows, and
//! sealed when the copy is of a sealed file.

use std::fs::File;
use std::io;

use recd_seal::{SealError, SealKey, SealedWriter};

use crate::durability::{Durability, WriteBack};
use crate::sealing::Sealing;

/// The output file, handed to the disk window by window as it grows (as recordings are,
/// see [`crate::durability`]) rather than all at the final sync: the disk writes while the
/// reindex reads and compresses, and the copy does not crowd the page cache.
pub(crate) struct PacedOutput<'f> {
    file: &'f mut File,
    written: u64,
    write_back: WriteBack,
}

impl<'f> PacedOutput<'f> {
    pub(crate) fn new(file: &'f mut File) -> Self {
        let write_back = WriteBack::for_file(Durability::default(), file);
        Self {
            file,
            written: 0,
            write_back,
        }
    }
}

impl io::Write for PacedOutput<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let written = self.file.write(bytes)?;
        self.written += written as u64;
        self.write_back.after_write(self.file, self.written)?;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// A copy's output: plain, or sealed under a fresh key.
pub(crate) enum CopyOutput<'f> {
    Plain(PacedOutput<'f>),
    Sealed(Box<SealedWriter<PacedOutput<'f>>>),
}

impl<'f> CopyOutput<'f> {
    /// Writes into `file`, sealed to `sealing`'s recipients when given; the fresh key of
    /// a sealed output, to be kept once the file is in place.
    pub(crate) fn new(
        file: &'f mut File,
        sealing: Option<&Sealing>,
    ) -> Result<(Self, Option<SealKey>), SealError> {
        let paced = PacedOutput::new(file);
        Ok(match sealing {
            Some(sealing) => {
                let writer = SealedWriter::new(paced, &sealing.recipients)?;
                let key = writer.key().clone();
                (Self::Sealed(Box::new(writer)), Some(key))
            }
            None => (Self::Plain(paced), None),
        })
    }

    /// Flushes the plain output; seals the last chunk of the sealed one.
    pub(crate) fn finish(self) -> io::Result<()> {
        match self {
            Self::Plain(mut out) => io::Write::flush(&mut out),
            Self::Sealed(out) => out.finish().map(drop).map_err(io::Error::other),
        }
    }
}

impl io::Write for CopyOutput<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Plain(out) => out.write(buf),
            Self::Sealed(out) => out.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Plain(out) => out.flush(),
            Self::Sealed(out) => out.flush(),
        }
    }
}
