//! Sending one queued file: a multipart upload resumed from its journal, each part read
//! at low I/O priority, paced by `max_rate`, checksummed and journaled once the bucket
//! has it; completed only if no object holds the key, and verified before it counts.
//!
//! Each part carries a CRC64-NVME of the bytes read from the file, which the store checks
//! before it acknowledges the part, answering with that CRC and the part's ETag, the MD5
//! of what it received; the object's ETag (the MD5 of those MD5s) then shows it is made
//! of exactly the acknowledged parts, in order. So recd need not hash every byte a second
//! time: it computes one part's MD5 per attempt, to check that the bucket's ETags are such
//! MD5s (they are not under SSE-KMS, say), and every part's only when the bucket answers
//! without the CRC (a store that may not check it).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use md5::{Digest, Md5};
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path as ObjectPath;
use object_store::{
    Attribute, AttributeValue, Attributes, ObjectStoreExt, PutMultipartOptions, PutPayload,
};
use recd_catalog::{Catalog, CatalogError, Fingerprint, JournaledPart, QueuedUpload};
use tokio::task::JoinSet;

use crate::bucket::{classify, Bucket, Trouble};
use crate::pressure::Pressure;
use crate::rate::RateLimit;
use crate::reading::{Hashing, PartBuffers, PartReader};
use crate::settings::UploadSettings;
use crate::yielding::{Holds, Yielding, HOLD_LOOK};

/// S3's limits: at most 10,000 parts, each but the last at least 5 MiB.
const MAX_PARTS: u64 = 10_000;
const MIN_PART: u64 = 5 << 20;

/// Why a file did not upload this time.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The store or the network; the file stays in the queue.
    Trouble(Trouble),
    /// Retrying cannot help: the file is given up with this reason.
    GiveUp(String),
    /// The catalog could not journal.
    Catalog(CatalogError),
}

impl From<CatalogError> for Failure {
    fn from(error: CatalogError) -> Self {
        Self::Catalog(error)
    }
}

/// A part's number, MD5 (where it was computed) and length, and the bucket's answer to it.
type SentPart = (
    u64,
    Option<[u8; 16]>,
    u64,
    object_store::Result<object_store::multipart::PartId>,
);

/// The parts of a file the bucket has (journaled), and the bytes of this attempt's.
struct Acknowledged {
    parts: Vec<Option<JournaledPart>>,
    sent_now: u64,
    since: Instant,
}

/// What a finished upload leaves.
#[derive(Debug)]
pub(crate) struct Uploaded {
    /// The object's ETag.
    pub(crate) e_tag: String,
    /// Bytes sent in this attempt (less than the file when it resumed).
    pub(crate) sent_now: u64,
}

/// What a transfer tells the uploader's status as it goes.
pub(crate) trait Progress {
    /// The bucket acknowledged a part: `bytes` of this file so far, in `seconds` since its
    /// first part left (parts go several at a time).
    fn part_sent(&self, bytes: u64, seconds: f64);
    /// Waiting for a recording that needs the disk (`Some(why)`), or not (`None`).
    fn yielding(&self, why: Option<String>);
}

/// One file's upload, with what it needs.
pub(crate) struct Transfer<'a> {
    pub(crate) bucket: &'a Bucket,
    pub(crate) catalog: &'a Catalog,
    pub(crate) settings: &'a UploadSettings,
    pub(crate) rate: &'a mut Option<RateLimit>,
    /// Before each part, the transfer waits while a recording needs the disk.
    pub(crate) pressure: &'a Pressure,
    pub(crate) progress: &'a dyn Progress,
    /// Set when recd stops: an `after_reindex` copy being made is abandoned.
    pub(crate) stopping: &'a AtomicBool,
    /// What parts are read into.
    pub(crate) buffers: &'a PartBuffers,
}

