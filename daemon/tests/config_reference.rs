//! Keeps `docs/configuration.md` complete: every key recd.toml accepts must have a row there,
//! under the heading of its section, and every documented default must be the real one.
//!
//! The keys come from two places, so that neither can miss one: a fully populated
//! configuration serialized to TOML (which shows the sections, nested tables and arrays of
//! tables as recd.toml spells them), and the field lists serde's derive hands to a
//! deserializer for each known section (which include the keys that are absent by default).
//!
//! The convention the page keeps: a heading per section (`## Top level`, `## [recording]`,
//! `## [upload]`, `## [remote_control]`, `## [[expect]]`, `## [section.sub]` for a nested
//! table), and under it a table whose rows start with the key in backticks and its default:
//! ``| `min_free_space` | `"1GiB"` | … |``. A default written as one TOML value in backticks
//! is checked against the built-in one; any other text (`none`, `required`, `the host's
//! name`) is taken as prose.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use bytesize::ByteSize;
use recd_daemon::config::{
    DaemonConfig, EncryptionConfig, FleetConfig, HttpConfig, IncidentsConfig, PresetConfig,
    RemoteControlConfig, SessionDefaults, SigningConfig, UploadConfig, ZenohSection,
};
use recd_health::Expectation;
use serde::de::{self, Deserialize, Deserializer, Visitor};

const REFERENCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/configuration.md");

/// The heading of the top-level keys.
const TOP_LEVEL: &str = "Top level";

/// A configuration with every optional key and every section set, so that serializing it
/// shows them all. A new optional key or section belongs here too (the test says so for a
/// top-level one; a key of a known section is found without it).
fn populated() -> DaemonConfig {
    let mut config = DaemonConfig {
        max_total_size: Some(ByteSize::gib(200)),
        upload: Some(UploadConfig {
            endpoint: Some("http://10.0.0.5:8333".into()),
            bucket: "recordings".into(),
            credentials_file: Some(PathBuf::from("/etc/recd/s3-credentials")),
            vehicle_id: Some("car-3".into()),
            vehicle_name: Some("Test car 3".into()),
            max_rate: Some(ByteSize::mib(20)),
            ..UploadConfig::default()
        }),
        expect: vec![Expectation {
            topic: "camera/*".into(),
            min_rate: Some(25.0),
            max_gap: Some(Duration::from_millis(200)),
            required: true,
            expect: true,
        }],
        topic: vec![recd_engine::ThrottleRule {
            topic: "camera/*".into(),
            max_rate: Some(5.0),
            downsample: Some(2),
        }],
        http: HttpConfig {
            token_file: Some(PathBuf::from("/etc/recd/http-token")),
            ..HttpConfig::default()
        },
        encryption: Some(EncryptionConfig {
            recipients: vec![
                "age14mr5y4kau0un5pgywt83rt2g9y6fs00hqs577wcjh66lmp958ahsxfxvpc".into(),
            ],
            key_reach: Duration::from_secs(7200),
        }),
        fleet: Some(FleetConfig {
            broker: "mqtts://iot.example.com:8883".into(),
            vehicle: Some("car-3".into()),
            ca_file: Some(PathBuf::from("/etc/recd/fleet-ca.pem")),
            cert_file: Some(PathBuf::from("/etc/recd/fleet.crt")),
            key_file: Some(PathBuf::from("/etc/recd/fleet.key")),
            credentials_file: Some(PathBuf::from("/etc/recd/mqtt-credentials")),
            ..FleetConfig::default()
        }),
        rule: vec![recd_rules::RuleConfig {
            name: "lidar_lost".into(),
            health: Some("lidar/*".into()),
            states: Some(vec!["stalled".into()]),
            hold: Some("0s".into()),
            before: Some("60s".into()),
            after: Some("10s".into()),
            holdoff: Some("1min".into()),
            sessions: vec!["drive*".into()],
            ..Default::default()
        }],
        preset: vec![PresetConfig {
            name: "drive".into(),
            max_file_size: Some(ByteSize::gib(4)),
            max_duration: Some(Duration::from_secs(600)),
            duration: Some(Duration::from_secs(3600)),
            pre_trigger: Some(Duration::from_secs(30)),
            buffer_size: Some(ByteSize::gib(1)),
            before: Some(Duration::from_secs(10)),
            dds_domain: Some(0),
            upload: Some(true),
            finish: Some(recd_control::FinishMode::Zstd),
            topic_types: vec!["sensor_msgs/msg/*".into()],
            exclude_topic_types: vec!["*Debug*".into()],
            max_rate: vec!["camera/*=5".into()],
            downsample: vec!["/points=3".into()],
            services: vec!["/add_two_ints".into()],
            exclude_services: vec!["*/set_parameters*".into()],
            actions: vec!["/navigate*".into()],
            ..PresetConfig::default()
        }],
        signing: SigningConfig {
            key_file: Some(PathBuf::from("/etc/recd/signing-key.pem")),
        },
        ..DaemonConfig::default()
    };
    let recording = &mut config.recording;
    recording.max_file_size = Some(ByteSize::gib(4));
    recording.max_duration = Some(Duration::from_secs(600));
    recording.max_age = Some(Duration::from_secs(3600));
    config.incidents.max_pinned_size = Some(ByteSize::gib(20));
    let recording = &mut config.recording;
    recording.iceoryx2_prefix = Some("iox2_".into());
    recording.dds_domain = Some(0);
    recording.dds_interfaces = vec![IpAddr::from([127, 0, 0, 1])];
    recording.dds_message_dirs = vec![PathBuf::from("/opt/msgs")];
    recording.topic_types = vec!["sensor_msgs/msg/*".into()];
    recording.exclude_topic_types = vec!["*Debug*".into()];
    let remote = &mut config.remote_control;
    remote.status = Some(true);
    remote.recorder = Some("ecu-front".into());
    remote.interfaces = vec![IpAddr::from([127, 0, 0, 1])];
    config
}

