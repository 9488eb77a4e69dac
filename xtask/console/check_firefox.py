"""Drives the simulator's sandbox console in headless Firefox through WebDriver
(geckodriver, Selenium) against a running licensing-sim started with an admin token
(`cargo xtask console --browser firefox` starts it and writes what this needs):

1. the console asks for the admin token; signed in through its form, the session cookie
   stands for it, and a change sent from the page without the session's anti-forgery
   header (x-sandbox-csrf) is refused with 403;
2. a request made by the SDK (the `licensing` command line) appears in the open journal
   page within one second, without a reload;
3. its "Copy as cURL" command, read back from the clipboard and run in a shell, gets the
   same HTTP status and business code;
4. a fault rule added through the form (found by its labels) is listed and makes the
   next SDK call fail with the scripted code, and only the next one;
5. Reset asks first: declined, the state is kept; accepted, it is emptied;
6. every control is labelled, no page logs an error or breaks its Content Security
   Policy (WebDriver BiDi's log events, shown to be heard by an error and a blocked
   request made on purpose), and no request leaves the simulator's origin (every
   page's performance entries).

Saves a screenshot of the journal. Usage: python check_firefox.py CONFIG.json
(CONFIG: {firefox, geckodriver, url, adminToken, cli, configDir, screenshot})
"""

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from urllib.parse import urlsplit

from selenium import webdriver
from selenium.common.exceptions import (
    NoAlertPresentException,
    NoSuchElementException,
    StaleElementReferenceException,
    TimeoutException,
)
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.firefox.service import Service
from selenium.webdriver.support.ui import Select, WebDriverWait

config = json.load(open(sys.argv[1], encoding="utf-8"))
base = config["url"]
origin = "{0.scheme}://{0.netloc}".format(urlsplit(base))
problems = []


def check(ok, what):
    print(f"{'ok  ' if ok else 'FAIL'} {what}", flush=True)
    if not ok:
        problems.append(what)


sdk_env = {
    **os.environ,
    "LICENSING_ORDER_URL": base,
    "LICENSING_MEMBER_URL": base,
    "LICENSING_APP_TOKEN": "sim-app-token",
    "LICENSING_CLIENT_TOKEN": "sim-client-token",
    "LICENSING_USER_TOKEN": "sim-user-token",
    "LICENSING_CONFIG_DIR": config["configDir"],
}


def sdk(*args):
    """One SDK call through the command line: whether it succeeded, and its output."""
    done = subprocess.run(
        [config["cli"], *args], env=sdk_env, capture_output=True, text=True, timeout=60
    )
    return done.returncode == 0, done.stdout + done.stderr