impl Transfer<'_> {
    /// Uploads `job` (resuming its journal), verifies it and records it uploaded.
    pub(crate) async fn run(&mut self, job: &QueuedUpload) -> Result<Uploaded, Failure> {
        check_unchanged(job)?;
        let content = self.content(job)?;
        let size = std::fs::metadata(&content)
            .map_err(|e| Failure::GiveUp(format!("cannot read {}: {e}", content.display())))?
            .len();
        let location = ObjectPath::from(job.key.as_str());
        let part_size = job.part_size.unwrap_or_else(|| self.part_size(size));
        let upload_id = match &job.upload_id {
            Some(id) => id.clone(),
            None => self.begin(job, &location, part_size).await?,
        };
        let file = std::fs::File::open(&content)
            .map_err(|e| Failure::GiveUp(format!("cannot open {}: {e}", content.display())))?;
        let count = size.div_ceil(part_size).max(1);
        let mut parts: Vec<Option<JournaledPart>> = vec![None; count as usize];
        for part in &job.parts {
            if let Some(slot) = parts.get_mut(part.number as usize) {
                *slot = Some(part.clone());
            }
        }
        let missing: Vec<u64> = (0..count)
            .filter(|&number| parts[number as usize].is_none())
            .collect();
        let hashing = if self.bucket.unconfirmed_checksums.load(Ordering::Relaxed) {
            Hashing::Every
        } else {
            Hashing::One(missing.first().copied().unwrap_or(0))
        };
        let mut reader = PartReader::new(file, size, part_size, hashing, self.buffers.clone());
        // Tasks of their own, so that parts in flight go on while the next is read or
        // paced; dropping the set (on an error) abandons the others.
        let mut sending = JoinSet::new();
        let mut acknowledged = Acknowledged {
            parts,
            sent_now: 0,
            since: Instant::now(),
        };
        let mut next = 0;
        let mut yielding = Yielding::default();
        loop {
            // Parts are read in order, one ahead, and sent `parallel_parts` at a time;
            // each is journaled as soon as the bucket acknowledges it, in whatever order.
            while sending.len() < self.settings.parallel_parts.max(1) && next < missing.len() {
                let number = missing[next];
                next += 1;
                while let Some(why) = self.pressure.hold() {
                    self.progress.yielding(Some(why));
                    let look_again = Instant::now() + HOLD_LOOK;
                    self.journal_until(look_again, &mut sending, &mut acknowledged, job)
                        .await?;
                }
                self.progress.yielding(None);
                let (bytes, md5) = reader
                    .read(number, missing.get(next).copied())
                    .await
                    .map_err(|e| {
                        Failure::GiveUp(format!("cannot read {}: {e}", content.display()))
                    })?;
                let length = bytes.len() as u64;
                // The stricter of max_rate and the background policy's pace.
                let now = Instant::now();
                let limited = (self.rate.as_mut()).map(|rate| rate.delay_for(length, now));
                let paced = yielding.pace_after(length, self.pressure);
                if let Some(delay) = limited.max(paced) {
                    self.journal_until(now + delay, &mut sending, &mut acknowledged, job)
                        .await?;
                }
                let store = self.bucket.store.clone();
                let (location, upload_id) = (location.clone(), upload_id.clone());
                sending.spawn(async move {
                    let payload = PutPayload::from(bytes);
                    let sent = store
                        .put_part(&location, &upload_id, number as usize, payload)
                        .await;
                    (number, md5, length, sent)
                });
            }
            let Some(joined) = sending.join_next().await else {
                break;
            };
            self.journal(joined, &mut acknowledged, job)?;
        }
        let Acknowledged {
            parts, sent_now, ..
        } = acknowledged;
        let parts: Vec<JournaledPart> = parts.into_iter().flatten().collect();
        if let Err(failure) = check_unchanged(job) {
            let _ = self
                .bucket
                .store
                .abort_multipart(&location, &upload_id)
                .await;
            return Err(failure);
        }
        let expected = composite_e_tag(&parts);
        let store = if job.replace {
            &self.bucket.store
        } else {
            &self.bucket.create_only
        };
        let completion = store
            .complete_multipart(
                &location,
                &upload_id,
                parts
                    .iter()
                    .map(|p| PartId {
                        content_id: p.content_id.clone(),
                    })
                    .collect(),
            )
            .await;
        if let Err(error) = completion {
            match classify(&error, &self.settings.bucket) {
                // A completion that went through before its answer was lost looks like
                // this on the retry; the check below tells it from another object.
                Trouble::Exists => {}
                // The same, or the store lost the upload: then it starts over.
                Trouble::UploadGone => {
                    if let Err(object_store::Error::NotFound { .. }) =
                        self.bucket.store.head(&location).await
                    {
                        self.catalog.forget_multipart(&job.path)?;
                        return Err(Failure::Trouble(Trouble::UploadGone));
                    }
                }
                trouble => return Err(Failure::Trouble(trouble)),
            }
        }
        let e_tag = self.verify(&location, size, &expected, job).await?;
        if content != job.path {
            let _ = std::fs::remove_file(&content);
        }
        Ok(Uploaded { e_tag, sent_now })
    }

    /// Journals the parts the bucket acknowledges until `until`.
    async fn journal_until(
        &self,
        until: Instant,
        sending: &mut JoinSet<SentPart>,
        acknowledged: &mut Acknowledged,
        job: &QueuedUpload,
    ) -> Result<(), Failure> {
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(until.into()) => return Ok(()),
                Some(joined) = sending.join_next() => self.journal(joined, acknowledged, job)?,
            }
        }
    }

    /// Journals a part the bucket acknowledged, or says why it was not.
    fn journal(
        &self,
        joined: Result<SentPart, tokio::task::JoinError>,
        acknowledged: &mut Acknowledged,
        job: &QueuedUpload,
    ) -> Result<(), Failure> {
        let (number, md5, length, sent) = joined.map_err(|e| {
            Failure::Trouble(Trouble::Transient(format!("a part's task failed: {e}")))
        })?;
        let part = sent.map_err(|e| self.trouble(&e, job))?;
        let answer = PartAnswer::of(&part.content_id);
        let received =
            part_md5(&answer.e_tag).filter(|received| md5.is_none_or(|read| read == *received));
        let Some(received) = received else {
            return Err(Failure::GiveUp(format!(
                "the bucket's ETag for part {} is {}, not the MD5 of the part read from the file{}: recd cannot verify the object (does the bucket encrypt with SSE-KMS?); the local file is kept",
                number + 1,
                answer.e_tag,
                md5.map(|m| format!(" ({})", hex::encode(m))).unwrap_or_default(),
            )));
        };
        if md5.is_none() && answer.checksum_crc64nvme.is_none() {
            self.bucket
                .unconfirmed_checksums
                .store(true, Ordering::Relaxed);
            return Err(Failure::Trouble(Trouble::Transient(format!(
                "the bucket answered part {} without its CRC64-NVME, so it may not check it: recd computes every part's MD5 itself from now on and sends the parts again",
                number + 1
            ))));
        }
        let journaled = JournaledPart {
            number: number as u32,
            content_id: part.content_id,
            md5: received,
            bytes: length,
        };
        self.catalog.journal_part(&job.path, &journaled)?;
        acknowledged.parts[number as usize] = Some(journaled);
        acknowledged.sent_now += length;
        self.progress.part_sent(
            acknowledged.sent_now,
            acknowledged.since.elapsed().as_secs_f64(),
        );
        Ok(())
    }

    /// The bytes to upload: the file itself, or with `after_reindex` its zstd-reindexed
    /// copy (made once, kept next to it until uploaded) unless the file is indexed
    /// already (finished in place, or by `rec reindex`) or sealed (a copy would need the
    /// key the vehicle does not hold; recd finishes sealed files itself while it can).
    fn content(&self, job: &QueuedUpload) -> Result<PathBuf, Failure> {
        let indexed = || recd_storage::summarize(&job.path).is_ok_and(|info| info.indexed);
        if !self.settings.after_reindex || recd_storage::is_sealed(&job.path) || indexed() {
            return Ok(job.path.clone());
        }
        let staged = staged_copy(&job.path);
        if job.upload_id.is_some() && staged.exists() {
            return Ok(staged);
        }
        let options = recd_storage::ReindexOptions {
            compression: recd_storage::Compression::Zstd,
            threads: 1,
            ..Default::default()
        };
        match recd_storage::reindex(&job.path, &staged, &options, &mut |_, _| {}, self.stopping) {
            Ok(_) => {}
            Err(recd_storage::ReindexError::Interrupted { .. }) => {
                return Err(Failure::Trouble(Trouble::Transient(
                    "recd is stopping".into(),
                )))
            }
            Err(e) => {
                return Err(Failure::GiveUp(format!(
                    "cannot reindex it for upload (after_reindex): {e}"
                )))
            }
        }
        // A copy made anew does not match parts sent of an earlier one.
        if job.upload_id.is_some() {
            self.catalog.forget_multipart(&job.path)?;
            return Err(Failure::Trouble(Trouble::UploadGone));
        }
        Ok(staged)
    }

    /// Parts of `part_size`, larger when the file would need more than S3's 10,000.
    fn part_size(&self, size: u64) -> u64 {
        let needed = size.div_ceil(MAX_PARTS).next_multiple_of(1 << 20);
        self.settings.part_size.max(needed).max(MIN_PART)
    }

    /// Starts the multipart upload of `job` with its metadata and journals it; an object
    /// already under the key is not overwritten.
    async fn begin(
        &self,
        job: &QueuedUpload,
        location: &ObjectPath,
        part_size: u64,
    ) -> Result<String, Failure> {
        match self.bucket.store.head(location).await {
            // A file uploaded anew each time it grows (a session's hash chain).
            Ok(_) if job.replace => {}
            Ok(existing) => {
                return Err(Failure::GiveUp(format!(
                    "an object of {} bytes already exists at {}; recd does not overwrite it (remove it or change [upload] prefix, then rec upload the file)",
                    existing.size, job.key
                )))
            }
            Err(object_store::Error::NotFound { .. }) => {}
            Err(error) => return Err(self.trouble(&error, job)),
        }
        let mut attributes = Attributes::new();
        for (key, value) in &job.metadata {
            attributes.insert(
                Attribute::Metadata(key.clone().into()),
                AttributeValue::from(value.clone()),
            );
        }
        let options = PutMultipartOptions {
            attributes,
            ..Default::default()
        };
        let id = self
            .bucket
            .store
            .create_multipart_opts(location, options)
            .await
            .map_err(|e| self.trouble(&e, job))?;
        self.catalog.begin_multipart(&job.path, &id, part_size)?;
        Ok(id)
    }

    /// The object's ETag once its size and ETag are those of the parts read from the
    /// file; otherwise the file is given up (and the object left for a person to see).
    async fn verify(
        &self,
        location: &ObjectPath,
        size: u64,
        expected: &str,
        job: &QueuedUpload,
    ) -> Result<String, Failure> {
        let meta = self
            .bucket
            .store
            .head(location)
            .await
            .map_err(|e| self.trouble(&e, job))?;
        let e_tag = meta.e_tag.unwrap_or_default().trim_matches('"').to_string();
        if meta.size == size && e_tag == expected {
            return Ok(e_tag);
        }
        Err(Failure::GiveUp(format!(
            "verification failed: the bucket holds {} bytes with ETag {e_tag} at {}, the file's {size} bytes in the parts it acknowledged give {expected}; the local file is kept",
            meta.size, job.key
        )))
    }

    /// What a failed request means; a vanished multipart upload is forgotten, so that the
    /// next attempt starts the file over.
    fn trouble(&self, error: &object_store::Error, job: &QueuedUpload) -> Failure {
        let trouble = classify(error, &self.settings.bucket);
        if trouble == Trouble::UploadGone {
            if let Err(error) = self.catalog.forget_multipart(&job.path) {
                return Failure::Catalog(error);
            }
        }
        Failure::Trouble(trouble)
    }
}

