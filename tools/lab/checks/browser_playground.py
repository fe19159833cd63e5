"""The browser check's playground part (checks/browser.py runs it): lab 15's
model trained by the reference solutions for a short run, then the reader's
"Your Mini-GPT" page used as a learner would, in headless Chromium.

  - the page starts the model (the playground program, built with
    --config=solutions) and shows the next-token probabilities of a held-out
    prompt, "I walk , you walk , he walk", with p(s);
  - a head switched off changes them at once;
  - the Spanish page shows Spanish labels;
  - a request without the session's token is refused (403; from Python,
    so that the refusal is no console error of the page's).
"""
import glob
import json
import os
import subprocess
import urllib.error
import urllib.request

from labs import ROOT
from learner import playground
from learner.reader_labels import labels, speaking
from progress import ticking

# A short run: enough for the probabilities to be the model's, not enough to
# learn the grammar (the closing note's screenshots use a full run).
STEPS = 150
PROMPT = "I walk , you walk , he walk"


def train_checkpoint(out_dir):
    """Trains lab 15's model with the reference solutions for STEPS steps;
    returns its checkpoint's path. RuntimeError says why there is none."""
    cmd = ["bazel", "run", "--config=solutions", "--color=no", "--curses=no",
           "//labs/15_mini_gpt:train_mini_gpt", "--", "--steps", str(STEPS), "--out", out_dir]
    with ticking("./lab test: training lab 15's model (%d steps)" % STEPS):
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    found = glob.glob(os.path.join(out_dir, "*.npz"))
    if p.returncode != 0 or not found:
        raise RuntimeError("train_mini_gpt wrote no checkpoint (exit %d): %s"
                           % (p.returncode, (p.stderr.strip().splitlines() or ["?"])[-1]))
    return found[0]


def model(checkpoint):
    """The playground ./lab read would start, on the reference solutions."""
    return playground.Playground(solutions=True, checkpoint=checkpoint)


def run(driver, base, step, wait):
    """The scenario on a site served with model(...) at `base`."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC

    def ready_page(lang):
        driver.get(base + "%s/playground.html" % lang)
        # The first start builds the program: minutes on a cold cache.
        long_wait = type(wait)(driver, 900)
        long_wait.until(lambda d: d.find_element(By.ID, "pg-status").get_attribute(
            "class").split()[-1] not in ("idle", "starting", "building", "status-line"))
        state = driver.find_element(By.ID, "pg-status")
        ok = "ready" in state.get_attribute("class").split()
        step("the playground did not start its model: %s" % state.text, ok)
        return ok

    def watched():
        return driver.execute_script("return document.getElementById('pg-watch').textContent")

    if not ready_page("en"):
        return
    prompt = driver.find_element(By.ID, "pg-prompt")
    prompt.clear()
    prompt.send_keys(PROMPT)
    wait.until(lambda d: d.execute_script(
        "return document.querySelectorAll('#pg-positions .pg-position').length") ==
        len(PROMPT.split()) + 1)
    # Read in one go by the page's script: the page redraws as answers come.
    bars = driver.execute_script(
        "return Array.from(document.querySelectorAll('#pg-last .pg-bar .p'), e => e.textContent)")
    step("the held-out prompt shows no next-token probabilities: %r" % bars,
         len(bars) == 5 and all(b.strip() for b in bars))
    # Follow "s" (the grammar's answer): the example of the held-out prompt.
    k = driver.execute_script(
        "return Array.from(document.querySelectorAll('.pg-example .pg-try'), e => "
        "e.textContent.trim()).indexOf(arguments[0])", PROMPT)
    step("the held-out prompt %r is not among the examples" % PROMPT, k >= 0)
    if k < 0:
        return
    driver.find_elements(By.CSS_SELECTOR, ".pg-example .pg-try")[k].click()
    wait.until(lambda d: watched().startswith("p(s) = "))

    def p_s():
        return driver.find_element(By.ID, "pg-watch").get_attribute("data-p")
    before = p_s()
    driver.execute_script("document.querySelector('.pg-head[data-head=\"1.0\"] input').click()")
    try:
        wait.until(lambda d: p_s() != before and "(" in watched())
    except TimeoutException:
        pass
    step("switching head 0 of block 2 off did not change p(s): %s, then %s (%s)"
         % (before, p_s(), watched()), p_s() != before and "(" in watched())
    heads = driver.execute_script("return document.querySelectorAll('.pg-head').length")
    step("the playground does not draw 2 blocks x 4 heads (%d)" % heads, heads == 8)

    # In Spanish, every label.
    if not ready_page("es"):
        return
    with speaking("es"):
        t = labels()
    wait.until(EC.text_to_be_present_in_element((By.ID, "pg-continuation"), t["pg_greedy"]))
    text = driver.execute_script("return document.querySelector('main').innerText")
    for key in ("pg_title", "pg_next", "pg_heads", "pg_examples", "pg_continuation"):
        step("the Spanish playground does not say %r" % t[key], t[key] in text)
    for english in ("What comes next", "Held-out prompts", "Every head's attention", "block 1"):
        step("the Spanish playground shows the English label %r" % english, english not in text)


def without_token(base):
    """(status, why) of a run request that carries no session token."""
    req = urllib.request.Request(base + "api/playground/run", data=b'{"tokens": "he walk"}',
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, None
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode() or "{}").get("why")
