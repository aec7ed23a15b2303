"""The translation page for browsers (server/web_ui.h, GET /) on the real rpt-server, driven in
headless Chromium through chromedriver and Selenium (Debian's chromium and chromium-driver,
selenium from PyPI: tools/setup.sh installs them): a model (or a multilingual model's language
pair) picked from /v1/models, a text translated with the button and with Ctrl+Enter, plain text
and HTML, alternatives, a glossary, the kept placeholders and tags highlighted, the API's errors
shown, a PO file opened and its translation downloaded; the answer is the same as the JSON API's. Beside the browser: the headers (a
Content-Security-Policy whose hashes are the page's inline style and script), the page on the
--http-listen port and not on the admin port, and --no-web-ui.

    RPT_SERVER_BINARY=build/server/rpt-server python3 tests/server/web_ui_test.py

RPT_WEB_UI_SCREENSHOT=docs/web-ui.png also saves a screenshot of the page (1000x700) there.
"""
import base64
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from rpt_server import FIXTURE_MODEL, REPO, ServerProcess
from rpt_server import http_call as call

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
HAVE_BROWSER = os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)
NO_BROWSER = ("Debian's chromium and chromium-driver are not installed (bash tools/setup.sh "
              "installs them): the page is not tested in a browser")
MODELS = ["--model", "en-de=" + os.path.join(REPO, "models", "en-de"),
          "--model", "en-fr=" + os.path.join(REPO, "models", "en-fr")]
PLACEHOLDER_TEXT = "The file %s could not be saved."
HTML_TEXT = "<b>Save</b> the file"


def csp_hash(page, tag):
    text = re.search(f"<{tag}>(.*?)</{tag}>".encode(), page, re.S).group(1)
    return "'sha256-" + base64.b64encode(hashlib.sha256(text).digest()).decode() + "'"


class PageServedTest(unittest.TestCase):
    """The page's answer, without a browser: on which ports, with which headers."""

    def test_headers_and_the_policy_hashes(self):
        server = ServerProcess(["--model", f"en-de={FIXTURE_MODEL}", "--http-listen",
                                "127.0.0.1:0"])
        try:
            for path in ("/", "/index.html"):
                status, headers, page = call(server.public_port, "GET", path)
                self.assertEqual(status, 200, path)
                self.assertEqual(headers["Content-Type"], "text/html; charset=utf-8")
                self.assertEqual(headers["Cache-Control"], "no-cache")
                self.assertEqual(headers["X-Content-Type-Options"], "nosniff")
                self.assertIn('<html lang="en">', page.decode())
                policy = headers["Content-Security-Policy"]
                self.assertIn("default-src 'none'", policy)
                self.assertIn("connect-src 'self'", policy)
                self.assertIn("frame-ancestors 'none'", policy)
                self.assertIn("script-src " + csp_hash(page, "script") + ";", policy)
                self.assertIn("style-src " + csp_hash(page, "style") + ";", policy)
                self.assertNotIn("unsafe-inline", policy)
            with open(os.path.join(REPO, "server", "web_ui", "index.html"), "rb") as f:
                self.assertEqual(page, f.read())
            status, headers, body = call(server.public_port, "HEAD", "/")
            self.assertEqual((status, body), (200, b""))
            self.assertIn("Content-Security-Policy", headers)
            status, headers, _ = call(server.public_port, "POST", "/", "{}")
            self.assertEqual((status, headers["Allow"]), (405, "GET, HEAD"))
            # The admin port (probes and /metrics only) has no page.
            self.assertEqual(call(server.http_port, "GET", "/")[0], 404)
        finally:
            server.close()

    def test_no_web_ui(self):
        server = ServerProcess(["--model", f"en-de={FIXTURE_MODEL}", "--no-web-ui"])
        try:
            self.assertEqual(call(server.http_port, "GET", "/")[0], 404)
            self.assertEqual(call(server.http_port, "GET", "/index.html")[0], 404)
            self.assertEqual(call(server.http_port, "GET", "/v1/models")[0], 200)
        finally:
            server.close()


