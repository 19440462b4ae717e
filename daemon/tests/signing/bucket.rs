//! The chain in the bucket: uploaded beside the session's files with an object of each
//! entry that is never overwritten, verified in the downloaded folder, whole after
//! `delete_after_upload`, and a cut of it there named from the entry objects.

use std::path::{Path, PathBuf};
use std::time::Duration;

use recd_testkit::{openssl_keys, wait_until, Domain, Recd, S3Object, SeaweedFs};
use serde_json::Value;

use super::{files_of, record, verify, verify_text, verify_with};

/// recd under `root` signing with a key openssl made and uploading to `s3` under
/// `fleet/car-7/<session>/` (`upload` lines added to `[upload]`); the public key's file.
fn signing_uploading_recd(
    root: &Path,
    domain: &Domain,
    s3: &SeaweedFs,
    upload: &str,
) -> (Recd, PathBuf) {
    let (key, public) = openssl_keys(root, 0o600);
    let credentials = root.join("credentials");
    s3.credentials_file(&credentials);
    let config = format!(
        "[signing]\nkey_file = {key:?}\n\n[upload]\nendpoint = {:?}\nbucket = {:?}\ncredentials_file = {credentials:?}\nvehicle_id = \"car-7\"\nprefix = \"fleet/{{vehicle}}/{{session}}\"\n{upload}",
        s3.endpoint, s3.bucket
    );
    let recd = Recd::start_configured(root, domain, &config, "", &[]);
    (recd, public)
}

/// Session `drive`'s objects downloaded to `root/downloaded` (the folder returned) as the
/// fleet downloads them; `rec verify --key` of them passes, with `count` files, each intact
/// and its newest entry of kind `kind`.
fn download_verified(
    recd: &Recd,
    s3: &SeaweedFs,
    root: &Path,
    public: &Path,
    (count, kind): (usize, &str),
) -> PathBuf {
    let downloaded = root.join("downloaded");
    std::fs::create_dir(&downloaded).unwrap();
    s3.download_tree("fleet/car-7/drive/", &downloaded);
    let (code, report, stderr) = verify(&recd.socket, &downloaded, Some(public));
    assert_eq!(code, 0, "{report:#}\n{stderr}");
    let states = files_of(&report);
    assert_eq!(states.len(), count, "{report:#}");
    assert!(
        (states.iter()).all(|(_, state, k)| state == "intact" && k == kind),
        "{report:#}"
    );
    downloaded
}

/// Whether `objects` hold the chain at `chain` as it is on disk now, and an object of
/// each of its entries under `recd-chain.d/`.
fn holds_the_chain(objects: &[S3Object], chain: &Path) -> bool {
    let local = recd_chain::file_digest(chain).map(|(_, digest)| recd_chain::hex(&digest));
    let entries = std::fs::read_to_string(chain).map_or(0, |text| text.lines().count());
    (objects.iter()).any(|o| {
        o.key.ends_with("/recd-chain.jsonl") && local.as_ref().is_ok_and(|d| *d == o.sha256)
    }) && entry_objects(objects) == entries
}

/// How many of `objects` are a chain's entry objects.
fn entry_objects(objects: &[S3Object]) -> usize {
    (objects.iter())
        .filter(|o| o.key.contains("/recd-chain.d/"))
        .count()
}

