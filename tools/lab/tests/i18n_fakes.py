"""What the translation tests share: a compiled Spanish catalogue where
learner/i18n.py looks for a kit's, beside Spanish lessons."""


def spanish_catalogue(root, entries, lessons=("02_batched_attention.md",)):
    """Writes root/tools/lab/locale/es/LC_MESSAGES/lab.mo of `entries`
    [(context or None, English, Spanish)] and root/docs/es/<lesson> of each of
    `lessons`; returns root as a string."""
    import polib   # python3-polib: the tests that call this skip without it
    po = polib.POFile()
    po.metadata = {"Content-Type": "text/plain; charset=UTF-8", "Language": "es"}
    for ctxt, msgid, msgstr in entries:
        po.append(polib.POEntry(msgctxt=ctxt, msgid=msgid, msgstr=msgstr))
    d = root / "tools" / "lab" / "locale" / "es" / "LC_MESSAGES"
    d.mkdir(parents=True)
    po.save_as_mofile(str(d / "lab.mo"))
    (root / "docs" / "es").mkdir(parents=True)
    for lesson in lessons:
        (root / "docs" / "es" / lesson).write_text("# Lab\n")
    return str(root)
