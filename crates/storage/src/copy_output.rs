//! The file a reindex or a cut writes its copy into: past the page cache where its file
//! system allows, paced to the disk as it grows where not; sealed when the copy is of a
//! sealed file.

use std::fs::File;
use std::io;

use recd_seal::{SealError, SealKey, SealedWriter};

use crate::direct::{set_direct, DirectSink};
use crate::durability::{Durability, WriteBack};
use crate::sealing::Sealing;

/// Bytes staged for one direct write: the copy waits for the disk once per megabyte.
const DIRECT_STAGING: usize = 1 << 20;

/// The file a copy is written into.
///
/// A copy is background work beside recordings: written through the page cache, its dirty
/// pages and their writeback cost a recording's 2-deep queues dozens of times what the
/// same bytes written with `O_DIRECT` cost them (BENCHMARKS.md, issue 68 item 4). So it
/// goes to the disk straight from a staging buffer where the file system takes
/// `O_DIRECT`, and through the page cache, paced, where it does not (tmpfs before Linux
/// 6.6, some FUSE file systems).
pub(crate) enum OutputFile<'f> {
    /// Opened with `O_DIRECT`: written a staged megabyte at a time, the last partial block
    /// through the page cache.
    Direct { file: &'f File, sink: DirectSink },
    /// Through the page cache.
    Paced(PacedOutput<'f>),
}

impl<'f> OutputFile<'f> {
    /// Writes into `file`, empty and not written yet, with `O_DIRECT` where it takes it.
    pub(crate) fn new(file: &'f mut File) -> Self {
        if set_direct(file, true).is_ok() {
            Self::Direct {
                file,
                sink: DirectSink::new(DIRECT_STAGING),
            }
        } else {
            Self::Paced(PacedOutput::new(file))
        }
    }

    /// Writes what is staged: the file then holds every byte given to it.
    pub(crate) fn finish(self) -> io::Result<()> {
        match self {
            Self::Direct { file, mut sink } => sink.finish(file),
            Self::Paced(mut out) => io::Write::flush(&mut out),
        }
    }
}

impl io::Write for OutputFile<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self {
            Self::Direct { file, sink } => {
                sink.stage(file, bytes)?;
                Ok(bytes.len())
            }
            Self::Paced(out) => out.write(bytes),
        }
    }

    /// Flushes the paced file; a direct one keeps its partial last block staged until
    /// [`OutputFile::finish`], as `O_DIRECT` takes whole blocks only.
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Direct { .. } => Ok(()),
            Self::Paced(out) => out.flush(),
        }
    }
}

/// The output file through the page cache, handed to the disk window by window as it
/// grows (as recordings are, see [`crate::durability`]) rather than all at the final sync:
/// the disk writes while the reindex reads and compresses, and the copy does not crowd the
/// page cache.
pub(crate) struct PacedOutput<'f> {
    file: &'f mut File,
    written: u64,
    write_back: WriteBack,
}

impl<'f> PacedOutput<'f> {
    fn new(file: &'f mut File) -> Self {
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
    Plain(OutputFile<'f>),
    Sealed(Box<SealedWriter<OutputFile<'f>>>),
}

impl<'f> CopyOutput<'f> {
    /// Writes into `file`, sealed to `sealing`'s recipients when given; the fresh key of
    /// a sealed output, to be kept once the file is in place.
    pub(crate) fn new(
        file: &'f mut File,
        sealing: Option<&Sealing>,
    ) -> Result<(Self, Option<SealKey>), SealError> {
        let file = OutputFile::new(file);
        Ok(match sealing {
            Some(sealing) => {
                let writer = SealedWriter::new(file, &sealing.recipients)?;
                let key = writer.key().clone();
                (Self::Sealed(Box::new(writer)), Some(key))
            }
            None => (Self::Plain(file), None),
        })
    }

    /// Seals the last chunk of a sealed output; writes what is staged.
    pub(crate) fn finish(self) -> io::Result<()> {
        match self {
            Self::Plain(out) => out.finish(),
            Self::Sealed(out) => out.finish().map_err(io::Error::other)?.finish(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::direct::BLOCK;
    use std::io::Write;

    /// Bytes that tell their own offset apart.
    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 4099) as u8).collect()
    }

    /// Writes `bytes` into a new file in `dir` in odd-sized pieces; whether it went
    /// direct, and the file.
    fn copy_into(dir: &std::path::Path, bytes: &[u8]) -> (bool, File) {
        let mut file = tempfile::tempfile_in(dir).unwrap();
        let mut out = OutputFile::new(&mut file);
        let direct = matches!(out, OutputFile::Direct { .. });
        for piece in bytes.chunks(100_003) {
            out.write_all(piece).unwrap();
            out.flush().unwrap();
        }
        out.finish().unwrap();
        (direct, file)
    }

    /// Pages of `file` (`len` bytes) in the page cache.
    fn cached_pages(file: &File, len: usize) -> usize {
        use std::os::fd::AsRawFd;
        let page = 4096;
        let pages = len.div_ceil(page);
        let mut resident = vec![0u8; pages];
        // SAFETY: a shared read-only mapping of an open file, `len` bytes long, unmapped
        // before return; mincore writes one byte per page into `resident`.
        unsafe {
            let map = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            );
            assert_ne!(map, libc::MAP_FAILED, "{}", io::Error::last_os_error());
            let looked = libc::mincore(map, len, resident.as_mut_ptr());
            libc::munmap(map, len);
            assert_eq!(looked, 0, "{}", io::Error::last_os_error());
        }
        resident.iter().filter(|&&page| page & 1 == 1).count()
    }

    #[test]
    fn a_copy_on_a_disk_goes_past_the_page_cache_and_keeps_every_byte() {
        // The build's own folder, on a disk's file system (tmpfs, as /tmp may be, refused
        // O_DIRECT before Linux 6.6).
        let dir =
            tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target")).unwrap();
        for len in [0, 1, BLOCK, DIRECT_STAGING, 3 * DIRECT_STAGING + 4097] {
            let bytes = pattern(len);
            let (direct, file) = copy_into(dir.path(), &bytes);
            assert!(direct, "{} refuses O_DIRECT", dir.path().display());
            if len > 0 {
                // Only the partial last block went through the page cache.
                let cached = cached_pages(&file, len);
                assert!(
                    cached <= 1,
                    "{cached} pages of {len} bytes in the page cache"
                );
            }
            let read = std::fs::read(format!("/proc/self/fd/{}", fd(&file))).unwrap();
            assert!(read == bytes, "{len} bytes read back as {}", read.len());
        }
    }

    #[test]
    fn a_copy_through_the_page_cache_keeps_every_byte() {
        // What a file system that refuses O_DIRECT gets (tmpfs before Linux 6.6, some
        // FUSE file systems).
        let bytes = pattern(2 * DIRECT_STAGING + 17);
        let mut file = tempfile::tempfile().unwrap();
        let mut out = OutputFile::Paced(PacedOutput::new(&mut file));
        for piece in bytes.chunks(100_003) {
            out.write_all(piece).unwrap();
        }
        out.finish().unwrap();
        let read = std::fs::read(format!("/proc/self/fd/{}", fd(&file))).unwrap();
        assert!(read == bytes, "read back as {} bytes", read.len());
    }

    fn fd(file: &File) -> i32 {
        std::os::fd::AsRawFd::as_raw_fd(file)
    }
}
