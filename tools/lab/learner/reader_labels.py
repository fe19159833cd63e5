"""Every word of the course reader's chrome, and the languages it is read in.

The labels are messages of ./lab's own catalogue (po/cli/, gettext domain
"lab"), marked here with N_() so that ./lab translate's xgettext finds them;
labels() gives them in the language being built (speaking(page)). The page's
scripts receive theirs as JSON: a {field} in a label is filled in by the
script (tools/reader/*.js), as by str.format here.
"""
import contextlib

import languages
from learner import i18n
from learner.i18n import N_, _

# The course's languages, in the switch's order: (catalogue code, page code,
# the language's own name): English, the source (no catalogue), then the
# registry's (po/languages.json). The page code names the folder of docs/ and
# of the site, and is the pages' HTML lang.
LANGUAGES = [(None, "en", "English")] + [(l.po, l.pages, l.name) for l in languages.load()]
PAGE_CODES = [page for _code, page, _name in LANGUAGES]


def catalogue_of(page):
    """The catalogue code of a page code (None: English)."""
    return {p: c for c, p, _n in LANGUAGES}.get(page)


@contextlib.contextmanager
def speaking(page):
    """_() and i18n.title() in the language of page code `page` while inside."""
    before = i18n.lang()
    i18n.setup(catalogue_of(page))
    try:
        yield
    finally:
        i18n.setup(before)


# The state of a lab at the learner's last run (status_of in reader_panels).
STATES = {"unknown": N_("unknown"), "not started": N_("not started"), "failing": N_("failing"),
          "passing": N_("passing")}

# TRANSLATORS: lab 7's label of an attention head (classify_head), shown in the
# reader's head viewer and playground beside each head.
ROLES = {"induction": N_("induction"), "previous-token": N_("previous-token"),
         # TRANSLATORS: a head that attends to its own position.
         "self": N_("self"), "first-token": N_("first-token"), "local": N_("local"),
         "diffuse": N_("diffuse")}

