"""./lab test's browser check of the course reader (./lab read): the site is
built into a temporary directory, served on 127.0.0.1, and used in headless
Chromium (Debian's chromium and chromium-driver, driven by python3-selenium)
as a learner would: the front door with a browser that prefers Spanish (it
opens the Spanish contents, every label Spanish), lab 2's page in Spanish (its
quiz too), the switch to Portuguese, the front door again (it opens the
Portuguese the learner chose), searches on a Spanish page ("induccion" finds
"inducción", Spanish hits first, a Chinese section found by substring and by
character pairs), a search on a Turkish page typed without Turkish letters
("isi haritasi" finds "ısı haritası"), a search for "RoPE" and its first hit,
a quiz question answered wrongly then rightly with both explanations shown, a
reload that keeps the progress, the head viewer on a small committed data file
(tools/reader/testdata/) with a token hovered, and the Mini-GPT playground on
a model the reference solutions train for a short run (browser_playground.py:
probabilities for a held-out prompt, a head switched off, the Spanish page, a
request without the session's token refused). Chromium's own log must hold no console error, and its
performance log (the DevTools protocol's Network events) no request to any
host but 127.0.0.1. screenshots() takes the pictures of a closing note.
"""
import json
import os
import shutil
import tempfile
import time
import urllib.parse

from checks import browser_playground
from labs import ROOT
from learner import reader_lessons, reader_server, reader_site

FIXTURES = os.path.join(ROOT, "tools", "reader", "testdata")
CHROMEDRIVER = "/usr/bin/chromedriver"
# As root Chromium needs --no-sandbox; the rest keep it off Google's servers
# (unreachable on a closed network, where its attempts would only fail).
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-default-apps", "--disable-extensions", "--disable-dev-shm-usage",
         "--metrics-recording-only", "--disable-domain-reliability", "--no-pings",
         "--window-size=1280,1000"]


class Unavailable(RuntimeError):
    pass


def start_browser(profile, accept_languages="en-US,en"):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        raise Unavailable("python3-selenium is not installed (tools/setup.sh installs it)")
    if not os.path.exists(CHROMEDRIVER):
        raise Unavailable("%s is missing (Debian's chromium-driver; tools/setup.sh installs it)"
                          % CHROMEDRIVER)
    options = webdriver.ChromeOptions()
    for f in FLAGS + ["--user-data-dir=" + profile]:
        options.add_argument(f)
    # The languages the learner's browser prefers (navigator.languages).
    options.add_experimental_option("prefs", {"intl.accept_languages": accept_languages})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def build_test_site(site):
    """The site with the fixtures: lab 2 in es and pt-BR where docs/ has no
    translation of it yet, and the small head-viewer file."""
    translations = {}
    for lang in ("es", "pt-BR"):
        if reader_lessons.translation_of(_lab2(), lang) is None:
            translations[lang] = os.path.join(FIXTURES, "i18n", lang)
    reader_site.build(site, translations=translations,
                 extra_views=[os.path.join(FIXTURES, "view_small.json")])


def _lab2():
    from labs import load_labs
    return [l for l in load_labs() if l.number == 2][0]


def foreign_requests(perf_log, port):
    """The URLs of requests to anything but this server (127.0.0.1:port)."""
    bad = []
    for entry in perf_log:
        try:
            msg = json.loads(entry["message"])["message"]
        except (KeyError, ValueError, TypeError):
            continue
        if msg.get("method") != "Network.requestWillBeSent":
            continue
        url = msg.get("params", {}).get("request", {}).get("url", "")
        u = urllib.parse.urlsplit(url)
        if u.scheme in ("data", "about", "blob", "chrome", "devtools"):
            continue
        if u.hostname != "127.0.0.1" or u.port != port:
            bad.append(url)
    return bad


# A Chinese section for the search (no Chinese lesson is committed yet): "in
# multi-head attention each head adds its scores. The mechanism is simple."
CHINESE = {"lab": 2, "lang": "zh-CN", "url": "en/02_batched_attention.html", "title": "实验 2",
           "text": "多头注意力把每个头的分数相加。这个机制很简单。"}


