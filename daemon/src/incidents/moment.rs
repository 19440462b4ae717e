//! A trigger's moment and window, as the wire gives them: a moment ahead is waited for
//! (within [`MAX_TRIGGER_LEAD`]), and a window's sides are checked, never wrapped.

use std::time::Duration;

use recd_control::{ErrorKind, ErrorReply, TriggerRequest};

use crate::sessions::replies::error;

/// How far ahead a trigger's moment may be: further is more likely a wrong clock or
/// unit than a plan.
pub const MAX_TRIGGER_LEAD: Duration = Duration::from_secs(600);

/// How far a trigger's moment `at_ns` lies ahead of `now_ns` (zero when it has come);
/// refused beyond [`MAX_TRIGGER_LEAD`].
pub fn lead(at_ns: u64, now_ns: u64) -> Result<Duration, ErrorReply> {
    let ahead = Duration::from_nanos(at_ns.saturating_sub(now_ns));
    if ahead > MAX_TRIGGER_LEAD {
        return Err(error(
            ErrorKind::InvalidArgument,
            format!(
                "the trigger's moment is {:.1} s ahead, more than the {} s recd accepts (a clock or unit mistake?)",
                ahead.as_secs_f64(),
                MAX_TRIGGER_LEAD.as_secs()
            ),
        ));
    }
    Ok(ahead)
}

/// The sides of the window a trigger asks for, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sides {
    /// Before its moment; `None` when it gives none (the default of its kind of session).
    pub before: Option<Duration>,
    /// After its moment.
    pub after: Duration,
}

impl Sides {
    /// The sides `request` asks for; one beyond [`recd_storage::window::MAX_SIDE`] is
    /// refused with the reason.
    pub fn of(request: &TriggerRequest) -> Result<Self, ErrorReply> {
        let checked = |side, ms| {
            recd_storage::window::side_from_ms(side, ms)
                .map_err(|refused| error(ErrorKind::InvalidArgument, refused.to_string()))
        };
        Ok(Self {
            before: request
                .before_ms
                .map(|ms| checked("before", ms))
                .transpose()?,
            after: checked("after", request.after_ms)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn a_moment_ahead_is_its_lead_up_to_ten_minutes_and_refused_beyond() {
        assert_eq!(lead(100 * S, 130 * S).unwrap(), Duration::ZERO, "past");
        assert_eq!(lead(130 * S, 100 * S).unwrap(), Duration::from_secs(30));
        assert_eq!(lead(700 * S, 100 * S).unwrap(), MAX_TRIGGER_LEAD);
        let refused = lead(701 * S, 100 * S).unwrap_err();
        assert_eq!(refused.kind, ErrorKind::InvalidArgument);
        assert!(
            refused.message.contains("601.0 s ahead"),
            "{}",
            refused.message
        );
    }

    #[test]
    fn sides_beyond_a_week_are_refused_with_their_name() {
        let asked = TriggerRequest {
            before_ms: Some(5_000),
            after_ms: 2_000,
            ..TriggerRequest::default()
        };
        assert_eq!(
            Sides::of(&asked).unwrap(),
            Sides {
                before: Some(Duration::from_secs(5)),
                after: Duration::from_secs(2)
            }
        );
        let huge = TriggerRequest {
            after_ms: 1_000_000_000_000_000_000,
            ..TriggerRequest::default()
        };
        let refused = Sides::of(&huge).unwrap_err();
        assert_eq!(refused.kind, ErrorKind::InvalidArgument);
        assert!(
            refused
                .message
                .starts_with("the window's after (1000000000000000 s) is longer than the 7 days"),
            "{}",
            refused.message
        );
    }
}
