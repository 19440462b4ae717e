//! Sparse messages: hand-written, leaving out every field that has a default.

use recd_control::{Request, Response};

use crate::Message;

/// Hand-written messages leaving out every field that has a default, as a peer of an
/// older release may send them; each must decode, and the fixture pins what it decodes
/// to (encoded again).
pub fn cases() -> Vec<(&'static str, Message, &'static str)> {
    let request = Message::Request(Request::Ping);
    let response = Message::Response(Response::Done);
    vec![
        (
            "sparse-request-stop",
            request.clone(),
            r#"{"version":1,"request":"stop"}"#,
        ),
        (
            "sparse-request-status",
            request.clone(),
            r#"{"request":"status","version":1}"#,
        ),
        (
            "sparse-request-start",
            request.clone(),
            r#"{"version":1,"request":"start"}"#,
        ),
        (
            "sparse-request-topics",
            request.clone(),
            r#"{"version":1,"request":"topics"}"#,
        ),
        (
            "sparse-request-trigger",
            request.clone(),
            r#"{"version":1,"request":"trigger","after_ms":250}"#,
        ),
        (
            "sparse-request-upload",
            request.clone(),
            r#"{"version":1,"request":"upload"}"#,
        ),
        (
            "sparse-response-started",
            response.clone(),
            r#"{"response":"started","name":"a","id":1,"directory":"/d"}"#,
        ),
        (
            "sparse-response-stopped",
            response.clone(),
            r#"{"response":"stopped","sessions":[{"name":"a","files":[{"path":"/d/a.mcap","bytes":1,"messages":2,"state":"complete"}],"duration_s":1.0,"topics":[{"name":"/t","service":"t","received":3,"written":2,"dropped":1,"lost":0,"bytes_written":9,"messages_per_s":0.0,"bytes_per_s":0.0}],"write_error":null}]}"#,
        ),
        (
            "sparse-response-status",
            response.clone(),
            r#"{"response":"status","sessions":[{"name":"a","id":1,"directory":"/d","current_files":[],"elapsed_s":2.5,"bytes_written":0,"bytes_per_s":0.0,"topics":[],"write_error":null,"problems":[["s","why"]]}]}"#,
        ),
        (
            "sparse-response-stopped-thread",
            response.clone(),
            r#"{"response":"stopped","sessions":[{"name":"a","files":[],"duration_s":1.0,"topics":[],"write_error":null,"receive_threads":[{"source":"dds","scheduling":"nice 0","priority_warning":null,"passes":1,"lateness_p999_us":1.0,"lateness_max_us":2.0,"spilled":0,"reclaimed":0}]}]}"#,
        ),
        (
            "sparse-response-list",
            response.clone(),
            r#"{"response":"list","sessions":[{"name":"a","id":1,"state":"stopped","directory":"/d","started_ns":1,"stopped_ns":2,"files":[],"topics":[]}]}"#,
        ),
        (
            "sparse-response-triggered",
            response.clone(),
            r#"{"response":"triggered","name":"a","time_ns":5,"files":[]}"#,
        ),
        (
            "sparse-response-uploads",
            response,
            r#"{"response":"uploads","enabled":false,"destination":null,"error":null,"yielding":null,"bytes_per_s":0.0,"files":[]}"#,
        ),
    ]
}
