//! A file read by positioned reads that counts every byte it reads, so that a cut can say
//! exactly what it read of each input; a sealed file is read through its key, chunk by
//! chunk, in memory.

use std::cell::{Cell, RefCell};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

use recd_seal::{OpenError, SealKey, SealedReader};

/// Where the bytes come from.
enum Source<'f> {
    Plain(&'f File),
    /// A sealed file's plaintext (of a file still being written: its sealed chunks).
    Sealed(Box<RefCell<SealedReader<&'f File>>>),
}

/// Reads `file` at a position of its own (a `pread` per read), counting the bytes. Its
/// positioned reads take it shared, so that a scan's buffer and the scan itself read
/// through the one count.
pub(super) struct Pread<'f> {
    source: Source<'f>,
    position: u64,
    read: Cell<u64>,
}

impl<'f> Pread<'f> {
    pub fn new(file: &'f File) -> Self {
        Self::with(Source::Plain(file))
    }

    /// The plaintext of the sealed `file`, read with its `key`: of a file still being
    /// written (`growing`), its whole chunks so far; of any other, all of it, which must
    /// authenticate to its end.
    pub fn sealed(file: &'f File, key: &SealKey, growing: bool) -> Result<Self, OpenError> {
        let reader = if growing {
            SealedReader::open_growing_with_key(file, key)?
        } else {
            SealedReader::open_with_key(file, key)?
        };
        Ok(Self::with(Source::Sealed(Box::new(RefCell::new(reader)))))
    }

    fn with(source: Source<'f>) -> Self {
        Self {
            source,
            position: 0,
            read: Cell::new(0),
        }
    }

    /// The bytes there are to read (of a sealed file: its plaintext).
    pub fn len(&self) -> io::Result<u64> {
        match &self.source {
            Source::Plain(file) => Ok(file.metadata()?.len()),
            Source::Sealed(reader) => Ok(reader.borrow().plaintext_len()),
        }
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.read.get()
    }

    fn count(&self, bytes: usize) {
        self.read.set(self.read.get() + bytes as u64);
    }

    /// Exactly `len` bytes at `offset`, in one positioned read (a few where the kernel
    /// returns less).
    pub fn read_range(&self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        let len = usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        let mut bytes = vec![0u8; len];
        self.read_exact_at(&mut bytes, offset)?;
        Ok(bytes)
    }

    /// Fills `buf` from `offset`; `UnexpectedEof` where the file ends first.
    pub fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        match &self.source {
            Source::Plain(file) => file.read_exact_at(buf, offset)?,
            Source::Sealed(reader) => {
                let mut reader = reader.borrow_mut();
                reader.seek(SeekFrom::Start(offset))?;
                reader.read_exact(buf)?;
            }
        }
        self.count(buf.len());
        Ok(())
    }

    /// Asks the kernel to read `len` bytes at `offset` in the background, so that they
    /// are in memory when [`Self::read_range`] wants them: the disk works on the next
    /// chunk while this one is decoded and written. Refused, there is only no read-ahead.
    pub fn will_need(&self, offset: u64, len: u64) {
        let Source::Plain(file) = &self.source else {
            return;
        };
        let (Ok(offset), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len))
        else {
            return;
        };
        // SAFETY: posix_fadvise only reads the descriptor, which `file` keeps open.
        unsafe { libc::posix_fadvise(file.as_raw_fd(), offset, len, libc::POSIX_FADV_WILLNEED) };
    }
}

impl Read for Pread<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = match &self.source {
            Source::Plain(file) => file.read_at(buf, self.position)?,
            Source::Sealed(reader) => {
                let mut reader = reader.borrow_mut();
                reader.seek(SeekFrom::Start(self.position))?;
                reader.read(buf)?
            }
        };
        self.position += n as u64;
        self.count(n);
        Ok(n)
    }
}

impl Seek for Pread<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.position = match to {
            SeekFrom::Start(at) => at,
            SeekFrom::End(delta) => self
                .len()?
                .checked_add_signed(delta)
                .ok_or(io::ErrorKind::InvalidInput)?,
            SeekFrom::Current(delta) => self
                .position
                .checked_add_signed(delta)
                .ok_or(io::ErrorKind::InvalidInput)?,
        };
        Ok(self.position)
    }
}
