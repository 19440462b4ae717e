//! Incidents' ids: the asker's, or one made from the incident's moment that no incident of
//! its session has yet.

use super::naming;

/// How many suffixes a made id may try (`-2` … `-1000`): a thousand incidents of one
/// session in one millisecond is a loop, not a vehicle.
const MOST_TRIED: u32 = 1000;

/// An id from the incident's moment at `time_ns` that `taken` says is free (`-2`, `-3`…
/// appended); `None` when every one tried is taken. An error of `taken` (the catalog's)
/// ends the search at once.
pub fn fresh_id<E>(
    time_ns: u64,
    taken: impl Fn(&str) -> Result<bool, E>,
) -> Result<Option<String>, E> {
    let base = naming::incident_id(time_ns);
    let candidates =
        std::iter::once(base.clone()).chain((2..=MOST_TRIED).map(|n| format!("{base}-{n}")));
    for id in candidates {
        if !taken(&id)? {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOMENT: u64 = 1_795_000_000_123_000_000;

    #[test]
    fn an_id_is_the_moment_then_the_first_free_suffix() {
        let base = naming::incident_id(MOMENT);
        assert_eq!(base, "20261118T110640.123Z");
        let free: Result<_, ()> = fresh_id(MOMENT, |_| Ok(false));
        assert_eq!(free, Ok(Some(base.clone())));
        let taken = [base.clone(), format!("{base}-2")];
        let next: Result<_, ()> = fresh_id(MOMENT, |id| Ok(taken.iter().any(|t| t == id)));
        assert_eq!(next, Ok(Some(format!("{base}-3"))));
    }

    #[test]
    fn a_failing_catalog_ends_the_search_and_every_id_taken_gives_none() {
        let asked = std::cell::Cell::new(0);
        let failed = fresh_id(MOMENT, |_| {
            asked.set(asked.get() + 1);
            Err("the catalog is locked")
        });
        assert_eq!(failed, Err("the catalog is locked"));
        assert_eq!(asked.get(), 1, "asked once, not forever");
        let none: Result<_, ()> = fresh_id(MOMENT, |_| Ok(true));
        assert_eq!(none, Ok(None));
    }
}
