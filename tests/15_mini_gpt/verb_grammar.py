"""The verb-grammar corpus of lab 15, written again in Python from its
description alone (verb_grammar.h's comments and issue 37; no C++ read): the
pilot trains on it, and verb_grammar_dump() writes the text that
labs/15_mini_gpt/verb_grammar_test compares labs/15_mini_gpt/verb_grammar.cc
with, sentence by sentence.

    /usr/bin/python3 tests/15_mini_gpt/verb_grammar.py      # rewrites the dump

Tokens are word-level (suffixes are tokens of their own); a sentence is one
verb in one tense said by three distinct pronouns of I, you, he, she, then
its Spanish translation in the same order.
"""
import itertools
import math
import os

# The 64 tokens, by id (the table of labs/15_mini_gpt/verb_grammar.h).
TOKENS = (["<bos>", "<eos>", ",", "/",
           "I", "you", "he", "she", "yo", "tú", "él", "ella",
           "will", "s", "ed",
           "o", "as", "a", "é", "aste", "ó", "aré", "arás", "ará"]
          + ["work", "trabaj", "walk", "camin", "talk", "habl", "listen", "escuch",
             "look", "mir", "help", "ayud", "call", "llam", "jump", "salt",
             "paint", "pint", "clean", "limpi", "cook", "cocin"]
          + ["buy", "bought", "compr", "sing", "sang", "cant"]
          + ["go", "goes", "went", "voy", "vas", "va", "fui", "fuiste", "fue",
             "iré", "irás", "irá"])
assert len(TOKENS) == 64 and len(set(TOKENS)) == 64
ID = {t: i for i, t in enumerate(TOKENS)}

# The 14 verbs in the table's order: (English stem, English past or None for
# "stem ed", Spanish stem or None for ir).
VERBS = [("work", None, "trabaj"), ("walk", None, "camin"), ("talk", None, "habl"),
         ("listen", None, "escuch"), ("look", None, "mir"), ("help", None, "ayud"),
         ("call", None, "llam"), ("jump", None, "salt"), ("paint", None, "pint"),
         ("clean", None, "limpi"), ("cook", None, "cocin"),
         ("buy", "bought", "compr"), ("sing", "sang", "cant"), ("go", "went", None)]
PRESENT, PAST, FUTURE = 0, 1, 2
TENSE_NAMES = ["present", "past", "future"]
HELD_OUT = {(1, PRESENT), (3, PRESENT), (5, PAST), (10, FUTURE)}  # walk, listen, help, cook

ENGLISH_PRONOUNS = ["I", "you", "he", "she"]
SPANISH_PRONOUNS = ["yo", "tú", "él", "ella"]
# Spanish person of each English pronoun: 0 yo, 1 tú, 2 él / ella.
PERSON = [0, 1, 2, 2]
AR_ENDINGS = [["o", "as", "a"], ["é", "aste", "ó"], ["aré", "arás", "ará"]]
IR_FORMS = [["voy", "vas", "va"], ["fui", "fuiste", "fue"], ["iré", "irás", "irá"]]

CATEGORIES = ["english_agreement", "spanish_form", "spanish_stem", "spanish_pronoun", "other"]


def english_clause(verb, tense, pronoun):
    stem, past, _ = VERBS[verb]
    words = [ENGLISH_PRONOUNS[pronoun]]
    third = pronoun >= 2
    if tense == PRESENT:
        if stem == "go":
            words.append("goes" if third else "go")
        else:
            words += [stem, "s"] if third else [stem]
    elif tense == PAST:
        words += [past] if past else [stem, "ed"]
    else:
        words += ["will", stem]
    return words


def spanish_clause(verb, tense, pronoun):
    spanish = VERBS[verb][2]
    person = PERSON[pronoun]
    words = [SPANISH_PRONOUNS[pronoun]]
    if spanish is None:
        words.append(IR_FORMS[tense][person])
    else:
        words += [spanish, AR_ENDINGS[tense][person]]
    return words


