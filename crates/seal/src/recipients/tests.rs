use super::*;

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

    let err = Recipients::parse(&["ssh-ed25519 AAAA".to_owned()]).unwrap_err();
    assert!(err.to_string().contains("ssh-ed25519 AAAA"), "{err}");
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
    std::fs::write(&path, format!("# the fleet\n{a}\n\n  # backup\n  {b}  \n")).unwrap();
    let recipients = Recipients::read_file(&path).unwrap();
    assert_eq!(recipients.to_strings(), vec![a, b]);
}

#[test]
fn a_file_names_the_bad_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recipients.txt");
    std::fs::write(&path, format!("# fleet\n{}\nage1nope\n", public_key())).unwrap();
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
    std::fs::write(&path, "# nobody yet\n\n").unwrap();
    let err = Recipients::read_file(&path).unwrap_err();
    assert!(matches!(err, RecipientsFileError::Empty { .. }), "{err:?}");
}

#[test]
fn a_missing_file_is_named() {
    let err = Recipients::read_file(Path::new("/nonexistent/recipients")).unwrap_err();
    assert!(matches!(err, RecipientsFileError::Read { .. }), "{err:?}");
    assert!(err.to_string().contains("/nonexistent/recipients"), "{err}");
}
