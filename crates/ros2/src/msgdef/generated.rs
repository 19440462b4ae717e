//! The message types rosidl generates from `.srv` and `.action` files, as rosidl_parser's
//! `definition.py` (classes `Service` and `Action`) defines them, and their text.

/// The kinds of interface file a type's text comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A `.msg` file, the type's own.
    Msg,
    /// A `.srv` file: request `---` response.
    Srv,
    /// An `.action` file: goal `---` result `---` feedback.
    Action,
}

impl Kind {
    /// The folder in a package and the file extension: `msg`, `srv` or `action`.
    pub(super) fn dir(self) -> &'static str {
        match self {
            Kind::Msg => "msg",
            Kind::Srv => "srv",
            Kind::Action => "action",
        }
    }

    /// What stands for the file name in error messages.
    pub(super) fn placeholder(self) -> &'static str {
        match self {
            Kind::Msg => "Type",
            Kind::Srv => "Service",
            Kind::Action => "Action",
        }
    }

    /// How many `---`-separated sections a file of this kind has.
    pub(super) fn sections(self) -> usize {
        match self {
            Kind::Msg => 1,
            Kind::Srv => 2,
            Kind::Action => 3,
        }
    }
}

/// A message type rosidl generates from a `.srv` or `.action` file, named by the file's name
/// and a suffix (rosidl_parser's `SERVICE_*_SUFFIX` and `ACTION_*_SUFFIX` constants).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    /// `S_Request`: the request section of `S.srv`.
    Request,
    /// `S_Response`: the response section of `S.srv`.
    Response,
    /// `S_Event`: a service-introspection event of `S`.
    Event,
    /// `A_Goal`: the goal section of `A.action`.
    Goal,
    /// `A_Result`: the result section of `A.action`.
    Result,
    /// `A_Feedback`: the feedback section of `A.action`.
    Feedback,
    /// `A_FeedbackMessage`: a feedback with its goal's id, published on `_action/feedback`.
    FeedbackMessage,
    /// `A_SendGoal_Request`: a goal with its id.
    SendGoalRequest,
    /// `A_SendGoal_Response`: whether the goal was accepted, and when.
    SendGoalResponse,
    /// `A_SendGoal_Event`: a service-introspection event of `A_SendGoal`.
    SendGoalEvent,
    /// `A_GetResult_Request`: the id of the goal whose result is asked for.
    GetResultRequest,
    /// `A_GetResult_Response`: a goal's final status and result.
    GetResultResponse,
    /// `A_GetResult_Event`: a service-introspection event of `A_GetResult`.
    GetResultEvent,
}

/// The types of a `.srv` file, by suffix.
const SRV_PARTS: [(&str, Part); 3] = [
    ("_Request", Part::Request),
    ("_Response", Part::Response),
    ("_Event", Part::Event),
];

/// The types of an `.action` file, by suffix. No suffix ends another, so at most one fits.
const ACTION_PARTS: [(&str, Part); 10] = [
    ("_Goal", Part::Goal),
    ("_Result", Part::Result),
    ("_Feedback", Part::Feedback),
    ("_FeedbackMessage", Part::FeedbackMessage),
    ("_SendGoal_Request", Part::SendGoalRequest),
    ("_SendGoal_Response", Part::SendGoalResponse),
    ("_SendGoal_Event", Part::SendGoalEvent),
    ("_GetResult_Request", Part::GetResultRequest),
    ("_GetResult_Response", Part::GetResultResponse),
    ("_GetResult_Event", Part::GetResultEvent),
];

impl Part {
    /// The file name (without extension) and the part that the type `name` is in a file of
    /// `kind`: `AddTwoInts_Event` of a `.srv` is `("AddTwoInts", Part::Event)`. `None` for a
    /// `.msg`, or a name without one of the kind's suffixes after a non-empty file name.
    pub(super) fn parse(kind: Kind, name: &str) -> Option<(&str, Part)> {
        let parts: &[(&str, Part)] = match kind {
            Kind::Msg => return None,
            Kind::Srv => &SRV_PARTS,
            Kind::Action => &ACTION_PARTS,
        };
        parts.iter().find_map(|&(suffix, part)| {
            name.strip_suffix(suffix)
                .filter(|base| !base.is_empty())
                .map(|base| (base, part))
        })
    }

    /// Where this part of the file `base` in `package` gets its text.
    pub(super) fn source(self, package: &str, base: &str) -> Source {
        let generated = match self {
            Part::Request | Part::Goal => return Source::Section(0),
            Part::Response | Part::Result => return Source::Section(1),
            Part::Feedback => return Source::Section(2),
            Part::Event => event_text(package, base),
            Part::SendGoalEvent => event_text(package, &format!("{base}_SendGoal")),
            Part::GetResultEvent => event_text(package, &format!("{base}_GetResult")),
            Part::FeedbackMessage => {
                format!("unique_identifier_msgs/UUID goal_id\n{package}/{base}_Feedback feedback\n")
            }
            Part::SendGoalRequest => {
                format!("unique_identifier_msgs/UUID goal_id\n{package}/{base}_Goal goal\n")
            }
            Part::SendGoalResponse => "bool accepted\nbuiltin_interfaces/Time stamp\n".to_owned(),
            Part::GetResultRequest => "unique_identifier_msgs/UUID goal_id\n".to_owned(),
            Part::GetResultResponse => format!("int8 status\n{package}/{base}_Result result\n"),
        };
        Source::Generated(generated)
    }
}

/// Where a [`Part`]'s text comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Source {
    /// The section of the file with this index (see [`sections`]), verbatim.
    Section(usize),
    /// This text, as rosidl generates the type: one `.msg` line per member, in member order,
    /// other types named `pkg/Type`.
    Generated(String),
}

/// The event type of service `service` in `package`: rosidl's `Service.event_message`, whose
/// request and response are sequences bounded to one element (`BoundedSequence(…, 1)`).
fn event_text(package: &str, service: &str) -> String {
    format!(
        "service_msgs/ServiceEventInfo info\n\
         {package}/{service}_Request[<=1] request\n\
         {package}/{service}_Response[<=1] response\n"
    )
}

/// The sections of an interface file's text, split at the lines that are `---` (surrounding
/// whitespace ignored; the separator lines themselves dropped), each verbatim with the number
/// of its first line (from 1).
pub(super) fn sections(text: &str) -> Vec<(&str, usize)> {
    let mut sections = Vec::new();
    let (mut start, mut first_line, mut offset) = (0, 1, 0);
    for (index, line) in text.split_inclusive('\n').enumerate() {
        if line.trim() == "---" {
            sections.push((&text[start..offset], first_line));
            start = offset + line.len();
            first_line = index + 2;
        }
        offset += line.len();
    }
    sections.push((&text[start..], first_line));
    sections
}
