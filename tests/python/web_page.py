#!/usr/bin/env python3
"""Drives recd's web page in a real browser (Debian's chromium, headless, through Playwright)
and reports what it saw, for daemon/tests/http_page.rs.

    web_page.py --url http://127.0.0.1:PORT --token TOKEN --session drive \
        --topics gps,imu --stall-topic imu --mark-text from-the-browser \
        --refused-mark-text no-token-mark

With the token (from the URL fragment `#token=...`): picks the preset and clicks Start; the
session's card must show within --card-limit s of the click and each topic's row within
--topic-limit s of the card; then the stall topic's row must turn `stalled` (within
--stall-limit s) with its health cell in the page's red. Then a second browser context without
any token clicks Mark (with --refused-mark-text) and Stop on the card: both must be refused with
401 on the page's message line. Back in the first page: Mark (with --mark-text) must succeed;
Trigger on the session (on disk) must make an incident that the page's incident list then shows
with origin `page` (within --timeout s); and Stop must take the card away and show "No session is
recording.".

Ends with one JSON line on stdout: {"ok": bool, "failed": step or null, "error": text or null,
"steps": [{"step", "ok", "ms", ...}], "timings_ms": {...}, "messages": {...}, "states": {...},
"console_errors": [...], "page_errors": [...]}; exits 1 (with the reason on stderr) when a step
failed. Every wait is bounded.
"""

import argparse
import json
import sys
import time

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

STALLED_COLOR = "rgb(207, 34, 46)"  # --stalled: #cf222e in style.css
EMPTY_TEXT = "No session is recording."

# Installed before the page's own script: notes (performance.now(), ms) when each card, each
# topic row and each health state of a row first appears, and when each action button is
# clicked, so that the times are the page's own, not the round trips of this driver.
OBSERVER = """
(() => {
  const seen = { cards: {}, rows: {}, health: {}, clicks: {} };
  window.__recdSeen = seen;
  const note = (map, key) => { if (!(key in map)) map[key] = performance.now(); };
  const scan = (root) => {
    if (!(root instanceof Element)) return;
    const nodes = [root, ...root.querySelectorAll("section.card[data-session], .topic[data-topic]")];
    for (const n of nodes) {
      if (n.matches("section.card[data-session]")) note(seen.cards, n.dataset.session);
      else if (n.matches(".topic[data-topic]")) {
        const card = n.closest("section.card[data-session]");
        const session = card ? card.dataset.session : "";
        note(seen.rows, session + "\\u0000" + n.dataset.topic);
        note(seen.health, session + "\\u0000" + n.dataset.topic + "\\u0000" + n.dataset.health);
      }
    }
  };
  new MutationObserver((records) => {
    for (const r of records) for (const n of r.addedNodes) scan(n);
  }).observe(document, { childList: true, subtree: true });
  document.addEventListener("click", (e) => {
    const b = e.target instanceof Element ? e.target.closest("[data-action]") : null;
    if (b) seen.clicks[b.dataset.action] = performance.now();
  }, true);
})();
"""


class StepFailed(Exception):
    pass


class Report:
    def __init__(self):
        self.steps = []
        self.timings = {}
        self.messages = {}
        self.states = {}
        self.console_errors = []
        self.page_errors = []
        self.failed = None
        self.error = None

    def run(self, name, action):
        """Runs one step; a failure ends the walk through the page (later steps need it)."""
        started = time.monotonic()
        entry = {"step": name, "ok": False}
        self.steps.append(entry)
        try:
            detail = action() or {}
        except Exception as error:  # noqa: BLE001 - any failure ends the walk, reported
            entry["ms"] = round((time.monotonic() - started) * 1000, 1)
            entry["error"] = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
            self.failed = name
            self.error = f"{name}: {str(error).strip()}"
            raise StepFailed(self.error) from error
        entry["ms"] = round((time.monotonic() - started) * 1000, 1)
        entry["ok"] = True
        entry.update(detail)
        return detail

    def as_json(self):
        return {
            "ok": self.failed is None,
            "failed": self.failed,
            "error": self.error,
            "steps": self.steps,
            "timings_ms": self.timings,
            "messages": self.messages,
            "states": self.states,
            "console_errors": self.console_errors,
            "page_errors": self.page_errors,
        }