/// Gives the file up if it changed (or vanished) since it was queued.
fn check_unchanged(job: &QueuedUpload) -> Result<(), Failure> {
    match Fingerprint::of(&job.path) {
        Ok(now) if now == job.fingerprint => Ok(()),
        Ok(now) => Err(Failure::GiveUp(format!(
            "the local file changed after it was queued ({} bytes then, {} now, or rewritten in place): not uploaded as the recording; rec upload queues it as it is now",
            job.fingerprint.bytes, now.bytes
        ))),
        Err(error) => Err(Failure::GiveUp(format!("the local file is gone: {error}"))),
    }
}

/// The ETag S3 gives a multipart object: the MD5 of its parts' MD5s, and their count.
fn composite_e_tag(parts: &[JournaledPart]) -> String {
    let mut md5 = Md5::new();
    for part in parts {
        md5.update(part.md5);
    }
    let digest: [u8; 16] = md5.finalize().into();
    format!("{}-{}", hex::encode(digest), parts.len())
}

/// What the bucket answered to a part, as object_store keeps it in the part's id: its
/// XML with the ETag and the checksum echoed, or the bare ETag.
#[derive(Debug, serde::Deserialize)]
struct PartAnswer {
    e_tag: String,
    checksum_crc64nvme: Option<String>,
}