def sentence(verb, tense, pronouns):
    english = [english_clause(verb, tense, p) for p in pronouns]
    spanish = [spanish_clause(verb, tense, p) for p in pronouns]
    words = ["<bos>"] + english[0] + [","] + english[1] + [","] + english[2] + ["/"]
    words += spanish[0] + [","] + spanish[1] + [","] + spanish[2] + ["<eos>"]
    return [ID[w] for w in words]


def all_sentences():
    """(verb, tense, pronouns, ids), by verb, tense, pronoun order."""
    out = []
    for verb in range(len(VERBS)):
        for tense in (PRESENT, PAST, FUTURE):
            for pronouns in itertools.permutations(range(4), 3):
                out.append((verb, tense, pronouns, sentence(verb, tense, pronouns)))
    return out


def split(sentences):
    train = [s for s in sentences if (s[0], s[1]) not in HELD_OUT]
    held = [s for s in sentences if (s[0], s[1]) in HELD_OUT]
    return train, held


def continuations(sentences):
    """prefix (tuple) -> the set of tokens that follow it in some sentence."""
    nexts = {}
    for *_, ids in sentences:
        for t in range(len(ids) - 1):
            nexts.setdefault(tuple(ids[:t + 1]), set()).add(ids[t + 1])
    return nexts


_STEMS_TAKING_S = {ID[v[0]] for v in VERBS if v[0] != "go"}
_SPANISH_STEMS = {ID[v[2]] for v in VERBS if v[2]}
_SPANISH_FORMS = {ID[w] for row in AR_ENDINGS + IR_FORMS for w in row}
_SPANISH_PRONOUN_IDS = {ID[w] for w in SPANISH_PRONOUNS}


def category(ids, t):
    """The category of position t (target ids[t + 1]), as verb_grammar.h's comment defines it."""
    slash = ids.index(ID["/"])
    target = ids[t + 1]
    if t + 1 <= slash:  # the English half, "/" included
        if ids[t] in _STEMS_TAKING_S and target in (ID["s"], ID[","], ID["/"]):
            return "english_agreement"
        if target in (ID["go"], ID["goes"]):
            return "english_agreement"
        return "other"
    if target in _SPANISH_PRONOUN_IDS:
        return "spanish_pronoun"
    if target in _SPANISH_STEMS:
        return "spanish_stem"
    if target in _SPANISH_FORMS:
        return "spanish_form"
    return "other"


def decisions(ids, nexts):
    """[(position, target, category)] where the prefix has one continuation."""
    return [(t, ids[t + 1], category(ids, t)) for t in range(len(ids) - 1)
            if len(nexts[tuple(ids[:t + 1])]) == 1]


def entropy_floor(train):
    """The mean loss per predicted position of the best model of `train`
    (every sentence equally likely): ln N per sentence over its len - 1
    predictions."""
    positions = sum(len(s[3]) - 1 for s in train)
    return len(train) * math.log(len(train)) / positions


def verb_grammar_dump():
    sentences = all_sentences()
    train, held = split(sentences)
    held_keys = {(s[0], s[1]) for s in held}
    nexts = continuations(sentences)
    lines = ["# The lab 15 corpus as tests/15_mini_gpt/verb_grammar.py writes it, in the",
             "# instructors' repository (do not edit):",
             "# split verb tense pronouns | tokens | decisions position:target:category",
             "tokens " + " ".join(TOKENS)]
    for verb, tense, pronouns, ids in sentences:
        part = "held_out" if (verb, tense) in held_keys else "train"
        dec = " ".join("%d:%d:%s" % d for d in decisions(ids, nexts))
        lines.append("%s %d %s %s | %s | %s" % (part, verb, TENSE_NAMES[tense],
                                                "".join(str(p) for p in pronouns),
                                                " ".join(TOKENS[i] for i in ids), dec))
    lines.append("entropy_floor %.9f" % entropy_floor(train))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(root, "labs", "15_mini_gpt", "verb_grammar_reference.txt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text = verb_grammar_dump()
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    sentences = all_sentences()
    train, held = split(sentences)
    print("wrote %s: %d sentences (%d train, %d held out), at most %d tokens, floor %.4f"
          % (os.path.relpath(path, root), len(sentences), len(train), len(held),
             max(len(s[3]) for s in sentences), entropy_floor(train)))