#[test]
fn the_chain_and_each_entry_go_to_the_bucket_and_a_chain_cut_there_is_named_from_its_entry_objects()
{
    let s3 = SeaweedFs::start("recordings");
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let (recd, public) = signing_uploading_recd(root.path(), &domain, &s3, "");
    let files = record(&recd, &domain, "drive", 12, &[]);
    assert!(files.len() >= 2, "{files:?}");
    let chain = files[0].parent().unwrap().join("recd-chain.jsonl");

    // Every file and the chain as it is after the last one are in the bucket: the chain's
    // object was replaced as it grew.
    let mut objects = Vec::new();
    let uploaded = wait_until(Duration::from_secs(60), || {
        objects = s3.objects("fleet/car-7/drive/");
        objects.len() - entry_objects(&objects) == files.len() + 1
            && holds_the_chain(&objects, &chain)
    });
    assert!(uploaded, "{objects:?}\n{}", recd.log());
    let chain_object = (objects.iter())
        .find(|o| o.key == "fleet/car-7/drive/recd-chain.jsonl")
        .expect("the chain under the session's prefix");
    assert_eq!(chain_object.metadata["vehicle"], "car-7");
    assert_eq!(chain_object.metadata["session"], "drive");

    let downloaded = download_verified(&recd, &s3, root.path(), &public, (files.len(), "recorded"));

    // A file planted among the downloaded ones is not in the chain.
    std::fs::write(downloaded.join("planted.mcap"), b"not recorded").unwrap();
    let (code, report, stderr) = verify(&recd.socket, &downloaded, Some(&public));
    assert_eq!(code, 1, "{report:#}");
    assert!(stderr.contains("planted.mcap unlisted"), "{stderr}");
    std::fs::remove_file(downloaded.join("planted.mcap")).unwrap();

    // What the fleet saw last: the chain's length and its head.
    let lines: Vec<String> = std::fs::read_to_string(downloaded.join("recd-chain.jsonl"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let entry = |line: &str| serde_json::from_str::<Value>(line).unwrap();
    let head = entry(lines.last().unwrap())["digest"]
        .as_str()
        .unwrap()
        .to_string();
    let seen = ["--min-entries", &lines.len().to_string(), "--head", &head].map(String::from);
    let (code, report, stderr) = verify_with(&recd.socket, &downloaded, Some(&public), &seen);
    assert_eq!(code, 0, "{report:#}\n{stderr}");

    // The chain in the bucket cut by its last two entries and their files (by a thief
    // holding the vehicle's credentials): the entry objects, never overwritten, name them.
    let cut = &lines[lines.len() - 2..];
    std::fs::write(
        downloaded.join("recd-chain.jsonl"),
        lines[..lines.len() - 2].join("\n") + "\n",
    )
    .unwrap();
    for line in cut {
        std::fs::remove_file(downloaded.join(entry(line)["file"].as_str().unwrap())).unwrap();
    }
    let (code, report, stderr) = verify_with(&recd.socket, &downloaded, Some(&public), &seen);
    assert_eq!(code, 1, "{report:#}\n{stderr}");
    let problems = report["problems"].as_array().unwrap();
    for line in cut {
        let (seq, file) = (entry(line)["seq"].clone(), entry(line)["file"].clone());
        assert!(
            problems
                .iter()
                .any(|p| p["problem"] == "not_in_chain" && p["seq"] == seq && p["file"] == file),
            "entry {seq} of {file} named: {report:#}"
        );
        let state = (files_of(&report).into_iter()).find(|(name, _, _)| *name == file);
        assert_eq!(
            state.map(|s| s.1),
            Some("missing".to_string()),
            "{report:#}"
        );
    }
    assert!(
        (problems.iter()).any(|p| p["problem"] == "too_few_entries")
            && (problems.iter()).any(|p| p["problem"] == "head_not_found"),
        "{report:#}"
    );
    let (_, text) = verify_text(&recd.socket, &downloaded, &public);
    for line in cut {
        let file = entry(line)["file"].as_str().unwrap().to_string();
        assert!(
            text.lines()
                .any(|l| l.contains("not in the chain: the chain was cut") && l.contains(&file)),
            "{text}"
        );
    }
}

#[test]
fn with_delete_after_upload_the_chain_verifies_whole_in_the_bucket_and_on_the_vehicle() {
    let s3 = SeaweedFs::start("recordings");
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let (recd, public) =
        signing_uploading_recd(root.path(), &domain, &s3, "delete_after_upload = true\n");
    let files = record(&recd, &domain, "drive", 12, &[]);
    assert!(files.len() >= 2, "{files:?}");
    let dir = files[0].parent().unwrap().to_path_buf();
    let chain = dir.join("recd-chain.jsonl");

    // Every file uploaded and deleted on the vehicle, and the chain in the bucket as it is
    // after the last deletion entered it.
    let mut objects = Vec::new();
    let settled = wait_until(Duration::from_secs(90), || {
        objects = s3.objects("fleet/car-7/drive/");
        files.iter().all(|file| !file.exists())
            && objects.len() - entry_objects(&objects) == files.len() + 1
            && holds_the_chain(&objects, &chain)
    });
    assert!(settled, "{objects:?}\n{}", recd.log());
    assert!(
        chain.exists(),
        "the chain itself is never deleted after its upload"
    );

    let downloaded =
        download_verified(&recd, &s3, root.path(), &public, (files.len(), "offloaded"));
    let lines = std::fs::read_to_string(downloaded.join("recd-chain.jsonl")).unwrap();
    assert!(
        lines.lines().next().unwrap().contains("\"seq\":0,"),
        "the bucket's chain starts at its first entry: {lines}"
    );

    // On the vehicle, the chain says who deleted each file.
    let (code, report, stderr) = verify(&recd.socket, &dir, Some(&public));
    assert_eq!(code, 0, "{report:#}\n{stderr}");
    assert!(
        files_of(&report)
            .iter()
            .all(|(_, state, _)| state == "offloaded"),
        "{report:#}"
    );
}