_LABELS = {
    # The header of every page.
    "course": N_("Multi-head attention"),
    "course_long": N_("Multi-head attention, one lab at a time"),
    "language": N_("language"),
    "search": N_("Search every lesson"),
    "no_hits": N_("no lesson says \"{query}\""),
    "lab_title": N_("lab {n}: {title}"),
    "lab_n": N_("lab {n}"),
    "all_labs": N_("all labs"),
    "choose_language": N_("Choose your language"),
    # A lesson's page.
    "in_english": N_("This lesson is not translated into your language yet: here it is in "
                     "English."),
    "repo_path": N_("in the repository: {path}"),
    "last_run": N_("Your last run: {state}"),
    "next": N_("Next:"),
    "explore_heads": N_("Explore your own heads"),
    "pictures": N_("Your pictures and the course's"),
    "yours": N_("Yours"),
    "lessons_pictures": N_("The lesson's"),
    "made": N_("{path}, made {when}"),
    "course_picture": N_("the course: {path}"),
    "no_pictures_yet": N_("None yet: the lab's programs write theirs in {folders}."),
    "no_program": N_("This lab has no program that draws."),
    "lesson_has_none": N_("The lesson has none."),
    # The contents page.
    "col_lab": N_("lab"),
    "col_lesson": N_("lesson"),
    "col_run": N_("your last run"),
    "col_quiz": N_("quiz"),
    "answered": N_("{n} answered"),
    "heads_link": N_("Explore the heads your programs wrote"),
    "playground_link": N_("Play with your own Mini-GPT (lab 15)"),
    # The head viewer (heads.html, tools/reader/heads.js).
    "heads_title": N_("Your heads"),
    "heads_lead": N_("What your own programs wrote: pick a run, a layer and a head; hover a "
                     "token (a query) to see where it attends."),
    "heads_none": N_("No data yet. Run, with your labs passing: {commands}, then ./lab read "
                     "again."),
    "run": N_("run"),
    "layer": N_("layer"),
    "layer_n": N_("layer {n}"),
    "head": N_("head"),
    "head_n": N_("head {h}"),
    "layer_head": N_("{layer}, head {h}"),
    "hover": N_("Hover a token: the shading is the weight that query puts on each key."),
    "attends_most": N_("query {i} \"{q}\" attends most to key {j} \"{k}\" "
                       "({w})"),
    "weight": N_("weight {w}"),
    "cell": N_("query {i} {q}, key {j} {k}: {w}"),
    "heatmap_aria": N_("attention weights, rows queries"),
    "heatmap_caption": N_("rows: queries, columns: keys; dark = weight 1, grey: masked (future "
                          "key)"),
    "heatmap_block": N_("; red line: the repeated half starts"),
    "loss_change": N_("loss change when silenced"),
    "nats": N_("{v} nats"),
    "composition": N_("Composition scores between the layers"),
    "composition_table": N_("{kind}-composition"),
    "later_head": N_("layer-2 head"),
    "earlier_head": N_("layer-1 head"),
    "induction_title": N_("Induction score over training"),
    "induction_caption": N_("each layer-2 head's induction score (lab 7) by step"),
    "step": N_("step {n}"),
    # The playground (playground.html, tools/reader/playground.js).
    "pg_title": N_("Your Mini-GPT"),
    "pg_lead": N_("Lab 15's model, computed by your own code on your checkpoint: type a prompt "
                  "or click tokens, see what it predicts next, switch heads off."),
    "pg_starting": N_("Starting your model..."),
    "pg_building": N_("Building your lab 15 (the first build takes a few minutes)..."),
    "pg_no_lab": N_("This course has no lab 15."),
    "pg_not_started": N_("Your lab 15 is not written yet ({file} is still the stub). Write it, "
                         "then run:"),
    "pg_failing": N_("Your lab 15 failed its public tests at your last run: {detail}. Make "
                     "them pass:"),
    "pg_build_failed": N_("Your lab 15 does not build: {detail}. Run:"),
    "pg_no_checkpoint": N_("No checkpoint yet ({file}): train your model once. Run:"),
    "pg_bad_checkpoint": N_("Your checkpoint {file} could not be loaded: {detail}. Train "
                            "again:"),
    "pg_crashed": N_("Your model's program stopped: {detail}. Run:"),
    "pg_ready": N_("Your model: {params} parameters, trained with seed {seed}, from {file}."),
    "pg_offline": N_("./lab read is not running: start it again, then reload this page."),
    "pg_prompt": N_("Prompt (tokens separated by spaces)"),
    "pg_vocab": N_("The 64 tokens (click one to add it)"),
    "pg_clear": N_("clear"),
    "pg_backspace": N_("remove the last token"),
    "err_unknown_token": N_("\"{token}\" (token {position}) is not one of the 64 tokens."),
    "err_suggest": N_("Did you mean \"{suggestion}\"? Suffixes and punctuation are tokens of "
                      "their own."),
    "err_empty": N_("Type or click at least one token."),
    "err_too_long": N_("{length} tokens: the model reads at most {max}."),
    "err_bad_value": N_("{field} = {value} is outside {low} to {high}."),
    "err_bad_head": N_("There are {blocks} blocks of {heads} heads."),
    "err_bad_request": N_("The request was refused: {detail}"),
    "err_not_ready": N_("The model is not ready yet."),
    "err_model": N_("Your lab 15 refused it: {detail}"),
    "err_crashed": N_("Your model's program stopped ({detail}); it is being started again."),
    "err_forbidden": N_("./lab read refused the request ({why}): open this page from the address "
                        "./lab read printed."),
    "pg_next": N_("What comes next"),
    "pg_next_lead": N_("After each token, the model's most likely next tokens; the last is its "
                       "prediction for your prompt."),
    "pg_after": N_("after \"{token}\""),
    "pg_continuation": N_("Continuation"),
    "pg_greedy": N_("greedy"),
    "pg_sample": N_("sampled"),
    "pg_temperature": N_("temperature"),
    "pg_top_k": N_("top-k (0: all)"),
    "pg_seed": N_("seed"),
    "pg_new_seed": N_("another seed"),
    "pg_max_new": N_("new tokens at most"),
    "pg_continuation_seed": N_("{mode}, seed {seed}:"),
    "pg_ended": N_("(the model ended the sentence)"),
    "pg_heads": N_("Every head's attention on your prompt"),
    "pg_heads_lead": N_("Tick a head to switch it off (its output is zeroed before W_O): the "
                        "probabilities and the continuation change at once. Hover a cell for "
                        "its query, key and weight."),
    "pg_block_head": N_("block {b}, head {h}"),
    "pg_off": N_("off"),
    "pg_all_on": N_("every head on"),
    "pg_examples": N_("Held-out prompts"),
    "pg_examples_lead": N_("A verb in a tense the model never saw in training; the grammar "
                           "fixes the next token. Click one to try it."),
    "pg_answer": N_("the grammar says {token}"),
    "pg_model_says": N_("your model: {token} ({p})"),
    "pg_watch": N_("p({token}) = {p}"),
    "cat_english_agreement": N_("English agreement"),
    "cat_spanish_form": N_("Spanish ending"),
    "cat_spanish_stem": N_("Spanish stem"),
    "cat_spanish_pronoun": N_("Spanish pronoun"),
}


# The scores a program writes for a head (view.json's "scores"; lab 7's profile).
SCORES = {"entropy": N_("entropy"), "mean distance": N_("mean distance"),
          "previous token": N_("previous token"),
          # TRANSLATORS: the weight a head puts on its own position (lab 7's profile).
          "self": N_("self"), "first token": N_("first token"), "induction": N_("induction")}


def labels():
    """{name: label} in the current language (speaking()), with the states
    (state_<name>), lab 7's head labels (role_<name>) and the heads' scores'
    names (score_names: {English name: label})."""
    out = {k: _(v) for k, v in _LABELS.items()}
    out.update({"state_" + k.replace(" ", "_"): _(v) for k, v in STATES.items()})
    out.update({"role_" + k: _(v) for k, v in ROLES.items()})
    out["score_names"] = {k: _(v) for k, v in SCORES.items()}
    return out


def state_label(state):
    return _(STATES.get(state, state))