def spanish_chrome(driver, step):
    """Fails a step for each label of the page's chrome that is not Spanish."""
    from selenium.webdriver.common.by import By
    from learner.reader_labels import labels, speaking
    with speaking("es"):
        t = labels()
    box = driver.find_element(By.ID, "search")
    step("the search box is not labelled in Spanish: %r" % box.get_attribute("placeholder"),
         box.get_attribute("placeholder") == t["search"])
    text = driver.find_element(By.TAG_NAME, "body").text
    for english in ("Search every lesson", "all labs", "Your last run", "Next:", "lesson",
                    "your last run"):
        step("the Spanish page shows the English label %r" % english, english not in text)


def search_hits(driver, wait, query):
    """Types `query` into the page's search box; returns the hits' links."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    box = driver.find_element(By.ID, "search")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.DELETE)
    if not query:
        return []
    box.send_keys(query)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#hits a.hit, #hits p.none"))
    return driver.find_elements(By.CSS_SELECTOR, "#hits a.hit")


def run(check):
    """Runs the whole scenario; each failure goes to check.fail()."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    tmp = tempfile.mkdtemp(prefix="mha-reader-")
    server = driver = model = None
    try:
        site = os.path.join(tmp, "site")
        build_test_site(site)
        try:
            model = browser_playground.model(
                browser_playground.train_checkpoint(os.path.join(tmp, "train")))
        except RuntimeError as e:
            check.fail("the playground's model: %s" % e)
        server = reader_server.serve(site, playground=model)
        port = server.server_address[1]
        base = "http://127.0.0.1:%d/" % port
        # A learner whose browser prefers Spanish, on a first visit.
        driver = start_browser(os.path.join(tmp, "profile"), "es-ES,es")
        driver.set_page_load_timeout(20)
        wait = WebDriverWait(driver, 10)

        def click(e):   # in the middle of the window, not under the sticky header
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", e)
            e.click()

        def step(what, ok):
            if not ok:
                check.fail(what)
            return ok

        # The front door opens the browser's language; every label is Spanish.
        driver.get(base)
        wait.until(EC.url_contains("/es/"))
        step("a first visit with the browser in Spanish did not open the Spanish contents: "
             + driver.current_url, driver.current_url.endswith("/es/index.html"))
        spanish_chrome(driver, step)

        # Lab 2 in Spanish, then Portuguese by the switch.
        driver.get(base + "es/02_batched_attention.html")
        spanish_chrome(driver, step)
        step("lab 2's Spanish page is not in Spanish (html lang %r)"
             % driver.find_element(By.TAG_NAME, "html").get_attribute("lang"),
             driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == "es")
        # Its quiz is the Spanish one (po/quiz/es.po), drawn with Spanish words.
        from learner import quiz
        q = wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#quiz .question")))
        spanish = quiz.translated(quiz.load(_lab2()), "es")["questions"][0]
        words = quiz.labels("es")
        step("lab 2's Spanish page does not ask its quiz in Spanish: %r"
             % q.find_element(By.CSS_SELECTOR, "p.q").text,
             q.find_element(By.CSS_SELECTOR, "p.q").text == spanish["question"] and
             q.find_element(By.TAG_NAME, "legend").text.startswith(
                 words[spanish["stage"]]))
        driver.find_element(By.CSS_SELECTOR, '.langs a[data-lang="pt-BR"]').click()
        wait.until(EC.url_contains("/pt-BR/"))
        step("the language switch did not open the Portuguese page: " + driver.current_url,
             driver.current_url.endswith("/pt-BR/02_batched_attention.html") and
             "atenção" in driver.find_element(By.TAG_NAME, "main").text)

        # The Portuguese choice is remembered: the front door opens it now.
        driver.get(base)
        wait.until(EC.url_contains("/pt-BR/"))
        step("the front door did not open the language chosen last: " + driver.current_url,
             driver.current_url.endswith("/pt-BR/index.html"))

        # Search folds accents and puts the page's language first; Chinese
        # matches without spaces, by substring or by most of its character pairs.
        driver.get(base + "es/02_batched_attention.html")
        for query, what in (("induccion", "inducción"), ("rotacion", "rotación")):
            hits = search_hits(driver, wait, query)
            langs = [h.get_attribute("lang") for h in hits]
            step("a search for %r on a Spanish page finds no Spanish lesson saying %r first "
                 "(hits in %s)" % (query, what, langs),
                 hits and langs[0] == "es" and what in hits[0].text.lower() and
                 langs == sorted(langs, key=lambda l: l != "es"))
        driver.execute_script("window.SEARCH_INDEX.push(arguments[0])", CHINESE)
        for query in ("多头注意力", "注意力机制"):   # a substring; most of its pairs
            hits = search_hits(driver, wait, query)
            step("a Chinese search (%s) does not find the Chinese section" % query,
                 any(h.get_attribute("lang") == "zh-CN" for h in hits))
        search_hits(driver, wait, "")

        # Turkish: the dotless ı folds to i, so a query typed on any keyboard
        # (or capitalised: "Isı") finds lesson 7's Turkish sections, which say
        # "ısı haritası" (unfolded, neither query matches a word of them).
        driver.get(base + "tr/07_head_analysis.html")
        for query in ("isi haritasi", "Isı haritası"):
            hits = search_hits(driver, wait, query)
            step("a search for %r on a Turkish page does not find lesson 7's Turkish page "
                 "(ısı haritası) first: %s" % (query, [h.get_attribute("href") for h in hits]),
                 hits and hits[0].get_attribute("lang") == "tr" and
                 "/tr/07_head_analysis.html" in hits[0].get_attribute("href"))
        search_hits(driver, wait, "")

        # Search "RoPE" and follow the first hit.
        box = driver.find_element(By.ID, "search")
        box.send_keys("RoPE")
        hit = wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, "#hits a.hit")))
        target = hit.get_attribute("href")
        hit.click()
        wait.until(lambda d: d.current_url == target)
        step("the first hit for RoPE (%s) is not a lesson that says RoPE" % target,
             "RoPE" in driver.find_element(By.TAG_NAME, "main").text)

        # The quiz: a wrong answer, then the right one; both explanations stay.
        driver.get(base + "en/02_batched_attention.html")
        q = wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#quiz .question")))
        data = json.loads(driver.find_element(By.ID, "quiz-data").get_attribute("textContent"))
        first = data["questions"][0]
        wrong = next(k for k, o in enumerate(first["options"]) if not o["correct"])
        right = next(k for k, o in enumerate(first["options"]) if o["correct"])
        buttons = q.find_elements(By.CSS_SELECTOR, "button.option")
        whys = q.find_elements(By.CSS_SELECTOR, "p.why")
        click(buttons[wrong])
        step("a wrong answer does not show its explanation",
             whys[wrong].is_displayed() and first["options"][wrong]["why"] in whys[wrong].text
             and "wrong" in buttons[wrong].get_attribute("class"))
        click(buttons[right])
        step("the right answer does not show its explanation next to the wrong one's",
             whys[right].is_displayed() and whys[wrong].is_displayed() and
             "right" in buttons[right].get_attribute("class"))
        progress = driver.find_element(By.CSS_SELECTOR, "#quiz .progress").text
        step("the quiz's progress does not count the answer: %r" % progress,
             progress.startswith("1 of "))
        driver.refresh()
        q = wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#quiz .question")))
        buttons = q.find_elements(By.CSS_SELECTOR, "button.option")
        whys = q.find_elements(By.CSS_SELECTOR, "p.why")
        step("after a reload the answers are gone (localStorage)",
             "wrong" in buttons[wrong].get_attribute("class") and
             "right" in buttons[right].get_attribute("class") and whys[right].is_displayed())
        step("after a reload the progress is gone",
             driver.find_element(By.CSS_SELECTOR, "#quiz .progress").text == progress)

        # The head viewer on the fixture: hover a token.
        driver.get(base + "en/heads.html#view-small-json")
        tok = wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, ".tok[data-i='1']")))
        ActionChains(driver).move_to_element(tok).perform()
        said = driver.find_element(By.ID, "attends").text
        step("hovering a token does not say where it attends: %r" % said,
             "attends most to key 0" in said)
        step("the head viewer does not show the fixture's role and loss change",
             "previous-token" in driver.find_element(By.TAG_NAME, "main").text and
             "+0.500 nats" in driver.find_element(By.TAG_NAME, "main").text)
        from learner.reader_labels import labels, speaking
        with speaking("en"):
            caption = labels()["heatmap_caption"]
        shown = driver.find_element(By.CSS_SELECTOR, "figure figcaption").text
        step("the heat map's caption is not its label: %r" % shown, shown.startswith(caption))

        # The Mini-GPT playground on the reference solutions' model.
        if model is not None:
            browser_playground.run(driver, base, step, wait)
            refused = browser_playground.without_token(base)
            step("a request without the session's token was not refused: %r" % (refused,),
                 refused == (403, "token"))

        errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        step("console errors: %s" % "; ".join(e.get("message", "")[:200] for e in errors[:3]),
             not errors)
        foreign = foreign_requests(driver.get_log("performance"), port)
        step("requests to hosts other than 127.0.0.1:%d: %s" % (port, ", ".join(foreign[:5])),
             not foreign)
    finally:
        if driver is not None:
            driver.quit()
        if server is not None:
            server.shutdown()
            server.server_close()
        if model is not None:
            model.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def screenshots(dest, site=None):
    """Pictures of the reader for a closing note: lab 2's lesson in the three
    languages, lab 2's quiz answered, and the head viewer on the learner's
    runs (out/heads, out/grow_induction_heads, ...). Returns the paths."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    os.makedirs(dest, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="mha-reader-")
    site = site or os.path.join(tmp, "site")
    build_test_site(site)
    server = reader_server.serve(site)
    base = "http://127.0.0.1:%d/" % server.server_address[1]
    driver = start_browser(os.path.join(tmp, "profile"))
    out = []

    def shot(name):
        path = os.path.join(dest, name)
        driver.save_screenshot(path)
        out.append(path)

    try:
        for lang in ("en", "es", "pt-BR"):
            driver.get(base + "%s/02_batched_attention.html" % lang)
            shot("lesson_%s.png" % lang)
        driver.get(base + "en/07_head_analysis.html")
        driver.execute_script("document.querySelector('.hl').scrollIntoView()")
        shot("lesson_code.png")
        driver.get(base + "en/02_batched_attention.html")
        q = driver.find_elements(By.CSS_SELECTOR, "#quiz .question")
        data = json.loads(driver.find_element(By.ID, "quiz-data").get_attribute("textContent"))
        for i in range(2):
            opts = data["questions"][i]["options"]
            buttons = q[i].find_elements(By.CSS_SELECTOR, "button.option")
            wrong = next(k for k, o in enumerate(opts) if not o["correct"])
            for k in (wrong, next(k for k, o in enumerate(opts) if o["correct"])):
                driver.execute_script("arguments[0].scrollIntoView({block: 'center'})",
                                      buttons[k])
                buttons[k].click()
        driver.execute_script("document.getElementById('quiz').scrollIntoView()")
        shot("quiz_answered.png")
        driver.get(base + "en/heads.html")
        views = json.loads(driver.find_element(By.ID, "views-data").get_attribute("textContent"))
        for v in views:
            driver.get(base + "en/heads.html?run=%s#%s" % (v["id"], v["id"]))
            toks = driver.find_elements(By.CSS_SELECTOR, ".tok")
            if toks:
                ActionChains(driver).move_to_element(toks[len(toks) * 2 // 3]).perform()
            if v["data"].get("layers") and len(v["data"]["layers"]) > 1:
                from selenium.webdriver.support.ui import Select
                Select(driver.find_element(By.ID, "pick-layer")).select_by_index(1)
                toks = driver.find_elements(By.CSS_SELECTOR, ".tok")
                ActionChains(driver).move_to_element(toks[len(toks) * 2 // 3]).perform()
            driver.set_window_size(1280, 1600 if v["data"].get("composition") else 1000)
            shot("heads_%s.png" % v["id"])
            driver.set_window_size(1280, 1000)
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()
        shutil.rmtree(tmp, ignore_errors=True)
    return out


if __name__ == "__main__":
    import sys
    for p in screenshots(sys.argv[1]):
        print(p)
