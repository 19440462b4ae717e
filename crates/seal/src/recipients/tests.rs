use super::*;

/// Writes a recipients file with these permission bits, whatever the umask.
fn write_recipients(path: &Path, text: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn public_key() -> String {
    age::x25519::Identity::generate().to_public().to_string()
}

#[test]
fn parses_public_keys_trimmed() {
    let (a, b) = (public_key(), public_key());
    let recipients = Recipients::parse(&[format!(" {a}\n"), b.clone()]).unwrap();
    assert_eq!(recipients.to_strings(), vec![a, b]);
    assert_eq!(recipients.len(), 2);
}

#[test]
fn refuses_no_recipients() {
    assert!(matches!(
        Recipients::parse(&[]),
        Err(RecipientsError::Empty)
    ));
}

#[test]
fn names_the_bad_entry() {
    let good = public_key();
    let mut bad = good.clone();
    bad.pop();
    let err = Recipients::parse(&[good, bad.clone()]).unwrap_err();
    assert!(
        matches!(err, RecipientsError::Invalid { index: 2, .. }),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("recipient 2"), "{message}");
    assert!(message.contains(&bad), "{message}");

    // An entry that is no age key at all may be anything pasted there: it is not repeated.
    let err = Recipients::parse(&["ssh-ed25519 AAAA".to_owned()]).unwrap_err();
    assert!(!err.to_string().contains("AAAA"), "{err}");
    assert!(!format!("{err:?}").contains("AAAA"), "{err:?}");
    assert!(
        err.to_string().contains("does not start with age1"),
        "{err}"
    );
}

#[test]
fn refuses_a_private_key_without_repeating_it() {
    use age::secrecy::ExposeSecret;
    let secret = age::x25519::Identity::generate().to_string();
    let secret = secret.expose_secret().to_owned();
    let err = Recipients::parse(std::slice::from_ref(&secret)).unwrap_err();
    assert!(
        matches!(err, RecipientsError::PrivateKey { index: 1 }),
        "{err:?}"
    );
    assert!(!err.to_string().contains(&secret));
    assert!(!format!("{err:?}").contains(&secret));
}

#[test]
fn reads_a_file_with_comments_and_blank_lines() {
    let (a, b) = (public_key(), public_key());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recipients.txt");
    write_recipients(
        &path,
        &format!("# the fleet\n{a}\n\n  # backup\n  {b}  \n"),
        0o644,
    );
    let recipients = Recipients::read_file(&path).unwrap();
    assert_eq!(recipients.to_strings(), vec![a, b]);
}

#[test]
fn a_file_names_the_bad_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recipients.txt");
    write_recipients(
        &path,
        &format!("# fleet\n{}\nage1nope\n", public_key()),
        0o644,
    );
    let err = Recipients::read_file(&path).unwrap_err();
    assert!(
        matches!(err, RecipientsFileError::Invalid { line: 3, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("recipients.txt:3"), "{err}");
    assert!(err.to_string().contains("age1nope"), "{err}");
}

#[test]
fn a_file_of_comments_only_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recipients.txt");
    write_recipients(&path, "# nobody yet\n\n", 0o644);
    let err = Recipients::read_file(&path).unwrap_err();
    assert!(matches!(err, RecipientsFileError::Empty { .. }), "{err:?}");
}

#[test]
fn a_missing_file_is_named() {
    let err = Recipients::read_file(Path::new("/nonexistent/recipients")).unwrap_err();
    assert!(matches!(err, RecipientsFileError::Read { .. }), "{err:?}");
    assert!(err.to_string().contains("/nonexistent/recipients"), "{err}");
}

#[test]
fn a_file_line_that_is_no_age_key_is_not_repeated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recipients.txt");
    write_recipients(&path, &format!("{}\nhunter2\n", public_key()), 0o644);
    let err = Recipients::read_file(&path).unwrap_err();
    assert!(
        matches!(err, RecipientsFileError::Invalid { line: 2, .. }),
        "{err:?}"
    );
    assert!(!err.to_string().contains("hunter2"), "{err}");
    assert!(!format!("{err:?}").contains("hunter2"), "{err:?}");
}

#[test]
fn a_file_its_group_or_others_may_write_is_refused_naming_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recipients.txt");
    for mode in [0o666, 0o664, 0o646] {
        write_recipients(&path, &format!("{}\n", public_key()), mode);
        let err = Recipients::read_file(&path).unwrap_err();
        assert!(
            matches!(err, RecipientsFileError::Writable { .. }),
            "{mode:o}: {err:?}"
        );
        let message = err.to_string();
        assert!(
            message.contains(path.to_str().unwrap())
                && message.contains(&format!("mode {mode:04o}"))
                && message.contains("chmod go-w"),
            "{message}"
        );
    }
    // Public keys: anyone may read them.
    write_recipients(&path, &format!("{}\n", public_key()), 0o644);
    assert_eq!(Recipients::read_file(&path).unwrap().len(), 1);
}

#[test]
fn more_recipients_than_a_header_may_have_stanzas_are_refused() {
    let keys: Vec<String> = (0..=MAX_STANZAS).map(|_| public_key()).collect();
    let at_cap = Recipients::parse(&keys[..MAX_STANZAS]).unwrap();
    assert_eq!(at_cap.len(), MAX_STANZAS);
    let err = Recipients::parse(&keys).unwrap_err();
    assert!(
        matches!(err, RecipientsError::TooMany { count: 65, cap: 64 }),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("65 recipients, more than the 64"),
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recipients.txt");
    write_recipients(&path, &format!("# fleet\n{}\n", keys.join("\n")), 0o644);
    let err = Recipients::read_file(&path).unwrap_err();
    assert!(
        matches!(
            err,
            RecipientsFileError::TooMany {
                count: 65,
                cap: 64,
                ..
            }
        ),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("recipients.txt holds 65 recipients, more than the 64"),
        "{message}"
    );

    // Lists joined count each key once.
    let one = Recipients::parse(&keys[..1]).unwrap();
    let joined = at_cap.clone().join(one).unwrap();
    assert_eq!(joined.len(), MAX_STANZAS);
    let last = Recipients::parse(&keys[MAX_STANZAS..]).unwrap();
    let err = at_cap.join(last).unwrap_err();
    assert!(
        matches!(err, RecipientsError::TooMany { count: 65, cap: 64 }),
        "{err:?}"
    );
}