def css(value: str) -> str:
    """A value quoted for a CSS attribute selector."""
    return json.dumps(value)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="the listener's base URL, http://HOST:PORT")
    ap.add_argument("--token", required=True)
    ap.add_argument("--preset", default=None, help="the preset to start (default: --session)")
    ap.add_argument("--session", required=True, help="the session the preset starts")
    ap.add_argument("--topics", required=True, help="comma-separated topics whose rows must show")
    ap.add_argument("--stall-topic", required=True)
    ap.add_argument("--mark-text", required=True, help="the marker sent with the token")
    ap.add_argument("--refused-mark-text", default="no-token-mark",
                    help="the marker tried without a token")
    ap.add_argument("--card-limit", type=float, default=2.0, help="s from the click to the card")
    ap.add_argument("--topic-limit", type=float, default=2.0, help="s from the card to each row")
    ap.add_argument("--stall-limit", type=float, default=10.0,
                    help="s from the rows to the stall topic shown stalled")
    ap.add_argument("--timeout", type=float, default=5.0, help="s any other wait may take")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args(argv)
    report = Report()

    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"],
                                        headless=True, timeout=30_000)
            try:
                walk(report, browser, args)
            finally:
                browser.close()
    except StepFailed:
        pass
    except PlaywrightError as error:  # the browser itself (launch, crash)
        report.failed = report.failed or "browser"
        report.error = report.error or f"browser: {error}"
    if report.page_errors and report.failed is None:
        report.failed = "page errors"
        report.error = "the page threw: " + "; ".join(report.page_errors)
    print(json.dumps(report.as_json(), separators=(",", ":")), flush=True)
    if report.failed is not None:
        print(f"web_page.py: step failed: {report.error}", file=sys.stderr)
        return 1
    return 0