@unittest.skipUnless(HAVE_BROWSER, NO_BROWSER)
class BrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        cls.server = ServerProcess(MODELS + ["--beam-size", "2"])
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                         "--disable-gpu", "--window-size=1000,700", "--lang=en-US",
                         "--force-device-scale-factor=1"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        try:
            cls.driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER),
                                          options=options)
        except Exception:
            cls.server.close()
            raise
        cls.driver.set_window_size(1000, 700)
        cls.url = f"http://127.0.0.1:{cls.server.http_port}/"

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.server.close()

    def setUp(self):
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver.get(self.url)
        # The model list comes from GET v1/models once the page's script runs.
        WebDriverWait(self.driver, 30).until(
            lambda d: len(d.find_elements("css selector", "#model option")) == 2)

    def tearDown(self):
        # The page's script and style ran under the policy: nothing was refused.
        refused = [entry["message"] for entry in self.driver.get_log("browser")
                   if "Content Security Policy" in entry["message"]]
        self.assertEqual(refused, [])

    def element(self, element_id):
        return self.driver.find_element("id", element_id)

    def api(self, text, model="en-de", glossary=None, **options):
        """The same call through the JSON API: its translation."""
        body = {"model": model, "texts": [text], "options": options}
        if glossary:
            body["glossary"] = glossary
        status, _, answer = self.server.translate(body)
        self.assertEqual(status, 200, answer)
        return answer["translations"][0]

    def fill(self, text, model="en-de", format="text", n_best="1", glossary=""):
        from selenium.webdriver.support.ui import Select

        Select(self.element("model")).select_by_value(model)
        Select(self.element("format")).select_by_value(format)
        Select(self.element("n-best")).select_by_value(n_best)
        for element_id, value in (("source", text), ("glossary", glossary)):
            field = self.element(element_id)
            field.clear()
            if value:
                field.send_keys(value)

    def run_translation(self, submit=None):
        """Submits (clicks Translate unless `submit` does it); waits for the answer or an error."""
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver.execute_script("document.getElementById('status').textContent = '';")
        (submit or self.element("translate").click)()
        WebDriverWait(self.driver, 60).until(
            lambda _: self.element("status").text == "Done."
            or self.element("error").is_displayed())

    def marks(self, element_id="result"):
        return [mark.text for mark in
                self.driver.find_elements("css selector", f"#{element_id} mark.span")]

    def test_controls_have_labels(self):
        unlabelled = self.driver.execute_script(
            "return [...document.querySelectorAll('select, textarea, input')]"
            ".filter(e => e.labels.length === 0).map(e => e.id);")
        self.assertEqual(unlabelled, [])
        self.assertEqual(self.driver.find_element("css selector", "html").get_attribute("lang"),
                         "en")
        names = [option.text for option in
                 self.driver.find_elements("css selector", "#model option")]
        self.assertEqual(names, ["en-de (en → de)", "en-fr (en → fr)"])

    def test_placeholder_kept_and_highlighted(self):
        self.fill(PLACEHOLDER_TEXT)
        self.run_translation()
        expected = self.api(PLACEHOLDER_TEXT, format="text")
        self.assertEqual(self.element("result").text, expected["hypotheses"][0]["text"])
        self.assertIn("%s", self.element("result").text)
        self.assertEqual(self.marks(), ["%s"])
        self.assertEqual(self.element("spans").text, "1 protected span, all kept.")
        self.assertFalse(self.element("error").is_displayed())
        self.assertTrue(self.element("copy").is_enabled())
        self.element("copy").click()  # the clipboard, or a selection where it is refused
        # The status is written when the clipboard's promise settles, after the click returns.
        from selenium.webdriver.support.ui import WebDriverWait
        WebDriverWait(self.driver, 10).until(lambda _: self.element("copy-status").text != "")
        self.assertIn(self.element("copy-status").text,
                      ("Copied.", "Selected: press Ctrl+C to copy."))

    def test_html_with_ctrl_enter(self):
        from selenium.webdriver.common.keys import Keys

        self.fill(HTML_TEXT, model="en-fr", format="html")
        source = self.element("source")
        self.run_translation(lambda: source.send_keys(Keys.CONTROL, Keys.ENTER))
        expected = self.api(HTML_TEXT, model="en-fr", format="html")
        self.assertEqual(self.element("result").text, expected["hypotheses"][0]["text"])
        self.assertEqual(self.marks(), ["<b>", "</b>"])
        self.assertEqual(self.element("source").get_attribute("value"), HTML_TEXT)  # no newline

    def test_alternatives(self):
        self.fill(PLACEHOLDER_TEXT, n_best="2")
        self.run_translation()
        expected = [h["text"] for h in
                    self.api(PLACEHOLDER_TEXT, format="text", n_best=2, beam_size=4)["hypotheses"]]
        shown = [item.text for item in
                 self.driver.find_elements("css selector", "#alternatives li")]
        self.assertEqual([self.element("result").text] + shown, expected)
        self.assertTrue(self.element("alternatives-section").is_displayed())
        self.assertEqual(self.marks("alternatives"), ["%s"])

    def test_glossary(self):
        text = "Save the file."
        self.fill(text, glossary="file = Akte\n# a comment\n")
        self.run_translation()
        expected = self.api(text, format="text", glossary=[{"source": "file", "target": "Akte"}])
        self.assertEqual(self.element("result").text, expected["hypotheses"][0]["text"])
        self.assertIn("Akte", self.element("result").text)

    def test_server_errors_are_shown(self):
        # A glossary term holding a placeholder: the server's INVALID_ARGUMENT, shown readably.
        self.fill(PLACEHOLDER_TEXT, glossary="%s = x")
        self.run_translation()
        error = self.element("error").text
        self.assertIn("HTTP 400, INVALID_ARGUMENT", error)
        self.assertIn("glossary[0]: the source term holds a protected span (%s)", error)
        self.assertEqual(self.element("result").text, "")
        # A model the server does not have (as when it restarted with others): NOT_FOUND.
        self.driver.execute_script(
            "const o = document.createElement('option'); o.value = o.textContent = 'xx-yy';"
            "document.getElementById('model').append(o);")
        self.fill(PLACEHOLDER_TEXT, model="xx-yy")
        self.run_translation()
        error = self.element("error").text
        self.assertIn("HTTP 404, NOT_FOUND", error)
        self.assertIn("no model named 'xx-yy'", error)
        # A glossary line the page cannot read is said before anything is sent.
        self.fill(PLACEHOLDER_TEXT, glossary="file")
        self.element("translate").click()
        self.assertIn("Glossary line 1: write it as source = target", self.element("error").text)

    def test_an_api_key_is_sent_when_given(self):
        from selenium.webdriver.support.ui import WebDriverWait

        directory = tempfile.mkdtemp(prefix="rpt_web_ui_keys_")
        keys = os.path.join(directory, "keys.yaml")
        with open(keys, "w") as f:
            f.write("tenants:\n  - name: page\n    keys: [page-key-0123456789abcdef]\n")
        keyed = ServerProcess(MODELS + ["--beam-size", "2", "--api-keys", keys])
        try:
            self.driver.get(f"http://127.0.0.1:{keyed.http_port}/")
            WebDriverWait(self.driver, 30).until(
                lambda d: len(d.find_elements("css selector", "#model option")) == 2)
            self.fill(PLACEHOLDER_TEXT)
            self.run_translation()
            self.assertIn("HTTP 401, UNAUTHENTICATED", self.element("error").text)
            self.element("api-key").send_keys("page-key-0123456789abcdef")
            self.run_translation()
            self.assertEqual(self.element("result").text,
                             self.api(PLACEHOLDER_TEXT)["hypotheses"][0]["text"])
        finally:
            keyed.close()
            shutil.rmtree(directory, ignore_errors=True)

    def test_a_multilingual_model_lists_each_pair(self):
        """One entry per language pair (tests/server/language_pairs_test.py's model); the call
        names the chosen pair's languages, and is answered as the JSON API answers them."""
        from selenium.webdriver.support.ui import Select, WebDriverWait
        from language_pairs_test import multilingual_model

        directory = tempfile.mkdtemp(prefix="rpt_web_ui_multi_")
        multi = ServerProcess(["--model", "multi=" + multilingual_model(directory),
                               "--beam-size", "2"])
        try:
            self.driver.get(f"http://127.0.0.1:{multi.http_port}/")
            WebDriverWait(self.driver, 30).until(
                lambda d: len(d.find_elements("css selector", "#model option")) == 3)
            names = [option.text for option in
                     self.driver.find_elements("css selector", "#model option")]
            self.assertEqual(names, ["multi (en → de)", "multi (en → fr)", "multi (any → ro)"])
            texts = []
            for index, target in enumerate(("de", "fr", "ro")):
                Select(self.element("model")).select_by_index(index)
                self.element("source").clear()
                self.element("source").send_keys(PLACEHOLDER_TEXT)
                self.run_translation()
                status, _, answer = multi.translate(
                    {"model": "multi", "target_language": target, "texts": [PLACEHOLDER_TEXT]})
                self.assertEqual(status, 200, answer)
                texts.append(self.element("result").text)
                self.assertEqual(texts[-1], answer["translations"][0]["hypotheses"][0]["text"])
            self.assertEqual(len(set(texts)), 3, texts)
        finally:
            multi.close()
            shutil.rmtree(directory, ignore_errors=True)

    def test_a_file_is_opened_translated_and_downloaded(self):
        """A PO catalogue opened from disk: its format picked from its name, translated as the
        JSON API translates it, and downloaded as app.de.po, valid for msgfmt --check."""
        from selenium.webdriver.support.ui import Select, WebDriverWait

        catalog = os.path.join(REPO, "tests", "fixtures", "catalogs", "app.po")
        downloads = tempfile.mkdtemp(prefix="rpt_web_ui_downloads_")
        try:
            self.driver.execute_cdp_cmd("Browser.setDownloadBehavior",
                                        {"behavior": "allow", "downloadPath": downloads})
            Select(self.element("model")).select_by_value("en-de")
            self.element("file").send_keys(catalog)
            WebDriverWait(self.driver, 10).until(
                lambda _: self.element("status").text == "Opened app.po.")
            self.assertEqual(Select(self.element("format")).first_selected_option.text,
                             "PO catalogue (gettext)")
            with open(catalog, encoding="utf-8") as file:
                text = file.read()
            self.assertEqual(self.element("source").get_attribute("value"), text)
            self.run_translation()
            self.assertFalse(self.element("error").is_displayed())
            expected = self.api(text, format="po")["hypotheses"][0]["text"]
            self.element("download").click()
            path = os.path.join(downloads, "app.de.po")
            WebDriverWait(self.driver, 20).until(lambda _: os.path.exists(path))
            with open(path, encoding="utf-8") as file:
                self.assertEqual(file.read(), expected)
            check = subprocess.run(["msgfmt", "--check", "-o", os.devnull, path],
                                   capture_output=True, text=True)
            self.assertEqual(check.returncode, 0, check.stderr)
            # A text typed over it is the user's own: downloaded under a name of its own.
            self.element("source").send_keys("x")
            Select(self.element("format")).select_by_value("text")
            self.element("source").clear()
            self.element("source").send_keys(PLACEHOLDER_TEXT)
            self.run_translation()
            self.element("download").click()
            typed = os.path.join(downloads, "translation.de.txt")
            WebDriverWait(self.driver, 20).until(lambda _: os.path.exists(typed))
            with open(typed, encoding="utf-8") as file:
                self.assertEqual(file.read(), self.api(PLACEHOLDER_TEXT)["hypotheses"][0]["text"])
        finally:
            shutil.rmtree(downloads, ignore_errors=True)

    def test_the_policy_refuses_other_inline_code(self):
        # What an injection would add does not run; the browser says why (and tearDown, which
        # reads the same log, sees nothing left).
        injected = self.driver.execute_script(
            "const s = document.createElement('script'); s.textContent = 'window.injected = 1';"
            "document.body.append(s); return window.injected === undefined;")
        self.assertTrue(injected)
        refused = [entry["message"] for entry in self.driver.get_log("browser")
                   if "Content Security Policy" in entry["message"]]
        self.assertEqual(len(refused), 1, refused)
        self.assertIn("script-src", refused[0])

    def test_screenshot(self):
        path = os.environ.get("RPT_WEB_UI_SCREENSHOT")
        if not path:
            self.skipTest("set RPT_WEB_UI_SCREENSHOT=PATH.png to save a screenshot")
        text = "The file %s could not be saved.\nClick <b>Save</b> to keep {0} changes."
        self.fill(text, n_best="2")
        self.run_translation()
        self.assertGreaterEqual(len(self.marks()), 4)
        self.driver.execute_script("document.activeElement.blur(); window.scrollTo(0, 0);")
        # The viewport itself 1000x700 (the window's size holds the browser's frame too).
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": 1000, "height": 700, "deviceScaleFactor": 1, "mobile": False})
        self.assertTrue(self.driver.save_screenshot(path))


if __name__ == "__main__":
    unittest.main()