impl PartAnswer {
    fn of(content_id: &str) -> Self {
        quick_xml::de::from_str(content_id).unwrap_or_else(|_| Self {
            e_tag: content_id.to_string(),
            checksum_crc64nvme: None,
        })
    }
}

/// The MD5 a part's ETag gives (32 hex digits, quoted or not), if it is one.
fn part_md5(e_tag: &str) -> Option<[u8; 16]> {
    let mut md5 = [0; 16];
    hex::decode_to_slice(e_tag.trim_matches('"'), &mut md5).ok()?;
    Some(md5)
}

/// Where `after_reindex` keeps the zstd copy of `file` until it is uploaded.
pub(crate) fn staged_copy(file: &Path) -> PathBuf {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    file.with_file_name(format!(".{name}.upload"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_composite_e_tag_is_the_md5_of_the_parts_md5s() {
        // The value SeaweedFS returned for two 6 MiB parts with these MD5s.
        let part = |number, hex| JournaledPart {
            number,
            content_id: String::new(),
            md5: part_md5(hex).unwrap(),
            bytes: 6 << 20,
        };
        let parts = [
            part(0, "b350265d06db0305239c85363d1ae97c"),
            part(1, "a382f43f3b080dabe686a6db5a287121"),
        ];
        assert_eq!(
            composite_e_tag(&parts),
            "c41893c5776b9e6a8cf1f0828e914df7-2"
        );
    }

    #[test]
    fn a_part_answer_is_read_from_object_store_s_xml_or_as_a_bare_e_tag() {
        // As SeaweedFS's answer reached recd through object_store 0.14.
        let answer = PartAnswer::of("<PartMetadata><e_tag>\"2b61dbc19bad4ac6918defd40074cccb\"</e_tag><checksum_crc64nvme>P1Tc1yZtjH0=</checksum_crc64nvme></PartMetadata>");
        assert_eq!(answer.e_tag, "\"2b61dbc19bad4ac6918defd40074cccb\"");
        assert_eq!(answer.checksum_crc64nvme.as_deref(), Some("P1Tc1yZtjH0="));
        let unconfirmed = PartAnswer::of("<PartMetadata><e_tag>&quot;2b61dbc19bad4ac6918defd40074cccb&quot;</e_tag></PartMetadata>");
        assert!(part_md5(&unconfirmed.e_tag).is_some());
        assert_eq!(unconfirmed.checksum_crc64nvme, None);
        let bare = PartAnswer::of("\"2b61dbc19bad4ac6918defd40074cccb\"");
        assert!(part_md5(&bare.e_tag).is_some());
        assert_eq!(bare.checksum_crc64nvme, None);
    }

    #[test]
    fn a_part_e_tag_gives_its_md5_only_when_it_is_one() {
        let expected = Some(*b"\xb3\x50\x26\x5d\x06\xdb\x03\x05\x23\x9c\x85\x36\x3d\x1a\xe9\x7c");
        assert_eq!(part_md5("\"b350265d06db0305239c85363d1ae97c\""), expected);
        assert_eq!(part_md5("b350265d06db0305239c85363d1ae97c"), expected);
        // A multipart object's, a KMS-encrypted part's (not hex), a sign in the digits.
        assert_eq!(part_md5("c41893c5776b9e6a8cf1f0828e914df7-2"), None);
        assert_eq!(part_md5("Zb350265d06db0305239c85363d1ae97"), None);
        assert_eq!(part_md5("+b50265d06db0305239c85363d1ae97c"), None);
    }
}