def walk(report, browser, args):
    """The steps, in order; the first that fails raises StepFailed."""
    preset = args.preset or args.session
    topics = [t for t in args.topics.split(",") if t]
    base = args.url.rstrip("/")
    timeout_ms = args.timeout * 1000
    card = f"section.card[data-session={css(args.session)}]"

    def row(topic, health=None):
        selector = f"{card} .topic[data-topic={css(topic)}]"
        return selector + (f"[data-health={css(health)}]" if health else "")

    def seen(page):
        return page.evaluate("window.__recdSeen")

    def key(*parts):
        return "\u0000".join(parts)

    def message_after(page, action, click, expect_status):
        """Clears #message, clicks, and returns the reply's status and what #message shows."""
        page.evaluate("() => { const m = document.getElementById('message');"
                      " m.textContent = ''; m.className = 'message'; }")
        with page.expect_response(
                lambda r: r.url == f"{base}/api/{action}" and r.request.method == "POST",
                timeout=timeout_ms) as reply:
            click()
        status = reply.value.status
        handle = page.wait_for_function(
            "() => { const m = document.getElementById('message');"
            " return m.textContent ? {text: m.textContent, cls: m.className} : null; }",
            timeout=timeout_ms)
        shown = handle.json_value()
        report.messages[f"{action}:{expect_status}"] = shown["text"]
        if status != expect_status:
            raise StepFailed(f"POST /api/{action} answered {status}, expected {expect_status};"
                             f" #message: {shown['text']!r}")
        return status, shown

    def watch(page, label):
        page.on("pageerror", lambda e: report.page_errors.append(f"{label}: {e}"))
        page.on("console", lambda m: m.type == "error" and report.console_errors.append(
            f"{label}: {m.text}"))

    main_context = browser.new_context()
    main_context.set_default_timeout(timeout_ms)
    main_context.add_init_script(OBSERVER)
    page = main_context.new_page()
    watch(page, "token page")

    def open_with_token():
        page.goto(f"{base}/#token={args.token}", wait_until="domcontentloaded")
        page.wait_for_function(
            "() => document.getElementById('token-state').textContent === 'token set'")
        # The page takes the token out of the address bar and keeps it for the tab only.
        state = page.evaluate("() => ({hash: location.hash, stored: sessionStorage.getItem("
                              "'recd-token') !== null})")
        report.states["token_page_hash"] = state["hash"]
        if state["hash"] or not state["stored"]:
            raise StepFailed(f"the token was not taken from the fragment: {state}")
        return {}

    report.run("open page with token", open_with_token)

    def start():
        select = page.locator("select#preset")
        select.wait_for(state="visible")
        page.wait_for_function(
            "(name) => [...document.querySelectorAll('#preset option')].some(o => o.value === name)",
            arg=preset)
        select.select_option(preset)
        with page.expect_response(lambda r: r.url == f"{base}/api/start", timeout=timeout_ms) \
                as reply:
            page.click("#start button[data-action=start]")
        report.states["start_status"] = reply.value.status
        if reply.value.status != 200:
            raise StepFailed(f"POST /api/start answered {reply.value.status}: {reply.value.text()}")
        # Bounded beyond the limit, so that a late card reports how late it was.
        page.wait_for_selector(card, timeout=(args.card_limit + 3) * 1000)
        times = seen(page)
        ms = times["cards"][args.session] - times["clicks"]["start"]
        report.states["requests_around_start"] = page.evaluate(
            "(t0) => performance.getEntriesByType('resource').filter(e => e.name.includes('/api/')"
            " && e.responseEnd > t0 - 1000).map(e => [e.name.replace(/^.*\\/api\\//, ''),"
            " Math.round(e.startTime - t0), Math.round(e.responseEnd - t0)])", times["clicks"]["start"])
        report.timings["click_to_card"] = round(ms, 1)
        if ms > args.card_limit * 1000:
            raise StepFailed(f"the card showed {ms:.0f} ms after the click, limit "
                             f"{args.card_limit * 1000:.0f} ms")
        return {"click_to_card_ms": round(ms, 1)}

    report.run("start preset", start)

    def rows():
        for topic in topics:
            page.wait_for_selector(row(topic), timeout=(args.topic_limit + 3) * 1000)
        times = seen(page)
        shown_at = times["cards"][args.session]
        late = []
        for topic in topics:
            ms = times["rows"][key(args.session, topic)] - shown_at
            report.timings[f"card_to_row:{topic}"] = round(ms, 1)
            if ms > args.topic_limit * 1000:
                late.append(f"{topic} {ms:.0f} ms")
        if late:
            raise StepFailed(f"rows showed late after the card (limit "
                             f"{args.topic_limit * 1000:.0f} ms): {', '.join(late)}")
        return {}

    report.run("topic rows", rows)

    def stalled():
        handle = page.wait_for_function(
            """(selector) => {
                const r = document.querySelector(selector);
                const cell = r && r.querySelector('.t-health');
                return cell ? {color: getComputedStyle(cell).color, text: cell.textContent,
                               cls: r.className} : null;
            }""",
            arg=row(args.stall_topic, "stalled"), timeout=args.stall_limit * 1000)
        shown = handle.json_value()
        times = seen(page)
        stalled_at = times["health"][key(args.session, args.stall_topic, "stalled")]
        report.timings["card_to_stalled"] = round(stalled_at - times["cards"][args.session], 1)
        report.states["stalled_cell"] = shown
        report.states["health_seen"] = sorted(
            k.replace("\u0000", "/") for k in times["health"] if k.startswith(args.session))
        others = page.evaluate(
            "(card) => Object.fromEntries([...document.querySelectorAll(card + ' .topic[data-topic]')]"
            ".map(r => [r.dataset.topic, r.dataset.health]))", card)
        report.states["health_now"] = others
        problems = []
        if shown["color"] != STALLED_COLOR:
            problems.append(f"its health cell is {shown['color']}, not {STALLED_COLOR}")
        if "health-stalled" not in shown["cls"].split():
            problems.append(f"the row's class is {shown['cls']!r}")
        if shown["text"] != "stalled":
            problems.append(f"its health cell reads {shown['text']!r}")
        if problems:
            raise StepFailed(f"{args.stall_topic} stalled, but " + "; ".join(problems))
        return {"color": shown["color"]}

    report.run("stall shown", stalled)

    # A second browser context: no sessionStorage, no token.
    other_context = browser.new_context()
    other_context.set_default_timeout(timeout_ms)
    other = other_context.new_page()
    watch(other, "no-token page")

    def open_without_token():
        other.goto(f"{base}/", wait_until="domcontentloaded")
        other.wait_for_selector(f"{card} button[data-action=mark]")
        state = other.locator("#token-state").text_content()
        report.states["no_token_state"] = state
        if state != "no token":
            raise StepFailed(f"the second context has a token: #token-state {state!r}")
        return {}

    report.run("open page without token", open_without_token)

    def refused(action, fill=None):
        def step():
            if fill is not None:
                other.fill(f"{card} input.mark-text", fill)
            status, shown = message_after(
                other, action, lambda: other.click(f"{card} button[data-action={action}]"), 401)
            if not shown["text"].startswith("401: ") or "error" not in shown["cls"].split():
                raise StepFailed(f"#message shows {shown} after a refused {action}")
            return {"message": shown["text"]}
        return step

    report.run("mark without token", refused("mark", args.refused_mark_text))
    report.run("stop without token", refused("stop"))

    def still_there():
        # A poll after the refused stop still shows the session, on both pages.
        other.wait_for_function(
            "() => document.getElementById('status-line').textContent.startsWith('updated')")
        other.reload(wait_until="domcontentloaded")
        other.wait_for_selector(card)
        page.wait_for_selector(card)
        return {}

    report.run("session survives refusals", still_there)
    other_context.close()

    def mark():
        page.bring_to_front()
        page.fill(f"{card} input.mark-text", args.mark_text)
        status, shown = message_after(
            page, "mark", lambda: page.click(f"{card} button[data-action=mark]"), 200)
        if shown["text"] != f"Marked {args.session}" or "ok" not in shown["cls"].split():
            raise StepFailed(f"#message shows {shown} after the mark")
        return {"message": shown["text"]}

    report.run("mark with token", mark)

    def trigger():
        status, shown = message_after(
            page, "trigger", lambda: page.click(f"{card} button[data-action=trigger]"), 200)
        prefix = f"Triggered {args.session}: incident "
        if not shown["text"].startswith(prefix) or "ok" not in shown["cls"].split():
            raise StepFailed(f"#message shows {shown} after the trigger")
        incident = shown["text"][len(prefix):]
        selector = (f"#incidents tr.incident[data-id={css(incident)}]"
                    f"[data-session={css(args.session)}]")
        page.wait_for_selector(selector)
        listed = page.evaluate(
            "(selector) => { const r = document.querySelector(selector);"
            " return Object.fromEntries([...r.querySelectorAll('td')].map("
            "c => [c.className.split(' ')[0], c.textContent])); }", selector)
        report.states["incident_row"] = listed
        if listed.get("i-origin") != "page":
            raise StepFailed(f"the incident's row shows {listed}, not origin page")
        return {"message": shown["text"], "incident": incident}

    report.run("trigger with token", trigger)

    def stop():
        clicked = time.monotonic()
        status, shown = message_after(
            page, "stop", lambda: page.click(f"{card} button[data-action=stop]"), 200)
        if shown["text"] != f"Stopped {args.session}" or "ok" not in shown["cls"].split():
            raise StepFailed(f"#message shows {shown} after the stop")
        page.wait_for_selector(card, state="detached")
        page.wait_for_function(
            "(text) => { const p = document.querySelector('#sessions p.empty');"
            " return p && p.textContent === text; }", arg=EMPTY_TEXT)
        report.timings["stop_to_empty"] = round((time.monotonic() - clicked) * 1000, 1)
        return {"message": shown["text"]}

    report.run("stop with token", stop)
    main_context.close()


if __name__ == "__main__":
    sys.exit(main())