/// Where a key lives: the heading of its section in the reference.
type Heading = String;

/// The heading of the table at `path` (`[recording]`, `[[expect]]`, `[a.b]`).
fn heading(path: &[String], array: bool) -> Heading {
    if path.is_empty() {
        return TOP_LEVEL.to_string();
    }
    let dotted = path.join(".");
    if array {
        format!("[[{dotted}]]")
    } else {
        format!("[{dotted}]")
    }
}

/// Every key of `table` and its sub-tables, by section heading. An array of tables is
/// walked through its first element.
fn walk(
    table: &toml::Table,
    path: &[String],
    array: bool,
    keys: &mut BTreeMap<Heading, BTreeSet<String>>,
) {
    let here = heading(path, array);
    keys.entry(here.clone()).or_default();
    for (key, value) in table {
        let mut sub = path.to_vec();
        sub.push(key.clone());
        match value {
            toml::Value::Table(inner) => walk(inner, &sub, false, keys),
            toml::Value::Array(items)
                if !items.is_empty() && items.iter().all(toml::Value::is_table) =>
            {
                walk(items[0].as_table().unwrap(), &sub, true, keys)
            }
            _ => {
                keys.entry(here.clone()).or_default().insert(key.clone());
            }
        }
    }
}

/// A deserializer that answers nothing but notes the field names a struct's derived
/// `Deserialize` asks for: every key the parser accepts, present by default or not.
struct FieldNames<'a>(&'a mut Vec<&'static str>);

#[derive(Debug)]
struct Stop(String);

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Stop(msg.to_string())
    }
}

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop("not a struct".into()))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        self.0.extend_from_slice(fields);
        Err(Stop("fields noted".into()))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// The keys `T` (a struct deriving `Deserialize`) accepts.
