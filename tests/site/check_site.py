#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/site/check_site.py: open every page of build/site in headless
Chromium and fail on a broken link, a missing image or a console error.

    /usr/bin/python3 tests/site/check_site.py build/site

Drives Debian's chromium through the DevTools protocol (python3-websocket):
each *.html page is loaded from file://, and

  - every console message of level error or warning, every uncaught
    exception, every log entry of level error and every failed load
    (Network.loadingFailed: a missing image or stylesheet) is a failure;
  - every <img> must have loaded (complete, naturalWidth > 0);
  - every <a href> must resolve: a file:// target must exist inside the
    site, and its #fragment must be an id of the target page when the
    target is a page of the site; http(s) links are listed, not fetched
    (the site must read offline; they are citations);
  - the pages the site is built for must be there (index, demo, variants,
    validate, traceability, alg/pfedme.html with Algorithm 1's ten lines
    beside code);
  - every box line of an algorithm page (table.beside tr#line-N) links at
    least one golden vector or test of its own (a.check: those citing that
    line's requirement tag, docs/traceability.md), and the C beside it
    shows no ACSL (proof material stays on the linked source page);
  - no page is wider than a 1280-pixel window (a reader scrolls down, never
    sideways).

Then it keeps a screenshot of the pFedMe page as build/site/pfedme.png.
First, a self-test: a small site with one planted fault per page (a broken
link, a broken anchor, a missing image, console.error, an uncaught
exception, an untested line, ACSL beside a box, a page too wide) must have
each caught, and its clean pages must pass.
Exit 0 when every page passed, 1 otherwise (each failure printed).
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

try:
    import websocket
except ImportError:
    sys.exit("check_site: the websocket module is missing: Debian's "
             "python3-websocket (./deps.sh site); run with /usr/bin/python3")

# What a page reports after loading: its ids, links and images.
PAGE_FACTS = """JSON.stringify({
  ids: Array.from(document.querySelectorAll('[id]')).map(e => e.id),
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
  images: Array.from(document.images).map(i => [i.src, i.complete && i.naturalWidth > 0]),
  lines: document.querySelectorAll('table.beside tr[id^=line-]').length,
  code: document.querySelectorAll('table.beside td.code pre').length,
  untested: Array.from(document.querySelectorAll('table.beside tr[id^=line-]'))
    .filter(r => !r.querySelector('td.evidence a.check')).map(r => r.id),
  overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
  annotated: Array.from(document.querySelectorAll('table.beside tr[id^=line-]'))
    .filter(r => Array.from(r.querySelectorAll('td.code pre'))
      .some(p => /\/\*@|\/\/@/.test(p.textContent))).map(r => r.id)
})"""


class Browser:
    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="pflref-site-")
        exe = shutil.which("chromium")
        if exe is None:
            sys.exit("check_site: chromium is not installed (./deps.sh site)")
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--remote-debugging-port=0", f"--user-data-dir={self.profile}",
             "--allow-file-access-from-files", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port = None
        deadline = time.time() + 60
        while port is None and time.time() < deadline:
            line = self.proc.stderr.readline()
            m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if m:
                port = int(m.group(1))
            elif not line and self.proc.poll() is not None:
                break
        if port is None:
            self.close()
            sys.exit("check_site: chromium did not start its DevTools endpoint")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as r:
            targets = json.load(r)
        url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        self.ws = websocket.create_connection(url, timeout=60)
        self.next_id = 0
        self.events = []
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  width=1280, height=1100, deviceScaleFactor=1, mobile=False)

    def call(self, method, **params):
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_load(self, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for e in self.events:
                if e["method"] == "Page.loadEventFired":
                    return True
            self.ws.settimeout(max(0.1, deadline - time.time()))
            msg = json.loads(self.ws.recv())
            if "method" in msg:
                self.events.append(msg)
        return False

    def open(self, url):
        self.events = []
        self.call("Page.navigate", url=url)
        loaded = self.wait_load()
        # let late console messages arrive
        self.call("Runtime.evaluate", expression="1")
        facts = json.loads(self.call("Runtime.evaluate", expression=PAGE_FACTS,
                                     returnByValue=True)["result"]["value"])
        return loaded, facts, list(self.events)

    def screenshot(self, path):
        height = self.call("Runtime.evaluate", expression="document.body.scrollHeight",
                           returnByValue=True)["result"]["value"]
        shot = self.call("Page.captureScreenshot", format="png",
                         clip={"x": 0, "y": 0, "width": 1280,
                               "height": min(int(height), 2400), "scale": 1},
                         captureBeyondViewport=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def event_problems(events):
    out = []
    for e in events:
        m, p = e["method"], e.get("params", {})
        if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
            out.append("console " + p["type"] + ": " +
                       " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif m == "Runtime.exceptionThrown":
            out.append("exception: " + p["exceptionDetails"].get("text", ""))
        elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
            out.append("log error: " + p["entry"].get("text", "") + " " + p["entry"].get("url", ""))
        elif m == "Network.loadingFailed":
            out.append("failed to load: " + p.get("errorText", "") + " (request " + p.get("requestId", "") + ")")
    return out


def check(site, required, browser):
    """The failures of the site (a list of messages)."""
    pages = sorted(os.path.relpath(os.path.join(d, f), site)
                   for d, _, fs in os.walk(site) for f in fs if f.endswith(".html"))
    failures = [f"missing page {p}" for p in required if p not in pages]
    ids, links, external = {}, [], set()
    try:
        for rel in pages:
            url = "file://" + urllib.parse.quote(os.path.join(site, rel))
            loaded, facts, events = browser.open(url)
            if not loaded:
                failures.append(f"{rel}: did not finish loading")
            failures += [f"{rel}: {p}" for p in event_problems(events)]
            failures += [f"{rel}: image not loaded: {src}" for src, ok in facts["images"] if not ok]
            ids[rel] = set(facts["ids"])
            # each box line links the vectors or tests that check THAT line
            # (tools/site/build.py, from the traceability data)
            failures += [f"{rel}: line without a test or vector of its own: {r}"
                         for r in facts["untested"]]
            # a reader at 1280 pixels scrolls down, never sideways
            if facts["overflow"] > 0:
                failures.append(f"{rel}: {facts['overflow']} pixels wider than a 1280-pixel window")
            # the C beside the box is code: ACSL is proof material, linked
            failures += [f"{rel}: proof annotation shown beside the box: {r}"
                         for r in facts["annotated"]]
            links += [(rel, h) for h in facts["links"]]
            if rel == "alg/pfedme.html":
                if facts["lines"] != 10:
                    failures.append(f"{rel}: {facts['lines']} lines of Algorithm 1, expected 10")
                if facts["code"] < 5:
                    failures.append(f"{rel}: only {facts['code']} code excerpts beside the box")
                browser.screenshot(os.path.join(site, "pfedme.png"))
    except Exception as e:  # a page that hangs the protocol is a failure too
        failures.append(f"the browser failed: {e}")
    for rel, href in links:
        parts = urllib.parse.urlsplit(href)
        if parts.scheme in ("http", "https", "mailto"):
            external.add(href)
            continue
        if parts.scheme != "file":
            failures.append(f"{rel}: link of scheme {parts.scheme}: {href}")
            continue
        target = urllib.parse.unquote(parts.path)
        trel = os.path.relpath(target, site)
        if trel.startswith("..") or not os.path.exists(target):
            failures.append(f"{rel}: broken link: {href}")
        elif parts.fragment and trel in ids and urllib.parse.unquote(parts.fragment) not in ids[trel]:
            failures.append(f"{rel}: broken anchor: {href}")
    check.summary = (f"{len(pages)} pages opened in headless Chromium, {len(links)} links "
                     f"({len(external)} external, not fetched)")
    return failures


# The self-test: a small site with one planted fault per page; each must be
# caught, and the clean page must pass.
PLANTED = {
    "clean.html": ('<p id="a">ok</p><a href="other.html#b">other</a><img src="dot.svg" alt="">', None),
    "other.html": ('<p id="b">target</p>', None),
    "link.html": ('<a href="nowhere.html">gone</a>', "broken link"),
    "anchor.html": ('<a href="other.html#nope">gone</a>', "broken anchor"),
    "image.html": ('<img src="missing.png" alt="">', "image not loaded"),
    "console.html": ('<script>console.error("planted")</script>', "console error"),
    "throw.html": ('<script>throw new Error("planted")</script>', "exception"),
    "tested.html": ('<table class="beside"><tr id="line-1"><td class="evidence">'
                    '<a class="check" href="other.html#b">a test</a></td></tr></table>', None),
    "untested.html": ('<table class="beside"><tr id="line-1"><td class="evidence">'
                      '<a href="other.html">the whole page</a></td></tr></table>',
                      "line without a test"),
    "wide.html": ('<div style="width:1500px">wider than the window</div>',
                  "wider than a 1280-pixel window"),
    "annotated.html": ('<table class="beside"><tr id="line-1"><td class="code"><pre>/*@ requires n &gt; 0; */\n'
                       'x = 1;</pre></td><td class="evidence"><a class="check" href="other.html#b">a test</a>'
                       '</td></tr></table>', "proof annotation shown"),
}


def self_test(browser):
    tmp = tempfile.mkdtemp(prefix="pflref-site-test-")
    try:
        with open(os.path.join(tmp, "dot.svg"), "w") as f:
            f.write('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4"/></svg>')
        for name, (body, _) in PLANTED.items():
            with open(os.path.join(tmp, name), "w") as f:
                f.write(f"<!DOCTYPE html><html><head><title>t</title></head><body>{body}</body></html>")
        failures = check(tmp, [], browser)
        bad = []
        for name, (_, fault) in PLANTED.items():
            hits = [f for f in failures if f.startswith(name + ":")]
            if fault is None and hits:
                bad.append(f"self-test: the clean page {name} failed: {hits}")
            elif fault is not None and not any(fault in h for h in hits):
                bad.append(f"self-test: the planted {fault} of {name} was not caught ({failures})")
        return bad
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    site = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/site")
    required = ["index.html", "demo.html", "variants.html", "validate.html", "traceability.html",
                "alg/pfedme.html"]
    browser = Browser()
    try:
        bad = self_test(browser)
        for f in bad:
            print("check-site: " + f)
        if not bad:
            print(f"check-site: self-test: {len(PLANTED) - 3} planted faults caught, the clean pages pass")
        failures = check(site, required, browser)
    finally:
        browser.close()
    for f in failures:
        print("check-site: " + f)
    shot = os.path.join(site, "pfedme.png")
    print(f"check-site: {check.summary}, {len(failures)} failures; "
          f"screenshot {os.path.relpath(shot) if os.path.exists(shot) else 'missing'}")
    return 1 if bad or failures or not os.path.exists(shot) else 0


if __name__ == "__main__":
    sys.exit(main())