def admin_state():
    """The simulator's state, read through the admin API with the admin token."""
    request = urllib.request.Request(
        f"{base}/__sandbox/v1/state",
        headers={"authorization": f"Bearer {config['adminToken']}"},
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.load(reply)["state"]


def first_line(text):
    return " ".join(text.split())[:100]


# Every request the page made (its own load included), as performance entries.
REQUESTED = """return [
  ...performance.getEntriesByType("navigation"),
  ...performance.getEntriesByType("resource"),
].map((e) => e.name);"""

options = webdriver.FirefoxOptions()
options.binary_location = config["firefox"]
options.add_argument("-headless")
options.enable_bidi = True  # the log events
options.unhandled_prompt_behavior = "ignore"  # the check answers every confirm itself
options.set_preference("dom.events.testing.asyncClipboard", True)  # clipboard reads
options.set_preference("network.proxy.type", 0)
driver = webdriver.Firefox(
    options=options,
    service=Service(
        executable_path=config["geckodriver"], log_output=config["geckodriverLog"]
    ),
)
errors = []
foreign = []
visited = []
try:
    caps = driver.capabilities
    print(f"browser: {caps['browserName']} {caps['browserVersion']} (geckodriver {caps['moz:geckodriverVersion']})")
    driver.set_window_size(1400, 900)
    # WebDriver BiDi's log.entryAdded, subscribed to before the first page loads: every
    # uncaught error, every console.error, and every load the Content Security Policy
    # blocked (Firefox logs those as errors too). (A preload
    # script's listeners would see the same, but Firefox 140 then now and then logs an
    # error of its own at the first navigation, "Permission denied to access property".)
    driver.script.add_error_handler(
        lambda e: errors.append(f"script error: {e.message} (at {e.source}:{e.line_number})")
    )
    driver.script.add_console_handler(
        lambda m: m.level == "error" and errors.append(f"console error: {m.text} (at {m.source})")
    )

    def leave_page():
        """Before a page is left: every origin it asked."""
        url = driver.current_url
        visited.append(url)
        for name in driver.execute_script(REQUESTED) or []:
            if "{0.scheme}://{0.netloc}".format(urlsplit(name)) != origin:
                foreign.append(f"{name} (from {url})")

    def go(path):
        if driver.current_url.startswith(origin):
            leave_page()
        driver.get(f"{base}/__sandbox/{path}")

    def wait(seconds=5):
        # A page that reloads itself after an action may swap its elements mid-look.
        return WebDriverWait(driver, seconds, poll_frequency=0.02,
                             ignored_exceptions=[NoSuchElementException, StaleElementReferenceException])

    def labelled(text):
        """The control whose <label> reads exactly `text`."""
        for label in driver.find_elements(By.TAG_NAME, "label"):
            if label.text.strip() == text:
                return driver.find_element(By.ID, label.get_attribute("for"))
        raise AssertionError(f"no control labelled {text!r}")

    def answer(accept):
        """Answers the confirm the page opened; returns its question."""
        alert = wait().until(lambda d: _alert(d))
        question = alert.text
        alert.accept() if accept else alert.dismiss()
        return question

    def _alert(d):
        try:
            return d.switch_to.alert
        except NoAlertPresentException:
            return False

    # 1. Signing in: a session cookie, and its anti-forgery header on every change.
    go("")
    check(driver.find_elements(By.ID, "token") and "Sign in" in driver.title,
          "without a session the console asks for the admin token")
    labelled("Admin token").send_keys(config["adminToken"] + Keys.ENTER)
    wait().until(lambda d: d.find_elements(By.ID, "journal"))
    cookie = driver.get_cookie("licensing_sim_session") or {}
    check(cookie.get("httpOnly") and cookie.get("sameSite") == "Strict" and cookie.get("path") == "/__sandbox",
          f"signed in: the session cookie is HttpOnly, SameSite=Strict, Path=/__sandbox ({ {k: cookie.get(k) for k in ('httpOnly', 'sameSite', 'path')} })")
    check(config["adminToken"] not in driver.page_source, "the admin token is not in the page")
    refused = driver.execute_async_script("""
      const done = arguments[arguments.length - 1];
      const post = (headers) => fetch("/__sandbox/v1/clock/advance", {
        method: "POST", credentials: "same-origin",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ ms: 0 }),
      }).then(async (r) => [r.status, (await r.json()).message]);
      const csrf = document.querySelector('meta[name="sandbox-csrf"]').content;
      Promise.all([post({}), post({ "x-sandbox-csrf": csrf })]).then(done, (e) => done(String(e)));
    """)
    check(refused[0][0] == 403 and "x-sandbox-csrf" in refused[0][1],
          f"a change with the session but without x-sandbox-csrf: HTTP {refused[0][0]} ({refused[0][1]})")
    check(refused[1][0] == 200, f"the same change with the header: HTTP {refused[1][0]}")

    # 2. The journal, live.
    rows = "#journal > li.entry"
    before = len(driver.find_elements(By.CSS_SELECTOR, rows))
    ok, out = sdk("order", "allocate-shell-nums", "--size", "2")
    check(ok, f"the SDK call succeeds ({first_line(out)})")
    started = time.monotonic()
    newest_css = '#journal > li.entry[data-operation="allocateShellNums"]'
    try:
        wait(1).until(lambda d: d.find_elements(By.CSS_SELECTOR, newest_css))
        waited = round((time.monotonic() - started) * 1000)
    except TimeoutException:
        waited = None
    check(waited is not None and waited <= 1000,
          f"the call appears in the journal without a reload in {waited} ms (at most 1000)")
    check(len(driver.find_elements(By.CSS_SELECTOR, rows)) == before + 1, "one new entry, at the top")

    # 3. Copy as cURL, read back from the clipboard and run in a shell.
    newest = driver.find_element(By.CSS_SELECTOR, newest_css)
    newest.find_element(By.TAG_NAME, "summary").send_keys(Keys.ENTER)  # opens by keyboard
    # The entry's request, reply and command arrive when it is opened.
    copy = wait().until(lambda d: newest.find_element(By.XPATH, ".//button[normalize-space()='Copy as cURL']"))
    copy.send_keys(Keys.ENTER)
    wait().until(lambda d: d.find_element(By.ID, "status").text)
    check(driver.find_element(By.ID, "status").text == "The command was copied.",
          f"the page says: {driver.find_element(By.ID, 'status').text!r}")
    command = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "navigator.clipboard.readText().then(done, (e) => done(`unreadable: ${e}`));"
    )
    check(command.startswith("curl ") and "$LICENSING_APP_TOKEN" in command,
          "the clipboard holds the command, the token as a variable")
    check("sim-app-token" not in command, "no credential in the command")
    replayed = subprocess.run(["bash", "-c", command], env=sdk_env, capture_output=True,
                              text=True, timeout=30).stdout
    status = re.search(r"HTTP (\d+)\s*$", replayed)
    reply = json.loads(replayed[: replayed.rfind("HTTP ")])
    shown = (newest.get_attribute("data-status"), newest.get_attribute("data-code"))
    check(status and (status.group(1), str(reply["code"])) == shown,
          f"the command's reply: HTTP {status and status.group(1)} code {reply['code']}, as journalled: HTTP {shown[0]} code {shown[1]}")
    time.sleep(0.7)  # the replay arrives in the journal too
    driver.save_screenshot(config["screenshot"])
    print(f"screenshot: {config['screenshot']}")

    # 4. A fault rule through the form.
    leave_page()
    driver.find_element(By.LINK_TEXT, "Faults & clock").click()
    wait().until(lambda d: d.find_elements(By.ID, "fault-form"))
    labelled("operation (required)").send_keys("allocateShellNums")
    labelled("times").send_keys("1")
    Select(labelled("kind (required)")).select_by_value("code")
    labelled("code").send_keys("13004")
    driver.find_element(By.XPATH, "//button[normalize-space()='Add rule']").click()
    wait().until(lambda d: d.find_elements(By.CSS_SELECTOR, "tr[data-rule]"))
    check(len(driver.find_elements(By.CSS_SELECTOR, "tr[data-rule]")) == 1, "the rule is listed")
    ok, out = sdk("order", "allocate-shell-nums", "--size", "1")
    check(not ok and "13004" in out, f"the next SDK call fails with the scripted 13004 ({first_line(out)})")
    ok, _ = sdk("order", "allocate-shell-nums", "--size", "1")
    check(ok, "the call after it succeeds (times: 1)")
    go("faults")
    fired = driver.find_elements(By.CSS_SELECTOR, "tr[data-rule] td")[5].text.strip()
    check(fired == "1", f"the rule fired once ({fired})")

    # 5. Reset asks first.
    leave_page()
    driver.find_element(By.LINK_TEXT, "State").click()
    wait().until(lambda d: d.find_elements(By.ID, "reset"))
    check(driver.find_elements(By.XPATH, "//td[normalize-space()='Acme Robotics']"),
          "the state page lists the demo enterprise")
    driver.find_element(By.ID, "reset").click()
    answer(accept=False)
    wait().until(lambda d: d.find_element(By.ID, "status").text == "Nothing was changed.")
    check(len(admin_state()["enterprises"]) == 1, "declined: the state is kept")
    leave_page()  # the accepted reset reloads the page
    driver.find_element(By.ID, "reset").click()
    question = answer(accept=True)
    check(question.startswith("Reset the simulator?"), f'it asked: "{question}"')
    wait().until(lambda d: "(0)" in d.find_element(By.ID, "enterprises-title").text)
    check(len(admin_state()["enterprises"]) == 0, "accepted: no enterprise is left")

    # 6. Labelled controls on every page; then what every page reported.
    for path in ["", "state", "faults", "conformance"]:
        go(path)
        unlabelled = driver.execute_script("""return [...document.querySelectorAll(
            "input, select, textarea, button")]
          .filter((c) => c.type !== "hidden")
          .filter((c) => !(c.labels?.length || c.getAttribute("aria-label") || c.textContent.trim()))
          .map((c) => c.outerHTML.slice(0, 80));""")
        check(not unlabelled, f"/__sandbox/{path}: every control labelled {' '.join(unlabelled)}")
    # The log is heard: an error thrown and a request to another origin, both on purpose
    # and in the page's own realm (WebDriver BiDi's script.evaluate).
    driver.script.evaluate(
        'setTimeout(() => { throw new Error("canary error"); });'
        'fetch("http://canary.invalid/x").catch(() => {});',
        {"context": driver.current_window_handle},
        False,
    )
    time.sleep(0.5)  # the log events arrive over the BiDi socket
    leave_page()
    canaries = [e for e in errors if "canary" in e]
    errors = [e for e in errors if "canary" not in e]
    check(any("canary error" in e for e in canaries) and any("canary.invalid" in e for e in canaries),
          "the log shows an error and the CSP blocking another origin, both made on purpose")
    check(len(visited) >= 9, f"{len(visited)} pages looked at")
    check(not errors, f"no script or console errors {' | '.join(errors)}")
    check(not foreign, f"no request left {origin} {' '.join(foreign)}")
finally:
    driver.quit()

print("console in Firefox: every check passed" if not problems else f"console in Firefox: {len(problems)} failed")
sys.exit(0 if not problems else 1)