fn accepted<T: for<'de> Deserialize<'de>>() -> BTreeSet<String> {
    let mut fields = Vec::new();
    let _ = T::deserialize(FieldNames(&mut fields));
    assert!(
        !fields.is_empty(),
        "{} did not name its fields",
        std::any::type_name::<T>()
    );
    fields.into_iter().map(str::to_string).collect()
}

/// Every key recd.toml accepts, by section heading.
fn accepted_keys() -> BTreeMap<Heading, BTreeSet<String>> {
    let populated = populated();
    let text = populated.to_toml();
    assert_eq!(
        DaemonConfig::parse(&text).as_ref(),
        Ok(&populated),
        "the populated configuration should be accepted as it prints:\n{text}"
    );
    let value = toml::Value::try_from(&populated).expect("the configuration serializes");
    let mut keys = BTreeMap::new();
    walk(value.as_table().expect("a table"), &[], false, &mut keys);

    // What the parser asks for, section by section: adds a key the populated
    // configuration leaves out (an optional one, absent from the serialized text).
    let sections: [(&str, BTreeSet<String>); 11] = [
        ("[recording]", accepted::<SessionDefaults>()),
        ("[incidents]", accepted::<IncidentsConfig>()),
        ("[upload]", accepted::<UploadConfig>()),
        ("[remote_control]", accepted::<RemoteControlConfig>()),
        ("[[expect]]", accepted::<Expectation>()),
        ("[http]", accepted::<HttpConfig>()),
        ("[[preset]]", accepted::<PresetConfig>()),
        ("[[rule]]", accepted::<recd_rules::RuleConfig>()),
        ("[encryption]", accepted::<EncryptionConfig>()),
        ("[signing]", accepted::<SigningConfig>()),
        ("[zenoh]", accepted::<ZenohSection>()),
    ];
    for (section, fields) in sections {
        keys.entry(section.to_string()).or_default().extend(fields);
    }
    // A top-level field that serialized as a table or array of tables is a section; one
    // that did not serialize at all could be either, so populated() must set it.
    let section_names: BTreeSet<String> = keys
        .keys()
        .filter(|heading| heading.as_str() != TOP_LEVEL)
        .map(|heading| {
            heading
                .trim_matches(|c| c == '[' || c == ']')
                .split('.')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    let top = &keys[TOP_LEVEL];
    let unserialized: Vec<String> = accepted::<DaemonConfig>()
        .into_iter()
        .filter(|field| !section_names.contains(field) && !top.contains(field))
        .collect();
    assert!(
        unserialized.is_empty(),
        "populated() in daemon/tests/config_reference.rs leaves out top-level keys the parser \
         accepts, so the test cannot tell a key from a section; set them there: {}",
        unserialized.join(", ")
    );
    keys
}

/// One row of the reference: its key and its default cell.
struct Row {
    key: String,
    default: String,
    line: usize,
}

/// The rows of `docs/configuration.md` under each `## ` heading. Rows are table lines whose
/// first cell is a name in backticks; `### ` sub-headings stay in their section.
fn documented() -> BTreeMap<Heading, Vec<Row>> {
    let text = std::fs::read_to_string(REFERENCE).expect("read docs/configuration.md");
    let mut rows: BTreeMap<Heading, Vec<Row>> = BTreeMap::new();
    let mut current: Option<Heading> = None;
    for (index, line) in text.lines().enumerate() {
        if let Some(title) = line.strip_prefix("## ") {
            let title = title.trim();
            current = Some(title.to_string());
            rows.entry(title.to_string()).or_default();
            continue;
        }
        let Some(section) = &current else { continue };
        let Some(rest) = line.trim_start().strip_prefix("| `") else {
            continue;
        };
        let Some((key, after)) = rest.split_once('`') else {
            continue;
        };
        let Some(cells) = after.trim_start().strip_prefix('|') else {
            continue;
        };
        let default = cells.split('|').next().unwrap_or("").trim().to_string();
        rows.entry(section.clone()).or_default().push(Row {
            key: key.to_string(),
            default,
            line: index + 1,
        });
    }
    rows
}

/// The section a heading names: the heading itself, or its first word when more follows
/// (`## [upload] — off by default`).
fn section_of(title: &str) -> &str {
    if title == TOP_LEVEL || title.starts_with(&format!("{TOP_LEVEL} ")) {
        TOP_LEVEL
    } else {
        title.split_whitespace().next().unwrap_or(title)
    }
}

/// The documented rows by the section their heading names.
fn documented_by_section() -> BTreeMap<Heading, Vec<Row>> {
    let mut by_section: BTreeMap<Heading, Vec<Row>> = BTreeMap::new();
    for (title, rows) in documented() {
        by_section
            .entry(section_of(&title).to_string())
            .or_default()
            .extend(rows);
    }
    by_section
}

#[test]
fn every_key_the_parser_accepts_is_in_the_configuration_reference() {
    let accepted = accepted_keys();
    let documented = documented_by_section();

    let mut missing = Vec::new();
    for (section, keys) in &accepted {
        let rows: BTreeSet<&str> = documented
            .get(section)
            .map(|rows| rows.iter().map(|row| row.key.as_str()).collect())
            .unwrap_or_default();
        for key in keys {
            if !rows.contains(key.as_str()) {
                missing.push(format!("{section} `{key}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/configuration.md lacks these keys (each needs a row \"| `key` | default | meaning |\" \
         under the heading \"## <section>\"): {}",
        missing.join(", ")
    );

    // And nothing documented that recd would refuse.
    let mut stale = Vec::new();
    for (section, rows) in &documented {
        let is_section = section == TOP_LEVEL || section.starts_with('[');
        if !is_section {
            continue;
        }
        let Some(keys) = accepted.get(section) else {
            stale.push(format!(
                "the section {section} (line {})",
                rows.first().map_or(0, |r| r.line)
            ));
            continue;
        };
        for row in rows {
            if !keys.contains(&row.key) {
                stale.push(format!("{section} `{}` (line {})", row.key, row.line));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "docs/configuration.md documents what recd.toml does not accept: {}",
        stale.join(", ")
    );
}

/// The configuration recd reads from `text` placed in `section`, after what the section
/// needs to be valid (`[upload]` a bucket, `[[expect]]` a topic).
fn parse_in(section: &str, text: &str) -> Result<DaemonConfig, String> {
    let needed = match section {
        "[upload]" => "bucket = \"recordings\"\n",
        "[[expect]]" => "topic = \"camera/*\"\n",
        _ => "",
    };
    let header = if section == TOP_LEVEL {
        String::new()
    } else {
        format!("{section}\n")
    };
    DaemonConfig::parse(&format!("{header}{needed}{text}"))
}

#[test]
fn every_documented_default_is_the_built_in_one() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (section, rows) in documented_by_section() {
        if section != TOP_LEVEL && !section.starts_with('[') {
            continue;
        }
        let Ok(baseline) = parse_in(&section, "") else {
            continue;
        };
        for row in rows {
            // One TOML value in backticks; anything else is prose ("none", "required").
            let cell = row.default.as_str();
            let literal = cell
                .strip_prefix('`')
                .and_then(|c| c.strip_suffix('`'))
                .filter(|c| !c.contains('`'));
            let Some(literal) = literal else { continue };
            checked += 1;
            match parse_in(&section, &format!("{} = {literal}\n", row.key)) {
                Ok(config) if config == baseline => {}
                Ok(_) => wrong.push(format!(
                    "{section} `{}` = {literal} (line {}) is not the default",
                    row.key, row.line
                )),
                Err(error) => wrong.push(format!(
                    "{section} `{}` = {literal} (line {}) is refused: {error}",
                    row.key, row.line
                )),
            }
        }
    }
    assert!(checked > 20, "only {checked} defaults were checked");
    assert!(
        wrong.is_empty(),
        "docs/configuration.md gives defaults recd does not have:\n{}",
        wrong.join("\n")
    );
}
